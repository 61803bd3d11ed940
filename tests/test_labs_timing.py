"""The timing labs' measuring helpers: medians, spread, the re-measure rule, and a clean server log.

No wall time is asserted: the clock is a fake where a test needs known times, and real
measurements are only checked for their shape and order (low <= median <= high).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from itertools import count
from pathlib import Path

import pytest
import torch

from mha.experiments.timing import (
    MAX_REPEATS,
    MIN_REPEATS,
    GrowthBreak,
    growth_breaks,
    measure_steady,
    peak_allocated_bytes,
    summarize,
    time_calls,
)

REPO = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- medians and spread
def test_summarize_takes_the_median_and_the_middle_half():
    timing = summarize([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (timing.median_s, timing.low_s, timing.high_s, timing.rounds) == (3.0, 2.0, 4.0, 5)
    assert timing.spread == pytest.approx(2.0)


def test_one_slow_round_does_not_move_the_median():
    steady = summarize([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    with_outlier = summarize([1.0, 1.0, 1.0, 50.0, 1.0, 1.0, 1.0])  # another user's burst hits one round
    assert with_outlier.median_s == steady.median_s == 1.0
    assert with_outlier.high_s == 1.0  # the middle half leaves the outlier out too


def test_summarize_needs_a_round():
    with pytest.raises(ValueError, match="no timed rounds"):
        summarize([])


def _fake_clock(durations: dict[str, list[float]], order: list[str]):
    """A clock whose readings make call ``name`` take the next of ``durations[name]`` seconds."""
    now = [0.0]
    ticks = count()

    def clock() -> float:
        tick = next(ticks)
        if tick % 2 == 1:  # a call has just ended: advance by its duration
            name = order[(tick // 2) % len(order)]
            now[0] += durations[name].pop(0)
        return now[0]

    return clock


def test_time_calls_warms_up_then_times_each_call_in_turns():
    ran: list[str] = []
    calls = [lambda: ran.append("a"), lambda: ran.append("b")]
    durations = {"a": [3.0, 1.0, 2.0], "b": [10.0, 30.0, 20.0]}
    a, b = time_calls(calls, 3, clock=_fake_clock(durations, ["a", "b"]))
    assert ran == ["a", "b"] + ["a", "b"] * 3  # one warm-up each, then rounds taking turns
    assert (a.median_s, a.low_s, a.high_s) == (2.0, 1.5, 2.5)
    assert (b.median_s, b.low_s, b.high_s) == (20.0, 15.0, 25.0)


def test_time_calls_bounds_its_rounds():
    assert len(time_calls([lambda: None, lambda: None], MIN_REPEATS)) == 2
    for repeats in (MIN_REPEATS - 1, MAX_REPEATS + 1):
        with pytest.raises(ValueError, match="repeats"):
            time_calls([lambda: None], repeats)


def test_real_timings_are_ordered():
    (timing,) = time_calls([lambda: torch.ones(256, 256) @ torch.ones(256, 256)], MIN_REPEATS)
    assert 0 < timing.low_s <= timing.median_s <= timing.high_s and timing.rounds == MIN_REPEATS


# ---------------------------------------------------------------- the re-measure rule
def test_growth_breaks_allows_overhead_but_not_time_that_outgrows_its_work():
    sizes, work = [256, 512, 1024], [1.0, 4.0, 16.0]  # L²
    assert growth_breaks("full", sizes, [1.0, 4.0, 16.0], work) == []  # exactly like the work
    assert growth_breaks("full", sizes, [1.0, 1.2, 1.5], work) == []  # a fixed overhead: slower growth is fine
    assert growth_breaks("full", sizes, [1.0, 7.9, 31.0], work) == []  # within 2x of the work
    (jump,) = growth_breaks("full", sizes, [1.0, 4.0, 76.8], work)  # 19.2x for 4x the work
    assert jump == GrowthBreak("full", 512, 1024, pytest.approx(19.2), 4.0)
    (drop,) = growth_breaks("full", sizes, [4.0, 1.0, 4.0], work)  # faster with more work: the first was slowed
    assert (drop.size_from, drop.size_to, drop.time_ratio) == (256, 512, 0.25)


def test_measure_steady_measures_again_until_the_result_meets_its_expectation():
    results = iter([[1.0, 19.2], [1.0, 4.1], [1.0, 4.0]])
    calls = []

    def measure() -> list[float]:
        calls.append(1)
        return next(results)

    def check(seconds: list[float]) -> list[GrowthBreak]:
        return growth_breaks("full", [512, 1024], seconds, [1.0, 4.0])

    steady = measure_steady(measure, check, attempts=3)
    assert steady.result == [1.0, 4.1] and steady.attempts == 2 == len(calls)
    assert steady.trusted and steady.breaks == ()


def test_measure_steady_gives_up_after_its_attempts_and_says_what_broke():
    steady = measure_steady(lambda: [1.0, 100.0], lambda s: growth_breaks("blocks", [64, 128], s, [1.0, 2.0]), 3)
    assert steady.attempts == 3 and not steady.trusted
    assert [(b.series, b.time_ratio) for b in steady.breaks] == [("blocks", 100.0)]
    with pytest.raises(ValueError, match="attempts"):
        measure_steady(lambda: None, lambda _: [], attempts=0)


def test_peak_allocated_bytes_sees_a_known_allocation():
    assert peak_allocated_bytes(lambda: torch.ones(1 << 18)) >= 4 * (1 << 18)


# ---------------------------------------------------------------- a clean server log
# The lab's measurement, run from a thread as Streamlit runs a page (the profiler complains loudest there).
_FROM_A_THREAD = textwrap.dedent(
    """
    import threading
    from {module} import {function}

    def measure():
        global result
        result = {function}([16, 32, 64], 1, 8, 16, 3)

    worker = threading.Thread(target=measure)
    worker.start()
    worker.join()
    rows = result.result if hasattr(result, "result") else result
    print("rows", len(rows))
    """
)


def _run(module: str, function: str) -> subprocess.CompletedProcess:
    script = _FROM_A_THREAD.format(module=module, function=function)
    return subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=240, check=False
    )


def test_the_complexity_labs_measurement_leaves_stdout_and_stderr_clean():
    child = _run("mha.experiments.isolated", "measure_complexity_isolated")
    assert child.returncode == 0, child.stderr
    assert child.stdout == "rows 9\n"  # 3 lengths x 3 methods, and nothing else
    assert child.stderr == ""


def test_the_profiler_itself_is_noisy_which_is_why_the_lab_isolates_it():
    child = _run("mha.experiments.complexity", "measure_complexity")
    assert child.returncode == 0, child.stderr
    assert "profiler_start" in child.stderr + child.stdout


def test_an_unknown_isolated_measurement_is_refused_by_name():
    from mha.experiments.isolated import run_isolated

    with pytest.raises(ValueError, match="unknown measurement 'nothing'"):
        run_isolated("nothing", {})
