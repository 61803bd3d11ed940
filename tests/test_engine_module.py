"""The engine's surface: sizes, trace, parameter counts, dtypes, masks, tokens, device, config, pipeline.

Expected values are derived here from definitions (nested lists, formulas, FLOP counting by
``torch.utils.flop_counter``), never copied from the engine's output.
"""

from __future__ import annotations

import dataclasses
import math
import os

import numpy as np
import pytest
import torch
from tolerances import FLOAT32
from torch.utils.flop_counter import FlopCounterMode

import mha.device
from mha import AttentionConfig, ConfigError, MultiHeadAttention
from mha.config import LIMITS, check_token_count
from mha.counting import count_parameters, projection_parameters, step_costs, total_parameters
from mha.device import DEVICE_CHOICES, TEST_DEVICE_ENV, available_devices, resolve_device
from mha.masks import (
    MASK_TYPES,
    build_mask,
    causal_mask,
    padding_mask,
    to_additive_mask,
    window_mask,
)
from mha.pipeline import run_attention
from mha.sources.seeded import SeededSource, build_model, embed_inputs
from mha.tokens import embed_tokens, positional_encoding, tokenize

# float32 on O(1) numbers with d_model <= 16: 1e-6 absolute is ~10 ulps, any real error is far larger
EXACT32 = {"rtol": 0.0, "atol": 1e-6}


# ---------------------------------------------------------------- bad sizes
@pytest.mark.parametrize(
    ("d_model", "num_heads"),
    [(10, 3), (512, 7), (0, 2), (8, 0), (-8, 2), (8, -2), (True, 1), (8, True), (8.0, 2), (8, 2.0), (0, 0)],
)
def test_bad_sizes_raise_value_error_naming_both_numbers(d_model, num_heads):
    with pytest.raises(ValueError) as info:
        MultiHeadAttention(d_model, num_heads)
    message = str(info.value)
    assert f"d_model={d_model!r}" in message and f"num_heads={num_heads!r}" in message, message


def test_not_divisible_message_says_what_to_change():
    with pytest.raises(ValueError, match=r"d_model=10 is not divisible by num_heads=3") as info:
        MultiHeadAttention(10, 3)
    assert "3.33333" in str(info.value)  # 10 / 3 features per head, spelled out


@pytest.mark.parametrize(
    ("shapes", "needle"),
    [
        (((2, 3, 9), (2, 3, 8), (2, 3, 8)), "query"),
        (((2, 3), (2, 3, 8), (2, 3, 8)), "query"),
        (((2, 3, 8), (2, 4, 8), (2, 5, 8)), "key and value"),
        (((2, 3, 8), (1, 4, 8), (1, 4, 8)), "batch"),
    ],
)
def test_bad_input_shapes_name_the_shape(shapes, needle):
    model = MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match=needle):
        model(*(torch.zeros(s) for s in shapes))


# ---------------------------------------------------------------- parameter counts and costs
@pytest.mark.parametrize("d_model", [8, 24, 64])
@pytest.mark.parametrize("num_heads", [1, 2, 4, 8])
@pytest.mark.parametrize("bias", [True, False])
def test_parameter_count_is_4d2_plus_4d_whatever_the_heads(d_model, num_heads, bias):
    model = MultiHeadAttention(d_model, num_heads, bias=bias)
    expected = 4 * d_model**2 + (4 * d_model if bias else 0)
    held = sum(p.numel() for p in model.parameters())
    assert held == expected == count_parameters(model) == total_parameters(d_model, bias)
    assert projection_parameters(d_model, bias) == d_model**2 + (d_model if bias else 0)
    for name in ("W_q", "W_k", "W_v", "W_o"):
        layer = getattr(model, name)
        assert isinstance(layer, torch.nn.Linear)
        assert (layer.in_features, layer.out_features) == (d_model, d_model)


def _flops(fn) -> tuple[int, object]:
    with FlopCounterMode(display=False) as counter:
        result = fn()
    return counter.get_total_flops(), result


@pytest.mark.parametrize(
    ("d_model", "num_heads", "batch", "length_q", "length_k"),
    [(8, 2, 1, 4, 4), (12, 3, 2, 3, 5), (16, 1, 3, 6, 2), (16, 8, 1, 1, 7)],
)
@pytest.mark.parametrize("bias", [True, False])
def test_step_costs_match_counted_flops_params_and_bytes(d_model, num_heads, batch, length_q, length_k, bias):
    """FLOPs counted by torch.utils.flop_counter around each step method, params held, bytes of the scores."""
    model = MultiHeadAttention(d_model, num_heads, bias=bias)
    x_q = torch.randn(batch, length_q, d_model)
    x_kv = torch.randn(batch, length_k, d_model)
    costs = step_costs(d_model, num_heads, length_q, length_k, batch=batch, bias=bias, itemsize=4)

    project_flops, (_, _, _, qh, kh, vh) = _flops(lambda: model.project_and_split(x_q, x_kv, x_kv.clone()))
    attend_flops, (context, weights) = _flops(lambda: model.attend(qh, kh, vh))
    concat_flops, concat = _flops(lambda: model.concat_heads(context))
    out_flops, _ = _flops(lambda: model.project_out(concat))

    assert [c.step for c in costs] == [1, 2, 3, 4]
    assert [c.flops for c in costs] == [project_flops, attend_flops, concat_flops, out_flops]
    assert costs[2].flops == 0  # concatenation moves numbers, it computes nothing
    per_linear = d_model * d_model + (d_model if bias else 0)
    assert [c.params for c in costs] == [3 * per_linear, 0, 0, per_linear]
    assert sum(c.params for c in costs) == count_parameters(model)
    assert (
        costs[1].score_bytes == weights.numel() * weights.element_size() == 4 * batch * num_heads * length_q * length_k
    )


def test_fused_self_attention_counts_the_same_flops():
    model = MultiHeadAttention(16, 4)
    x = torch.randn(2, 5, 16)
    total, _ = _flops(lambda: model(x, x, x))
    assert total == sum(c.flops for c in step_costs(16, 4, 5, batch=2))


# ---------------------------------------------------------------- dtypes and the trace
D, H = 12, 3


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize(("batch", "length_q", "length_k"), [(1, 4, 4), (2, 3, 5)])
def test_trace_shapes_at_every_step(dtype, batch, length_q, length_k):
    model = build_model(D, H, seed=0, dtype=dtype)
    x_q = torch.randn(batch, length_q, D, dtype=dtype)
    x_kv = x_q if length_q == length_k else torch.randn(batch, length_k, D, dtype=dtype)
    trace = model.forward_traced(x_q, x_kv, x_kv)
    d_k = D // H
    expected = {
        "project.x_query": [batch, length_q, D],
        "project.x_key": [batch, length_k, D],
        "project.x_value": [batch, length_k, D],
        "project.q": [batch, length_q, D],
        "project.k": [batch, length_k, D],
        "project.v": [batch, length_k, D],
        "project.q_heads": [batch, H, length_q, d_k],
        "project.k_heads": [batch, H, length_k, d_k],
        "project.v_heads": [batch, H, length_k, d_k],
        "attend.raw_scores": [batch, H, length_q, length_k],
        "attend.scaled_scores": [batch, H, length_q, length_k],
        "attend.masked_scores": [batch, H, length_q, length_k],
        "attend.weights": [batch, H, length_q, length_k],
        "attend.context": [batch, H, length_q, d_k],
        "concat.concat": [batch, length_q, D],
        "out.output": [batch, length_q, D],
    }
    tensors = trace.tensors()
    assert list(tensors) == list(expected)  # every intermediate, in pipeline order
    assert {name: list(t.shape) for name, t in tensors.items()} == expected
    assert all(t.dtype == dtype for t in tensors.values())
    assert trace.output is trace.out.output and trace.weights is trace.attend.weights
    assert trace.attend.mask is None


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("mask_kind", ["none", "causal", "window", "padding", "additive"])
def test_trace_is_consistent(dtype, mask_kind, device):
    """On the suite's device: forward and forward_traced agree, and every step is what its formula says there."""
    if device.type == "mps" and dtype == torch.float64:
        pytest.skip("mps has no float64")
    tol = EXACT32 if dtype == torch.float32 else {"rtol": 0.0, "atol": 1e-12}
    batch, length = 2, 5
    model = build_model(D, H, seed=1, device=device, dtype=dtype)
    x = torch.randn(batch, length, D, dtype=dtype, generator=torch.Generator().manual_seed(2)).to(device)
    keep = {
        "none": None,
        "causal": causal_mask(length),
        "window": window_mask(length, 1),
        "padding": padding_mask(["a", "b", "c", "[PAD]", "[PAD]"]),
        "additive": causal_mask(length),
    }[mask_kind]
    keep = None if keep is None else keep.to(device)
    mask = to_additive_mask(keep, dtype) if mask_kind == "additive" else keep
    trace = model.forward_traced(x, x, x, mask=mask)
    a, p = trace.attend, trace.project
    assert trace.output.device.type == device.type

    # forward and forward_traced are the same computation
    out, weights = model(x, x, x, mask=mask)
    torch.testing.assert_close(trace.output, out, **tol)
    torch.testing.assert_close(trace.weights, weights, **tol)
    # step 1: projections and the head split are the plain linear maps and a view
    torch.testing.assert_close(p.q, x @ model.W_q.weight.T + model.W_q.bias, **tol)
    assert torch.equal(p.q_heads, p.q.view(batch, length, H, D // H).transpose(1, 2))  # a view: the same bytes
    assert torch.equal(p.k_heads, p.k.view(batch, length, H, D // H).transpose(1, 2))
    assert p.x_query is x
    # step 2: scale, mask, softmax
    assert a.scale == 1 / math.sqrt(D // H)
    torch.testing.assert_close(a.raw_scores, p.q_heads @ p.k_heads.transpose(-2, -1), **tol)
    torch.testing.assert_close(a.scaled_scores, a.raw_scores * a.scale, **tol)
    blocked = torch.zeros_like(a.weights, dtype=torch.bool) if keep is None else ~keep.expand_as(a.weights)
    assert torch.equal(torch.isneginf(a.masked_scores), blocked)  # -inf exactly where the mask blocks
    assert torch.equal(a.masked_scores[~blocked], a.scaled_scores[~blocked])  # untouched elsewhere: copied bytes
    assert torch.equal(a.weights[blocked], torch.zeros(int(blocked.sum()), dtype=dtype, device=device))
    torch.testing.assert_close(a.weights.sum(-1), torch.ones(batch, H, length, dtype=dtype, device=device), **tol)
    assert (a.weights >= 0).all()
    torch.testing.assert_close(a.context, a.weights @ p.v_heads, **tol)
    # steps 3 and 4
    assert torch.equal(trace.concat.concat, a.context.transpose(1, 2).reshape(batch, length, D))  # a copy: the same
    torch.testing.assert_close(trace.output, trace.concat.concat @ model.W_o.weight.T + model.W_o.bias, **tol)
    assert a.mask is mask


def test_forward_keeps_no_state_on_the_model():
    model = build_model(D, H)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    attrs = set(vars(model))
    x = torch.randn(1, 4, D)
    model(x, x, x)
    model.forward_traced(x, x, x)
    assert set(vars(model)) == attrs
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


# ---------------------------------------------------------------- masks: exact patterns
T, F_ = True, False


def test_causal_mask_pattern():
    assert causal_mask(4).tolist() == [[[[T, F_, F_, F_], [T, T, F_, F_], [T, T, T, F_], [T, T, T, T]]]]
    assert causal_mask(2, 4).tolist() == [[[[T, F_, F_, F_], [T, T, F_, F_]]]]
    assert causal_mask(3).dtype == torch.bool


def test_window_mask_pattern():
    assert window_mask(5, 1).tolist() == [
        [
            [
                [T, T, F_, F_, F_],
                [T, T, T, F_, F_],
                [F_, T, T, T, F_],
                [F_, F_, T, T, T],
                [F_, F_, F_, T, T],
            ]
        ]
    ]
    assert window_mask(3, 0).tolist() == [[[[T, F_, F_], [F_, T, F_], [F_, F_, T]]]]
    assert window_mask(3, 5).tolist() == [[[[T, T, T], [T, T, T], [T, T, T]]]]
    assert window_mask(2, 1, 4).tolist() == [[[[T, T, F_, F_], [T, T, T, F_]]]]
    with pytest.raises(ValueError, match="window=-1"):
        window_mask(3, -1)


def test_padding_mask_pattern():
    mask = padding_mask(["我", "[PAD]", "好", "<pad>", "<PAD>", "PAD"])
    assert mask.tolist() == [[[[T, F_, T, F_, F_, T]]]]  # a plain word "PAD" is not a pad token


def test_build_mask_names_and_convention():
    tokens = ["a", "b", "[PAD]"]
    assert build_mask("none", tokens) is None
    assert build_mask("causal", tokens).tolist() == [[[[T, F_, F_], [T, T, F_], [T, T, T]]]]
    assert build_mask("padding", tokens).tolist() == [[[[T, T, F_]]]]
    assert build_mask("window", tokens, window=0).tolist() == [[[[T, F_, F_], [F_, T, F_], [F_, F_, T]]]]
    assert build_mask("causal", ["q1", "q2"], key_tokens=["k1", "k2", "k3"]).tolist() == [[[[T, F_, F_], [T, T, F_]]]]
    assert set(MASK_TYPES) == {"none", "causal", "padding", "window"}
    with pytest.raises(ValueError, match="'diagonal'"):
        build_mask("diagonal", tokens)


def test_block_pad_adds_the_padding_to_causal_and_window():
    tokens = ["a", "b", "[PAD]", "[PAD]"]
    # causal + [PAD] keys blocked: j <= i and key j not a pad, written out cell by cell
    assert build_mask("causal", tokens, block_pad=True).tolist() == [
        [[[T, F_, F_, F_], [T, T, F_, F_], [T, T, F_, F_], [T, T, F_, F_]]]
    ]
    assert build_mask("window", tokens, window=1, block_pad=True).tolist() == [
        [[[T, T, F_, F_], [T, T, F_, F_], [F_, T, F_, F_], [F_, F_, F_, F_]]]
    ]
    # the last query's window holds only [PAD] keys: that row attends nothing (zero weights, see masked_softmax)
    for mask_type in ("none", "padding"):  # padding blocks them anyway; "none" + block_pad is the padding mask
        assert torch.equal(build_mask(mask_type, tokens, block_pad=True), padding_mask(tokens))
    for mask_type in MASK_TYPES:  # without pads the toggle changes nothing
        plain, blocked = build_mask(mask_type, ["a", "b", "c"]), build_mask(mask_type, ["a", "b", "c"], block_pad=True)
        assert plain is None or torch.equal(plain.expand(1, 1, 3, 3), blocked.expand(1, 1, 3, 3))


def test_block_pad_rows_of_a_padded_sentence_match_the_sentence_alone():
    """Window 3 + blocked pads on "a b c [PAD] [PAD]": the real tokens' outputs are those of "a b c" alone."""
    config = AttentionConfig(d_model=16, num_heads=4, mask_type="window", window=3, tokens="a b c [PAD] [PAD]")
    padded = run_attention(dataclasses.replace(config, block_pad=True))
    alone = run_attention(dataclasses.replace(config, tokens="a b c"))
    leaky = run_attention(config)
    torch.testing.assert_close(padded.trace.output[:, :3], alone.trace.output, **EXACT32)
    assert (leaky.trace.output[:, :3] - alone.trace.output).abs().max() > 1e-3  # the window reaches the pads


def test_block_pad_must_be_a_bool():
    with pytest.raises(ConfigError) as error:
        AttentionConfig(d_model=8, num_heads=2, block_pad="yes")
    assert (error.value.field, error.value.code) == ("block_pad", "not_boolean")


def test_additive_mask_is_zero_or_minus_inf():
    additive = to_additive_mask(causal_mask(3), torch.float64)
    inf = float("-inf")
    assert additive.dtype == torch.float64
    assert additive.tolist() == [[[[0.0, inf, inf], [0.0, 0.0, inf], [0.0, 0.0, 0.0]]]]


# ---------------------------------------------------------------- tokens
def test_tokenize_english_keeps_contractions_and_punctuation():
    text = "The animal didn't cross the street because it was too tired."
    expected = ["The", "animal", "didn't", "cross", "the", "street", "because", "it", "was", "too", "tired", "."]
    assert tokenize(text) == expected


def test_tokenize_chinese_one_token_per_character_including_full_width_comma():
    text = "小明喜欢打球，他放学后去了操场"
    assert tokenize(text) == list(text)  # 15 characters -> 15 tokens
    assert len(tokenize(text)) == 15 and "，" in tokenize(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the cat [PAD] [PAD]", ["the", "cat", "[PAD]", "[PAD]"]),
        ("[CLS] hi [SEP]", ["[CLS]", "hi", "[SEP]"]),
        ("I love 北京!", ["I", "love", "北", "京", "!"]),
        ("  spaced   out  ", ["spaced", "out"]),
        ("", []),
        # an emoji with its variation selector, skin tone or ZWJ family stays one token
        ("I \u2764\ufe0f you \U0001f44d\U0001f3fd", ["I", "\u2764\ufe0f", "you", "\U0001f44d\U0001f3fd"]),
        ("\U0001f468\u200d\U0001f469\u200d\U0001f467 ok", ["\U0001f468\u200d\U0001f469\u200d\U0001f467", "ok"]),
        ("e\u0301te\u0301 x", ["e\u0301te\u0301", "x"]),  # combining accents stay inside the word
    ],
)
def test_tokenize_special_tokens_and_mixed_text(text, expected):
    assert tokenize(text) == expected


def test_embeddings_are_deterministic_per_token_and_seed():
    first = embed_tokens(["cat", "sat", "cat"], 16, seed=0)
    assert first.shape == (3, 16) and first.dtype == torch.float32
    assert torch.equal(first[0], first[2])  # same token, same vector
    assert not torch.allclose(first[0], first[1])  # different token, different vector
    assert torch.equal(embed_tokens(["cat", "sat", "cat"], 16, seed=0), first)  # a seed draws the same bits: exactly
    assert torch.equal(embed_tokens(["sat", "cat"], 16, seed=0)[1], first[0])  # independent of context
    assert not torch.allclose(embed_tokens(["cat"], 16, seed=1)[0], first[0])  # another seed, another vector
    as64 = embed_tokens(["cat"], 16, seed=0, dtype=torch.float64)
    assert as64.dtype == torch.float64 and torch.equal(as64.float()[0], first[0])  # drawn in float64, then cast
    assert embed_tokens([], 16).shape == (0, 16)


def test_embeddings_do_not_touch_the_global_rng():
    state = torch.random.get_rng_state()
    embed_tokens(["a", "b"], 8, seed=3)
    assert torch.equal(torch.random.get_rng_state(), state)


@pytest.mark.parametrize("d_model", [6, 7, 16])
def test_positional_encoding_matches_the_formula(d_model):
    length = 9
    expected = np.zeros((length, d_model))
    for pos in range(length):
        for i in range(d_model):
            angle = pos / 10000 ** (2 * (i // 2) / d_model)
            expected[pos, i] = math.sin(angle) if i % 2 == 0 else math.cos(angle)
    encoding = positional_encoding(length, d_model, dtype=torch.float64)
    assert encoding.shape == (length, d_model)
    np.testing.assert_allclose(encoding.numpy(), expected, rtol=0, atol=1e-12)


# ---------------------------------------------------------------- device
def test_resolve_device_cpu_and_auto_without_accelerators(monkeypatch):
    monkeypatch.delenv(TEST_DEVICE_ENV, raising=False)  # auto's own choice, not the suite's device
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(mha.device, "_mps_available", lambda: False)
    assert available_devices() == ["cpu"]
    assert resolve_device("cpu") == mha.device.DeviceChoice(torch.device("cpu"), None)
    assert resolve_device("auto") == mha.device.DeviceChoice(torch.device("cpu"), None)


@pytest.mark.parametrize("choice", ["cuda", "mps"])
def test_resolve_device_falls_back_to_cpu_with_a_reason(monkeypatch, choice):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(mha.device, "_mps_available", lambda: False)
    resolved = resolve_device(choice)
    assert resolved.device == torch.device("cpu")
    assert choice in resolved.fallback_reason and "cpu" in resolved.fallback_reason


def test_resolve_device_unknown_name():
    resolved = resolve_device("tpu")
    assert resolved.device == torch.device("cpu")
    assert "'tpu'" in resolved.fallback_reason and all(c in resolved.fallback_reason for c in DEVICE_CHOICES)


def test_resolve_device_auto_prefers_cuda_then_mps(monkeypatch):
    monkeypatch.delenv(TEST_DEVICE_ENV, raising=False)  # auto's own choice, not the suite's device
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(mha.device, "_mps_available", lambda: True)
    assert available_devices() == ["cuda", "mps", "cpu"]
    assert resolve_device("auto").device == torch.device("cuda")
    assert resolve_device("mps") == mha.device.DeviceChoice(torch.device("mps"), None)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto").device == torch.device("mps")


@pytest.mark.parametrize("pinned", ["cpu", "mps"])
def test_the_test_device_variable_decides_what_auto_means(monkeypatch, pinned):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(mha.device, "_mps_available", lambda: True)
    monkeypatch.setenv(TEST_DEVICE_ENV, pinned)
    assert resolve_device("auto") == mha.device.DeviceChoice(torch.device(pinned), None)
    assert resolve_device("cuda").device == torch.device("cuda")  # an explicit choice stays the learner's


def test_a_test_device_that_is_missing_falls_back_to_the_cpu_with_the_reason(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(mha.device, "_mps_available", lambda: False)
    monkeypatch.setenv(TEST_DEVICE_ENV, "cuda")
    resolved = resolve_device("auto")
    assert resolved.device == torch.device("cpu") and "cuda is not available" in resolved.fallback_reason


def test_the_suite_runs_on_the_device_it_was_given(device):
    """The ``device`` fixture is what ``auto`` gives, and it is the one the switch names where it is set."""
    pinned = os.environ.get(TEST_DEVICE_ENV)
    assert device == resolve_device("auto").device
    assert device.type == (pinned or available_devices()[0])


# ---------------------------------------------------------------- build_model
def test_build_model_is_deterministic_and_leaves_the_global_rng_alone():
    state = torch.random.get_rng_state()
    # pinned to the CPU: the test is about the seeded draw itself, bit for bit, whatever the suite's device
    a, b, c = (build_model(16, 4, seed=seed, device="cpu") for seed in (7, 7, 8))
    assert torch.equal(torch.random.get_rng_state(), state)
    for name, p in a.named_parameters():  # a seed draws the same bits (no sum, so no kernel choice): exactly
        assert torch.equal(p, b.state_dict()[name]), name
        assert not torch.equal(p, c.state_dict()[name]), name
    bound = 1 / math.sqrt(16)
    assert all(p.abs().max() <= bound for p in a.parameters())  # nn.Linear's default range
    assert not a.training and not any(p.requires_grad for p in a.parameters())


def test_build_model_dtype_follows_the_request():
    model = build_model(8, 2, seed=0, dtype=torch.float64)
    assert all(p.dtype == torch.float64 for p in model.parameters())
    as32 = build_model(8, 2, seed=0)
    # one float32 draw, cast to float64 and back: the same bytes
    torch.testing.assert_close(as32.W_q.weight, model.W_q.weight.float(), rtol=0, atol=0)


# ---------------------------------------------------------------- config
def test_default_config_is_valid_frozen_and_hashable():
    config = AttentionConfig()
    assert (config.d_model, config.num_heads, config.d_k) == (512, 8, 64)
    assert hash(config) == hash(AttentionConfig())
    assert {config: 1}[AttentionConfig()] == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.d_model = 64


@pytest.mark.parametrize(
    ("kwargs", "field", "code", "params"),
    [
        ({"d_model": 1}, "d_model", "out_of_range", {"value": 1, "low": LIMITS.d_model_min}),
        ({"d_model": LIMITS.d_model_max + 1}, "d_model", "out_of_range", {"high": LIMITS.d_model_max}),
        ({"d_model": "512"}, "d_model", "out_of_range", {"value": "512"}),
        ({"d_model": True}, "d_model", "out_of_range", {"value": True}),
        ({"num_heads": 0}, "num_heads", "out_of_range", {"value": 0}),
        ({"num_heads": LIMITS.num_heads_max + 1}, "num_heads", "out_of_range", {"high": LIMITS.num_heads_max}),
        ({"d_model": 10, "num_heads": 3}, "num_heads", "not_divisible", {"d_model": 10, "num_heads": 3}),
        ({"mask_type": "diagonal"}, "mask_type", "unknown", {"value": "diagonal"}),
        ({"window": -1}, "window", "out_of_range", {"value": -1}),
        ({"tokens": "x" * (LIMITS.text_chars_max + 1)}, "tokens", "too_long_text", {"high": LIMITS.text_chars_max}),
        ({"tokens": None}, "tokens", "too_long_text", {}),
        ({"seed": -1}, "seed", "out_of_range", {"value": -1}),
        ({"seed": 2**31}, "seed", "out_of_range", {"value": 2**31}),
        ({"device": "tpu"}, "device", "unknown", {"value": "tpu"}),
        ({"dtype": "float16"}, "dtype", "unknown", {"value": "float16"}),
    ],
)
def test_config_errors_name_field_code_and_numbers(kwargs, field, code, params):
    with pytest.raises(ConfigError) as info:
        AttentionConfig(**kwargs)
    error = info.value
    assert isinstance(error, ValueError)
    assert (error.field, error.code) == (field, code)
    assert params.items() <= error.params.items()


def test_check_token_count_refuses_empty_and_too_many():
    with pytest.raises(ConfigError) as empty:
        check_token_count(0)
    assert (empty.value.field, empty.value.code) == ("tokens", "empty")
    check_token_count(LIMITS.tokens_max)  # exactly at the cap is fine
    with pytest.raises(ConfigError) as many:
        check_token_count(LIMITS.tokens_max + 1)
    assert many.value.code == "too_many" and many.value.params["count"] == LIMITS.tokens_max + 1


def test_the_config_counts_tokens_with_its_own_tokenizer():
    at_cap = "字" * LIMITS.tokens_max
    AttentionConfig(tokens=at_cap)  # one token per character: exactly at the cap
    with pytest.raises(ConfigError) as many:
        AttentionConfig(tokens=at_cap + "字")
    assert many.value.params["count"] == LIMITS.tokens_max + 1
    with pytest.raises(ConfigError) as empty:
        AttentionConfig(tokens=" \n ")
    assert empty.value.code == "empty"


# ---------------------------------------------------------------- pipeline
@pytest.mark.parametrize("mask_type", MASK_TYPES)
def test_run_attention_end_to_end(mask_type, device):
    config = AttentionConfig(d_model=16, num_heads=4, mask_type=mask_type, window=1, tokens="猫 sat [PAD]")
    run = run_attention(config)  # device auto: the suite's device
    assert run.tokens == ("猫", "sat", "[PAD]")
    assert list(run.x.shape) == [1, 3, 16] and run.device.device == device
    assert run.trace.output.device.type == device.type  # a tensor says cuda:0 where the choice says cuda
    assert list(run.trace.weights.shape) == [1, 4, 3, 3]
    expected_mask = {
        "none": None,
        "causal": [[[[T, F_, F_], [T, T, F_], [T, T, T]]]],
        "padding": [[[[T, T, F_]]]],
        "window": [[[[T, T, F_], [T, T, T], [F_, T, T]]]],
    }[mask_type]
    assert (run.mask.tolist() if run.mask is not None else None) == expected_mask
    # the same config gives the same numbers (two computations: to FLOAT32); the run carries the model it ran, with
    # build_model's weights: the same seed draws the same bits, so exactly
    again = run_attention(config, SeededSource(config.weight_spec))
    torch.testing.assert_close(run.trace.output, again.trace.output, **FLOAT32)
    fresh = build_model(16, 4, seed=config.seed)  # on the CPU: a seed draws the same bits on every device
    for name, tensor in fresh.state_dict().items():
        assert torch.equal(run.model.state_dict()[name].cpu(), tensor), name
    assert (run.num_heads, run.d_model, run.d_k, run.source_kind, run.num_layers) == (4, 16, 4, "random", 1)
    assert len(run.head_labels) == 4


def test_embed_inputs_adds_positions_when_asked():
    tokens = ["a", "b", "a"]
    with_pos = embed_inputs(tokens, AttentionConfig(d_model=8, num_heads=2, positional=True), torch.device("cpu"))
    without = embed_inputs(tokens, AttentionConfig(d_model=8, num_heads=2, positional=False), torch.device("cpu"))
    assert list(with_pos.shape) == [1, 3, 8]
    torch.testing.assert_close(with_pos - without, positional_encoding(3, 8).unsqueeze(0), **EXACT32)
    assert torch.equal(without[0, 0], without[0, 2]) and not torch.equal(with_pos[0, 0], with_pos[0, 2])
