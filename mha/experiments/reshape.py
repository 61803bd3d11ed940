"""The classic bug: splitting heads with ``view`` alone, without ``transpose``.

``q.view(B, L, H, Dh).transpose(1, 2)`` gives head h the h-th slice of every token.
``q.view(B, H, L, Dh)`` has the same shape but reads the memory in a different order:
head 0 gets the first L·Dh numbers, i.e. whole tokens 0, 1, ... cut into pieces. Nothing
crashes; the numbers are wrong. This module implements the buggy variant on purpose, with
the model's own W_q, W_k, W_v, W_o and :func:`mha.functional.scaled_dot_product_attention`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from mha.functional import scaled_dot_product_attention
from mha.module import MultiHeadAttention
from mha.reference import TorchCheck, compare_with_torch

__all__ = ["ReshapeComparison", "compare_reshapes", "forward_view_only", "head_sources"]


def forward_view_only(model: MultiHeadAttention, x: Tensor) -> tuple[Tensor, Tensor]:
    """Self-attention with the bug: heads split by ``view(B, H, L, Dh)`` and merged by ``view(B, L, D)``.

    Shape:
        x (B, L, D) -> output (B, L, D), weights (B, H, L, L).
    """
    batch, length, d_model = x.shape
    heads, d_k = model.num_heads, model.d_k
    q, k, v = model.W_q(x), model.W_k(x), model.W_v(x)  # (B, L, D) each
    # The bug: the right shape, the wrong memory order (no transpose).
    q_heads = q.view(batch, heads, length, d_k)  # (B, H, L, Dh)
    k_heads = k.view(batch, heads, length, d_k)  # (B, H, L, Dh)
    v_heads = v.view(batch, heads, length, d_k)  # (B, H, L, Dh)
    context, weights = scaled_dot_product_attention(q_heads, k_heads, v_heads)  # (B, H, L, Dh), (B, H, L, L)
    concat = context.reshape(batch, length, d_model)  # (B, H, L, Dh) -> (B, L, D), again without transpose
    return model.W_o(concat), weights


def head_sources(length: int, num_heads: int, transpose: bool) -> Tensor:
    """Where row i of head h comes from: ``(token, slice)`` of the (L, D) projection.

    With ``transpose`` (correct) row i of head h is token i, slice h. Without it the
    flat index n = h·L + i of the (H, L) rows maps to token n // H, slice n % H.

    Shape:
        (H, L, 2), integers.
    """
    head = torch.arange(num_heads, device="cpu").view(-1, 1).expand(num_heads, length)  # (H, L)
    row = torch.arange(length, device="cpu").view(1, -1).expand(num_heads, length)  # (H, L)
    if transpose:
        return torch.stack([row, head], dim=-1)  # (H, L, 2)
    flat = head * length + row  # (H, L)
    return torch.stack([flat // num_heads, flat % num_heads], dim=-1)  # (H, L, 2)


@dataclass(frozen=True)
class ReshapeComparison:
    """The correct and the view-only split side by side, each checked against nn.MultiheadAttention."""

    correct_weights: Tensor  # (H, L, L)
    wrong_weights: Tensor  # (H, L, L)
    correct_check: TorchCheck
    wrong_check: TorchCheck


def compare_reshapes(model: MultiHeadAttention, x: Tensor) -> ReshapeComparison:
    """Run both splits on ``x`` (1, L, D) and compare each with ``nn.MultiheadAttention`` (same weights)."""
    with torch.inference_mode():
        correct_out, correct_weights = model(x, x, x)  # (1, L, D), (1, H, L, L)
        wrong_out, wrong_weights = forward_view_only(model, x)  # (1, L, D), (1, H, L, L)
    return ReshapeComparison(
        correct_weights=correct_weights[0],
        wrong_weights=wrong_weights[0],
        correct_check=compare_with_torch(model, x, x, x, None, correct_out, correct_weights),
        wrong_check=compare_with_torch(model, x, x, x, None, wrong_out, wrong_weights),
    )
