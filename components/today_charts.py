"""The pictures of today's attention (grouped K/V heads, RoPE, generation with a KV cache), data in, no Streamlit.

:func:`grouping_png` draws which query heads read which key/value head (a PNG); :func:`turn_chart` feature pairs of
every token's q and k before and after RoPE's turn, as points in the plane, and :func:`angles_chart` the angle each
feature pair turns by per position, :func:`step_weights_chart` one decoding step's row against the cache and
:func:`sinks_chart` each layer's weight on the first token, as Vega-Lite specs written as dicts like
:mod:`components.charts` (the tests validate them against the schema).
"""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from PIL import Image, ImageDraw, ImageFont

from components.chart_style import CANVAS_RENDERER, VEGA_CONFIG
from components.charts import VEGA_LITE_SCHEMA, Spec, weights_scale

__all__ = [
    "GROUPS",
    "TodayText",
    "angles_chart",
    "grouping_png",
    "grouping_width",
    "sinks_chart",
    "step_weights_chart",
    "turn_chart",
]

GROUPS = "groups"  # dataset name of every chart here


@dataclass(frozen=True)
class TodayText:
    """The words these charts show, in the page's language."""

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
        "config": VEGA_CONFIG,
        "usermeta": CANVAS_RENDERER,
        "data": {"name": GROUPS},
        **layer,
        "datasets": {GROUPS: data},
    }


#: Ten colours, one per group (Vega's category10), cycled beyond ten groups.
_GROUP_COLOURS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)  # fmt: skip
_BOX, _GAP, _ROWS_GAP, _MARGIN = 34, 14, 56, 8  # px: a head's square, between squares, between the rows, around


@functools.lru_cache(maxsize=64)
def grouping_png(kv_head_of: tuple[int, ...], scale: int = 2) -> bytes:
    """Query heads (top row) joined to the key/value head each reads (bottom row), coloured by group, as a PNG.

    A picture, not a Vega chart: it changes only with h and h_kv, and an image costs the browser next to nothing
    on each of the page's live redraws (``bench.today``). ``scale``: pixels per CSS pixel (sharp on a projector).

    Args:
        kv_head_of: for each query head h, the K/V head it reads (``h // (H / Hkv)``).
    """
    heads, kv_heads = len(kv_head_of), max(kv_head_of) + 1
    group = heads // kv_heads
    step = _BOX + _GAP
    width = 2 * _MARGIN + heads * step - _GAP
    height = 2 * _MARGIN + 2 * _BOX + _ROWS_GAP
    image = Image.new("RGB", (width * scale, height * scale), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=12 * scale)

    def centre(column: float, row: int) -> tuple[float, float]:
        x = _MARGIN + column * step + _BOX / 2
        y = _MARGIN + _BOX / 2 + row * (_BOX + _ROWS_GAP)
        return x * scale, y * scale

    def square(column: float, row: int, colour: str, label: str) -> None:
        x, y = centre(column, row)
        half = _BOX * scale / 2
        draw.rectangle((x - half, y - half, x + half, y + half), fill=colour)
        draw.text((x, y), label, fill="white", font=font, anchor="mm")

    for h, g in enumerate(kv_head_of):  # the edges first, under the squares
        (x0, y0), (x1, y1) = centre(h, 0), centre(g * group + (group - 1) / 2, 1)
        draw.line((x0, y0, x1, y1), fill=_GROUP_COLOURS[g % len(_GROUP_COLOURS)], width=2 * scale)
    for h, g in enumerate(kv_head_of):
        square(h, 0, _GROUP_COLOURS[g % len(_GROUP_COLOURS)], f"q{h}")
    for g in range(kv_heads):
        square(g * group + (group - 1) / 2, 1, _GROUP_COLOURS[g % len(_GROUP_COLOURS)], f"kv{g}")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def grouping_width(heads: int) -> int:
    """The CSS width of :func:`grouping_png`'s picture for ``heads`` query heads."""
    return 2 * _MARGIN + heads * (_BOX + _GAP) - _GAP


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


_HEAD_ROW = 24  # px: a head's row in the step chart
_STEP_WIDTH_MAX = 560  # px of cells: with the head axis and the legend the chart fits a 1280 px window's content


def step_weights_chart(frame: pd.DataFrame, labels: Sequence[str], first_new: int, text: dict[str, str]) -> Spec:
    """One decoding step's weights, a row per head over the cached keys, the keys this step appended outlined.

    Args:
        frame: columns ``head``, ``key`` (the key's position), ``weight``.
        labels: each cached key's label (``3:the``), by position.
        first_new: the first position this step appended (the prompt's first for the prefill).
        text: the words ``head``, ``key`` and ``weight``.
    """
    data = frame.assign(label=[labels[k] for k in frame["key"]], new=frame["key"] >= first_new)
    x = {"field": "label", "type": "ordinal", "title": text["key"], "sort": {"field": "key"}}
    y = {"field": "head", "type": "ordinal", "title": text["head"]}
    tooltip = [
        {"field": "head", "type": "ordinal", "title": text["head"]},
        {"field": "label", "type": "nominal", "title": text["key"]},
        {"field": "weight", "type": "quantitative", "title": text["weight"], "format": ".4f"},
    ]
    colour = {"field": "weight", "type": "quantitative", "title": text["weight"], "scale": weights_scale()}
    cells = {"mark": {"type": "rect"}, "encoding": {"x": x, "y": y, "color": colour, "tooltip": tooltip}}
    outline = {
        "transform": [{"filter": "datum.new"}],
        "mark": {"type": "rect", "fill": None, "stroke": "#d62728", "strokeWidth": 2},
        "encoding": {"x": x, "y": y},
    }
    # width and height size the cells (a row of at least _HEAD_ROW px per head); "pad" grows the chart around them
    # for the axes and the legend, where Streamlit's default ("fit") would squeeze all of it into width x height
    width = min(max(18 * len(labels), 240), _STEP_WIDTH_MAX)
    height = min(max(_HEAD_ROW * int(frame["head"].nunique()), 80), 720)
    autosize = {"type": "pad", "contains": "padding"}
    return _spec({"layer": [cells, outline], "width": width, "height": height, "autosize": autosize}, data)


def sinks_chart(shares: Sequence[float], uniform: float, text: dict[str, str]) -> Spec:
    """Per layer, the new tokens' mean weight on the first token (bars), and the even share (a rule).

    Args:
        shares: one per layer, first layer first.
        uniform: what spreading each row's weight evenly over its cached keys gives, averaged over the steps.
        text: the words ``layer`` and ``share``.
    """
    data = pd.DataFrame({"layer": range(len(shares)), "share": list(shares), "uniform": uniform})
    x = {"field": "layer", "type": "ordinal", "title": text["layer"], "axis": {"labelAngle": 0}}
    y = {"field": "share", "type": "quantitative", "title": text["share"], "scale": {"domain": [0, 1]}}
    bars = {
        "mark": {"type": "bar", "color": "#2563eb"},
        "encoding": {"x": x, "y": y, "tooltip": [x, {**y, "format": ".3f"}]},
    }
    even = {
        "mark": {"type": "rule", "color": "#d62728", "strokeDash": [4, 3]},
        "encoding": {"y": {"field": "uniform", "type": "quantitative"}},
    }
    return _spec({"layer": [bars, even], "width": min(max(24 * len(shares), 240), 720), "height": 200}, data)
