"""What the page shows of RoPE: one head's q and k pairs before and after their turn, the angle of every feature pair,
and the offset property measured on the learner's own tokens.

A score with RoPE is ``rotate(q, m) · rotate(k, n)``: turning both vectors of a feature pair by m·θ and n·θ leaves
their dot product depending on the two vectors and (n − m)·θ, not on m and n themselves, so the same two tokens
score the same at positions (5, 2) and (15, 12). Added sinusoids (the 2017 paper's) give no such guarantee:
``(x_i + PE_m) W_q · (x_j + PE_n) W_k`` has terms in m and n alone. Both are computed here with the layer's own
weights, head by head.

Shape legend: D = d_model, Dh head size, P = Dh / 2 feature pairs, L tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from mha.module import MultiHeadAttention
from mha.rope import inverse_frequencies, rotary_cos_sin, rotate
from mha.tokens import positional_encoding

__all__ = ["OFFSET_PAIRS", "OffsetScore", "angles_per_pair", "offset_scores", "turned_pairs"]

#: (query position m, key position n): the key three places back at three places in the text, then other offsets.
OFFSET_PAIRS = ((5, 2), (15, 12), (43, 40), (8, 2), (2, 5))


@dataclass(frozen=True)
class OffsetScore:
    """One query token at ``query_position`` and one key token at ``key_position``: their scaled score in one head
    with RoPE, and with the sinusoids added to the same token vectors instead (no rotation)."""

    query_position: int
    key_position: int
    rope: float
    sinusoidal: float

    @property
    def offset(self) -> int:
        """n − m: how far the key is from the query."""
        return self.key_position - self.query_position


def _head_vectors(model: MultiHeadAttention, x_query: Tensor, x_key: Tensor, head: int) -> tuple[Tensor, Tensor]:
    """q of query head ``head`` for the rows of ``x_query``, k of the K/V head it reads for ``x_key``.

    Shape: x_query (Lq, D), x_key (Lk, D) -> q (Lq, Dh), k (Lk, Dh).
    """
    d_k, kv_head = model.d_k, head // model.kv_groups
    q = _linear64(model.W_q, x_query)[:, head * d_k : (head + 1) * d_k]  # (Lq, D) -> (Lq, Dh): head h's features
    k = _linear64(model.W_k, x_key)[:, kv_head * d_k : (kv_head + 1) * d_k]  # (Lk, Hkv·Dh) -> (Lk, Dh)
    return q, k


def _linear64(linear: torch.nn.Linear, x: Tensor) -> Tensor:
    """``linear(x)`` in float64 on the CPU (the page's layer may be float32, on a device without float64, such as
    Apple's mps): x (N, in) -> (N, out) on the CPU."""
    bias = None if linear.bias is None else linear.bias.cpu().double()
    return torch.nn.functional.linear(x.cpu().double(), linear.weight.cpu().double(), bias)


def offset_scores(
    model: MultiHeadAttention,
    query_vector: Tensor,
    key_vector: Tensor,
    head: int = 0,
    pairs: tuple[tuple[int, int], ...] = OFFSET_PAIRS,
    base: float | None = None,
) -> tuple[OffsetScore, ...]:
    """The score of one query token against one key token placed at each (m, n) of ``pairs``, in head ``head``.

    Computed in float64 on the CPU whatever the layer's device: the vectors and weights are copied there (a lesson's
    few numbers, and Apple's mps has no float64).

    Args:
        model: the layer (its W_q, W_k; RoPE with its ``rope_base``, else ``base``).
        query_vector, key_vector: the two tokens' vectors (D,) without any position in them.
        base: RoPE's base where the layer has none (a page with sinusoidal positions shows what RoPE would do).
    """
    rope_base = model.rope_base or base or 10000.0
    with torch.inference_mode():
        query_vector, key_vector = query_vector.cpu().double(), key_vector.cpu().double()  # (D,) each, on the CPU
        q, k = _head_vectors(model, query_vector[None], key_vector[None], head)  # (1, Dh) each
        scale = 1.0 / math.sqrt(model.d_k)
        results = []
        for m, n in pairs:
            positions = torch.tensor([m, n], device=query_vector.device)  # (2,)
            cos, sin = rotary_cos_sin(positions, model.d_k, rope_base, dtype=torch.float64)  # (2, Dh)
            q_m, k_n = rotate(q, cos[:1], sin[:1]), rotate(k, cos[1:], sin[1:])  # (1, Dh) each
            pe = positional_encoding(max(m, n) + 1, model.d_model, torch.float64, query_vector.device)  # (max+1, D)
            q_pe, k_pe = _head_vectors(model, (query_vector + pe[m])[None], (key_vector + pe[n])[None], head)
            results.append(OffsetScore(m, n, float(q_m @ k_n.T) * scale, float(q_pe @ k_pe.T) * scale))
    return tuple(results)


def angles_per_pair(head_dim: int, base: float) -> Tensor:
    """θ_i, the angle (radians) feature pair i turns by per position: base^(-2i / Dh), shape (P,), float64."""
    return inverse_frequencies(head_dim, base)


def turned_pairs(before: Tensor, after: Tensor, pair: int) -> tuple[Tensor, Tensor]:
    """Feature pair ``pair`` (features i and i + Dh/2) of every token, before and after the turn.

    Shape: before, after (L, Dh) -> (L, 2) each.
    """
    half = before.size(-1) // 2
    columns = [pair, pair + half]
    return before[:, columns], after[:, columns]  # (L, 2) each
