"""Bounded wall-clock and memory measurements on the CPU (for the timing labs, never for tests).

Timings: every call runs once to warm up; then each round times every call once, the calls
taking turns so that a burst of load from other users hits them alike. A call's time is the
**median** of its rounds, and its spread the middle half of them (25th to 75th percentile): on a
shared machine single rounds can be several times slower, the median is not moved by a few.

A measurement is then checked against what it measures: when the work grows by a factor, the
time may not grow by much more (or shrink by much). A result that breaks this by far
(:func:`growth_breaks`) is measured again (:func:`measure_steady`), a few times at most; what is
still broken after that is returned with its breaks, for the page to say so and not to keep it.

Memory is the peak of the bytes the PyTorch CPU allocator held during one call, read from the
profiler's allocation events of the calling thread (other threads' allocations are not recorded).
The profiler writes log lines to the process's stderr; the labs call it in a child process
(:mod:`mha.experiments.isolated`) so that none reach the server's log.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import torch
from torch.profiler import ProfilerActivity, profile

__all__ = [
    "GROWTH_TOLERANCE",
    "MAX_REPEATS",
    "MEASURE_ATTEMPTS",
    "MIN_REPEATS",
    "GrowthBreak",
    "Steady",
    "Timing",
    "growth_breaks",
    "measure_steady",
    "peak_allocated_bytes",
    "summarize",
    "time_calls",
]

MIN_REPEATS = 3  # a median and quartiles need a few rounds
MAX_REPEATS = 25
GROWTH_TOLERANCE = 2.0  # a time may grow up to 2x faster than its work (and shrink to half) before it is re-measured
MEASURE_ATTEMPTS = 3

T = TypeVar("T")


@dataclass(frozen=True)
class Timing:
    """Seconds per call over the timed rounds: the median and the middle half of the rounds."""

    median_s: float
    low_s: float  # 25th percentile
    high_s: float  # 75th percentile
    rounds: int

    @property
    def spread(self) -> float:
        """``high / low``: 1.0 when every round took the same time."""
        return self.high_s / self.low_s if self.low_s > 0 else float("inf")


def summarize(samples: Sequence[float]) -> Timing:
    """The median and quartiles of timed rounds (``inclusive`` quartiles: they stay within the samples)."""
    if not samples:
        raise ValueError("no timed rounds to summarize")
    if len(samples) == 1:
        return Timing(samples[0], samples[0], samples[0], 1)
    low, middle, high = statistics.quantiles(samples, n=4, method="inclusive")
    return Timing(middle, low, high, len(samples))


def time_calls(
    calls: Sequence[Callable[[], object]], repeats: int, clock: Callable[[], float] = time.perf_counter
) -> list[Timing]:
    """Time each call ``repeats`` rounds (MIN_REPEATS..MAX_REPEATS), in turns, after one warm-up call each.

    Returns one :class:`Timing` per call, in order.
    """
    if not MIN_REPEATS <= repeats <= MAX_REPEATS:
        raise ValueError(f"repeats must be between {MIN_REPEATS} and {MAX_REPEATS}, got repeats={repeats}")
    samples: list[list[float]] = [[] for _ in calls]
    with torch.inference_mode():
        for call in calls:
            call()
        for _ in range(repeats):
            for times, call in zip(samples, calls, strict=True):
                start = clock()
                call()
                times.append(clock() - start)
    return [summarize(times) for times in samples]


@dataclass(frozen=True)
class GrowthBreak:
    """One step of a series where the measured time broke the growth of its work."""

    series: str
    size_from: int
    size_to: int
    time_ratio: float  # measured median time at size_to / at size_from
    work_ratio: float  # what the work grew by


def growth_breaks(
    series: str,
    sizes: Sequence[int],
    seconds: Sequence[float],
    work: Sequence[float],
    tolerance: float = GROWTH_TOLERANCE,
) -> list[GrowthBreak]:
    """Steps where the time grew more than ``tolerance`` × the work, or shrank below ``1 / tolerance``.

    A fixed overhead makes small sizes grow *slower* than their work, which is allowed; time that
    outgrows the work by far, or falls while the work grows, is another process's doing.

    Args:
        series: the name the breaks carry.
        sizes, seconds, work: per size (ascending): the size, its measured time and its work in any unit.
    """
    breaks = []
    for i in range(len(sizes) - 1):
        time_ratio = seconds[i + 1] / seconds[i] if seconds[i] > 0 else float("inf")
        work_ratio = work[i + 1] / work[i]
        if time_ratio > work_ratio * tolerance or time_ratio < 1 / tolerance:
            breaks.append(GrowthBreak(series, sizes[i], sizes[i + 1], time_ratio, work_ratio))
    return breaks


@dataclass(frozen=True)
class Steady(Generic[T]):
    """A measurement after :func:`measure_steady`: the last result, how many times it was taken, what broke."""

    result: T
    attempts: int
    breaks: tuple[GrowthBreak, ...]  # left in the last result; empty: it met its expectation

    @property
    def trusted(self) -> bool:
        """Whether the result met its expectation (and may be kept and shown without a warning)."""
        return not self.breaks


def measure_steady(
    measure: Callable[[], T], check: Callable[[T], Sequence[GrowthBreak]], attempts: int = MEASURE_ATTEMPTS
) -> Steady[T]:
    """Measure, check, and measure again while the check finds breaks, ``attempts`` times at most."""
    if attempts < 1:
        raise ValueError(f"attempts must be at least 1, got attempts={attempts}")
    taken = 0
    while True:
        result = measure()
        taken += 1
        breaks = tuple(check(result))
        if not breaks or taken == attempts:
            return Steady(result, taken, breaks)


def steady_from_json(data: dict, row: Callable[[dict], T]) -> Steady[list[T]]:
    """A :class:`Steady` of a list sent back as JSON by a child process (``dataclasses.asdict`` of it), each result
    row rebuilt by ``row``."""
    return Steady(
        result=[row(each) for each in data["result"]],
        attempts=data["attempts"],
        breaks=tuple(GrowthBreak(**each) for each in data["breaks"]),
    )


def peak_allocated_bytes(fn: Callable[[], object]) -> int:
    """Peak bytes allocated on the CPU during one call of ``fn()``, above what was held before.

    Reads the profiler's ``[memory]`` events (+bytes on allocation, -bytes on release) in
    time order and returns the highest running total. The result of ``fn`` counts while it lives.
    The profiler logs to stderr: call this in a child process (:mod:`mha.experiments.isolated`).
    """
    with torch.inference_mode(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        result = fn()
        del result
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    running = peak = 0
    for event in sorted(events, key=lambda e: e.start_ns()):
        running += event.nbytes()
        peak = max(peak, running)
    return peak
