"""Time and memory of attention against the sequence length L, measured on this machine.

Three ways to attend, on the same random q, k, v of shape (1, H, L, Dh):

- ``full``: this engine's :func:`mha.functional.scaled_dot_product_attention`; it builds the
  whole (H, L, L) score and weight tensors, so memory and time grow like L²;
- ``windowed``: Swin-style non-overlapping windows of w tokens, computed blockwise: the sequence is
  cut into L/w blocks and each attends only within itself, so only (H, L/w, w, w) scores exist:
  linear in L for a fixed w. The same numbers as ``full`` with :func:`block_diagonal_mask`;
- ``sdpa``: ``torch.nn.functional.scaled_dot_product_attention``, PyTorch's fused kernel.

Live measurements are capped at :data:`LIVE_MAX_LENGTH` (a shared server); longer lengths
are extrapolated from the measured points and marked as such.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor
from torch.nn import functional as F

from mha.experiments.timing import best_seconds, peak_allocated_bytes
from mha.functional import scaled_dot_product_attention

__all__ = [
    "ALL_LENGTHS",
    "LIVE_MAX_LENGTH",
    "METHODS",
    "ComplexityRow",
    "block_diagonal_mask",
    "extrapolate",
    "measure_complexity",
    "score_bytes",
    "windowed_attention",
]

METHODS = ("full", "windowed", "sdpa")
ALL_LENGTHS = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
LIVE_MAX_LENGTH = 1024
FLOAT32_BYTES = 4


def windowed_attention(q: Tensor, k: Tensor, v: Tensor, window: int) -> tuple[Tensor, Tensor]:
    """Attention inside non-overlapping windows of ``window`` tokens, one block at a time (batched).

    Args:
        q, k, v: (B, H, L, Dh); L must be a multiple of ``window`` (a window longer than L is cut to L).

    Shape:
        out (B, H, L, Dh), weights (B, H, L / w, w, w).
    """
    batch, heads, length, d_k = q.shape
    window = min(window, length)
    if length % window:
        raise ValueError(f"sequence length L={length} must be a multiple of window={window}")
    blocks = (batch, heads, length // window, window, d_k)
    out, weights = scaled_dot_product_attention(
        q.reshape(blocks), k.reshape(blocks), v.reshape(blocks)
    )  # (B, H, L/w, w, Dh) each -> out (B, H, L/w, w, Dh), weights (B, H, L/w, w, w)
    return out.reshape(batch, heads, length, d_k), weights  # (B, H, L, Dh)


def block_diagonal_mask(length: int, window: int) -> Tensor:
    """The keep-mask that :func:`windowed_attention` computes blockwise: i, j in the same window.

    Shape: (1, 1, L, L).
    """
    block = torch.arange(length) // min(window, length)  # (L,)
    return (block.view(-1, 1) == block.view(1, -1)).view(1, 1, length, length)  # (1, 1, L, L)


def score_bytes(method: str, length: int, num_heads: int, window: int) -> int:
    """Bytes of one float32 score tensor each method materialises: H·L² (full), H·L·w (windowed), 0 (sdpa:
    its kernel never holds the whole matrix; measured peaks show what it does hold)."""
    if method == "full":
        return num_heads * length * length * FLOAT32_BYTES
    if method == "windowed":
        return num_heads * length * min(window, length) * FLOAT32_BYTES
    if method == "sdpa":
        return 0
    raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")


@dataclass(frozen=True)
class ComplexityRow:
    """One method at one length."""

    method: str
    length: int
    seconds: float  # wall-clock seconds of one call, the fastest of the repeats
    peak_bytes: int  # peak bytes allocated during one call (measured) or the score tensors' bytes (estimated)
    measured: bool  # False: extrapolated beyond the live cap


def _method_call(method: str, q: Tensor, k: Tensor, v: Tensor, window: int):
    if method == "full":
        return lambda: scaled_dot_product_attention(q, k, v)
    if method == "windowed":
        return lambda: windowed_attention(q, k, v, window)
    return lambda: F.scaled_dot_product_attention(q, k, v)


def measure_complexity(
    lengths: Sequence[int], num_heads: int = 4, head_dim: int = 32, window: int = 64, repeats: int = 3, seed: int = 0
) -> list[ComplexityRow]:
    """Measure seconds and peak allocated bytes of each method at each length (CPU, float32).

    Args:
        lengths: sequence lengths, each at most :data:`LIVE_MAX_LENGTH` and a multiple of ``window``
            when longer than it.
        num_heads, head_dim: H and Dh of q, k, v.
        window: the windowed method's block size w.
        repeats: timed calls per point (the fastest counts), after one warm-up.
        seed: seeds q, k, v.

    Raises:
        ValueError: a length over the live cap.
    """
    too_long = [length for length in lengths if length > LIVE_MAX_LENGTH]
    if too_long:
        raise ValueError(f"lengths {too_long} exceed the live cap L <= {LIVE_MAX_LENGTH}; extrapolate them instead")
    generator = torch.Generator().manual_seed(seed)
    calls = {}
    for length in lengths:
        q, k, v = torch.randn(3, 1, num_heads, length, head_dim, generator=generator)  # 3 x (1, H, L, Dh)
        calls[length] = [_method_call(method, q, k, v, window) for method in METHODS]
    # Every timing first: the profiler leaves threads behind for a moment that would slow the next timing.
    seconds = {length: best_seconds(methods, repeats) for length, methods in calls.items()}
    return [
        ComplexityRow(method, length, best, peak_allocated_bytes(call), True)
        for length, methods in calls.items()
        for method, call, best in zip(METHODS, methods, seconds[length], strict=True)
    ]


def extrapolate(rows: Sequence[ComplexityRow], lengths: Sequence[int]) -> list[ComplexityRow]:
    """Estimates for lengths past the measured ones, marked ``measured=False``.

    From each method's longest measured point: time scaled like L² (full; sdpa too, it still
    computes every score) or like L (windowed, fixed w); memory scaled like L² (full: the
    score tensors dominate) or like L (windowed: H·L·w scores; sdpa: its output and tiles).
    """
    estimates = []
    for method in METHODS:
        measured = [row for row in rows if row.method == method and row.measured]
        if not measured:
            continue
        last = max(measured, key=lambda row: row.length)
        time_power = 1 if method == "windowed" else 2
        memory_power = 2 if method == "full" else 1
        for length in lengths:
            if length <= last.length:
                continue
            growth = length / last.length
            estimates.append(
                ComplexityRow(
                    method=method,
                    length=length,
                    seconds=last.seconds * growth**time_power,
                    peak_bytes=int(last.peak_bytes * growth**memory_power),
                    measured=False,
                )
            )
    return estimates
