"""Vega-Lite chart builders: DataFrame in, Vega-Lite spec (a plain dict) out (no Streamlit, testable as data).

The specs are written as dicts rather than built with Altair: Altair spends about
50 ms a chart building and validating its object tree (nine charts were 90 % of a
page rerun); a dict is built in tens of microseconds. The tests validate every
builder's output against the Vega-Lite JSON schema that Altair ships.

Fast in the browser too:
    * the spec depends on the number of tokens and the words, not on the numbers: the
      colour limit and the concatenation's head sizes travel in the data (see
      :func:`with_params`), feature axes take their extent from the data, and titles go
      above the chart on the page; so a rerun that changes the seed, the mask, the head
      or d_model sends the same specs, and the browser swaps the data instead of
      compiling and embedding each chart again (about 30 ms a chart);
    * charts draw on a canvas (thousands of rects as SVG elements are several times
      slower) and without per-mark ARIA descriptions (a canvas has no marks to label).

Conventions every chart keeps:
    * token axes show position-prefixed labels (``"3:the"``) looked up from the
      tokens frame by position, sorted by position, so repeated words stay apart;
    * attention weights use a fixed 0-1 colour scale; scores and vectors a diverging
      scale symmetric around 0 (``domainMid`` 0);
    * masked cells are drawn grey with a ``×``, never merely dark (their score is null);
    * fonts are large enough for a projector, and ``sans-serif`` so CJK labels fall back
      to a CJK font.

Every spec carries its data in ``spec["datasets"]`` as DataFrames under fixed names
(:data:`CELLS`, :data:`TOKENS`, ...). Frames come from :mod:`components.frames`; all
visible words come in a :class:`ChartText` so that the caller can translate them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from components.chart_style import DIVERGING_SCHEME, FONT, FONT_SIZE, WEIGHTS_SCHEME

__all__ = [
    "CELLS",
    "LIMIT_PARAM",
    "PRESENTATION_FONT_SCALE",
    "TOKENS",
    "VEGA_LITE_SCHEMA",
    "ChartText",
    "Spec",
    "attention_grid",
    "attention_heatmap",
    "cell_px",
    "concat_heatmap",
    "diverging_scale",
    "feature_heatmap",
    "head_summary_chart",
    "scale_fonts",
    "symmetric_limit",
    "weights_scale",
    "with_limit",
    "with_params",
]

Spec = dict[str, Any]

#: The Vega-Lite version the specs are written for (the one Altair 6.3 emits; checked by the tests).
VEGA_LITE_SCHEMA = "https://vega.github.io/schema/vega-lite/v6.4.1.json"
CELLS = "cells"  # dataset: one row per heatmap cell (or per head, for the summary)
TOKENS = "tokens"  # dataset: position -> label (and the chart's numbers, see with_params)
BOUNDS = "bounds"  # dataset: head boundaries of the concatenation


def _param(name: str) -> dict[str, str]:
    """A Vega-Lite parameter read from the tokens dataset's first row (1 until the data arrives)."""
    return {"name": name, "expr": f"length(data('{TOKENS}')) ? data('{TOKENS}')[0].{name} : 1"}


#: The diverging scales' half-width (see :func:`with_limit`).
LIMIT_PARAM = _param("limit")

#: How much larger a chart's type is on a projector slide (teacher mode): :func:`scale_fonts` for a spec;
#: the slide's style also sets it as the CSS variable ``--attn-chart-font-scale`` for charts drawn in the page.
PRESENTATION_FONT_SCALE = 1.5
MASKED_COLOR = "#d4d4d4"
CROSS_COLOR = "#404040"
_CONFIG: Spec = {
    "font": FONT,
    "axis": {"labelFontSize": FONT_SIZE, "titleFontSize": FONT_SIZE, "labelLimit": 140, "grid": False},
    "header": {"labelFontSize": FONT_SIZE, "titleFontSize": FONT_SIZE + 1},
    "legend": {"labelFontSize": FONT_SIZE - 2, "titleFontSize": FONT_SIZE - 1},
    "title": {"fontSize": FONT_SIZE + 2, "anchor": "start"},
    "view": {"strokeWidth": 0},
    "aria": False,
}
_CANVAS = {"embedOptions": {"renderer": "canvas"}}


@dataclass(frozen=True)
class ChartText:
    """The words a chart shows (axis titles, legend titles, tooltip names), in the page's language."""

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


def weights_scale() -> Spec:
    """The fixed 0-1 scale of attention weights (comparable across heads and runs)."""
    return {"domain": [0.0, 1.0], "scheme": WEIGHTS_SCHEME, "clamp": True}


def diverging_scale() -> Spec:
    """A diverging scale from ``-limit`` to ``limit`` with its middle colour at 0 (``limit``: :func:`with_limit`)."""
    return {
        "domain": {"expr": "[-limit, limit]"},
        "domainMid": 0,
        "scheme": DIVERGING_SCHEME,
        "reverse": True,
        "clamp": True,
    }


def with_params(tokens: pd.DataFrame, **values: float) -> pd.DataFrame:
    """The tokens frame carrying a chart's numbers: one column per value, the same on every row.

    The chart reads them as parameters (:func:`_param`): they ride in the data, not in the spec,
    so that new numbers do not make a new spec.
    """
    return tokens.assign(**{name: np.float64(value) for name, value in values.items()})


def with_limit(tokens: pd.DataFrame, limit: float) -> pd.DataFrame:
    """The tokens frame carrying a diverging chart's colour limit (read by :data:`LIMIT_PARAM`)."""
    return with_params(tokens, limit=limit)


def symmetric_limit(*values: pd.Series | np.ndarray) -> float:
    """The largest finite absolute value among ``values`` (1.0 if there is none), rounded up a little."""
    largest = 0.0
    for column in values:
        array = np.asarray(column, dtype=np.float64)
        finite = array[np.isfinite(array)]
        if finite.size:
            largest = max(largest, float(np.abs(finite).max()))
    if largest == 0.0:
        return 1.0
    step = 10 ** math.floor(math.log10(largest)) / 10  # round up at the second significant digit
    return math.ceil(largest / step) * step


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


def _label_font(cell: int) -> int:
    """Axis label size: projector-sized when cells are big, smaller (never below 9) when dense."""
    return int(min(FONT_SIZE, max(9, cell * 0.8)))


def _top_level(
    spec: Spec, datasets: dict[str, pd.DataFrame], fit_width: bool = False, params: Sequence[str] = ()
) -> Spec:
    """The schema, the fonts and sizes shared by every chart of the app, the renderer, and the data.

    ``fit_width``: the chart takes its container's width, but keeps its own height
    (Streamlit's default "fit" would squeeze the rows to make room for axes and title).
    ``params``: the parameters the chart reads from its tokens dataset (see :func:`with_params`).
    """
    top: Spec = {"$schema": VEGA_LITE_SCHEMA, "config": _CONFIG, "usermeta": _CANVAS}
    if fit_width:
        top["autosize"] = {"type": "fit-x", "contains": "padding"}
    if params:
        top["params"] = [_param(name) for name in params]
    return {**top, **spec, "datasets": datasets}


def _field(name: str, kind: str, **extra: Any) -> Spec:
    return {"field": name, "type": kind, **extra}


def _lookups(pairs: Sequence[tuple[str, str]]) -> list[Spec]:
    """Lookup transforms: for each ``(index_field, label_field)``, label = tokens.label at tokens.pos."""
    source = {"data": {"name": TOKENS}, "key": "pos", "fields": ["label"]}
    return [{"lookup": index_field, "from": source, "as": [label_field]} for index_field, label_field in pairs]


def _legend() -> Spec:
    """A horizontal colour bar under the chart, so side-by-side charts keep their width for the matrix."""
    return {"orient": "bottom", "direction": "horizontal", "gradientLength": 120, "titleOrient": "left"}


def _x_label_angle(labels: Sequence[str]) -> int:
    return 0 if max((len(label) for label in labels), default=0) <= 4 else -45


def _attention_layer(labels: list[str], kind: str, text: ChartText, cell: int, axes: bool, annotate: bool) -> Spec:
    """Rect layer for allowed cells, grey rect plus ``×`` for masked ones, optional numbers in cells."""
    value_title = text.weight if kind == "weights" else text.score
    scale = weights_scale() if kind == "weights" else diverging_scale()
    label_font = _label_font(cell)
    x_axis = (
        {"orient": "top", "labelAngle": _x_label_angle(labels), "labelOverlap": "greedy", "labelFontSize": label_font}
        if axes
        else None
    )
    y_axis = {"labelOverlap": "greedy", "labelFontSize": label_font} if axes else None
    shared = {  # every layer's position and tooltip
        "x": _field("key", "ordinal", sort=labels, title=text.key, axis=x_axis),
        "y": _field("query", "ordinal", sort=labels, title=text.query, axis=y_axis),
        "tooltip": [
            _field("query", "nominal", title=text.query),
            _field("key", "nominal", title=text.key),
            _field("value", "quantitative", title=value_title, format=".4f"),
            _field("masked", "nominal", title=text.masked),
        ],
    }
    allowed = [{"filter": "!datum.masked"}]
    masked = [{"filter": "datum.masked"}]
    color = _field("value", "quantitative", scale=scale, title=value_title, legend=_legend())
    layers: list[Spec] = [
        {"mark": {"type": "rect"}, "encoding": {"color": color}, "transform": allowed},
        {"mark": {"type": "rect", "color": MASKED_COLOR}, "transform": masked},
    ]
    if cell >= 8:  # below that a × is noise: the grey alone marks the cell
        cross = {"type": "text", "text": "×", "color": CROSS_COLOR, "fontSize": int(cell * 0.75)}
        layers.append({"mark": cross, "transform": masked})
    if annotate:
        dark = "0.5" if kind == "weights" else "0.6 * limit"
        numbers = {
            "text": _field("value", "quantitative", format=".2f"),
            "color": {"condition": [{"test": f"abs(datum.value) > {dark}", "value": "white"}], "value": "black"},
        }
        layers.append(
            {
                "mark": {"type": "text", "fontSize": max(8, min(13, int(cell * 0.3)))},
                "encoding": numbers,
                "transform": allowed,
            }
        )
    return {"encoding": shared, "layer": layers, "transform": _lookups([("q", "query"), ("k", "key")])}


def attention_heatmap(
    frame: pd.DataFrame,
    tokens: pd.DataFrame,
    kind: str,
    text: ChartText = ChartText(),
    height_px: int = 300,
    limit: float | None = None,
) -> Spec:
    """One head's scores or weights, as wide as its container, with token labels on both axes.

    It has no title of its own (a title above a top axis gets clipped): put one above it on the page.

    Args:
        frame: attention frame (columns ``q, k, value, masked``) of one head.
        tokens: :func:`components.frames.tokens_frame` of the sequence.
        kind: ``"weights"`` (fixed 0-1 scale) or ``"scores"`` (diverging around 0).
        text: axis / legend / tooltip words.
        height_px: height of the matrix; the width follows the container.
        limit: half-width of the diverging domain; from the data when ``None``.

    Returns:
        A layered Vega-Lite spec; ``datasets`` holds ``frame`` and ``tokens`` (with the limit for scores).
    """
    labels = tokens["label"].tolist()
    cell = cell_px(len(labels), height_px)
    layer = _attention_layer(labels, kind, text, cell, axes=True, annotate=len(labels) <= 8)
    spec = {"data": {"name": CELLS}, "width": "container", "height": cell * len(labels), **layer}
    return _top_level(spec, _attention_data(frame, tokens, kind, limit), fit_width=True, params=_limit_param(kind))


def _limit_param(kind: str) -> tuple[str, ...]:
    return () if kind == "weights" else ("limit",)


def _attention_data(
    frame: pd.DataFrame, tokens: pd.DataFrame, kind: str, limit: float | None
) -> dict[str, pd.DataFrame]:
    """The datasets of an attention chart: cells, and the labels (carrying the colour limit for scores)."""
    if kind == "weights":
        return {CELLS: frame, TOKENS: tokens}
    return {CELLS: frame, TOKENS: with_limit(tokens, symmetric_limit(frame["value"]) if limit is None else limit)}


def attention_grid(
    frame: pd.DataFrame,
    tokens: pd.DataFrame,
    kind: str,
    text: ChartText = ChartText(),
    columns: int = 4,
    size_px: int = 170,
    head_titles: Sequence[str] | None = None,
) -> Spec:
    """Small multiples: one matrix per head (facet on ``head``), no token axes (the tooltip names them).

    ``head_titles``: one title per head (``0: previous token 0.97``) instead of its number.
    """
    labels = tokens["label"].tolist()
    cell = cell_px(len(labels), size_px, low=1)
    side = cell * len(labels)
    layer = _attention_layer(labels, kind, text, cell, axes=False, annotate=False)
    header: Spec = {"labelFontSize": FONT_SIZE}
    if head_titles is not None:
        header.update(labelExpr=f"{json.dumps(list(head_titles))}[datum.value]", labelLimit=max(side + 20, 120))
    spec = {
        "data": {"name": CELLS},
        "facet": _field("head", "ordinal", title=text.head, header=header),
        "columns": columns,
        "spacing": 12,
        "spec": {"width": side, "height": side, **layer},
    }
    return _top_level(spec, _attention_data(frame, tokens, kind, None), params=_limit_param(kind))


def head_summary_chart(summary: pd.DataFrame, text: ChartText = ChartText()) -> Spec:
    """Bars per head of mean entropy and mean largest weight, for when the full grid would be too big."""
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
    return _top_level({"data": {"name": CELLS}, "hconcat": bars}, {CELLS: summary})


def _feature_layer(
    labels: list[str],
    text: ChartText,
    row_px: int,
    x_axis: Spec,
    x_title: str,
    slot_expr: str | None = None,
    head_expr: str | None = None,
) -> Spec:
    """Tokens x features heatmap on a quantitative x (``slot`` .. ``slot + 1``) so it can hold hundreds of columns.

    ``slot_expr`` places feature ``f`` on screen (default: at ``f``); the x domain is the data's, 0 to the last
    slot's end, so a new width of the matrix needs no new spec.
    """
    tooltip = [
        _field("query", "nominal", title=text.token),
        _field("f", "quantitative", title=text.feature),
        _field("value", "quantitative", title=text.value, format=".4f"),
    ]
    slot = "f" if slot_expr is None else "slot"
    transform = [] if slot_expr is None else [{"calculate": slot_expr, "as": "slot"}]
    transform.append({"calculate": f"datum.{slot} + 1", "as": "slot_end"})
    if head_expr is not None:
        transform.append({"calculate": head_expr, "as": "head"})
        tooltip.insert(1, _field("head", "quantitative", title=text.head))
    return {
        "data": {"name": CELLS},
        "mark": {"type": "rect"},
        "encoding": {
            "x": _field(slot, "quantitative", scale={"nice": False, "zero": True}, axis=x_axis, title=x_title),
            "x2": {"field": "slot_end"},
            "y": _field(
                "query",
                "ordinal",
                sort=labels,
                title=text.token,
                axis={"labelOverlap": "greedy", "labelFontSize": _label_font(row_px)},
            ),
            "color": _field("value", "quantitative", scale=diverging_scale(), title=text.value, legend=_legend()),
            "tooltip": tooltip,
        },
        "transform": [*transform, *_lookups([("q", "query")])],
    }


def feature_heatmap(
    frame: pd.DataFrame,
    tokens: pd.DataFrame,
    text: ChartText = ChartText(),
    limit: float | None = None,
    height_px: int = 300,
) -> Spec:
    """Token vectors (e.g. one head's Q, or the output) as a tokens x features heatmap, as wide as its container.

    It has no title of its own (a title would change the spec with every head and size): put one above it.

    Args:
        frame: feature frame with columns ``q, f, value`` (``f`` = 0, 1, ... the features shown).
        tokens: the tokens frame.
        text: axis / legend / tooltip words.
        limit: half-width of the diverging colour domain (pass one value to several charts to compare
            them); from the data when ``None``.
        height_px: about how tall the matrix is drawn.

    Returns:
        A Vega-Lite spec; ``datasets`` holds ``frame`` and ``tokens`` (carrying the limit).
    """
    labels = tokens["label"].tolist()
    limit = symmetric_limit(frame["value"]) if limit is None else limit
    row_px = cell_px(len(labels), height_px, low=3, high=30)
    axis = {"labelOverlap": "greedy", "tickMinStep": 1, "format": "d"}
    spec = {
        **_feature_layer(labels, text, row_px, axis, text.feature),
        "width": "container",
        "height": row_px * len(labels),
    }
    return _top_level(spec, {CELLS: frame, TOKENS: with_limit(tokens, limit)}, fit_width=True, params=("limit",))


def concat_heatmap(
    frame: pd.DataFrame,
    tokens: pd.DataFrame,
    num_heads: int,
    d_k: int,
    shown_per_head: int,
    text: ChartText = ChartText(),
    height_px: int = 300,
) -> Spec:
    """The heads' contexts side by side (B, L, d_model), with a black rule at every head boundary.

    It has no title of its own: put one above it on the page.

    Args:
        frame: feature frame of the (L, d_model) concatenation holding the first ``shown_per_head``
            features of every head (``f`` = true feature index in d_model).
        num_heads, d_k: the layer's head count and head size.
        shown_per_head: features drawn per head (``d_k`` unless the matrix is too big to draw whole).

    Returns:
        A layered Vega-Lite spec; ``datasets`` holds ``frame``, ``tokens`` (carrying the limit and the head
        sizes the expressions read) and the boundaries.
    """
    labels = tokens["label"].tolist()
    row_px = cell_px(len(labels), height_px, low=3, high=30)
    # slot = position on screen: head h's block starts at h * shown; one label per block, at its centre
    slot_expr = "datum.f - floor(datum.f / d_k) * (d_k - shown)"
    axis = {
        "values": {"expr": "sequence(shown / 2, heads * shown, shown)"},
        "labelExpr": "floor(datum.value / shown)",
        "labelOverlap": "greedy",
        "ticks": False,
    }
    heat = _feature_layer(
        labels, text, row_px, axis, text.heads_axis, slot_expr=slot_expr, head_expr="floor(datum.f / d_k)"
    )
    bounds = pd.DataFrame({"x": np.arange(1, num_heads, dtype=np.int16) * shown_per_head})
    rules = {
        "data": {"name": BOUNDS},
        "mark": {"type": "rule", "color": "black", "strokeWidth": 2},
        "encoding": {"x": _field("x", "quantitative")},
    }
    spec = {"width": "container", "height": row_px * len(labels), "layer": [heat, rules]}
    sizes = {"d_k": d_k, "shown": shown_per_head, "heads": num_heads}
    carried = with_params(tokens, limit=symmetric_limit(frame["value"]), **sizes)
    return _top_level(spec, {CELLS: frame, TOKENS: carried, BOUNDS: bounds}, fit_width=True, params=("limit", *sizes))
