"""Step 1, project and split: Q, K, V of the picked head (tokens x d_k), the shapes before and after
``view``/``transpose`` and the parameters of W_q, W_k, W_v."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from components import check_yourself, frames, heatmap
from components.i18n import t
from components.panels import today
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
from components.safe_text import md_escape
from mha.counting import layer_parameters, projection_parameters
from mha.pipeline import AttentionRun

__all__ = ["QKV_CHART", "render"]


def render(parts: ValueParts, slide: bool = False) -> None:
    """Step 1's panel; its values (the tokens, shapes, parameters and the chart) are ``parts``.

    ``slide``: laid out for a projector (teacher mode): the chart right under the heading, fitted to the screen,
    then the tokens, what the step does and its shapes; the code folded under them.
    """
    box = panel(1)
    if slide:
        parts.add_head_chart(slide_chart(box), QKV_CHART)
        parts.add(box, _token_line)
        explain(box, 1, _facts, parts, slide, what=_what)
    else:
        parts.add(box, _token_line)
        explain(box, 1, _facts, parts, slide, what=_what)
        parts.add_head_chart(box, QKV_CHART)
    parts.add(box, _under_chart)
    if not slide:
        check_yourself.render(parts, box, "1", "1b")
    finish(box, 1, slide)


def _token_line(results: Results) -> None:
    """``L = 11 tokens: 0:The · 1:animal · ...`` (the learner's text, escaped)."""
    run = results.run
    labels = " · ".join(md_escape(label) for label in frames.token_labels(run.tokens))
    st.markdown(f"{t('step1.tokens', count=len(run.tokens))} {labels}")


def _formula(run: AttentionRun) -> str:
    """``Q = x W_qᵀ + b_q``, without ``+ b_q`` for a layer whose W_q has no bias (a Llama's)."""
    return "Q = x W_qᵀ + b_q" if run.model.W_q.bias is not None else "Q = x W_qᵀ"


def _what(results: Results) -> str:
    """What the step does, with the layer's own formula."""
    return t("step1.what", formula=_formula(results.run))


def _facts(results: Results) -> tuple[str, str]:
    run = results.run
    p = run.trace.project
    batch, length, d_model = p.x_query.shape
    num_heads, d_k = run.num_heads, run.d_k
    shapes = t(
        "step1.shapes",
        x=shape(p.x_query),
        q=shape(p.q),
        view=shape((batch, length, num_heads, d_k)),
        heads=shape(p.q_heads),
        view_args=f"{batch}, {length}, {num_heads}, {d_k}",
        formula=_formula(run),
    )
    kv_heads = p.num_kv_heads
    if kv_heads == num_heads:
        shapes += "\n\n" + t("step1.shapes_same")
    else:
        shapes += "\n\n" + t(
            "step1.shapes_kv",
            kv_width=kv_heads * d_k,
            kv=kv_heads,
            d_k=d_k,
            h=num_heads,
            kv_view_args=f"{batch}, {length}, {kv_heads}, {d_k}",
            k_heads=shape(p.k_heads),
        )
    if run.model.rope_base is not None:
        shapes += "\n\n" + t("step1.shapes_rope")
    params = _params(run, d_model, kv_heads * d_k)
    if run.image is None:
        return shapes, params
    patch_shapes, patch_params = _patch_facts(run)
    return f"{patch_shapes}\n\n{shapes}", f"{patch_params}\n\n{params}"


def _params(run: AttentionRun, d_model: int, kv_width: int) -> str:
    """W_q, W_k and W_v's parameters: the tutorials' 3·(d² + d), or with smaller W_k and W_v (GQA), or no biases."""
    bias = run.model.W_q.bias is not None
    if kv_width == d_model:
        one = projection_parameters(d_model, bias)
        key = "step1.params" if bias else "step1.params_nobias"
        return t(key, d=d_model, one=count(one), total=count(3 * one))
    q, kv = projection_parameters(d_model, bias), projection_parameters(d_model, bias, kv_width)
    return t(
        "step1.params_kv",
        d=d_model,
        width=kv_width,
        q_formula=f"{d_model}² + {d_model}" if bias else f"{d_model}²",
        kv_formula=f"{d_model}·{kv_width} + {kv_width}" if bias else f"{d_model}·{kv_width}",
        q=count(q),
        kv=count(kv),
        total=count(q + 2 * kv),
        bias_terms=" + 2·d + 2·h_kv·d_k" if bias else "",
        layer=count(layer_parameters(d_model, kv_width, bias)),
    )


def _patch_facts(run: AttentionRun) -> tuple[str, str]:
    """How an image becomes the tokens: its patches, their embedding ``Linear(C·p·p, D)``, [CLS] and the positions
    (shapes, and the parameters they hold, by formula: C·p·p·D + D, D, L·D)."""
    patched = run.image.image
    channels, height, width = patched.pixels.shape
    rows, columns = patched.grid
    pixels = channels * patched.patch * patched.patch
    d_model, length = run.d_model, len(run.tokens)
    shapes = t(
        "step1.patch_shapes",
        image=shape((1, channels, height, width)),
        patches=shape((1, rows * columns, pixels)),
        pixels=pixels,
        d=d_model,
        embedded=shape((1, rows * columns, d_model)),
        tokens=shape((1, length, d_model)),
    )
    params = t(
        "step1.patch_params",
        pixels=pixels,
        d=d_model,
        embedding=count(pixels * d_model + d_model),
        length=length,
        positions=count(length * d_model),
    )
    return shapes, params


def _under_chart(results: Results) -> None:
    """Under the chart, one part (a part's elements are sent again with every live change): how many of d_k
    features it shows, when not all; then step 1b (:mod:`components.panels.today`)."""
    run = results.run
    columns = frames.feature_budget(len(run.tokens), run.d_k, parts=3)
    if columns < run.d_k:
        st.caption(t("steps.features_cut", shown=columns, total=run.d_k))
    today.draw(results)


@dataclass(frozen=True)
class _QKVChart:
    """Q, K, V (tokens x d_k, as many features as the cell budget allows) of each head."""

    key: str = "heatmap_step1"

    def cells(self, run: AttentionRun) -> int:
        length = len(run.tokens)
        return 3 * length * frames.feature_budget(length, run.d_k, parts=3)

    def figure(self, run: AttentionRun, heads: heatmap.Heads) -> heatmap.Figure:
        p = run.trace.project
        length, d_k = len(run.tokens), run.d_k
        columns = frames.feature_budget(length, d_k, parts=3)
        named = (("Q", p.q_heads, False), ("K", p.k_heads, True), ("V", p.v_heads, True))
        pictures = thumbnails(run)
        kv_of = p.kv_head_of or tuple(range(run.num_heads))
        grouped = p.num_kv_heads != run.num_heads
        figures = [
            heatmap.feature_figure(
                [
                    (
                        t("step1.chart_kv", name=name, kv=kv_of[head], head=head, length=length, d_k=d_k)
                        if shared and grouped
                        else t("step1.chart", name=name, head=head, length=length, d_k=d_k),
                        tensor[0, kv_of[head] if shared else head, :, :columns],
                    )
                    for name, tensor, shared in named
                ],
                frames.token_labels(run.tokens),
                range(columns),
                chart_text(),
                height=feature_height(length),
                thumbnails=pictures,
            )
            for head in heatmap.heads_drawn(heads)
        ]
        return heatmap.stack_heads(figures, heads)


QKV_CHART = _QKVChart()
