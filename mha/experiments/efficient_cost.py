"""Lab 14's cost measurement: time and peak memory against L, on the same random q, k, v of shape (1, H, L, d).

Two bargains, five methods:

- ``softmax``: this engine's full attention (:func:`mha.functional.scaled_dot_product_attention`): L × L scores,
  work ∝ L² · d; ``linear``: :func:`mha.experiments.linear.linear_attention` (non-causal), a d × d state,
  work ∝ L · d². In multiply-adds (2 L² d against 2 L d²) they are equal at L = d; the measured times cross
  where the kernels and the machine put them, which :func:`crossover` reads off the rows.
- ``dense``: full attention with no mask; ``dense_masked``: the same with BigBird's pattern (window of one block
  each side, one global block, one random block per row) as a mask on the L × L matrix; ``block_sparse``:
  :func:`mha.experiments.sparse.block_sparse_attention`, only the kept blocks. A mask saves nothing: dense and
  dense_masked cost alike; skipping blocks makes the work ∝ L · (kept blocks per row) · b.

Measured with :mod:`mha.experiments.timing` (medians, re-measured while a time breaks its work's growth) in a
child process (:func:`measure_efficient_isolated`, via :mod:`mha.experiments.isolated`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace

import torch
from torch import Tensor

from mha.experiments.isolated import TIMEOUT_S, run_isolated
from mha.experiments.linear import linear_attention
from mha.experiments.sparse import (
    bigbird_block_layout,
    block_sparse_attention,
    dense_masked_attention,
    expand_layout,
    num_blocks,
)
from mha.experiments.timing import (
    GrowthBreak,
    Steady,
    growth_breaks,
    measure_steady,
    peak_allocated_bytes,
    steady_from_json,
    time_calls,
)
from mha.functional import scaled_dot_product_attention

__all__ = [
    "LENGTHS",
    "LINEAR_METHODS",
    "LIVE_MAX_LENGTH",
    "METHODS",
    "SPARSE_METHODS",
    "EfficientRow",
    "crossover",
    "efficient_as_json",
    "efficient_breaks",
    "measure_efficient",
    "measure_efficient_isolated",
    "measure_efficient_steady",
    "pattern_layout",
]

LINEAR_METHODS = ("softmax", "linear")
SPARSE_METHODS = ("dense", "dense_masked", "block_sparse")
METHODS = LINEAR_METHODS + SPARSE_METHODS
LENGTHS = (32, 64, 128, 256, 512, 1024, 2048, 4096)
LIVE_MAX_LENGTH = 2048  # a shared server: the page measures up to here (one head: 16 MiB of scores); the bench further
# the measured sparse pattern: BigBird's, with this many window / global / random blocks
WINDOW_BLOCKS, GLOBAL_BLOCKS, RANDOM_BLOCKS = 1, 1, 1


@dataclass(frozen=True)
class EfficientRow:
    """One method at one length, measured."""

    method: str
    length: int
    seconds: float  # median wall-clock seconds of one call
    peak_bytes: int  # peak bytes allocated during one call (0 until measured)
    low_s: float  # 25th and 75th percentile of the timed rounds
    high_s: float
    work: int  # the products the method computes, in multiply-adds (its growth is what a time is checked against)


def pattern_layout(length: int, block: int, seed: int = 0) -> Tensor:
    """The measured sparse pattern at L: BigBird's block layout (:data:`WINDOW_BLOCKS`, ...). Shape (nb, nb)."""
    return bigbird_block_layout(num_blocks(length, block), WINDOW_BLOCKS, GLOBAL_BLOCKS, RANDOM_BLOCKS, seed)


def _work(method: str, length: int, head_dim: int, layout: Tensor, block: int) -> int:
    """Multiply-adds per head: Q Kᵀ and weights · V (2 L² d), the state and its read-out (2 L d²), or the kept
    blocks' share of them (2 · kept query-key pairs, padding slots included, · d)."""
    if method == "linear":
        return 2 * length * head_dim * head_dim
    if method == "block_sparse":
        most = int(layout.sum(dim=1).max())
        return 2 * layout.shape[0] * block * most * block * head_dim
    return 2 * length * length * head_dim


def _calls(
    lengths: Sequence[int], num_heads: int, head_dim: int, block: int, seed: int, methods: Sequence[str]
) -> dict[int, list[tuple[str, Callable[[], object], int]]]:
    """Per length, ``(method, call, work)`` for each method on the same seeded q, k, v."""
    generator = torch.Generator().manual_seed(seed)
    calls = {}
    for length in lengths:
        q, k, v = torch.randn(3, 1, num_heads, length, head_dim, generator=generator, device="cpu")  # 3 x (1, H, L, d)
        layout = pattern_layout(length, block, seed)  # (nb, nb)
        mask = expand_layout(layout, block, length)  # (1, 1, L, L)
        table = {
            "softmax": lambda q=q, k=k, v=v: scaled_dot_product_attention(q, k, v),
            "linear": lambda q=q, k=k, v=v: linear_attention(q, k, v),
            "dense": lambda q=q, k=k, v=v: scaled_dot_product_attention(q, k, v),
            "dense_masked": lambda q=q, k=k, v=v, mask=mask: dense_masked_attention(q, k, v, mask),
            "block_sparse": lambda q=q, k=k, v=v, layout=layout: block_sparse_attention(q, k, v, layout, block),
        }
        calls[length] = [(method, table[method], _work(method, length, head_dim, layout, block)) for method in methods]
    return calls


Starting = Callable[[str, int], None]  # (part, length): told before each part of a measurement starts


def _timed_rows(
    calls: dict[int, list], repeats: int, starting: Starting = lambda part, length: None
) -> list[EfficientRow]:
    starting("warmup", min(calls))
    with torch.inference_mode():
        for methods in calls.values():  # one pass over everything first: the first length is not timed cold
            for _, call, _ in methods:
                call()
    rows = []
    for length, methods in calls.items():
        starting("time", length)
        timings = time_calls([call for _, call, _ in methods], repeats)
        rows += [
            EfficientRow(method, length, timing.median_s, 0, timing.low_s, timing.high_s, work)
            for (method, _, work), timing in zip(methods, timings, strict=True)
        ]
    return rows


def _with_memory(
    rows: Sequence[EfficientRow], calls: dict[int, list], starting: Starting = lambda part, length: None
) -> list[EfficientRow]:
    peaks = {}
    for length, each in calls.items():
        starting("memory", length)
        peaks |= {(length, method): peak_allocated_bytes(call) for method, call, _ in each}
    return [replace(row, peak_bytes=peaks[row.length, row.method]) for row in rows]


def _check(lengths: Sequence[int], methods: Sequence[str], limit: int | None) -> None:
    unknown = [method for method in methods if method not in METHODS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose from {', '.join(METHODS)}")
    if limit is not None and max(lengths) > limit:
        raise ValueError(f"lengths must be at most {limit}, got {max(lengths)}")


def measure_efficient(
    lengths: Sequence[int],
    num_heads: int = 1,
    head_dim: int = 64,
    block: int = 64,
    repeats: int = 5,
    seed: int = 0,
    methods: Sequence[str] = METHODS,
    limit: int | None = LIVE_MAX_LENGTH,
) -> list[EfficientRow]:
    """One measurement: every method at every length, time and then peak memory."""
    _check(lengths, methods, limit)
    calls = _calls(lengths, num_heads, head_dim, block, seed, methods)
    return _with_memory(_timed_rows(calls, repeats), calls)


def efficient_breaks(rows: Sequence[EfficientRow]) -> list[GrowthBreak]:
    """Where a method's time grew far faster than its work (or fell as L grew)."""
    breaks = []
    for method in dict.fromkeys(row.method for row in rows):
        series = sorted((row for row in rows if row.method == method), key=lambda row: row.length)
        breaks += growth_breaks(
            method, [r.length for r in series], [r.seconds for r in series], [r.work for r in series]
        )
    return breaks


def measure_efficient_steady(
    lengths: Sequence[int],
    num_heads: int = 1,
    head_dim: int = 64,
    block: int = 64,
    repeats: int = 5,
    seed: int = 0,
    methods: Sequence[str] = METHODS,
    limit: int | None = LIVE_MAX_LENGTH,
    progress: Callable[..., None] | None = None,
) -> Steady[list[EfficientRow]]:
    """:func:`measure_efficient`, its times measured again while they break their work's growth; memory read once.

    ``progress(part=, length=, done=, total=, attempt=)`` is told before each part starts: the warm-up pass
    (``part="warmup"``), the times at each length (``"time"``; an attempt after the first starts the count again),
    then the memory at each length (``"memory"``); ``done`` parts of ``total``.
    """
    _check(lengths, methods, limit)
    calls = _calls(lengths, num_heads, head_dim, block, seed, methods)
    total, attempts, done = 1 + 2 * len(calls), itertools.count(1), itertools.count()

    def starting(attempt: int) -> Starting:
        def tell(part: str, length: int) -> None:
            if progress is not None:
                progress(part=part, length=int(length), done=next(done), total=total, attempt=attempt)

        return tell

    def timed() -> list[EfficientRow]:
        nonlocal done
        attempt, done = next(attempts), itertools.count()
        return _timed_rows(calls, repeats, starting(attempt))

    steady = measure_steady(timed, efficient_breaks)
    return replace(steady, result=_with_memory(steady.result, calls, starting(steady.attempts)))


def crossover(rows: Sequence[EfficientRow], dearer: str, cheaper: str, column: str = "seconds") -> int | None:
    """The shortest measured L from which ``cheaper`` costs less than ``dearer`` (``column``: ``seconds`` or
    ``peak_bytes``) at that L and every longer one; ``None`` when it does not by the longest L."""
    value = {(row.method, row.length): getattr(row, column) for row in rows}
    lengths = sorted({row.length for row in rows if (dearer, row.length) in value and (cheaper, row.length) in value})
    found = None
    for length in reversed(lengths):
        if value[cheaper, length] >= value[dearer, length]:
            break
        found = length
    return found


def efficient_as_json(progress: Callable[..., None] | None = None, **arguments) -> dict:
    """:func:`measure_efficient_steady` as JSON (the child's side, named ``efficient`` in
    :data:`mha.experiments.isolated.MEASUREMENTS`), its progress reports sent to ``progress``."""
    return asdict(measure_efficient_steady(**arguments, progress=progress))


def measure_efficient_isolated(
    lengths: Sequence[int],
    num_heads: int,
    head_dim: int,
    block: int,
    repeats: int,
    seed: int = 0,
    timeout_s: float = TIMEOUT_S,
    limit: int | None = LIVE_MAX_LENGTH,
    progress: Callable[..., None] | None = None,
) -> Steady[list[EfficientRow]]:
    """:func:`measure_efficient_steady` in a child process (the profiler's log stays out of the server's);
    ``limit=None`` lifts the live cap (the bench); ``progress`` is told what the child is measuring, as it goes
    (:func:`measure_efficient_steady`'s reports).

    Raises:
        mha.experiments.isolated.IsolatedMeasurementError: the child failed or ran past ``timeout_s``.
    """
    arguments = {
        "lengths": [int(n) for n in lengths],
        "num_heads": int(num_heads),
        "head_dim": int(head_dim),
        "block": int(block),
        "repeats": int(repeats),
        "seed": int(seed),
        "limit": limit,
    }
    data = run_isolated("efficient", arguments, timeout_s, progress)
    return steady_from_json(data, lambda row: EfficientRow(**row))
