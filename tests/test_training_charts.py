"""The training views' charts as data: valid Vega-Lite, labelled heads, faded rows without a loss."""

from __future__ import annotations

import json

import altair as alt
import jsonschema
import pandas as pd
import torch

from components import frames
from components.panels.step2 import row_ranges
from components.training_charts import MARKER, curves_chart, difference_chart, heads_grid

TOKENS = ["3", "1", "4", "1", "5"]


def _inline(spec: dict) -> dict:
    rows = {name: json.loads(frame.to_json(orient="records")) for name, frame in spec["datasets"].items()}
    return {**spec, "datasets": rows}


def _heads(scored: list[bool]) -> pd.DataFrame:
    weights = torch.softmax(torch.randn(2, 5, 5), dim=-1)  # (H, L, L)
    cells = frames.attention_frame(weights)
    cells["scored"] = [scored[q] for q in cells["q"]]
    return cells


def test_every_training_chart_is_valid_vega_lite():
    validator = jsonschema.Draft7Validator(alt.vegalite.v6.schema.core.load_schema())
    curves = pd.DataFrame({"step": [1, 2, 3], "loss": [3.0, 2.0, 1.0], "accuracy": [0.1, 0.5, 0.9]})
    difference = pd.DataFrame({"step": [0, 5, 0, 5], "layer": [0, 0, 1, 1], "difference": [0.1, 0.9, 0.2, 0.3]})
    tokens = frames.tokens_frame(TOKENS)
    specs = [
        curves_chart(curves),
        difference_chart(difference, marked_step=5),
        difference_chart(difference[difference["layer"] == 0], marked_step=0),
        heads_grid(_heads([False, True, True, True, True]), tokens, ["head 0: a", "head 1: b"]),
    ]
    for spec in specs:
        errors = [error.message for error in validator.iter_errors(_inline(spec))]
        assert not errors, errors[:3]


def test_head_grids_title_each_head_and_fade_the_rows_without_a_loss():
    spec = heads_grid(_heads([False, True, True, False, True]), frames.tokens_frame(TOKENS), ["0: 前一个词元", "1: b"])
    expression = spec["facet"]["header"]["labelExpr"]
    assert json.loads(expression.removesuffix("[datum.value]")) == ["0: 前一个词元", "1: b"]
    (weights, _masked) = spec["spec"]["layer"]
    assert weights["encoding"]["opacity"]["condition"]["test"] == "datum.scored"
    assert weights["encoding"]["opacity"]["value"] < 1
    cells = spec["datasets"]["cells"]
    assert set(cells.loc[~cells["scored"], "q"]) == {0, 3}


def test_the_difference_chart_marks_the_snapshot_and_names_layers_only_when_there_are_two():
    one = pd.DataFrame({"step": [0, 5], "layer": [0, 0], "difference": [0.1, 0.9]})
    spec = difference_chart(one, marked_step=5)
    assert spec["datasets"][MARKER]["step"].tolist() == [5]
    assert spec["layer"][0]["encoding"]["color"]["legend"] is None
    two = pd.concat([one, one.assign(layer=1)])
    assert difference_chart(two, 0)["layer"][0]["encoding"]["color"]["legend"] == {}


def test_row_ranges_shorten_runs():
    assert row_ranges([0]) == "0"
    assert row_ranges([13, 0, 11, 12]) == "0, 11–13"
    assert row_ranges([1, 2, 4, 6, 7, 8]) == "1–2, 4, 6–8"
