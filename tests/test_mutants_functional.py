"""The attention core at the cases mutation testing (scripts/mutation.sh) found no test for.

Expected weights are worked out here in float64 from the formula softmax(q kᵀ / √d + mask), row by row.
"""

from __future__ import annotations

import math

import torch

from mha.functional import apply_mask, scaled_dot_product_attention


def _softmax_rows(scores: list[list[float]]) -> torch.Tensor:
    """exp(s - max) / Σ exp(s - max) per row, in float64; a row with nothing to attend gives zeros."""
    rows = []
    for row in scores:
        finite = [s for s in row if s != -math.inf]
        if not finite:
            rows.append([0.0] * len(row))
            continue
        top = max(finite)
        exps = [0.0 if s == -math.inf else math.exp(s - top) for s in row]
        rows.append([e / sum(exps) for e in exps])
    return torch.tensor(rows, dtype=torch.float64)


def test_a_float_mask_of_another_dtype_keeps_the_scores_dtype():
    """An additive float64 mask on float32 scores gives float32 masked scores (the layer's dtype, not the mask's)."""
    scores = torch.zeros(1, 1, 2, 2, dtype=torch.float32)
    mask = torch.tensor([[0.0, -1.0], [-2.0, 0.0]], dtype=torch.float64)
    masked = apply_mask(scores, mask)
    assert masked.dtype == torch.float32
    assert masked.flatten().tolist() == [0.0, -1.0, -2.0, 0.0]


def test_a_row_with_nothing_to_attend_in_one_head_only_gets_zeros_in_that_head():
    """A per-head mask (1, H, L, L) that leaves head 0's first query nothing: that row is zeros (no NaN), while
    head 1's same row, which may attend, is the softmax of its scores. Checked on the no-autograd path too."""
    torch.manual_seed(0)
    heads, length, d = 2, 3, 4
    q, k, v = (torch.randn(1, heads, length, d) for _ in range(3))
    mask = torch.ones(1, heads, length, length, dtype=torch.bool)
    mask[0, 0, 0] = False  # head 0, query 0: every key blocked
    mask[0, 1, 2, 0] = False  # head 1, query 2: key 0 blocked
    scores = (q.double() @ k.double().transpose(-2, -1) / math.sqrt(d))[0]  # (H, L, L)
    for grad in (False, True):
        with torch.set_grad_enabled(grad):
            out, weights = scaled_dot_product_attention(q.requires_grad_(grad), k, v, mask)
        assert not torch.isnan(weights).any()
        for head in range(heads):
            rows = [
                [float(scores[head, i, j]) if mask[0, head, i, j] else -math.inf for j in range(length)]
                for i in range(length)
            ]
            expected = _softmax_rows(rows)
            torch.testing.assert_close(weights[0, head].double().detach(), expected, rtol=1e-5, atol=1e-6)
            torch.testing.assert_close(
                out[0, head].double().detach(), expected @ v[0, head].double(), rtol=1e-5, atol=1e-6
            )
        assert float(out[0, 0, 0].detach().abs().max()) == 0.0  # the empty row's context is zero
