"""The tutorials' per-head loop against the fused layer: the same numbers, measured speeds.

Many tutorials build multi-head attention as ``nn.ModuleList([AttentionHead(...) for _ in range(h)])``,
each head with its own small W_q, W_k, W_v of shape (d_k, d_model), run one after another in
a Python loop and concatenated. :func:`loop_from_fused` cuts the fused layer's weights into
exactly those per-head pieces, so both give the same output; only the speed differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from mha.experiments.timing import best_seconds
from mha.functional import scaled_dot_product_attention
from mha.module import MultiHeadAttention
from mha.reference import to_torch_mha
from mha.sources.seeded import build_model

__all__ = ["AttentionHead", "LoopMultiHeadAttention", "TimingRow", "loop_from_fused", "measure_loop_vs_fused"]


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
    """The tutorials' version: a list of heads run in a Python loop, concatenated, then W_o.

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
    """Seconds per forward pass at one sequence length (fastest of the repeats)."""

    length: int
    fused_s: float  # our MultiHeadAttention
    loop_s: float  # the per-head loop
    torch_s: float  # nn.MultiheadAttention, for reference
    max_abs_diff: float  # |loop - fused|, max over the output

    @property
    def ratio(self) -> float:
        """How many times slower the loop is than the fused layer (>1: the loop is slower)."""
        return self.loop_s / self.fused_s


def measure_loop_vs_fused(
    d_model: int, num_heads: int, lengths: Sequence[int], repeats: int = 3, seed: int = 0
) -> list[TimingRow]:
    """Time the fused layer, the per-head loop and nn.MultiheadAttention on self-attention of length L.

    Args:
        d_model, num_heads: the layer's sizes.
        lengths: sequence lengths to try (keep them modest: each costs O(L²·d_model)).
        repeats: timed calls per measurement (the fastest counts), after one warm-up.
        seed: seeds the weights and the input.

    Returns:
        One :class:`TimingRow` per length, measured on this machine's CPU.
    """
    model = build_model(d_model, num_heads, seed)
    loop = loop_from_fused(model)
    torch_mha = to_torch_mha(model).eval()
    generator = torch.Generator().manual_seed(seed)
    rows = []
    for length in lengths:
        x = torch.randn(1, length, d_model, generator=generator)  # (1, L, D)
        with torch.inference_mode():
            diff = float((loop(x, x, x) - model(x, x, x)[0]).abs().max())
        fused_s, loop_s, torch_s = best_seconds(
            [
                lambda x=x: model(x, x, x),
                lambda x=x: loop(x, x, x),
                lambda x=x: torch_mha(x, x, x, need_weights=False),
            ],
            repeats,
        )
        rows.append(TimingRow(length, fused_s, loop_s, torch_s, diff))
    return rows
