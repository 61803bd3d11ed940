"""The summary: parameters per matrix and per step, the total 4d²+4d, and that it does not depend on h."""

from __future__ import annotations

import functools

import streamlit as st

from components.headings import heading
from components.i18n import current_language, t
from components.nav import render_lab_links
from components.panels.frame import count
from components.panels.parts import ValueParts
from components.safe_text import markdown_rows
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
    per_matrix, per_step, by_heads = _tables(
        d_model, None if run is None else run.num_heads, None if run is None else len(run.tokens), current_language()
    )
    left, right = st.columns(2)
    left.markdown(per_matrix)
    if counted is not None:
        total = total_parameters(d_model)
        left.caption(t("summary.counted", counted=count(counted), ok="✓" if counted == total else "✗"))
    if per_step:
        right.markdown(per_step)
    right.markdown(by_heads)
    right.caption(t("summary.by_heads_note", d=d_model))


@functools.lru_cache(maxsize=64)
def _tables(d_model: int, num_heads: int | None, length: int | None, lang: str) -> tuple[str, str, str]:
    """The three tables as Markdown, each under its title: per matrix (and the total), per step (with a run's
    heads and length; else ``""``), per head count. The same for every seed: computed once per sizes."""
    one, total = projection_parameters(d_model), total_parameters(d_model)
    rows = [[name, count(d_model * d_model), count(d_model), count(one)] for name in ("W_q", "W_k", "W_v", "W_o")]
    rows.append([t("summary.total_row", lang=lang), count(4 * d_model * d_model), count(4 * d_model), count(total)])
    header = [t(f"summary.{name}", lang=lang) for name in ("matrix", "weights", "biases", "params")]
    per_matrix = markdown_rows(header, rows)
    total_line = t("summary.total", lang=lang, d=d_model, total=count(total))
    per_step = ""
    if num_heads is not None and length is not None:
        costs = step_costs(d_model, num_heads, length)
        header = [t(f"summary.{name}", lang=lang) for name in ("step", "params", "flops")]
        rows = [[t(f"step{cost.step}.title", lang=lang), count(cost.params), count(cost.flops)] for cost in costs]
        per_step = f"**{t('summary.per_step', lang=lang)}**\n\n{markdown_rows(header, rows)}"
    chosen = {num_heads} if num_heads is not None else set()  # e.g. 12 at 768: always in the table
    heads = sorted({h for h in HEAD_COUNTS if d_model % h == 0} | chosen)
    by_heads = markdown_rows(
        ["h", "d_k", t("summary.params", lang=lang)], ([h, d_model // h, count(total)] for h in heads)
    )
    return (
        f"**{t('summary.per_matrix', lang=lang)}**\n\n{per_matrix}\n\n{total_line}",
        per_step,
        f"**{t('summary.by_heads', lang=lang)}**\n\n{by_heads}",
    )
