"""A heatmap :class:`~components.heatmap.figure.Figure` as one compact binary payload for the canvas component,
and back: :func:`encode` packs it for the browser, :func:`decode` reads it back (tests read what a chart shows
through AppTest this way).

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
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Sequence

import numpy as np

from components.heatmap.figure import Figure, Heads, Panel, check_figure
from components.heatmap.scales import Scale

__all__ = ["VALUE_DECIMALS", "as_sent", "decode", "encode", "fixed_point"]

VALUE_DECIMALS = 4  # a tooltip's value (heatmap.js formats it with the header's "decimals")
_FIXED_SCALE = 10**VALUE_DECIMALS
_INT16_MAX = 32767


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
    check_figure(figure)
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
