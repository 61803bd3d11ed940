"""MultiHeadAttention from scratch: W_q, W_k, W_v, W_o and the four pipeline steps.

Shape legend: B batch, H heads, Lq / Lk query / key length, D = d_model, Dh = D / H.

The layer reads like the tutorials: Q, K and V come from three ``nn.Linear`` layers, as
the "multi-head attention from scratch" tutorials write it. One matmul over the stacked
``W_q, W_k, W_v`` (``nn.MultiheadAttention``'s ``in_proj_weight``) is no faster here: the
stacked copy costs more than the two calls it saves (docs/PERFORMANCE.md, "Engine"). The
attention core scales q (Lq x Dh numbers) instead of the scores (Lq x Lk), as PyTorch does.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from mha.functional import apply_mask, default_scale, masked_softmax, scaled_dot_product_attention
from mha.trace import AttendStep, AttentionTrace, ConcatStep, OutputStep, ProjectStep

__all__ = ["MultiHeadAttention", "check_sizes"]


def check_sizes(d_model: int, num_heads: int) -> None:
    """Raise ``ValueError`` naming both numbers unless ``num_heads`` splits ``d_model`` evenly."""
    if isinstance(d_model, bool) or not isinstance(d_model, int) or d_model <= 0:
        raise ValueError(f"d_model must be a positive integer, got d_model={d_model!r} (num_heads={num_heads!r})")
    if isinstance(num_heads, bool) or not isinstance(num_heads, int) or num_heads <= 0:
        raise ValueError(f"num_heads must be a positive integer, got num_heads={num_heads!r} (d_model={d_model!r})")
    if d_model % num_heads != 0:
        raise ValueError(
            f"d_model={d_model} is not divisible by num_heads={num_heads}: "
            f"each head gets d_model / num_heads = {d_model / num_heads:g} features; "
            f"choose num_heads that divides {d_model}"
        )


class MultiHeadAttention(nn.Module):
    """Multi-head attention, ``MultiHead(Q, K, V) = Concat(head_1..head_h) W_o``.

    Args:
        d_model: model width D (the size of each token vector).
        num_heads: number of heads H; must divide ``d_model``. Each head has d_k = D / H.
        bias: whether the four projections have biases.

    Shape:
        query (B, Lq, D), key and value (B, Lk, D) -> output (B, Lq, D),
        attn_weights (B, H, Lq, Lk) -- per head, never averaged.

    Parameters: ``W_q, W_k, W_v, W_o`` are each ``nn.Linear(D, D)``: 4·D² + 4·D in all
    with biases, whatever the number of heads.
    """

    def __init__(self, d_model: int, num_heads: int, bias: bool = True) -> None:
        super().__init__()
        check_sizes(d_model, num_heads)
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)

    # ---------------------------------------------------------------- the four steps
    def project_and_split(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, ...]:
        """Step 1: Q = x W_qᵀ + b_q (same for K, V), then split D into H heads of Dh.

        Returns ``(q, k, v, q_heads, k_heads, v_heads)``: the projections (B, L, D)
        and the same numbers viewed per head (B, H, L, Dh).
        """
        q, k, v = self._project_qkv(query, key, value)  # (B, Lq, D), (B, Lk, D), (B, Lk, D)
        return q, k, v, self.split_heads(q), self.split_heads(k), self.split_heads(v)

    def split_heads(self, x: Tensor) -> Tensor:
        """(B, L, D) -> (B, H, L, Dh): ``view`` cuts D into H pieces, ``transpose`` puts heads first."""
        batch, length, _ = x.shape
        return x.view(batch, length, self.num_heads, self.d_k).transpose(1, 2)  # (B, L, H, Dh) -> (B, H, L, Dh)

    def attend(
        self, q_heads: Tensor, k_heads: Tensor, v_heads: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """Step 2: scaled dot-product attention in every head at once.

        Returns ``(context (B, H, Lq, Dh), weights (B, H, Lq, Lk))``.
        """
        return scaled_dot_product_attention(q_heads, k_heads, v_heads, mask=mask, scale=default_scale(self.d_k))

    def concat_heads(self, context: Tensor) -> Tensor:
        """Step 3: (B, H, Lq, Dh) -> (B, Lq, D), the heads side by side."""
        batch, _, length, _ = context.shape
        return context.transpose(1, 2).contiguous().view(batch, length, self.d_model)  # (B, Lq, H, Dh) -> (B, Lq, D)

    def project_out(self, concat: Tensor) -> Tensor:
        """Step 4: output = concat W_oᵀ + b_o, (B, Lq, D) -> (B, Lq, D)."""
        return self.W_o(concat)

    # ---------------------------------------------------------------- forward passes
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Run the four steps; returns ``(output (B, Lq, D), attn_weights (B, H, Lq, Lk))``.

        ``mask``: bool keep-mask (True = may attend) or additive float mask,
        broadcastable to (B, H, Lq, Lk). Pass the same tensor as query, key and value
        for self-attention.
        """
        self._check_inputs(query, key, value)
        # 1) project and split into heads
        _, _, _, q_heads, k_heads, v_heads = self.project_and_split(query, key, value)
        # 2) scaled dot-product attention, per head
        context, weights = self.attend(q_heads, k_heads, v_heads, mask)
        # 3) concatenate the heads
        concat = self.concat_heads(context)
        # 4) project out
        return self.project_out(concat), weights

    def forward_traced(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None) -> AttentionTrace:
        """The same four steps as :meth:`forward`, keeping every intermediate.

        Step 2 is spelled out (raw scores, scaled, masked, softmax) so that each stage
        can be shown; it uses the same helpers as :func:`mha.functional.scaled_dot_product_attention`.
        """
        self._check_inputs(query, key, value)
        # 1) project and split into heads
        q, k, v, q_heads, k_heads, v_heads = self.project_and_split(query, key, value)
        # 2) scaled dot-product attention, per head, one stage at a time
        scale = default_scale(self.d_k)
        raw_scores = torch.matmul(q_heads, k_heads.transpose(-2, -1))  # (B,H,Lq,Dh) @ (B,H,Dh,Lk) -> (B,H,Lq,Lk)
        scaled_scores = raw_scores * scale
        masked_scores = apply_mask(scaled_scores, mask)
        weights = masked_softmax(masked_scores)  # (B, H, Lq, Lk)
        context = torch.matmul(weights, v_heads)  # (B, H, Lq, Lk) @ (B, H, Lk, Dh) -> (B, H, Lq, Dh)
        # 3) concatenate the heads
        concat = self.concat_heads(context)
        # 4) project out
        output = self.project_out(concat)
        return AttentionTrace(
            project=ProjectStep(query, key, value, q, k, v, q_heads, k_heads, v_heads),
            attend=AttendStep(scale, mask, raw_scores, scaled_scores, masked_scores, weights, context),
            concat=ConcatStep(concat),
            out=OutputStep(output),
        )

    # ---------------------------------------------------------------- helpers
    def _project_qkv(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Q = query W_qᵀ + b_q, K = key W_kᵀ + b_k, V = value W_vᵀ + b_v."""
        return self.W_q(query), self.W_k(key), self.W_v(value)  # (B, Lq, D), (B, Lk, D), (B, Lk, D)

    def _check_inputs(self, query: Tensor, key: Tensor, value: Tensor) -> None:
        """Name the offending shape instead of failing deep inside a matmul."""
        for name, t in (("query", query), ("key", key), ("value", value)):
            if t.dim() != 3 or t.size(-1) != self.d_model:
                raise ValueError(f"{name} must have shape [B, L, d_model={self.d_model}], got {list(t.shape)}")
        if key.shape[:2] != value.shape[:2]:
            raise ValueError(f"key and value must have the same [B, Lk], got {list(key.shape)} and {list(value.shape)}")
        if query.size(0) != key.size(0):
            raise ValueError(f"query and key must have the same batch size, got {query.size(0)} and {key.size(0)}")

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, num_heads={self.num_heads}, d_k={self.d_k}"
