"""Numerics under stress: overflowing scores, half precision, fully masked rows.

Whatever reaches a chart comes from the trace, so the rule tested here is: no NaN and no Inf
in any trace tensor, except ``masked_scores``, which is ``-inf`` exactly at the blocked cells.
"""

from __future__ import annotations

import math

import pytest
import torch

from mha import scaled_dot_product_attention
from mha.masks import causal_mask, padding_mask, to_additive_mask
from mha.sources.seeded import build_model

D, H, L = 16, 4, 6
FULL_PRECISION = [torch.float32, torch.float64]
HALF_PRECISION = [torch.bfloat16, torch.float16]
# Largest score whose exp() is still finite: anything above it overflows a softmax without max-subtraction.
EXP_LIMIT = {torch.float32: math.log(torch.finfo(torch.float32).max), torch.float64: math.log(torch.finfo().max)}
# Rows summing to 1: a few ulps of the dtype over L = 6 terms.
SUM_TOL = {torch.float32: 1e-6, torch.float64: 1e-12, torch.bfloat16: 2e-2, torch.float16: 2e-3}
# Half precision vs the same weights in float32 (outputs are O(1)): bfloat16 keeps 8 mantissa bits
# (unit roundoff 2^-9 ~ 2e-3), float16 keeps 11 (2^-12 ~ 2.4e-4); ~10x that covers the few roundings in a row.
HALF_TOL = {torch.bfloat16: 2e-2, torch.float16: 3e-3}


def keep_mask(kind: str) -> torch.Tensor | None:
    """Keep-masks over L = 6 tokens; "empty_rows" leaves queries 0 and 3 nothing to attend to."""
    if kind == "none":
        return None
    if kind == "causal":
        return causal_mask(L)
    if kind == "padding":
        return padding_mask(["a", "b", "c", "d", "[PAD]", "[PAD]"])
    keep = causal_mask(L).clone()
    keep[..., [0, 3], :] = False
    return keep


def as_mask(keep: torch.Tensor | None, form: str, dtype: torch.dtype) -> torch.Tensor | None:
    return to_additive_mask(keep, dtype) if keep is not None and form == "additive" else keep


def blocked_cells(keep: torch.Tensor | None, like: torch.Tensor) -> torch.Tensor:
    return torch.zeros_like(like, dtype=torch.bool) if keep is None else ~keep.expand_as(like)


def assert_trace_clean(trace, keep: torch.Tensor | None) -> None:
    """No NaN/Inf anywhere, except -inf in masked_scores (and in an additive mask) exactly where it blocks."""
    blocked = blocked_cells(keep, trace.attend.masked_scores)
    for name, tensor in trace.tensors().items():
        if name == "attend.masked_scores" or (name == "attend.mask" and tensor.is_floating_point()):
            full = tensor.expand_as(blocked)
            assert torch.equal(torch.isneginf(full), blocked), name
            assert torch.isfinite(full[~blocked]).all(), name
        elif tensor.is_floating_point():
            assert torch.isfinite(tensor).all(), name


# ---------------------------------------------------------------- overflowing scores
@pytest.mark.parametrize("dtype", FULL_PRECISION, ids=str)
@pytest.mark.parametrize("scale", [1e3, 1e4])
@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding", "empty_rows"])
@pytest.mark.parametrize("form", ["bool", "additive"])
def test_scores_that_would_overflow_exp_give_finite_normalised_weights(dtype, scale, mask_kind, form):
    model = build_model(D, H, seed=0, dtype=dtype)
    x = scale * torch.randn(2, L, D, dtype=dtype, generator=torch.Generator().manual_seed(1))
    keep = keep_mask(mask_kind)
    mask = as_mask(keep, form, dtype)

    trace = model.forward_traced(x, x, x, mask=mask)
    output, weights = model(x, x, x, mask=mask)

    scaled = trace.attend.scaled_scores
    assert scaled.abs().max() > 100 * EXP_LIMIT[dtype]  # exp() of these overflows: the test really stresses
    assert_trace_clean(trace, keep)
    assert torch.isfinite(output).all() and torch.isfinite(weights).all()
    blocked = blocked_cells(keep, weights)
    empty = blocked.all(dim=-1)  # (B, H, L) rows with nothing to attend
    sums = weights.sum(-1)
    torch.testing.assert_close(sums[~empty], torch.ones_like(sums[~empty]), rtol=0, atol=SUM_TOL[dtype])
    assert torch.equal(sums[empty], torch.zeros_like(sums[empty]))
    assert torch.equal(weights[blocked], torch.zeros_like(weights[blocked]))
    # at this scale softmax is (nearly) one-hot on the largest allowed score
    top = trace.attend.masked_scores.argmax(-1)  # (B, H, L)
    assert torch.equal(weights.argmax(-1)[~empty], top[~empty])
    assert (weights.amax(-1)[~empty] > 0.5).all()


@pytest.mark.parametrize("dtype", FULL_PRECISION, ids=str)
def test_functional_core_with_huge_scores_matches_the_stable_formula(dtype):
    """Scores around ±1e6: compared with a float64 softmax computed with max-subtraction."""
    g = torch.Generator().manual_seed(2)
    q = 1e3 * torch.randn(1, 2, 4, 8, generator=g, dtype=dtype)
    k = 1e3 * torch.randn(1, 2, 5, 8, generator=g, dtype=dtype)
    v = torch.randn(1, 2, 5, 3, generator=g, dtype=dtype)
    out, weights = scaled_dot_product_attention(q, k, v)
    scores = (q.double() @ k.double().transpose(-2, -1)) / math.sqrt(8)
    assert scores.abs().max() > 1e4
    expected = torch.exp(scores - scores.amax(-1, keepdim=True))
    expected = expected / expected.sum(-1, keepdim=True)
    # float32 scores of ~1e6 carry absolute rounding ~0.1, so a near-tie can shift weight: 1e-2 tolerates that,
    # a NaN, an unnormalised row or a wrong key does not.
    tol = {"rtol": 0, "atol": 1e-2 if dtype == torch.float32 else 1e-9}
    torch.testing.assert_close(weights.double(), expected, **tol)
    torch.testing.assert_close(out.double(), expected @ v.double(), **tol)


def test_large_finite_negative_mask_blocks_like_minus_inf_except_in_empty_rows():
    """The tutorials' -1e9: it blocks cells in a row that has others, but a row of only -1e9 is uniform."""
    g = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(1, 1, 3, 4, generator=g) for _ in range(3))
    keep = causal_mask(3).clone()
    keep[..., 0, :] = False
    finite = torch.zeros(1, 1, 3, 3).masked_fill(~keep, -1e9)
    _, w_finite = scaled_dot_product_attention(q, k, v, mask=finite)
    _, w_inf = scaled_dot_product_attention(q, k, v, mask=keep)
    torch.testing.assert_close(w_finite[..., 1:, :], w_inf[..., 1:, :], rtol=0, atol=1e-7)
    torch.testing.assert_close(w_finite[..., 0, :], torch.full((1, 1, 3), 1 / 3), rtol=0, atol=1e-7)
    assert torch.equal(w_inf[..., 0, :], torch.zeros(1, 1, 3))


# ---------------------------------------------------------------- half precision
@pytest.mark.parametrize("dtype", HALF_PRECISION, ids=str)
@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding", "empty_rows"])
@pytest.mark.parametrize("form", ["bool", "additive"])
def test_half_precision_close_to_float32(dtype, mask_kind, form):
    model32 = build_model(D, H, seed=4)
    model = build_model(D, H, seed=4, dtype=dtype)
    x32 = torch.randn(2, L, D, generator=torch.Generator().manual_seed(5))
    x = x32.to(dtype)
    keep = keep_mask(mask_kind)

    out32, w32 = model32(x32, x32, x32, mask=as_mask(keep, form, torch.float32))
    out, weights = model(x, x, x, mask=as_mask(keep, form, dtype))
    trace = model.forward_traced(x, x, x, mask=as_mask(keep, form, dtype))

    assert out.dtype == dtype and weights.dtype == dtype
    assert_trace_clean(trace, keep)
    torch.testing.assert_close(out.float(), out32, rtol=0, atol=HALF_TOL[dtype])
    torch.testing.assert_close(weights.float(), w32, rtol=0, atol=HALF_TOL[dtype])
    torch.testing.assert_close(trace.output.float(), out32, rtol=0, atol=HALF_TOL[dtype])
    blocked = blocked_cells(keep, weights)
    empty = blocked.all(dim=-1)
    assert torch.equal(weights[blocked], torch.zeros_like(weights[blocked]))  # zero, not NaN
    assert torch.equal(trace.attend.context[empty], torch.zeros_like(trace.attend.context[empty]))
    sums = weights.float().sum(-1)
    torch.testing.assert_close(sums[~empty], torch.ones_like(sums[~empty]), rtol=0, atol=SUM_TOL[dtype])


# ---------------------------------------------------------------- the trace is clean
@pytest.mark.parametrize("dtype", FULL_PRECISION + HALF_PRECISION, ids=str)
@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding", "empty_rows"])
@pytest.mark.parametrize("form", ["bool", "additive"])
def test_trace_has_no_nan_or_inf_except_blocked_scores(dtype, mask_kind, form):
    model = build_model(D, H, seed=6, dtype=dtype)
    x = torch.randn(3, L, D, generator=torch.Generator().manual_seed(7)).to(dtype)
    keep = keep_mask(mask_kind)
    trace = model.forward_traced(x, x, x, mask=as_mask(keep, form, dtype))
    assert_trace_clean(trace, keep)
