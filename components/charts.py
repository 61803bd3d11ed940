"""Altair chart builders: DataFrame in, ``alt.Chart`` out (no Streamlit, testable with ``to_dict()``).

Conventions every chart keeps:
    * token axes show position-prefixed labels (``"3:the"``) looked up from the
      tokens frame by position, sorted by position, so repeated words stay apart;
    * attention weights use a fixed 0-1 colour scale; scores and vectors a diverging
      scale symmetric around 0 (``domainMid`` 0);
    * masked cells are drawn grey with a ``×``, never merely dark (their score is null);
    * fonts are large enough for a projector, and ``sans-serif`` so CJK labels fall back
      to a CJK font.

Frames come from :mod:`components.frames`; all visible words come in a :class:`ChartText`
so that the caller can translate them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd

__all__ = [
    "ChartText",
    "attention_grid",
    "attention_heatmap",
    "cell_px",
    "concat_heatmap",
    "diverging_scale",
    "feature_heatmap",
    "head_summary_chart",
    "symmetric_limit",
    "weights_scale",
]

FONT = "sans-serif"
FONT_SIZE = 15
MASKED_COLOR = "#d4d4d4"
CROSS_COLOR = "#404040"
WEIGHTS_SCHEME = "blues"
DIVERGING_SCHEME = "redblue"  # reversed below: negative blue, positive red


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


def weights_scale() -> alt.Scale:
    """The fixed 0-1 scale of attention weights (comparable across heads and runs)."""
    return alt.Scale(domain=[0.0, 1.0], scheme=WEIGHTS_SCHEME, clamp=True)


def diverging_scale(limit: float) -> alt.Scale:
    """A diverging scale from ``-limit`` to ``limit`` with its middle colour at 0."""
    return alt.Scale(domain=[-limit, limit], domainMid=0, scheme=DIVERGING_SCHEME, reverse=True, clamp=True)


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


def _label_font(cell: int) -> int:
    """Axis label size: projector-sized when cells are big, smaller (never below 9) when dense."""
    return int(min(FONT_SIZE, max(9, cell * 0.8)))


def _configure(chart: alt.TopLevelMixin, fit_width: bool = False) -> alt.TopLevelMixin:
    """Fonts and sizes shared by every chart of the app.

    ``fit_width``: the chart takes its container's width, but keeps its own height
    (Streamlit's default "fit" would squeeze the rows to make room for axes and title).
    """
    if fit_width:
        chart = chart.properties(autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))
    return (
        chart.configure(font=FONT)
        .configure_axis(labelFontSize=FONT_SIZE, titleFontSize=FONT_SIZE, labelLimit=140, grid=False)
        .configure_header(labelFontSize=FONT_SIZE, titleFontSize=FONT_SIZE + 1)
        .configure_legend(labelFontSize=FONT_SIZE - 2, titleFontSize=FONT_SIZE - 1)
        .configure_title(fontSize=FONT_SIZE + 2, anchor="start")
        .configure_view(strokeWidth=0)
    )


def _with_labels(chart: alt.Chart, tokens: pd.DataFrame, pairs: Sequence[tuple[str, str]]) -> alt.Chart:
    """Add lookup transforms: for each ``(index_field, label_field)``, label = tokens.label at tokens.pos."""
    for index_field, label_field in pairs:
        chart = chart.transform_lookup(
            lookup=index_field, from_=alt.LookupData(tokens, "pos", ["label"]), as_=[label_field]
        )
    return chart


def _legend() -> alt.Legend:
    """A horizontal colour bar under the chart, so side-by-side charts keep their width for the matrix."""
    return alt.Legend(orient="bottom", direction="horizontal", gradientLength=120, titleOrient="left")


def _x_label_angle(labels: Sequence[str]) -> int:
    return 0 if max((len(label) for label in labels), default=0) <= 4 else -45


def _attention_layer(
    tokens: pd.DataFrame, kind: str, text: ChartText, cell: int, limit: float, axes: bool, annotate: bool
) -> alt.LayerChart:
    """Rect layer for allowed cells, grey rect plus ``×`` for masked ones, optional numbers in cells."""
    labels = tokens["label"].tolist()
    value_title = text.weight if kind == "weights" else text.score
    scale = weights_scale() if kind == "weights" else diverging_scale(limit)
    label_font = _label_font(cell)
    x_axis = (
        alt.Axis(orient="top", labelAngle=_x_label_angle(labels), labelOverlap="greedy", labelFontSize=label_font)
        if axes
        else None
    )
    y_axis = alt.Axis(labelOverlap="greedy", labelFontSize=label_font) if axes else None
    base = alt.Chart().encode(
        x=alt.X("key:O", sort=labels, title=text.key, axis=x_axis),
        y=alt.Y("query:O", sort=labels, title=text.query, axis=y_axis),
        tooltip=[
            alt.Tooltip("query:N", title=text.query),
            alt.Tooltip("key:N", title=text.key),
            alt.Tooltip("value:Q", title=value_title, format=".4f"),
            alt.Tooltip("masked:N", title=text.masked),
        ],
    )
    shown = (
        base.mark_rect()
        .encode(color=alt.Color("value:Q", scale=scale, title=value_title, legend=_legend()))
        .transform_filter("!datum.masked")
    )
    blocked = base.mark_rect(color=MASKED_COLOR).transform_filter("datum.masked")
    layers = [shown, blocked]
    if cell >= 8:  # below that a × is noise: the grey alone marks the cell
        cross = base.mark_text(text="×", color=CROSS_COLOR, fontSize=int(cell * 0.75)).transform_filter("datum.masked")
        layers.append(cross)
    if annotate:
        dark = 0.5 if kind == "weights" else 0.6 * limit
        numbers = (
            base.mark_text(fontSize=max(8, min(13, int(cell * 0.3))))
            .encode(
                text=alt.Text("value:Q", format=".2f"),
                color=alt.when(f"abs(datum.value) > {dark}").then(alt.value("white")).otherwise(alt.value("black")),
            )
            .transform_filter("!datum.masked")
        )
        layers.append(numbers)
    return _with_labels(alt.layer(*layers), tokens, [("q", "query"), ("k", "key")])


def attention_heatmap(
    frame: pd.DataFrame,
    tokens: pd.DataFrame,
    kind: str,
    text: ChartText = ChartText(),
    height_px: int = 300,
    limit: float | None = None,
) -> alt.LayerChart:
    """One head's scores or weights, as wide as its container, with token labels on both axes.

    It has no title of its own (a title above a top axis gets clipped): put one above it on the page.

    Args:
        frame: attention frame (columns ``q, k, value, masked``) of one head.
        tokens: :func:`components.frames.tokens_frame` of the sequence.
        kind: ``"weights"`` (fixed 0-1 scale) or ``"scores"`` (diverging around 0).
        text: axis / legend / tooltip words.
        height_px: height of the matrix; the width follows the container.
        limit: half-width of the diverging domain; from the data when ``None``.
    """
    cell = cell_px(len(tokens), height_px)
    limit = symmetric_limit(frame["value"]) if limit is None else limit
    layer = _attention_layer(tokens, kind, text, cell, limit, axes=True, annotate=len(tokens) <= 8)
    layer = layer.properties(data=frame, width="container", height=cell * len(tokens))
    return _configure(layer, fit_width=True)


def attention_grid(
    frame: pd.DataFrame,
    tokens: pd.DataFrame,
    kind: str,
    text: ChartText = ChartText(),
    columns: int = 4,
    size_px: int = 170,
) -> alt.FacetChart:
    """Small multiples: one matrix per head (facet on ``head``), no token axes (the tooltip names them)."""
    cell = cell_px(len(tokens), size_px, low=1)
    limit = symmetric_limit(frame["value"])
    layer = _attention_layer(tokens, kind, text, cell, limit, axes=False, annotate=False)
    side = cell * len(tokens)
    faceted = layer.properties(data=frame, width=side, height=side).facet(
        facet=alt.Facet("head:O", title=text.head, header=alt.Header(labelFontSize=FONT_SIZE)),
        columns=columns,
        spacing=12,
    )
    return _configure(faceted)


def head_summary_chart(summary: pd.DataFrame, text: ChartText = ChartText()) -> alt.HConcatChart:
    """Bars per head of mean entropy and mean largest weight, for when the full grid would be too big."""
    base = alt.Chart(summary).encode(
        x=alt.X("head:O", title=text.head, axis=alt.Axis(labelOverlap="greedy", labelAngle=0)),
        tooltip=[
            alt.Tooltip("head:O", title=text.head),
            alt.Tooltip("entropy:Q", title=text.entropy, format=".3f"),
            alt.Tooltip("max_weight:Q", title=text.max_weight, format=".3f"),
        ],
    )
    entropy = base.mark_bar(color="#6b7280").encode(y=alt.Y("entropy:Q", title=text.entropy))
    peak = base.mark_bar(color="#2563eb").encode(
        y=alt.Y("max_weight:Q", title=text.max_weight, scale=alt.Scale(domain=[0.0, 1.0]))
    )
    return _configure(alt.hconcat(entropy.properties(width=380, height=200), peak.properties(width=380, height=200)))


def _feature_layer(
    frame: pd.DataFrame,
    tokens: pd.DataFrame,
    slots: int,
    title: str,
    text: ChartText,
    limit: float,
    row_px: int,
    x_axis: alt.Axis,
    x_title: str,
    slot_expr: str = "datum.f",
    head_expr: str | None = None,
) -> alt.Chart:
    """Tokens x features heatmap on a quantitative x (``slot`` .. ``slot + 1``) so it can hold hundreds of columns."""
    labels = tokens["label"].tolist()
    tooltip = [
        alt.Tooltip("query:N", title=text.token),
        alt.Tooltip("f:Q", title=text.feature),
        alt.Tooltip("value:Q", title=text.value, format=".4f"),
    ]
    chart = alt.Chart(frame).transform_calculate(slot=slot_expr).transform_calculate(slot_end="datum.slot + 1")
    if head_expr is not None:
        chart = chart.transform_calculate(head=head_expr)
        tooltip.insert(1, alt.Tooltip("head:Q", title=text.head))
    chart = _with_labels(chart, tokens, [("q", "query")])
    return (
        chart.mark_rect()
        .encode(
            x=alt.X("slot:Q", scale=alt.Scale(domain=[0, slots], nice=False, zero=True), axis=x_axis, title=x_title),
            x2="slot_end:Q",
            y=alt.Y(
                "query:O",
                sort=labels,
                title=text.token,
                axis=alt.Axis(labelOverlap="greedy", labelFontSize=_label_font(row_px)),
            ),
            color=alt.Color("value:Q", scale=diverging_scale(limit), title=text.value, legend=_legend()),
            tooltip=tooltip,
        )
        .properties(title=title, width="container", height=row_px * len(labels))
    )


def feature_heatmap(
    frame: pd.DataFrame,
    tokens: pd.DataFrame,
    title: str,
    text: ChartText = ChartText(),
    limit: float | None = None,
    height_px: int = 300,
) -> alt.Chart:
    """Token vectors (e.g. one head's Q, or the output) as a tokens x features heatmap, as wide as its container.

    Args:
        frame: feature frame with columns ``q, f, value`` (``f`` = 0, 1, ... the features shown).
        tokens: the tokens frame.
        title: chart title.
        limit: half-width of the diverging colour domain (pass one value to several charts to compare
            them); from the data when ``None``.
        height_px: about how tall the matrix is drawn.
    """
    limit = symmetric_limit(frame["value"]) if limit is None else limit
    row_px = cell_px(len(tokens), height_px, low=3, high=30)
    slots = int(frame["f"].max()) + 1 if len(frame) else 1
    axis = alt.Axis(labelOverlap="greedy", tickMinStep=1, format="d")
    return _configure(_feature_layer(frame, tokens, slots, title, text, limit, row_px, axis, text.feature), True)


def concat_heatmap(
    frame: pd.DataFrame,
    tokens: pd.DataFrame,
    num_heads: int,
    d_k: int,
    shown_per_head: int,
    title: str,
    text: ChartText = ChartText(),
    height_px: int = 300,
) -> alt.LayerChart:
    """The heads' contexts side by side (B, L, d_model), with a black rule at every head boundary.

    Args:
        frame: feature frame of the (L, d_model) concatenation holding the first ``shown_per_head``
            features of every head (``f`` = true feature index in d_model).
        num_heads, d_k: the layer's head count and head size.
        shown_per_head: features drawn per head (``d_k`` unless the matrix is too big to draw whole).
    """
    slots = num_heads * shown_per_head
    row_px = cell_px(len(tokens), height_px, low=3, high=30)
    # slot = position on screen: head h's block starts at h * shown_per_head
    slot_expr = f"datum.f - floor(datum.f / {d_k}) * {d_k - shown_per_head}"
    centres = [h * shown_per_head + shown_per_head / 2 for h in range(num_heads)]
    axis = alt.Axis(
        values=centres, labelExpr=f"floor(datum.value / {shown_per_head})", labelOverlap="greedy", ticks=False
    )
    limit = symmetric_limit(frame["value"])
    heat = _feature_layer(
        frame,
        tokens,
        slots,
        title,
        text,
        limit,
        row_px,
        axis,
        text.heads_axis,
        slot_expr=slot_expr,
        head_expr=f"floor(datum.f / {d_k})",
    )
    bounds = pd.DataFrame({"x": np.arange(1, num_heads, dtype=np.int16) * shown_per_head})
    rules = alt.Chart(bounds).mark_rule(color="black", strokeWidth=2).encode(x="x:Q")
    return _configure(alt.layer(heat, rules).properties(width="container"), fit_width=True)
