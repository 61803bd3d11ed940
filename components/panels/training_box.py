"""The training box, for trained weights: the task and its model explained, the training's live progress with
Stop, and once trained its result and curves.

What the session does with the training (start, watch, stop) is :mod:`components.training`'s; this panel draws
it. While a model trains, a fragment looks again every :data:`POLL_S` seconds; the page runs again once it is
there, and the four steps then show the trained layer as they show random weights. What the box says of a task
comes from the task (:class:`mha.training.tasks.Task`: its explanation, its model's line, its words).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
import torch

from components import training, vega
from components.headings import heading
from components.i18n import t
from components.safe_text import md_escape
from components.training_charts import curves_chart
from mha.config import TRAINED, AttentionConfig, WeightSpec
from mha.training.loop import TARGET_ACCURACY, TrainingHistory
from mha.training.service import Progress, TrainedModel, TrainingJob, training_service
from mha.training.tasks import IGNORE, Task

__all__ = ["POLL_S", "SEED_SPREAD", "progress_bar", "render", "versus_baseline"]

POLL_S = 0.5  # seconds between two looks at a training in progress
CURVES_PX = 320  # each of the loss and accuracy curves, wide
SLIDE_CURVES_PX = 190  # on a slide, in the half of the width beside the task
#: Points of held-out accuracy (10 of the 1,000 reviews) within which the reviews' model reads them as well as the
#: bag of characters: about what another seed changes at the page's sizes (81.7-82.4 %, docs/PERFORMANCE.md).
SEED_SPREAD = 1.0
#: Sequences the task explanation shows (the learner's own sentence for unscramble).
EXAMPLES = {
    "previous": "3 1 4 1 5 9 2 6",
    "previous_and_first": "3 1 4 1 5 9 2 6",
    "previous_and_last_digit": "c 4 a t 7 b x y",
    "induction": "a b c d x y a b c",
}


# ---------------------------------------------------------------- the task and its model
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


def _kv_heads(config: AttentionConfig) -> int:
    """The trained layers' key/value heads, as the weight spec says."""
    return config.weight_spec.num_kv_heads or config.num_heads


def _gqa_note(box: st.delta_generator.DeltaGenerator, config: AttentionConfig) -> None:
    """Under the model's line, for fewer K/V heads than query heads: what the measurements showed."""
    kv_heads = _kv_heads(config)
    if kv_heads < config.num_heads and not config.trains_on_images:  # measured on the sequence tasks only
        box.caption(
            t("training.gqa_note", group=config.num_heads // kv_heads, heads=config.num_heads, kv_heads=kv_heads)
        )


def _explain(box: st.delta_generator.DeltaGenerator, task: Task, config: AttentionConfig) -> None:
    """The task in words (with an example's targets for a sequence task), its model's line, the baseline it is
    measured against (where it has one) and the K/V heads' note."""
    box.markdown(training.words(task.explanation()))
    if task.shows_targets:
        box.markdown(t("training.example"))
        box.dataframe(_example_table(task, config), width="content")
    rope = config.weight_spec.rope_base is not None
    box.caption(training.words(task.model_words(config.d_model, config.num_heads, _kv_heads(config), rope)))
    if task.baseline is not None:
        box.caption(t("training.model_reviews_baseline", baseline=f"{100 * task.baseline:.1f}"))
    _gqa_note(box, config)


# ---------------------------------------------------------------- training
def _curves(losses: tuple[float, ...], accuracies: tuple[float, ...]) -> pd.DataFrame:
    count = min(len(losses), len(accuracies))  # the trainer may be between its two appends
    return pd.DataFrame({"step": range(1, count + 1), "loss": losses[:count], "accuracy": accuracies[:count]}).astype(
        {"step": "int32", "loss": "float32", "accuracy": "float32"}
    )


def progress_bar(progress: Progress, spec: WeightSpec) -> tuple[float, str]:
    """The progress bar's fraction and line: steps of the task's fixed schedule (the digits, the reviews), or of
    the cap a target may end early (the sequence tasks)."""
    numbers = {
        "step": progress.step,
        "loss": f"{progress.losses[-1]:.3f}",
        "accuracy": f"{100 * progress.accuracies[-1]:.1f}",
    }
    steps = training.spec_task(spec).recipe.steps
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
    fraction, text = progress_bar(progress, spec)
    box.progress(fraction, text=text)
    vega.draw(box, curves_chart(_curves(progress.losses, progress.accuracies), training.chart_text(), curves_px))


@st.fragment(run_every=POLL_S)
def _watch(job: TrainingJob, quiet: bool = False, curves_px: int = CURVES_PX) -> None:
    """The training in progress, looked at again every POLL_S seconds; the whole page reruns when it ends.
    ``quiet`` (a presentation's slide other than the model's): one line saying that it trains, no progress."""
    progress = training.look_at(job)
    if quiet:
        st.info(t("training.on_model_slide"))
        return
    _render_progress(st.container(), progress, job.spec, curves_px)
    st.button(t("training.stop"), key="train_stop", on_click=training.press_stop, args=(job,))


def _render_ask(box: st.delta_generator.DeltaGenerator, spec: WeightSpec) -> None:
    failed, stopped = training.failed(spec), training.stopped(spec)
    if failed is not None:
        box.error(t("training.failed", message=md_escape(failed, limit=200)))
    elif stopped is not None:
        box.warning(t("training.stopped", step=stopped))
    else:
        box.info(t("training.ask", time=t(training.spec_task(spec).page_words.ask)))
    box.button(t("training.train"), key="train_start", type="primary", on_click=training.press_train, args=(spec,))


def _result_line(history: TrainingHistory, task: Task) -> str:
    """Steps, time and accuracy, saying what the accuracy was measured on (``history.evaluation``)."""
    numbers = {
        "steps": history.steps,
        "seconds": f"{history.seconds:.1f}",
        "accuracy": f"{100 * history.accuracy:.1f}",
        "sequences": f"{history.sequences:,}",
        "predictions": f"{history.evaluated:,}",
        **task.result_numbers(),
    }
    return t(f"training.done.{history.evaluation}", **numbers)


def versus_baseline(history: TrainingHistory, baseline: float) -> str:
    """The held-out accuracy against the baseline's (the reviews' bag of characters), in words chosen from the two
    numbers: as well as (within :data:`SEED_SPREAD` points, what another seed changes), better, or worse."""
    right, bag = round(history.accuracy * history.sequences), round(baseline * history.sequences)
    gap = 100 * (right - bag) / history.sequences  # points
    kind = "same" if abs(gap) <= SEED_SPREAD else "above" if gap > 0 else "below"
    return t(
        f"training.versus_bag_{kind}",
        accuracy=f"{100 * history.accuracy:.1f}",
        baseline=f"{100 * baseline:.1f}",
        reviews=f"{abs(right - bag):,}",
        sequences=f"{history.sequences:,}",
    )


def _render_result(
    box: st.delta_generator.DeltaGenerator,
    trained: TrainedModel,
    task: Task,
    config: AttentionConfig,
    curves_px: int = CURVES_PX,
) -> None:
    history = trained.history
    box.success(_result_line(history, task))
    box.caption(t("training.ran_on", device=history.device, seconds=f"{history.seconds:.1f}"))
    failed = history.out_of_memory
    if failed is not None:
        box.warning(t("training.out_of_memory", device=failed.device, **failed.size))
    target = f"{100 * TARGET_ACCURACY:g}"
    schedule = task.page_words.schedule
    if task.recipe.steps is not None and schedule is not None:  # a fixed schedule: no target ends it
        box.caption(t(schedule, steps=history.steps, warmup=task.recipe.warmup_steps))
        if task.baseline is not None:
            box.caption(versus_baseline(history, task.baseline))
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
    vega.draw(box, curves_chart(_curves(history.losses, history.accuracies), training.chart_text(), curves_px))


def render(config: AttentionConfig, link_trains: bool = False, shown: bool = True, slide: bool = False) -> bool:
    """For trained weights: the task, its model, and its training; ``True`` once the model can be shown.

    Other weights: nothing is drawn (a training this session watched is left) and ``True``.

    Args:
        config: the page's valid config.
        link_trains: the link asked for trained weights (:func:`components.training.link_asks_to_train`): train
            without a click.
        shown: draw the task, the training and its curves (``False``: a presentation's slide other than the model's,
            where a training in progress is one line without its progress, and a finished one nothing).
        slide: laid out for a projector (the model's slide): the task beside the training.
    """
    if config.weights != TRAINED:
        training.follow_training(config)
        return True
    task = training.spec_task(config.weight_spec)
    curves_px = SLIDE_CURVES_PX if slide else CURVES_PX
    if shown:
        box = st.container(border=True)
        heading(box, t("training.title", task=t(f"task.{config.task}")))
        explained, outcome = box.columns(2, gap="large") if slide else (box, box)
        _explain(explained, task, config)
    else:
        outcome = st.container()
    found = training.follow_training(config, link_trains)
    if found is None:
        _render_ask(outcome, config.weight_spec)
        return False
    if not isinstance(found, TrainedModel):
        with outcome:
            _watch(found, quiet=not shown, curves_px=curves_px)
        return False
    if shown:
        _render_result(outcome, found, task, config, curves_px)
    return True
