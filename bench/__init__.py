"""Benchmarks that print tables, not timed tests: ``python -m bench``.

A section is a module ``bench/<name>.py`` that defines::

    TITLE = "what it measures"            # one line, shown by --list
    def run(quick: bool) -> list[Table]:  # quick: a fast smoke run (seconds, not minutes)

and returns :class:`bench.table.Table` objects; ``python -m bench`` finds every such module,
runs them (or those named by ``--only``) and prints the tables. :func:`median_time` is the
shared timer: warm-up calls, then the median of repeats.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

__all__ = ["median_time", "time_once"]


def time_once(fn: Callable[[], object]) -> float:
    """Seconds one call of ``fn`` takes (``time.perf_counter``)."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_time(fn: Callable[[], object], repeats: int, warmup: int = 2) -> float:
    """Median seconds of ``repeats`` calls of ``fn``, after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn()
    return statistics.median(time_once(fn) for _ in range(repeats))
