"""Grouped K/V heads and rotary positions against an independent float64 reference and Hugging Face's functions.

The reference below is written from the formulas with NumPy, one head at a time: query head h reads K/V head
h // (H / Hkv), and RoPE turns feature pair (i, i + Dh/2) of position m by the 2 x 2 rotation of angle
m · base^(-2i/Dh). It shares no code with ``mha`` beyond the weights it is handed.

Tolerances as tests/test_engine_reference.py: float64 models agree to 1e-12, float32 to 2e-6 absolute + 1e-5
relative (d_model <= 32: sums of at most 32 products of O(1) numbers).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from mha.counting import count_parameters, kv_cache_numbers, layer_parameters, step_costs
from mha.masks import causal_mask
from mha.module import MultiHeadAttention, check_sizes, kv_head_of, repeat_kv
from mha.rope import apply_rotary_pos_emb, rotary_cos_sin
from mha.rope_lesson import OFFSET_PAIRS, offset_scores
from mha.sources.seeded import build_model

TOL = {torch.float32: {"rtol": 1e-5, "atol": 2e-6}, torch.float64: {"rtol": 0.0, "atol": 1e-12}}


def _rotation(x: np.ndarray, base: float) -> np.ndarray:
    """Turn pair (i, i + Dh/2) of row m by m · base^(-2i/Dh), with an explicit 2 x 2 matrix: (L, Dh) -> (L, Dh)."""
    length, d_k = x.shape
    half = d_k // 2
    out = np.empty_like(x)
    for m in range(length):
        for i in range(half):
            angle = m * base ** (-2.0 * i / d_k)
            c, s = math.cos(angle), math.sin(angle)
            a, b = x[m, i], x[m, i + half]
            out[m, i], out[m, i + half] = c * a - s * b, s * a + c * b
    return out


def reference(model: MultiHeadAttention, x_q: np.ndarray, x_k: np.ndarray, mask: np.ndarray | None = None):
    """Output (Lq, D) and weights (H, Lq, Lk) of one sequence, from the formulas."""
    p = {name: t.detach().cpu().double().numpy() for name, t in model.named_parameters()}
    heads, kv_heads, d_k = model.num_heads, model.num_kv_heads, model.d_k
    q = x_q @ p["W_q.weight"].T + p["W_q.bias"]  # (Lq, D)
    k = x_k @ p["W_k.weight"].T + p["W_k.bias"]  # (Lk, Hkv·Dh)
    v = x_k @ p["W_v.weight"].T + p["W_v.bias"]
    weights, context = [], []
    for h in range(heads):
        g = h // (heads // kv_heads)
        q_h, k_h, v_h = q[:, h * d_k : (h + 1) * d_k], k[:, g * d_k : (g + 1) * d_k], v[:, g * d_k : (g + 1) * d_k]
        if model.rope_base is not None:
            q_h, k_h = _rotation(q_h, model.rope_base), _rotation(k_h, model.rope_base)
        z = q_h @ k_h.T / math.sqrt(d_k)
        if mask is not None:
            z = np.where(mask, z, -np.inf)
        w = np.exp(z - z.max(axis=-1, keepdims=True))
        w /= w.sum(axis=-1, keepdims=True)
        weights.append(w)
        context.append(w @ v_h)
    output = np.concatenate(context, axis=-1) @ p["W_o.weight"].T + p["W_o.bias"]
    return output, np.stack(weights)


CASES = [(4, 2, None), (4, 1, None), (4, 4, 10000.0), (4, 2, 10000.0), (8, 1, 500.0), (2, 2, None)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(("heads", "kv_heads", "base"), CASES)
@pytest.mark.parametrize("causal", [False, True])
def test_the_layer_matches_the_reference(heads, kv_heads, base, causal, dtype, device):
    """On the suite's device (grouped heads and RoPE there), against NumPy on the CPU."""
    if device.type == "mps" and dtype == torch.float64:
        pytest.skip("mps has no float64")
    model = build_model(32, heads, seed=3, device=device, dtype=dtype, num_kv_heads=kv_heads, rope_base=base)
    x = torch.randn(1, 9, 32, generator=torch.Generator().manual_seed(1), dtype=dtype)
    mask = causal_mask(9) if causal else None
    x_there, mask_there = x.to(device), None if mask is None else mask.to(device)
    output, weights = model(x_there, x_there, x_there, mask_there)
    ref_out, ref_weights = reference(
        model, x[0].double().numpy(), x[0].double().numpy(), None if mask is None else mask[0, 0].numpy()
    )
    assert output.device.type == device.type

    def values(t: torch.Tensor) -> np.ndarray:
        return t.detach().cpu().double().numpy()

    np.testing.assert_allclose(values(output[0]), ref_out, **TOL[dtype])
    np.testing.assert_allclose(values(weights[0]), ref_weights, **TOL[dtype])
    traced = model.forward_traced(x_there, x_there, x_there, mask_there)
    np.testing.assert_allclose(values(traced.output[0]), ref_out, **TOL[dtype])


def test_cross_attention_with_rope_turns_each_side_by_its_own_positions():
    model = build_model(16, 4, seed=0, dtype=torch.float64, num_kv_heads=2, rope_base=10000.0)
    generator = torch.Generator().manual_seed(2)
    x_q, x_k = (
        torch.randn(1, 3, 16, generator=generator, dtype=torch.float64),
        torch.randn(1, 7, 16, generator=generator, dtype=torch.float64),
    )
    output, weights = model(x_q, x_k, x_k)
    ref_out, ref_weights = reference(model, x_q[0].numpy(), x_k[0].numpy())
    np.testing.assert_allclose(output[0].numpy(), ref_out, atol=1e-12)
    np.testing.assert_allclose(weights[0].numpy(), ref_weights, atol=1e-12)


def test_rope_and_repeat_kv_agree_with_hugging_face_llama():
    llama = pytest.importorskip("transformers.models.llama.modeling_llama")
    generator = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 4, 6, 8, generator=generator), torch.randn(2, 2, 6, 8, generator=generator)
    cos, sin = rotary_cos_sin(torch.arange(6), 8, 10000.0)
    ours = apply_rotary_pos_emb(q, k, cos, sin)
    theirs = llama.apply_rotary_pos_emb(q, k, cos[None], sin[None])  # theirs take (B, L, Dh) cos and sin
    torch.testing.assert_close(ours[0], theirs[0], rtol=0, atol=1e-6)
    torch.testing.assert_close(ours[1], theirs[1], rtol=0, atol=1e-6)
    torch.testing.assert_close(repeat_kv(k, 2), llama.repeat_kv(k, 2), rtol=0, atol=0)


def test_the_trace_keeps_step_1_split_the_turned_q_k_and_the_grouping():
    model = build_model(32, 4, seed=1, num_kv_heads=2, rope_base=10000.0)
    x = torch.randn(1, 5, 32)
    trace = model.forward_traced(x, x, x)
    p, a = trace.project, trace.attend
    assert list(p.q_heads.shape) == [1, 4, 5, 8] and list(p.k_heads.shape) == [1, 2, 5, 8]
    assert list(p.k.shape) == [1, 5, 16] and list(a.keys.shape) == [1, 4, 5, 8]
    assert p.kv_head_of == (0, 0, 1, 1) == kv_head_of(4, 2)
    assert p.q_rotated is not None and not torch.allclose(p.q_rotated, p.q_heads)
    torch.testing.assert_close(p.q_rotated[:, :, 0], p.q_heads[:, :, 0])  # position 0 turns by 0
    for h, g in enumerate(p.kv_head_of):
        torch.testing.assert_close(a.keys[:, h], p.k_rotated[:, g])
        torch.testing.assert_close(a.values[:, h], p.v_heads[:, g])
    names = set(trace.tensors())
    assert {"project.q_rotated", "project.k_rotated", "attend.keys", "attend.values"} <= names


def test_the_tutorials_layer_traces_no_rotation_and_names_each_tensor_once():
    model = build_model(16, 4, seed=1)
    x = torch.randn(1, 5, 16)
    trace = model.forward_traced(x, x, x)
    assert trace.project.q_rotated is None and trace.project.kv_head_of == (0, 1, 2, 3)
    assert trace.attend.queries is trace.project.q_heads
    assert not {"attend.queries", "attend.keys", "attend.values"} & set(trace.tensors())
    assert model.is_plain and "num_kv_heads" not in repr(model)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ((16, 4, True, 3), ["num_kv_heads=3", "num_heads=4"]),
        ((16, 4, True, 8), ["num_kv_heads=8", "num_heads=4"]),
        ((16, 4, True, 0), ["num_kv_heads=0"]),
        ((12, 4, True, None, 10000.0), ["d_k=3"]),
        ((16, 4, True, None, 1.0), ["rope_base=1.0"]),
    ],
)
def test_bad_sizes_raise_a_value_error_that_names_them(args, named):
    with pytest.raises(ValueError) as error:
        MultiHeadAttention(*args)
    assert all(text in str(error.value) for text in named), str(error.value)
    with pytest.raises(ValueError):
        check_sizes(*args[:2], *args[3:])


@pytest.mark.parametrize(("heads", "kv_heads", "bias"), [(8, 8, True), (8, 2, True), (8, 1, False), (4, 2, False)])
def test_the_parameter_formula_counts_what_the_module_holds(heads, kv_heads, bias):
    d_model = 64
    model = MultiHeadAttention(d_model, heads, bias=bias, num_kv_heads=kv_heads)
    width = kv_heads * d_model // heads
    assert count_parameters(model) == layer_parameters(d_model, width, bias)
    step_1 = step_costs(d_model, heads, 10, bias=bias, num_kv_heads=kv_heads)[0].params
    assert step_1 == sum(p.numel() for name, p in model.named_parameters() if not name.startswith("W_o"))


def test_the_kv_cache_per_token_of_qwen2_5_0_5b():
    # Qwen2.5-0.5B's sizes (bench/pretrained.py: 896 wide, 24 layers, 14 query / 2 K/V heads, so d_k 64) keep
    # 12 KiB per token in bf16, 84 KiB were it MHA (14 K/V heads)
    assert 2 * kv_cache_numbers(24, 2, 64) == 12 * 1024
    assert 2 * kv_cache_numbers(24, 14, 64) == 84 * 1024


def test_offset_scores_are_the_layers_own_scores_at_those_positions():
    model = build_model(32, 4, seed=5, dtype=torch.float64, num_kv_heads=2, rope_base=10000.0)
    generator = torch.Generator().manual_seed(4)
    a, b = (
        torch.randn(32, generator=generator, dtype=torch.float64),
        torch.randn(32, generator=generator, dtype=torch.float64),
    )
    scores = offset_scores(model, a, b, head=3)
    for score, (m, n) in zip(scores, OFFSET_PAIRS, strict=True):
        x = torch.randn(1, max(m, n) + 1, 32, generator=generator, dtype=torch.float64)
        x[0, m], x[0, n] = a, b
        trace = model.forward_traced(x, x, x)
        assert score.rope == pytest.approx(float(trace.attend.scaled_scores[0, 3, m, n]), abs=1e-12)
    same = [s.rope for s in scores if s.offset == scores[0].offset]
    assert len(same) == 3 and max(same) - min(same) < 1e-12
    assert abs(scores[3].rope - scores[0].rope) > 1e-3  # another offset, another score
    sinusoidal = [s.sinusoidal for s in scores if s.offset == scores[0].offset]
    assert max(sinusoidal) - min(sinusoidal) > 1e-3  # added sinusoids: the absolute places matter
