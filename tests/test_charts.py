"""The one Vega-Lite chart of the main page (the per-head summary bars), read as data and checked against the schema."""

from __future__ import annotations

import json

import altair as alt
import jsonschema
import torch

from components import charts, frames


def _summary_spec() -> dict:
    weights = torch.softmax(torch.randn(16, 4, 4), dim=-1)  # (H, Lq, Lk)
    return charts.head_summary_chart(frames.head_summary_frame(weights), charts.ChartText(head="头"))


def test_head_summary_chart_bars_per_head():
    spec = _summary_spec()
    bars = spec["hconcat"]
    assert [bar["encoding"]["y"]["field"] for bar in bars] == ["entropy", "max_weight"]
    assert all(bar["encoding"]["x"]["field"] == "head" and bar["encoding"]["x"]["title"] == "头" for bar in bars)
    assert bars[1]["encoding"]["y"]["scale"] == {"domain": [0.0, 1.0]}  # a weight: on 0-1
    tooltip = {item["field"] for item in bars[0]["encoding"]["tooltip"]}
    assert tooltip == {"head", "entropy", "max_weight"}
    assert spec["datasets"][charts.CELLS]["head"].tolist() == list(range(16))


def test_fonts_are_projector_sized_and_fall_back_to_cjk():
    config = _summary_spec()["config"]
    assert config["font"] == "sans-serif"
    assert config["axis"]["labelFontSize"] >= 14
    assert config["axis"]["titleFontSize"] >= 14


def test_the_summary_is_valid_vega_lite_of_the_version_altair_ships():
    assert charts.VEGA_LITE_SCHEMA == alt.SCHEMA_URL
    validator = jsonschema.Draft7Validator(alt.vegalite.v6.schema.core.load_schema())
    spec = _summary_spec()
    rows = {name: json.loads(frame.to_json(orient="records")) for name, frame in spec["datasets"].items()}
    errors = [error.message for error in validator.iter_errors({**spec, "datasets": rows})]
    assert not errors, errors[:3]
