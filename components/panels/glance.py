"""Attention at a glance: the heads' softmax weights of the learner's sentence, small, right under the page's intro
(its first screen on a laptop; with trained weights under the training box), before steps 1 and 2 that compute
them; step 2 draws each head whole.

A canvas heatmap (:func:`components.heatmap.grid_figure`, sent by :func:`components.canvas.draw` under a fixed key,
as the steps' charts are), so a change of the sizes, the mask, the text or the seed redraws it in place."""

from __future__ import annotations

import streamlit as st

from components import canvas, check_yourself, frames, heatmap
from components.i18n import t
from components.panels.frame import blocked, chart_text, unscored
from components.panels.parts import Results, ValueParts
from mha.pipeline import AttentionRun

__all__ = ["HEADS", "KEY", "MAX_TOKENS", "SIDE_PX", "glance_figure", "render"]

HEADS = 8  # heads drawn, in one row
SIDE_PX = 80  # about how wide each head's matrix is drawn: eight in a row fit a laptop's page, the sidebar open
MAX_TOKENS = SIDE_PX // 2  # beyond, a cell would be thinner than 2 px: a line points to step 2 instead
KEY = "heatmap_glance"  # the chart's element key: a rerun redraws the same canvas


def render(parts: ValueParts, color_scale: str = "fixed") -> None:
    """Keep the glance's place on the page; ``parts`` draws it for each run, coloured as the page colours the
    weights (``color_scale``: one of :data:`components.heatmap.COLOR_SCALES`)."""
    parts.add(st, lambda results: _glance(results, color_scale))


def _glance(results: Results, color_scale: str) -> None:
    """One line saying what the squares are, then the first heads' weights side by side; a line pointing to step 2
    where the sentence is too long to draw small, or while the learner predicts step 2."""
    run = results.run
    length = len(run.tokens)
    if length > MAX_TOKENS:
        st.caption(t("glance.too_long", length=length))
        return
    if not check_yourself.chart_shown("2")():  # the weights would answer step 2's question before it is asked
        st.caption(t("glance.predicting"))
        return
    shown = min(run.num_heads, HEADS)
    which = "glance.caption" if shown == run.num_heads else "glance.caption_some"
    st.caption(t(which, heads=run.num_heads, last=shown - 1))
    canvas.draw(None, glance_figure(run, color_scale), key=KEY)


def glance_figure(run: AttentionRun, color_scale: str = "fixed") -> heatmap.Figure:
    """The first :data:`HEADS` heads' (L, L) softmax weights as small multiples titled by head, on the fixed 0-1
    scale or (``stretch``) one from the smallest to the largest weight shown (masked cells grey, rows no loss looked
    at faded; the tooltip names each cell's tokens)."""
    shown = min(run.num_heads, HEADS)
    return heatmap.grid_figure(
        run.trace.attend.weights[0, :shown],  # (h, Lq, Lk) of the first heads
        blocked(run)[:shown],  # (h, Lq, Lk)
        "weights",
        frames.token_labels(run.tokens),
        chart_text(),
        color_scale,
        columns=shown,
        size_px=SIDE_PX,
        faded_rows=unscored(run),
    )
