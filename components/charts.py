"""Chart words, and the one Vega-Lite chart of the main page (no Streamlit, testable as data).

The heatmaps are drawn on a canvas by the page's own component (:mod:`components.heatmap`,
:mod:`components.canvas`); what stays Vega-Lite is cheap for it: the bars that summarise every
head when the all-heads grid would be too big (:func:`head_summary_chart`, at most 64 bars); the
training views' charts (:mod:`components.training_charts`) share the schema version, the weights'
0-1 scale and the cell size here, and a slide enlarges any spec's type with :func:`scale_fonts`.

The spec is written as a dict rather than built with Altair: Altair spends about 50 ms a chart
building and validating its object tree; a dict is built in tens of microseconds. The tests
validate it against the Vega-Lite JSON schema that Altair ships. It draws on a canvas, without
per-mark ARIA descriptions, in ``sans-serif`` (so CJK words fall back to a CJK font), with its
data in ``spec["datasets"]`` as a DataFrame under :data:`CELLS`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from components.chart_style import CANVAS_RENDERER, VEGA_CONFIG, WEIGHTS_SCHEME

__all__ = [
    "CELLS",
    "PRESENTATION_FONT_SCALE",
    "TOKENS",
    "VEGA_LITE_SCHEMA",
    "ChartText",
    "Spec",
    "cell_px",
    "head_summary_chart",
    "scale_fonts",
    "weights_scale",
]

Spec = dict[str, Any]

#: The Vega-Lite version the specs are written for (the one Altair 6.3 emits; checked by the tests).
VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v6.4.1.json"
CELLS = "cells"  # dataset: one row per head (or per heatmap cell, in the training charts)
TOKENS = "tokens"  # dataset: position -> token label (the training charts)

#: How much larger a chart's type is on a projector slide (teacher mode): :func:`scale_fonts` for a spec;
#: the slide's style also sets it as the CSS variable ``--attn-chart-font-scale`` for the canvas heatmaps.
PRESENTATION_FONT_SCALE = 1.5


@dataclass(frozen=True)
class ChartText:
    """The words a chart shows (axis titles, legend titles, tooltip names, notes), in the page's language."""

    query: str = "query token"
    key: str = "key token"
    token: str = "token"
    weight: str = "weight"
    score: str = "score"
    value: str = "value"
    head: str = "head"
    feature: str = "feature"
    masked: str = "masked"
    entropy: str = "entropy (bits)"
    max_weight: str = "largest weight"
    heads_axis: str = "head (each block is one head)"
    unscored: str = "no loss on this row (faded)"
    hover: str = "Not every token is labelled at this size: point at a cell to see its tokens."
    save_png: str = "Download this chart as PNG"


def weights_scale() -> Spec:
    """The fixed 0-1 scale of attention weights (comparable across heads and runs)."""
    return {"domain": [0.0, 1.0], "scheme": WEIGHTS_SCHEME, "clamp": True}


def cell_px(count: int, target_px: int, low: int = 3, high: int = 44) -> int:
    """Side of one heatmap cell so that ``count`` cells span about ``target_px`` pixels."""
    return int(min(high, max(low, target_px // max(1, count))))


def scale_fonts(spec: Spec, scale: float) -> Spec:
    """``spec`` with the font sizes of its words (axes, legends, headers, titles) times ``scale``.

    Marks keep their size (a masked cell's ``×`` fits its cell), and so do the datasets; a new
    dict is returned, ``spec`` is not changed.
    """

    def scaled(node: Any, key: str = "") -> Any:
        if key.lower().endswith("fontsize") and isinstance(node, int | float):
            return round(node * scale, 1)
        if isinstance(node, dict):
            kept = {"datasets", "mark"}
            return {name: value if name in kept else scaled(value, name) for name, value in node.items()}
        if isinstance(node, list):
            return [scaled(item) for item in node]
        return node

    return scaled(spec)


def _field(name: str, kind: str, **extra: Any) -> Spec:
    return {"field": name, "type": kind, **extra}


def head_summary_chart(summary: pd.DataFrame, text: ChartText = ChartText()) -> Spec:
    """Bars per head of mean entropy and mean largest weight, for when the full grid would be too big.

    Args:
        summary: :func:`components.frames.head_summary_frame` (columns ``head, entropy, max_weight``).
        text: axis and tooltip words.

    Returns:
        A Vega-Lite spec (two bar charts side by side); ``datasets`` holds ``summary``.
    """
    x = _field("head", "ordinal", title=text.head, axis={"labelOverlap": "greedy", "labelAngle": 0})
    tooltip = [
        _field("head", "ordinal", title=text.head),
        _field("entropy", "quantitative", title=text.entropy, format=".3f"),
        _field("max_weight", "quantitative", title=text.max_weight, format=".3f"),
    ]
    entropy = _field("entropy", "quantitative", title=text.entropy)
    peak = _field("max_weight", "quantitative", title=text.max_weight, scale={"domain": [0.0, 1.0]})
    bars = [
        {
            "mark": {"type": "bar", "color": color},
            "encoding": {"x": x, "y": y, "tooltip": tooltip},
            "width": 380,
            "height": 200,
        }
        for color, y in (("#6b7280", entropy), ("#2563eb", peak))
    ]
    return {
        "$schema": VEGA_LITE_SCHEMA,
        "config": VEGA_CONFIG,
        "usermeta": CANVAS_RENDERER,
        "data": {"name": CELLS},
        "hconcat": bars,
        "datasets": {CELLS: summary},
    }
