"""The heatmap's figure model: panels (matrices of one shape) sharing a row axis, their colour scales, axes,
layout, and the head a figure follows.

A :class:`Figure` is one or more panels that share a row axis (the tokens): step 1's Q, K and V side by side,
step 2's three stages of one head, every head as small multiples, the concatenation, the output.

A figure that follows the head picked on the page (steps 1 and 2) carries :class:`Heads`: its panels
are the same few panels for every head, head after head (:func:`stack_heads`), and the browser
shows the picked head's, so another head is drawn without asking the server
(:meth:`Figure.head_figure` is one head's figure, as the browser shows it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from components.heatmap.scales import Scale

__all__ = ["Figure", "Heads", "Panel", "check_figure", "heads_drawn", "stack_heads"]


@dataclass(frozen=True)
class Panel:
    """One matrix of a figure. ``values``: (R, C) float32; ``masked``: (R, C) bool or ``None``."""

    title: str
    values: np.ndarray
    masked: np.ndarray | None = None
    scale: int = 0  # index into Figure.scales


@dataclass(frozen=True)
class Heads:
    """The head a figure follows: the page's picker chooses it, the browser draws it.

    Attributes:
        count: the run's number of heads.
        shown: the head the server last knew of (the link's, the picker's once it told the server).
        moves: changes whenever the server itself moves the head (a link, the head finder, fewer
            heads): the browser then takes ``shown``; otherwise it keeps the head picked in it.
        every: the panels hold every head's (the browser switches by itself) or only ``shown``'s.
    """

    count: int
    shown: int
    moves: str = ""
    every: bool = True


@dataclass(frozen=True)
class Figure:
    """Panels sharing a row axis, their colour scales, both axes, and how to lay them out.

    Attributes:
        panels: the matrices, all of one shape (R, C).
        scales: the colour scales the panels refer to; one legend each.
        row_title, row_labels: the row axis (tokens), one label per row.
        col_title, col_labels: the column axis: token labels (attention), or ``None`` for features.
        col_index: for features, each column's index in the full matrix (tooltip and ticks).
        col_name: the tooltip's name of a column when it is not ``col_title`` (the concatenation's feature).
        group: for the concatenation, columns per head block (0: no blocks); blocks are
            separated by black lines and labelled by their number.
        group_title: the tooltip's name of a block (``head``).
        masked_word: the tooltip's word for a masked cell.
        faded_rows: (R,) bool, rows drawn faded (no training loss looked at them), or ``None``.
        faded_word: the tooltip's and the legend's words for a faded row.
        hover_note: said under the figure when not every token label fits.
        save_word: the title (and accessible name) of the chart's button that downloads it as a PNG.
        columns: at most this many panels side by side.
        height: about how tall one panel's matrix is drawn, in px (square: one cell's side x rows).
        square: square cells of ``height / rows`` px (small multiples) instead of filling the width.
        axes: draw token axes (small multiples have none: the tooltip names the cell).
        annotate: write each value in its cell when the cells are big enough.
        heads: for a figure that follows the picked head: which heads its panels hold, head after head
            (see :func:`stack_heads`); ``None`` for any other figure.
        thumbnails: (R, h, w, 4) uint8 RGBA, a small picture per row token (an image's patches), drawn beside
            its label (and the column's, when ``col_labels`` are the row labels); ``None``: none.
    """

    panels: tuple[Panel, ...]
    scales: tuple[Scale, ...]
    row_title: str
    row_labels: tuple[str, ...]
    col_title: str
    col_labels: tuple[str, ...] | None = None
    col_index: np.ndarray | None = None
    col_name: str = ""
    group: int = 0
    group_title: str = ""
    masked_word: str = ""
    faded_rows: np.ndarray | None = None
    faded_word: str = ""
    hover_note: str = ""
    save_word: str = ""
    columns: int = 3
    height: int = 300
    square: bool = False
    axes: bool = True
    annotate: bool = False
    heads: Heads | None = None
    thumbnails: np.ndarray | None = None

    @property
    def shape(self) -> tuple[int, int, int]:
        """(P, R, C): panels, rows, columns."""
        rows, cols = self.panels[0].values.shape
        return len(self.panels), rows, cols

    @property
    def per_head(self) -> int:
        """Panels per head (all of them when the figure does not follow a head)."""
        if self.heads is None or not self.heads.every:
            return len(self.panels)
        return len(self.panels) // self.heads.count

    def head_figure(self, head: int | None = None) -> Figure:
        """The figure as the browser draws it for ``head`` (default: the server's ``shown`` head).

        A figure that holds only the shown head's panels has no other head to give.
        """
        if self.heads is None:
            return self
        head = self.heads.shown if head is None else head
        if not 0 <= head < self.heads.count:
            raise ValueError(f"head {head} of {self.heads.count}")
        if not self.heads.every:
            if head != self.heads.shown:
                raise ValueError(f"this figure holds head {self.heads.shown} only, not {head}")
            return replace(self, heads=None)
        k = self.per_head
        return replace(self, panels=self.panels[head * k : (head + 1) * k], heads=None)

    def words(self) -> list[str]:
        """Every word the figure shows besides the token labels: titles, axis and tooltip names, notes."""
        texts = [p.title for p in self.panels] + [s.title for s in self.scales]
        texts += [self.row_title, self.col_title, self.col_name, self.group_title, self.masked_word]
        texts += [self.faded_word, self.hover_note, self.save_word]
        return [text for text in texts if text]

    def cells(self) -> pd.DataFrame:
        """Every cell as a long frame: ``panel, row, col, value, masked`` (``value`` as drawn, ``-inf`` kept)."""
        count, rows, cols = self.shape
        panel, row, col = np.indices((count, rows, cols))  # 3 x (P, R, C)
        values = np.stack([p.values for p in self.panels])  # (P, R, C)
        masked = np.stack([np.zeros((rows, cols), bool) if p.masked is None else p.masked for p in self.panels])
        return pd.DataFrame(
            {
                "panel": panel.reshape(-1),
                "row": row.reshape(-1),
                "col": col.reshape(-1),
                "value": values.reshape(-1),
                "masked": masked.reshape(-1),
            }
        )


def check_figure(figure: Figure) -> None:
    """Shapes agree: every panel (R, C) and its mask, one label per row (and column), scales exist."""
    _, rows, cols = figure.shape
    for panel in figure.panels:
        if panel.values.shape != (rows, cols) or (panel.masked is not None and panel.masked.shape != (rows, cols)):
            raise ValueError(f"panel {panel.title!r}: shape {panel.values.shape}, the figure's is {(rows, cols)}")
        if not 0 <= panel.scale < len(figure.scales):
            raise ValueError(f"panel {panel.title!r}: scale {panel.scale} of {len(figure.scales)}")
    if len(figure.row_labels) != rows:
        raise ValueError(f"{len(figure.row_labels)} row labels for {rows} rows")
    if figure.col_labels is not None and len(figure.col_labels) != cols:
        raise ValueError(f"{len(figure.col_labels)} column labels for {cols} columns")
    if figure.col_index is not None and len(figure.col_index) != cols:
        raise ValueError(f"{len(figure.col_index)} column indices for {cols} columns")
    if figure.faded_rows is not None and np.shape(figure.faded_rows) != (rows,):
        raise ValueError(f"faded rows of shape {np.shape(figure.faded_rows)} for {rows} rows")
    thumbs = figure.thumbnails
    if thumbs is not None and (thumbs.ndim != 4 or thumbs.shape[0] != rows or thumbs.shape[3] != 4):
        raise ValueError(f"thumbnails of shape {thumbs.shape}: (rows={rows}, h, w, 4) RGBA expected")
    heads = figure.heads
    if heads is not None:
        if not 0 <= heads.shown < heads.count:
            raise ValueError(f"shown head {heads.shown} of {heads.count}")
        if heads.every and len(figure.panels) % heads.count:
            raise ValueError(f"{len(figure.panels)} panels do not split into {heads.count} heads")


def heads_drawn(heads: Heads) -> range:
    """The heads whose figures a chart that follows the head holds: every head, or only the shown one."""
    return range(heads.count) if heads.every else range(heads.shown, heads.shown + 1)


def stack_heads(figures: Sequence[Figure], heads: Heads) -> Figure:
    """One figure per head, built alike, as one figure that follows the picked head (see :class:`Heads`).

    Args:
        figures: every head's figure in order (``heads.every``), or only the shown head's; each with the
            same number of panels, labels and layout (the first one's are kept).
        heads: which head the server shows, and whether every head is included.
    """
    expected = heads.count if heads.every else 1
    if len(figures) != expected:
        raise ValueError(f"{len(figures)} figures for {expected} heads")
    if len({len(figure.panels) for figure in figures}) != 1:
        raise ValueError("every head's figure must have as many panels")
    panels: list[Panel] = []
    scales: list[Scale] = []
    for figure in figures:  # each head's panels keep their own scales (a head's scores have their own range)
        panels += [replace(panel, scale=panel.scale + len(scales)) for panel in figure.panels]
        scales += figure.scales
    return replace(figures[0], panels=tuple(panels), scales=tuple(scales), heads=heads)
