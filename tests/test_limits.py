"""Caps that protect a shared server: a request over one is refused before any tensor is made.

The caps (``mha.config.LIMITS``): 128 tokens, d_model 2..1024, 1..64 heads, 2000 characters
of text; batch is always 1 (the page runs one sentence; no control asks for more). Time and
peak memory of the worst allowed request are measured by ``python -m bench --only limits``
(docs/PERFORMANCE.md, "Limits"; README, "Limits"); here: the refusals, and the tensor bytes of the
worst allowed request.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest
import streamlit as st
import torch
from streamlit.testing.v1 import AppTest
from torch.overrides import TorchFunctionMode

import components.runner as runner
import mha.pipeline as pipeline
import mha.sources.seeded as seeded
from components import controls
from mha.config import LIMITS, AttentionConfig, ConfigError
from mha.pipeline import run_attention
from mha.sources.seeded import build_model

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
VALID: controls.Choices = {
    **{item.name: item.default for item in fields(AttentionConfig)},
    **{"d_model": 64, "num_heads": 4, "mask_type": "none", "window": 2, "tokens": "the cat sat", "device": "cpu"},
}
WORST_TENSOR_BUDGET = 64 * 2**20  # bytes: the stated budget for the worst allowed request's tensors


class NoTensors(TorchFunctionMode):
    """Inside this mode (this thread), any torch function or tensor method call fails the test."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise AssertionError(f"a tensor operation ran before the request was refused: {func}")


def over(**changes: object) -> controls.Choices:
    return {**VALID, **changes}


OVER_CAP = {
    "d_model above the cap": over(d_model=LIMITS.d_model_max + 1),
    "d_model of a billion": over(d_model=10**9),
    "d_model below the floor": over(d_model=1),
    "negative d_model": over(d_model=-512),
    "heads above the cap": over(d_model=1024, num_heads=LIMITS.num_heads_max * 2),
    "a million heads": over(num_heads=10**6),
    "no heads": over(num_heads=0),
    "window above the cap": over(mask_type="window", window=LIMITS.tokens_max + 1),
    "seed above the cap": over(seed=2**63),
    "text over the character cap": over(tokens="a" * (LIMITS.text_chars_max + 1)),
    "tokens over the cap": over(tokens=" ".join(["w"] * (LIMITS.tokens_max + 1))),
    "20,000 tokens": over(tokens=" ".join(["w"] * 20_000)),
    "no tokens": over(tokens=" \n "),
    "unknown mask": over(mask_type="diagonal"),
    "unknown device": over(device="tpu"),
}


@pytest.mark.parametrize("name", list(OVER_CAP))
def test_the_page_validation_refuses_over_cap_requests_before_any_tensor(name, monkeypatch):
    shown: list[str] = []
    monkeypatch.setattr(st, "error", lambda message, *args, **kwargs: shown.append(message))
    with NoTensors():
        config = controls.build_config(OVER_CAP[name])
    assert config is None
    assert shown  # a message for the user, naming what to change
    assert all(isinstance(message, str) and message for message in shown)


def test_the_guard_catches_a_tensor_operation():
    with NoTensors(), pytest.raises(AssertionError, match="tensor operation"):
        run_attention(AttentionConfig(d_model=8, num_heads=2, tokens="a b"))


def test_valid_choices_pass_the_same_path():
    assert controls.build_config(VALID) == AttentionConfig(**VALID)


@pytest.mark.parametrize(
    "changes",
    [{"d_model": LIMITS.d_model_max + 1}, {"num_heads": LIMITS.num_heads_max + 1}, {"seed": -1}, {"window": -1}],
)
def test_the_config_itself_refuses_before_any_tensor(changes):
    with NoTensors(), pytest.raises(ConfigError) as refused:
        AttentionConfig(**{**VALID, **changes})
    (field,) = changes
    assert refused.value.field == field


def test_over_cap_tokens_are_refused_by_the_config_before_any_tensor():
    text = " ".join(f"w{i}" for i in range(LIMITS.tokens_max + 1))
    with NoTensors(), pytest.raises(ConfigError) as refused:
        AttentionConfig(d_model=64, num_heads=4, tokens=text)
    assert (refused.value.code, refused.value.params["count"]) == ("too_many", LIMITS.tokens_max + 1)


def _forbid(monkeypatch, module, *names: str) -> None:
    for name in names:

        def refuse(*args, _name=name, **kwargs):
            raise AssertionError(f"{module.__name__}.{_name} ran for a request over a cap")

        monkeypatch.setattr(module, name, refuse)


def test_the_page_refuses_typed_over_cap_text_without_touching_the_engine(monkeypatch):
    at = AppTest.from_file(SCRIPT, default_timeout=60)
    at.query_params.update({"d_model": "64", "num_heads": "4", "tokens": "the cat sat"})
    at.run()
    assert not at.exception
    # from here on, any model, embedding or run would fail the page (the script runs in another thread)
    _forbid(monkeypatch, runner, "make_source", "run_attention", "compare_with_torch")
    _forbid(monkeypatch, pipeline, "make_source", "build_mask")
    _forbid(monkeypatch, seeded, "build_model", "embed_tokens", "embed_inputs", "positional_encoding")
    _forbid(monkeypatch, torch, "randn", "empty", "zeros", "ones", "rand", "tensor", "stack")
    for text in (" ".join(f"w{i}" for i in range(LIMITS.tokens_max + 1)), "字" * 1500):
        at.text_area(key="tokens").set_value(text).run()
        assert not at.exception, [e.value for e in at.exception]
        (error,) = at.error
        assert str(LIMITS.tokens_max) in error.value
    at.text_area(key="tokens").set_value("a fresh sentence").run()  # runnable: the guard must fire
    assert at.exception


def test_a_billion_wide_link_builds_nothing_wider_than_the_cap(monkeypatch):
    built: list[tuple[int, int]] = []
    ran: list[AttentionConfig] = []

    def recording_build(d_model, num_heads, *args, **kwargs):
        built.append((d_model, num_heads))
        return build_model(d_model, num_heads, *args, **kwargs)

    def recording_run(config, source=None, image=None):
        ran.append(config)
        return run_attention(config, source, image)

    monkeypatch.setattr(seeded, "build_model", recording_build)
    monkeypatch.setattr(runner, "run_attention", recording_run)
    for cached in (runner.cached_source, runner.cached_run, runner.cached_torch_checks):
        cached.clear()
    at = AppTest.from_file(SCRIPT, default_timeout=120)
    at.query_params.update(
        {"d_model": "1000000000", "num_heads": "1000000", "tokens": "w " * 20_000, "window": "9" * 40}
    )
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert built == [(LIMITS.d_model_max, LIMITS.num_heads_max)]
    (config,) = ran
    assert (config.d_model, config.num_heads, config.window) == (1024, 64, LIMITS.tokens_max)
    run = runner.cached_run(config)
    assert run.x.shape == (1, LIMITS.tokens_max, LIMITS.d_model_max)  # batch 1, the caps
    assert max(tensor.numel() for tensor in run.trace.tensors().values()) <= 64 * 128 * 128


def _storage_bytes(tensors) -> int:
    storages = {tensor.untyped_storage().data_ptr(): tensor.untyped_storage().nbytes() for tensor in tensors}
    return sum(storages.values())


@pytest.mark.parametrize("num_heads", [LIMITS.num_heads_max, 16])
def test_the_worst_allowed_request_stays_within_its_tensor_budget(num_heads):
    d_model, length = LIMITS.d_model_max, LIMITS.tokens_max
    config = AttentionConfig(
        d_model=d_model, num_heads=num_heads, mask_type="causal", tokens=" ".join(f"w{i}" for i in range(length))
    )
    run = run_attention(config)
    model = run.model
    held = _storage_bytes([*model.parameters(), run.x, *run.trace.tensors().values()])
    # float32: 4 (D² + D) parameters; x, the fused Q|K|V (3), context, concat, output: 7 (L, D), +1 to spare;
    # raw, scaled, masked scores and weights: 4 (H, L, L); and the (L, L) bool mask
    expected = 4 * (4 * (d_model**2 + d_model) + 8 * length * d_model + 4 * num_heads * length**2) + length**2
    assert held <= expected
    assert held <= WORST_TENSOR_BUDGET
    assert run.x.shape[0] == 1
