"""Altair builders for the labs: DataFrame in, ``alt.Chart`` out, no Streamlit (testable with ``to_dict()``).

Conventions (the same as the main page's charts): attention weights on a fixed 0-1 ``blues``
scale; signed numbers on a ``redblue`` scale symmetric around 0; token axes with
position-prefixed labels (``"3:the"``) sorted by position; fonts large enough for a projector.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

__all__ = [
    "attention_panels",
    "bar_chart",
    "dot_chart",
    "fit_cell",
    "heatmap",
    "line_chart",
    "mask_grid",
    "matrix_frame",
    "source_grid",
    "styled",
]

FONT = "sans-serif"
FONT_SIZE = 15
WEIGHTS_SCHEME = "blues"
DIVERGING_SCHEME = "redblue"
SERIES_COLORS = ["#c2410c", "#2563eb", "#16a34a", "#7c3aed", "#525252"]


def styled(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """Large fonts for every text of a top-level chart."""
    return (
        chart.configure(font=FONT, background="white")
        .configure_axis(labelFontSize=FONT_SIZE - 1, titleFontSize=FONT_SIZE, labelLimit=180)
        .configure_legend(labelFontSize=FONT_SIZE - 1, titleFontSize=FONT_SIZE, titleLimit=300, labelLimit=320)
        .configure_header(labelFontSize=FONT_SIZE, titleFontSize=FONT_SIZE)
        .configure_title(fontSize=FONT_SIZE + 3, anchor="start")
    )


def fit_cell(cells: int, panels_per_row: int, budget: int = 860, largest: int = 28, smallest: int = 8) -> int:
    """Cell size in pixels so that ``panels_per_row`` heatmaps of ``cells`` columns fit in ``budget`` pixels
    (about 110 px go to the row labels and 20 px to the gap after each panel)."""
    per_panel = (budget - 110) / panels_per_row - 20
    return int(max(smallest, min(largest, per_panel // max(cells, 1))))


def _token_axis(cell: int, upright: bool = True) -> alt.Axis:
    """An axis that draws every label, in a font no taller than the cells (turned upright for columns)."""
    return alt.Axis(
        labelAngle=-90 if upright else 0, labelOverlap=False, labelFontSize=max(9, min(FONT_SIZE - 1, cell - 2))
    )


def matrix_frame(
    values: np.ndarray, row_labels: Sequence[str], column_labels: Sequence[str], panel_labels: Sequence[str]
) -> pd.DataFrame:
    """Long form of a stack of matrices: one row per cell with ``panel, row, column, value``.

    Args:
        values: shape (P, R, C): P panels (heads, variants...), R rows, C columns.
        row_labels, column_labels, panel_labels: R, C and P distinct labels.
    """
    panels, rows, columns = values.shape
    if (panels, rows, columns) != (len(panel_labels), len(row_labels), len(column_labels)):
        raise ValueError(
            f"values of shape {list(values.shape)} need {panels} panel, {rows} row and {columns} column labels, "
            f"got {len(panel_labels)}, {len(row_labels)} and {len(column_labels)}"
        )
    panel_index, row_index, column_index = np.meshgrid(
        np.arange(panels), np.arange(rows), np.arange(columns), indexing="ij"
    )  # each (P, R, C)
    return pd.DataFrame(
        {
            "panel": np.asarray(panel_labels, dtype=object)[panel_index.ravel()],
            "row": np.asarray(row_labels, dtype=object)[row_index.ravel()],
            "column": np.asarray(column_labels, dtype=object)[column_index.ravel()],
            "value": values.astype(np.float32).ravel(),
        }
    )


def heatmap(
    frame: pd.DataFrame,
    *,
    row_title: str,
    column_title: str,
    value_title: str,
    row_order: Sequence[str],
    column_order: Sequence[str],
    panel_order: Sequence[str] | None = None,
    columns: int = 4,
    cell: int = 24,
    diverging: bool = False,
    domain: tuple[float, float] | None = None,
) -> alt.Chart:
    """Heatmaps of a :func:`matrix_frame`, one panel per ``panel`` value (wrapped after ``columns``).

    Weights (``diverging=False``) use the fixed 0-1 scale unless ``domain`` is given; signed numbers
    (``diverging=True``) a scale symmetric around 0 that reaches the largest magnitude.
    """
    if diverging:
        limit = float(np.nanmax(np.abs(frame["value"].to_numpy()))) or 1.0
        scale = alt.Scale(scheme=DIVERGING_SCHEME, domain=[-limit, limit], reverse=True)
    else:
        scale = alt.Scale(scheme=WEIGHTS_SCHEME, domain=list(domain or (0.0, 1.0)))
    base = (
        alt.Chart(frame)
        .mark_rect()
        .encode(
            x=alt.X("column:N", sort=list(column_order), title=column_title, axis=_token_axis(cell)),
            y=alt.Y("row:N", sort=list(row_order), title=row_title, axis=_token_axis(cell, upright=False)),
            color=alt.Color("value:Q", scale=scale, title=value_title),
            tooltip=[
                alt.Tooltip("row:N", title=row_title),
                alt.Tooltip("column:N", title=column_title),
                alt.Tooltip("value:Q", title=value_title, format=".4f"),
            ],
        )
        .properties(width=cell * len(column_order), height=cell * len(row_order))
    )
    panels = list(panel_order) if panel_order is not None else list(dict.fromkeys(frame["panel"]))
    return base.facet(facet=alt.Facet("panel:N", sort=panels, title=None), columns=columns)


def attention_panels(
    values: np.ndarray,
    labels: Sequence[str],
    panels: Sequence[str],
    *,
    columns: int,
    row_title: str,
    column_title: str,
    value_title: str,
    largest: int = 28,
) -> alt.Chart:
    """Square attention weights on the fixed 0-1 scale, one panel each, the same labels on both axes.

    Args:
        values: shape (P, L, L): P panels (heads, variants...) of L x L weights.
        labels: L distinct token or position labels; panels: P panel titles.
        columns: panels per row; ``largest``: the biggest cell size in pixels.
    """
    return heatmap(
        matrix_frame(values, labels, labels, panels),
        row_title=row_title,
        column_title=column_title,
        value_title=value_title,
        row_order=labels,
        column_order=labels,
        panel_order=panels,
        columns=columns,
        cell=fit_cell(len(labels), columns, largest=largest),
    )


def mask_grid(
    frame: pd.DataFrame,
    *,
    row_title: str,
    column_title: str,
    row_order: Sequence[str],
    column_order: Sequence[str],
    panel_order: Sequence[str],
    cell: int = 34,
) -> alt.Chart:
    """Masks written out: a :func:`matrix_frame` with ``value`` 1 (may attend) or 0 (blocked) and a
    ``text`` column (``True``, ``False``, ``0``, ``-inf``...) printed in each cell."""
    base = alt.Chart().encode(
        x=alt.X("column:N", sort=list(column_order), title=column_title, axis=_token_axis(cell)),
        y=alt.Y("row:N", sort=list(row_order), title=row_title, axis=_token_axis(cell, upright=False)),
    )
    rect = base.mark_rect(stroke="white").encode(
        color=alt.Color("value:Q", scale=alt.Scale(domain=[0, 1], range=["#52525b", "#dbeafe"]), legend=None)
    )
    text = base.mark_text(fontSize=FONT_SIZE - 3).encode(
        text="text:N",
        color=alt.condition(alt.datum.value > 0.5, alt.value("#1e3a8a"), alt.value("white")),
    )
    layered = alt.layer(rect, text).properties(width=cell * len(column_order), height=cell * len(row_order))
    return layered.facet(facet=alt.Facet("panel:N", sort=list(panel_order), title=None), columns=3, data=frame)


def line_chart(
    frame: pd.DataFrame,
    *,
    x: str,
    y: str,
    series: str,
    x_title: str,
    y_title: str,
    series_title: str,
    log_x: bool = False,
    log_y: bool = False,
    dashed: str | None = None,
    width: int = 420,
    height: int = 300,
    title: str = "",
) -> alt.Chart:
    """Lines with points, one colour per ``series`` value; ``dashed`` names a bool column drawn dashed when
    True (a series then splits into a solid and a dashed line)."""
    x_scale = alt.Scale(type="log", base=2) if log_x else alt.Scale(zero=False)
    y_scale = alt.Scale(type="log") if log_y else alt.Scale()
    encoding = {
        "x": alt.X(f"{x}:Q", scale=x_scale, title=x_title, axis=alt.Axis(labelAngle=-45 if log_x else 0)),
        "y": alt.Y(f"{y}:Q", scale=y_scale, title=y_title),
        "color": alt.Color(
            f"{series}:N",
            title=series_title,
            sort=None,
            scale=alt.Scale(range=SERIES_COLORS),
            legend=alt.Legend(orient="bottom", columns=1, symbolStrokeWidth=4),
        ),
        "tooltip": [
            alt.Tooltip(f"{series}:N", title=series_title),
            alt.Tooltip(f"{x}:Q", title=x_title),
            alt.Tooltip(f"{y}:Q", title=y_title, format=".4g"),
        ],
    }
    if dashed is not None:
        encoding["strokeDash"] = alt.StrokeDash(f"{dashed}:N", legend=None)
    return (
        alt.Chart(frame, title=title)
        .mark_line(point=True, strokeWidth=3)
        .encode(**encoding)
        .properties(width=width, height=height)
    )


def bar_chart(
    frame: pd.DataFrame, *, x: str, y: str, x_title: str, y_title: str, width: int = 420, height: int = 260
) -> alt.Chart:
    """Horizontal bars of ``x`` (quantity) per ``y`` (category, in frame order), with the value printed."""
    base = alt.Chart(frame).encode(
        x=alt.X(f"{x}:Q", title=x_title),
        y=alt.Y(f"{y}:N", sort=list(frame[y]), title=y_title),
        tooltip=[alt.Tooltip(f"{y}:N", title=y_title), alt.Tooltip(f"{x}:Q", title=x_title, format=",")],
    )
    bars = base.mark_bar(color="#c2410c")
    labels = base.mark_text(align="left", dx=4, fontSize=FONT_SIZE - 1).encode(text=alt.Text(f"{x}:Q", format=","))
    return alt.layer(bars, labels).properties(width=width, height=height)


def dot_chart(
    frame: pd.DataFrame,
    *,
    x: str,
    y: str,
    x_title: str,
    y_title: str,
    rule: float | None = None,
    rule_title: str = "",
    title: str = "",
    width: int = 420,
    height: int = 280,
) -> alt.Chart:
    """One dot per row, ``x`` as ordered categories; ``rule`` draws a labelled dashed horizontal line."""
    dots = (
        alt.Chart(frame, title=title)
        .mark_circle(size=110, opacity=0.7, color="#c2410c")
        .encode(
            x=alt.X(f"{x}:O", title=x_title, axis=alt.Axis(labelAngle=0)),
            y=alt.Y(f"{y}:Q", title=y_title, scale=alt.Scale(zero=True)),
            tooltip=[alt.Tooltip(f"{column}:Q", format=".3f") for column in frame.columns],
        )
    )
    if rule is None:
        return dots.properties(width=width, height=height)
    line = pd.DataFrame({"value": [rule], "label": [rule_title]})
    rule_mark = alt.Chart(line).mark_rule(strokeDash=[6, 4], color="#52525b").encode(y="value:Q")
    label = (
        alt.Chart(line)
        .mark_text(align="left", dy=12, x=4, fontSize=FONT_SIZE - 2, color="#52525b")
        .encode(y="value:Q", text="label:N")
    )
    return alt.layer(dots, rule_mark, label).properties(width=width, height=height)


def source_grid(
    frame: pd.DataFrame,
    *,
    row_title: str,
    column_title: str,
    color_title: str,
    row_order: Sequence[str],
    column_order: Sequence[str],
    token_order: Sequence[str],
    cell_width: int = 120,
    cell_height: int = 30,
) -> alt.Chart:
    """A table of coloured cells: ``row`` × ``column``, coloured by ``token`` (categories), ``text`` printed."""
    base = alt.Chart(frame).encode(
        x=alt.X("column:N", sort=list(column_order), title=column_title, axis=alt.Axis(orient="top", labelAngle=0)),
        y=alt.Y("row:N", sort=list(row_order), title=row_title),
    )
    rect = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color("token:N", sort=list(token_order), scale=alt.Scale(scheme="set3"), title=color_title),
        tooltip=[alt.Tooltip("text:N", title=color_title)],
    )
    text = base.mark_text(fontSize=FONT_SIZE - 2, color="black").encode(text="text:N")
    return alt.layer(rect, text).properties(width=cell_width * len(column_order), height=cell_height * len(row_order))
