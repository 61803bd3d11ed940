"""The engine against PyTorch's own attention: ``nn.MultiheadAttention`` and ``F.scaled_dot_product_attention``.

``nn.MultiheadAttention`` is built here by hand (``in_proj_weight`` packs W_q, W_k, W_v as rows
[0:D], [D:2D], [2D:3D]); its bool ``attn_mask`` means True = blocked, so our keep-mask is
inverted for it (``~keep``). ``mha.reference`` (the app's live check) is then tested on its own.

Tolerances: float64 runs agree to 1e-10 absolute (rounding order only); float32 to 2e-5
absolute + 1e-5 relative on O(1) numbers with d_model <= 16, far below what any bug moves.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from mha import MultiHeadAttention, scaled_dot_product_attention
from mha.masks import causal_mask, padding_mask, to_additive_mask, to_torch_mha_mask, window_mask
from mha.reference import TOLERANCE, compare_with_torch, to_torch_mha
from mha.sources.seeded import build_model

TOL = {torch.float32: {"rtol": 1e-5, "atol": 2e-5}, torch.float64: {"rtol": 0.0, "atol": 1e-10}}
DTYPES = [torch.float32, torch.float64]
D_MODEL = 16


def torch_mha_copy(model: MultiHeadAttention) -> nn.MultiheadAttention:
    """``nn.MultiheadAttention`` with our weights, packed by hand (independent of ``mha.reference``)."""
    d_model, dtype = model.d_model, model.W_q.weight.dtype
    ref = nn.MultiheadAttention(d_model, model.num_heads, batch_first=True, dtype=dtype)
    with torch.no_grad():
        ref.in_proj_weight[:d_model] = model.W_q.weight
        ref.in_proj_weight[d_model : 2 * d_model] = model.W_k.weight
        ref.in_proj_weight[2 * d_model :] = model.W_v.weight
        ref.in_proj_bias[:d_model] = model.W_q.bias
        ref.in_proj_bias[d_model : 2 * d_model] = model.W_k.bias
        ref.in_proj_bias[2 * d_model :] = model.W_v.bias
        ref.out_proj.weight.copy_(model.W_o.weight)
        ref.out_proj.bias.copy_(model.W_o.bias)
    return ref


def blocked_for_torch(keep: torch.Tensor, batch: int, num_heads: int, length_q: int, length_k: int) -> torch.Tensor:
    """Our keep-mask as ``nn.MultiheadAttention``'s (B*H, Lq, Lk) bool mask, True = blocked."""
    full = keep.expand(batch, num_heads, length_q, length_k)  # (B, H, Lq, Lk)
    return torch.logical_not(full).reshape(batch * num_heads, length_q, length_k)  # (B*H, Lq, Lk)


def inputs(dtype, batch, length_q, length_k, cross, seed=0):
    g = torch.Generator().manual_seed(seed)
    x_q = torch.randn(batch, length_q, D_MODEL, generator=g, dtype=dtype)
    if not cross:
        return x_q, x_q, x_q
    return x_q, *(torch.randn(batch, length_k, D_MODEL, generator=g, dtype=dtype) for _ in range(2))


def keep_mask(mask_type, batch, length_q, length_k):
    """A keep-mask with at least one allowed key per row (nn.MultiheadAttention gives NaN otherwise)."""
    if mask_type == "none":
        return None
    if mask_type == "causal":
        return causal_mask(length_q, length_k)
    if mask_type == "window":
        return window_mask(length_q, 1, length_k)
    if mask_type == "padding":
        tokens = [["a", "b", "[PAD]", "c", "<pad>", "[PAD]"], ["a", "b", "c", "d", "e", "[PAD]"]]
        return torch.cat([padding_mask(t[:length_k]) for t in tokens[:batch]])  # (B, 1, 1, Lk)
    raise AssertionError(mask_type)


CASES = [(4, 2, 5, 5, False), (2, 2, 4, 6, True), (1, 1, 3, 3, False)]
CASE_IDS = ["self-H4-B2", "cross-Lq4-Lk6", "self-H1"]


# ---------------------------------------------------------------- nn.MultiheadAttention
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mask_type", ["none", "causal", "window", "padding"])
@pytest.mark.parametrize(("num_heads", "batch", "length_q", "length_k", "cross"), CASES, ids=CASE_IDS)
def test_outputs_weights_and_gradients_match_nn_multihead_attention(
    dtype, mask_type, num_heads, batch, length_q, length_k, cross
):
    model = build_model(D_MODEL, num_heads, seed=1, dtype=dtype).requires_grad_(True)
    ref = torch_mha_copy(model)
    x_q, x_k, x_v = inputs(dtype, batch, length_q, length_k, cross)
    keep = keep_mask(mask_type, batch, length_q, x_k.size(1))
    attn_mask = None if keep is None else blocked_for_torch(keep, batch, num_heads, length_q, x_k.size(1))

    out, weights = model(x_q, x_k, x_v, mask=keep)
    ref_out, ref_weights = ref(x_q, x_k, x_v, attn_mask=attn_mask, need_weights=True, average_attn_weights=False)

    torch.testing.assert_close(out, ref_out, **TOL[dtype])
    torch.testing.assert_close(weights, ref_weights, **TOL[dtype])  # (B, H, Lq, Lk) per head, both

    # gradients of the projections through both outputs, with fixed random cotangents
    g = torch.Generator().manual_seed(42)
    g_out, g_w = torch.randn(out.shape, generator=g, dtype=dtype), torch.randn(weights.shape, generator=g, dtype=dtype)
    ((out * g_out).sum() + (weights * g_w).sum()).backward()
    ((ref_out * g_out).sum() + (ref_weights * g_w).sum()).backward()
    d = D_MODEL
    for i, name in enumerate(["W_q", "W_k", "W_v"]):
        layer = getattr(model, name)
        rows = slice(i * d, (i + 1) * d)
        torch.testing.assert_close(layer.weight.grad, ref.in_proj_weight.grad[rows], **TOL[dtype], msg=name)
        torch.testing.assert_close(layer.bias.grad, ref.in_proj_bias.grad[rows], **TOL[dtype], msg=name)
    torch.testing.assert_close(model.W_o.weight.grad, ref.out_proj.weight.grad, **TOL[dtype])
    torch.testing.assert_close(model.W_o.bias.grad, ref.out_proj.bias.grad, **TOL[dtype])
    assert model.W_q.weight.grad.abs().max() > 0  # the check above compared real numbers, not zeros


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gradients_wrt_inputs_match_nn_multihead_attention(dtype):
    model = build_model(D_MODEL, 4, seed=2, dtype=dtype).requires_grad_(True)
    ref = torch_mha_copy(model)
    x_q, x_k, x_v = (t.clone().requires_grad_(True) for t in inputs(dtype, 2, 3, 5, cross=True, seed=3))
    r_q, r_k, r_v = (t.detach().clone().requires_grad_(True) for t in (x_q, x_k, x_v))
    keep = causal_mask(3, 5)

    model(x_q, x_k, x_v, mask=keep)[0].sum().backward()
    ref(r_q, r_k, r_v, attn_mask=blocked_for_torch(keep, 2, 4, 3, 5), need_weights=False)[0].sum().backward()

    for ours, theirs in ((x_q, r_q), (x_k, r_k), (x_v, r_v)):
        torch.testing.assert_close(ours.grad, theirs.grad, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_padding_matches_key_padding_mask(dtype):
    """nn.MultiheadAttention's key_padding_mask (True = pad, ignore) is our padding keep-mask inverted."""
    tokens = [["we", "sat", "[PAD]", "[PAD]"], ["they", "ran", "off", "[PAD]"]]
    model = build_model(D_MODEL, 2, seed=5, dtype=dtype)
    ref = torch_mha_copy(model).eval()
    x, _, _ = inputs(dtype, 2, 4, 4, cross=False, seed=6)
    keep = torch.cat([padding_mask(t) for t in tokens])  # (B, 1, 1, Lk)
    is_pad = torch.tensor([[t == "[PAD]" for t in row] for row in tokens])  # (B, Lk), True = pad

    with torch.inference_mode():
        out, weights = model(x, x, x, mask=keep)
        ref_out, ref_weights = ref(x, x, x, key_padding_mask=is_pad, need_weights=True, average_attn_weights=False)

    torch.testing.assert_close(out, ref_out, **TOL[dtype])
    torch.testing.assert_close(weights, ref_weights, **TOL[dtype])
    pad_cells = is_pad.view(2, 1, 1, 4).expand_as(weights)  # (B, H, Lq, Lk): 3 pad keys x 2 heads x 4 queries
    assert torch.equal(weights[pad_cells], torch.zeros(3 * 2 * 4, dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_additive_float_mask_matches_nn_multihead_attention(dtype):
    """A float mask is added to the scaled scores, as nn.MultiheadAttention does with its float attn_mask."""
    batch, num_heads, length = 2, 4, 5
    model = build_model(D_MODEL, num_heads, seed=6, dtype=dtype)
    ref = torch_mha_copy(model)
    x, _, _ = inputs(dtype, batch, length, length, cross=False, seed=7)
    g = torch.Generator().manual_seed(8)
    additive = torch.randn(batch, num_heads, length, length, generator=g, dtype=dtype)
    additive = additive.masked_fill(~causal_mask(length), float("-inf"))  # finite biases, -inf above the diagonal

    with torch.inference_mode():
        out, weights = model(x, x, x, mask=additive)
        ref_out, ref_weights = ref(
            x, x, x, attn_mask=additive.reshape(batch * num_heads, length, length), average_attn_weights=False
        )

    torch.testing.assert_close(out, ref_out, **TOL[dtype])
    torch.testing.assert_close(weights, ref_weights, **TOL[dtype])


# ---------------------------------------------------------------- mha.reference (the app's live check)
def test_to_torch_mha_packs_q_k_v_rows_in_order():
    model = build_model(D_MODEL, 4, seed=9)
    packed = to_torch_mha(model)
    d = D_MODEL
    assert packed.batch_first and packed.num_heads == 4
    # copies of our weights: the same bytes
    assert torch.equal(packed.in_proj_weight[:d], model.W_q.weight)
    assert torch.equal(packed.in_proj_weight[d : 2 * d], model.W_k.weight)
    assert torch.equal(packed.in_proj_weight[2 * d :], model.W_v.weight)
    assert torch.equal(packed.in_proj_bias, torch.cat([model.W_q.bias, model.W_k.bias, model.W_v.bias]))
    assert torch.equal(packed.out_proj.weight, model.W_o.weight) and torch.equal(packed.out_proj.bias, model.W_o.bias)
    # copies, not shared storage: the live check can never alter the cached model
    assert packed.in_proj_weight.data_ptr() != model.W_q.weight.data_ptr()


def test_to_torch_mha_copies_a_layer_without_biases():
    torch.manual_seed(19)
    model = MultiHeadAttention(D_MODEL, 4, bias=False).eval()
    packed = to_torch_mha(model)
    assert packed.in_proj_bias is None and packed.out_proj.bias is None
    for rows, layer in zip(packed.in_proj_weight.chunk(3), (model.W_q, model.W_k, model.W_v), strict=True):
        assert torch.equal(rows, layer.weight)  # copied: the same bytes
    x, _, _ = inputs(torch.float32, 2, 5, 5, cross=False, seed=20)
    with torch.inference_mode():
        out, weights = model(x, x, x)
    check = compare_with_torch(model, x, x, x, None, out, weights, torch_mha=packed)
    assert check.passed and check.rows_compared == 10


def test_to_torch_mha_mask_inverts_and_expands():
    keep = causal_mask(3)  # (1, 1, 3, 3)
    blocked = to_torch_mha_mask(keep, batch=2, num_heads=4, length_q=3, length_k=3)
    expected_one = [[False, True, True], [False, False, True], [False, False, False]]  # True = blocked
    assert blocked.dtype == torch.bool and list(blocked.shape) == [8, 3, 3]
    assert blocked.tolist() == [expected_one] * 8


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mask_type", ["none", "causal", "padding", "additive"])
def test_compare_with_torch_passes_for_the_engine(dtype, mask_type):
    model = build_model(D_MODEL, 4, seed=10, dtype=dtype)
    x, _, _ = inputs(dtype, 2, 5, 5, cross=False, seed=11)
    keep = keep_mask("causal" if mask_type == "additive" else mask_type, 2, 5, 5)
    mask = to_additive_mask(keep, dtype) if mask_type == "additive" else keep
    with torch.inference_mode():
        out, weights = model(x, x, x, mask=mask)
    check = compare_with_torch(model, x, x, x, mask, out, weights)
    assert check.passed
    assert check.tolerance == TOLERANCE[dtype]
    assert check.max_abs_output <= TOL[dtype]["atol"] and check.max_abs_weights <= TOL[dtype]["atol"]
    assert (check.rows_compared, check.rows_total) == (10, 10)


def test_compare_with_torch_catches_a_wrong_output_and_skips_empty_rows():
    model = build_model(D_MODEL, 2, seed=12)
    x, _, _ = inputs(torch.float32, 1, 4, 4, cross=False, seed=13)
    keep = causal_mask(4).clone()
    keep[..., 0, :] = False  # query 0 sees nothing: ours gives zeros, PyTorch NaN -> left out
    with torch.inference_mode():
        out, weights = model(x, x, x, mask=keep)
    good = compare_with_torch(model, x, x, x, keep, out, weights)
    assert good.passed and (good.rows_compared, good.rows_total) == (3, 4)
    assert math.isfinite(good.max_abs_output) and math.isfinite(good.max_abs_weights)

    wrong = out.clone()
    wrong[0, 2, 5] += 1e-2  # one number off by 0.01 in a row that is compared
    bad = compare_with_torch(model, x, x, x, keep, wrong, weights)
    assert not bad.passed
    assert bad.max_abs_output == pytest.approx(1e-2, abs=1e-4)

    swapped = weights.flip(1)  # heads swapped
    assert not compare_with_torch(model, x, x, x, keep, out, swapped).passed


# ---------------------------------------------------------------- F.scaled_dot_product_attention
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mask_kind", ["none", "bool", "float", "bool-per-head"])
@pytest.mark.parametrize("scale", [None, 0.3])
def test_functional_core_matches_torch_sdpa(dtype, mask_kind, scale):
    g = torch.Generator().manual_seed(14)
    batch, heads, length_q, length_k, d_head = 2, 3, 4, 6, 5
    q = torch.randn(batch, heads, length_q, d_head, generator=g, dtype=dtype)
    k = torch.randn(batch, heads, length_k, d_head, generator=g, dtype=dtype)
    v = torch.randn(batch, heads, length_k, 7, generator=g, dtype=dtype)  # Dv != Dh is allowed
    mask = {
        "none": None,
        "bool": window_mask(length_q, 1, length_k),  # (1, 1, Lq, Lk), True = may attend, as in F.sdpa
        "float": torch.randn(1, 1, length_q, length_k, generator=g, dtype=dtype),
        "bool-per-head": torch.rand(batch, heads, length_q, length_k, generator=g) < 0.7,
    }[mask_kind]
    if mask_kind == "bool-per-head":
        mask[..., 0] = True  # no empty rows: F.sdpa would give NaN there

    out, weights = scaled_dot_product_attention(q, k, v, mask=mask, scale=scale)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)

    torch.testing.assert_close(out, expected, **TOL[dtype])
    torch.testing.assert_close(weights.sum(-1), torch.ones(batch, heads, length_q, dtype=dtype), **TOL[dtype])
    torch.testing.assert_close(weights @ v, out, **TOL[dtype])  # the returned weights are the ones used
    if mask is not None and mask.dtype == torch.bool:
        assert torch.equal(weights[~mask.expand_as(weights)], torch.zeros(int((~mask.expand_as(weights)).sum())))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mask_type", ["none", "causal", "padding"])
def test_module_matches_projections_plus_torch_sdpa(dtype, mask_type):
    """Our four steps equal: in-projection, F.scaled_dot_product_attention per head, concat, W_o."""
    num_heads, batch, length = 4, 2, 6
    model = build_model(D_MODEL, num_heads, seed=15, dtype=dtype)
    x, _, _ = inputs(dtype, batch, length, length, cross=False, seed=16)
    keep = keep_mask(mask_type, batch, length, length)
    d_head = D_MODEL // num_heads

    def heads(t):
        return t.view(batch, length, num_heads, d_head).transpose(1, 2)  # (B, L, D) -> (B, H, L, Dh)

    with torch.inference_mode():
        out, _ = model(x, x, x, mask=keep)
        q, k, v = model.W_q(x), model.W_k(x), model.W_v(x)  # (B, L, D) each
        context = F.scaled_dot_product_attention(heads(q), heads(k), heads(v), attn_mask=keep)  # (B, H, L, Dh)
        expected = model.W_o(context.transpose(1, 2).reshape(batch, length, D_MODEL))  # (B, L, D)
    torch.testing.assert_close(out, expected, **TOL[dtype])


@pytest.mark.parametrize("mask_kind", ["none", "bool", "float", "empty-rows"])
def test_functional_core_same_with_and_without_autograd_and_leaves_inputs_alone(mask_kind):
    """Without autograd the core masks and normalises in the scores' own buffer; with it, out of place."""
    g = torch.Generator().manual_seed(19)
    q, k, v = (torch.randn(2, 3, 4, 5, generator=g, dtype=torch.float64) for _ in range(3))
    keep = causal_mask(4).clone()
    if mask_kind == "empty-rows":
        keep[..., 1, :] = False
    mask = {"none": None, "bool": keep, "float": to_additive_mask(keep, torch.float64), "empty-rows": keep}[mask_kind]
    before = [t.clone() for t in (q, k, v)] + ([] if mask is None else [mask.clone()])

    with torch.inference_mode():
        out_fast, w_fast = scaled_dot_product_attention(q, k, v, mask=mask)
    q_g = q.clone().requires_grad_(True)
    out_graph, w_graph = scaled_dot_product_attention(q_g, k, v, mask=mask)

    torch.testing.assert_close(out_fast, out_graph, rtol=0, atol=1e-14)
    torch.testing.assert_close(w_fast, w_graph, rtol=0, atol=1e-14)
    for original, now in zip(before, [q, k, v] + ([] if mask is None else [mask]), strict=True):
        assert torch.equal(original, now)  # untouched: the same bytes


def test_functional_core_broadcasts_a_mask_larger_than_the_scores():
    """q, k, v of one sequence (H, L, Dh) with a per-batch mask (B, H, Lq, Lk): the result takes the mask's shape."""
    g = torch.Generator().manual_seed(20)
    q, k, v = (torch.randn(2, 4, 3, generator=g, dtype=torch.float64) for _ in range(3))  # (H, L, Dh)
    keep = torch.stack([causal_mask(4)[0], window_mask(4, 0)[0]])  # (B=2, 1, Lq, Lk)
    with torch.inference_mode():
        out, weights = scaled_dot_product_attention(q, k, v, mask=keep)
    assert list(weights.shape) == [2, 2, 4, 4] and list(out.shape) == [2, 2, 4, 3]
    expected = F.scaled_dot_product_attention(q.expand(2, 2, 4, 3), k.expand(2, 2, 4, 3), v.expand(2, 2, 4, 3), keep)
    torch.testing.assert_close(out, expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(out[1], v.expand(2, 2, 4, 3)[1], rtol=0, atol=1e-12)  # window 0: each sees itself
