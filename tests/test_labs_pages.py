"""Every lab page through Streamlit's AppTest: runs in both languages, and its key controls change the result."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.i18n import t
from components.nav import LAB_PAGES

REPO = Path(__file__).resolve().parents[1]
_HAN = re.compile(r"[\u4e00-\u9fff]")


def open_lab(page: str, lang: str = "en") -> AppTest:
    """Run one lab page on its own, in ``lang``."""
    at = AppTest.from_file(str(REPO / page), default_timeout=60)
    at.query_params["lang"] = lang
    return at.run()


def text_of(at: AppTest) -> str:
    """Every markdown, caption, alert and title on the page, joined."""
    parts = [e.value for kind in ("title", "subheader", "markdown", "caption", "success", "error", "warning", "info")
             for e in getattr(at, kind)]  # fmt: skip
    return "\n".join(parts)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("page", "lab"), [(page, lab) for page, lab, _ in LAB_PAGES], ids=[p for p, _, _ in LAB_PAGES])
def test_every_lab_runs_in_both_languages(page, lab, lang):
    at = open_lab(page, lang)
    assert not at.exception, at.exception
    assert at.title[0].value == t(f"lab.{lab}.title", lang=lang)
    assert bool(_HAN.search(at.title[0].value)) == (lang == "zh")
    expected_errors = 1 if lab == "reshape" else 0  # the bug's verdict is shown as an error on purpose
    assert len(at.error) == expected_errors, [e.value for e in at.error]


def test_lab_pages_link_to_each_other_inside_the_app():
    if not (REPO / "playground.py").is_file():
        pytest.skip("no playground.py yet")
    at = AppTest.from_file(str(REPO / "playground.py"), default_timeout=60).run()
    at.switch_page("pages/2_head_sweep.py").run()
    assert not at.exception, at.exception
    links = at.get("page_link")
    assert len(links) == 1 + len(LAB_PAGES)


def test_scaling_switching_the_division_off_changes_the_variance_the_softmax_sees():
    at = open_lab("pages/1_scaling.py")
    scaled = float(at.metric[1].value)
    at.radio(key="scaling_mode").set_value("unscaled").run()
    unscaled = float(at.metric[1].value)
    d_k = 64  # the default of the d_k slider
    assert scaled == pytest.approx(1.0, rel=0.2) and unscaled == pytest.approx(d_k, rel=0.2)
    at.radio(key="scaling_mode").set_value("temperature").run()
    at.slider(key="scaling_temperature").set_value(2.0).run()
    assert float(at.metric[1].value) == pytest.approx(0.25, rel=0.2)  # Var / τ² with τ = 2
    assert not at.exception


def test_head_sweep_table_and_gain():
    at = open_lab("pages/2_head_sweep.py")
    table = at.dataframe[0].value
    assert table.iloc[:, 0].tolist() == [1, 2, 4, 8, 16]
    assert table.iloc[:, 2].nunique() == 1  # the same parameter count for every h
    entropy_before = table.iloc[:, 5].tolist()
    at.slider(key="heads_gain").set_value(1.0).run()
    assert at.dataframe[0].value.iloc[:, 5].tolist() != entropy_before
    at.text_input(key="heads_text").set_value("   ").run()
    assert at.error and not at.exception


def test_wrong_reshape_toggle_and_verdicts():
    at = open_lab("pages/3_wrong_reshape.py")
    assert "view(B, H, L, d_k)" in at.code[0].value
    assert t("lab.reshape.weights_title_bug", lang="en") in text_of(at)
    assert "0.00e+00" in at.success[0].value and "different numbers" in at.error[0].value
    at.toggle(key="reshape_bug").set_value(False).run()
    assert "transpose(1, 2)" in at.code[0].value
    assert t("lab.reshape.weights_title_ok", lang="en") in text_of(at)


def test_mask_translator_fully_masked_row_and_presets():
    at = open_lab("pages/4_mask_translator.py")
    runs = at.dataframe[1].value  # [0] is the editable mask
    assert len(runs) == 8
    behaviours = runs.iloc[:, 3].tolist()
    assert behaviours[0] == t("lab.masks.row.zero_context", lang="en")
    assert at.warning
    at.selectbox(key="masks_preset").set_value("causal").run()
    assert set(at.dataframe[1].value.iloc[:, 3]) == {"—"}
    assert at.info and not at.warning and not at.exception


def test_loop_vs_fused_measures_only_when_asked():
    at = open_lab("pages/5_loop_vs_fused.py")
    assert not at.dataframe and "0.0e+00" in at.success[0].value
    at.select_slider(key="loop_d_model").set_value(64)
    at.select_slider(key="loop_heads").set_value(2)
    at.slider(key="loop_repeats").set_value(1).run()
    at.button(key="loop_measure").click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert table["L"].tolist() == [16, 64, 256, 1024]
    assert all(value.endswith("×") for value in table.iloc[:, 4])


def test_complexity_measures_up_to_the_chosen_cap_and_extrapolates_the_rest():
    at = open_lab("pages/6_complexity.py")
    assert not at.dataframe
    at.select_slider(key="complexity_cap").set_value(256)
    at.select_slider(key="complexity_heads").set_value(1)
    at.slider(key="complexity_repeats").set_value(1).run()
    at.button(key="complexity_measure").click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    sources = dict(zip(zip(table.iloc[:, 0], table["L"], strict=True), table.iloc[:, 5], strict=True))
    full = t("lab.complexity.method.full", lang="en")
    assert sources[(full, 256)] == t("lab.complexity.measured", lang="en")
    assert sources[(full, 4096)] == t("lab.complexity.estimated", lang="en")
    assert "2× longer" in text_of(at)


def test_cross_attention_shapes_follow_both_sentences():
    at = open_lab("pages/7_cross_attention.py")
    shapes = at.dataframe[0].value
    assert shapes.iloc[5, 1] == "[1, 4, 12, 5]"  # scores (B, H, L_q, L_k)
    at.text_input(key="cross_key").set_value("Attention is all you need [PAD]").run()
    assert at.dataframe[0].value.iloc[5, 1] == "[1, 4, 12, 6]"
    assert t("lab.cross.padding", lang="en") in text_of(at)
    at.text_input(key="cross_query").set_value("word " * 30).run()
    assert at.error and not at.exception


def test_pattern_sculpting_sharpness_scales_the_recipe():
    at = open_lab("pages/8_pattern_sculpting.py")
    at.toggle(key="sculpt_causal").set_value(True).run()
    at.slider(key="sculpt_sharpness").set_value(0.0).run()
    assert not at.exception
    assert len(at.get("vega_lite_chart")) == 3  # the heads, then W_q and W_k


def test_encoder_block_bert_base_preset_and_norm_placement():
    at = open_lab("pages/9_encoder_block.py")
    assert [m.value for m in at.metric] == ["49,984"] * 3
    at.radio(key="encoder_preset").set_value("bert_base").run()
    assert [m.value for m in at.metric] == ["7,087,872"] * 3
    assert "the same numbers" in at.success[0].value
    at.radio(key="encoder_placement").set_value("pre").run()
    steps = at.dataframe[0].value
    assert steps.iloc[-1, 1] == "y = x₁ + FFN(LayerNorm₂(x₁))"
    assert steps.iloc[5, 2] == "[1, 11, 3072]"  # the FFN's hidden layer is d_ff wide
