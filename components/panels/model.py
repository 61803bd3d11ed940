"""What is about the model: on the page, the run's notes (a part: they follow the values); on the model slide (teacher
mode) a checkpoint's name, sizes and notes, or trained weights' notes (their task, training and curves are drawn
before the run, by :func:`components.panels.training_box.render`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.controls import show_run_notes
from components.headings import heading
from components.i18n import t
from components.panels.parts import ValueParts
from components.safe_text import markdown_table, md_escape
from mha.config import PRETRAINED
from mha.pipeline import AttentionRun

__all__ = ["render", "render_slide"]


def render(parts: ValueParts) -> None:
    """The run's notes on the page, a part (an invisible element where there is none: a part draws one)."""
    parts.add(st, lambda results: show_run_notes(results.run) or st.empty())


def render_slide(run: AttentionRun) -> None:
    """The model slide's own part: for a checkpoint its name, sizes and notes; the run's notes for trained weights."""
    if run.source_kind != PRETRAINED:
        show_run_notes(run)
        return
    box = st.container(border=True)
    heading(box, t("teacher.model.title", checkpoint=md_escape(run.config.pretrained_name)))
    left, right = box.columns([2, 3], gap="large")
    left.markdown(markdown_table(_facts(run)))
    with right:
        if not show_run_notes(run):
            st.caption(t("teacher.model.no_notes"))


def _facts(run: AttentionRun) -> pd.DataFrame:
    """A checkpoint's sizes as the page reads them: one row per fact, its value beside it."""
    kv_heads = run.model.num_kv_heads
    rows = {
        t("teacher.model.layers"): f"{run.num_layers}",
        t("teacher.model.heads"): t("teacher.model.heads_value", heads=run.num_heads, kv_heads=kv_heads),
        t("teacher.model.width"): t("teacher.model.width_value", d=run.d_model, d_k=run.d_k),
        t("teacher.model.layer"): f"{run.layer}",
        t("teacher.model.tokens"): f"{len(run.tokens)}",
    }
    return pd.DataFrame({t("teacher.model.value"): list(rows.values())}, index=list(rows))
