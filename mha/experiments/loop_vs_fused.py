"""A loop over heads against the fused layer: the same numbers, measured speeds; and full-width heads.

Multi-head attention is often built as ``nn.ModuleList([AttentionHead(...) for _ in range(h)])``,
each head with its own small W_q, W_k, W_v of shape (d_k, d_model), run one after another in
a Python loop and concatenated. :func:`loop_from_fused` cuts the fused layer's weights into
exactly those per-head pieces, so both give the same output; only the speed differs.

The second tutorial builds ``nn.ModuleList([SelfAttention(embed_size) for _ in range(heads)])``:
every head is *full width*, its W_q, W_k, W_v each (d_model, d_model), and W_o maps the h·d_model
concatenated features back to d_model (:class:`FullWidthLoopAttention`). That is h times the
projection parameters (:func:`full_width_parameters`) and about h times the work: a different
layer, not the same function, so it is timed and counted, not compared number for number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from mha.experiments.timing import GrowthBreak, Steady, Timing, growth_breaks, measure_steady, time_calls
from mha.functional import scaled_dot_product_attention
from mha.module import MultiHeadAttention
from mha.reference import to_torch_mha
from mha.sources.seeded import build_model

__all__ = [
    "FULL_WIDTH_FLOPS_MAX",
    "VARIANTS",
    "AttentionHead",
    "FullWidthLoopAttention",
    "LoopMultiHeadAttention",
    "TimingRow",
    "full_width_flops",
    "full_width_parameters",
    "loop_breaks",
    "loop_from_fused",
    "measure_loop_vs_fused",
    "measure_loop_vs_fused_steady",
]

VARIANTS = ("fused", "loop", "full_width", "torch_mha")
FULL_WIDTH_FLOPS_MAX = 2e9  # a full-width call above this many FLOPs is not timed on a shared server


class AttentionHead(nn.Module):
    """One head on its own: W_q, W_k, W_v are ``nn.Linear(d_model, d_k)``.

    Shape: query (B, Lq, D), key and value (B, Lk, D) -> context (B, Lq, Dh).
    """

    def __init__(self, d_model: int, d_k: int) -> None:
        super().__init__()
        self.W_q = nn.Linear(d_model, d_k)
        self.W_k = nn.Linear(d_model, d_k)
        self.W_v = nn.Linear(d_model, d_k)

    def forward(self, query: Tensor, key: Tensor, value: Tensor) -> Tensor:
        q, k, v = self.W_q(query), self.W_k(key), self.W_v(value)  # (B, Lq, Dh), (B, Lk, Dh), (B, Lk, Dh)
        return scaled_dot_product_attention(q, k, v)[0]  # (B, Lq, Dh)


class LoopMultiHeadAttention(nn.Module):
    """d_k-wide heads in a Python loop, concatenated, then W_o: the fused layer's parameters, cut up.

    Shape: query (B, Lq, D), key and value (B, Lk, D) -> output (B, Lq, D).
    """

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        d_k = d_model // num_heads
        self.heads = nn.ModuleList([AttentionHead(d_model, d_k) for _ in range(num_heads)])
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, query: Tensor, key: Tensor, value: Tensor) -> Tensor:
        contexts = [head(query, key, value) for head in self.heads]  # H x (B, Lq, Dh)
        return self.W_o(torch.cat(contexts, dim=-1))  # (B, Lq, H*Dh) = (B, Lq, D) -> (B, Lq, D)


class FullWidthLoopAttention(nn.Module):
    """The second tutorial's layer: h full-width heads (each an ``AttentionHead(d_model, d_model)``), then
    W_o from h·d_model features back to d_model.

    Shape: query (B, Lq, D), key and value (B, Lk, D) -> output (B, Lq, D).
    """

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.heads = nn.ModuleList([AttentionHead(d_model, d_model) for _ in range(num_heads)])
        self.W_o = nn.Linear(num_heads * d_model, d_model)

    def forward(self, query: Tensor, key: Tensor, value: Tensor) -> Tensor:
        contexts = [head(query, key, value) for head in self.heads]  # H x (B, Lq, D)
        return self.W_o(torch.cat(contexts, dim=-1))  # (B, Lq, H*D) -> (B, Lq, D)


def full_width_parameters(d_model: int, num_heads: int) -> int:
    """Parameters of :class:`FullWidthLoopAttention`: h·3·(d² + d) for the heads + h·d² + d for W_o.

    h = 1 gives the fused layer's 4·d² + 4·d; every further head adds 4·d² + 3·d.
    """
    return num_heads * 3 * (d_model * d_model + d_model) + num_heads * d_model * d_model + d_model


def full_width_flops(d_model: int, num_heads: int, length: int) -> int:
    """Matmul FLOPs of one self-attention call of :class:`FullWidthLoopAttention` (multiply-add = 2)."""
    per_head = 2 * 3 * length * d_model * d_model + 2 * 2 * length * length * d_model  # Q, K, V; QKᵀ and ·V
    return num_heads * per_head + 2 * length * num_heads * d_model * d_model  # + W_o


def _fused_flops(d_model: int, length: int) -> int:
    """Matmul FLOPs of one self-attention call of the fused layer (or its loop: the same work)."""
    return 2 * 4 * length * d_model * d_model + 2 * 2 * length * length * d_model


def _seeded_full_width(d_model: int, num_heads: int, seed: int) -> FullWidthLoopAttention:
    """A :class:`FullWidthLoopAttention` with nn.Linear-like U(±1/√fan_in) weights from a private generator."""
    with torch.device("meta"):
        layer = FullWidthLoopAttention(d_model, num_heads)
    layer = layer.to_empty(device="cpu")
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in layer.modules():
            if isinstance(module, nn.Linear):
                bound = 1.0 / math.sqrt(module.in_features)
                module.weight.uniform_(-bound, bound, generator=generator)
                module.bias.uniform_(-bound, bound, generator=generator)
    return layer.eval().requires_grad_(False)


def loop_from_fused(model: MultiHeadAttention) -> LoopMultiHeadAttention:
    """A :class:`LoopMultiHeadAttention` holding ``model``'s weights: head h gets rows h·d_k..(h+1)·d_k."""
    loop = LoopMultiHeadAttention(model.d_model, model.num_heads)
    d_k = model.d_k
    with torch.no_grad():
        for h, head in enumerate(loop.heads):
            rows = slice(h * d_k, (h + 1) * d_k)
            for name in ("W_q", "W_k", "W_v"):
                fused, piece = getattr(model, name), getattr(head, name)
                piece.weight.copy_(fused.weight[rows])  # (Dh, D)
                piece.bias.copy_(fused.bias[rows])  # (Dh,)
        loop.W_o.load_state_dict(model.W_o.state_dict())
    return loop.to(model.W_o.weight.dtype).eval().requires_grad_(False)


@dataclass(frozen=True)
class TimingRow:
    """Seconds per forward pass at one sequence length: the median of the rounds and their spread."""

    length: int
    fused: Timing  # our MultiHeadAttention
    loop: Timing  # the loop over d_k-wide heads (the same function)
    full_width: Timing | None  # the second tutorial's full-width heads; None when too big to time here
    torch_mha: Timing  # nn.MultiheadAttention, for reference
    max_abs_diff: float  # |loop - fused|, max over the output

    @property
    def ratio(self) -> float:
        """How many times slower the loop is than the fused layer (>1: the loop is slower), by medians."""
        return self.loop.median_s / self.fused.median_s


def _loop_calls(
    d_model: int, num_heads: int, lengths: Sequence[int], seed: int
) -> tuple[dict[int, list], dict[int, float]]:
    """Per length: the calls to time (fused, loop, nn.MultiheadAttention, then the full-width loop where it is
    small enough) and max |loop - fused|."""
    model = build_model(d_model, num_heads, seed)
    loop = loop_from_fused(model)
    full_width = _seeded_full_width(d_model, num_heads, seed)
    torch_mha = to_torch_mha(model).eval()
    generator = torch.Generator().manual_seed(seed)
    calls, diffs = {}, {}
    for length in lengths:
        x = torch.randn(1, length, d_model, generator=generator, device="cpu")  # (1, L, D)
        with torch.inference_mode():
            diffs[length] = float((loop(x, x, x) - model(x, x, x)[0]).abs().max())
        calls[length] = [
            lambda x=x: model(x, x, x),
            lambda x=x: loop(x, x, x),
            lambda x=x: torch_mha(x, x, x, need_weights=False),
        ]
        if full_width_flops(d_model, num_heads, length) <= FULL_WIDTH_FLOPS_MAX:
            calls[length].append(lambda x=x: full_width(x, x, x))
    return calls, diffs


def _timed(calls: dict[int, list], diffs: dict[int, float], repeats: int) -> list[TimingRow]:
    with torch.inference_mode():
        for each in calls.values():  # one pass over everything first: the first length is not timed cold
            for call in each:
                call()
    rows = []
    for length, each in calls.items():
        fused_t, loop_t, torch_t, *wide = time_calls(each, repeats)
        rows.append(TimingRow(length, fused_t, loop_t, wide[0] if wide else None, torch_t, diffs[length]))
    return rows


def measure_loop_vs_fused(
    d_model: int, num_heads: int, lengths: Sequence[int], repeats: int = 5, seed: int = 0
) -> list[TimingRow]:
    """Time the fused layer, the loop, the full-width loop and nn.MultiheadAttention on self-attention of length L.

    Args:
        d_model, num_heads: the layer's sizes.
        lengths: sequence lengths to try (keep them modest: each costs O(L²·d_model)).
        repeats: timed rounds per measurement (see :func:`mha.experiments.timing.time_calls`).
        seed: seeds the weights and the input.

    Returns:
        One :class:`TimingRow` per length, measured on this machine's CPU. The full-width loop is
        timed only where one call stays under :data:`FULL_WIDTH_FLOPS_MAX`.
    """
    return _timed(*_loop_calls(d_model, num_heads, lengths, seed), repeats)


def loop_breaks(rows: Sequence[TimingRow], d_model: int, num_heads: int) -> list[GrowthBreak]:
    """Where a variant's median time grew far faster than its FLOPs as L grew (or fell)."""
    lengths = [row.length for row in rows]
    fused_work = [_fused_flops(d_model, n) for n in lengths]
    breaks = []
    for variant in ("fused", "loop", "torch_mha"):
        seconds = [getattr(row, variant).median_s for row in rows]
        breaks += growth_breaks(variant, lengths, seconds, fused_work)
    wide = [row for row in rows if row.full_width is not None]
    breaks += growth_breaks(
        "full_width",
        [row.length for row in wide],
        [row.full_width.median_s for row in wide],
        [full_width_flops(d_model, num_heads, row.length) for row in wide],
    )
    return breaks


def measure_loop_vs_fused_steady(
    d_model: int, num_heads: int, lengths: Sequence[int], repeats: int = 5, seed: int = 0
) -> Steady[list[TimingRow]]:
    """:func:`measure_loop_vs_fused`, measured again while its times break their growth (:func:`loop_breaks`)."""
    calls, diffs = _loop_calls(d_model, num_heads, lengths, seed)
    return measure_steady(lambda: _timed(calls, diffs, repeats), lambda rows: loop_breaks(rows, d_model, num_heads))
