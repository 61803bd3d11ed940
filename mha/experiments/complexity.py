"""Time and memory of attention against the sequence length L, measured on this machine.

Three ways to attend, on the same random q, k, v of shape (1, H, L, Dh):

- ``full``: this engine's :func:`mha.functional.scaled_dot_product_attention`; it builds the
  whole (H, L, L) score tensor, so memory and time grow like L². Without gradients (as here) its
  softmax runs in the scores' own buffer: one (H, L, L) tensor holds the scores, then the weights;
- ``blocks``: block-local attention (as in the Swin Transformer): the sequence is cut into L/b
  fixed, non-overlapping blocks of b tokens and each attends only within its block, computed
  blockwise, so only (H, L/b, b, b) scores exist: linear in L for a fixed b. The same numbers as
  ``full`` with :func:`block_diagonal_mask`. (Not the sliding window |i − j| ≤ w of
  :func:`mha.masks.window_mask`: "window" means that one everywhere in this app.)
- ``sdpa``: ``torch.nn.functional.scaled_dot_product_attention``, PyTorch's fused kernel.

Live measurements are capped at :data:`LIVE_MAX_LENGTH` (a shared server); longer lengths
are extrapolated from the measured points and marked as such. The lab runs
:func:`measure_complexity_steady` in a child process (:mod:`mha.experiments.isolated`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch
from torch import Tensor
from torch.nn import functional as F

from mha.experiments.timing import (
    GrowthBreak,
    Steady,
    growth_breaks,
    measure_steady,
    peak_allocated_bytes,
    time_calls,
)
from mha.functional import scaled_dot_product_attention

__all__ = [
    "ALL_LENGTHS",
    "LIVE_MAX_LENGTH",
    "METHODS",
    "ComplexityRow",
    "block_diagonal_mask",
    "block_local_attention",
    "complexity_breaks",
    "extrapolate",
    "measure_complexity",
    "measure_complexity_steady",
    "peak_bytes",
    "work",
]

METHODS = ("full", "blocks", "sdpa")
ALL_LENGTHS = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
LIVE_MAX_LENGTH = 1024
FLOAT32_BYTES = 4


def block_local_attention(q: Tensor, k: Tensor, v: Tensor, block: int) -> tuple[Tensor, Tensor]:
    """Attention inside non-overlapping blocks of ``block`` tokens, one block at a time (batched).

    Args:
        q, k, v: (B, H, L, Dh); L must be a multiple of ``block`` (a block longer than L is cut to L).

    Shape:
        out (B, H, L, Dh), weights (B, H, L / b, b, b).
    """
    batch, heads, length, d_k = q.shape
    block = min(block, length)
    if length % block:
        raise ValueError(f"sequence length L={length} must be a multiple of block={block}")
    blocks = (batch, heads, length // block, block, d_k)
    out, weights = scaled_dot_product_attention(
        q.reshape(blocks), k.reshape(blocks), v.reshape(blocks)
    )  # (B, H, L/b, b, Dh) each -> out (B, H, L/b, b, Dh), weights (B, H, L/b, b, b)
    return out.reshape(batch, heads, length, d_k), weights  # (B, H, L, Dh)


def block_diagonal_mask(length: int, block: int) -> Tensor:
    """The keep-mask that :func:`block_local_attention` computes blockwise: i, j in the same block.

    Shape: (1, 1, L, L).
    """
    index = torch.arange(length, device="cpu") // min(block, length)  # (L,)
    return (index.view(-1, 1) == index.view(1, -1)).view(1, 1, length, length)  # (1, 1, L, L)


def peak_bytes(method: str, length: int, num_heads: int, head_dim: int, block: int) -> int | None:
    """Peak float32 bytes one call allocates, by what it holds at once (checked against the profiler in the tests).

    ``full``: the (H, L, L) scores, softmaxed in the same buffer (no second L × L tensor without gradients),
    beside the scaled queries q · scale (H, L, Dh) while Q Kᵀ is computed, and then beside the output
    (H, L, Dh): 4 · H · L · (L + Dh). ``blocks``: the same with b in place of L for the keys:
    4 · H · L · (b + Dh). ``sdpa``: ``None``: its kernel's tiles are its own business; only measured.

    Args:
        method: one of :data:`METHODS`.
        length: L; num_heads: H; head_dim: Dh; block: b (cut to L when longer).

    Raises:
        ValueError: an unknown method.
    """
    if method == "full":
        return FLOAT32_BYTES * num_heads * length * (length + head_dim)
    if method == "blocks":
        return FLOAT32_BYTES * num_heads * length * (min(block, length) + head_dim)
    if method == "sdpa":
        return None
    raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")


def work(method: str, length: int, block: int) -> int:
    """Scores a method computes at length L, in units of H·Dh: L² (full, sdpa) or L·min(b, L) (blocks)."""
    return length * (min(block, length) if method == "blocks" else length)


@dataclass(frozen=True)
class ComplexityRow:
    """One method at one length."""

    method: str
    length: int
    seconds: float  # median wall-clock seconds of one call (measured) or the estimate
    peak_bytes: int  # peak bytes allocated during one call (measured) or the estimate
    measured: bool  # False: extrapolated beyond the live cap
    low_s: float | None = None  # 25th and 75th percentile of the timed rounds; None for an estimate
    high_s: float | None = None


def _method_call(method: str, q: Tensor, k: Tensor, v: Tensor, block: int):
    if method == "full":
        return lambda: scaled_dot_product_attention(q, k, v)
    if method == "blocks":
        return lambda: block_local_attention(q, k, v, block)
    return lambda: F.scaled_dot_product_attention(q, k, v)


def _calls(lengths: Sequence[int], num_heads: int, head_dim: int, block: int, seed: int) -> dict[int, list]:
    """Per length, one call per method of :data:`METHODS` on the same seeded q, k, v."""
    too_long = [length for length in lengths if length > LIVE_MAX_LENGTH]
    if too_long:
        raise ValueError(f"lengths {too_long} exceed the live cap L <= {LIVE_MAX_LENGTH}; extrapolate them instead")
    generator = torch.Generator().manual_seed(seed)
    calls = {}
    for length in lengths:
        q, k, v = torch.randn(3, 1, num_heads, length, head_dim, generator=generator, device="cpu")  # 3 x (1, H, L, Dh)
        calls[length] = [_method_call(method, q, k, v, block) for method in METHODS]
    return calls


def _timed_rows(calls: dict[int, list], repeats: int) -> list[ComplexityRow]:
    """Median seconds and quartiles of every call (memory not measured: ``peak_bytes`` 0)."""
    with torch.inference_mode():
        for methods in calls.values():  # one pass over everything first: the first length is not timed cold
            for call in methods:
                call()
    return [
        ComplexityRow(method, length, timing.median_s, 0, True, low_s=timing.low_s, high_s=timing.high_s)
        for length, methods in calls.items()
        for method, timing in zip(METHODS, time_calls(methods, repeats), strict=True)
    ]


def _with_memory(rows: Sequence[ComplexityRow], calls: dict[int, list]) -> list[ComplexityRow]:
    """The rows with the peak bytes of their call, read by the profiler after every timing is done (the profiler
    leaves threads behind for a moment that would slow a timing after it)."""
    peaks = {
        (method, length): peak_allocated_bytes(call)
        for length, methods in calls.items()
        for method, call in zip(METHODS, methods, strict=True)
    }
    return [replace(row, peak_bytes=peaks[(row.method, row.length)]) for row in rows]


def measure_complexity(
    lengths: Sequence[int], num_heads: int = 4, head_dim: int = 32, block: int = 64, repeats: int = 5, seed: int = 0
) -> list[ComplexityRow]:
    """Measure the median seconds (with quartiles) and peak allocated bytes of each method at each length.

    CPU, float32. The profiler that reads the memory logs to stderr: the lab calls this in a child process.

    Args:
        lengths: sequence lengths, each at most :data:`LIVE_MAX_LENGTH` and a multiple of ``block``
            when longer than it.
        num_heads, head_dim: H and Dh of q, k, v.
        block: the block-local method's block size b.
        repeats: timed rounds per point (see :func:`mha.experiments.timing.time_calls`).
        seed: seeds q, k, v.

    Raises:
        ValueError: a length over the live cap.
    """
    calls = _calls(lengths, num_heads, head_dim, block, seed)
    return _with_memory(_timed_rows(calls, repeats), calls)


def complexity_breaks(rows: Sequence[ComplexityRow], block: int) -> list[GrowthBreak]:
    """Where a method's measured time grew far faster than its :func:`work` (or fell as L grew)."""
    breaks = []
    for method in METHODS:
        measured = sorted((row for row in rows if row.method == method and row.measured), key=lambda row: row.length)
        lengths = [row.length for row in measured]
        breaks += growth_breaks(
            method, lengths, [row.seconds for row in measured], [work(method, n, block) for n in lengths]
        )
    return breaks


def measure_complexity_steady(
    lengths: Sequence[int], num_heads: int = 4, head_dim: int = 32, block: int = 64, repeats: int = 5, seed: int = 0
) -> Steady[list[ComplexityRow]]:
    """:func:`measure_complexity`, its times measured again while they break their growth
    (:func:`complexity_breaks`); the memory is read once, after the last timing."""
    calls = _calls(lengths, num_heads, head_dim, block, seed)
    steady = measure_steady(lambda: _timed_rows(calls, repeats), lambda rows: complexity_breaks(rows, block))
    return replace(steady, result=_with_memory(steady.result, calls))


def extrapolate(
    rows: Sequence[ComplexityRow], lengths: Sequence[int], num_heads: int, head_dim: int, block: int
) -> list[ComplexityRow]:
    """Estimates for lengths past the measured ones, marked ``measured=False``.

    From each method's longest measured point: time scaled like L² (full; sdpa too, it still
    computes every score) or like L (blocks, fixed b); memory scaled like :func:`peak_bytes`
    (full: L · (L + Dh), blocks: L · (b + Dh)) or like L (sdpa: its output and tiles).

    Args:
        rows: measured rows.
        lengths: the lengths to estimate (those not longer than a method's longest measured one are skipped).
        num_heads, head_dim, block: H, Dh and b of the measurement.
    """
    estimates = []
    for method in METHODS:
        measured = [row for row in rows if row.method == method and row.measured]
        if not measured:
            continue
        last = max(measured, key=lambda row: row.length)
        time_power = 1 if method == "blocks" else 2
        last_formula = peak_bytes(method, last.length, num_heads, head_dim, block)
        for length in lengths:
            if length <= last.length:
                continue
            growth = length / last.length
            formula = peak_bytes(method, length, num_heads, head_dim, block)
            memory_growth = growth if formula is None or not last_formula else formula / last_formula
            estimates.append(
                ComplexityRow(
                    method=method,
                    length=length,
                    seconds=last.seconds * growth**time_power,
                    peak_bytes=int(last.peak_bytes * memory_growth),
                    measured=False,
                )
            )
    return estimates
