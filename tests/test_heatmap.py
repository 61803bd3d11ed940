"""Heatmap figures and their binary payload (no Streamlit, no browser): what each chart is told to draw."""

from __future__ import annotations

import ast
import dataclasses
import struct
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np
import pytest
import torch

from components import frames, heatmap
from components.charts import ChartText
from components.heatmap import DIVERGING, SEQUENTIAL, Figure, Panel, Scale, Stage

TOKENS = ["the", "cat", "sat", "on", "the", "mat"]
LABELS = frames.token_labels(TOKENS)
KEEP = torch.ones(6, 6, dtype=torch.bool).tril()  # (Lq, Lk): causal, True = may attend


def _causal_stages(seed: int = 0) -> list[Stage]:
    torch.manual_seed(seed)
    raw = torch.randn(6, 6) * 3  # (Lq, Lk)
    scaled = (raw / 2).masked_fill(~KEEP, float("-inf"))
    weights = torch.softmax(scaled, dim=-1)
    return [
        Stage("raw", "scores", raw),
        Stage("scaled", "scores", scaled, ~KEEP),
        Stage("weights", "weights", weights, ~KEEP),
    ]


def _same(first: Figure, second: Figure) -> None:
    """``first`` is ``second`` read back from its own payload: the same bytes, so compared exactly."""
    assert first.shape == second.shape
    for ours, theirs in zip(first.panels, second.panels, strict=True):
        assert (ours.title, ours.scale) == (theirs.title, theirs.scale)
        np.testing.assert_array_equal(ours.values, heatmap.as_sent(theirs.values, second))
        if theirs.masked is not None:
            np.testing.assert_array_equal(ours.masked, theirs.masked)
    rest = ("scales", "row_title", "row_labels", "col_title", "col_labels", "col_name", "group", "group_title")
    rest += ("masked_word", "faded_word", "hover_note", "columns", "height", "square", "axes", "annotate")
    for name in rest:
        assert getattr(first, name) == getattr(second, name), name
    if second.faded_rows is None:
        assert first.faded_rows is None
    else:
        np.testing.assert_array_equal(first.faded_rows, second.faded_rows)
    if second.col_index is None:
        assert first.col_index is None
    else:
        np.testing.assert_array_equal(first.col_index, second.col_index)


# ---------------------------------------------------------------- the payload
@pytest.mark.parametrize(
    "labels",
    [LABELS, frames.token_labels(["小明", "喜欢", "<b>打球</b>", "🙂", "a\tb", "[PAD]"])],
    ids=["english", "chinese-html-emoji"],
)
def test_attention_figure_round_trips_through_the_payload(labels):
    text = ChartText(query="查询词元", key="键词元", weight="权重", score="分数", masked="被屏蔽", hover="指向格子")
    figure = heatmap.attention_figure(_causal_stages(), labels, text, "stretch", height=280)
    back = heatmap.decode(heatmap.encode(figure))
    _same(back, figure)
    assert np.isneginf(back.panels[1].values[~KEEP.numpy()]).all()  # -inf travels as -inf


def test_feature_and_concat_figures_round_trip_with_their_column_indices():
    columns = frames.concat_columns(d_model=12, num_heads=3, per_head=2)  # [0, 1, 4, 5, 8, 9]
    concat = heatmap.concat_figure("concat", torch.randn(6, 6), LABELS, columns, 2)
    features = heatmap.feature_figure([("Q", torch.randn(6, 4)), ("K", torch.randn(6, 4))], LABELS, range(4))
    for figure in (concat, features):
        _same(heatmap.decode(heatmap.encode(figure)), figure)


def test_faded_rows_round_trip_after_the_mask_and_without_one():
    unscored = torch.tensor([True, False, False, True, False, False])  # rows 0 and 3 carry no loss
    text = ChartText(unscored="没有损失的行")
    masked = heatmap.attention_figure(_causal_stages(), LABELS, text, faded_rows=unscored)
    plain = heatmap.grid_figure(torch.rand(2, 6, 6), None, "weights", LABELS, text, faded_rows=unscored.numpy())
    for figure in (masked, plain):
        np.testing.assert_array_equal(figure.faded_rows, unscored.numpy())
        assert figure.faded_word == "没有损失的行" and "没有损失的行" in figure.words()
        back = heatmap.decode(heatmap.encode(figure))
        _same(back, figure)
    payload = heatmap.encode(plain)  # no mask: the row flags follow the values
    assert payload[-6:] == bytes([1, 0, 0, 1, 0, 0])
    none = heatmap.attention_figure(_causal_stages(), LABELS, faded_rows=torch.zeros(6, dtype=torch.bool))
    assert none.faded_rows is None  # every row carries a loss: nothing faded, nothing sent
    with pytest.raises(ValueError, match="faded rows"):
        heatmap.encode(Figure(masked.panels, masked.scales, "q", tuple(LABELS), "k", faded_rows=np.ones(5, bool)))


def test_thumbnails_round_trip_last_in_the_payload_and_a_wrong_shape_is_refused():
    pictures = np.random.default_rng(0).integers(0, 256, (6, 2, 3, 4), dtype=np.uint8)  # (R, h, w, RGBA)
    pictures[0] = 0  # a token that is no patch: transparent
    unscored = torch.tensor([True, False, False, False, False, False])
    figure = heatmap.attention_figure(_causal_stages(), LABELS, faded_rows=unscored, thumbnails=pictures)
    payload = heatmap.encode(figure)
    assert payload[-pictures.size :] == pictures.tobytes()  # after the faded rows, as laid out
    back = heatmap.decode(payload)
    _same(back, figure)
    np.testing.assert_array_equal(back.thumbnails, pictures)
    np.testing.assert_array_equal(back.faded_rows, unscored.numpy())
    features = heatmap.feature_figure([("Q", torch.rand(6, 4))], LABELS, range(4), thumbnails=pictures)
    np.testing.assert_array_equal(heatmap.decode(heatmap.encode(features)).thumbnails, pictures)
    assert heatmap.decode(heatmap.encode(heatmap.attention_figure(_causal_stages(), LABELS))).thumbnails is None
    with pytest.raises(ValueError, match="thumbnails"):
        heatmap.encode(dataclasses.replace(figure, thumbnails=pictures[:5]))
    with pytest.raises(ValueError, match="thumbnails"):
        heatmap.encode(dataclasses.replace(figure, thumbnails=pictures[..., :3]))


def test_payload_layout_puts_every_array_at_a_multiple_of_its_item_size():
    columns = np.arange(5)
    beyond = np.full((3, 5), 5.0, np.float32)  # past ±3.2767: float32
    figure = Figure(
        panels=(
            Panel("a", np.full((3, 5), 0.25, np.float32), np.eye(3, 5, dtype=bool)),
            Panel("b", beyond),
        ),
        scales=(Scale(SEQUENTIAL, 0.0, 1.0, "w"),),
        row_title="q",
        row_labels=("0:x", "1:y", "2:z"),
        col_title="f",
        col_index=columns,
    )
    payload = heatmap.encode(figure)
    (length,) = struct.unpack_from("<I", payload)
    start = 4 + length + (-(4 + length) % 4)
    assert start % 4 == 0  # float32 values: panel b
    assert np.frombuffer(payload, "<f4", 15, start).tolist() == [5.0] * 15
    fixed = start + 4 * 15  # int16 values, in units of 10⁻⁴: panel a
    assert np.frombuffer(payload, "<i2", 15, fixed).tolist() == [2500] * 15
    assert (fixed + 2 * 15) % 2 == 0  # int16 column index
    assert len(payload) == fixed + 2 * 15 + 2 * 5 + 2 * 15  # values, index, one byte of mask per cell
    back = heatmap.decode(payload)
    assert [panel.values.tolist() for panel in back.panels] == [[[0.25] * 5] * 3, beyond.tolist()]


def _to_fixed(value: float) -> str:
    """JavaScript's ``value.toFixed(4)``: the exact binary value, halves away from zero (the sign apart)."""
    digits = abs(Decimal(value)).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)
    return ("-" if value < 0 and digits else "") + f"{digits:.4f}"


def test_fixed_point_keeps_the_four_decimals_a_tooltip_shows():
    generator = np.random.default_rng(0)
    values = np.concatenate(
        [
            generator.normal(0, 1, 20_000).astype(np.float32),
            generator.uniform(-1e-3, 1e-3, 2_000).astype(np.float32),  # near zero
            np.float32([0.03125, -0.03125, 0.00005, 1.00005, 3.2767, -3.2767, 0.0, 1.0]),  # exact halves, limits
        ]
    )
    values = values[np.abs(values) <= 3.2767]
    counts = heatmap.fixed_point(values)
    assert counts is not None and counts.dtype == np.int16
    shown = heatmap.as_sent(values, Figure((), (), "q", (), "k"))
    for value, back in zip(values.tolist(), shown.tolist(), strict=True):
        if _to_fixed(value) == "-0.0000":  # a negative value that rounds to zero
            assert _to_fixed(back) == "0.0000"
        else:
            assert _to_fixed(back) == _to_fixed(value)
    assert _to_fixed(0.03125) == "0.0313" and _to_fixed(-0.03125) == "-0.0313"  # halves go away from zero


@pytest.mark.parametrize("values", [[0.0, 3.27675], [-3.3, 0.0], [0.0, float("-inf")], [float("nan"), 0.0]])
def test_values_that_do_not_fit_go_as_float32(values):
    assert heatmap.fixed_point(np.float32(values)) is None
    figure = Figure((Panel("a", np.float32([values])),), (Scale(DIVERGING, -4.0, 4.0, "s"),), "q", ("0:a",), "k")
    np.testing.assert_array_equal(heatmap.decode(heatmap.encode(figure)).panels[0].values, np.float32([values]))


def test_a_figure_that_writes_its_values_in_the_cells_sends_float32():
    figure = heatmap.attention_figure(_causal_stages(), LABELS)  # 6 tokens: the cells show 2 decimals
    assert figure.annotate
    back = heatmap.decode(heatmap.encode(figure))
    np.testing.assert_array_equal(back.panels[2].values, figure.panels[2].values)  # weights as computed


def test_shapes_that_do_not_agree_are_refused():
    panel = Panel("a", np.zeros((2, 3), np.float32))
    scale = (Scale(SEQUENTIAL, 0.0, 1.0, "w"),)
    with pytest.raises(ValueError, match="row labels"):
        heatmap.encode(Figure((panel,), scale, "q", ("0:a",), "k"))
    with pytest.raises(ValueError, match="column labels"):
        heatmap.encode(Figure((panel,), scale, "q", ("0:a", "1:b"), "k", col_labels=("0:a",)))
    with pytest.raises(ValueError, match="shape"):
        other = Panel("b", np.zeros((3, 3), np.float32))
        heatmap.encode(Figure((panel, other), scale, "q", ("0:a", "1:b"), "k"))


# ---------------------------------------------------------------- colour scales
def test_weights_use_a_fixed_zero_to_one_scale_and_scores_a_symmetric_one():
    figure = heatmap.attention_figure(_causal_stages(), LABELS)
    raw, scaled, weights = (figure.scales[panel.scale] for panel in figure.panels)
    assert (weights.scheme, weights.low, weights.high) == (SEQUENTIAL, 0.0, 1.0)
    for scale, stage in ((raw, 0), (scaled, 1)):
        values = figure.panels[stage].values
        largest = np.abs(values[np.isfinite(values)]).max()
        assert scale.scheme == DIVERGING
        assert scale.low == -scale.high  # white at 0
        assert largest <= scale.high <= 1.1 * largest


def test_stretched_weights_span_the_unmasked_weights_only():
    figure = heatmap.attention_figure(_causal_stages(), LABELS, color_scale="stretch")
    panel = figure.panels[2]
    live = panel.values[~panel.masked]
    scale = figure.scales[panel.scale]
    assert (scale.low, scale.high) == (float(live.min()), float(live.max()))
    assert scale.low > 0  # the masked weights (exactly 0) are left out


def test_stretch_of_equal_or_no_weights_still_gives_a_scale():
    uniform = np.full((4, 4), 0.25, np.float32)
    flat = heatmap.weights_scale("w", "stretch", (uniform, None))
    assert flat.low == 0.25 < flat.high
    nothing = heatmap.weights_scale("w", "stretch", (uniform, np.ones((4, 4), bool)))
    assert (nothing.low, nothing.high) == (0.0, 1.0)
    with pytest.raises(ValueError, match="color_scale"):
        heatmap.weights_scale("w", "rainbow")


@pytest.mark.parametrize(("values", "expected"), [([0.0], 1.0), ([-0.034, 0.01], 0.034), ([2.5, -7.21], 7.3)])
def test_symmetric_limit(values, expected):
    assert heatmap.symmetric_limit(np.array(values)) == pytest.approx(expected)
    assert heatmap.symmetric_limit(np.array([np.nan, -np.inf, *values])) == pytest.approx(expected)


def test_features_side_by_side_share_one_limit():
    small, large = torch.full((6, 4), 0.1), torch.linspace(-2, 1, 24).reshape(6, 4)  # (L, F)
    figure = heatmap.feature_figure([("Q", small), ("K", large)], LABELS, range(4))
    (scale,) = figure.scales
    assert [panel.scale for panel in figure.panels] == [0, 0]
    assert 2.0 <= scale.high <= 2.1 and scale.low == -scale.high
    assert heatmap.feature_figure([("Q", small)], LABELS, range(4), limit=3.0).scales[0].high == 3.0


# ---------------------------------------------------------------- what each figure carries
def test_token_axes_carry_distinct_position_labels():
    figure = heatmap.attention_figure(_causal_stages(), LABELS)
    assert figure.row_labels == figure.col_labels == ("0:the", "1:cat", "2:sat", "3:on", "4:the", "5:mat")


def test_causal_mask_marks_the_staircase_above_the_diagonal():
    figure = heatmap.attention_figure(_causal_stages(), LABELS)
    above = np.triu(np.ones((6, 6), bool), k=1)
    for panel in figure.panels[1:]:
        np.testing.assert_array_equal(panel.masked, above)
    np.testing.assert_array_equal(figure.panels[2].values[above], 0.0)  # weights exactly 0 there
    cells = figure.cells()
    assert set(cells.loc[cells["masked"], "panel"]) == {1, 2}


def test_every_word_comes_from_the_page_in_its_language():
    text = ChartText(query="查询词元", key="键词元", weight="权重", score="分数", masked="被屏蔽", hover="指向格子")
    figure = heatmap.attention_figure(_causal_stages(), LABELS, text)
    assert (figure.row_title, figure.col_title, figure.masked_word, figure.hover_note) == (
        "查询词元",
        "键词元",
        "被屏蔽",
        "指向格子",
    )
    assert [scale.title for scale in figure.scales] == ["分数", "分数", "权重"]
    assert "0:the" not in figure.words() and "查询词元" in figure.words()


def test_numbers_are_written_in_cells_only_for_short_texts():
    assert heatmap.attention_figure(_causal_stages(), LABELS).annotate
    stages = [Stage("w", "weights", torch.full((9, 9), 1 / 9))]
    assert not heatmap.attention_figure(stages, frames.token_labels(list("abcdefghi"))).annotate


def test_grid_has_one_square_panel_per_head_without_token_axes_and_a_shared_mask():
    weights = torch.softmax(torch.randn(8, 6, 6).masked_fill(~KEEP, float("-inf")), dim=-1)  # (H, Lq, Lk)
    grid = heatmap.grid_figure(weights, ~KEEP, "weights", LABELS, columns=4, size_px=190)
    assert [panel.title for panel in grid.panels] == [f"head {h}" for h in range(8)]
    assert grid.square and not grid.axes and grid.columns == 4
    assert grid.height == (190 // 6) * 6
    for h, panel in enumerate(grid.panels):  # the (L, L) mask reaches every head
        np.testing.assert_array_equal(panel.masked, ~KEEP.numpy())
        np.testing.assert_array_equal(panel.values, weights[h].numpy())  # the figure holds these very numbers
    scores = heatmap.grid_figure(torch.randn(8, 6, 6), None, "scores", LABELS)
    assert scores.scales[0].scheme == DIVERGING and all(panel.masked is None for panel in scores.panels)
    titles = [f"{h}: previous token 0.9{h}" for h in range(8)]
    titled = heatmap.grid_figure(weights, ~KEEP, "weights", LABELS, head_titles=titles)
    assert [panel.title for panel in titled.panels] == titles
    with pytest.raises(ValueError, match="head titles"):
        heatmap.grid_figure(weights, ~KEEP, "weights", LABELS, head_titles=titles[:3])


def test_concat_marks_head_blocks_and_names_the_true_feature():
    columns = frames.concat_columns(d_model=12, num_heads=3, per_head=2)
    figure = heatmap.concat_figure("concat", torch.randn(6, 6), LABELS, columns, 2, ChartText(feature="特征维"))
    assert figure.group == 2 and figure.group_title == "head"
    assert figure.col_index.tolist() == [0, 1, 4, 5, 8, 9]
    assert figure.col_name == "特征维"


def _head_figures(count: int) -> list[Figure]:
    """One attention figure per head: raw scores scaled by the head's number (each head its own range)."""
    return [
        heatmap.attention_figure(
            [Stage(f"raw, head {h}", "scores", (h + 1) * torch.randn(6, 6)), *_causal_stages()], LABELS
        )
        for h in range(count)
    ]


def test_stacked_heads_round_trip_and_each_head_keeps_its_panels_and_scales():
    figures = _head_figures(4)
    stacked = heatmap.stack_heads(figures, heatmap.Heads(count=4, shown=2, moves="3", every=True))
    assert len(stacked.panels) == 4 * len(figures[0].panels) and stacked.per_head == len(figures[0].panels)
    back = heatmap.decode(heatmap.encode(stacked))
    assert back.heads == heatmap.Heads(4, 2, "3", True)
    assert back.head_figure().panels[0].title == "raw, head 2"  # the server's head by default
    for h, figure in enumerate(figures):  # what the browser draws for head h is head h's figure
        shown = back.head_figure(h)
        assert shown.heads is None
        for ours, theirs in zip(shown.panels, figure.panels, strict=True):
            assert ours.title == theirs.title
            np.testing.assert_array_equal(ours.values, theirs.values)  # -inf kept
            none = np.zeros(theirs.values.shape, bool)  # the payload gives a panel without a mask an empty one
            theirs_masked = none if theirs.masked is None else theirs.masked
            np.testing.assert_array_equal(none if ours.masked is None else ours.masked, theirs_masked)
            assert shown.scales[ours.scale] == figure.scales[theirs.scale]
    limits = [back.head_figure(h).scales[back.head_figure(h).panels[0].scale].high for h in range(4)]
    assert limits == sorted(limits) and limits[0] < limits[-1]  # not one shared range


def test_a_figure_of_the_shown_head_only_gives_no_other_head():
    (figure,) = _head_figures(1)
    alone = heatmap.stack_heads([figure], heatmap.Heads(count=8, shown=5, every=False))
    back = heatmap.decode(heatmap.encode(alone))
    assert back.heads.every is False and back.per_head == len(figure.panels)
    assert back.head_figure(5).panels[0].title == figure.panels[0].title
    with pytest.raises(ValueError, match="holds head 5 only"):
        back.head_figure(4)


def test_stacking_checks_heads_and_panels():
    figures = _head_figures(3)
    with pytest.raises(ValueError, match="3 figures for 4 heads"):
        heatmap.stack_heads(figures, heatmap.Heads(count=4, shown=0))
    with pytest.raises(ValueError, match="as many panels"):
        uneven = [figures[0], figures[1], dataclasses.replace(figures[2], panels=figures[2].panels[:1])]
        heatmap.stack_heads(uneven, heatmap.Heads(count=3, shown=0))
    with pytest.raises(ValueError, match="shown head 3 of 3"):
        heatmap.encode(heatmap.stack_heads(figures, heatmap.Heads(count=3, shown=3)))
    stacked = heatmap.stack_heads(figures, heatmap.Heads(count=3, shown=0))
    with pytest.raises(ValueError, match="head 3 of 3"):
        stacked.head_figure(3)


@pytest.mark.parametrize(
    ("d_model", "num_heads", "tokens", "every"),
    [(512, 8, 11, True), (512, 8, 24, True), (512, 8, 64, False), (1024, 16, 128, False), (64, 64, 11, True)],
)
def test_every_head_is_sent_while_it_fits_the_budget(d_model, num_heads, tokens, every):
    from components.panels import step1, step2
    from components.panels.parts import HEAD_SWITCH_CELLS, heads_fit
    from mha.config import AttentionConfig
    from mha.pipeline import run_attention

    run = run_attention(AttentionConfig(d_model=d_model, num_heads=num_heads, tokens=" ".join(["w"] * tokens)))
    per_head = 3 * tokens * frames.feature_budget(tokens, d_model // num_heads, parts=3) + 3 * tokens * tokens
    assert (num_heads * per_head <= HEAD_SWITCH_CELLS) is every
    assert heads_fit(run, (step1.QKV_CHART, step2.ScoresChart())) is every  # the page's two: their cells add up


#: What each module of components/heatmap/ may import: the figure model knows no bytes and no tensors, the scales
#: no bytes, the codec no tensors and no builders, the builders no bytes.
HEATMAP_IMPORTS = {
    "scales": {"math", "dataclasses", "numpy", "torch"},
    "figure": {"collections.abc", "dataclasses", "numpy", "pandas", "components.heatmap.scales"},
    "codec": {"json", "math", "struct", "collections.abc", "numpy", "components.heatmap.figure",
              "components.heatmap.scales"},
    "builders": {"collections.abc", "dataclasses", "numpy", "torch", "components.charts", "components.heatmap.figure",
                 "components.heatmap.scales"},
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(HEATMAP_IMPORTS))
def test_each_heatmap_module_keeps_to_its_job(name):
    """The figure model, the binary codec, the colour scales and the builders are four modules, each importing
    only what its job needs (a builder that packs bytes, or a figure that reads tensors, fails here)."""
    path = Path(heatmap.__file__).with_name(f"{name}.py")
    imported = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            imported.add(node.module if node.module.startswith("components") else node.module.split(".")[0])
    allowed = {module if module.startswith("components") else module.split(".")[0] for module in HEATMAP_IMPORTS[name]}
    assert imported <= allowed, imported - allowed
