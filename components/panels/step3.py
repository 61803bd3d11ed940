"""Step 3, concatenate: the heads' contexts side by side into (B, L, d_model), head boundaries drawn; below,
why the rows look alike when the weights are near uniform, and why ``.contiguous()`` comes before ``.view``."""

from __future__ import annotations

import streamlit as st
import torch

from components import canvas, check_yourself, frames, heatmap
from components.i18n import t
from components.panels.frame import chart_text, explain, feature_height, finish, panel, shape, slide_chart, thumbnails
from components.panels.parts import Results, ValueParts
from mha.pipeline import AttentionRun
from mha.row_spread import RowSpread, row_spread
from mha.strides import transposed_context

__all__ = ["render", "spread_text"]


def render(parts: ValueParts, slide: bool = False) -> None:
    """Step 3's panel; its values (shapes, the chart, its notes) are ``parts``. ``slide``: for a projector (the
    chart and its notes right under the heading, the chart fitted to the screen; then what the step does)."""
    box = panel(3)
    if slide:
        parts.add(slide_chart(box), lambda results: _values(results, slide=True))
        explain(box, 3, _facts, parts, slide)
    else:
        explain(box, 3, _facts, parts, slide)
        parts.add(box, _values)
        check_yourself.render(parts, box, "3")
    finish(box, 3, slide)


def _facts(results: Results) -> tuple[str, str]:
    run = results.run
    a, c = run.trace.attend, run.trace.concat
    batch, length, d_model = c.concat.shape
    shapes = t(
        "step3.shapes",
        context=shape(a.context),
        moved=shape((batch, length, run.num_heads, run.d_k)),
        concat=shape(c.concat),
        view_args=f"{batch}, {length}, {d_model}",
    )
    return shapes, t("step3.params")


def _concat_shown(run: AttentionRun) -> int:
    """Features per head the chart shows (all of d_k, or as many as the cell budget allows)."""
    length, d_model = len(run.tokens), run.d_model
    return min(frames.feature_budget(length, d_model) // run.num_heads or 1, run.d_k)


def _values(results: Results, slide: bool = False) -> None:
    """The chart of the concatenated contexts; when the rows look alike, why; why ``.contiguous()``. How many
    features it shows, when not all: above the chart, or under it on a slide (``slide``)."""
    run = results.run
    c = run.trace.concat
    length, d_model = len(run.tokens), run.d_model
    shown = _concat_shown(run)
    if shown < run.d_k and not slide:
        st.caption(t("step3.features_cut", shown=shown, d_k=run.d_k))
    columns = frames.concat_columns(d_model, run.num_heads, shown)
    title = t("step3.chart", length=length, d_model=d_model)
    labels = frames.token_labels(run.tokens)
    matrix = c.concat[0][:, torch.as_tensor(columns, device=c.concat.device)]  # (L, H * shown)
    height = feature_height(length)
    pictures = thumbnails(run)
    figure = heatmap.concat_figure(title, matrix, labels, columns, shown, chart_text(), height, pictures)
    canvas.draw(None, figure, key="heatmap_step3")
    if shown < run.d_k and slide:
        st.caption(t("step3.features_cut", shown=shown, d_k=run.d_k))
    spread = row_spread(c.concat[0])
    if spread.alike:
        largest = float(run.trace.attend.weights[0].max())
        st.markdown(t("step3.alike_note", largest=f"{largest:.2f}", uniform=f"{1 / length:.2f}", **spread_text(spread)))
    _contiguous(run)


def spread_text(spread: RowSpread) -> dict[str, str]:
    """The numbers of a :class:`RowSpread` as the notes print them."""
    return {"spread": f"{spread.spread:.2f}", "size": f"{spread.size:.2f}"}


def _contiguous(run: AttentionRun) -> None:
    """Why ``.contiguous()`` before ``.view``: the transposed context's strides and what ``view`` says of it."""
    moved = transposed_context(run.trace.attend.context)
    expander = st.expander(t("step3.contiguous_title"), icon=":material/memory:")
    numbers = {"shape": str(list(moved.shape)), "strides": str(moved.strides), "packed": str(moved.packed)}
    if moved.view_error is None:
        expander.markdown(t("step3.contiguous_lucky", contiguous=moved.contiguous))
    else:
        expander.markdown(t("step3.contiguous", contiguous=moved.contiguous, **numbers))
        expander.code(f"RuntimeError: {moved.view_error}", language="text", wrap_lines=True)
    expander.markdown(t("step3.contiguous_fix"))
