"""Lab 14's page in AppTest: its verdicts say what the engine measures, and the Measure button draws both bargains."""

from __future__ import annotations

import re
from pathlib import Path

import torch
from streamlit.testing.v1 import AppTest

from components.i18n import t
from components.labs.efficient import D_MODEL, DEFAULT_TEXT
from mha.experiments.inputs import token_heads
from mha.tokens import tokenize

REPO = Path(__file__).resolve().parents[1]
PAGE = str(REPO / "pages/14_efficient.py")


def _open(lang: str = "en") -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["lang"] = lang
    return at.run()


def _printed_difference(box: str) -> float:
    return float(re.search(r"= ([0-9.e+-]+) [>≤]", box).group(1))


def test_the_weights_verdict_prints_the_difference_of_two_formulas_written_here():
    at = _open()
    assert not at.exception, at.exception
    tokens = tokenize(DEFAULT_TEXT["en"])
    q, k, _ = token_heads(tokens, D_MODEL, 2)  # the page's default: 2 heads
    softmax = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1)
    features_q, features_k = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
    kernel = features_q @ features_k.transpose(-2, -1)
    implied = kernel / kernel.sum(-1, keepdim=True)
    expected = float((softmax - implied).abs().max())
    check = t("lab.efficient.check.weights", lang="en")
    box = next(w.value for w in at.warning if w.value.startswith(check))
    assert abs(_printed_difference(box) - expected) <= 0.005 * expected  # 3 significant digits printed
    assert len(at.error) == 0 and len(at.success) == 3  # the state's form and both sparse runs agree


def test_causal_toggle_checks_the_running_sum_and_a_changed_pattern_changes_the_kept_share():
    at = _open("zh")
    at.toggle(key="efficient_causal").set_value(True).run()
    assert not at.exception, at.exception
    assert any(s.value.startswith(t("lab.efficient.check.running_sum", lang="zh")) for s in at.success)
    kept = t("lab.efficient.metric.kept", lang="zh", pattern=t("lab.efficient.panel.longformer", lang="zh"))
    before = next(m.value for m in at.metric if m.label == kept)
    at.slider(key="efficient_window").set_value(3).run()
    after = next(m.value for m in at.metric if m.label == kept)
    assert float(after.rstrip("%")) > float(before.rstrip("%"))


def test_measure_draws_both_bargains_and_says_where_they_cross():
    at = _open()
    at.select_slider(key="efficient_cap").set_value(512).run()
    at.slider(key="efficient_repeats").set_value(3).run()
    at.button(key="efficient_measure").click().run()
    assert not at.exception, at.exception
    assert len(at.get("vega_lite_chart")) >= 3  # the two masks, then time and memory of each bargain
    text = "\n".join(m.value for m in at.markdown)
    assert "L ≈ d" in text and "512" in text
