"""The figures the page's steps draw, built from the trace's tensors: one head's attention stages, every head as
small multiples, token vectors, the heads' concatenation.

Conventions every figure keeps:
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

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from components.charts import ChartText
from components.heatmap.figure import Figure, Panel
from components.heatmap.scales import diverging_scale, symmetric_limit, weights_scale

__all__ = ["Stage", "attention_figure", "concat_figure", "feature_figure", "grid_figure"]

_ENGLISH = ChartText()


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
            scales.append(diverging_scale(text.score, symmetric_limit(values)))
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
        scale = diverging_scale(text.score, symmetric_limit(values))
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
        scales=(diverging_scale(text.value, limit),),
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
        scales=(diverging_scale(text.value, symmetric_limit(values)),),
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
