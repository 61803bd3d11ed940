"""The playground page through Streamlit's AppTest: every control by its key, URL parameters, errors, languages.

Small sizes (d_model 64, 4 heads, 6 tokens) keep each run well under a second; the
expected numbers are computed here from the formulas, never copied from the page.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import torch
from conftest import HeadPicker, headings, heatmaps, markdown_tables
from streamlit.testing.v1 import AppTest
from tolerances import FLOAT32, NUMBER, SHOWN_ATOL, assert_shows, printed_forms, printed_numbers

from components.heatmap import SEQUENTIAL, Figure
from components.i18n import t
from mha.config import LIMITS, AttentionConfig
from mha.pipeline import run_attention

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
SMALL = {"d_model": "64", "num_heads": "4", "tokens": "the cat sat on the mat"}  # L = 6


def open_page(**params: str) -> AppTest:
    """Run the page once with these URL query parameters."""
    at = AppTest.from_file(SCRIPT, default_timeout=30)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def page_text(at: AppTest) -> str:
    """All text of the page's markdown-like elements, joined."""
    kinds = ("title", "header", "subheader", "markdown", "caption", "code", "error", "warning", "info", "success")
    return "\n".join(str(element.value) for kind in kinds for element in at.get(kind))


def weight_frames(at: AppTest) -> list[pd.DataFrame]:
    """Cells of the panels drawn on a weights scale, one frame per chart (one head large; the all-heads grid).

    Columns ``panel, q, k, value, masked`` (``panel``: the head in the grid).
    """
    found = []
    for figure in heatmaps(at):
        weights = [i for i, panel in enumerate(figure.panels) if figure.scales[panel.scale].scheme == SEQUENTIAL]
        if weights:
            cells = figure.cells().rename(columns={"row": "q", "col": "k"})
            found.append(cells[cells["panel"].isin(weights)])
    return found


def grids(at: AppTest) -> list[Figure]:
    """The all-heads grids on the page (small multiples: square cells, no token axes)."""
    return [figure for figure in heatmaps(at) if figure.square and not figure.axes]


def no_problems(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


# ---------------------------------------------------------------- the default page
def test_default_page_runs_and_shows_every_step():
    at = open_page()
    no_problems(at)
    text = page_text(at)
    assert "Attention Playground" in text
    for step in ("1 ·", "2 ·", "3 ·", "4 ·"):
        assert any(header.startswith(step) for header in headings(at, 3)), step
    # the default sentence has 11 tokens; d_model 512 with 8 heads of 64
    assert "[1, 11, 512]" in text
    assert "[1, 8, 11, 64]" in text
    assert "[1, 8, 11, 11]" in text
    assert f"{4 * 512**2 + 4 * 512:,}" in text  # 1,050,624
    figures = heatmaps(at)  # step 1's Q, K, V; step 2's head; all heads; step 3; step 4
    assert [figure.shape for figure in figures] == [(3, 11, 64), (3, 11, 11), (8, 11, 11), (1, 11, 512), (1, 11, 512)]
    assert at.success and "✓" in at.success[0].value


def test_the_code_shown_is_the_engine_code():
    at = open_page(**SMALL)
    code = "\n".join(block.value for block in at.code)
    assert "def split_heads" in code
    assert "raw_scores = torch.matmul(q_heads, k_heads.transpose(-2, -1))" in code
    assert "def concat_heads" in code
    assert "return self.W_o(concat)" in code


# ---------------------------------------------------------------- controls by key
def test_d_model_and_heads_drive_the_shapes_and_counts():
    at = open_page(**SMALL)
    at.number_input(key="d_model").set_value(256).run()
    at.number_input(key="num_heads").set_value(2).run()
    no_problems(at)
    text = page_text(at)
    assert "[1, 6, 256]" in text
    assert "[1, 2, 6, 128]" in text  # (B, h, L, d_k)
    assert "[1, 6, 2, 128]" in text  # after view, before transpose
    assert f"{4 * 256**2 + 4 * 256:,}" in text  # 263,168: the total, 4d² + 4d
    assert f"{3 * (256**2 + 256):,}" in text  # step 1: W_q, W_k, W_v, each d² + d
    assert f"{256**2 + 256:,}" in text  # step 4: W_o
    assert any("256 / 2 = **128**" in caption.value for caption in at.sidebar.caption)  # d_k


def test_d_model_preset_is_one_click_away():
    at = open_page(**SMALL)
    at.button_group(key="d_model_preset").set_value(768).run()
    no_problems(at)
    assert at.number_input(key="d_model").value == 768
    assert f"{4 * 768**2 + 4 * 768:,}" in page_text(at)
    assert at.query_params["d_model"] == "768"


def test_heads_that_do_not_divide_d_model_explain_themselves_and_the_page_keeps_working():
    at = open_page(**SMALL)
    at.number_input(key="num_heads").set_value(7).run()
    assert not at.exception
    (error,) = at.error
    assert "64" in error.value and "7" in error.value
    assert "4 or 8" in error.value  # the nearest divisors of 64 below and above 7
    assert "9.14" in error.value  # 64 / 7
    # the controls and the parameter summary (independent of h) are still there
    assert at.number_input(key="num_heads").value == 7
    assert f"{4 * 64**2 + 4 * 64:,}" in page_text(at)
    assert any("W_q" in table.iloc[:, 0].tolist() for table in markdown_tables(at))  # the per-matrix table


def test_empty_text_gives_a_clear_error():
    at = open_page(**SMALL)
    at.text_area(key="tokens").set_value("   ").run()
    assert not at.exception
    (error,) = at.error
    assert "no tokens" in error.value
    assert headings(at, 1) == ["Attention Playground"]
    assert f"{4 * 64**2 + 4 * 64:,}" in page_text(at)


def test_too_many_tokens_gives_a_clear_error():
    count = LIMITS.tokens_max + 1
    at = open_page(**SMALL)
    at.text_area(key="tokens").set_value(" ".join(["w"] * count)).run()
    assert not at.exception
    (error,) = at.error
    assert str(count) in error.value and str(LIMITS.tokens_max) in error.value
    assert f"{count} tokens" in at.sidebar.caption[-1].value or any(
        f"{count} tokens" in c.value for c in at.sidebar.caption
    )


def test_window_wider_than_the_text_warns_and_still_runs():
    at = open_page(**SMALL)
    at.selectbox(key="mask_type").set_value("window").run()
    at.number_input(key="window").set_value(5).run()  # L = 6: 5 >= L - 1 covers everything
    no_problems(at)
    assert any("covers the whole text" in w.value for w in at.warning)
    for frame in weight_frames(at):
        assert not frame["masked"].any()


def test_window_mask_blocks_cells_outside_the_band():
    at = open_page(**SMALL, mask_type="window", window="1")
    no_problems(at)
    frames = weight_frames(at)
    assert frames
    for frame in frames:
        outside = (frame["q"].astype(int) - frame["k"].astype(int)).abs() > 1
        assert (frame["masked"] == outside).all()
        assert (frame.loc[outside, "value"] == 0).all()


def test_causal_mask_zeroes_the_weights_above_the_diagonal():
    at = open_page(**SMALL)
    at.selectbox(key="mask_type").set_value("causal").run()
    no_problems(at)
    frames = weight_frames(at)
    assert len(frames) == 2  # the chosen head large, and the all-heads grid
    for frame in frames:
        above = frame["k"].astype(int) > frame["q"].astype(int)
        assert above.any()
        assert (frame.loc[above, "value"] == 0).all()
        assert frame.loc[above, "masked"].all()
        assert not frame.loc[~above, "masked"].any()
        sums = frame.groupby(["panel", "q"])["value"].sum()
        assert sums.sub(1.0).abs().max() <= 6 * 0.5e-4  # each row sums to 1 (each weight goes with 4 decimals)


def test_padding_example_is_one_click_away_and_blocks_pad_keys():
    at = open_page(**SMALL)
    at.button(key="example_padded").click().run()
    no_problems(at)
    assert "[PAD]" in at.text_area(key="tokens").value
    assert at.selectbox(key="mask_type").value == "padding"
    pad_positions = {6, 7, 8}  # "The cat sat on the mat [PAD] [PAD] [PAD]"
    for frame in weight_frames(at):
        is_pad = frame["k"].astype(int).isin(pad_positions)
        assert (frame["masked"] == is_pad).all()
        assert (frame.loc[is_pad, "value"] == 0).all()


@pytest.mark.parametrize("name", ["thinking", "animal", "xiaoming", "cat"])
def test_example_sentences_fill_the_text(name):
    from components.controls import EXAMPLES

    at = open_page(**SMALL)
    at.button(key=f"example_{name}").click().run()
    no_problems(at)
    assert at.text_area(key="tokens").value == dict(EXAMPLES)[name]


def test_padding_without_pad_tokens_says_so():
    at = open_page(**SMALL, mask_type="padding")
    no_problems(at)
    assert any("[PAD]" in info.value for info in at.info)


def test_steps_1_and_2_send_every_head_so_the_browser_switches_heads_itself():
    at = open_page(**SMALL, mask_type="causal")
    no_problems(at)
    picker = HeadPicker(at)
    assert picker.data == {
        "label": t("steps.head", high=3), "count": 4, "shown": 0, "moves": "0", "every": True
    }  # fmt: skip
    step_1, step_2 = heatmaps(at, payload=True)[:2]
    run = run_attention(AttentionConfig(d_model=64, num_heads=4, mask_type="causal", tokens=SMALL["tokens"]))
    p, a = run.trace.project, run.trace.attend
    for head in range(4):  # what the browser draws for each head is that head's numbers (the page's run, ours again)
        q, k, v = step_1.head_figure(head).panels
        assert q.title == t("step1.chart", name="Q", head=head, length=6, d_k=16)
        for panel, tensor in ((q, p.q_heads), (k, p.k_heads), (v, p.v_heads)):
            assert_shows(panel.values, tensor[0, head].cpu().numpy())
        raw, masked, weights = step_2.head_figure(head).panels
        assert weights.title == t("step2.weights", head=head)
        assert_shows(raw.values, a.raw_scores[0, head].cpu().numpy())
        assert_shows(masked.values, a.masked_scores[0, head].cpu().numpy())  # -inf where blocked
        assert_shows(weights.values, a.weights[0, head].cpu().numpy())
        assert np.array_equal(weights.masked, ~run.mask[0, 0].cpu().numpy())  # the causal staircase, grey
        assert step_2.head_figure(head).scales[raw.scale].high == pytest.approx(
            float(a.raw_scores[0, head].abs().max()), rel=0.1
        )  # each head's scores on a scale of their own


def test_the_head_the_server_is_told_is_shown_and_written_into_the_link():
    at = open_page(**SMALL)
    HeadPicker(at).set_value(3).run()  # what the picker's message does once the browser shows head 3
    no_problems(at)
    titles = [panel.title for figure in heatmaps(at) for panel in figure.panels]
    assert "Q of head 3 [6 × 16]" in titles  # step 1's charts
    assert "softmax weights, head 3" in titles  # step 2's
    assert at.query_params["head"] == "3"
    assert HeadPicker(at).data["moves"] == "0"  # the browser's own pick: the page keeps what it shows


def test_a_head_from_the_link_or_out_of_range_moves_the_page_to_it():
    at = open_page(**SMALL, head="2")
    assert HeadPicker(at).data["shown"] == 2 and HeadPicker(at).data["moves"] == "1"  # the link chose it
    at.number_input(key="num_heads").set_value(2).run()  # head 2 no longer exists
    assert HeadPicker(at).data["shown"] == 0 and HeadPicker(at).data["moves"] == "2"
    assert at.query_params["head"] == "0"


def test_charts_too_big_to_hold_every_head_send_the_shown_one_and_the_picker_asks_the_server():
    words = " ".join(f"w{i}" for i in range(128))
    at = open_page(d_model="64", num_heads="32", tokens=words, head="5")  # 32 heads x 128 tokens
    no_problems(at)
    assert HeadPicker(at).data["every"] is False
    step_1, step_2 = heatmaps(at, payload=True)[:2]
    assert len(step_1.panels) == 3 and len(step_2.panels) == 3  # head 5 only
    assert step_2.heads.every is False and step_2.head_figure().panels[2].title == t("step2.weights", head=5)


def test_grid_stage_selector_shows_scores_for_every_head():
    at = open_page(**SMALL, mask_type="causal")
    at.button_group(key="grid_stage").set_value("scaled").run()
    no_problems(at)
    (grid,) = grids(at)
    run = run_attention(AttentionConfig(d_model=64, num_heads=4, mask_type="causal", tokens=SMALL["tokens"]))
    assert len(grid.panels) == len(run.head_labels) == 4
    for head, (panel, label) in enumerate(zip(grid.panels, run.head_labels, strict=True)):
        name = f"{head}: {t(f'label.{label.name}')}"
        share = printed_numbers([panel.title], "label.with_share", label=name, share=NUMBER)["share"]
        assert share in printed_forms(label.share, ".2f"), (panel.title, label.share)
    assert {scale.scheme for scale in grid.scales} == {"diverging"}
    frame = grid.cells()
    assert np.isneginf(frame.loc[frame["masked"], "value"]).all()  # -inf travels as -inf, drawn grey
    assert np.isfinite(frame.loc[~frame["masked"], "value"]).all()
    assert set(frame.loc[frame["masked"], ["row", "col"]].itertuples(index=False)) == {
        (q, k) for q in range(6) for k in range(q + 1, 6)
    }


def test_seed_changes_the_numbers_and_the_url():
    at = open_page(**SMALL)
    before = heatmaps(at)[0].panels[0].values  # Q of the head shown
    at.number_input(key="seed").set_value(1).run()
    no_problems(at)
    after = heatmaps(at)[0].panels[0].values
    assert before.shape == after.shape
    assert abs(before - after).max() > 1e-3
    assert at.query_params["seed"] == "1"


@pytest.mark.parametrize("positional", ["none", "rope"])
def test_the_positions_control(positional):
    at = open_page(**SMALL)
    before = heatmaps(at)[1].panels[0].values
    at.radio(key="positional").set_value(positional).run()
    no_problems(at)
    assert at.query_params["positional"] == positional
    assert abs(heatmaps(at)[1].panels[0].values - before).max() > 1e-4  # other positions: other scores
    assert at.success  # still matches PyTorch


def test_device_choice_shows_the_device_used():
    at = open_page(**SMALL)
    assert "cpu" in at.selectbox(key="device").options
    at.selectbox(key="device").set_value("cpu").run()
    no_problems(at)
    assert any("Computed on **cpu**" in c.value for c in at.sidebar.caption)
    assert at.query_params["device"] == "cpu"


def test_live_check_passes_with_a_tolerance():
    at = open_page(**{**SMALL, "d_model": "48", "num_heads": "3", "mask_type": "causal"})  # d_k = 16
    no_problems(at)
    (success,) = at.success
    assert "✓" in success.value and "tolerance 1e-04" in success.value
    assert any("True = blocked" in info.value for info in at.info)  # the inverted-mask note


def test_many_heads_and_tokens_summarise_the_grid():
    tokens = " ".join(f"w{i}" for i in range(64))
    at = open_page(d_model="64", num_heads="8", tokens=tokens)  # 8 x 64 x 64 = 32768 cells > 20000
    no_problems(at)
    assert any("summarised" in info.value for info in at.info)
    assert not grids(at)
    (bars,) = at.get("vega_lite_chart")  # entropy and largest weight per head
    assert '"hconcat"' in bars.proto.spec
    # the data arrives as a named Arrow dataset through st.vega_lite_chart's public path (components.vega)
    (dataset,) = bars.proto.datasets
    sent = pa.ipc.open_stream(dataset.data.data).read_all()
    assert dataset.name == "cells" and sent.schema.metadata is None and str(sent.schema.field("head").type) == "int8"
    weights = run_attention(AttentionConfig(d_model=64, num_heads=8, tokens=tokens)).trace.attend.weights[0]
    peak = weights.max(dim=-1).values.mean(dim=-1)  # (H,): each head's mean largest weight
    np.testing.assert_allclose(sent.column("max_weight").to_numpy(), peak.cpu().numpy(), **FLOAT32)  # the page's, ours


# ---------------------------------------------------------------- URL parameters
def test_url_parameters_open_the_configuration_and_are_written_back():
    at = open_page(d_model="128", num_heads="2", mask_type="causal", window="3", seed="5", tokens="a b c")
    no_problems(at)
    assert at.number_input(key="d_model").value == 128
    assert at.number_input(key="num_heads").value == 2
    assert at.selectbox(key="mask_type").value == "causal"
    assert at.text_area(key="tokens").value == "a b c"
    assert "[1, 2, 3, 64]" in page_text(at)
    at.number_input(key="num_heads").set_value(4).run()
    assert at.query_params["num_heads"] == "4"
    assert at.query_params["d_model"] == "128"
    assert at.query_params["lang"] == "en"


@pytest.mark.parametrize(
    ("params", "field", "used"),
    [
        ({"d_model": "abc"}, "d_model", 512),
        ({"d_model": "1000000000"}, "d_model", LIMITS.d_model_max),
        ({"d_model": "-64"}, "d_model", LIMITS.d_model_min),
        ({"num_heads": "1e9"}, "num_heads", 8),
        ({"seed": "-1"}, "seed", 0),
    ],
)
def test_bad_numbers_in_the_url_warn_and_use_a_safe_value(params, field, used):
    at = open_page(**params)
    assert not at.exception
    warnings = [w.value for w in at.warning if f"“{field}”" in w.value]
    assert len(warnings) == 1, [w.value for w in at.warning]
    assert str(used) in warnings[0]
    assert at.number_input(key=field).value == used
    assert at.query_params[field] == str(used)


def test_unknown_mask_and_control_characters_in_the_url():
    at = open_page(**{**SMALL, "mask_type": "<script>", "tokens": "the\x00 cat\u202e sat"})
    no_problems(at)
    text = "\n".join(w.value for w in at.warning)
    assert "“mask_type”" in text and "\\<script\\>" in text  # quoted, escaped: never HTML
    assert "“tokens”" in text and "control characters" in text
    assert at.selectbox(key="mask_type").value == "none"
    assert at.text_area(key="tokens").value == "the cat sat"


def test_too_many_tokens_in_the_url_are_cut_with_a_warning():
    at = open_page(d_model="64", num_heads="4", tokens=" ".join(["w"] * 300))
    no_problems(at)
    assert any("300 tokens" in w.value for w in at.warning)
    assert f"{LIMITS.tokens_max} tokens" in "\n".join(c.value for c in at.sidebar.caption)


# ---------------------------------------------------------------- languages
def test_chinese_interface():
    at = open_page(**SMALL, lang="zh")
    no_problems(at)
    assert headings(at, 1) == ["注意力游乐场"]
    steps = headings(at, 3)
    assert any("线性投影" in h for h in steps)
    assert any("缩放点积注意力" in h for h in steps)
    assert "与 PyTorch（nn.MultiheadAttention）一致" in at.success[0].value
    assert "因果掩码" in at.selectbox(key="mask_type").options  # labels translated, values plain


def test_chinese_error_messages():
    at = open_page(**{**SMALL, "lang": "zh", "num_heads": "5"})
    (error,) = at.error
    assert "不能被头数 5 整除" in error.value


def _stale_label_app(key: str, options: tuple[str, ...], prefix: str, stale: str) -> None:
    import streamlit as st

    from components.i18n import choice_labels, restore_choices, t

    choice_labels(key, options, lambda option, lang: t(f"{prefix}.{option}", lang=lang))  # the widget's labels
    st.session_state[key] = stale  # the label the browser sends in the first run after a language switch
    restore_choices()
    st.markdown(f"restored: {st.session_state[key]}")


@pytest.mark.parametrize(
    ("key", "option", "prefix", "lang"),
    [
        ("mask_type", "causal", "mask", "zh"),
        ("tokenizer", "words", "tokenizer", "en"),
        ("weights", "trained", "weights", "en"),
    ],
)
def test_a_language_switch_maps_the_old_label_the_browser_sends_back_to_its_option(key, option, prefix, lang):
    """A selectbox or a radio sends its label, which Streamlit maps back through this run's labels: after a switch
    of language the old language's label maps to no option, and Streamlit keeps the label as the value (the page
    would then fall back to the first option, or fail on it). ``restore_choices`` maps it back."""
    from mha.config import DOMAINS

    stale = t(f"{prefix}.{option}", lang=lang)
    assert stale != option
    at = AppTest.from_function(_stale_label_app, args=(key, DOMAINS[key].options(), prefix, stale)).run()
    assert not at.exception
    assert [m.value for m in at.markdown] == [f"restored: {option}"]
    assert at.session_state[key] == option


def test_language_selector_switches_the_page_and_keeps_the_controls():
    at = open_page(**SMALL)
    at.selectbox(key="lang").set_value("zh").run()
    no_problems(at)
    assert headings(at, 1) == ["注意力游乐场"]
    assert at.number_input(key="d_model").value == 64
    assert at.query_params["lang"] == "zh"


def test_the_head_count_table_includes_the_chosen_head_count():
    at = open_page(d_model="768", num_heads="12", tokens="the cat sat")
    no_problems(at)
    by_heads = next(table for table in markdown_tables(at) if "d_k" in table.columns)
    assert "12" in by_heads["h"].tolist()  # 768 / 12: not a power of two, chosen all the same
    row = by_heads[by_heads["h"] == "12"].iloc[0]
    assert row["d_k"] == "64"
    assert [int(h) for h in by_heads["h"]] == sorted(int(h) for h in by_heads["h"])


# ---------------------------------------------------------------- what the charts carry, read back
def test_every_chart_carries_the_engine_numbers_read_back_through_apptest():
    at = open_page(**SMALL, mask_type="causal", head="1")
    no_problems(at)
    run = run_attention(AttentionConfig(d_model=64, num_heads=4, mask_type="causal", tokens=SMALL["tokens"]))
    p, a, c, o = run.trace.project, run.trace.attend, run.trace.concat, run.trace.out
    step1, step2, grid, step3, step4 = heatmaps(at)
    labels = ("0:the", "1:cat", "2:sat", "3:on", "4:the", "5:mat")
    assert all(figure.row_labels == labels for figure in (step1, step2, grid, step3, step4))
    assert step2.col_labels == grid.col_labels == labels
    same = np.testing.assert_array_equal  # masks and column indices: exact
    for panel, tensor in zip(step1.panels, (p.q_heads, p.k_heads, p.v_heads), strict=True):
        assert_shows(panel.values, tensor[0, 1].cpu().numpy())  # head 1, all d_k = 16 features
    same(step1.col_index, np.arange(16))
    blocked = torch.isneginf(a.masked_scores[0, 1]).cpu().numpy()
    assert (blocked == np.triu(np.ones((6, 6), bool), k=1)).all()
    raw, scaled, weights = step2.panels
    assert_shows(raw.values, a.raw_scores[0, 1].cpu().numpy())
    assert not raw.masked.any()  # before the mask
    assert_shows(scaled.values, a.masked_scores[0, 1].cpu().numpy())  # -inf where blocked
    assert_shows(weights.values, a.weights[0, 1].cpu().numpy())
    same(scaled.masked, blocked)
    same(weights.masked, blocked)
    for head, panel in enumerate(grid.panels):
        assert_shows(panel.values, a.weights[0, head].cpu().numpy())
    assert_shows(step3.panels[0].values, c.concat[0].cpu().numpy())  # 4 heads x 16 features: all of them
    assert (step3.group, step3.col_index.tolist()) == (16, list(range(64)))
    assert_shows(step4.panels[0].values, o.output[0].cpu().numpy())
    q_head = p.q_heads[0, 1].cpu().numpy()
    assert 0 < np.abs(step1.panels[0].values - q_head).max() <= SHOWN_ATOL  # rounded to 4 decimals
    assert np.isneginf(scaled.values).any()  # and the -inf of a masked score stays -inf


def test_stretched_colour_scale_spans_the_weights_shown_and_goes_in_the_link():
    at = open_page(**SMALL, mask_type="causal")
    fixed = [figure.scales[-1] for figure in heatmaps(at)[1:3]]  # step 2's weights, the grid
    assert [(scale.low, scale.high) for scale in fixed] == [(0.0, 1.0), (0.0, 1.0)]
    at.button_group(key="color_scale").set_value("stretch").run()
    no_problems(at)
    assert at.query_params["color_scale"] == "stretch"
    step2, grid = heatmaps(at)[1:3]
    for figure, panels in ((step2, step2.panels[2:]), (grid, grid.panels)):
        live = np.concatenate([panel.values[~panel.masked] for panel in panels])
        (scale,) = {figure.scales[panel.scale] for panel in panels}
        # the scale spans the weights as computed; the chart holds them with 4 decimals
        assert (scale.low, scale.high) == pytest.approx((float(live.min()), float(live.max())), abs=SHOWN_ATOL)
        assert 0.0 < scale.low < scale.high  # the masked cells (weight 0) do not count
    assert [s.scheme for s in step2.scales[:2]] == ["diverging", "diverging"]  # scores keep their scale
    linked = open_page(**SMALL, color_scale="stretch")
    assert linked.button_group(key="color_scale").value == "stretch"


def test_an_auto_page_runs_on_the_suites_device(device):
    at = open_page(**SMALL)
    no_problems(at)
    assert any(f"Computed on **{device}**" in c.value for c in at.sidebar.caption)


def test_the_test_device_switch_reaches_the_page_even_where_an_accelerator_is_offered(monkeypatch):
    """With ``ATTN_PLAYGROUND_TEST_DEVICE=cpu``, ``auto`` runs on the CPU though cuda says it is there (faked here:
    were the switch ignored, the page would try cuda). The page's runs are cached by config: a config of its own,
    and the cache emptied after, so that no other test's run answers here and this CPU run answers no other test."""
    from components import runner

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setenv("ATTN_PLAYGROUND_TEST_DEVICE", "cpu")
    try:
        at = open_page(**{**SMALL, "seed": "48", "tokens": "which device ran this"})
        no_problems(at)
        assert any("Computed on **cpu**" in c.value for c in at.sidebar.caption)
    finally:
        runner.cached_run.clear()
