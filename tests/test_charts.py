"""Chart builders without Streamlit: the Vega-Lite specs they produce, read as data and checked against the schema."""

from __future__ import annotations

import json
from collections.abc import Iterator

import altair as alt
import jsonschema
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import torch

from components import charts, frames

TOKENS = ["the", "cat", "sat", "on", "the", "mat"]


def _walk(node: object) -> Iterator[dict]:
    """Every dict inside a Vega-Lite spec."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _encodings(spec: dict, channel: str) -> list[dict]:
    return [
        d["encoding"][channel] for d in _walk(spec) if isinstance(d.get("encoding"), dict) and channel in d["encoding"]
    ]


def _filters(spec: dict) -> list[str]:
    return [d["filter"] for d in _walk(spec) if isinstance(d.get("filter"), str)]


def _diverging_limit(spec: dict) -> float:
    """The half-width of a chart's diverging colour domain: ``[-limit, limit]``, ``limit`` read from its data."""
    (scale,) = [enc["scale"] for enc in _encodings(spec, "color") if "field" in enc]
    assert scale["domainMid"] == 0
    assert scale["domain"] == {"expr": "[-limit, limit]"}
    assert charts.LIMIT_PARAM in spec["params"]
    assert charts.LIMIT_PARAM["expr"].count(f"data('{charts.TOKENS}')[0].limit") == 1
    limits = spec["datasets"][charts.TOKENS]["limit"].unique()
    assert len(limits) == 1  # one value, on every row
    return float(limits[0])


def _dataset(spec: dict, columns: set[str]) -> list[dict]:
    """The rows of the dataset that has exactly these columns."""
    for frame in spec["datasets"].values():
        if set(frame.columns) == columns:
            return frame.to_dict("records")
    raise AssertionError(f"no dataset with columns {columns}")


@pytest.fixture
def causal_frame() -> pd.DataFrame:
    keep = torch.ones(6, 6, dtype=torch.bool).tril()  # (Lq, Lk)
    weights = torch.softmax(torch.randn(1, 6, 6).masked_fill(~keep, float("-inf")), dim=-1)  # (1, Lq, Lk)
    return frames.attention_frame(weights, ~keep)


def test_weights_use_a_fixed_zero_to_one_scale(causal_frame):
    spec = charts.attention_heatmap(causal_frame, frames.tokens_frame(TOKENS), "weights")
    scales = [enc["scale"] for enc in _encodings(spec, "color") if "field" in enc]
    assert scales
    assert all(scale["domain"] == [0.0, 1.0] for scale in scales)


def test_scores_use_a_diverging_scale_symmetric_around_zero():
    scores = torch.tensor([[[-3.0, 1.0], [0.5, 2.0]]])
    spec = charts.attention_heatmap(frames.attention_frame(scores), frames.tokens_frame(["a", "b"]), "scores")
    assert 3.0 <= _diverging_limit(spec) <= 3.1


def test_repeated_tokens_get_distinct_labels_sorted_by_position(causal_frame):
    spec = charts.attention_heatmap(causal_frame, frames.tokens_frame(TOKENS), "weights")
    expected = ["0:the", "1:cat", "2:sat", "3:on", "4:the", "5:mat"]
    for channel in ("x", "y"):
        sorts = [enc["sort"] for enc in _encodings(spec, channel)]
        assert sorts
        assert all(sort == expected for sort in sorts)
    labels = _dataset(spec, {"pos", "label"})
    assert [row["label"] for row in labels] == expected


def test_labels_are_looked_up_by_position_not_repeated_per_cell(causal_frame):
    spec = charts.attention_heatmap(causal_frame, frames.tokens_frame(TOKENS), "weights")
    lookups = {d["lookup"]: d["as"] for d in _walk(spec) if "lookup" in d}
    assert lookups == {"q": ["query"], "k": ["key"]}
    cells = _dataset(spec, {"head", "q", "k", "value", "masked"})
    assert len(cells) == 36


def test_masked_cells_are_drawn_grey_with_a_cross(causal_frame):
    spec = charts.attention_heatmap(causal_frame, frames.tokens_frame(TOKENS), "weights")
    layers = spec["layer"]
    marks = [(layer["mark"]["type"], layer["mark"].get("color"), layer["mark"].get("text")) for layer in layers]
    assert ("rect", charts.MASKED_COLOR, None) in marks
    assert ("text", charts.CROSS_COLOR, "×") in marks
    assert "datum.masked" in _filters(spec)
    assert "!datum.masked" in _filters(spec)
    cells = _dataset(spec, {"head", "q", "k", "value", "masked"})
    assert {(row["q"], row["k"]) for row in cells if row["masked"]} == {
        (i, j) for i in range(6) for j in range(i + 1, 6)
    }


def test_tiny_cells_are_marked_grey_without_a_cross():
    keep = torch.ones(60, 60, dtype=torch.bool).tril()
    frame = frames.attention_frame(torch.zeros(1, 60, 60), ~keep)
    spec = charts.attention_heatmap(frame, frames.tokens_frame(["w"] * 60), "weights", height_px=200)
    marks = [(layer["mark"]["type"], layer["mark"].get("color")) for layer in spec["layer"]]
    assert marks == [("rect", None), ("rect", charts.MASKED_COLOR)]


def test_tooltip_names_query_key_and_value(causal_frame):
    text = charts.ChartText(query="查询词元", key="键词元", weight="权重")
    spec = charts.attention_heatmap(causal_frame, frames.tokens_frame(TOKENS), "weights", text)
    tooltips = _encodings(spec, "tooltip")
    assert tooltips
    fields = {(item["field"], item["title"]) for tooltip in tooltips for item in tooltip}
    assert {("query", "查询词元"), ("key", "键词元"), ("value", "权重")} <= fields


def test_scores_with_minus_inf_reach_vega_as_null():
    scores = torch.tensor([[[0.5, float("-inf")], [0.25, -1.0]]])
    frame = frames.attention_frame(scores, torch.isneginf(scores))
    spec = charts.attention_heatmap(frame, frames.tokens_frame(["a", "b"]), "scores")
    sent = pa.ipc.open_stream(frames.arrow_bytes(spec["datasets"][charts.CELLS])).read_all()  # what the page sends
    values = sent.column("value").to_pylist()
    assert values[1] is None
    assert all(np.isfinite(v) for v in values if v is not None)


def test_fonts_are_projector_sized_and_fall_back_to_cjk(causal_frame):
    spec = charts.attention_heatmap(causal_frame, frames.tokens_frame(TOKENS), "weights")
    config = spec["config"]
    assert config["font"] == "sans-serif"
    assert config["axis"]["labelFontSize"] >= 14
    assert config["axis"]["titleFontSize"] >= 14


def test_grid_has_one_facet_per_head_without_token_axes():
    weights = torch.softmax(torch.randn(8, 5, 5), dim=-1)  # (H, Lq, Lk)
    spec = charts.attention_grid(frames.attention_frame(weights), frames.tokens_frame(list("abcde")), "weights")
    assert spec["facet"]["field"] == "head"
    assert spec["columns"] == 4
    assert {row["head"] for row in _dataset(spec, {"head", "q", "k", "value", "masked"})} == set(range(8))
    assert all(enc.get("axis", "missing") is None for enc in _encodings(spec, "x"))


def test_feature_heatmap_is_diverging_and_names_token_feature_value():
    matrix = torch.linspace(-2, 1, 3 * 4).reshape(3, 4)  # (L, d_k)
    spec = charts.feature_heatmap(frames.feature_frame(matrix), frames.tokens_frame(["x", "y", "x"]))
    assert 2.0 <= _diverging_limit(spec) <= 2.1
    fields = {item["field"] for tooltip in _encodings(spec, "tooltip") for item in tooltip}
    assert fields == {"query", "f", "value"}
    assert spec["autosize"]["type"] == "fit-x"


def test_shared_limit_gives_side_by_side_charts_the_same_colours():
    small = frames.feature_frame(torch.full((2, 2), 0.1))
    spec = charts.feature_heatmap(small, frames.tokens_frame(["a", "b"]), limit=3.0)
    assert _diverging_limit(spec) == 3.0


def test_concat_marks_every_head_boundary():
    concat = torch.randn(4, 12)  # (L, d_model) with 3 heads of d_k = 4
    frame = frames.feature_frame(concat, frames.concat_columns(12, 3, 4))
    spec = charts.concat_heatmap(frame, frames.tokens_frame(list("abcd")), 3, 4, 4)
    rules = [layer for layer in spec["layer"] if layer["mark"]["type"] == "rule"]
    assert len(rules) == 1
    bounds = [row["x"] for row in _dataset(spec, {"x"})]
    assert bounds == [4, 8]
    carried = spec["datasets"][charts.TOKENS].iloc[0]  # the sizes the spec's expressions read
    assert (carried["d_k"], carried["shown"], carried["heads"]) == (4, 4, 3)


def test_concat_of_other_head_sizes_keeps_its_spec():
    tokens = frames.tokens_frame(list("abcd"))
    three = charts.concat_heatmap(frames.feature_frame(torch.randn(4, 12)), tokens, 3, 4, 4)
    cut = charts.concat_heatmap(
        frames.feature_frame(torch.randn(4, 64), frames.concat_columns(64, 8, 2)), tokens, 8, 8, 2
    )
    assert _spec_text(three) == _spec_text(cut)
    assert [row["x"] for row in _dataset(cut, {"x"})] == [2, 4, 6, 8, 10, 12, 14]  # boundaries in shown slots


def test_head_summary_chart_bars_per_head():
    summary = frames.head_summary_frame(torch.softmax(torch.randn(16, 4, 4), dim=-1))
    spec = charts.head_summary_chart(summary)
    ys = {enc["field"] for enc in _encodings(spec, "y")}
    assert ys == {"entropy", "max_weight"}


@pytest.mark.parametrize(("values", "expected"), [([0.0], 1.0), ([-0.034, 0.01], 0.034), ([2.5, -7.21], 7.3)])
def test_symmetric_limit(values, expected):
    assert charts.symmetric_limit(np.array(values)) == pytest.approx(expected)
    assert charts.symmetric_limit(np.array([np.nan, -np.inf, *values])) == pytest.approx(expected)


def _inline(spec: dict) -> dict:
    """The spec with its DataFrames as inline rows (NaN as null), as Vega-Lite's schema describes datasets."""
    rows = {name: json.loads(frame.to_json(orient="records")) for name, frame in spec["datasets"].items()}
    return {**spec, "datasets": rows}


def test_every_chart_is_valid_vega_lite_of_the_version_altair_ships():
    assert charts.VEGA_LITE_SCHEMA == alt.SCHEMA_URL
    validator = jsonschema.Draft7Validator(alt.vegalite.v6.schema.core.load_schema())
    keep = torch.ones(6, 6, dtype=torch.bool).tril()
    scores = torch.randn(3, 6, 6).masked_fill(~keep, float("-inf"))  # (H, Lq, Lk)
    weights = torch.softmax(scores, dim=-1)
    tokens = frames.tokens_frame(TOKENS)
    concat = torch.randn(6, 12)  # (L, d_model) with 3 heads of d_k = 4
    specs = [
        charts.attention_heatmap(frames.attention_frame(weights[:1], ~keep), tokens, "weights"),  # numbers in cells
        charts.attention_heatmap(frames.attention_frame(scores[:1], ~keep), tokens, "scores", height_px=40),
        charts.attention_grid(frames.attention_frame(weights, ~keep), tokens, "weights"),
        charts.attention_grid(frames.attention_frame(scores, ~keep), tokens, "scores"),
        charts.head_summary_chart(frames.head_summary_frame(weights)),
        charts.feature_heatmap(frames.feature_frame(concat), tokens),
        charts.concat_heatmap(frames.feature_frame(concat, frames.concat_columns(12, 3, 2)), tokens, 3, 4, 2),
    ]
    for spec in specs:
        errors = [error.message for error in validator.iter_errors(_inline(spec))]
        assert not errors, errors[:3]


def _spec_text(spec: dict) -> str:
    """Everything the browser compiles: the spec without its data."""
    return json.dumps({key: value for key, value in spec.items() if key != "datasets"})


SAME_SHAPE_BUILDERS = {  # matrices of shape (H, L, L) = (2, 6, 6) in, a chart of it out
    "heatmap, weights": lambda m, tokens: charts.attention_heatmap(frames.attention_frame(m[:1]), tokens, "weights"),
    "heatmap, scores": lambda m, tokens: charts.attention_heatmap(frames.attention_frame(m[:1]), tokens, "scores"),
    "grid, weights": lambda m, tokens: charts.attention_grid(frames.attention_frame(m), tokens, "weights"),
    "grid, scores": lambda m, tokens: charts.attention_grid(frames.attention_frame(m), tokens, "scores"),
    "features": lambda m, tokens: charts.feature_heatmap(frames.feature_frame(m[0]), tokens),
    "concat": lambda m, tokens: charts.concat_heatmap(
        frames.feature_frame(m.transpose(0, 1).reshape(6, 12)), tokens, 2, 6, 6
    ),
}


@pytest.mark.parametrize("name", SAME_SHAPE_BUILDERS)
def test_new_numbers_of_the_same_shapes_give_the_same_spec_so_the_browser_only_swaps_data(name):
    tokens = frames.tokens_frame(TOKENS)
    small, large = torch.softmax(torch.randn(2, 6, 6), dim=-1), 5 * torch.randn(2, 6, 6)  # (H, Lq, Lk)
    first, second = (SAME_SHAPE_BUILDERS[name](m, tokens) for m in (small, large))
    assert _spec_text(first) == _spec_text(second)
    assert not first["datasets"][charts.CELLS].equals(second["datasets"][charts.CELLS])
    if "weights" not in name:  # the colour limit changed with the numbers, in the data
        assert _diverging_limit(first) < _diverging_limit(second)


def test_feature_heatmaps_of_other_widths_keep_their_spec():
    tokens = frames.tokens_frame(TOKENS)
    narrow, wide = (charts.feature_heatmap(frames.feature_frame(torch.randn(6, d)), tokens) for d in (4, 64))
    assert _spec_text(narrow) == _spec_text(wide)  # the x domain is the data's: 0 to the last feature's end
