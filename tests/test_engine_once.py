"""Each formula of the layer written once: step 2 in one place for the traced forward and a decoding step, RoPE's
cos and sin built once per call, and the decoding step's causal mask from ``mha.masks``.

The counting tests run on the CPU: they count calls, not numbers.
"""

from __future__ import annotations

import ast
import inspect
import textwrap

import pytest
import torch

from mha import functional, masks, module
from mha.kv_cache import KVCache
from mha.module import MultiHeadAttention
from mha.rope import apply_rotary_pos_emb, rotary_cos_sin, rotate

D_MODEL, HEADS = 16, 4
#: (num_kv_heads, rope_base): the tutorials' layer, GQA with RoPE.
LAYERS = [(None, None), (2, 10_000.0)]

#: What step 2 is made of; the layer calls it through mha.functional and writes none of it itself.
STEP_TWO_CALLS = {"matmul", "softmax", "masked_softmax", "apply_mask", "masked_fill", "tril"}


def _layer(num_kv_heads=None, rope_base=None) -> MultiHeadAttention:
    torch.manual_seed(0)
    return MultiHeadAttention(D_MODEL, HEADS, num_kv_heads=num_kv_heads, rope_base=rope_base).double().eval()


def _called_names(source: str) -> set[str]:
    """The names of every function or method called in ``source``."""
    calls = (node.func for node in ast.walk(ast.parse(textwrap.dedent(source))) if isinstance(node, ast.Call))
    return {call.attr if isinstance(call, ast.Attribute) else getattr(call, "id", "") for call in calls}


def test_the_layer_writes_no_step_two_of_its_own():
    """forward_traced and forward_step hand step 2 to one function; nothing in mha/module.py multiplies scores."""
    called = _called_names(inspect.getsource(module))
    assert not called & STEP_TWO_CALLS, called & STEP_TWO_CALLS
    assert "attend_stages" in _called_names(inspect.getsource(MultiHeadAttention.forward_traced))
    assert "attention_stages" in _called_names(inspect.getsource(MultiHeadAttention.forward_step))


@pytest.mark.parametrize(("num_kv_heads", "rope_base"), LAYERS)
def test_the_traced_forward_and_a_decoding_step_run_step_two_through_one_function(num_kv_heads, rope_base, monkeypatch):
    calls = []

    def counted(*args, **kwargs):
        calls.append(args[0].shape)  # the queries' shape (B, H, Lq, Dh)
        return functional.attention_stages(*args, **kwargs)

    monkeypatch.setattr(module, "attention_stages", counted)
    layer = _layer(num_kv_heads, rope_base)
    x = torch.randn(1, 5, D_MODEL, dtype=torch.float64, generator=torch.Generator().manual_seed(1))  # (B, L, D)
    layer.forward_traced(x, x, x)
    cache = KVCache(1, layer.num_kv_heads, 5, layer.d_k, dtype=torch.float64)
    layer.forward_step(x[:, :3], cache, 0)
    layer.forward_step(x[:, 3:4], cache, 3)
    assert calls == [(1, HEADS, 5, layer.d_k), (1, HEADS, 3, layer.d_k), (1, HEADS, 1, layer.d_k)]


def test_attention_stages_are_the_formula_stage_by_stage():
    """Against softmax(q kᵀ / √d + mask) v written out here, with a row that may attend nothing."""
    generator = torch.Generator().manual_seed(2)
    q, k, v = (torch.randn(2, 3, 4, 8, dtype=torch.float64, generator=generator) for _ in range(3))  # (B, H, L, Dh)
    keep = torch.rand(2, 1, 4, 4, generator=generator) > 0.3  # (B, 1, Lq, Lk)
    keep[0, 0, 1] = False  # a row with no key to attend
    raw, scaled, masked, weights, context = functional.attention_stages(q, k, v, keep)
    expected_raw = torch.einsum("bhid,bhjd->bhij", q, k)
    assert torch.allclose(raw, expected_raw, atol=1e-12)
    assert torch.allclose(scaled, expected_raw / 8**0.5, atol=1e-12)
    assert torch.equal(torch.isneginf(masked), ~keep.expand(2, 3, 4, 4))
    exp = torch.where(keep, torch.exp(expected_raw / 8**0.5), torch.zeros(()))
    total = exp.sum(-1, keepdim=True)
    expected_weights = torch.where(total > 0, exp / total.clamp_min(1e-300), torch.zeros(()))
    assert torch.allclose(weights, expected_weights, atol=1e-12)
    assert torch.allclose(context, torch.einsum("bhij,bhjd->bhid", expected_weights, v), atol=1e-12)
    assert (weights[0, :, 1] == 0).all() and (context[0, :, 1] == 0).all()


@pytest.mark.parametrize("call", ["forward", "forward_traced", "forward_step"])
def test_rope_builds_cos_and_sin_once_per_call(call, monkeypatch):
    built = []

    def counted(*args, **kwargs):
        built.append(args[0].tolist())  # the positions
        return rotary_cos_sin(*args, **kwargs)

    monkeypatch.setattr(module, "rotary_cos_sin", counted)
    layer = _layer(2, 10_000.0)
    x = torch.randn(1, 4, D_MODEL, dtype=torch.float64, generator=torch.Generator().manual_seed(3))  # (B, L, D)
    if call == "forward_step":
        cache = KVCache(1, 2, 4, layer.d_k, dtype=torch.float64)
        layer.forward_step(x[:, :2], cache, 0)
        layer.forward_step(x[:, 2:], cache, 2)
        assert built == [[0, 1], [2, 3]]  # one build per step, for its own positions
    else:
        getattr(layer, call)(x, x, x)
        assert built == [[0, 1, 2, 3]]


def test_the_hugging_face_rotation_turns_q_and_k_of_other_lengths_by_their_own_positions():
    """Cross-attention with RoPE: q and k take the rows of cos and sin of their own positions 0 .. L-1."""
    generator = torch.Generator().manual_seed(4)
    q = torch.randn(1, 2, 3, 8, dtype=torch.float64, generator=generator)  # (B, H, Lq, Dh)
    k = torch.randn(1, 1, 5, 8, dtype=torch.float64, generator=generator)  # (B, Hkv, Lk, Dh)
    cos, sin = rotary_cos_sin(torch.arange(5), 8, 100.0, dtype=torch.float64)  # (5, Dh)
    q_turned, k_turned = apply_rotary_pos_emb(q, k, cos, sin)
    assert torch.equal(q_turned, rotate(q, cos[:3], sin[:3]))
    assert torch.equal(k_turned, rotate(k, cos, sin))
    # pair (0, 4) of q at position 2 turns by 2 radians (θ_0 = 1): a plane rotation written out
    x, y = q[0, 0, 2, 0], q[0, 0, 2, 4]
    angle = torch.tensor(2.0, dtype=torch.float64)
    assert torch.allclose(q_turned[0, 0, 2, 0], x * angle.cos() - y * angle.sin(), atol=1e-12)
    assert torch.allclose(q_turned[0, 0, 2, 4], x * angle.sin() + y * angle.cos(), atol=1e-12)


@pytest.mark.parametrize(("rows", "keys", "start"), [(4, 4, 0), (3, 7, 4), (1, 6, 5), (2, 9, 5)])
def test_a_causal_mask_that_starts_later_lets_row_i_read_keys_up_to_start_plus_i(rows, keys, start):
    keep = masks.causal_mask(rows, keys, start=start)
    expected = [[j <= start + i for j in range(keys)] for i in range(rows)]
    assert keep.shape == (1, 1, rows, keys)
    assert keep[0, 0].tolist() == expected
