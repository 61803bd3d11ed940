"""Step 2, scaled dot-product attention: one head's raw scores, scaled and masked scores and weights, then
every head as a grid; below, why 1/√d_k, dropout on the weights in training and each head's label."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from components import canvas, charts, check_yourself, frames, heatmap, vega
from components.folds import folded
from components.i18n import t
from components.nav import render_lab_case_link
from components.panels.frame import (
    blocked,
    chart_text,
    count,
    explain,
    finish,
    panel,
    row_px,
    shape,
    slide_chart,
    thumbnails,
    unscored,
)
from components.panels.parts import Results, ValueParts
from components.safe_text import markdown_table, md_escape
from mha.config import RANDOM
from mha.pipeline import AttentionRun
from mha.row_spread import NEAR_UNIFORM_RATIO, near_uniform_bound

__all__ = ["DROPOUT_KEY", "GRID_STAGES", "ScoresChart", "head_label", "render", "row_ranges"]

GRID_STAGES = ("raw", "scaled", "weights")
_DROPOUT_KEYS = 8  # keys shown in the dropout table (the row's sum counts them all)
DROPOUT_KEY = "fold_dropout"  # the dropout example's expander (drawn only while open: components.folds)


def render(parts: ValueParts, color_scale: str = "fixed", slide: bool = False) -> None:
    """Step 2's panel; its values (shapes, the head's chart, the notes, the grid) are ``parts``.

    ``color_scale``: how the weights are coloured (:data:`components.heatmap.COLOR_SCALES`). ``slide``: laid
    out for a projector (teacher mode): the head's chart right under the heading, fitted to the screen, then the rest.
    """
    box = panel(2)
    if slide:
        parts.add_head_chart(slide_chart(box), ScoresChart(color_scale))
        explain(box, 2, _facts, parts, slide)
    else:
        explain(box, 2, _facts, parts, slide)
        parts.add_head_chart(box, ScoresChart(color_scale), check_yourself.chart_shown("2"))
    parts.add(box, _notes)
    parts.add_fragment(box, lambda results: _grid(results.run, color_scale, slide))
    if not slide:
        check_yourself.render(parts, box, "2", "model")
    finish(box, 2, slide)


def _facts(results: Results) -> tuple[str, str]:
    run = results.run
    a = run.trace.attend
    shapes = t(
        "step2.shapes",
        q=shape(run.trace.project.q_heads),
        kt=shape((1, run.num_heads, run.d_k, len(run.tokens))),
        scores=shape(a.raw_scores),
        weights=shape(a.weights),
        context=shape(a.context),
        d_k=run.d_k,
        scale=f"{a.scale:.4g}",
    )
    return shapes, t("step2.params")


@dataclass(frozen=True)
class ScoresChart:
    """Raw scores, scaled and masked scores and weights of each head side by side (rows without a loss faded)."""

    color_scale: str = "fixed"
    key: str = "heatmap_step2"

    def cells(self, run: AttentionRun) -> int:
        return 3 * len(run.tokens) ** 2

    def figure(self, run: AttentionRun, heads: heatmap.Heads) -> heatmap.Figure:
        a = run.trace.attend
        length = len(run.tokens)
        masked = blocked(run)
        height = row_px(length, 280 if length <= 24 else 400) * length
        labels = frames.token_labels(run.tokens)
        pictures = thumbnails(run)
        figures = [
            heatmap.attention_figure(
                (
                    heatmap.Stage(t("step2.raw", head=head), "scores", a.raw_scores[0, head]),
                    heatmap.Stage(t("step2.scaled", head=head), "scores", a.masked_scores[0, head], masked[head]),
                    heatmap.Stage(t("step2.weights", head=head), "weights", a.weights[0, head], masked[head]),
                ),
                labels,
                chart_text(),
                self.color_scale,
                height,
                faded_rows=unscored(run),
                thumbnails=pictures,
            )
            for head in heatmap.heads_drawn(heads)
        ]
        return heatmap.stack_heads(figures, heads)


def _notes(results: Results) -> None:
    """Under step 2's charts: what the weights look like, why √d_k, dropout, each head's label."""
    run = results.run
    weights = run.trace.attend.weights[0]  # (H, Lq, Lk)
    bound = near_uniform_bound(weights)
    if run.source_kind == RANDOM and bound is not None:
        uniform = {"ratio": NEAR_UNIFORM_RATIO, "bound": f"{bound:.3f}", "uniform": f"{1 / weights.size(-1):.3f}"}
        st.caption(t("step2.uniform_note", largest=f"{float(weights.max()):.3f}", **uniform))
    if run.mask is not None:
        st.caption(t("step2.masked_note"))
    if run.config.mask_type == "causal":  # the first tutorial's two causal masks do not fit together: lab 4 shows it
        render_lab_case_link(st, "masks", t("step2.causal_case"))
    _why_scale(results)
    _dropout(results)
    _head_labels(run)


def _why_scale(results: Results) -> None:
    """Why 1/√d_k: the scores' spread grows like √d_k and saturates the softmax; the numbers of every head."""
    run, spread = results.run, results.score_spread
    numbers = {
        "q_std": spread.q_std,
        "k_std": spread.k_std,
        "expected_raw": spread.expected_raw_std,
        "raw_std": spread.raw_std,
        "scaled_std": spread.scaled_std,
        "expected_scaled": spread.expected_scaled_std,
        "q_mean": spread.q_mean,
        "k_mean": spread.k_mean,
    }
    shown = {name: f"{value:.2f}" for name, value in numbers.items()}
    text = t("step2.why_scale", d_k=run.d_k, root=f"{run.d_k**0.5:.1f}", heads=run.num_heads, **shown)
    ratio = f"{spread.prediction_ratio:.1f}"
    if spread.wider_than_predicted:  # queries lined up with keys: the entries are not independent
        text += " " + t("step2.why_scale_dependent", ratio=ratio)
    elif not spread.independent_enough:  # narrower than predicted: few scores, a rule of thumb
        text += " " + t("step2.why_scale_low", ratio=ratio, count=f"{spread.scores:,}")
    st.markdown(text)


def _dropout(results: Results) -> None:
    """Where ``nn.Dropout(p)`` sits (on the weights, after the softmax, training only) and one row it would change
    (:attr:`Results.dropout_example`), in an expander drawn only while open."""
    run = results.run
    expander = folded(st, t("step2.dropout_title"), key=DROPOUT_KEY, icon=":material/grain:")
    if expander is None:
        return
    example = results.dropout_example  # head DROPOUT_HEAD's row, whatever head the browser shows
    head, query, row, dropped = example.head, example.query, example.row, example.dropped  # (Lk,) each
    labels = frames.token_labels(run.tokens)
    shown = min(len(labels), _DROPOUT_KEYS)
    total = t("step2.dropout_sum", count=len(labels))
    table = pd.DataFrame(
        [[f"{float(v):.3f}" for v in values[:shown]] + [f"{float(values.sum()):.3f}"] for values in (row, dropped)],
        index=[t("step2.dropout_eval"), t("step2.dropout_train", p=example.p)],
        columns=[*(md_escape(label) for label in labels[:shown]), total],  # table headers are markdown
    )
    expander.markdown(t("step2.dropout", head=head, query=md_escape(labels[query]), p=example.p))
    expander.markdown(markdown_table(table))


def head_label(run: AttentionRun, head: int) -> str:
    """``previous token 0.97``: what ``head`` does, read from its weights, in the session's language."""
    label = run.head_labels[head]
    return t("label.with_share", label=t(f"label.{label.name}"), share=f"{label.share:.2f}")


def _head_labels(run: AttentionRun) -> None:
    """One line: each head's label and the share of weight behind it (see mha.head_labels)."""
    labels = " · ".join(f"**{head}** {head_label(run, head)}" for head in range(run.num_heads))
    st.markdown(f"{t('step2.labels_title')} {labels}")
    st.caption(t("step2.labels_note" if run.image is None else "step2.labels_note_image"))
    if run.scored_rows is not None and not bool(run.scored_rows.all()):
        st.caption(t("step2.unscored_rows", rows=row_ranges((~run.scored_rows).nonzero().flatten().tolist())))


def row_ranges(rows: Sequence[int]) -> str:
    """``[0, 11, 12, 13]`` -> ``"0, 11–13"``: sorted row numbers with their runs shortened."""
    runs: list[list[int]] = []
    for row in sorted(rows):
        if runs and row == runs[-1][-1] + 1:
            runs[-1].append(row)
        else:
            runs.append([row])
    return ", ".join(str(run[0]) if len(run) == 1 else f"{run[0]}–{run[-1]}" for run in runs)


@st.fragment
def _grid(run: AttentionRun, color_scale: str, slide: bool) -> None:
    """Every head as small multiples, titled with its label (its stage chosen here: a fragment), or a per-head
    summary when the grid would be too big to send."""
    a = run.trace.attend
    num_heads, length = run.num_heads, len(run.tokens)
    text = chart_text()
    st.markdown(f"**{t('step2.grid_title', heads=num_heads)}**")
    cells = num_heads * length * length
    if cells > frames.CELL_BUDGET:
        st.info(t("step2.grid_summarised", cells=count(cells), budget=count(frames.CELL_BUDGET)))
        spec = charts.head_summary_chart(frames.head_summary_frame(a.weights[0]), text)
        vega.draw(st.container(), charts.scale_fonts(spec, charts.PRESENTATION_FONT_SCALE) if slide else spec)
        return
    if st.session_state.get("grid_stage") not in GRID_STAGES:
        st.session_state["grid_stage"] = "weights"
    stage = st.segmented_control(
        t("step2.grid_stage"),
        GRID_STAGES,
        key="grid_stage",
        required=True,
        format_func=lambda name: t(f"step2.stage.{name}"),
    )
    tensor = {"raw": a.raw_scores, "scaled": a.masked_scores, "weights": a.weights}[stage][0]
    kind = "weights" if stage == "weights" else "scores"
    columns = 4 if num_heads <= 8 else 8
    grid = heatmap.grid_figure(
        tensor,
        None if stage == "raw" else blocked(run),
        kind,
        frames.token_labels(run.tokens),
        text,
        color_scale,
        columns=columns,
        size_px=190 if columns == 4 else 95,
        head_titles=[f"{head}: {head_label(run, head)}" for head in range(num_heads)],
        faded_rows=unscored(run),
    )
    canvas.draw(st.container(), grid, key="heatmap_grid")
