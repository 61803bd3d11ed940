"""The attention core: scaled dot-product attention, with no parameters of its own.

Shape legend (used in every comment of this package):
    B   batch size
    H   number of heads
    Lq  query length,  Lk  key/value length
    Dh  size of one head, d_k = d_model / H

Mask convention, everywhere in this package:
    * a bool mask broadcastable to (B, H, Lq, Lk), ``True`` = may attend
      (the first tutorial's ``masked_fill(mask == 0, -inf)`` blocks the zeros; the same
      meaning as a bool ``attn_mask`` of ``torch.nn.functional.scaled_dot_product_attention``;
      the second tutorial's ``triu(...).bool()`` mask, like ``nn.MultiheadAttention``'s, means the opposite);
    * a float mask is added to the scaled scores (``-inf`` blocks).
A query row with no key it may attend to gets all-zero weights and a zero context.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = [
    "apply_mask",
    "attention_stages",
    "default_scale",
    "masked_softmax",
    "scaled_dot_product_attention",
]


def default_scale(head_dim: int) -> float:
    """The tutorials' ``1 / sqrt(d_k)``."""
    return 1.0 / math.sqrt(head_dim)


def apply_mask(scores: Tensor, mask: Tensor | None) -> Tensor:
    """Apply a mask to scaled scores: block where a bool mask is False, add a float mask.

    Args:
        scores: scaled scores, shape (..., Lq, Lk).
        mask: ``None``, a bool keep-mask (True = may attend) or an additive float mask,
            broadcastable to ``scores``.

    Returns:
        A new tensor of the same shape (``scores`` itself when ``mask`` is ``None``);
        blocked cells hold ``-inf``.
    """
    if mask is None:
        return scores
    if mask.dtype == torch.bool:
        return scores.masked_fill(~mask, float("-inf"))
    return scores + mask.to(scores.dtype)


def masked_softmax(masked_scores: Tensor) -> Tensor:
    """Softmax over the last dim; a row that is entirely ``-inf`` gives zeros, not NaN.

    Shape: (..., Lq, Lk) -> (..., Lq, Lk).
    """
    empty_rows = masked_scores.amax(dim=-1, keepdim=True) == float("-inf")  # (..., Lq, 1): nothing to attend
    if not empty_rows.any():
        return torch.softmax(masked_scores, dim=-1)
    # The softmax of an all -inf row is 0/0 = NaN. Give those rows finite scores first, so that
    # neither the softmax nor its backward (which reads the softmax's output) sees a NaN; then zero them.
    safe_scores = masked_scores.masked_fill(empty_rows, 0.0)
    return torch.softmax(safe_scores, dim=-1).masked_fill(empty_rows, 0.0)


def attention_stages(
    q_heads: Tensor, k_heads: Tensor, v_heads: Tensor, mask: Tensor | None = None, scale: float | None = None
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """Step 2 one stage at a time, every stage kept: the scores raw, scaled and masked, the weights, the context.

    The numbers of :func:`scaled_dot_product_attention` (which scales q instead of the scores and keeps only the
    weights), stage by stage: what the page shows and what a decoding step records.

    Args:
        q_heads: queries, shape (..., Lq, Dh), e.g. (B, H, Lq, Dh).
        k_heads: keys, shape (..., Lk, Dh).
        v_heads: values, shape (..., Lk, Dv).
        mask: ``None``, a bool keep-mask (True = may attend) or an additive float mask,
            broadcastable to (..., Lq, Lk).
        scale: multiplier of the scores; default ``1 / sqrt(Dh)``.

    Shape:
        raw, scaled and masked scores and weights (..., Lq, Lk); context (..., Lq, Dv).

    Returns:
        ``(raw_scores, scaled_scores, masked_scores, weights, context)``; a fully masked query row has zero weights
        and a zero context.
    """
    if scale is None:
        scale = default_scale(q_heads.size(-1))
    raw_scores = torch.matmul(q_heads, k_heads.transpose(-2, -1))  # (B,H,Lq,Dh) @ (B,H,Dh,Lk) -> (B,H,Lq,Lk)
    scaled_scores = raw_scores * scale
    masked_scores = apply_mask(scaled_scores, mask)
    weights = masked_softmax(masked_scores)  # (B, H, Lq, Lk)
    context = torch.matmul(weights, v_heads)  # (B, H, Lq, Lk) @ (B, H, Lk, Dh) -> (B, H, Lq, Dh)
    return raw_scores, scaled_scores, masked_scores, weights, context


def _softmax_in_place(scores: Tensor, mask: Tensor | None) -> Tensor:
    """``masked_softmax(apply_mask(scores, mask))`` written into ``scores`` itself (no autograd only).

    One (..., Lq, Lk) buffer instead of three: at L = 2048 each fresh one costs as much
    as the softmax (the memory is new to the process and faulted in page by page).
    """
    if mask is not None and mask.dtype == torch.bool:
        scores.masked_fill_(~mask, float("-inf"))
    elif mask is not None:
        scores.add_(mask.to(scores.dtype))
    empty_rows = None if mask is None else scores.amax(dim=-1, keepdim=True) == float("-inf")  # (..., Lq, 1)
    weights = torch.softmax(scores, dim=-1, out=scores)
    if empty_rows is not None and empty_rows.any():
        weights.masked_fill_(empty_rows, 0.0)  # their softmax was 0/0 = NaN
    return weights


def scaled_dot_product_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    scale: float | None = None,
) -> tuple[Tensor, Tensor]:
    """softmax(Q Kᵀ · scale + mask) V, returning the weights too.

    Args:
        q: queries, shape (..., Lq, Dh), e.g. (B, H, Lq, Dh).
        k: keys, shape (..., Lk, Dh).
        v: values, shape (..., Lk, Dv).
        mask: ``None``, a bool keep-mask (True = may attend) or an additive float mask,
            broadcastable to (..., Lq, Lk).
        scale: multiplier of the scores; default ``1 / sqrt(Dh)``.

    Shape:
        out (..., Lq, Dv), weights (..., Lq, Lk).

    Returns:
        ``(out, weights)``; a fully masked query row has zero weights and a zero output.
    """
    if scale is None:
        scale = default_scale(q.size(-1))
    # Scale q (Lq x Dh numbers) rather than the scores (Lq x Lk), as nn.MultiheadAttention does.
    scores = torch.matmul(q * scale, k.transpose(-2, -1))  # (..., Lq, Dh) @ (..., Dh, Lk) -> (..., Lq, Lk)
    # A graph to keep (autograd, or a trace such as torch.onnx.export's, which cannot translate softmax(out=...)).
    needs_graph = (torch.is_grad_enabled() and scores.requires_grad) or torch.jit.is_tracing()
    if needs_graph or (mask is not None and torch.broadcast_shapes(scores.shape, mask.shape) != scores.shape):
        weights = torch.softmax(scores, dim=-1) if mask is None else masked_softmax(apply_mask(scores, mask))
    else:  # no autograd graph to keep: mask and softmax in the scores' own buffer
        weights = _softmax_in_place(scores, mask)
    out = torch.matmul(weights, v)  # (..., Lq, Lk) @ (..., Lk, Dv) -> (..., Lq, Dv)
    return out, weights
