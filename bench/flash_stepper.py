"""Lab 13's tile stepper: the server's rerun after the tile slider moves one tile, through Streamlit's AppTest.

Two sentences (the page's default, 11 tokens; 32 tokens, the lab's most) with the causal mask and small blocks
(B_r = 4, B_c = 3: many tiles, sizes that do not divide L). Per round the tile slider moves one tile (right to
the last tile, then back) and ``at.run()`` is timed; the tiled run itself comes from the lab's cache (the same
tokens and sizes), so what is timed is the redraw: the score chart with its tiles, the rows' table, O. AppTest
reruns the whole script, where a browser reruns only the stepper's fragment: an upper bound. Target: 300 ms.

``python -m bench.flash_stepper [--rounds N]``; ``python -m bench --only flash_stepper``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from bench import time_once
from bench.table import Table, format_table

TITLE = "Lab 13: the tile stepper moved one tile -> server rerun (AppTest, whole script), ms"

PAGE = Path(__file__).resolve().parents[1] / "pages" / "13_flash.py"
TARGET_MS = 300.0
ROUNDS, QUICK_ROUNDS = 20, 4
WARMUP = 2
SENTENCES = {
    "default sentence (11 tokens)": None,
    "32 tokens": " ".join(f"w{i}" for i in range(32)),
}
BLOCK_Q, BLOCK_K = 4, 3


def open_page(text: str | None):
    """An AppTest of the lab with ``text`` (``None``: the default) and the bench's block sizes, run once."""
    from streamlit import config, logger
    from streamlit.testing.v1 import AppTest

    config.set_option("logger.level", "error")
    logger.set_log_level("error")
    at = AppTest.from_file(str(PAGE), default_timeout=120)
    at.query_params["lang"] = "en"
    at.run()
    if text is not None:
        at.text_input(key="flash_tokens").set_value(text)
    at.slider(key="flash_block_q").set_value(BLOCK_Q)
    at.slider(key="flash_block_k").set_value(BLOCK_K)
    at.run()
    if at.exception:
        raise RuntimeError(f"the lab failed: {[e.value for e in at.exception]}")
    return at


def time_stepper(text: str | None, rounds: int) -> list[float]:
    """Seconds of ``at.run()`` after each one-tile move, ``rounds`` moves after ``WARMUP`` untimed ones."""
    at = open_page(text)
    slider = at.slider(key="flash_tile")
    last = int(slider.max)
    samples, tile, step = [], 0, 1
    for i in range(WARMUP + rounds):
        if not 0 <= tile + step <= last:
            step = -step
        tile += step
        at.slider(key="flash_tile").set_value(tile)
        seconds = time_once(at.run)
        if at.exception:
            raise RuntimeError(f"the lab failed at tile {tile}: {[e.value for e in at.exception]}")
        if i >= WARMUP:
            samples.append(seconds)
    return samples


def table(rounds: int) -> Table:
    """One row per sentence: median, fastest and slowest rerun, and the target."""
    rows = []
    for name, text in SENTENCES.items():
        seconds = [s * 1e3 for s in time_stepper(text, rounds)]
        median = statistics.median(seconds)
        rows.append((name, round(median, 1), round(min(seconds), 1), round(max(seconds), 1), f"<= {TARGET_MS:.0f}",
                     "yes" if median <= TARGET_MS else "NO"))  # fmt: skip
    notes = (
        f"B_r = {BLOCK_Q}, B_c = {BLOCK_K}, causal; {rounds} moves of one tile each, after {WARMUP} untimed.",
        "AppTest reruns the whole script; in a browser only the stepper's fragment reruns.",
    )
    return Table(TITLE, ("sentence", "median ms", "min ms", "max ms", "target", "met"), tuple(rows), notes)


def run(quick: bool) -> list[Table]:
    """The section for ``python -m bench``."""
    return [table(QUICK_ROUNDS if quick else ROUNDS)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.flash_stepper", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parser.parse_args(argv)
    print(format_table(table(args.rounds), "markdown" if args.markdown else "text"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
