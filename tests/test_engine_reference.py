"""The engine against an independent float64 reference written with NumPy from the formula.

    head_h = softmax(Q_h K_hᵀ / sqrt(d_k) + mask) V_h,   output = Concat(head_1..head_H) W_oᵀ + b_o

The reference loops over heads explicitly and builds its masks from nested lists, so it
shares no code with ``mha`` beyond the weights it is handed (converted to NumPy).

Tolerances: the reference runs in float64. A float64 model must agree to 1e-12 (absolute,
on O(1) numbers: only rounding order differs). A float32 model must agree to 2e-6 absolute +
1e-5 relative: d_model <= 16 means sums of at most 16 products of O(1) float32 numbers
(eps 1.2e-7), so any real bug (a wrong scale, a missing bias, a swapped head) is orders larger.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from mha.masks import build_mask, causal_mask, padding_mask, window_mask
from mha.sources.seeded import build_model

TOL = {torch.float32: {"rtol": 1e-5, "atol": 2e-6}, torch.float64: {"rtol": 0.0, "atol": 1e-12}}
DTYPES = [torch.float32, torch.float64]


# ---------------------------------------------------------------- the reference
def numpy_weights(model) -> dict[str, np.ndarray]:
    """The model's parameters as float64 NumPy arrays (exact for float32 values)."""
    return {name: p.detach().cpu().double().numpy() for name, p in model.named_parameters()}


def reference_attention(params, x_q, x_k, x_v, num_heads, mask=None):
    """Multi-head attention from the formula, in float64, one head at a time.

    Args:
        params: ``W_q.weight`` (D, D), ``W_q.bias`` (D,), ... as NumPy arrays.
        x_q: (B, Lq, D); x_k, x_v: (B, Lk, D).
        mask: ``None``, a bool keep-array (True = may attend) or an additive float array,
            broadcastable to (B, H, Lq, Lk).

    Returns:
        A dict with ``q, k, v`` (B, L, D), ``scores`` (raw QKᵀ), ``weights`` (B, H, Lq, Lk),
        ``context`` (B, H, Lq, Dh), ``concat`` (B, Lq, D) and ``output`` (B, Lq, D).
    """
    batch, length_q, d_model = x_q.shape
    length_k = x_k.shape[1]
    d_k = d_model // num_heads
    q = x_q @ params["W_q.weight"].T + params["W_q.bias"]  # (B, Lq, D)
    k = x_k @ params["W_k.weight"].T + params["W_k.bias"]  # (B, Lk, D)
    v = x_v @ params["W_v.weight"].T + params["W_v.bias"]  # (B, Lk, D)
    full_mask = None if mask is None else np.broadcast_to(mask, (batch, num_heads, length_q, length_k))
    scores, weights, context = [], [], []
    for h in range(num_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        s = q[:, :, cols] @ k[:, :, cols].transpose(0, 2, 1)  # (B, Lq, Lk)
        z = s / math.sqrt(d_k)
        if full_mask is not None and full_mask.dtype == bool:
            z = np.where(full_mask[:, h], z, -np.inf)
        elif full_mask is not None:
            z = z + full_mask[:, h]
        w = np.zeros_like(z)
        for b in range(batch):
            for i in range(length_q):
                row = z[b, i]
                if np.all(np.isneginf(row)):
                    continue  # nothing to attend to: zero weights
                e = np.exp(row - row[np.isfinite(row)].max())
                w[b, i] = e / e.sum()
        scores.append(s)
        weights.append(w)
        context.append(w @ v[:, :, cols])  # (B, Lq, Dh)
    concat = np.concatenate(context, axis=-1)  # (B, Lq, D)
    output = concat @ params["W_o.weight"].T + params["W_o.bias"]
    return {
        "q": q,
        "k": k,
        "v": v,
        "scores": np.stack(scores, axis=1),
        "weights": np.stack(weights, axis=1),
        "context": np.stack(context, axis=1),
        "concat": concat,
        "output": output,
    }


def keep_pattern(mask_type: str, length_q: int, length_k: int, window: int = 1) -> list[list[bool]]:
    """The expected keep-pattern, from the definitions, as nested lists."""
    if mask_type == "causal":
        return [[j <= i for j in range(length_k)] for i in range(length_q)]
    if mask_type == "window":
        return [[abs(i - j) <= window for j in range(length_k)] for i in range(length_q)]
    return [[True] * length_k for _ in range(length_q)]


def skip_float64_on_mps(device: torch.device, dtype: torch.dtype) -> None:
    """Apple's mps has no float64: those cases run where the suite's device has it."""
    if device.type == "mps" and dtype == torch.float64:
        pytest.skip("mps has no float64")


def to_np(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().double().numpy()


def assert_close(actual: torch.Tensor, expected: np.ndarray, dtype: torch.dtype) -> None:
    np.testing.assert_allclose(to_np(actual), expected, **TOL[dtype])


# ---------------------------------------------------------------- fixtures
D_MODEL = 12
PAD_BATCH = [["the", "cat", "sat", "[PAD]", "[PAD]"], ["a", "dog", "ran", "far", "[PAD]"]]
PAD_KEEP = [[True, True, True, False, False], [True, True, True, True, False]]  # written out by hand


def make_inputs(dtype, batch, length_q, length_k, cross, seed=0):
    g = torch.Generator().manual_seed(seed)
    x_q = torch.randn(batch, length_q, D_MODEL, generator=g, dtype=torch.float64).to(dtype)
    if not cross:
        return x_q, x_q, x_q
    x_k = torch.randn(batch, length_k, D_MODEL, generator=g, dtype=torch.float64).to(dtype)
    x_v = torch.randn(batch, length_k, D_MODEL, generator=g, dtype=torch.float64).to(dtype)
    return x_q, x_k, x_v


def make_masks(mask_type, batch, length_q, length_k, num_heads, dtype):
    """(our torch mask, the reference's NumPy mask) for one case; built independently."""
    if mask_type == "none":
        return None, None
    if mask_type == "causal":
        return causal_mask(length_q, length_k), np.array(keep_pattern("causal", length_q, length_k))
    if mask_type == "window":
        return window_mask(length_q, 1, length_k), np.array(keep_pattern("window", length_q, length_k, 1))
    if mask_type == "padding":  # one pad pattern per batch element, keys only: (B, 1, 1, Lk)
        ours = torch.cat([padding_mask(tokens[:length_k]) for tokens in PAD_BATCH[:batch]])
        return ours, np.array([row[:length_k] for row in PAD_KEEP[:batch]])[:, None, None, :]
    if mask_type == "per_head":  # a random bool mask per (batch, head), the diagonal kept so no row is empty
        g = np.random.default_rng(7)
        keep = g.random((batch, num_heads, length_q, length_k)) < 0.6
        keep[..., np.arange(min(length_q, length_k)), np.arange(min(length_q, length_k))] = True
        return torch.from_numpy(keep), keep
    if mask_type == "additive":  # finite biases plus -inf above the diagonal
        g = np.random.default_rng(3)
        additive = g.normal(size=(batch, 1, length_q, length_k))
        additive[:, :, ~np.array(keep_pattern("causal", length_q, length_k))] = -np.inf
        return torch.from_numpy(additive).to(dtype), additive
    raise AssertionError(mask_type)


MASK_CASES = ["none", "causal", "padding", "window", "per_head", "additive"]


# ---------------------------------------------------------------- tests
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mask_type", MASK_CASES)
@pytest.mark.parametrize(
    ("num_heads", "batch", "length_q", "length_k", "cross"),
    [(3, 2, 5, 5, False), (1, 1, 4, 4, False), (4, 2, 3, 5, True), (2, 2, 5, 4, True)],
    ids=["self-H3-B2", "self-H1-B1", "cross-Lq3-Lk5", "cross-Lq5-Lk4"],
)
def test_forward_matches_numpy_reference(dtype, mask_type, num_heads, batch, length_q, length_k, cross, device):
    """On the suite's device (the reference in NumPy: ``to_np`` brings the values to the CPU)."""
    skip_float64_on_mps(device, dtype)
    model = build_model(D_MODEL, num_heads, seed=1, device=device, dtype=dtype)
    x_q, x_k, x_v = (x.to(device) for x in make_inputs(dtype, batch, length_q, length_k, cross))
    ours_mask, ref_mask = make_masks(mask_type, batch, length_q, x_k.size(1), num_heads, dtype)
    expected = reference_attention(numpy_weights(model), to_np(x_q), to_np(x_k), to_np(x_v), num_heads, ref_mask)

    output, weights = model(x_q, x_k, x_v, mask=None if ours_mask is None else ours_mask.to(device))

    assert output.dtype == dtype and weights.dtype == dtype
    assert list(weights.shape) == [batch, num_heads, length_q, x_k.size(1)]  # per head, never averaged
    assert_close(output, expected["output"], dtype)
    assert_close(weights, expected["weights"], dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mask_type", ["none", "causal", "padding", "additive"])
def test_every_trace_step_matches_numpy_reference(dtype, mask_type, device):
    """On the suite's device, every step against NumPy."""
    skip_float64_on_mps(device, dtype)
    num_heads, batch, length = 3, 2, 5
    model = build_model(D_MODEL, num_heads, seed=2, device=device, dtype=dtype)
    x = make_inputs(dtype, batch, length, length, cross=False, seed=5)[0].to(device)
    ours_mask, ref_mask = make_masks(mask_type, batch, length, length, num_heads, dtype)
    expected = reference_attention(numpy_weights(model), *(to_np(x),) * 3, num_heads, ref_mask)

    trace = model.forward_traced(x, x, x, mask=None if ours_mask is None else ours_mask.to(device))
    assert trace.output.device.type == device.type

    d_k = D_MODEL // num_heads
    assert_close(trace.project.q, expected["q"], dtype)
    assert_close(trace.project.k, expected["k"], dtype)
    assert_close(trace.project.v, expected["v"], dtype)
    for h in range(num_heads):  # head h holds columns h*d_k .. (h+1)*d_k of the projection
        cols = slice(h * d_k, (h + 1) * d_k)
        assert_close(trace.project.q_heads[:, h], expected["q"][:, :, cols], dtype)
        assert_close(trace.project.v_heads[:, h], expected["v"][:, :, cols], dtype)
    assert trace.attend.scale == pytest.approx(1 / math.sqrt(d_k), rel=1e-15)
    assert_close(trace.attend.raw_scores, expected["scores"], dtype)
    assert_close(trace.attend.scaled_scores, expected["scores"] / math.sqrt(d_k), dtype)
    assert_close(trace.attend.weights, expected["weights"], dtype)
    assert_close(trace.attend.context, expected["context"], dtype)
    assert_close(trace.concat.concat, expected["concat"], dtype)
    assert_close(trace.output, expected["output"], dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("mask_type", ["causal", "padding", "window"])
def test_build_mask_from_tokens_matches_reference(dtype, mask_type):
    """The app's path: mask built from tokens by name, broadcast over batch and heads."""
    tokens = ["I", "like", "tea", "[PAD]", "[PAD]", "[PAD]"]
    length = len(tokens)
    model = build_model(D_MODEL, 2, seed=3, dtype=dtype)
    x, _, _ = make_inputs(dtype, 1, length, length, cross=False, seed=9)
    window = 2
    if mask_type == "padding":
        ref_mask = np.array([[True, True, True, False, False, False]])  # by hand, from the tokens above
    else:
        ref_mask = np.array(keep_pattern(mask_type, length, length, window))
    expected = reference_attention(numpy_weights(model), *(to_np(x),) * 3, 2, ref_mask)

    output, weights = model(x, x, x, mask=build_mask(mask_type, tokens, window=window))

    assert_close(output, expected["output"], dtype)
    assert_close(weights, expected["weights"], dtype)


# ---------------------------------------------------------------- fully masked rows
def fully_masked_cases(batch, num_heads, length_q, length_k, dtype):
    """A bool keep-mask and the matching additive mask where query rows 0 and 2 see nothing."""
    keep = torch.ones(batch, num_heads, length_q, length_k, dtype=torch.bool)
    keep[:, :, 0, :] = False
    keep[:, :, 2, :] = False
    keep[:, :, 1, 1:] = False  # row 1 sees only key 0
    additive = torch.zeros(keep.shape, dtype=dtype).masked_fill(~keep, float("-inf"))
    return {"bool": keep, "additive": additive}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("kind", ["bool", "additive"])
def test_fully_masked_rows_give_zero_weights_and_context(dtype, kind):
    batch, num_heads, length_q, length_k = 2, 3, 4, 3
    model = build_model(D_MODEL, num_heads, seed=4, dtype=dtype)
    x_q, x_k, x_v = make_inputs(dtype, batch, length_q, length_k, cross=True, seed=11)
    mask = fully_masked_cases(batch, num_heads, length_q, length_k, dtype)[kind]
    ref_mask = mask.numpy() if kind == "bool" else mask.double().numpy()
    expected = reference_attention(numpy_weights(model), to_np(x_q), to_np(x_k), to_np(x_v), num_heads, ref_mask)

    trace = model.forward_traced(x_q, x_k, x_v, mask=mask)
    output, weights = model(x_q, x_k, x_v, mask=mask)

    for w, ctx in ((trace.weights, trace.attend.context), (weights, None)):
        assert torch.isfinite(w).all()
        assert torch.equal(w[:, :, [0, 2]], torch.zeros_like(w[:, :, [0, 2]]))  # exactly zero, not NaN
        # a softmax over one key is exactly 1 and exp(-inf) exactly 0: exact by arithmetic, not by luck
        assert torch.equal(w[:, :, 1], torch.nn.functional.one_hot(torch.zeros_like(w[:, :, 1, 0]).long(), 3).to(dtype))
        if ctx is not None:
            assert torch.equal(ctx[:, :, [0, 2]], torch.zeros_like(ctx[:, :, [0, 2]]))
    # a query that sees nothing gets a zero context, so its output is W_o's bias alone
    bias = model.W_o.bias.expand(batch, 2, D_MODEL)
    torch.testing.assert_close(output[:, [0, 2]], bias, rtol=0, atol=0)  # exact: 0 @ W_oᵀ adds exact zeros to b_o
    assert torch.isfinite(output).all()
    assert_close(output, expected["output"], dtype)
    assert_close(trace.output, expected["output"], dtype)


@pytest.mark.parametrize("kind", ["bool", "additive"])
def test_fully_masked_rows_have_finite_gradients(kind):
    batch, num_heads, length_q, length_k = 2, 3, 4, 3
    model = build_model(D_MODEL, num_heads, seed=4, dtype=torch.float64).requires_grad_(True)
    x_q, x_k, x_v = (
        t.clone().requires_grad_(True) for t in make_inputs(torch.float64, batch, length_q, length_k, True)
    )
    mask = fully_masked_cases(batch, num_heads, length_q, length_k, torch.float64)[kind]

    output, weights = model(x_q, x_k, x_v, mask=mask)
    (output.square().sum() + weights.square().sum()).backward()

    grads = {name: p.grad for name, p in model.named_parameters()} | {"x_q": x_q.grad, "x_k": x_k.grad, "x_v": x_v.grad}
    for name, grad in grads.items():
        assert grad is not None and torch.isfinite(grad).all(), name
    # the rows that see nothing contribute nothing to the query gradient through attention
    assert torch.equal(x_q.grad[:, [0, 2]], torch.zeros_like(x_q.grad[:, [0, 2]]))
