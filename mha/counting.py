"""What each pipeline step costs: parameters, FLOPs and the bytes of the score tensor; what a KV cache keeps.

FLOPs count the matrix multiplications (one multiply-add = 2 FLOPs), the part that
dominates; the softmax and the bias additions are a few operations per element
more and are left out. All counts are exact integers from the sizes alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

__all__ = [
    "KVCacheSize",
    "StepCost",
    "count_parameters",
    "kv_cache_numbers",
    "layer_parameters",
    "projection_parameters",
    "step_costs",
    "total_parameters",
]


@dataclass(frozen=True)
class StepCost:
    """The cost of one pipeline step (``step`` is 1..4; the page names it in the reader's language)."""

    step: int
    params: int
    flops: int
    score_bytes: int = 0


def projection_parameters(d_model: int, bias: bool = True, out_features: int | None = None) -> int:
    """Parameters of one ``nn.Linear(d_model, out)``: d·out weights + out biases (out = d_model by default;
    W_k and W_v of grouped-query attention have out = h_kv·d_k)."""
    out = d_model if out_features is None else out_features
    return d_model * out + (out if bias else 0)


def layer_parameters(d_model: int, kv_width: int | None = None, bias: bool = True) -> int:
    """W_q, W_k, W_v and W_o: 2·d² + 2·d·w + (2·d + 2·w with biases), w = h_kv·d_k the width of K and V
    (w = d: 4·d² + 4·d, the tutorials' layer)."""
    width = d_model if kv_width is None else kv_width
    return 2 * projection_parameters(d_model, bias) + 2 * projection_parameters(d_model, bias, width)


def kv_cache_numbers(layers: int, kv_heads: int, d_k: int) -> int:
    """Numbers a KV cache keeps per token: K and V, in every layer, for every key/value head: 2·layers·h_kv·d_k
    (the one formula of a cache's size: :class:`KVCacheSize` and :class:`~mha.kv_cache.KVCache` read it)."""
    return 2 * layers * kv_heads * d_k


@dataclass(frozen=True)
class KVCacheSize:
    """The sizes of a model's key/value cache (``layers`` of ``kv_heads`` heads of ``d_k`` numbers, stored as
    ``dtype``) and what it keeps per token."""

    layers: int
    kv_heads: int
    d_k: int
    dtype: torch.dtype = torch.float32

    @property
    def numbers_per_token(self) -> int:
        """2·layers·h_kv·d_k (:func:`kv_cache_numbers`)."""
        return kv_cache_numbers(self.layers, self.kv_heads, self.d_k)

    @property
    def bytes_per_token(self) -> int:
        """The numbers per token times the dtype's bytes per number."""
        return self.numbers_per_token * self.dtype.itemsize

    def bytes_for(self, tokens: int) -> int:
        """The cache's bytes holding ``tokens`` positions."""
        return tokens * self.bytes_per_token


def total_parameters(d_model: int, bias: bool = True) -> int:
    """W_q, W_k, W_v and W_o of the tutorials' layer: 4·d² + 4·d with biases -- independent of the head count."""
    return layer_parameters(d_model, bias=bias)


def count_parameters(module: nn.Module) -> int:
    """Parameters actually held by a module (to check the formulas against)."""
    return sum(p.numel() for p in module.parameters())


def step_costs(
    d_model: int,
    num_heads: int,
    length_q: int,
    length_k: int | None = None,
    batch: int = 1,
    bias: bool = True,
    itemsize: int = 4,
    num_kv_heads: int | None = None,
) -> list[StepCost]:
    """Parameters, matmul FLOPs and score-tensor bytes of the four steps.

    Args:
        d_model, num_heads: the layer's sizes (D, H).
        length_q, length_k: query and key lengths (Lk defaults to Lq).
        batch: B.
        bias: whether the projections have biases.
        itemsize: bytes per element of the score tensor (4 for float32).
        num_kv_heads: key/value heads (default H); fewer make W_k and W_v, and their FLOPs, smaller.
            Step 2's FLOPs do not change: every query head still scores every key (RoPE's rotation, a few
            operations per number, is left out like the softmax).
    """
    length_k = length_q if length_k is None else length_k
    kv_width = d_model if num_kv_heads is None else num_kv_heads * (d_model // num_heads)
    one = projection_parameters(d_model, bias)
    kv_one = projection_parameters(d_model, bias, kv_width)
    project_flops = 2 * batch * d_model * (d_model * length_q + 2 * kv_width * length_k)  # Q from Lq rows, K, V Lk
    attend_flops = 2 * 2 * batch * length_q * length_k * d_model  # QKᵀ and weights·V, summed over heads (H·Dh = D)
    return [
        StepCost(1, one + 2 * kv_one, project_flops),
        StepCost(2, 0, attend_flops, batch * num_heads * length_q * length_k * itemsize),
        StepCost(3, 0, 0),
        StepCost(4, one, 2 * batch * length_q * d_model * d_model),
    ]
