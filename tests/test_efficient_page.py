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
    """The multiply-add count is stated as a count (equal at L = d), and the measured crossing the page prints is
    the one its own table of medians shows: linear no slower from that L on, and not faster just before it."""
    at = _open()
    at.select_slider(key="efficient_cap").set_value(512).run()
    at.slider(key="efficient_repeats").set_value(3).run()
    at.button(key="efficient_measure").click().run()
    assert not at.exception, at.exception
    assert len(at.get("vega_lite_chart")) >= 3  # the two masks, then time and memory of each bargain
    text = "\n".join(m.value for m in at.markdown)
    assert "equal at L = 64" in text  # 2·L²·d = 2·L·d² at L = d, the page's default d = 64
    table = next(d.value for d in at.dataframe if t("lab.efficient.col.method", lang="en") in d.value.columns)
    ms = {
        (method, int(length)): float(value)
        for method, length, value in zip(
            table[t("lab.efficient.col.method", lang="en")], table["L"], table[t("lab.efficient.col.ms", lang="en")],
            strict=True,
        )
    }  # fmt: skip
    softmax, linear = t("lab.efficient.method.softmax", lang="en"), t("lab.efficient.method.linear", lang="en")
    lengths = sorted(length for method, length in ms if method == softmax)
    assert lengths[-1] == 512
    found = re.search(r"In time, linear attention costs less than softmax attention from L = (\d+) on", text)
    if found is None:  # "did not stay below": at the longest length linear was not faster
        assert "In time, linear attention did not stay below softmax attention up to L = 512" in text
        assert ms[linear, 512] >= ms[softmax, 512]
    else:
        crossing = int(found.group(1))
        assert all(ms[linear, n] <= ms[softmax, n] for n in lengths if n >= crossing)  # printed to 3 decimals
        if crossing > lengths[0]:
            before = lengths[lengths.index(crossing) - 1]
            assert ms[linear, before] >= ms[softmax, before]


def test_the_state_caption_says_which_holds_more_on_the_learners_tokens():
    """L² weights against d² + d numbers of the state, worked out here: a sentence past L ≈ d gets the other caption."""
    at = _open()
    for text, heads in [(DEFAULT_TEXT["en"], 2), (" ".join(f"w{i}" for i in range(20)), 4)]:
        at.text_input(key="efficient_text").set_value(text)
        at.select_slider(key="efficient_heads").set_value(heads).run()
        assert not at.exception, at.exception
        length, head_dim = len(tokenize(text)), D_MODEL // heads
        key = (
            "lab.efficient.state_caption_past" if length**2 > head_dim**2 + head_dim else "lab.efficient.state_caption"
        )
        expected = t(key, lang="en", d=head_dim, length=length)
        assert any(c.value == expected for c in at.caption), (length, head_dim)
