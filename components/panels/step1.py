"""Step 1, project and split: Q, K, V of the picked head (tokens x d_k), the shapes before and after
``view``/``transpose`` and the parameters of W_q, W_k, W_v."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from components import frames, heatmap
from components.i18n import t
from components.panels.frame import chart_text, count, explain, feature_height, finish, panel, shape, thumbnails
from components.panels.parts import Results, ValueParts
from components.safe_text import md_escape
from mha.counting import projection_parameters
from mha.pipeline import AttentionRun

__all__ = ["QKV_CHART", "render"]


def render(parts: ValueParts, slide: bool = False) -> None:
    """Step 1's panel; its values (the tokens, shapes, parameters and the chart) are ``parts``.

    ``slide``: laid out for a projector (teacher mode): the tokens after the chart, the code folded under it.
    """
    box = panel(1)
    if not slide:  # on a slide it follows the chart: a long text would push it off the screen
        parts.add(box, _token_line)
    explain(box, 1, _facts, parts, slide)
    parts.add(box, _features_cut)
    parts.add_head_chart(box, QKV_CHART)
    if slide:
        parts.add(box, _token_line)
    finish(box, 1, slide)


def _token_line(results: Results) -> None:
    """``L = 11 tokens: 0:The · 1:animal · ...`` (the learner's text, escaped)."""
    run = results.run
    labels = " · ".join(md_escape(label) for label in frames.token_labels(run.tokens))
    st.markdown(f"{t('step1.tokens', count=len(run.tokens))} {labels}")


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
    )
    one = projection_parameters(d_model)
    params = t("step1.params", d=d_model, one=count(one), total=count(3 * one))
    if run.image is None:
        return shapes, params
    patch_shapes, patch_params = _patch_facts(run)
    return f"{patch_shapes}\n\n{shapes}", f"{patch_params}\n\n{params}"


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


def _features_cut(results: Results) -> None:
    run = results.run
    columns = frames.feature_budget(len(run.tokens), run.d_k, parts=3)
    if columns < run.d_k:
        st.caption(t("steps.features_cut", shown=columns, total=run.d_k))
    else:
        st.empty()  # nothing to say: the part keeps its place (ValueParts.add)


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
        named = (("Q", p.q_heads), ("K", p.k_heads), ("V", p.v_heads))
        pictures = thumbnails(run)
        figures = [
            heatmap.feature_figure(
                [
                    (t("step1.chart", name=name, head=head, length=length, d_k=d_k), tensor[0, head, :, :columns])
                    for name, tensor in named
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
