"""Colour scales of the heatmaps: attention weights on a sequential scale (0-1, or stretched to the shown weights),
scores and vectors on a diverging one symmetric around 0."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from torch import Tensor

__all__ = [
    "COLOR_SCALES",
    "DIVERGING",
    "SEQUENTIAL",
    "Scale",
    "diverging_scale",
    "symmetric_limit",
    "weights_scale",
]

SEQUENTIAL = "sequential"  # light to dark blue (Vega's "blues")
DIVERGING = "diverging"  # blue below 0, white at 0, red above (Vega's "redblue", reversed)
COLOR_SCALES = ("fixed", "stretch")  # how attention weights are coloured: 0-1, or min-max of the data


@dataclass(frozen=True)
class Scale:
    """A colour scale: ``scheme`` (:data:`SEQUENTIAL` or :data:`DIVERGING`) from ``low`` to ``high``."""

    scheme: str
    low: float
    high: float
    title: str


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


def diverging_scale(title: str, limit: float) -> Scale:
    """A diverging scale from ``-limit`` to ``limit`` (blue below 0, white at 0, red above)."""
    return Scale(DIVERGING, -limit, limit, title)
