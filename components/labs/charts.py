"""Altair builders for the labs: DataFrame in, ``alt.Chart`` out, no Streamlit (testable with ``to_dict()``).

Conventions (the same as the main page's charts, :mod:`components.chart_style`): attention
weights on a fixed 0-1 ``blues`` scale; signed numbers on a ``redblue`` scale symmetric
around 0; token axes with position-prefixed labels (``"3:the"``) sorted by position; fonts
large enough for a projector.

Readable at every size the labs allow (up to :data:`LABELLED_TOKENS_MAX` tokens an axis): every
token label is drawn (never thinned out), in a font no taller than its cell, and grids of
panels wrap to fewer panels a row rather than shrink cells below :data:`READABLE_CELL`. Axis
titles are horizontal (a rotated Chinese title is hard to read): the y title sits above its axis.

The words and the layout of a chart travel in small dataclasses (:class:`Titles`,
:class:`Grid`, :class:`Size`, :class:`Series`) rather than a dozen keyword arguments.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import altair as alt
import numpy as np
import pandas as pd

from components.chart_style import DIVERGING_SCHEME, FONT, FONT_SIZE, WEIGHTS_SCHEME

__all__ = [
    "LABELLED_TOKENS_MAX",
    "READABLE_CELL",
    "SERIES_COLORS",
    "Grid",
    "Series",
    "Size",
    "Titles",
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
    "weights_marking_nan",
]

SERIES_COLORS = ["#c2410c", "#2563eb", "#16a34a", "#7c3aed", "#525252"]
LABELLED_TOKENS_MAX = 32  # every token label stays drawn and readable up to this many tokens an axis
READABLE_CELL = 14  # px: the smallest heatmap cell; its label font is 2 px smaller
LABEL_FONT_MIN = READABLE_CELL - 2
ROW_LABELS_PX = 110  # room the row labels of a heatmap take at its left
PANEL_GAP_PX = 20
WIDTH_BUDGET_PX = 740  # a lab's matrices across: a 1280-px screen's 820 px of content (sidebar open), less a legend
NAN_COLOR = "#dc2626"  # a weight that is not a number: red, off the blues scale of the weights


@dataclass(frozen=True)
class Titles:
    """The words of one chart: the x and y axis titles, the colour legend's title, the chart's title."""

    x: str = ""
    y: str = ""
    color: str = ""
    chart: str = ""


@dataclass(frozen=True)
class Size:
    """Width and height of one plot, in pixels."""

    width: int = 420
    height: int = 300


@dataclass(frozen=True)
class Series:
    """Which columns a line chart draws: ``x`` and ``y``, one line per ``series`` value.

    ``dashed`` names a bool column drawn dashed when True (a series then splits into a solid and a
    dashed piece); ``low`` and ``high`` name the ends of a vertical bar drawn at each point (a spread).
    """

    x: str
    y: str
    series: str
    dashed: str | None = None
    low: str | None = None
    high: str | None = None


@dataclass(frozen=True)
class Grid:
    """A grid of matrices: the row, column and panel labels in order, panels a row, cell size in pixels."""

    rows: Sequence[str]
    columns: Sequence[str]
    panels: Sequence[str] = field(default_factory=tuple)
    per_row: int = 4
    cell: int = 24

    @classmethod
    def fitted(
        cls,
        rows: Sequence[str],
        columns: Sequence[str],
        panels: Sequence[str],
        most_per_row: int,
        largest: int = 28,
        budget: int = WIDTH_BUDGET_PX,
    ) -> Grid:
        """As many panels a row (up to ``most_per_row``) as fit ``budget`` px with readable cells, and the cell size.

        Wraps to fewer panels a row rather than shrink a cell below :data:`READABLE_CELL`, and then
        spreads the panels evenly over the rows (5 panels: 3 + 2, not 4 + 1). A chart in a column passes the
        column's share of :data:`WIDTH_BUDGET_PX` as ``budget``.
        """
        count = len(panels) or 1
        per_row = max(1, min(most_per_row, count))
        while per_row > 1 and _room_per_cell(len(columns), per_row, budget) < READABLE_CELL:
            per_row -= 1
        per_row = math.ceil(count / math.ceil(count / per_row))
        return cls(rows, columns, panels, per_row, fit_cell(len(columns), per_row, budget, largest=largest))

    @property
    def wraps(self) -> bool:
        """Whether the panels take more than one row."""
        return len(self.panels) > self.per_row


def styled(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """Large fonts for every text of a top-level chart; y titles horizontal, above their axis.

    Sized ``pad``: width and height are the plot's, titles, axes and legends come on top (Streamlit
    would otherwise ``fit`` a single chart, shrinking the plot to make room for them).
    """
    return (
        chart.properties(autosize=alt.AutoSizeParams(type="pad", contains="padding"))
        .configure(font=FONT, background="white")
        .configure_axis(labelFontSize=FONT_SIZE - 1, titleFontSize=FONT_SIZE, labelLimit=180)
        .configure_axisY(titleAngle=0, titleAnchor="end", titleAlign="right", titleBaseline="bottom", titleY=-8)
        .configure_legend(labelFontSize=FONT_SIZE - 1, titleFontSize=FONT_SIZE, titleLimit=300, labelLimit=320)
        .configure_header(labelFontSize=FONT_SIZE, titleFontSize=FONT_SIZE)
        .configure_title(fontSize=FONT_SIZE + 3, anchor="start", offset=30)
    )


def _room_per_cell(cells: int, panels_per_row: int, budget: int = WIDTH_BUDGET_PX) -> int:
    """Whole pixels a cell may take so that ``panels_per_row`` heatmaps of ``cells`` columns fit in ``budget``
    (the row labels and the gaps after each panel included)."""
    per_panel = (budget - ROW_LABELS_PX) / panels_per_row - PANEL_GAP_PX
    return int(per_panel // max(cells, 1))


def fit_cell(cells: int, panels_per_row: int, budget: int = WIDTH_BUDGET_PX, largest: int = 28) -> int:
    """Cell size in pixels so that ``panels_per_row`` heatmaps of ``cells`` columns fit in ``budget`` pixels,
    between :data:`READABLE_CELL` and ``largest`` (never smaller: :meth:`Grid.fitted` wraps instead)."""
    return max(READABLE_CELL, min(largest, _room_per_cell(cells, panels_per_row, budget)))


def _token_axis(cell: int, upright: bool = True) -> alt.Axis:
    """An axis that draws every label, in a font no taller than the cells (turned upright for columns)."""
    return alt.Axis(
        labelAngle=-90 if upright else 0,
        labelOverlap=False,
        labelFontSize=max(LABEL_FONT_MIN, min(FONT_SIZE - 1, cell - 2)),
    )


def _value_axis() -> alt.Axis:
    """A numeric y axis whose horizontal title starts at the axis line, above the plot (not left of the labels,
    where a long title would widen the chart)."""
    return alt.Axis(titleAlign="left", titleX=0, titleY=-12)


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


def _grid_axes(grid: Grid, titles: Titles) -> dict[str, alt.X | alt.Y]:
    """The column (x) and row (y) encodings of a grid: every label, in the grid's order."""
    return {
        "x": alt.X("column:N", sort=list(grid.columns), title=titles.x, axis=_token_axis(grid.cell)),
        "y": alt.Y("row:N", sort=list(grid.rows), title=titles.y, axis=_token_axis(grid.cell, upright=False)),
    }


def heatmap(
    frame: pd.DataFrame,
    titles: Titles,
    grid: Grid,
    *,
    diverging: bool = False,
    domain: tuple[float, float] | None = None,
) -> alt.Chart:
    """Heatmaps of a :func:`matrix_frame`, one panel per ``panel`` value, ``grid.per_row`` a row.

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
            **_grid_axes(grid, titles),
            color=alt.Color("value:Q", scale=scale, title=titles.color),
            tooltip=[
                alt.Tooltip("row:N", title=titles.y),
                alt.Tooltip("column:N", title=titles.x),
                alt.Tooltip("value:Q", title=titles.color, format=".4f"),
            ],
        )
        .properties(width=grid.cell * len(grid.columns), height=grid.cell * len(grid.rows))
    )
    panels = list(grid.panels) or list(dict.fromkeys(frame["panel"]))
    return _wrapped(base.facet(facet=alt.Facet("panel:N", sort=panels, title=None), columns=grid.per_row), grid)


def _wrapped(chart: alt.FacetChart, grid: Grid) -> alt.FacetChart:
    """Panels in more than one row each get their own key axis: a shared one would hang under empty places."""
    return chart.resolve_axis(x="independent") if grid.wraps else chart


def attention_panels(
    values: np.ndarray,
    labels: Sequence[str],
    panels: Sequence[str],
    titles: Titles,
    *,
    most_per_row: int,
    largest: int = 28,
) -> alt.Chart:
    """Square attention weights on the fixed 0-1 scale, one panel each, the same labels on both axes.

    Args:
        values: shape (P, L, L): P panels (heads, variants...) of L x L weights.
        labels: L distinct token or position labels; panels: P panel titles.
        titles: x = key axis, y = query axis, color = the weights' legend.
        most_per_row: panels a row at most (fewer when the cells would get too small to read).
        largest: the biggest cell size in pixels.
    """
    grid = Grid.fitted(labels, labels, panels, most_per_row, largest=largest)
    return heatmap(matrix_frame(values, labels, labels, panels), titles, grid)


def weights_marking_nan(
    values: np.ndarray,
    labels: Sequence[str],
    panels: Sequence[str],
    titles: Titles,
    nan_label: str,
    *,
    most_per_row: int,
    largest: int = 28,
) -> alt.Chart:
    """:func:`attention_panels` where a weight may be NaN: such a cell is drawn red with "NaN" printed in it and
    in its tooltip, and the legend names it ``nan_label`` (a NaN would otherwise leave an empty cell).

    Args:
        values: shape (P, L, L), NaN allowed; the rest as :func:`attention_panels`.
        nan_label: the legend's entry for the red cells.
    """
    grid = Grid.fitted(labels, labels, panels, most_per_row, largest=largest)
    frame = matrix_frame(values, labels, labels, panels)
    is_nan = np.isnan(frame["value"].to_numpy())
    frame["nan"] = np.where(is_nan, nan_label, "")  # the red cells' legend entry; "" on a number
    frame["text"] = np.where(is_nan, "NaN", frame["value"].map("{:.4f}".format))
    base = alt.Chart().encode(**_grid_axes(grid, titles))
    tooltip = [
        alt.Tooltip("row:N", title=titles.y),
        alt.Tooltip("column:N", title=titles.x),
        alt.Tooltip("text:N", title=titles.color),
    ]
    numbers = (
        base.transform_filter(alt.datum.nan == "")
        .mark_rect()
        .encode(
            color=alt.Color("value:Q", scale=alt.Scale(scheme=WEIGHTS_SCHEME, domain=[0.0, 1.0]), title=titles.color),
            tooltip=tooltip,
        )
    )
    nan_cells = base.transform_filter(alt.datum.nan != "")
    nans = nan_cells.mark_rect(stroke="white").encode(
        fill=alt.Fill("nan:N", scale=alt.Scale(domain=[nan_label], range=[NAN_COLOR]), title=None),
        tooltip=tooltip,
    )
    words = nan_cells.mark_text(fontSize=max(LABEL_FONT_MIN - 2, min(FONT_SIZE - 3, grid.cell - 6)), color="white")
    layered = alt.layer(numbers, nans, words.encode(text="text:N", tooltip=tooltip)).properties(
        width=grid.cell * len(grid.columns), height=grid.cell * len(grid.rows)
    )
    facets = layered.facet(
        facet=alt.Facet("panel:N", sort=list(grid.panels), title=None), columns=grid.per_row, data=frame
    )
    return _wrapped(facets, grid)


def mask_grid(frame: pd.DataFrame, titles: Titles, grid: Grid) -> alt.Chart:
    """Masks written out: a :func:`matrix_frame` with ``value`` 1 (may attend) or 0 (blocked) and a
    ``text`` column (``True``, ``False``, ``0``, ``-inf``...) printed in each cell."""
    base = alt.Chart().encode(**_grid_axes(grid, titles))
    rect = base.mark_rect(stroke="white").encode(
        color=alt.Color("value:Q", scale=alt.Scale(domain=[0, 1], range=["#52525b", "#dbeafe"]), legend=None)
    )
    text = base.mark_text(fontSize=max(LABEL_FONT_MIN - 2, min(FONT_SIZE - 3, grid.cell - 6))).encode(
        text="text:N",
        color=alt.condition(alt.datum.value > 0.5, alt.value("#1e3a8a"), alt.value("white")),
    )
    layered = alt.layer(rect, text).properties(width=grid.cell * len(grid.columns), height=grid.cell * len(grid.rows))
    facets = layered.facet(
        facet=alt.Facet("panel:N", sort=list(grid.panels), title=None), columns=grid.per_row, data=frame
    )
    return _wrapped(facets, grid)


def _series_colors(colors: Mapping[str, str] | None) -> alt.Scale:
    """A fixed colour per series name where ``colors`` gives one, else the lab palette in order."""
    if colors is None:
        return alt.Scale(range=SERIES_COLORS)
    return alt.Scale(domain=list(colors), range=list(colors.values()))


def line_chart(
    frame: pd.DataFrame,
    fields: Series,
    titles: Titles,
    *,
    log_x: bool = False,
    log_y: bool = False,
    size: Size = Size(),
    colors: Mapping[str, str] | None = None,
) -> alt.Chart:
    """Lines with points, one colour per series (``colors``: series name -> colour, to keep one colour one
    meaning across charts); dashed pieces and spread bars as :class:`Series` says."""
    x_scale = alt.Scale(type="log", base=2) if log_x else alt.Scale(zero=False)
    y_scale = alt.Scale(type="log") if log_y else alt.Scale()
    x = alt.X(f"{fields.x}:Q", scale=x_scale, title=titles.x, axis=alt.Axis(labelAngle=-45 if log_x else 0))
    color = alt.Color(
        f"{fields.series}:N",
        title=titles.color,
        sort=None,
        scale=_series_colors(colors),
        legend=alt.Legend(orient="bottom", columns=1, symbolStrokeWidth=4),
    )
    tooltip = [
        alt.Tooltip(f"{fields.series}:N", title=titles.color),
        alt.Tooltip(f"{fields.x}:Q", title=titles.x),
        alt.Tooltip(f"{fields.y}:Q", title=titles.y, format=".4g"),
    ]
    if fields.low and fields.high:
        tooltip += [alt.Tooltip(f"{fields.low}:Q", format=".4g"), alt.Tooltip(f"{fields.high}:Q", format=".4g")]
    encoding = {
        "x": x,
        "y": alt.Y(f"{fields.y}:Q", scale=y_scale, title=titles.y, axis=_value_axis()),
        "color": color,
        "tooltip": tooltip,
    }
    if fields.dashed is not None:
        encoding["strokeDash"] = alt.StrokeDash(f"{fields.dashed}:N", legend=None)
    lines = alt.Chart(frame, title=titles.chart).mark_line(point=True, strokeWidth=3).encode(**encoding)
    if not (fields.low and fields.high):
        return lines.properties(width=size.width, height=size.height)
    spread = (
        alt.Chart(frame.dropna(subset=[fields.low, fields.high]))
        .mark_rule(strokeWidth=2, opacity=0.7)
        .encode(x=x, y=alt.Y(f"{fields.low}:Q", scale=y_scale), y2=f"{fields.high}:Q", color=color)
    )
    return alt.layer(lines, spread).properties(width=size.width, height=size.height)


def bar_chart(frame: pd.DataFrame, x: str, y: str, titles: Titles, size: Size = Size(420, 260)) -> alt.Chart:
    """Horizontal bars of ``x`` (quantity) per ``y`` (category, in frame order), with the value printed."""
    base = alt.Chart(frame).encode(
        x=alt.X(f"{x}:Q", title=titles.x),
        y=alt.Y(f"{y}:N", sort=list(frame[y]), title=titles.y),
        tooltip=[alt.Tooltip(f"{y}:N", title=titles.y), alt.Tooltip(f"{x}:Q", title=titles.x, format=",")],
    )
    bars = base.mark_bar(color="#c2410c")
    labels = base.mark_text(align="left", dx=4, fontSize=FONT_SIZE - 1).encode(text=alt.Text(f"{x}:Q", format=","))
    return alt.layer(bars, labels).properties(width=size.width, height=size.height)


def dot_chart(
    frame: pd.DataFrame,
    x: str,
    y: str,
    titles: Titles,
    *,
    rule: tuple[float, str] | None = None,
    size: Size = Size(420, 280),
) -> alt.Chart:
    """One dot per row, ``x`` as ordered categories; ``rule`` = (value, label) draws a labelled dashed line."""
    dots = (
        alt.Chart(frame, title=titles.chart)
        .mark_circle(size=110, opacity=0.7, color="#c2410c")
        .encode(
            x=alt.X(f"{x}:O", title=titles.x, axis=alt.Axis(labelAngle=0)),
            y=alt.Y(f"{y}:Q", title=titles.y, scale=alt.Scale(zero=True), axis=_value_axis()),
            tooltip=[alt.Tooltip(f"{column}:Q", format=".3f") for column in frame.columns],
        )
    )
    if rule is None:
        return dots.properties(width=size.width, height=size.height)
    line = pd.DataFrame({"value": [rule[0]], "label": [rule[1]]})
    rule_mark = alt.Chart(line).mark_rule(strokeDash=[6, 4], color="#52525b").encode(y="value:Q")
    label = (
        alt.Chart(line)
        .mark_text(align="left", dy=12, x=4, fontSize=FONT_SIZE - 2, color="#52525b")
        .encode(y="value:Q", text="label:N")
    )
    return alt.layer(dots, rule_mark, label).properties(width=size.width, height=size.height)


def source_grid(frame: pd.DataFrame, titles: Titles, grid: Grid, tokens: Sequence[str], height: int = 30) -> alt.Chart:
    """A table of coloured cells: ``row`` × ``column`` (``grid.cell`` wide, ``height`` tall), coloured by
    ``token`` (categories, in ``tokens`` order), ``text`` printed."""
    base = alt.Chart(frame).encode(
        x=alt.X("column:N", sort=list(grid.columns), title=titles.x, axis=alt.Axis(orient="top", labelAngle=0)),
        y=alt.Y("row:N", sort=list(grid.rows), title=titles.y),
    )
    rect = base.mark_rect(stroke="white", strokeWidth=2).encode(
        color=alt.Color("token:N", sort=list(tokens), scale=alt.Scale(scheme="set3"), title=titles.color),
        tooltip=[alt.Tooltip("text:N", title=titles.color)],
    )
    text = base.mark_text(fontSize=FONT_SIZE - 2, color="black").encode(text="text:N")
    return alt.layer(rect, text).properties(width=grid.cell * len(grid.columns), height=height * len(grid.rows))
