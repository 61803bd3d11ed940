"""The training timeline, for trained weights: every layer's heads on the learner's sequence (a model with several
layers), then the heads on the training's sample at each snapshot and their difference over training.

The heads are labelled by the task (:meth:`mha.training.tasks.Task.head_labels`: a sequence's relations, or an
image's grid), rows without a loss faded; where only [CLS]'s row reaches the answer and the whole matrix is too long
to read (a review's last layer), that row alone is drawn (:meth:`~mha.training.tasks.Task.shows_cls_row_only`).
"""

from __future__ import annotations

import dataclasses

import pandas as pd
import streamlit as st
import torch

from components import canvas, frames, heatmap, runner, training, vega
from components.charts import PRESENTATION_FONT_SCALE, ChartText, scale_fonts
from components.headings import heading
from components.i18n import t
from components.training_charts import difference_chart, heads_grid
from mha.config import TRAINED
from mha.head_labels import HeadLabel
from mha.masks import build_mask
from mha.pipeline import AttentionRun
from mha.sources.trained import TrainedSource
from mha.text.reviews import LENGTH, PAD
from mha.tokens import token_labels
from mha.training.loop import TrainingHistory
from mha.training.tasks import Task

__all__ = ["render"]

CLS_ROW_PX = 44  # a review's [CLS] row, per head, on the timeline
SLIDE_HEADS_PX = 240  # one or two heads' matrices on the timeline's slide (a short sequence's: fits under its slider)


def _head_titles(labels: tuple[HeadLabel, ...]) -> list[str]:
    return [
        t(
            "training.head_title",
            head=head,
            label=t("label.with_share", label=t(f"label.{label.name}"), share=f"{label.share:.2f}"),
        )
        for head, label in enumerate(labels)
    ]


def _draw_heads(
    box: st.delta_generator.DeltaGenerator,
    weights: torch.Tensor,
    task: Task,
    ids: torch.Tensor,
    layer: int,
    mask: torch.Tensor | None,
    slide: bool = False,
) -> None:
    """One layer's heads (H, L, L) on ``ids``, titled with their labels, rows without a loss faded; where the task
    draws [CLS]'s row alone (a review's last layer), that row (:func:`_draw_cls_rows`). ``slide``: for a projector
    (one or two heads larger, every chart's type larger)."""
    tokens = task.tokens(ids)
    titles = _head_titles(task.head_labels(weights, ids, layer, mask))
    if task.shows_cls_row_only(layer):
        _draw_cls_rows(box, weights, tokens, titles, layer, task)
        return
    blocked = None if mask is None else ~mask.expand(1, *weights.shape)[0]  # (H, L, L)
    cells = frames.attention_frame(weights, blocked)
    scored = task.scored_rows(ids.unsqueeze(0), layer)[0].numpy()  # (L,)
    cells["scored"] = scored[cells["q"].to_numpy()]
    heads = weights.size(0)
    columns = min(heads, 4)
    size = SLIDE_HEADS_PX if slide and heads <= 2 else 230 if heads <= 4 else 150
    if task.layers > 1:
        box.markdown(f"**{t('training.layer_title', layer=layer)}**")
    spec = heads_grid(cells, frames.tokens_frame(tokens), titles, training.chart_text(), size_px=size, columns=columns)
    vega.draw(box, scale_fonts(spec, PRESENTATION_FONT_SCALE) if slide else spec)


def _draw_cls_rows(
    box: st.delta_generator.DeltaGenerator,
    weights: torch.Tensor,
    tokens: tuple[str, ...],
    titles: list[str],
    layer: int,
    task: Task,
) -> None:
    """Each head's [CLS] row (H, L, L)[:, 0] over the review's characters, one strip per head on the weights' own
    range (a broad row is hardly tinted on 0-1): the one row a review's answer reads, drawn on a canvas at once."""
    keep = [k for k, token in enumerate(tokens) if token != PAD]  # a short review's [PAD] keys are masked out
    rows = weights[:, :1, keep].float().numpy()  # (H, 1, L_kept)
    text = _heatmap_text()
    scale = heatmap.weights_scale(text.weight, "stretch", *((row, None) for row in rows))
    labels = token_labels(tokens)
    figure = heatmap.Figure(
        panels=tuple(heatmap.Panel(title, row) for title, row in zip(titles, rows, strict=True)),
        scales=(scale,),
        row_title=text.query,
        row_labels=(labels[0],),
        col_title=text.key,
        col_labels=tuple(labels[k] for k in keep),
        hover_note=text.hover,
        save_word=text.save_png,
        columns=1,
        height=CLS_ROW_PX,
    )
    if task.layers > 1:
        box.markdown(f"**{t('training.layer_title', layer=layer)}**")
    canvas.draw(box, figure, key=f"timeline_cls_{layer}")


def _heatmap_text() -> ChartText:
    """The canvas heatmap's words in the session's language."""
    return ChartText(**{item.name: t(f"chart.{item.name}") for item in dataclasses.fields(ChartText)})


def _difference_frame(history: TrainingHistory, layers: int) -> pd.DataFrame:
    steps = list(history.record_steps)
    return pd.DataFrame(
        {
            "step": [s for _ in range(layers) for s in steps],
            "layer": [layer for layer in range(layers) for _ in steps],
            "difference": [v for layer in range(layers) for v in history.head_difference[layer]],
        }
    )


def render(run: AttentionRun, slide: bool = False) -> None:
    """For a trained run: every layer's heads on the learner's sequence (several layers), then the timeline.

    The timeline: a slider over the snapshots taken during training, the heads on the sample
    sequence at that snapshot (labelled, rows without a loss faded), and the heads' difference
    over training with the snapshot's step marked. ``slide``: laid out for a projector (the heads right under
    the slider, what they show after them).
    """
    if run.source_kind != TRAINED:
        return
    source = runner.cached_source(run.config.weight_spec)
    if not isinstance(source, TrainedSource):
        return
    task, history = source.task, source.trained.history
    if task.name == "unscramble" and all(label.name != "shuffled position" for label in run.head_labels):
        st.info(t("training.no_pointer"))
    if task.layers > 1 and not task.reads_image:  # an image's layers: the patches panel (it follows the image)
        box = st.container(border=True)
        heading(box, t("training.layers"))
        ids, _ = source.sequence(run.config)
        device = run.device.device  # the model's forward on the run's device, its weights drawn from the CPU
        model = source.model(device, "float32")
        mask = build_mask(run.config.mask_type, task.tokens(ids), window=run.config.window, device=device)
        with torch.inference_mode():
            _, weights = model.layer_inputs(ids.unsqueeze(0).to(device), mask)
        shown_mask = None if mask is None else mask.cpu()
        for layer, layer_weights in enumerate(weights):
            _draw_heads(box, layer_weights[0].cpu(), task, ids, layer, shown_mask)
    box = st.container(border=True)
    heading(box, t("training.timeline"))
    what = t(task.page_words.sample, length=LENGTH)  # the sequences', an image's or a review's words
    if not slide:
        box.markdown(what)
    snapshots = history.snapshots
    options = list(range(len(snapshots)))
    if st.session_state.get("train_snapshot") not in options:
        st.session_state["train_snapshot"] = options[-1]
    total = max(history.steps, 1)
    chosen = box.select_slider(
        t("training.snapshot"),
        options,
        key="train_snapshot",
        format_func=lambda i: t(
            "training.snapshot_at", step=snapshots[i].step, percent=round(100 * snapshots[i].step / total)
        ),
    )
    snapshot = snapshots[chosen]
    mask = task.training_mask(history.probe.numel())
    for layer, weights in enumerate(snapshot.weights):
        _draw_heads(box, weights, task, history.probe, layer, mask, slide)
    if slide:
        box.markdown(what)
    if run.num_heads < 2:
        box.caption(t("training.difference_one_head"))
        return
    box.markdown(t(task.page_words.difference))
    vega.draw(box, difference_chart(_difference_frame(history, task.layers), snapshot.step, training.chart_text()))
