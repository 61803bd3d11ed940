"""One learner on a checkpoint's page: the checkpoint's forwards and the server's CPU per change, and each panel's time.

The page (``playground.py`` in AppTest, this process) opens the room bench's checkpoint (:func:`bench.room.
build_checkpoint`: GPT-2 small's size with random weights, built here; ``--quick``: the tests' tiny GPT-2), then
changes, in turn, the sentence (a new one each time) and the layer. Per change: the checkpoint's own forwards
(``GPT2Model.forward`` calls, whoever calls), the process's CPU seconds and the wall seconds of the page's run, and
the milliseconds inside each panel's code (nested: the values' fragment fills every step's values and runs the
checks). CPU seconds hold under a loaded machine; wall seconds do not.

``python -m bench.checkpoint_sentence [--rounds N]``; ``python -m bench --only checkpoint_sentence``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.room import CHECKPOINT, build_checkpoint, checkpoint_env, own_sentence
from bench.table import Table, format_table

TITLE = "A checkpoint's page, one learner: forwards, CPU and each panel's time per change (AppTest)"
COLUMNS = ("change", "forwards", "CPU s", "wall s", "run ms", "check ms", "values ms", "head finder ms", "patterns ms")
ROUNDS = 3
REPO = Path(__file__).resolve().parents[1]


def _timed(module: Any, name: str, label: str, spent: dict[str, float]) -> Callable[[], None]:
    """Wrap ``module.name`` to add its milliseconds to ``spent[label]``; returns the undo."""
    original = getattr(module, name)

    def wrapper(*args: object, **kwargs: object) -> object:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + (time.perf_counter() - start) * 1e3

    setattr(module, name, wrapper)
    return lambda: setattr(module, name, original)


def measure(folder: Path, rounds: int) -> list[tuple[object, ...]]:
    """The rows: one per change, after the page's first open."""
    os.environ.update(checkpoint_env(folder))
    from streamlit.testing.v1 import AppTest
    from transformers import GPT2Model

    from components import live_controls, runner
    from components.panels import checkpoint_check, head_finder, head_patterns

    forwards: list[int] = []
    original = GPT2Model.forward

    def counted(self: Any, *args: object, **kwargs: object) -> object:
        forwards.append(1)
        return original(self, *args, **kwargs)

    spent: dict[str, float] = {}
    undo = [
        _timed(runner, "cached_run", "run", spent),
        _timed(checkpoint_check, "render", "check", spent),
        _timed(live_controls, "render", "values", spent),
        _timed(head_finder, "render", "finder", spent),
        _timed(head_patterns, "render", "patterns", spent),
    ]
    GPT2Model.forward = counted
    rows = []
    try:
        at = AppTest.from_file(str(REPO / "playground.py"), default_timeout=600)
        for key, value in {"lang": "en", "weights": "pretrained", "checkpoint": CHECKPOINT}.items():
            at.query_params[key] = value
        at.run()  # the first open: the checkpoint loaded, the induction sequence's maps computed
        for change in range(2 * rounds):
            if change % 2 == 0:
                at.text_area(key="tokens").set_value(own_sentence(0, change + 1))
            else:
                at.number_input(key="layer").set_value(1 + change % 11)
            forwards.clear()
            spent.clear()
            cpu, wall = time.process_time(), time.perf_counter()
            at.run()
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            if at.exception:
                raise RuntimeError(f"the page failed: {at.exception[0].message}")
            ms = [f"{spent.get(label, 0.0):.0f}" for label in ("run", "check", "values", "finder", "patterns")]
            name = "a new sentence" if change % 2 == 0 else "another layer"
            rows.append((name, len(forwards), f"{cpu:.2f}", f"{wall:.2f}", *ms))
    finally:
        GPT2Model.forward = original
        for restore in undo:
            restore()
    return rows


def run(quick: bool) -> list[Table]:
    """``python -m bench`` section: GPT-2 small's size (``quick``: the tests' tiny GPT-2, one round)."""
    with tempfile.TemporaryDirectory(prefix="bench-checkpoint-sentence-") as scratch:
        if quick:
            sys.path.insert(0, str(REPO / "tests"))
            from tiny_checkpoint import build_gpt2

            folder = build_gpt2(Path(scratch))
        else:
            folder = build_checkpoint(Path(scratch))
        rows = measure(folder, 1 if quick else ROUNDS)
    load = os.getloadavg()[0]
    notes = (
        "forwards: the checkpoint's own GPT2Model.forward calls in the change's run; CPU s: this process's CPU seconds "
        "(every thread); run/check/values/head finder/patterns: ms inside that code (nested, wall).",
        f"load average after: {load:.2f} on {os.cpu_count()} cores.",
    )
    return [Table(TITLE, COLUMNS, tuple(rows), notes)]


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.checkpoint_sentence``."""
    parser = argparse.ArgumentParser(prog="python -m bench.checkpoint_sentence", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the tests' tiny GPT-2, one round")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    for table in run(args.quick):
        print(format_table(table, "markdown" if args.markdown else "text"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
