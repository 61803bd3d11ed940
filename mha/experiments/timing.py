"""Bounded wall-clock and memory measurements on the CPU (for the timing labs, never for tests).

Timings take the fastest of a few repeats after one warm-up call (as ``timeit`` advises: slower
runs measure the other processes, not the code), the compared calls taking turns so that a burst
of load from other users hits them alike. Memory is the peak of
the bytes the PyTorch CPU allocator held during one call, read from the profiler's
allocation events of the calling thread (other threads' allocations are not recorded).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import torch
from torch.profiler import ProfilerActivity, profile

__all__ = ["MAX_REPEATS", "best_seconds", "peak_allocated_bytes"]

MAX_REPEATS = 10


def best_seconds(calls: Sequence[Callable[[], object]], repeats: int) -> list[float]:
    """Fastest wall-clock seconds of each call, timed in turns so that load from other users hits all alike.

    Every call runs once to warm up; then each round times every call once, ``repeats`` rounds
    (1..MAX_REPEATS). Returns one time per call, in order.
    """
    if not 1 <= repeats <= MAX_REPEATS:
        raise ValueError(f"repeats must be between 1 and {MAX_REPEATS}, got repeats={repeats}")
    samples: list[list[float]] = [[] for _ in calls]
    with torch.inference_mode():
        for call in calls:
            call()
        for _ in range(repeats):
            for times, call in zip(samples, calls, strict=True):
                start = time.perf_counter()
                call()
                times.append(time.perf_counter() - start)
    return [min(times) for times in samples]


def peak_allocated_bytes(fn: Callable[[], object]) -> int:
    """Peak bytes allocated on the CPU during one call of ``fn()``, above what was held before.

    Reads the profiler's ``[memory]`` events (+bytes on allocation, -bytes on release) in
    time order and returns the highest running total. The result of ``fn`` counts while it lives.
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
