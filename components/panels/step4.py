"""Step 4, output projection: the output (B, L, d_model) and W_o's parameter count."""

from __future__ import annotations

import streamlit as st

from components import canvas, check_yourself, frames, heatmap
from components.i18n import t
from components.panels.frame import (
    chart_text,
    count,
    explain,
    feature_height,
    finish,
    panel,
    shape,
    slide_chart,
    thumbnails,
)
from components.panels.parts import Results, ValueParts
from components.panels.step3 import spread_text
from mha.counting import projection_parameters
from mha.pipeline import AttentionRun
from mha.row_spread import row_spread

__all__ = ["render"]


def render(parts: ValueParts, slide: bool = False) -> None:
    """Step 4's panel; its values (shapes, parameters, the chart, its note) are ``parts``.

    ``slide``: laid out for a projector (teacher mode): the chart and its note right under the heading, the chart
    fitted to the screen; then what the step does.
    """
    box = panel(4)
    if slide:
        parts.add(slide_chart(box), lambda results: _values(results, slide=True))
        explain(box, 4, _facts, parts, slide, what=_what)
    else:
        explain(box, 4, _facts, parts, slide, what=_what)
        parts.add(box, _values)
        check_yourself.render(parts, box, "4")
        check_yourself.render(parts, box, "trained")  # a model trained here: its own questions, above its timeline
    finish(box, 4, slide)


def _formula(run: AttentionRun) -> str:
    """``output = concat W_oᵀ + b_o``, without ``+ b_o`` for a layer whose W_o has no bias (a Llama's)."""
    return "output = concat W_oᵀ + b_o" if run.model.W_o.bias is not None else "output = concat W_oᵀ"


def _what(results: Results) -> str:
    """What the step does, with the layer's own formula."""
    return t("step4.what", formula=_formula(results.run))


def _facts(results: Results) -> tuple[str, str]:
    run = results.run
    c, o = run.trace.concat, run.trace.out
    shapes = t("step4.shapes", concat=shape(c.concat), output=shape(o.output), x=shape(run.x), formula=_formula(run))
    bias = run.model.W_o.bias is not None
    params = t(
        "step4.params" if bias else "step4.params_nobias",
        d=run.d_model,
        one=count(projection_parameters(run.d_model, bias)),
    )
    return shapes, params


def _values(results: Results, slide: bool = False) -> None:
    """The output's chart and, when step 3's rows looked alike, why they still do. How many features it shows,
    when not all: above the chart, or under it on a slide (``slide``)."""
    run = results.run
    o = run.trace.out
    length, d_model = len(run.tokens), run.d_model
    columns = frames.feature_budget(length, d_model)
    if columns < d_model and not slide:
        st.caption(t("steps.features_cut", shown=columns, total=d_model))
    parts = [(t("step4.chart", length=length, d_model=d_model), o.output[0, :, :columns])]
    labels = frames.token_labels(run.tokens)
    height = feature_height(length)
    figure = heatmap.feature_figure(
        parts, labels, range(columns), chart_text(), height=height, thumbnails=thumbnails(run)
    )
    canvas.draw(None, figure, key="heatmap_step4")
    if columns < d_model and slide:
        st.caption(t("steps.features_cut", shown=columns, total=d_model))
    if row_spread(run.trace.concat.concat[0]).alike:
        st.markdown(t("step4.alike_note", formula=_formula(run), **spread_text(row_spread(o.output[0]))))
