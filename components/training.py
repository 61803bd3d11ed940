"""Trained weights in this session: which training it watches, when it trains, and the sidebar's way in.

The training itself runs in the process-wide :mod:`mha.training.service` (a background thread per training,
shared by every session): this module asks it for the model of the page's spec (:func:`follow_training`) and
keeps what the session did (watching, stopped, failed) in ``st.session_state``. The page's training box
(:mod:`components.panels.training_box`) and timeline (:mod:`components.panels.timeline`) draw it.

A session trains on its first **Train** click, or at once when it opened a link asking for trained weights;
after that, new sizes, seeds or tasks train without a click, until the learner presses **Stop**.
"""

from __future__ import annotations

import uuid

import streamlit as st

from components.i18n import t
from components.training_charts import TrainingChartText
from components.url_state import changed_in_link, link_value
from mha.config import RANDOM, TRAINED, AttentionConfig, WeightSpec
from mha.training.service import Progress, TrainedModel, TrainingJob, training_service
from mha.training.tasks import Message, Task, make_task

__all__ = [
    "TRAINED_LINK",
    "chart_text",
    "failed",
    "follow_training",
    "link_asks_to_train",
    "look_at",
    "press_stop",
    "press_train",
    "render_examples_link",
    "spec_task",
    "stopped",
    "words",
]

#: Where the tutorials' examples lead: a task whose two heads learn two relations, at sizes that train in seconds.
TRAINED_LINK = {"weights": TRAINED, "task": "previous_and_first", "d_model": 64, "num_heads": 2, "mask_type": "none"}
_WATCHER = "_train_watcher"  # this session's name in the service's lists of watchers
_AUTO = "_train_auto"  # this session trains a new spec without a click
_JOB = "_train_job"  # the training this session watches
_STOPPED = "_train_stopped"  # (spec, step): the training this session stopped
_FAILED = "_train_failed"  # (spec, message): the training that failed
_LINK_KEYS = ("weights", "task", "d_model", "num_heads", "seed", "tokens", "tokenizer", "patch", "image")


def _watcher() -> str:
    if _WATCHER not in st.session_state:
        st.session_state[_WATCHER] = uuid.uuid4().hex
    return st.session_state[_WATCHER]


def link_asks_to_train() -> bool:
    """Whether the link just opened (or edited) asks for trained weights (call before the page writes the link)."""
    return bool(changed_in_link(_LINK_KEYS)) and link_value("weights") == TRAINED


def spec_task(spec: WeightSpec) -> Task:
    """The task ``spec`` trains."""
    assert spec.task is not None  # a trained-weights spec names its task
    return make_task(spec.task, spec.text, spec.patch or 2)


def words(message: Message) -> str:
    """A task's :class:`~mha.training.tasks.Message` in the session's language (its message parameters first)."""
    params = {name: words(value) if isinstance(value, Message) else value for name, value in message.params.items()}
    return t(message.key, **params)


def chart_text() -> TrainingChartText:
    """The training charts' words in the session's language."""
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


def _follow(job: TrainingJob | None) -> None:
    """Watch ``job`` (or nothing), leaving the training this session watched before."""
    previous = st.session_state.get(_JOB)
    if previous is not None and previous is not job:
        training_service().leave(previous, _watcher())
    st.session_state[_JOB] = job


def press_train(spec: WeightSpec) -> None:
    """The Train button: train this spec now and the next ones without a click."""
    st.session_state[_AUTO] = True
    for key in (_STOPPED, _FAILED):
        if st.session_state.get(key, (None,))[0] == spec:
            del st.session_state[key]


def press_stop(job: TrainingJob) -> None:
    """The Stop button: stop watching (the training stops unless another session watches it too)."""
    training_service().leave(job, _watcher())
    st.session_state[_JOB] = None
    st.session_state[_AUTO] = False
    st.session_state[_STOPPED] = (job.spec, job.step)


def stopped(spec: WeightSpec) -> int | None:
    """The step this session stopped ``spec``'s training at, or ``None``."""
    found = st.session_state.get(_STOPPED)
    return found[1] if found is not None and found[0] == spec else None


def failed(spec: WeightSpec) -> str | None:
    """Why ``spec``'s training failed in this session, or ``None``."""
    found = st.session_state.get(_FAILED)
    if found is None or found[0] != spec:
        return None
    return "" if found[1] is None else str(found[1])


def follow_training(config: AttentionConfig, link_trains: bool = False) -> TrainedModel | TrainingJob | None:
    """The trained model of the config's spec, the training this session now watches, or ``None`` where the
    learner is asked to train (first visit without a link, or a training this session stopped or saw fail).

    Other weights: ``None``, and a training this session watched is left.

    Args:
        config: the page's valid config.
        link_trains: the link asked for trained weights (:func:`link_asks_to_train`): train without a click.
    """
    if config.weights != TRAINED:
        _follow(None)
        return None
    if link_trains:
        st.session_state[_AUTO] = True
    spec, service = config.weight_spec, training_service()
    trained = service.finished(spec)
    if trained is None:
        job = service.job(spec)
        blocked = stopped(spec) is not None or failed(spec) is not None
        if blocked or (job is None and not st.session_state.get(_AUTO)):  # what this session stopped stays so
            _follow(None)
            return None
        found = service.request(spec, _watcher())  # join the training, or start it
        if not isinstance(found, TrainedModel):
            _follow(found)
            return found
        trained = found
    _follow(None)
    return trained


def look_at(job: TrainingJob) -> Progress:
    """The training's progress; once it has ended (done, failed, stopped) the session records how and the whole
    page runs again."""
    progress = training_service().progress(job)
    if progress.state == "failed":
        st.session_state[_FAILED] = (job.spec, progress.error)
    if progress.state == "stopped":
        st.session_state[_STOPPED] = (job.spec, progress.step)
    if progress.state in ("done", "failed", "stopped"):
        st.session_state[_JOB] = None
        st.rerun()
    return progress


def _use_trained_example() -> None:
    for key, value in TRAINED_LINK.items():
        st.session_state[key] = value
    st.session_state[_AUTO] = True


def render_examples_link(container: st.delta_generator.DeltaGenerator) -> None:
    """Under the tutorials' examples (in the sidebar): such relations are what trained heads learn, and a button to
    see them."""
    if st.session_state.get("weights") != RANDOM:
        return
    container.caption(t("examples.trained"))
    container.button(t("examples.trained_button"), key="trained_example", on_click=_use_trained_example)
