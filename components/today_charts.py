"""The charts of today's attention (grouped K/V heads, RoPE) as Vega-Lite specs: data in, dict out, no Streamlit.

:func:`grouping_chart` draws which query heads read which key/value head; :func:`turn_chart` one feature pair of
every token's q before and after RoPE's turn, as points in the plane; :func:`angles_chart` the angle each feature
pair turns by per position. Written as dicts like :mod:`components.charts` (the tests validate them against the
Vega-Lite schema).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from components.chart_style import CANVAS_RENDERER, FONT, FONT_SIZE
from components.charts import VEGA_LITE_SCHEMA, Spec

__all__ = ["GROUPS", "TodayText", "angles_chart", "grouping_chart", "turn_chart"]

GROUPS = "groups"  # dataset name of every chart here
_PALETTE = "category10"
_CONFIG: Spec = {
    "font": FONT,
    "axis": {"labelFontSize": FONT_SIZE, "titleFontSize": FONT_SIZE, "grid": False},
    "legend": {"labelFontSize": FONT_SIZE - 2, "titleFontSize": FONT_SIZE - 2},
    "header": {"labelFontSize": FONT_SIZE - 2, "titleFontSize": FONT_SIZE - 2},
    "view": {"strokeWidth": 0},
    "aria": False,
}


@dataclass(frozen=True)
class TodayText:
    """The words these charts show, in the page's language."""

    head: str = "head"
    kv_head: str = "K/V head"
    token: str = "token"
    stage: str = "stage"
    before: str = "before RoPE"
    after: str = "after RoPE"
    pair: str = "feature pair"
    first: str = "feature i"
    second: str = "feature i + d_k/2"
    angle: str = "angle per position (rad)"
    wavelength: str = "positions per full turn"


def _spec(layer: Spec, data: pd.DataFrame) -> Spec:
    return {
        "$schema": VEGA_LITE_SCHEMA,
        "config": _CONFIG,
        "usermeta": CANVAS_RENDERER,
        "data": {"name": GROUPS},
        **layer,
        "datasets": {GROUPS: data},
    }


def grouping_chart(kv_head_of: Sequence[int], text: TodayText = TodayText()) -> Spec:
    """Query heads (top row) joined to the key/value head each reads (bottom row), coloured by group.

    Args:
        kv_head_of: for each query head h, the K/V head it reads (``h // (H / Hkv)``).
    """
    heads = len(kv_head_of)
    kv_heads = max(kv_head_of) + 1
    group = heads // kv_heads
    rows = []
    for h, g in enumerate(kv_head_of):
        center = g * group + (group - 1) / 2
        rows.append({"x": float(h), "y": 1.0, "x2": center, "y2": 0.0, "label": f"q{h}", "kv": g, "row": "q"})
    for g in range(kv_heads):
        center = g * group + (group - 1) / 2
        rows.append({"x": center, "y": 0.0, "x2": center, "y2": 0.0, "label": f"kv{g}", "kv": g, "row": "kv"})
    data = pd.DataFrame(rows)
    x_scale = {"domain": [-0.6, heads - 0.4]}
    y_scale = {"domain": [-0.35, 1.35]}
    x = {"field": "x", "type": "quantitative", "scale": x_scale, "axis": None}
    y = {"field": "y", "type": "quantitative", "scale": y_scale, "axis": None}
    color = {"field": "kv", "type": "nominal", "scale": {"scheme": _PALETTE}, "legend": None}
    tooltip = [
        {"field": "label", "type": "nominal", "title": text.head},
        {"field": "kv", "type": "ordinal", "title": text.kv_head},
    ]
    edges = {
        "transform": [{"filter": "datum.row == 'q'"}],
        "mark": {"type": "rule", "strokeWidth": 2, "opacity": 0.6},
        "encoding": {"x": x, "y": y, "x2": {"field": "x2"}, "y2": {"field": "y2"}, "color": color},
    }
    boxes = {
        "mark": {"type": "square", "size": 900, "opacity": 1},
        "encoding": {"x": x, "y": y, "color": color, "tooltip": tooltip},
    }
    labels = {
        "mark": {"type": "text", "color": "white", "fontWeight": "bold"},
        "encoding": {"x": x, "y": y, "text": {"field": "label", "type": "nominal"}},
    }
    return _spec(
        {"layer": [edges, boxes, labels], "width": min(60 * heads + 40, 720), "height": 130},
        data,
    )


def turn_chart(frame: pd.DataFrame, text: TodayText = TodayText()) -> Spec:
    """Feature pairs of every token's q and k, before and after RoPE's turn: a row per vector, a square panel per
    pair, its two axes on one scale (a turn looks like a turn), the origin marked.

    Args:
        frame: columns ``vector`` (``q`` or ``k``), ``pair`` (name), ``token`` (``3:the``), ``order`` (0 before,
            1 after), ``stage`` (its label), ``a`` (feature i), ``b`` (feature i + d_k/2).
    """
    tooltip = [
        {"field": "token", "type": "nominal", "title": text.token},
        {"field": "stage", "type": "nominal", "title": text.stage},
        {"field": "a", "type": "quantitative", "title": text.first, "format": ".3f"},
        {"field": "b", "type": "quantitative", "title": text.second, "format": ".3f"},
    ]
    stage = {"field": "stage", "type": "nominal", "title": text.stage, "sort": [text.before, text.after]}
    rows = []
    for vector in dict.fromkeys(frame["vector"]):
        rows.append({"hconcat": _turn_panels(frame, str(vector), stage, tooltip, text)})
    return _spec({"vconcat": rows}, frame)


def _turn_panels(frame: pd.DataFrame, vector: str, stage: Spec, tooltip: list[Spec], text: TodayText) -> list[Spec]:
    """One square panel per feature pair of ``vector`` (q or k)."""
    panels = []
    mine = frame[frame["vector"] == vector]
    for name in dict.fromkeys(mine["pair"]):
        values = mine.loc[mine["pair"] == name, ["a", "b"]].abs().to_numpy()
        reach = float(values.max()) * 1.1 if values.size else 1.0
        scale = {"domain": [-reach, reach], "nice": False}
        x = {"field": "a", "type": "quantitative", "title": text.first, "scale": scale}
        y = {"field": "b", "type": "quantitative", "title": text.second, "scale": scale}
        lines = {
            "mark": {"type": "line", "color": "#9ca3af", "strokeDash": [3, 3]},
            "encoding": {"x": x, "y": y, "detail": {"field": "token", "type": "nominal"}, "order": {"field": "order"}},
        }
        points = {
            "mark": {"type": "point", "filled": True, "size": 70},
            "encoding": {"x": x, "y": y, "color": stage, "shape": stage, "tooltip": tooltip},
        }
        origin = {
            "data": {"values": [{"a": 0.0, "b": 0.0}]},
            "mark": {"type": "point", "shape": "cross", "color": "#111827", "size": 80},
            "encoding": {"x": x, "y": y},
        }
        panels.append(
            {
                "title": f"{vector} · {name}",
                "transform": [
                    {"filter": {"field": "vector", "equal": vector}},
                    {"filter": {"field": "pair", "equal": str(name)}},
                ],
                "layer": [lines, points, origin],
                "width": 220,
                "height": 220,
            }
        )
    return panels


def angles_chart(thetas: Sequence[float], text: TodayText = TodayText()) -> Spec:
    """θ_i per feature pair i on a log scale, with how many positions a full turn takes (2π / θ_i)."""
    data = pd.DataFrame(
        {"pair": range(len(thetas)), "theta": list(thetas), "wavelength": [2 * math.pi / t for t in thetas]}
    )
    x = {"field": "pair", "type": "quantitative", "title": text.pair, "axis": {"tickMinStep": 1}}
    y = {"field": "theta", "type": "quantitative", "title": text.angle, "scale": {"type": "log"}}
    tooltip: list[Any] = [
        {"field": "pair", "type": "ordinal", "title": text.pair},
        {"field": "theta", "type": "quantitative", "title": text.angle, "format": ".3g"},
        {"field": "wavelength", "type": "quantitative", "title": text.wavelength, "format": ",.1f"},
    ]
    return _spec(
        {
            "mark": {"type": "line", "point": True, "color": "#2563eb"},
            "encoding": {"x": x, "y": y, "tooltip": tooltip},
            "width": 360,
            "height": 200,
        },
        data,
    )
