"""The layer the main page shows in this session, for the labs that examine the learner's own weights (11, 12).

The main page's controls keep their values for the whole session (``st.session_state`` under their URL names,
across pages); a lab reads them here and asks the page's own cache (:func:`components.runner.cached_run`) for
the same run: the same weights (random, trained here, a checkpoint's layer), tokens, mask and layer. A learner
who opens the lab first gets the main page's defaults. This module is the only place where a lab depends on
the main page's choices and its cache: the labs ask it for the run (:func:`layer_run`) and, for trained weights,
the model's answer and what removing a key does to it (:func:`trained_prediction`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import streamlit as st
from torch import Tensor

from components import runner
from components.controls import error_message, weights_made_here
from components.i18n import t
from components.nav import HOME_PAGE, entry_script, linkable
from components.safe_text import md_escape
from mha.config import PRETRAINED, TRAINED, AttentionConfig, ConfigError
from mha.pipeline import AttentionRun
from mha.sources.trained import TrainedSource

__all__ = [
    "Prediction",
    "answer_at_cls",
    "layer_run",
    "session_config",
    "session_run",
    "show_layer_caption",
    "trained_prediction",
]


@dataclass(frozen=True)
class Prediction:
    """A trained model's answer that a query's row reaches and what removing each key does to it (lab 11)."""

    readouts: tuple[str, ...]  # names of the task's outputs scored there
    predicted: tuple[str, ...]  # the token each predicts, nothing removed (a class: its name, see ``classes``)
    probability: tuple[float, ...]
    largest_drop: tuple[float, ...]  # per key: the largest fall of a predicted token's probability
    flips: tuple[bool, ...]  # per key: a prediction changes
    classes: bool = False  # ``predicted`` names classes (``training.class.<name>``), not tokens


_DEFAULT = AttentionConfig()


def session_config() -> AttentionConfig | None:
    """The main page's choices of this session (its defaults where it set none), validated.

    A problem is shown as the main page shows it (``st.error``) and gives ``None``; a checkpoint that cannot
    be loaded here is reported and replaced by random weights, as on the main page.
    """
    state = st.session_state
    names = [field.name for field in dataclasses.fields(_DEFAULT)]
    values = {name: state.get(name, getattr(_DEFAULT, name)) for name in names}
    values["num_kv_heads"] = state.get("num_kv_heads")  # none set: as many as the session's num_heads
    try:
        config = AttentionConfig(**values)
    except ConfigError as error:
        st.error(error_message(error))
        return None
    return weights_made_here(config, runner.cached_sizes)


def session_run() -> tuple[AttentionConfig, AttentionRun] | None:
    """The main page's config and run for this session (cached and shared like the page's), or ``None`` after an
    error. Cache further work on the config returned here: it is the key of the page's own run (``run.config``
    carries a checkpoint's sizes instead of the learner's, a different key)."""
    config = session_config()
    if config is None:
        return None
    try:
        with st.spinner(t("lab.layer.loading")):
            return config, layer_run(config)
    except ConfigError as error:
        st.error(error_message(error))
        return None


def layer_run(config: AttentionConfig) -> AttentionRun:
    """The page's cached run of ``config`` (a config :func:`session_run` returned: the key of the page's own run)."""
    return runner.cached_run(config)


def _trained_source(config: AttentionConfig) -> TrainedSource | None:
    """The config's trained source (the page's cached one), or ``None`` for other weights."""
    if config.weights != TRAINED:
        return None
    source = runner.cached_source(config.weight_spec)
    return source if isinstance(source, TrainedSource) else None


def answer_at_cls(config: AttentionConfig) -> bool:
    """Whether the config's trained model reads its answer at [CLS] (a classifier task: the reviews, the digits)."""
    source = _trained_source(config)
    return source is not None and source.task.answer_at_cls


def trained_prediction(config: AttentionConfig, query: int, deltas: Tensor) -> Prediction | None:
    """The trained model's answer that ``query``'s row reaches and each key's effect on it, removed by ``deltas``
    ((L, D): the change of that row of the layer's output per key); ``None`` for other weights, an image, or a
    row that reaches no scored answer (:meth:`mha.sources.trained.TrainedSource.key_effects`)."""
    source = _trained_source(config)
    if source is None:
        return None
    run = layer_run(config)
    effects = source.key_effects(config, run.mask, query, deltas, run.device.device)
    if effects is None:
        return None
    task, scored = source.task, effects.readouts
    names = task.vocab if task.readout_classes is None else task.readout_classes
    return Prediction(
        readouts=tuple(task.outputs[r] for r in scored),
        predicted=tuple(names[int(effects.predicted[r])] for r in scored),
        probability=tuple(float(effects.probability[r]) for r in scored),
        largest_drop=tuple(float(v) for v in effects.largest_drop),
        flips=tuple(bool(v) for v in effects.any_flip),
        classes=task.readout_classes is not None,
    )


def show_layer_caption(run: AttentionRun) -> None:
    """One line naming the layer the lab examines, the main page's text (read-only), and a link back to change them."""
    config = run.config
    if run.source_kind == PRETRAINED:
        source = t("lab.layer.source.pretrained", name=md_escape(config.checkpoint, limit=60))
    elif run.source_kind == TRAINED:
        source = t("lab.layer.source.trained", task=t(f"task.{config.task}"))
    else:
        source = t("lab.layer.source.random", seed=config.seed)
    st.caption(
        t(
            "lab.layer.caption",
            source=source,
            d_model=run.d_model,
            heads=run.num_heads,
            layer=run.layer,
            layers=run.num_layers,
            count=len(run.tokens),
            mask=t(f"mask.{config.mask_type}"),
        )
    )
    st.text_input(t("lab.layer.text"), value=config.tokens, disabled=True, help=t("lab.layer.text_help"))
    if linkable(HOME_PAGE, entry_script()):
        st.page_link(HOME_PAGE, label=t("lab.layer.change"), icon=":material/tune:")
