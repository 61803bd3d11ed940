"""Every lab page through Streamlit's AppTest: runs in both languages, and its key controls change the result."""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import streamlit as st
import torch
from streamlit.testing.v1 import AppTest
from tolerances import printed_forms

from components.i18n import t
from components.labs import cross, encoder, loop, reshape
from components.labs.common import format_bytes
from components.nav import LAB_PAGES
from components.safe_text import md_escape
from mha.config import AttentionConfig
from mha.experiments import tutorial_code
from mha.experiments.inputs import token_inputs
from mha.experiments.tutorial_causal import FIX_CODE, section2_lines, section5_line, tutorial_module
from mha.masks import causal_mask
from mha.module import MultiHeadAttention
from mha.pipeline import AttentionRun, run_attention
from mha.sources import make_source
from mha.sources.seeded import build_model
from mha.tokens import token_labels, tokenize
from mha.training.tasks import IGNORE

REPO = Path(__file__).resolve().parents[1]
_HAN = re.compile(r"[\u4e00-\u9fff]")


def open_lab(page: str, lang: str = "en") -> AppTest:
    """Run one lab page on its own, in ``lang``."""
    at = AppTest.from_file(str(REPO / page), default_timeout=60)
    at.query_params["lang"] = lang
    return at.run()


def metric(at: AppTest, key: str, **params) -> str:
    """The value of the metric labelled ``t(key)`` (English)."""
    label = t(key, lang="en", **params)
    return next(m.value for m in at.metric if m.label == label)


def column(key: str, **params) -> str:
    """A column name as the English page writes it."""
    return t(key, lang="en", **params)


def find_table(at: AppTest, key: str, lang: str = "en", **params) -> pd.DataFrame:
    """The table on the page that has the column ``t(key)``; KeyError when there is none."""
    name = t(key, lang=lang, **params)
    for frame in at.dataframe:
        if name in frame.value.columns:
            return frame.value
    raise KeyError(name)


def chart_data(at: AppTest) -> list[pd.DataFrame]:
    """The data of every Altair chart on the page (its datasets, Arrow -> pandas, stacked)."""
    frames = []
    for element in at.get("vega_lite_chart"):
        datasets = [pa.ipc.open_stream(io.BytesIO(d.data.data)).read_all().to_pandas() for d in element.proto.datasets]
        frames.append(pd.concat(datasets, ignore_index=True) if datasets else pd.DataFrame())
    return frames


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
    expected_errors = 1 if lab == "reshape" else 0  # the bug measures far above the tolerance: a red box
    assert len(at.error) == expected_errors, [e.value for e in at.error]


def test_lab_pages_link_to_each_other_inside_the_app():
    at = AppTest.from_file(str(REPO / "playground.py"), default_timeout=60).run()
    at.switch_page("pages/2_heads.py").run()
    assert not at.exception, at.exception
    links = at.get("page_link")
    assert len(links) == 1 + len(LAB_PAGES)


def test_scaling_switching_the_division_off_changes_the_variance_the_softmax_sees():
    at = open_lab("pages/1_scaling.py")
    scaled = float(metric(at, "lab.scaling.metric.variance_scaled"))
    at.radio(key="scaling_mode").set_value("unscaled").run()
    unscaled = float(metric(at, "lab.scaling.metric.variance_scaled"))
    d_k = 64  # the default of the d_k slider
    assert scaled == pytest.approx(1.0, rel=0.2) and unscaled == pytest.approx(d_k, rel=0.2)
    at.radio(key="scaling_mode").set_value("temperature").run()
    at.slider(key="scaling_temperature").set_value(2.0).run()
    assert float(metric(at, "lab.scaling.metric.variance_scaled")) == pytest.approx(0.25, rel=0.2)  # Var / τ²
    assert not at.exception


def test_scaling_entropy_is_in_bits_and_each_colour_keeps_one_meaning():
    at = open_lab("pages/1_scaling.py")
    entropy = float(metric(at, "lab.scaling.metric.entropy"))
    assert 0 < entropy <= 5.0  # bits: log2 of the 32 keys is the most there can be
    colours: dict[str, set[str]] = {}  # series name -> every colour it is drawn in, over all charts
    for element in at.get("vega_lite_chart"):
        for scale in _colour_scales(json.loads(element.proto.spec)):
            for name, colour in zip(scale["domain"], scale["range"], strict=True):
                colours.setdefault(name, set()).add(colour)
    assert colours[t("lab.scaling.series.scaled", lang="en")] == {"#c2410c"}  # orange = ÷ √d_k, in every chart
    assert colours[t("lab.scaling.series.unscaled", lang="en")] == {"#2563eb"}
    assert colours[t("lab.scaling.series.measured", lang="en")] == {"#525252"}  # the raw variance: not orange
    everyone = [colour for names in colours.values() for colour in names]
    assert len(everyone) == len(set(everyone))  # no colour means two things


def _colour_scales(node: object) -> list[dict]:
    """Every colour scale with an explicit domain and range in a Vega-Lite spec."""
    if isinstance(node, list):
        return [scale for item in node for scale in _colour_scales(item)]
    if not isinstance(node, dict):
        return []
    scale = node.get("encoding", {}).get("color", {}).get("scale", {}) if isinstance(node.get("encoding"), dict) else {}
    found = [scale] if "domain" in scale and "range" in scale else []
    return found + [each for value in node.values() for each in _colour_scales(value)]


def test_head_sweep_table_and_gain():
    at = open_lab("pages/2_heads.py")
    table = find_table(at, "lab.heads.col.h")
    assert table[column("lab.heads.col.h")].tolist() == [1, 2, 4, 8, 16]
    assert table[column("lab.heads.col.params")].nunique() == 1  # the same parameter count for every h
    entropy = column("lab.heads.col.entropy")
    assert "bits" in entropy
    before = table[entropy].tolist()
    at.slider(key="heads_gain").set_value(1.0).run()
    assert find_table(at, "lab.heads.col.h")[entropy].tolist() != before
    at.text_input(key="heads_text").set_value("   ").run()
    assert at.error and not at.exception


def test_heads_are_numbered_from_zero_in_every_lab():
    heads = open_lab("pages/2_heads.py")
    panels = set(pd.concat(chart_data(heads))["panel"].dropna())
    assert t("lab.heads.panel", lang="en", h=16) in panels  # "h = 16, head 0"
    assert {t("lab.common.head", lang="en", n=n) for n in range(8)} <= panels  # the default h = 8: heads 0..7
    assert t("lab.common.head", lang="en", n=8) not in panels
    entropy_dots = next(frame for frame in chart_data(heads) if "entropy" in frame).dropna(subset=["h", "head"])
    assert entropy_dots.groupby("h")["head"].min().eq(0).all()
    assert entropy_dots.groupby("h")["head"].max().tolist() == [h - 1 for h in sorted(entropy_dots["h"].unique())]
    reshape = open_lab("pages/3_reshape.py")
    columns = set(pd.concat(chart_data(reshape))["column"].dropna())
    assert t("lab.common.head", lang="en", n=0) in columns and t("lab.common.head", lang="en", n=4) not in columns


def test_wrong_reshape_toggle_and_verdicts():
    at = open_lab("pages/3_reshape.py")
    (code,) = at.code  # the one split the page shows
    assert "view(B, H, L, d_k)" in code.value
    assert t("lab.reshape.weights_title_bug", lang="en") in text_of(at)
    correct = next(box.value for box in at.success if t("lab.reshape.correct_check", lang="en") in box.value)
    wrong = next(box.value for box in at.error if t("lab.reshape.wrong_check", lang="en") in box.value)
    assert "0.00e+00" in correct and "different numbers" in wrong
    at.toggle(key="reshape_bug").set_value(False).run()
    (code,) = at.code
    assert "transpose(1, 2)" in code.value
    assert t("lab.reshape.weights_title_ok", lang="en") in text_of(at)


def test_mask_translator_fully_masked_row_and_presets():
    at = open_lab("pages/4_masks.py")
    runs = find_table(at, "lab.masks.col.implementation")
    implementation, gives = column("lab.masks.col.implementation"), column("lab.masks.col.masked_rows")
    behaviour = dict(zip(runs[implementation], runs[gives], strict=False))
    assert len(runs) == 10
    assert behaviour[t("lab.masks.impl.ours", lang="en")] == t("lab.masks.row.zero_context", lang="en")
    assert behaviour[t("lab.masks.impl.tutorial2", lang="en")] == t("lab.masks.row.nan", lang="en")
    empty_rows = t("lab.masks.empty_rows", lang="en", rows="").split(".")[0]  # "Fully masked query rows: "
    assert any(box.value.startswith(empty_rows) for box in at.warning)
    at.selectbox(key="masks_preset").set_value("causal").run()
    assert set(find_table(at, "lab.masks.col.implementation")[gives]) == {"—"}
    assert t("lab.masks.no_empty_rows", lang="en") in [box.value for box in at.info] and not at.exception
    assert not any(box.value.startswith(empty_rows) for box in at.warning)
    assert t("lab.masks.triu_caption", lang="en") in text_of(at)  # causal: the second tutorial's triu is ~keep


def test_mask_translator_shows_the_second_tutorials_spelling_beside_the_others():
    for lang in ("en", "zh"):
        at = open_lab("pages/4_masks.py", lang)
        header = t("lab.masks.col.spelling", lang=lang)
        table = next(md.value for md in at.markdown if md.value.startswith(f"| {header} |"))
        rows = {line.split(" | ")[0].strip("| "): line for line in table.splitlines()[2:]}
        forms = [t(f"lab.masks.form.{form}", lang=lang) for form in ("keep", "block", "tutorial2", "additive")]
        assert list(rows) == forms
        tutorial2 = rows[t("lab.masks.form.tutorial2", lang=lang)]
        assert t("lab.masks.true_means.block", lang=lang) in tutorial2 and "`scores.masked_fill_(mask" in tutorial2
        panels = set(pd.concat(chart_data(at))["panel"].dropna())
        assert t("lab.masks.form.tutorial2", lang=lang) in panels


def _mixup_cells(at: AppTest, lang: str) -> pd.DataFrame:
    """The cells of lab 4's case chart (found by its panels): ``panel, row, column, value, nan, text``."""
    as_written = t("lab.masks.mixup.as_written", lang=lang, head=0)
    return next(frame for frame in chart_data(at) if "panel" in frame and as_written in set(frame["panel"]))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_mask_translator_puts_the_first_tutorials_two_causal_masks_together(lang):
    at = open_lab("pages/4_masks.py", lang)
    assert not at.exception, at.exception
    assert t("lab.masks.mixup.title", lang=lang) in [header.value for header in at.subheader]
    codes = [code.value for code in at.code]
    assert section5_line() in codes and section2_lines() in codes  # the tutorial's lines, as it writes them
    assert FIX_CODE["tril"] in codes and "if mask is not None:\n    scores = scores + mask" in codes
    tokens, seed = tokenize(at.text_input(key="masks_text").value), int(at.number_input(key="masks_seed").value)
    cells = _mixup_cells(at, lang)
    labels = token_labels(tokens)
    # the tutorial's module, run here with the lab's weights, gives the numbers drawn
    model = build_model(16, 2, seed)
    x = token_inputs(tokens, 16, seed)
    with torch.no_grad():
        _, written = tutorial_module(model)(x, x, x, tutorial_code.section5_causal_mask(len(tokens)))  # (1, H, L, L)
        _, intended = model(x, x, x, causal_mask(len(tokens)))
    for head in range(2):
        for name, weights in (("as_written", written), ("intended", intended)):
            panel = cells[cells["panel"] == t(f"lab.masks.mixup.{name}", lang=lang, head=head)]
            drawn = panel.pivot(index="row", columns="column", values="value").loc[labels, labels].to_numpy()
            np.testing.assert_allclose(drawn, weights[0, head].numpy(), rtol=0, atol=1e-6)
            nan_rows = set(panel.loc[panel["nan"] != "", "row"])
            assert nan_rows == ({labels[-1]} if name == "as_written" else set())  # the last row, marked
            assert set(panel.loc[panel["nan"] != "", "text"]) <= {"NaN"}
    # the page's reading of the pattern: every row but the last looks only ahead; the last is NaN
    expected = [
        t("lab.masks.mixup.future_only", lang=lang, rows=md_escape(", ".join(labels[:-1]))),
        t("lab.masks.mixup.nan_rows", lang=lang, rows=md_escape(labels[-1])),
    ]
    assert "\n\n".join(expected) in [box.value for box in at.warning]
    fix_ok = t("lab.masks.mixup.fix_ok", lang=lang, weights="", output="", tol="").split("|Δ|")[0]
    assert sum(box.value.startswith(fix_ok) for box in at.success) == 2
    if lang == "en":  # AppTest re-sends the preset box's English option names, which a Chinese page does not have
        at.text_input(key="masks_text").set_value("a b c").run()
        cells = _mixup_cells(at, lang)
        assert set(cells.loc[cells["nan"] != "", "row"]) == {"2:c"}


def test_step_2_links_to_the_tutorials_causal_masks_only_when_the_mask_is_causal():
    def case_links(mask_type: str) -> list:
        at = AppTest.from_file(str(REPO / "playground.py"), default_timeout=60)
        for key, value in {"d_model": "64", "num_heads": "4", "tokens": "a b c", "mask_type": mask_type}.items():
            at.query_params[key] = value
        at.run()
        assert not at.exception, at.exception
        return [link for link in at.get("page_link") if link.proto.label == t("step2.causal_case", lang="en")]

    (link,) = case_links("causal")
    assert link.proto.page == "masks"
    assert case_links("none") == [] and case_links("window") == []


def test_loop_vs_fused_measures_only_when_asked():
    at = open_lab("pages/5_loop.py")
    assert not find_table(at, "lab.loop.col.params").empty
    with pytest.raises(KeyError):
        find_table(at, "lab.loop.col.ratio")
    same = next(box.value for box in at.success if t("lab.loop.equality_check", lang="en") in box.value)
    assert "≤ 1e-04: the same numbers" in same
    at.select_slider(key="loop_d_model").set_value(64)
    at.select_slider(key="loop_heads").set_value(2)
    at.slider(key="loop_repeats").set_value(3).run()
    at.button(key="loop_measure").click().run()
    assert not at.exception, at.exception
    table = find_table(at, "lab.loop.col.ratio")
    assert table["L"].tolist() == [16, 64, 256, 1024]
    assert all(value.endswith("×") for value in table[column("lab.loop.col.ratio")])
    full_width = column("lab.loop.col.median", variant=t("lab.loop.variant.full_width", lang="en"))
    assert table.set_index("L").loc[16, full_width] != "—"  # 16 tokens at d_model 64: small enough to time
    assert "median" in text_of(at) and "shared" in text_of(at)


def test_loop_vs_fused_counts_the_second_tutorials_full_width_heads():
    at = open_lab("pages/5_loop.py")
    at.select_slider(key="loop_d_model").set_value(128)
    at.select_slider(key="loop_heads").set_value(4).run()
    params = find_table(at, "lab.loop.col.params")
    counts = dict(zip(params[column("lab.loop.col.variant")], params[column("lab.loop.col.params")], strict=True))
    d, h = 128, 4
    assert counts[t("lab.loop.variant.fused", lang="en")] == f"{4 * d * d + 4 * d:,}"
    assert counts[t("lab.loop.variant.full_width", lang="en")] == f"{h * 3 * (d * d + d) + h * d * d + d:,}"


def test_complexity_measures_up_to_the_chosen_cap_and_extrapolates_the_rest():
    at = open_lab("pages/6_complexity.py")
    with pytest.raises(KeyError):
        find_table(at, "lab.complexity.col.source")
    at.select_slider(key="complexity_cap").set_value(256)
    at.select_slider(key="complexity_heads").set_value(1)
    at.slider(key="complexity_repeats").set_value(3).run()
    assert "1 × 4096 × 4096" in text_of(at)  # the note speaks of the chosen head count
    at.button(key="complexity_measure").click().run()
    assert not at.exception, at.exception
    table = find_table(at, "lab.complexity.col.source")
    method, source = column("lab.complexity.col.method"), column("lab.complexity.col.source")
    sources = dict(zip(zip(table[method], table["L"], strict=True), table[source], strict=True))
    full = t("lab.complexity.method.full", lang="en")
    assert sources[(full, 256)] == t("lab.complexity.measured", lang="en")
    assert sources[(full, 4096)] == t("lab.complexity.estimated", lang="en")
    assert "2× longer" in text_of(at)
    # "window" means the sliding mask |i − j| ≤ w everywhere: this lab's fixed Swin-style blocks are called blocks
    shown = [at.select_slider(key="complexity_block").label, *table[method]]
    assert not [name for name in shown if "window" in name.lower()]


def test_cross_attention_shapes_follow_both_sentences():
    at = open_lab("pages/7_cross.py")
    scores = "Q Kᵀ / √d_k"
    shapes = find_table(at, "lab.cross.col.tensor").set_index(column("lab.cross.col.tensor"))
    assert shapes.loc[scores, column("lab.cross.col.shape")] == "[1, 4, 12, 5]"  # (B, H, L_q, L_k)
    at.text_input(key="cross_key").set_value("Attention is all you need [PAD]").run()
    shapes = find_table(at, "lab.cross.col.tensor").set_index(column("lab.cross.col.tensor"))
    assert shapes.loc[scores, column("lab.cross.col.shape")] == "[1, 4, 12, 6]"
    assert t("lab.cross.padding", lang="en") in text_of(at)
    at.text_input(key="cross_query").set_value("word " * 30).run()
    assert at.error and not at.exception


def test_pattern_sculpting_sharpness_scales_the_recipe():
    def recipe(at: AppTest) -> dict[str, float]:
        """Largest |entry| of each recipe matrix shown, by its panel title."""
        frames = [frame for frame in chart_data(at) if "panel" in frame and frame["panel"].nunique() == 1]
        return {frame["panel"].iloc[0]: float(frame["value"].abs().max()) for frame in frames}

    w_q, w_k = t("lab.sculpt.panel.w_q", lang="en"), t("lab.sculpt.panel.w_k", lang="en")
    at = open_lab("pages/8_sculpt.py")
    at.segmented_control(key="sculpt_pattern").set_value("self")
    at.slider(key="sculpt_sharpness").set_value(3.0).run()
    low = recipe(at)
    at.slider(key="sculpt_sharpness").set_value(12.0).run()
    high = recipe(at)
    assert low[w_q] == pytest.approx(3.0) and high[w_q] == pytest.approx(12.0)  # W_q = sharpness × [I | 0]
    assert low[w_k] == high[w_k] == pytest.approx(1.0)  # W_k = [I | 0] whatever the sharpness
    at.toggle(key="sculpt_causal").set_value(True).run()
    at.slider(key="sculpt_sharpness").set_value(0.0).run()
    assert recipe(at)[w_q] == 0.0 and not at.exception


def test_encoder_block_bert_base_preset_and_norm_placement():
    at = open_lab("pages/9_encoder.py")
    labels = ("lab.encoder.metric.formula", "lab.encoder.metric.ours", "lab.encoder.metric.torch")
    assert [metric(at, label) for label in labels] == ["49,984"] * 3
    at.radio(key="encoder_preset").set_value("bert_base").run()
    assert [metric(at, label) for label in labels] == ["7,087,872"] * 3
    assert at.radio(key="encoder_activation").value == "gelu"  # BERT-base brings its GELU along
    assert "the same numbers" in next(box.value for box in at.success if "TransformerEncoderLayer" in box.value)
    at.radio(key="encoder_placement").set_value("pre").run()
    assert t("lab.encoder.bert_differs", lang="en", placement=t("lab.encoder.placement.pre", lang="en"),
             activation="GELU") in text_of(at)  # fmt: skip
    steps = find_table(at, "lab.encoder.col.step").set_index(column("lab.encoder.col.step"))
    formula, shape = column("lab.encoder.col.formula"), column("lab.encoder.col.shape")
    assert steps.loc[t("lab.encoder.step.residual2", lang="en"), formula] == "y = x₁ + FFN(LayerNorm₂(x₁))"
    assert steps.loc[t("lab.encoder.step.ffn_hidden", lang="en"), shape] == "[1, 11, 3072]"  # d_ff wide


# ---------------------------------------------------------------- verdicts follow the measurement, not the side
def _verdicts(at: AppTest, check: str, lang: str = "en") -> tuple[list[str], list[str]]:
    """The green and the red boxes that carry ``t(check)``."""
    label = t(check, lang=lang)
    return [b.value for b in at.success if label in b.value], [b.value for b in at.error if label in b.value]


@pytest.fixture
def fresh_cache():
    """Labs cache their checks per setting: a wrong computation must be computed, not read from an earlier test."""
    st.cache_data.clear()
    yield
    st.cache_data.clear()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_loop_verdict_turns_red_when_the_loop_differs_by_more_than_the_tolerance(monkeypatch, fresh_cache, lang):
    real = loop.loop_from_fused

    def off_by_1e_3(model):  # a loop whose output is 1e-3 away from the fused layer's: above 1e-4
        heads = real(model)
        return lambda q, k, v: heads(q, k, v) + 1e-3

    monkeypatch.setattr(loop, "loop_from_fused", off_by_1e_3)
    at = open_lab("pages/5_loop.py", lang)
    green, (red,) = _verdicts(at, "lab.loop.equality_check", lang)
    assert not green and red.endswith(t("lab.common.max_diff_bad", lang=lang, diff=1e-3, tol=1e-4))  # 0.001 > 1e-04


def test_cross_verdict_turns_red_when_the_check_is_above_its_tolerance(monkeypatch, fresh_cache):
    real = cross.run_cross_attention

    def outside(*args):
        run = real(*args)
        return dataclasses.replace(run, check=dataclasses.replace(run.check, max_abs_output=2 * run.check.tolerance))

    at = open_lab("pages/7_cross.py")
    (green,), red = _verdicts(at, "lab.cross.check")
    assert not red and "≤ 1e-04: the same numbers" in green
    st.cache_data.clear()
    monkeypatch.setattr(cross, "run_cross_attention", outside)
    at.run()
    green, (red,) = _verdicts(at, "lab.cross.check")
    assert not green and "= 0.0002 > 1e-04: different numbers" in red


def test_encoder_verdict_turns_red_when_the_torch_layer_computes_something_else(monkeypatch, fresh_cache):
    real = encoder.to_torch_encoder_layer

    def shifted(block):  # nn.TransformerEncoderLayer with its last LayerNorm's β moved by 0.01: another computation
        layer = real(block)
        with torch.no_grad():
            layer.norm2.bias += 0.01
        return layer

    monkeypatch.setattr(encoder, "to_torch_encoder_layer", shifted)
    at = open_lab("pages/9_encoder.py")
    green, (red,) = _verdicts(at, "lab.encoder.check")
    assert not green and "> 1e-04: different numbers" in red


def test_reshape_verdicts_follow_the_measured_difference_not_the_side(monkeypatch, fresh_cache):
    real = reshape.compare_reshapes

    def swapped(*args):  # the correct split measured off, the bug measured right: each box must follow its number
        result = real(*args)
        return dataclasses.replace(result, correct_check=result.wrong_check, wrong_check=result.correct_check)

    monkeypatch.setattr(reshape, "compare_reshapes", swapped)
    at = open_lab("pages/3_reshape.py")
    (green,), _ = _verdicts(at, "lab.reshape.wrong_check")
    _, (red,) = _verdicts(at, "lab.reshape.correct_check")
    assert "≤ 1e-04: the same numbers" in green and "> 1e-04: different numbers" in red


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_complexity_note_quotes_the_one_score_tensor_the_engine_holds(lang):
    """Without gradients the engine softmaxes in the scores' buffer: at L 4096, 4 heads, d_k 32 its peak is one
    4 × 4096 × 4096 float32 tensor and the scaled queries, 4·4·4096·(4096 + 32) bytes (258 MiB), not two tensors."""
    at = open_lab("pages/6_complexity.py", lang)
    (note,) = [box.value for box in at.info if "4096 × 4096" in box.value]
    big = format_bytes(4 * 4 * 4096 * (4096 + 32))
    assert big == "258.0 MiB"
    assert note == t("lab.complexity.cap_note", lang=lang, cap=1024, heads=4, length=4096, d_k=32, big=big)
    explain = t("lab.complexity.explain", lang=lang)
    assert "4 · H · L · (L + d_k)" in explain and "equally large weight matrix" not in explain


# ---------------------------------------------------------------- labs 11 and 12: the main page's own layer
def open_with_session(page: str, lang: str = "en", **state: object) -> AppTest:
    """A lab page run with the main page's choices already in the session (as after a visit to the main page)."""
    at = AppTest.from_file(str(REPO / page), default_timeout=300)
    at.query_params["lang"] = lang
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def _column_values(at: AppTest, key: str, **params) -> list[str]:
    return list(find_table(at, key, **params)[column(key, **params)])


def _float64_layer_run(**choices: object) -> AttentionRun:
    """The main page's run for ``choices`` (the layer, its input and mask), with the layer copied to float64 on the
    CPU (the run is on the suite's device; mps has no float64)."""
    run = run_attention(AttentionConfig(**choices))
    mask = None if run.mask is None else run.mask.cpu()
    return dataclasses.replace(run, model=copy.deepcopy(run.model).cpu().double(), x=run.x.cpu().double(), mask=mask)


def _weights_and_vectors(run: AttentionRun, query: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Query ``query``'s weights α (H, L) and every head's f_h(x_j) (H, L, D), computed here in float64 from the
    layer's weight matrices: α = softmax over the kept keys of q_i·k_j / √d_k, and f_h(x_j) the value of x_j in
    head h (bias included) times the d_k columns of W_o that read head h (Kobayashi et al. 2020)."""
    model, x = run.model, run.x[0]  # x: (L, D)
    length, heads, d_k, d_model = x.size(0), model.num_heads, model.d_k, model.d_model
    q, k, v = (
        (x @ linear.weight.T + linear.bias).view(length, heads, d_k).transpose(0, 1)  # (L, D) -> (H, L, Dh)
        for linear in (model.W_q, model.W_k, model.W_v)
    )
    scores = (k @ q[:, query].unsqueeze(-1)).squeeze(-1) / d_k**0.5  # (H, L, Dh) @ (H, Dh, 1) -> (H, L)
    keep = torch.ones(heads, length, dtype=torch.bool)
    if run.mask is not None:
        keep = torch.broadcast_to(run.mask, (1, heads, length, length))[0, :, query]  # (H, L)
    weights = torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1)  # (H, L)
    w_o = model.W_o.weight.view(d_model, heads, d_k)  # (D, H·Dh) -> (D, H, Dh)
    vectors = torch.einsum("hjd,ehd->hje", v, w_o)  # (H, L, Dh) x (D, H, Dh) -> (H, L, D)
    return weights, vectors


def _output_row(run: AttentionRun, query: int, mask: torch.Tensor | None) -> torch.Tensor:
    """The layer's own forward, rerun: row ``query`` of its output (D,)."""
    with torch.inference_mode():
        return run.model(run.x, run.x, run.x, mask)[0][0, query]


def _shown(printed: str, value: float) -> bool:
    """A table cell (three decimals) shows ``value`` (computed here)."""
    return printed in printed_forms(value, ".3f")


def test_attribution_shows_the_main_pages_layer_and_its_three_measures():
    """The default view (the last query, all heads, masking a key): each column against this test's float64
    computation from the layer's weights, and the effect against the layer rerun with the key masked."""
    choices = {"d_model": 32, "num_heads": 4, "tokens": "the cat sat on the mat"}
    at = open_with_session("pages/11_attribution.py", **choices)
    assert not at.exception, at.exception
    assert "d_model = 32 · 4 heads" in text_of(at)
    table = find_table(at, "lab.attribution.col.key")
    keys = list(table[column("lab.attribution.col.key")])
    assert keys == ["0:the", "1:cat", "2:sat", "3:on", "4:the", "5:mat"]
    run, query = _float64_layer_run(**choices), 5
    weights, vectors = _weights_and_vectors(run, query)  # (H, L), (H, L, D)
    length, heads = len(keys), weights.size(0)
    full = _output_row(run, query, run.mask)
    for key in range(length):
        row = table.iloc[key]
        assert _shown(row[column("lab.attribution.measure.weight")], float(weights[:, key].mean())), key
        added = (weights[:, key, None] * vectors[:, key]).sum(dim=0)  # Σ_h α_h f_h(x_j): (D,)
        assert _shown(row[column("lab.attribution.measure.norm")], float(added.norm())), key
        blocked = torch.ones(1, heads, length, length, dtype=torch.bool)
        blocked[:, :, query, key] = False  # key j masked for this query, in every head
        effect = float((_output_row(run, query, blocked) - full).norm())
        assert _shown(row[column("lab.attribution.measure.effect_mask")], effect), key
    bars = chart_data(at)[0]
    assert set(bars["key"]) == set(keys) and len(bars) == 3 * len(keys)  # three measures per key
    assert len(find_table(at, "lab.attribution.col.rho")) == 1 + 4  # the layer and every head
    assert t("lab.attribution.no_prediction_random", lang="en") in [i.value for i in at.info]


def test_attribution_zeroing_a_value_removes_exactly_the_norm_and_a_causal_mask_drops_keys():
    """Zeroing v_j is rerun here through the layer's own forward (a hook zeroes head 1's slice of key j's value):
    the drop of the output is the effect column, and the norm column is ‖α f_h(x_j)‖ computed from the weights."""
    choices = {"d_model": 32, "num_heads": 4, "tokens": "the cat sat on the mat", "mask_type": "causal"}
    at = open_with_session("pages/11_attribution.py", **choices)
    at.selectbox(key="attribution_query").set_value(2).run()
    at.selectbox(key="attribution_head").set_value(1).run()
    at.radio(key="attribution_ablation").set_value("zero_value").run()
    assert not at.exception, at.exception
    table = find_table(at, "lab.attribution.col.key")
    assert list(table[column("lab.attribution.col.key")]) == ["0:the", "1:cat", "2:sat"]  # keys after 2 are masked
    run, query, head = _float64_layer_run(**choices), 2, 1
    weights, vectors = _weights_and_vectors(run, query)
    d_k = run.model.d_k
    full = _output_row(run, query, run.mask)
    for key in range(query + 1):
        row = table.iloc[key]
        assert _shown(row[column("lab.attribution.measure.weight")], float(weights[head, key])), key
        norm = float((weights[head, key] * vectors[head, key]).norm())
        assert _shown(row[column("lab.attribution.measure.norm")], norm), key

        def zero_value(_module, _inputs, value, key=key):  # value: (1, L, D); head 1's d_k features of key j
            value = value.clone()
            value[0, key, head * d_k : (head + 1) * d_k] = 0.0
            return value

        handle = run.model.W_v.register_forward_hook(zero_value)
        try:
            zeroed = _output_row(run, query, run.mask)
        finally:
            handle.remove()
        effect = float((zeroed - full).norm())
        assert _shown(row[column("lab.attribution.measure.effect_zero_value")], effect), key
    assert len({float(v) for v in table[column("lab.attribution.measure.norm")]}) == 3  # three keys, three sizes


def test_attribution_measures_the_prediction_of_a_trained_task(short_trainings):
    """Each key's drop of the predicted token's probability against the trained model rerun here, whole, with
    that key masked for the query in the shown layer (a pre-hook swaps that layer's mask)."""
    choices = {"weights": "trained", "task": "previous_and_first", "d_model": 32, "num_heads": 2,
               "tokens": "3 1 4 1 5 9"}  # fmt: skip
    query = 4
    at = open_with_session("pages/11_attribution.py", **choices, attribution_query=query)
    assert not at.exception, at.exception
    drops = _column_values(at, "lab.attribution.col.drop")
    assert any(m.value.startswith("Prediction at this query") for m in at.markdown)
    config = AttentionConfig(**choices)
    source = make_source(config.weight_spec)  # the page's training, finished: the same model
    run = run_attention(config, source)
    model = copy.deepcopy(source.trained.model).cpu().double().eval()  # the float64 reference, on the CPU
    ids = source.sequence(config)[0].view(1, -1).cpu()  # (1, L)
    mask = None if run.mask is None else run.mask.cpu()  # the run's mask, where the reference runs
    length = ids.size(1)
    scored = source.task.targets(ids)[0, :, query] != IGNORE  # (R,): the outputs the task scores at the query
    assert len(drops) == length and bool(scored.any())

    def probabilities(layer_mask: torch.Tensor | None) -> torch.Tensor:
        """(R, C) at the query, with ``layer_mask`` in the shown layer (every other layer keeps the run's)."""

        def swap(_module, args):
            return (*args[:3], layer_mask)

        handle = model.layers[run.layer].register_forward_pre_hook(swap)
        try:
            with torch.inference_mode():
                return torch.softmax(model.logits(ids, mask)[0, :, query], dim=-1)  # (R, C)
        finally:
            handle.remove()

    base = probabilities(mask)
    predicted = base.argmax(dim=-1)  # (R,)
    heads = run.model.num_heads
    keep = torch.ones(1, heads, length, length, dtype=torch.bool)
    if mask is not None:
        keep = torch.broadcast_to(mask, keep.shape).clone()
    largest = []
    for key in range(length):
        blocked = keep.clone()
        blocked[:, :, query, key] = False
        after = probabilities(blocked)
        drop = (base - after).gather(-1, predicted.view(-1, 1)).squeeze(-1)[scored]  # (scored R,)
        flip = bool((after.argmax(dim=-1) != predicted)[scored].any())
        printed = drops[key].split()
        assert printed[0] in printed_forms(float(drop.max()), lambda v: f"{round(v, 3) + 0.0:+.3f}"), (key, drops)
        assert (printed[1:] == ["⚑"]) == flip, (key, drops)
        largest.append(float(drop.max()))
    assert max(abs(d) for d in largest) > 1e-3  # the keys matter: a column of zeros would not pass


def test_attribution_says_what_it_measures_for_a_checkpoint(listed_tiny):
    at = open_with_session("pages/11_attribution.py", weights="pretrained", checkpoint="tiny",
                           tokens="The cat sat on the mat")  # fmt: skip
    assert not at.exception, at.exception
    assert t("lab.attribution.no_prediction_checkpoint", lang="en") in [i.value for i in at.info]
    assert "d_model = 32 · 4 heads" in text_of(at)  # the checkpoint's sizes, not the learner's


def test_attribution_a_bad_choice_from_the_main_page_is_an_error_not_a_traceback():
    at = open_with_session("pages/11_attribution.py", d_model=30, num_heads=4)
    assert not at.exception
    assert len(at.error) == 1 and "30" in at.error[0].value


def _line_with(method: object, text: str) -> int:
    """The file's line number of the first line of ``method`` holding ``text``."""
    import inspect

    lines, start = inspect.getsourcelines(method)  # type: ignore[arg-type]
    return next(start + i for i, line in enumerate(lines) if text in line)


def test_onnx_lab_exports_only_when_asked_and_checks_the_graph():
    at = open_with_session("pages/12_onnx.py", d_model=32, num_heads=4, tokens="the cat sat on the mat")
    assert not at.exception, at.exception
    assert not at.dataframe  # nothing exported yet
    at.button(key="onnx_export").click().run()
    assert not at.exception, at.exception
    lengths = find_table(at, "lab.onnx.col.seen")
    assert list(lengths["L"]) == [6, 3, 37] and set(lengths[column("lab.onnx.col.ok")]) == {"✓"}
    graph = find_table(at, "lab.onnx.col.code")
    reshapes = graph[graph[column("lab.onnx.col.ops")].str.contains("Reshape")]
    views = [MultiHeadAttention.split_heads, MultiHeadAttention.split_kv_heads, MultiHeadAttention.concat_heads]
    expected = {f"mha/module.py:{_line_with(method, '.view(')}" for method in views}  # the engine's three views
    assert set(reshapes[column("lab.onnx.col.line")]) == expected
    assert any("**NaN**" in w.value for w in at.warning)  # the empty row, traced on the plain branch
    assert len(at.error) == 0


def test_onnx_lab_reads_in_chinese_after_the_export():
    from test_languages import _own_text, leftover_english, shown_texts, user_tokens

    at = open_with_session("pages/12_onnx.py", "zh", d_model=32, num_heads=4, tokens="小猫坐在垫子上")
    at.button(key="onnx_export").click().run()
    assert not at.exception, at.exception
    tokens = user_tokens(at)
    texts = [(key, text) for key, text in shown_texts(at) if _own_text(key)]
    leftovers = [(key, text[:80], words) for key, text in texts if (words := leftover_english(text, tokens))]
    assert not leftovers, leftovers


def test_windows_lab_masks_the_rolled_window_and_shows_where_a_patch_may_look():
    def mask_cells(at: AppTest) -> pd.Series:
        return next(frame for frame in chart_data(at) if "text" in frame and set(frame["text"]) <= {"T", "F"})["text"]

    at = open_lab("pages/10_windows.py")
    cells = mask_cells(at)  # the last rolled window (M = 4, s = 2): four regions of 2 × 2 patches
    assert len(cells) == 256 and int((cells == "T").sum()) == 16 * 4
    assert "16" in text_of(at) and "4 region(s)" in text_of(at)
    at.slider(key="windows_shift").set_value(0).run()
    assert set(mask_cells(at)) == {"T"}  # no shift: nothing to keep apart
    at.slider(key="windows_shift").set_value(3).run()
    at.segmented_control(key="windows_window").set_value(2).run()
    assert at.slider(key="windows_shift").value == 1  # a shift the new window cannot take becomes its half
    assert len(mask_cells(at)) == 16 and not at.exception


def test_windows_lab_measures_global_and_window_attention_only_when_asked():
    at = open_lab("pages/10_windows.py")
    with pytest.raises(KeyError):
        find_table(at, "lab.windows.col.global")
    at.slider(key="windows_repeats").set_value(3).run()
    at.button(key="windows_measure").click().run()
    assert not at.exception, at.exception
    table = find_table(at, "lab.windows.col.global")
    assert table[column("lab.windows.col.patches")].tolist() == [64, 256, 1024]
    assert "820×" in text_of(at)  # the cost at 256 × 256 patches, D = 32, M = 4, by the formulas


def _flash_scores(tokens: list[str], causal: bool) -> torch.Tensor:
    """The lab's scores, recomputed here in float64 from its q and k: QKᵀ/√d, masked cells -inf."""
    from mha.experiments.flash import flash_inputs

    q, k, _ = (x.double() for x in flash_inputs(tokens, 8))
    scores = (q @ k.transpose(-2, -1))[0, 0] / 8**0.5  # (L, L)
    return scores.masked_fill(~causal_mask(len(tokens))[0, 0], float("-inf")) if causal else scores


@pytest.mark.parametrize("causal", [True, False])
def test_flash_stepper_shows_the_running_max_and_sum_of_the_scores_read(causal):
    at = open_lab("pages/13_flash.py")
    at.checkbox(key="flash_causal").set_value(causal).run()
    tokens = tokenize(at.text_input(key="flash_tokens").value)
    block_q, block_k = at.slider(key="flash_block_q").value, at.slider(key="flash_block_k").value
    scores = _flash_scores(tokens, causal)
    for block, tile in [(1, 0), (1, 1), (2, 2), (0, 3)]:
        at.slider(key="flash_block").set_value(block)
        at.slider(key="flash_tile").set_value(tile).run()
        assert not at.exception, at.exception
        rows = slice(block * block_q, min((block + 1) * block_q, len(tokens)))
        seen = scores[rows, : min((tile + 1) * block_k, len(tokens))]
        running_max = seen.amax(dim=-1)
        safe = running_max.masked_fill(running_max == float("-inf"), 0.0)
        running_sum = torch.exp(seen - safe[:, None]).sum(dim=-1)
        table = find_table(at, "lab.flash.col.m")
        shown_max = [float(x.replace("−∞", "-inf")) for x in table[column("lab.flash.col.m")]]
        shown_sum = [float(x) for x in table[column("lab.flash.col.l")]]
        assert shown_max == pytest.approx(running_max.tolist(), abs=1e-4)
        assert shown_sum == pytest.approx(running_sum.tolist(), abs=1e-4)


def test_flash_verdict_and_skipped_tiles_follow_the_mask_and_the_block_sizes():
    at = open_lab("pages/13_flash.py")
    assert at.success and "1e-06" in at.success[0].value
    length = len(tokenize(at.text_input(key="flash_tokens").value))
    for block_q, block_k in [(4, 3), (5, 2), (3, 3)]:
        at.slider(key="flash_block_q").set_value(block_q)
        at.slider(key="flash_block_k").set_value(block_k).run()
        above = sum(  # tiles whose first column lies past their last row: wholly above the diagonal
            c0 > min(r0 + block_q, length) - 1 for r0 in range(0, length, block_q) for c0 in range(0, length, block_k)
        )
        tiles = -(-length // block_q) * -(-length // block_k)
        assert metric(at, "lab.flash.metric.skipped") == f"{above} / {tiles}"
        assert metric(at, "lab.flash.metric.tile") == f"{block_q} × {block_k} = {block_q * block_k}"
    at.checkbox(key="flash_causal").set_value(False).run()
    assert metric(at, "lab.flash.metric.skipped").startswith("0 / ")
    assert not at.exception and not at.error


def test_flash_measures_memory_and_sdpa_backends_only_when_asked():
    at = open_lab("pages/13_flash.py")
    with pytest.raises(KeyError):
        find_table(at, "lab.flash.col.full_peak")
    at.button(key="flash_measure").click().run(timeout=240)
    assert not at.exception, at.exception
    memory = find_table(at, "lab.flash.col.full_peak")
    longest = memory.iloc[-1]
    units = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}

    def size(text: str) -> float:
        number, unit = text.split()
        return float(number) * units[unit]

    assert size(longest[column("lab.flash.col.tiled_peak")]) < size(longest[column("lab.flash.col.full_peak")]) / 4
    assert size(longest[column("lab.flash.col.full_peak")]) >= 4 * 4 * longest["L"] ** 2  # H·L·L float32 scores
    backends = find_table(at, "lab.flash.col.backend")
    assert backends[column("lab.flash.col.backend")].tolist() == [
        "SDPBackend.MATH", "SDPBackend.FLASH_ATTENTION", "SDPBackend.EFFICIENT_ATTENTION", "SDPBackend.CUDNN_ATTENTION",
    ]  # fmt: skip
    assert backends[column("lab.flash.col.runs")].iloc[0] == t("lab.flash.yes", lang="en")
