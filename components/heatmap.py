"""Heatmap figures for the canvas component: matrices in, one compact binary payload out, and back (no Streamlit).

A :class:`Figure` is one or more panels (matrices of the same shape) that share a row axis
(the tokens): step 1's Q, K and V side by side, step 2's three stages of one head, every
head as small multiples, the concatenation, the output. :func:`encode` packs it for the
browser; :func:`decode` reads it back (tests read what a chart shows through AppTest this way).

A figure that follows the head picked on the page (steps 1 and 2) carries :class:`Heads`: its panels
are the same few panels for every head, head after head (:func:`stack_heads`), and the browser
shows the picked head's, so another head is drawn without asking the server
(:meth:`Figure.head_figure` is one head's figure, as the browser shows it).

Payload layout (little-endian)::

    uint32 n | n bytes of UTF-8 JSON header | zero padding to a multiple of 4 |
    float32 values of the panels the header's "fixed" does not flag (F, R, C) |
    int16 values of the flagged panels, in units of 10⁻⁴ (P - F, R, C) |
    int16 column index (C,), if the header says "index" |
    uint8 masked (P, R, C), if the header says "masked" | uint8 faded (R,), if the header says "faded" |
    uint8 RGBA thumbnails (R, h, w, 4), if the header's "thumbs" gives their h and w

(each array starts at a multiple of its item size, so the browser reads it in place).

A tooltip shows a value with :data:`VALUE_DECIMALS` decimals, so a panel whose values all fit goes
as those decimals (:func:`fixed_point`): half the bytes of float32, and the tooltip shows the same
digits it would show for the float32 value (a negative value that rounds to zero shows ``0.0000``
instead of ``-0.0000``). The others (a ``-inf`` where a score is masked, a value beyond ±3.2767) and
every panel of a figure that writes its values in the cells go as float32, as computed.
The header carries everything else: panel titles, colour scales, axis titles and token labels
(never HTML: the browser draws them as canvas text), the layout hints and the words of the
tooltip and of the chart's PNG download button, all in the page's language.

Conventions every figure keeps (as the Vega-Lite charts before it):
    * token axes show position-prefixed labels (``"3:the"``), so repeated words stay apart;
    * attention weights use a fixed 0-1 colour scale, or (``color_scale="stretch"``) one from the
      smallest to the largest weight shown; scores and vectors a diverging scale symmetric around 0;
    * masked cells are drawn grey with a ``×``, never merely dark;
    * rows no training loss looked at (``faded_rows``) are drawn faded, in every panel;
    * where the tokens are an image's patches, each token label has the patch's picture beside it
      (``thumbnails``; transparent for a token that is no patch, [CLS]), on the column axis too when the
      columns are the same tokens.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from components.charts import ChartText

__all__ = [
    "COLOR_SCALES",
    "DIVERGING",
    "SEQUENTIAL",
    "VALUE_DECIMALS",
    "Figure",
    "Heads",
    "Panel",
    "Scale",
    "Stage",
    "as_sent",
    "attention_figure",
    "concat_figure",
    "decode",
    "encode",
    "feature_figure",
    "fixed_point",
    "grid_figure",
    "heads_drawn",
    "stack_heads",
    "symmetric_limit",
    "weights_scale",
]

SEQUENTIAL = "sequential"  # light to dark blue (Vega's "blues")
DIVERGING = "diverging"  # blue below 0, white at 0, red above (Vega's "redblue", reversed)
COLOR_SCALES = ("fixed", "stretch")  # how attention weights are coloured: 0-1, or min-max of the data
VALUE_DECIMALS = 4  # a tooltip's value (heatmap.js formats it with the header's "decimals")
_FIXED_SCALE = 10**VALUE_DECIMALS
_INT16_MAX = 32767
_ENGLISH = ChartText()


@dataclass(frozen=True)
class Scale:
    """A colour scale: ``scheme`` (:data:`SEQUENTIAL` or :data:`DIVERGING`) from ``low`` to ``high``."""

    scheme: str
    low: float
    high: float
    title: str


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


# ---------------------------------------------------------------- the payload
def fixed_point(values: np.ndarray) -> np.ndarray | None:
    """``values`` as int16 counts of 10⁻⁴, rounded as a tooltip rounds them, or ``None`` if one is not finite or
    beyond ±3.2767 (such a panel goes as float32).

    A float32 times 10⁴ is exact in float64, and halves round away from zero, as JavaScript's
    ``toFixed(4)`` rounds: the value read back shows the same four decimals as the value itself.
    """
    wide = np.asarray(values, np.float64)
    if not np.isfinite(wide).all():
        return None
    counts = np.sign(wide) * np.floor(np.abs(wide) * _FIXED_SCALE + 0.5)
    if counts.size and np.abs(counts).max() > _INT16_MAX:
        return None
    return counts.astype("<i2")


def _from_fixed(counts: np.ndarray) -> np.ndarray:
    """The values the browser reads from ``counts``: each divided by 10⁴ in float64, then float32 (as JavaScript)."""
    return (counts.astype(np.float64) / _FIXED_SCALE).astype(np.float32)


def _sent_fixed(values: np.ndarray, figure: Figure) -> np.ndarray | None:
    """A panel's fixed-point values as ``figure`` sends them, or ``None``: float32 (so goes every panel of a
    figure that writes its values in the cells, with two decimals: rounding to four first could change them)."""
    return None if figure.annotate else fixed_point(values)


def as_sent(values: np.ndarray, figure: Figure) -> np.ndarray:
    """One panel's ``values`` as ``figure``'s payload carries them (and a chart shows them): the fixed-point
    values where :func:`encode` uses them, else float32."""
    counts = _sent_fixed(values, figure)
    return np.asarray(values, np.float32) if counts is None else _from_fixed(counts)


def _header(figure: Figure, fixed: Sequence[np.ndarray | None]) -> dict:
    count, rows, cols = figure.shape
    return {
        "shape": [count, rows, cols],
        "decimals": VALUE_DECIMALS,
        "fixed": [counts is not None for counts in fixed],
        "panels": [{"title": p.title, "scale": p.scale} for p in figure.panels],
        "scales": [{"scheme": s.scheme, "low": s.low, "high": s.high, "title": s.title} for s in figure.scales],
        "rows": {"title": figure.row_title, "labels": list(figure.row_labels)},
        "cols": {
            "title": figure.col_title,
            "labels": None if figure.col_labels is None else list(figure.col_labels),
            "name": figure.col_name,
            "group": figure.group,
            "group_title": figure.group_title,
        },
        "index": figure.col_index is not None,
        "masked": any(p.masked is not None for p in figure.panels),
        "faded": figure.faded_rows is not None,
        "text": {
            "masked": figure.masked_word,
            "faded": figure.faded_word,
            "hover": figure.hover_note,
            "png": figure.save_word,
        },
        "layout": {
            "columns": figure.columns,
            "height": figure.height,
            "square": figure.square,
            "axes": figure.axes,
            "annotate": figure.annotate,
        },
        "thumbs": None
        if figure.thumbnails is None
        else {"height": figure.thumbnails.shape[1], "width": figure.thumbnails.shape[2]},
        "heads": None
        if figure.heads is None
        else {
            "count": figure.heads.count,
            "shown": figure.heads.shown,
            "moves": figure.heads.moves,
            "every": figure.heads.every,
        },
    }


def encode(figure: Figure) -> bytes:
    """The figure as the component's payload (see the module docstring for the layout)."""
    _check(figure)
    _, rows, cols = figure.shape
    fixed = [_sent_fixed(panel.values, figure) for panel in figure.panels]
    header = json.dumps(_header(figure, fixed), ensure_ascii=False, separators=(",", ":")).encode()
    padding = b"\0" * (-(4 + len(header)) % 4)
    parts = [struct.pack("<I", len(header)), header, padding]
    floats = [panel.values for panel, counts in zip(figure.panels, fixed, strict=True) if counts is None]
    if floats:
        parts.append(np.stack(floats).astype("<f4", copy=False).tobytes())  # (F, R, C)
    if len(floats) < len(fixed):
        parts.append(np.stack([counts for counts in fixed if counts is not None]).tobytes())  # (P - F, R, C)
    if figure.col_index is not None:
        parts.append(np.asarray(figure.col_index).astype("<i2").tobytes())
    if any(p.masked is not None for p in figure.panels):
        none = np.zeros((rows, cols), bool)
        masks = np.stack([none if p.masked is None else p.masked for p in figure.panels])  # (P, R, C)
        parts.append(masks.astype(np.uint8).tobytes())
    if figure.faded_rows is not None:
        parts.append(np.asarray(figure.faded_rows, bool).astype(np.uint8).tobytes())  # (R,)
    if figure.thumbnails is not None:
        parts.append(np.ascontiguousarray(figure.thumbnails, np.uint8).tobytes())  # (R, h, w, 4)
    return b"".join(parts)


def decode(payload: bytes) -> Figure:
    """A payload of :func:`encode` read back into a :class:`Figure` (what the browser draws)."""
    (length,) = struct.unpack_from("<I", payload)
    header = json.loads(payload[4 : 4 + length].decode())
    offset = 4 + length + (-(4 + length) % 4)
    count, rows, cols = header["shape"]
    cells = count * rows * cols
    flags = header["fixed"]
    floats = np.frombuffer(payload, "<f4", flags.count(False) * rows * cols, offset)
    floats = floats.reshape(flags.count(False), rows, cols)  # (F, R, C)
    offset += floats.nbytes
    counts = np.frombuffer(payload, "<i2", flags.count(True) * rows * cols, offset)
    counts = counts.reshape(flags.count(True), rows, cols)  # (P - F, R, C)
    offset += counts.nbytes
    float_panels, fixed_panels = iter(floats), iter(counts)
    values = [_from_fixed(next(fixed_panels)) if flag else next(float_panels).copy() for flag in flags]
    index = None
    if header["index"]:
        index = np.frombuffer(payload, "<i2", cols, offset).copy()
        offset += 2 * cols
    masks: np.ndarray | None = None
    if header["masked"]:
        masks = np.frombuffer(payload, np.uint8, cells, offset).reshape(count, rows, cols).astype(bool)
        offset += cells
    faded = None
    if header["faded"]:
        faded = np.frombuffer(payload, np.uint8, rows, offset).astype(bool)
        offset += rows
    thumbnails = None
    if header["thumbs"] is not None:
        shape = (rows, header["thumbs"]["height"], header["thumbs"]["width"], 4)
        thumbnails = np.frombuffer(payload, np.uint8, math.prod(shape), offset).reshape(shape).copy()
    panels = tuple(
        Panel(p["title"], values[i], None if masks is None else masks[i], p["scale"])
        for i, p in enumerate(header["panels"])
    )
    scales = tuple(Scale(s["scheme"], s["low"], s["high"], s["title"]) for s in header["scales"])
    labels = header["cols"]["labels"]
    layout = header["layout"]
    heads = header["heads"]
    return Figure(
        panels=panels,
        scales=scales,
        row_title=header["rows"]["title"],
        row_labels=tuple(header["rows"]["labels"]),
        col_title=header["cols"]["title"],
        col_labels=None if labels is None else tuple(labels),
        col_index=index,
        col_name=header["cols"]["name"],
        group=header["cols"]["group"],
        group_title=header["cols"]["group_title"],
        masked_word=header["text"]["masked"],
        faded_rows=faded,
        faded_word=header["text"]["faded"],
        hover_note=header["text"]["hover"],
        save_word=header["text"]["png"],
        heads=None if heads is None else Heads(heads["count"], heads["shown"], heads["moves"], heads["every"]),
        thumbnails=thumbnails,
        **layout,
    )


def _check(figure: Figure) -> None:
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


# ---------------------------------------------------------------- scales
def symmetric_limit(*values: np.ndarray | Tensor) -> float:
    """The largest finite absolute value among ``values`` (1.0 if there is none), rounded up a little."""
    largest = 0.0
    for column in values:
        array = column.detach().cpu().double().numpy() if isinstance(column, Tensor) else np.asarray(column, np.float64)
        finite = array[np.isfinite(array)]
        if finite.size:
            largest = max(largest, float(np.abs(finite).max()))
    if largest == 0.0:
        return 1.0
    step = 10 ** math.floor(math.log10(largest)) / 10  # round up at the second significant digit
    return math.ceil(largest / step) * step


def weights_scale(title: str, color_scale: str = "fixed", *shown: tuple[np.ndarray, np.ndarray | None]) -> Scale:
    """The weights' scale: 0-1 (``fixed``, comparable across heads and runs) or the shown weights' range.

    Args:
        title: the legend's title.
        color_scale: one of :data:`COLOR_SCALES`.
        shown: ``(values, masked)`` of every panel on this scale; masked cells do not count.
    """
    if color_scale not in COLOR_SCALES:
        raise ValueError(f"color_scale must be one of {COLOR_SCALES}, not {color_scale!r}")
    if color_scale == "fixed" or not shown:
        return Scale(SEQUENTIAL, 0.0, 1.0, title)
    kept = [values[np.isfinite(values) & (True if masked is None else ~masked)] for values, masked in shown]
    live = np.concatenate([k.reshape(-1) for k in kept]) if kept else np.zeros(0, np.float32)
    if live.size == 0:
        return Scale(SEQUENTIAL, 0.0, 1.0, title)
    low, high = float(live.min()), float(live.max())
    return Scale(SEQUENTIAL, low, high if high > low else low + 1e-6, title)


def _diverging(title: str, limit: float) -> Scale:
    return Scale(DIVERGING, -limit, limit, title)


# ---------------------------------------------------------------- builders
def _numpy(tensor: Tensor | np.ndarray) -> np.ndarray:
    if isinstance(tensor, Tensor):
        return tensor.detach().to("cpu", torch.float32).numpy()
    return np.asarray(tensor, dtype=np.float32)


def _bools(mask: Tensor | np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray | None:
    if mask is None:
        return None
    array = mask.detach().cpu().numpy() if isinstance(mask, Tensor) else np.asarray(mask)
    return np.broadcast_to(array.astype(bool), shape).copy()


def _rows(rows: Tensor | np.ndarray | None) -> np.ndarray | None:
    """(R,) bool as NumPy, or ``None`` when no row is marked."""
    if rows is None:
        return None
    array = rows.detach().cpu().numpy() if isinstance(rows, Tensor) else np.asarray(rows)
    return array.astype(bool) if array.any() else None


@dataclass(frozen=True)
class Stage:
    """One matrix of :func:`attention_figure`: its title, ``kind`` (``"scores"`` or ``"weights"``), values, mask."""

    title: str
    kind: str
    values: Tensor | np.ndarray
    masked: Tensor | np.ndarray | None = None


def attention_figure(
    stages: Sequence[Stage],
    labels: Sequence[str],
    text: ChartText = _ENGLISH,
    color_scale: str = "fixed",
    height: int = 300,
    faded_rows: Tensor | np.ndarray | None = None,
    thumbnails: np.ndarray | None = None,
) -> Figure:
    """One head's (L_q x L_k) matrices side by side with token labels on both axes; one colour scale each.

    Scores get a diverging scale of their own (symmetric around 0), weights :func:`weights_scale`.

    Args:
        stages: the matrices (each (L_q, L_k)), e.g. raw scores, scaled and masked scores, weights.
        labels: position-prefixed token labels (``"3:the"``), for both axes (self-attention).
        text: axis, legend and tooltip words.
        color_scale: how weights are coloured (:data:`COLOR_SCALES`).
        height: about how tall each matrix is drawn (px).
        faded_rows: (L_q,) bool: query rows to draw faded (no training loss looked at them); ``None``: none.
        thumbnails: (L, h, w, 4) RGBA, each token's picture (an image's patches) beside its labels; ``None``: none.
    """
    panels, scales = [], []
    for stage in stages:
        values = _numpy(stage.values)
        masked = _bools(stage.masked, values.shape)
        if stage.kind == "weights":
            scales.append(weights_scale(text.weight, color_scale, (values, masked)))
        else:
            scales.append(_diverging(text.score, symmetric_limit(values)))
        panels.append(Panel(stage.title, values, masked, len(scales) - 1))
    return Figure(
        panels=tuple(panels),
        scales=tuple(scales),
        row_title=text.query,
        row_labels=tuple(labels),
        col_title=text.key,
        col_labels=tuple(labels),
        masked_word=text.masked,
        faded_rows=_rows(faded_rows),
        faded_word=text.unscored,
        hover_note=text.hover,
        save_word=text.save_png,
        columns=len(panels),
        height=height,
        annotate=len(labels) <= 8,
        thumbnails=thumbnails,
    )


def grid_figure(
    matrices: Tensor | np.ndarray,
    blocked: Tensor | np.ndarray | None,
    kind: str,
    labels: Sequence[str],
    text: ChartText = _ENGLISH,
    color_scale: str = "fixed",
    columns: int = 4,
    size_px: int = 190,
    head_titles: Sequence[str] | None = None,
    faded_rows: Tensor | np.ndarray | None = None,
) -> Figure:
    """Small multiples: one (L, L) matrix per head, square cells, no token axes (the tooltip names them).

    Args:
        matrices: (H, L_q, L_k) scores or weights of every head.
        blocked: bool, broadcastable to (H, L_q, L_k): cells the mask blocked; ``None`` marks none.
        kind: ``"scores"`` (one diverging scale for all heads) or ``"weights"``.
        labels: token labels (for the tooltip).
        columns: heads per row.
        size_px: about how wide each head's matrix is drawn.
        head_titles: one title per head (``0: previous token 0.97``); ``None``: ``head 0``, ``head 1``, ...
        faded_rows: (L_q,) bool: query rows to draw faded (no training loss looked at them); ``None``: none.
    """
    values = _numpy(matrices)  # (H, Lq, Lk)
    masked = _bools(blocked, values.shape)
    parts = [(values[h], None if masked is None else masked[h]) for h in range(values.shape[0])]
    if kind == "weights":
        scale = weights_scale(text.weight, color_scale, *parts)
    else:
        scale = _diverging(text.score, symmetric_limit(values))
    length = values.shape[1]
    titles = [f"{text.head} {h}" for h in range(len(parts))] if head_titles is None else list(head_titles)
    if len(titles) != len(parts):
        raise ValueError(f"{len(titles)} head titles for {len(parts)} heads")
    return Figure(
        panels=tuple(Panel(title, v, m) for title, (v, m) in zip(titles, parts, strict=True)),
        scales=(scale,),
        row_title=text.query,
        row_labels=tuple(labels),
        col_title=text.key,
        col_labels=tuple(labels),
        masked_word=text.masked,
        faded_rows=_rows(faded_rows),
        faded_word=text.unscored,
        save_word=text.save_png,
        columns=columns,
        height=max(1, size_px // max(1, length)) * length,
        square=True,
        axes=False,
    )


def feature_figure(
    parts: Sequence[tuple[str, Tensor | np.ndarray]],
    labels: Sequence[str],
    columns: Sequence[int] | np.ndarray,
    text: ChartText = _ENGLISH,
    limit: float | None = None,
    height: int = 300,
    thumbnails: np.ndarray | None = None,
) -> Figure:
    """Token vectors (tokens x features) side by side on one diverging scale (e.g. one head's Q, K and V).

    Args:
        parts: ``(title, matrix)`` pairs; each matrix (L, F) holds the features listed in ``columns``.
        labels: token labels (rows).
        columns: the index of each drawn feature in the full vector (tooltip and ticks).
        limit: half-width of the colour domain; from the data when ``None``.
        height: about how tall each matrix is drawn (px).
        thumbnails: (L, h, w, 4) RGBA, each token's picture beside its label (see :class:`Figure`).
    """
    matrices = [_numpy(matrix) for _, matrix in parts]
    limit = symmetric_limit(*matrices) if limit is None else limit
    return Figure(
        panels=tuple(Panel(title, matrix) for (title, _), matrix in zip(parts, matrices, strict=True)),
        scales=(_diverging(text.value, limit),),
        row_title=text.token,
        row_labels=tuple(labels),
        col_title=text.feature,
        col_index=np.asarray(columns, dtype=np.int16),
        hover_note=text.hover,
        save_word=text.save_png,
        columns=len(parts),
        height=height,
        thumbnails=thumbnails,
    )


def concat_figure(
    title: str,
    matrix: Tensor | np.ndarray,
    labels: Sequence[str],
    columns: np.ndarray,
    shown_per_head: int,
    text: ChartText = _ENGLISH,
    height: int = 300,
    thumbnails: np.ndarray | None = None,
) -> Figure:
    """The heads' contexts side by side (L, d_model): a black line between heads, one label per head.

    Args:
        matrix: (L, H * shown_per_head): the first ``shown_per_head`` features of every head.
        columns: each drawn column's index in d_model (see :func:`components.frames.concat_columns`).
        shown_per_head: columns drawn per head (``d_k`` unless the matrix is too big to draw whole).
        thumbnails: (L, h, w, 4) RGBA, each token's picture beside its label (see :class:`Figure`).
    """
    values = _numpy(matrix)
    return Figure(
        panels=(Panel(title, values),),
        scales=(_diverging(text.value, symmetric_limit(values)),),
        row_title=text.token,
        row_labels=tuple(labels),
        col_title=text.heads_axis,
        col_index=np.asarray(columns, dtype=np.int16),
        col_name=text.feature,
        group=shown_per_head,
        group_title=text.head,
        hover_note=text.hover,
        save_word=text.save_png,
        columns=1,
        height=height,
        thumbnails=thumbnails,
    )
