"""Many people on one server: each sees only their own results, and the shared model never changes.

* In a real Chromium: 8 browser contexts (8 separate sessions) open the page at once against
  one server, each with its own sentence (a unique marker word) and its own d_model; after
  all have loaded, each shows only its own tokens and shapes. Then all 8 type a new sentence
  at the same moment, and again each sees only its own.
* In this process (AppTest): 8 sessions share the cached models; afterwards every cached
  model's weights are identical to a freshly built one, it holds nothing but its four
  projections, and every cached run equals a fresh computation.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch
from conftest import console_errors, wait_for_app
from streamlit.testing.v1 import AppTest
from test_browser_controls import drawn_charts, main_text, no_errors, settle, text_appears, token_line
from tolerances import FLOAT32

import components.runner as runner
import mha.sources.seeded as seeded
from mha.config import RANDOM, AttentionConfig, WeightSpec
from mha.device import resolve_device
from mha.pipeline import run_attention
from mha.sources.seeded import SeededSource, build_model

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
USERS = 8
D_MODELS = (32, 48, 64, 96, 128, 160, 192, 256)  # one per user; each divisible by 4 heads
MARKERS = ("kiwi", "mango", "plum", "fig", "lime", "pear", "date", "yuzu")


def _sentence(user: int, round_: int) -> list[str]:
    """User ``user``'s tokens: a marker word only this user types, and a length of its own (3 + user)."""
    return [f"{MARKERS[user]}{round_}", *[f"w{user}x{i}" for i in range(2 + user)]]


def _line(tokens: list[str]) -> str:
    return " · ".join(f"{i}:{token}" for i, token in enumerate(tokens))


def _check_only_own(pages: list, round_: int) -> None:
    for user, page in enumerate(pages):
        tokens, d_model = _sentence(user, round_), D_MODELS[user]
        text = main_text(page)
        assert _line(tokens) in token_line(page)
        assert f"x [1, {len(tokens)}, {d_model}]" in text  # (B, L, d_model): this user's L and width
        assert f"[1, 4, {len(tokens)}, {d_model // 4}]" in text  # (B, h, L, d_k)
        for other in range(USERS):
            if other != user:
                assert f"{MARKERS[other]}{round_}" not in text, (user, other)
                assert f"x [1, {len(_sentence(other, round_))}, {D_MODELS[other]}]" not in text


@pytest.mark.browser
def test_eight_sessions_at_once_each_see_only_their_own_results(app_url, browser):
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US") for _ in range(USERS)]
    try:
        pages = [context.new_page() for context in contexts]
        for page in pages:
            page.collected_console = []
            page.on("console", lambda message, page=page: page.collected_console.append(message))
            page.on("pageerror", lambda error, page=page: page.collected_console.append(error))
        for user, page in enumerate(pages):  # start all eight loads before waiting for any
            query = f"d_model={D_MODELS[user]}&num_heads=4&tokens={'+'.join(_sentence(user, 0))}&lang=en"
            page.goto(f"{app_url}/?{query}", wait_until="commit")
        for page in pages:
            wait_for_app(page, timeout_ms=180_000)
            drawn_charts(page, timeout_ms=180_000)
        _check_only_own(pages, round_=0)

        for user, page in enumerate(pages):  # all eight change their sentence at the same moment
            area = page.locator(".st-key-tokens textarea")
            area.fill(" ".join(_sentence(user, 1)))
            area.press("Control+Enter")
        for user, page in enumerate(pages):
            settle(page, text_appears(_line(_sentence(user, 1))), timeout_ms=180_000)
        _check_only_own(pages, round_=1)
        for page in pages:
            no_errors(page)
            assert console_errors(page) == []
    finally:
        for context in contexts:
            context.close()


# ---------------------------------------------------------------- the shared model, in this process
def _sessions() -> list[dict[str, str]]:
    """Eight sessions over four models (two sessions per d_model), with different texts and masks."""
    masks = ("none", "causal", "padding", "window")
    return [
        {
            "d_model": str((32, 64)[user % 2] * (1 + user // 4)),
            "num_heads": "4",
            "mask_type": masks[user % 4],
            "tokens": " ".join(_sentence(user, 0)) + (" [PAD]" if masks[user % 4] == "padding" else ""),
            "seed": str(user // 2 % 2),
        }
        for user in range(USERS)
    ]


def test_a_cached_run_is_keyed_by_every_field_of_its_config():
    """The caches hash a config by its repr (``cache.HASH_KEYS``): every field is in it, and runs follow it."""
    config = AttentionConfig(d_model=16, num_heads=2, tokens="a b c")
    shown = repr(config)
    assert all(field.repr and f"{field.name}=" in shown for field in dataclasses.fields(AttentionConfig))
    runner.cached_run.clear()
    first = runner.cached_run(config)
    assert runner.cached_run(dataclasses.replace(config)) is first  # an equal config finds the same run
    for change in ({"seed": 1}, {"positional": False}, {"mask_type": "causal"}, {"tokens": "a b"}, {"d_model": 32}):
        assert runner.cached_run(dataclasses.replace(config, **change)) is not first, change


def test_the_cached_model_is_never_mutated_by_the_sessions(monkeypatch):
    builds: list[tuple[int, int, int]] = []

    def counting_build(d_model, num_heads, seed, *args, **kwargs):
        builds.append((d_model, num_heads, seed))
        return build_model(d_model, num_heads, seed, *args, **kwargs)

    monkeypatch.setattr(seeded, "build_model", counting_build)
    for cached in (runner.cached_source, runner.cached_run, runner.cached_torch_checks):
        cached.clear()
    sessions = [AppTest.from_file(SCRIPT, default_timeout=60) for _ in range(USERS)]
    for at, params in zip(sessions, _sessions(), strict=True):
        at.query_params.update({**params, "lang": "en"})
        at.run()
    for at in sessions:  # each session again, after all the others used the shared models
        at.run()
    configs = []
    for user, at in enumerate(sessions):
        assert not at.exception, [e.value for e in at.exception]
        text = "\n".join(str(m.value) for m in at.markdown)
        assert f"{MARKERS[user]}0" in text
        assert not [m for other, m in enumerate(MARKERS) if other != user and f"{m}0" in text]
        params = _sessions()[user]
        configs.append(
            AttentionConfig(
                d_model=int(params["d_model"]),
                num_heads=4,
                mask_type=params["mask_type"],
                tokens=at.text_area(key="tokens").value,
                seed=int(params["seed"]),
            )
        )

    device = str(resolve_device("auto").device)
    models = sorted(set(builds))
    assert len(models) == len(builds) <= 8  # each model built once, then shared
    for d_model, num_heads, seed in models:
        source = runner.cached_source(WeightSpec(RANDOM, d_model, num_heads, seed))
        shared = source.model(torch.device(device), "float32")
        fresh = build_model(d_model, num_heads, seed, device)
        assert len(builds) == len(models)  # that was the cached one, not a new build
        assert shared.state_dict().keys() == fresh.state_dict().keys()
        for name, tensor in shared.state_dict().items():  # a seed draws the same bits: any change would show
            assert torch.equal(tensor, fresh.state_dict()[name]), name
        assert set(vars(shared)) == set(vars(fresh))  # no attention or input kept on the model
        assert set(dict(shared.named_buffers())) == set()
        assert not shared.training
        assert not any(parameter.requires_grad for parameter in shared.parameters())
    for config in configs:  # and what each session was shown is what a fresh computation gives
        shown = runner.cached_run(config)
        again = run_attention(config, SeededSource(config.weight_spec))
        assert shown.model is runner.cached_source(config.weight_spec).model(torch.device(device), "float32")
        assert shown.tokens == again.tokens
        torch.testing.assert_close(shown.trace.output, again.trace.output, **FLOAT32)  # two computations
        torch.testing.assert_close(shown.trace.weights, again.trace.weights, **FLOAT32)
