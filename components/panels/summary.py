"""The summary: parameters per matrix and per step, the total 4d²+4d, and that it does not depend on h."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.headings import heading
from components.i18n import t
from components.nav import render_lab_links
from components.panels.frame import count
from components.panels.parts import ValueParts
from components.safe_text import markdown_table
from mha.counting import projection_parameters, step_costs, total_parameters
from mha.pipeline import AttentionRun

__all__ = ["SUMMARY_LABS", "render", "render_counts"]

HEAD_COUNTS = (1, 2, 4, 8, 16, 32, 64)
SUMMARY_LABS = ("heads", "complexity", "onnx")


def render(parts: ValueParts) -> None:
    """The summary's panel; its counts follow the run (``parts``)."""
    box = st.container(border=True)
    heading(box, t("summary.title"))
    parts.add(box, lambda results: _counts(results.run.d_model, results.run, results.counted))
    render_lab_links(box, SUMMARY_LABS)


def render_counts(d_model: int) -> None:
    """The summary for ``d_model`` alone, drawn now: where nothing can run, the counts still can be taught."""
    box = st.container(border=True)
    heading(box, t("summary.title"))
    with box:
        _counts(d_model)
    render_lab_links(box, SUMMARY_LABS)


def _counts(d_model: int, run: AttentionRun | None = None, counted: int | None = None) -> None:
    """Parameters per matrix and the total, per step (with a run), and per head count.

    Args:
        d_model: the width D (enough for every count here).
        run: the page's run, for the per-step FLOPs.
        counted: parameters actually held by the model, shown next to the formula when given.
    """
    one = projection_parameters(d_model)
    total = total_parameters(d_model)
    left, right = st.columns(2)
    per_matrix = pd.DataFrame(
        {
            t("summary.matrix"): ["W_q", "W_k", "W_v", "W_o", t("summary.total_row")],
            t("summary.weights"): [count(d_model * d_model)] * 4 + [count(4 * d_model * d_model)],
            t("summary.biases"): [count(d_model)] * 4 + [count(4 * d_model)],
            t("summary.params"): [count(one)] * 4 + [count(total)],
        }
    )
    left.markdown(f"**{t('summary.per_matrix')}**")
    left.markdown(markdown_table(per_matrix, index=False))
    left.markdown(t("summary.total", d=d_model, total=count(total)))
    if counted is not None:
        left.caption(t("summary.counted", counted=count(counted), ok="✓" if counted == total else "✗"))
    if run is not None:
        costs = step_costs(d_model, run.num_heads, len(run.tokens))
        per_step = pd.DataFrame(
            {
                t("summary.step"): [t(f"step{cost.step}.title") for cost in costs],
                t("summary.params"): [count(cost.params) for cost in costs],
                t("summary.flops"): [count(cost.flops) for cost in costs],
            }
        )
        right.markdown(f"**{t('summary.per_step')}**")
        right.markdown(markdown_table(per_step, index=False))
    chosen = {run.num_heads} if run is not None else set()  # e.g. 12 at 768: always in the table
    heads = sorted({h for h in HEAD_COUNTS if d_model % h == 0} | chosen)
    by_heads = pd.DataFrame(
        {
            "h": [str(h) for h in heads],
            "d_k": [str(d_model // h) for h in heads],
            t("summary.params"): [count(total_parameters(d_model)) for _ in heads],
        }
    )
    right.markdown(f"**{t('summary.by_heads')}**")
    right.markdown(markdown_table(by_heads, index=False))
    right.caption(t("summary.by_heads_note", d=d_model))
