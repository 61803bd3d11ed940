"""Heatmap figures for the canvas component (no Streamlit), one job per module.

* :mod:`.figure` -- the figure model: a :class:`Figure` of panels sharing a row axis, and :class:`Heads`, the
  head a figure follows (:func:`stack_heads`);
* :mod:`.codec` -- a figure as one compact binary payload for the browser (:func:`encode`) and back
  (:func:`decode`);
* :mod:`.scales` -- the colour scales (weights sequential, scores and vectors diverging);
* :mod:`.builders` -- the figures the page's steps draw from the trace's tensors.

Callers import the names below from here: ``from components import heatmap``; ``heatmap.encode(figure)``.
"""

from __future__ import annotations

from components.heatmap.builders import Stage, attention_figure, concat_figure, feature_figure, grid_figure
from components.heatmap.codec import VALUE_DECIMALS, as_sent, decode, encode, fixed_point
from components.heatmap.figure import Figure, Heads, Panel, heads_drawn, stack_heads
from components.heatmap.scales import COLOR_SCALES, DIVERGING, SEQUENTIAL, Scale, symmetric_limit, weights_scale

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
