"""Trained weights on the page: the task explained, training with live progress and a Stop, the timeline.

The training itself runs in the process-wide :mod:`mha.training.service` (a background
thread per training, shared by every session): this module asks it for the model of the
page's spec, shows the progress while it trains (a fragment that looks again every
:data:`POLL_S` seconds), and reruns the page once the model is there; the four steps then
show the trained layer as they show random weights.

A session trains on its first **Train** click, or at once when it opened a link asking for
trained weights; after that, new sizes, seeds or tasks train without a click, until the
learner presses **Stop**.
"""

from __future__ import annotations

import dataclasses
import uuid

import pandas as pd
import streamlit as st
import torch

from components import canvas, frames, heatmap, runner, vega
from components.charts import PRESENTATION_FONT_SCALE, ChartText, scale_fonts
from components.headings import heading
from components.i18n import t
from components.safe_text import md_escape
from components.training_charts import TrainingChartText, curves_chart, difference_chart, heads_grid
from components.url_state import changed_in_link
from mha.config import RANDOM, TRAINED, AttentionConfig, WeightSpec
from mha.head_labels import HeadLabel, label_heads
from mha.masks import build_mask
from mha.pipeline import AttentionRun
from mha.sources.trained import TrainedSource
from mha.text.baseline import BASELINE_HELD_OUT
from mha.text.reviews import LENGTH, PAD, load_reviews
from mha.tokens import token_labels
from mha.training.encoder import encoder_parameters
from mha.training.loop import (
    LEARNING_RATE,
    TARGET_ACCURACY,
    TrainingHistory,
)
from mha.training.model import task_model_parameters, training_mask
from mha.training.service import Progress, TrainedModel, TrainingJob, training_service
from mha.training.tasks import IGNORE, DigitsTask, ReviewsTask, Task, UnscrambleTask, make_task
from mha.training.vit import MLP_RATIO, patch_model_parameters
from mha.vision.analysis import patch_head_labels
from mha.vision.samples import DIGIT_SIZE, load_digits

__all__ = [
    "POLL_S",
    "TRAINED_LINK",
    "link_asks_to_train",
    "render_examples_link",
    "render_timeline",
    "render_training",
]

POLL_S = 0.5  # seconds between two looks at a training in progress
CURVES_PX = 320  # each of the loss and accuracy curves, wide
SLIDE_CURVES_PX = 190  # on a slide, in the half of the width beside the task
CLS_ROW_PX = 44  # a review's [CLS] row, per head, on the timeline
SLIDE_HEADS_PX = 240  # one or two heads' matrices on the timeline's slide (a short sequence's: fits under its slider)
#: Points of held-out accuracy (10 of the 1,000 reviews) within which the reviews' model reads them as well as the
#: bag of characters: about what another seed changes at the page's sizes (81.7-82.4 %, docs/PERFORMANCE.md).
SEED_SPREAD = 1.0
#: Where the tutorials' examples lead: a task whose two heads learn two relations, at sizes that train in seconds.
TRAINED_LINK = {"weights": TRAINED, "task": "previous_and_first", "d_model": 64, "num_heads": 2, "mask_type": "none"}
#: Sequences the task explanation shows (the learner's own sentence for unscramble).
EXAMPLES = {
    "previous": "3 1 4 1 5 9 2 6",
    "previous_and_first": "3 1 4 1 5 9 2 6",
    "previous_and_last_digit": "c 4 a t 7 b x y",
    "induction": "a b c d x y a b c",
}
_WATCHER = "_train_watcher"  # this session's name in the service's lists of watchers
_AUTO = "_train_auto"  # this session trains a new spec without a click
_JOB = "_train_job"  # the training this session watches
_STOPPED = "_train_stopped"  # (spec, step): the training this session stopped
_FAILED = "_train_failed"  # (spec, message): the training that failed
_LINK_KEYS = ("weights", "task", "d_model", "num_heads", "seed", "tokens", "tokenizer", "patch", "image")


# ---------------------------------------------------------------- session state
def _watcher() -> str:
    if _WATCHER not in st.session_state:
        st.session_state[_WATCHER] = uuid.uuid4().hex
    return st.session_state[_WATCHER]


def link_asks_to_train() -> bool:
    """Whether the link just opened (or edited) asks for trained weights (call before the page writes the link)."""
    return bool(changed_in_link(_LINK_KEYS)) and st.query_params.get("weights") == TRAINED


def _follow(job: TrainingJob | None) -> None:
    """Watch ``job`` (or nothing), leaving the training this session watched before."""
    previous = st.session_state.get(_JOB)
    if previous is not None and previous is not job:
        training_service().leave(previous, _watcher())
    st.session_state[_JOB] = job


def _train(spec: WeightSpec) -> None:
    """The Train button: train this spec now and the next ones without a click."""
    st.session_state[_AUTO] = True
    for key in (_STOPPED, _FAILED):
        if st.session_state.get(key, (None,))[0] == spec:
            del st.session_state[key]


def _stop(job: TrainingJob) -> None:
    """The Stop button: stop watching (the training stops unless another session watches it too)."""
    training_service().leave(job, _watcher())
    st.session_state[_JOB] = None
    st.session_state[_AUTO] = False
    st.session_state[_STOPPED] = (job.spec, job.step)


def _use_trained_example() -> None:
    for key, value in TRAINED_LINK.items():
        st.session_state[key] = value
    st.session_state[_AUTO] = True


# ---------------------------------------------------------------- the task and its model
def _task(config: AttentionConfig) -> Task:
    return make_task(config.task, config.weight_spec.text, config.patch)


def _example_table(task: Task, config: AttentionConfig) -> pd.DataFrame:
    """Positions, an example input and each output's targets ("·" where the loss skips it)."""
    ids = task.read_text(EXAMPLES.get(task.name, ""), "characters")
    if ids is None:  # unscramble: the learner's sentence, shuffled
        ids = task.example(torch.Generator().manual_seed(config.seed))
    targets = task.targets(ids.unsqueeze(0))[0]  # (R, L)
    tokens = task.tokens(ids)
    rows = {t("training.row.input"): list(tokens)}
    for name, row in zip(task.outputs, targets.tolist(), strict=True):
        pointer = task.name == "unscramble"  # its targets are positions, the others' tokens
        rows[t(f"training.output.{name}")] = ["·" if c == IGNORE else str(c) if pointer else task.vocab[c] for c in row]
    table = pd.DataFrame(rows, index=[str(i) for i in range(len(tokens))]).T
    table.columns.name = t("training.row.position")
    return table


def _layer_sizes(config: AttentionConfig) -> tuple[int, bool]:
    """The trained layers' key/value heads and whether they rotate q and k (RoPE), as the weight spec says."""
    spec = config.weight_spec
    return spec.num_kv_heads or config.num_heads, spec.rope_base is not None


def _heads_words(config: AttentionConfig) -> str:
    """The attention layers' heads for the model's line: query heads (h) and key/value heads (h_kv)."""
    return t("training.model_heads", heads=config.num_heads, kv_heads=_layer_sizes(config)[0])


def _gqa_note(box: st.delta_generator.DeltaGenerator, config: AttentionConfig) -> None:
    """Under the model's line, for fewer K/V heads than query heads: what the measurements showed."""
    kv_heads, _ = _layer_sizes(config)
    if kv_heads < config.num_heads and not config.trains_on_images:  # measured on the sequence tasks only
        box.caption(
            t("training.gqa_note", group=config.num_heads // kv_heads, heads=config.num_heads, kv_heads=kv_heads)
        )


def _model_line(task: Task, config: AttentionConfig) -> str:
    d = config.d_model
    kv_heads, rope = _layer_sizes(config)
    counts = task_model_parameters(task, d, config.num_heads, kv_heads, rope)
    positions = t("training.model_rope") if rope else t("training.model_positions", length=task.length, d=d)
    return t(
        "training.model",
        vocab=len(task.vocab),
        positions=positions,
        d=d,
        layers=task.layers,
        heads=_heads_words(config),
        attention=f"{counts['attention']:,}",
        readouts=len(task.outputs),
        classes=task.classes,
        total=f"{counts['total']:,}",
        lr=f"{LEARNING_RATE:g}",
        batch=task.batch,
    )


def _digits_model_line(task: DigitsTask, config: AttentionConfig) -> str:
    d, pixels, digits = config.d_model, task.patch * task.patch, load_digits()
    kv_heads, rope = _layer_sizes(config)
    counts = patch_model_parameters(
        1, DIGIT_SIZE, task.patch, d, config.num_heads, task.layers, task.classes, kv_heads, rope
    )
    recipe = task.recipe
    positions = (
        t("training.model_digits_rope", tokens=task.length)
        if rope
        else t("training.model_digits_positions", tokens=task.length, positions=f"{counts['positions']:,}")
    )
    return t(
        "training.model_digits",
        pixels=pixels,
        d=d,
        embedding=f"{counts['patch_embedding']:,}",
        positions=positions,
        heads=_heads_words(config),
        layers=task.layers,
        attention=f"{counts['attention']:,}",
        hidden=MLP_RATIO * d,
        total=f"{counts['total']:,}",
        lr=f"{recipe.learning_rate:g}",
        decay=f"{recipe.weight_decay:g}",
        warmup=recipe.warmup_steps,
        steps=recipe.steps,
        batch=task.batch,
        train=f"{digits.train.numel():,}",
    )


def _explain_digits(box: st.delta_generator.DeltaGenerator, task: DigitsTask, config: AttentionConfig) -> None:
    """The digits task in words and its model's line (the image views come with the page's patch panels)."""
    held_out = f"{load_digits().held_out.numel():,}"
    box.markdown(t("training.task.digits", patches=task.length - 1, patch=task.patch, held_out=held_out))
    box.caption(_digits_model_line(task, config))
    _gqa_note(box, config)


def _reviews_model_line(task: ReviewsTask, config: AttentionConfig) -> str:
    d = config.d_model
    kv_heads, rope = _layer_sizes(config)
    counts = encoder_parameters(len(task.vocab), task.length, d, config.num_heads, task.layers, 2, kv_heads, rope)
    recipe = task.recipe
    positions = t("training.model_rope") if rope else t("training.model_reviews_positions", length=task.length, d=d)
    return t(
        "training.model_reviews",
        vocab=f"{len(task.vocab):,}",
        d=d,
        positions=positions,
        layers=task.layers,
        heads=_heads_words(config),
        attention=f"{counts['attention']:,}",
        hidden=MLP_RATIO * d,
        total=f"{counts['total']:,}",
        steps=recipe.steps,
        lr=f"{recipe.learning_rate:g}",
        warmup=recipe.warmup_steps,
        decay=f"{recipe.weight_decay:g}",
        batch=task.batch,
    )


def _explain_reviews(box: st.delta_generator.DeltaGenerator, task: ReviewsTask, config: AttentionConfig) -> None:
    """The reviews task in words, its model's line and the bag of characters it is measured against."""
    splits = load_reviews().splits
    sizes = {name: f"{ids.numel():,}" for name, ids in splits.items()}
    box.markdown(t("training.task.reviews", length=LENGTH, vocab=f"{len(task.vocab) - 3:,}", **sizes))
    box.caption(_reviews_model_line(task, config))
    box.caption(t("training.model_reviews_baseline", baseline=f"{100 * BASELINE_HELD_OUT:.1f}"))
    _gqa_note(box, config)


def _explain(box: st.delta_generator.DeltaGenerator, config: AttentionConfig) -> Task:
    task = _task(config)
    if isinstance(task, DigitsTask):
        _explain_digits(box, task, config)
        return task
    if isinstance(task, ReviewsTask):
        _explain_reviews(box, task, config)
        return task
    box.markdown(t(f"training.task.{task.name}"))
    box.markdown(t("training.example"))
    box.dataframe(_example_table(task, config), width="content")
    box.caption(_model_line(task, config))
    _gqa_note(box, config)
    return task


# ---------------------------------------------------------------- training
def _chart_text() -> TrainingChartText:
    return TrainingChartText(
        step=t("training.chart.step"),
        loss=t("training.chart.loss"),
        accuracy=t("training.chart.accuracy"),
        difference=t("training.chart.difference"),
        layer=t("training.chart.layer"),
        query=t("chart.query"),
        key=t("chart.key"),
        weight=t("chart.weight"),
        scored=t("training.chart.scored"),
    )


def _curves(losses: tuple[float, ...], accuracies: tuple[float, ...]) -> pd.DataFrame:
    count = min(len(losses), len(accuracies))  # the trainer may be between its two appends
    return pd.DataFrame({"step": range(1, count + 1), "loss": losses[:count], "accuracy": accuracies[:count]}).astype(
        {"step": "int32", "loss": "float32", "accuracy": "float32"}
    )


def _spec_task(spec: WeightSpec) -> Task:
    """The task ``spec`` trains."""
    assert spec.task is not None  # a trained-weights spec names its task
    return make_task(spec.task, spec.text, spec.patch or 2)


def _progress_bar(progress: Progress, spec: WeightSpec) -> tuple[float, str]:
    """The progress bar's fraction and line: steps of the task's fixed schedule (the digits, the reviews), or of
    the cap a target may end early (the sequence tasks)."""
    numbers = {
        "step": progress.step,
        "loss": f"{progress.losses[-1]:.3f}",
        "accuracy": f"{100 * progress.accuracies[-1]:.1f}",
    }
    steps = _spec_task(spec).recipe.steps
    if steps is not None:  # a fixed schedule fits under the cap (the loop's rule)
        total = min(steps, progress.max_steps)
        return min(1.0, progress.step / total), t("training.running_fixed", steps=total, **numbers)
    return min(1.0, progress.step / progress.max_steps), t("training.running", cap=progress.max_steps, **numbers)


def _render_progress(
    box: st.delta_generator.DeltaGenerator, progress: Progress, spec: WeightSpec, curves_px: int = CURVES_PX
) -> None:
    if progress.state == "queued":
        box.info(t("training.queued", place=progress.place, running=training_service().max_running))
        return
    if not progress.losses:
        box.progress(0.0, text=t("training.starting"))
        return
    fraction, text = _progress_bar(progress, spec)
    box.progress(fraction, text=text)
    vega.draw(box, curves_chart(_curves(progress.losses, progress.accuracies), _chart_text(), curves_px))


@st.fragment(run_every=POLL_S)
def _watch(job: TrainingJob, quiet: bool = False, curves_px: int = CURVES_PX) -> None:
    """The training in progress, looked at again every POLL_S seconds; the whole page reruns when it ends.
    ``quiet`` (a presentation's slide other than the model's): one line saying that it trains, no progress."""
    progress = training_service().progress(job)
    if progress.state == "failed":
        st.session_state[_FAILED] = (job.spec, progress.error)
    if progress.state == "stopped":
        st.session_state[_STOPPED] = (job.spec, progress.step)
    if progress.state in ("done", "failed", "stopped"):
        st.session_state[_JOB] = None
        st.rerun()
    if quiet:
        st.info(t("training.on_model_slide"))
        return
    _render_progress(st.container(), progress, job.spec, curves_px)
    st.button(t("training.stop"), key="train_stop", on_click=_stop, args=(job,))


def _training_time(spec: WeightSpec) -> str:
    """Which measured training time the Train box quotes for ``spec``'s task (docs/PERFORMANCE.md's tables)."""
    task = _spec_task(spec)
    return "reviews" if isinstance(task, ReviewsTask) else "digits" if isinstance(task, DigitsTask) else "sequence"


def _render_ask(box: st.delta_generator.DeltaGenerator, spec: WeightSpec) -> None:
    stopped, failed = st.session_state.get(_STOPPED), st.session_state.get(_FAILED)
    if failed is not None and failed[0] == spec:
        box.error(t("training.failed", message=md_escape(failed[1], limit=200)))
    elif stopped is not None and stopped[0] == spec:
        box.warning(t("training.stopped", step=stopped[1]))
    else:
        box.info(t("training.ask", time=t(f"training.ask.{_training_time(spec)}")))
    box.button(t("training.train"), key="train_start", type="primary", on_click=_train, args=(spec,))


def _result_line(history: TrainingHistory, task: Task) -> str:
    """Steps, time and accuracy, saying what the accuracy was measured on (``history.evaluation``)."""
    numbers = {
        "steps": history.steps,
        "seconds": f"{history.seconds:.1f}",
        "accuracy": f"{100 * history.accuracy:.1f}",
        "sequences": f"{history.sequences:,}",
        "predictions": f"{history.evaluated:,}",
    }
    if isinstance(task, UnscrambleTask):
        numbers.update(orders=f"{task.orders:,}", words=task.words)
    return t(f"training.done.{history.evaluation}", **numbers)


def _versus_bag(history: TrainingHistory) -> str:
    """The reviews' held-out accuracy against the bag of characters', in words chosen from the two numbers: as well
    as (within :data:`SEED_SPREAD` points, what another seed changes), better, or worse."""
    right, bag = round(history.accuracy * history.sequences), round(BASELINE_HELD_OUT * history.sequences)
    gap = 100 * (right - bag) / history.sequences  # points
    kind = "same" if abs(gap) <= SEED_SPREAD else "above" if gap > 0 else "below"
    return t(
        f"training.versus_bag_{kind}",
        accuracy=f"{100 * history.accuracy:.1f}",
        baseline=f"{100 * BASELINE_HELD_OUT:.1f}",
        reviews=f"{abs(right - bag):,}",
        sequences=f"{history.sequences:,}",
    )


def _render_result(
    box: st.delta_generator.DeltaGenerator, trained: TrainedModel, config: AttentionConfig, curves_px: int = CURVES_PX
) -> None:
    history = trained.history
    task = _task(config)
    box.success(_result_line(history, task))
    box.caption(t("training.ran_on", device=history.device, seconds=f"{history.seconds:.1f}"))
    failed = history.out_of_memory
    if failed is not None:
        box.warning(t("training.out_of_memory", device=failed.device, **failed.size))
    target = f"{100 * TARGET_ACCURACY:g}"
    if task.recipe.steps is not None:  # a fixed schedule: no target ends it
        schedule = "training.fixed_schedule_reviews" if isinstance(task, ReviewsTask) else "training.fixed_schedule"
        box.caption(t(schedule, steps=history.steps, warmup=task.recipe.warmup_steps))
        if isinstance(task, ReviewsTask):
            box.caption(_versus_bag(history))
    elif history.target_step is None:
        box.warning(t("training.target_missed", target=target, steps=history.steps))
    else:
        box.caption(
            t("training.target_reached", target=target, step=history.target_step, sharpen=task.recipe.sharpen_steps)
        )
    if config.task == "previous_and_first" and config.num_heads == 1:
        box.info(t("training.one_head"))
    layers = len(trained.history.snapshots[-1].weights)
    if layers > 1:
        box.caption(t("training.layer_shown", layer=config.layer, high=layers - 1))
    box.markdown(f"**{t('training.curves')}**")
    vega.draw(box, curves_chart(_curves(history.losses, history.accuracies), _chart_text(), curves_px))


def render_training(
    config: AttentionConfig, link_trains: bool = False, shown: bool = True, slide: bool = False
) -> bool:
    """For trained weights: the task, its model, and its training; ``True`` once the model can be shown.

    Other weights: nothing is drawn (a training this session watched is left) and ``True``.

    Args:
        config: the page's valid config.
        link_trains: the link asked for trained weights (:func:`link_asks_to_train`): train without a click.
        shown: draw the task, the training and its curves (``False``: a presentation's slide other than the model's,
            where a training in progress is one line without its progress, and a finished one nothing).
        slide: laid out for a projector (the model's slide): the task beside the training.
    """
    if config.weights != TRAINED:
        _follow(None)
        return True
    if link_trains:
        st.session_state[_AUTO] = True
    spec, service = config.weight_spec, training_service()
    curves_px = SLIDE_CURVES_PX if slide else CURVES_PX
    if shown:
        box = st.container(border=True)
        heading(box, t("training.title", task=t(f"task.{config.task}")))
        explained, outcome = box.columns(2, gap="large") if slide else (box, box)
        _explain(explained, config)
    else:
        outcome = st.container()
    trained = service.finished(spec)
    if trained is None:
        job = service.job(spec)
        blocked = any(st.session_state.get(key, (None,))[0] == spec for key in (_STOPPED, _FAILED))
        if not blocked and (job is not None or st.session_state.get(_AUTO)):  # what this session stopped stays so
            found = service.request(spec, _watcher())  # join the training, or start it
            if isinstance(found, TrainedModel):
                trained = found
            else:
                _follow(found)
                with outcome:
                    _watch(found, quiet=not shown, curves_px=curves_px)
                return False
        else:
            _follow(None)
            _render_ask(outcome, spec)
            return False
    _follow(None)
    if shown:
        _render_result(outcome, trained, config, curves_px)
    return True


# ---------------------------------------------------------------- after training: the timeline
def _labels(
    weights: torch.Tensor, task: Task, ids: torch.Tensor, layer: int, mask: torch.Tensor | None
) -> tuple[HeadLabel, ...]:
    rows = task.scored_rows(ids.unsqueeze(0), layer)[0]
    if isinstance(task, DigitsTask):  # patches: the grid's relations, not the sequence's
        return patch_head_labels(weights, mask, rows, (task.grid, task.grid))
    return label_heads(weights, mask, task.relations(ids, layer), rows)


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
    """One layer's heads (H, L, L) on ``ids``, titled with their labels, rows without a loss faded; where only
    [CLS]'s row carries a loss (a review's last layer), that row alone (:func:`_draw_cls_rows`). ``slide``: for a
    projector (one or two heads larger, every chart's type larger)."""
    tokens = task.tokens(ids)
    if isinstance(task, ReviewsTask) and layer == task.layers - 1:
        _draw_cls_rows(box, weights, tokens, _head_titles(_labels(weights, task, ids, layer, mask)), layer, task)
        return
    blocked = None if mask is None else ~mask.expand(1, *weights.shape)[0]  # (H, L, L)
    cells = frames.attention_frame(weights, blocked)
    scored = task.scored_rows(ids.unsqueeze(0), layer)[0].numpy()  # (L,)
    cells["scored"] = scored[cells["q"].to_numpy()]
    heads = weights.size(0)
    columns = min(heads, 4)
    size = SLIDE_HEADS_PX if slide and heads <= 2 else 230 if heads <= 4 else 150
    titles = _head_titles(_labels(weights, task, ids, layer, mask))
    if task.layers > 1:
        box.markdown(f"**{t('training.layer_title', layer=layer)}**")
    spec = heads_grid(cells, frames.tokens_frame(tokens), titles, _chart_text(), size_px=size, columns=columns)
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


def render_timeline(run: AttentionRun, slide: bool = False) -> None:
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
    # an image's words (the sample image, patches), a review's (a validation review, characters), or the sequences'
    image = "_image" if task.reads_image else "_review" if isinstance(task, ReviewsTask) else ""
    what = t(f"training.timeline_what{image}", length=LENGTH)
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
    mask = training_mask(task, history.probe.numel())
    for layer, weights in enumerate(snapshot.weights):
        _draw_heads(box, weights, task, history.probe, layer, mask, slide)
    if slide:
        box.markdown(what)
    if run.num_heads < 2:
        box.caption(t("training.difference_one_head"))
        return
    box.markdown(t(f"training.difference{image}"))
    vega.draw(box, difference_chart(_difference_frame(history, task.layers), snapshot.step, _chart_text()))


# ---------------------------------------------------------------- from the tutorials' examples
def render_examples_link(container: st.delta_generator.DeltaGenerator) -> None:
    """Under the tutorials' examples: such relations are what trained heads learn, and a button to see them."""
    if st.session_state.get("weights") != RANDOM:
        return
    container.caption(t("examples.trained"))
    container.button(t("examples.trained_button"), key="trained_example", on_click=_use_trained_example)
