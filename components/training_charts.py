"""Vega-Lite specs of the training views: loss and accuracy curves, the heads' difference, labelled head grids.

Pure functions, DataFrame in, spec (a plain dict) out, in the style of :mod:`components.charts`
(dict specs, canvas renderer, the same fonts and 0-1 weight scale); the tests validate them
against the Vega-Lite schema. Frames:

    curves      step, loss, accuracy               one row per training step
    difference  step, layer, difference            one row per record step and layer
    heads       head, q, k, value, masked, scored  one row per cell (``components.frames.attention_frame``
                                                   plus ``scored``: the query row carries a loss)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from components.chart_style import CANVAS_RENDERER, FONT_SIZE, VEGA_CONFIG
from components.charts import CELLS, TOKENS, VEGA_LITE_SCHEMA, Spec, cell_px, weights_scale

__all__ = ["MARKER", "TrainingChartText", "curves_chart", "difference_chart", "heads_grid"]

MARKER = "marker"  # dataset: the step the timeline's slider is at
_LOSS_COLOR = "#b45309"
_ACCURACY_COLOR = "#2563eb"
_MASKED_COLOR = "#d4d4d4"
_UNSCORED_OPACITY = 0.25


@dataclass(frozen=True)
class TrainingChartText:
    """The words the training charts show, in the page's language."""

    step: str = "training step"
    loss: str = "loss"
    accuracy: str = "batch accuracy"
    difference: str = "difference between heads"
    layer: str = "layer"
    query: str = "query token"
    key: str = "key token"
    weight: str = "weight"
    scored: str = "carries a loss"


def _top(spec: Spec, datasets: dict[str, pd.DataFrame]) -> Spec:
    return {
        "$schema": VEGA_LITE_SCHEMA,
        "config": VEGA_CONFIG,
        "usermeta": CANVAS_RENDERER,
        **spec,
        "datasets": datasets,
    }


def _field(name: str, kind: str, **extra: Any) -> Spec:
    return {"field": name, "type": kind, **extra}


def curves_chart(curves: pd.DataFrame, text: TrainingChartText = TrainingChartText(), width_px: int = 320) -> Spec:
    """Loss and batch accuracy per training step, side by side."""
    step = _field("step", "quantitative", title=text.step, axis={"labelOverlap": "greedy", "tickCount": 5})

    def line(name: str, title: str, color: str, scale: Spec | None) -> Spec:
        y = _field(name, "quantitative", title=title, **({"scale": scale} if scale else {}))
        tooltip = [
            _field("step", "quantitative", title=text.step),
            _field(name, "quantitative", title=title, format=".3f"),
        ]
        return {
            "mark": {"type": "line", "color": color, "strokeWidth": 1.5},
            "encoding": {"x": step, "y": y, "tooltip": tooltip},
            "width": width_px,
            "height": 180,
        }

    panels = [
        line("loss", text.loss, _LOSS_COLOR, {"zero": True}),
        line("accuracy", text.accuracy, _ACCURACY_COLOR, {"domain": [0.0, 1.0]}),
    ]
    return _top({"data": {"name": CELLS}, "hconcat": panels}, {CELLS: curves})


def difference_chart(
    difference: pd.DataFrame, marked_step: int, text: TrainingChartText = TrainingChartText(), width_px: int = 560
) -> Spec:
    """The mean total-variation distance between heads over training, one line per layer, the slider's step marked."""
    x = _field("step", "quantitative", title=text.step, axis={"labelOverlap": "greedy", "tickCount": 6})
    y = _field("difference", "quantitative", title=text.difference, scale={"domain": [0.0, 1.0]})
    tooltip = [
        _field("step", "quantitative", title=text.step),
        _field("layer", "ordinal", title=text.layer),
        _field("difference", "quantitative", title=text.difference, format=".3f"),
    ]
    layers = difference["layer"].nunique()
    color = _field("layer", "ordinal", title=text.layer, scale={"scheme": "dark2"}, legend=None if layers < 2 else {})
    lines = {
        "data": {"name": CELLS},
        "mark": {"type": "line", "point": True},
        "encoding": {"x": x, "y": y, "color": color, "tooltip": tooltip},
    }
    rule = {
        "data": {"name": MARKER},
        "mark": {"type": "rule", "color": "#6b7280", "strokeDash": [4, 3]},
        "encoding": {"x": x},
    }
    spec = {"layer": [lines, rule], "width": width_px, "height": 240}
    return _top(spec, {CELLS: difference, MARKER: pd.DataFrame({"step": [marked_step]})})


def heads_grid(
    cells: pd.DataFrame,
    tokens: pd.DataFrame,
    titles: Sequence[str],
    text: TrainingChartText = TrainingChartText(),
    size_px: int = 230,
    columns: int = 4,
) -> Spec:
    """One layer's heads side by side, each titled (``head 0: previous token 0.98``), rows without a loss faded.

    Args:
        cells: heads frame (``head, q, k, value, masked, scored``).
        tokens: ``components.frames.tokens_frame`` of the sequence (``pos, label``).
        titles: one title per head, in head order.
        size_px: side of one head's matrix.
        columns: heads per row.
    """
    labels = tokens["label"].tolist()
    cell = cell_px(len(labels), size_px, low=2)
    axes = cell >= 9
    axis_x = (
        {"orient": "bottom", "labelAngle": -45, "labelFontSize": min(FONT_SIZE, max(9, int(cell * 0.7)))}
        if axes
        else None
    )
    axis_y = {"labelFontSize": min(FONT_SIZE, max(9, int(cell * 0.7)))} if axes else None
    source = {"data": {"name": TOKENS}, "key": "pos", "fields": ["label"]}
    position = {
        "x": _field("key", "ordinal", sort=labels, title=text.key if axes else None, axis=axis_x),
        "y": _field("query", "ordinal", sort=labels, title=text.query if axes else None, axis=axis_y),
        "tooltip": [
            _field("query", "nominal", title=text.query),
            _field("key", "nominal", title=text.key),
            _field("value", "quantitative", title=text.weight, format=".3f"),
            _field("scored", "nominal", title=text.scored),
        ],
    }
    color = _field("value", "quantitative", scale=weights_scale(), title=text.weight, legend=None)
    opacity = {"condition": {"test": "datum.scored", "value": 1.0}, "value": _UNSCORED_OPACITY}
    layers = [
        {
            "mark": {"type": "rect"},
            "encoding": {"color": color, "opacity": opacity},
            "transform": [{"filter": "!datum.masked"}],
        },
        {"mark": {"type": "rect", "color": _MASKED_COLOR}, "transform": [{"filter": "datum.masked"}]},
    ]
    header = {"labelExpr": f"{json.dumps(list(titles))}[datum.value]", "labelLimit": size_px + 40}
    spec = {
        "data": {"name": CELLS},
        "facet": _field("head", "ordinal", header=header, title=None),
        "columns": columns,
        "spacing": 16,
        "spec": {
            "width": cell * len(labels),
            "height": cell * len(labels),
            "encoding": position,
            "layer": layers,
            "transform": [
                {"lookup": "q", "from": source, "as": ["query"]},
                {"lookup": "k", "from": source, "as": ["key"]},
            ],
        },
    }
    return _top(spec, {CELLS: cells, TOKENS: tokens})
