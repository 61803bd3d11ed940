"""The live check: the same weights in ``torch.nn.MultiheadAttention``, compared number by number."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from mha.masks import to_torch_mha_mask
from mha.module import MultiHeadAttention

__all__ = ["BatchOrderCheck", "TorchCheck", "batch_order_check", "compare_with_torch", "to_torch_mha", "torch_check"]

# float32 sums of up to 1024 products of O(1) numbers agree to ~1e-6; 1e-4 leaves room, still catches any bug.
TOLERANCE = {torch.float32: 1e-4, torch.float64: 1e-10}


def to_torch_mha(model: MultiHeadAttention, batch_first: bool = True) -> nn.MultiheadAttention:
    """An ``nn.MultiheadAttention`` holding copies of ``model``'s weights.

    ``in_proj_weight`` packs W_q, W_k, W_v as rows [0:D], [D:2D], [2D:3D]. With ``batch_first``
    it takes [B, L, D] like ours; without it, its default order [L, B, D].
    """
    d_model = model.d_model
    has_bias = model.W_q.bias is not None
    weight = model.W_q.weight
    with torch.device("meta"):  # no random init: every parameter is overwritten below
        torch_mha = nn.MultiheadAttention(
            d_model, model.num_heads, bias=has_bias, batch_first=batch_first, dtype=weight.dtype
        )
    torch_mha = torch_mha.to_empty(device=weight.device)
    with torch.no_grad():
        for index, linear in enumerate((model.W_q, model.W_k, model.W_v)):
            rows = slice(index * d_model, (index + 1) * d_model)  # [0:D], [D:2D], [2D:3D]
            torch_mha.in_proj_weight[rows].copy_(linear.weight)  # (D, D) into (3D, D)
            if has_bias:
                torch_mha.in_proj_bias[rows].copy_(linear.bias)  # (D,) into (3D,)
        torch_mha.out_proj.weight.copy_(model.W_o.weight)
        if has_bias:
            torch_mha.out_proj.bias.copy_(model.W_o.bias)
    return torch_mha


@dataclass(frozen=True)
class TorchCheck:
    """How far our output and per-head weights are from ``nn.MultiheadAttention``'s."""

    max_abs_output: float
    max_abs_weights: float
    tolerance: float
    rows_compared: int
    rows_total: int

    @property
    def passed(self) -> bool:
        """Both differences within the tolerance."""
        return self.max_abs_output <= self.tolerance and self.max_abs_weights <= self.tolerance


def compare_with_torch(
    model: MultiHeadAttention,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None,
    output: Tensor,
    weights: Tensor,
    torch_mha: nn.MultiheadAttention | None = None,
) -> TorchCheck:
    """Run ``nn.MultiheadAttention`` with copied weights and compare with our ``(output, weights)``.

    Our bool keep-mask (True = may attend) is inverted for it: its bool ``attn_mask``
    means True = NOT allowed. Query rows with no allowed key are left out of the
    comparison: ours gives zeros there by design, PyTorch gives NaN. ``torch_mha``: the
    batch-first copy of ``model`` from :func:`to_torch_mha` (made here when ``None``).
    """
    batch, length_q, _ = query.shape
    length_k = key.size(1)
    torch_mask = None
    keep_rows = torch.ones(batch, length_q, dtype=torch.bool, device=query.device)  # (B, Lq)
    if mask is not None:
        full = (batch, model.num_heads, length_q, length_k)
        if mask.dtype == torch.bool:
            torch_mask = to_torch_mha_mask(mask, *full)  # (B*H, Lq, Lk), inverted: True = blocked
            allowed = mask.expand(full)  # (B, H, Lq, Lk)
        else:
            torch_mask = mask.expand(full).reshape(-1, length_q, length_k)  # (B*H, Lq, Lk), additive as ours
            allowed = ~torch.isneginf(mask.expand(full))  # (B, H, Lq, Lk)
        keep_rows = allowed.any(dim=-1).all(dim=1)  # (B, Lq): rows with an allowed key in every head
    with torch.inference_mode():
        torch_mha = to_torch_mha(model) if torch_mha is None else torch_mha
        torch_out, torch_weights = torch_mha(
            query, key, value, attn_mask=torch_mask, need_weights=True, average_attn_weights=False
        )  # (B, Lq, D), (B, H, Lq, Lk)
    return torch_check(output, weights, torch_out, torch_weights, keep_rows)


def torch_check(
    output: Tensor, weights: Tensor, torch_out: Tensor, torch_weights: Tensor, keep_rows: Tensor
) -> TorchCheck:
    """The largest differences of ours from PyTorch's on the query rows ``keep_rows`` (B, Lq) compares.

    Shape: output and torch_out (B, Lq, D); weights and torch_weights (B, H, Lq, Lk).
    """
    out_diff = (output - torch_out)[keep_rows]  # (rows, D)
    weight_diff = (weights - torch_weights).transpose(1, 2)[keep_rows]  # (rows, H, Lk)
    return TorchCheck(
        max_abs_output=float(out_diff.abs().max()) if out_diff.numel() else 0.0,
        max_abs_weights=float(weight_diff.abs().max()) if weight_diff.numel() else 0.0,
        tolerance=TOLERANCE.get(output.dtype, 1e-2),
        rows_compared=int(keep_rows.sum()),
        rows_total=keep_rows.numel(),
    )


@dataclass(frozen=True)
class BatchOrderCheck:
    """``nn.MultiheadAttention``'s default order [L, B, E] given our batch-first input, and the two fixes.

    A (1, L, D) input read as [L, B, E] is one position in a batch of L sentences: no error, an
    output of the same shape, but every token attends only to itself (weights (L, H, 1, 1), all 1).
    """

    input_shape: tuple[int, ...]  # (1, L, D)
    wrong_output_shape: tuple[int, ...]  # (1, L, D): the same shape as ours
    wrong_weights_shape: tuple[int, ...]  # (L, H, 1, 1)
    wrong_gap: float  # max |its output - ours|
    transposed_gap: float  # with x.transpose(0, 1) in and the output transposed back
    batch_first_gap: float  # with batch_first=True


def batch_order_check(
    model: MultiHeadAttention, x: Tensor, torch_mha: nn.MultiheadAttention | None = None
) -> BatchOrderCheck:
    """Feed our [B, L, D] input to ``nn.MultiheadAttention`` in its default order, then the two right ways.

    Args:
        model: our layer (its weights are copied).
        x: self-attention input, (B, L, D); no mask.
        torch_mha: the batch-first copy of ``model`` from :func:`to_torch_mha` (made here when ``None``).
            Its ``batch_first`` flag is off for the default-order calls and on again after them.
    """
    torch_mha = to_torch_mha(model) if torch_mha is None else torch_mha
    with torch.inference_mode():
        ours, _ = model(x, x, x)  # (B, L, D)
        torch_mha.batch_first = False  # the default: [L, B, E] (forward reads the flag on every call)
        try:
            wrong, wrong_weights = torch_mha(
                x, x, x, need_weights=True, average_attn_weights=False
            )  # read as (L'=B, N=L, E): (B, L, D), (L, H, B, B)
            moved = x.transpose(0, 1)  # (L, B, D)
            transposed, _ = torch_mha(moved, moved, moved, need_weights=False)  # (L, B, D)
        finally:
            torch_mha.batch_first = True
        batch_first, _ = torch_mha(x, x, x, need_weights=False)  # (B, L, D)
    return BatchOrderCheck(
        input_shape=tuple(x.shape),
        wrong_output_shape=tuple(wrong.shape),
        wrong_weights_shape=tuple(wrong_weights.shape),
        wrong_gap=float((wrong - ours).abs().max()),
        transposed_gap=float((transposed.transpose(0, 1) - ours).abs().max()),
        batch_first_gap=float((batch_first - ours).abs().max()),
    )
