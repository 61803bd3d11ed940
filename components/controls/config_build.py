"""Choices -> a config that runs: the first problem shown as a translated message, a checkpoint that cannot be made here
replaced by random weights."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import streamlit as st

from components import runner
from components.controls.keys import Choices, nearest_divisors
from components.i18n import t
from components.locale import CATALOG
from components.safe_text import md_escape
from mha.config import PRETRAINED, RANDOM, AttentionConfig, ConfigError, WeightSpec
from mha.sources import SourceUnavailableError


def error_message(error: ConfigError) -> str:
    """A translated message for a :class:`ConfigError`, naming the values and what to change."""
    params = dict(error.params)
    if error.code == "not_divisible":
        d_model, num_heads = int(params["d_model"]), int(params["num_heads"])
        below, above = nearest_divisors(d_model, num_heads)
        suggestions = t("error.or").join(str(h) for h in (below, above) if h is not None)
        params.update(ratio=f"{d_model / num_heads:.2f}", suggestions=suggestions)
    key = f"error.{error.field}.{error.code}"
    if key not in CATALOG:
        return t("error.generic", name=error.field, message=md_escape(str(error), limit=200))
    if "value" in params:
        params["value"] = md_escape(params["value"], limit=40)
    return t(key, **params)


def source_message(error: SourceUnavailableError) -> str:
    """A translated message for a weight source that cannot be made here, saying what to do."""
    params = {name: md_escape(value, limit=80) for name, value in error.params.items()}
    key = f"source.{error.code}"
    if key not in CATALOG:
        return t("source.generic", message=md_escape(str(error), limit=200))
    return t(key, **params)


def build_config(choices: Choices) -> AttentionConfig | None:
    """Validate the choices; show the problem with ``st.error``; the config when it can run.

    A weight source that cannot be made here (a checkpoint offline, say) is reported and the
    page goes on with random weights (:func:`weights_made_here`).
    """
    try:
        config = AttentionConfig(**choices)
    except ConfigError as error:
        st.error(error_message(error))
        return None
    return weights_made_here(config, runner.cached_sizes)


def weights_made_here(config: AttentionConfig | None, make: Callable[[WeightSpec], object]) -> AttentionConfig | None:
    """``config`` when its weights can be made here, else the reason shown and ``config`` with random weights.

    The one rule for a checkpoint that cannot be made here (the page's config, its loading, the labs' session
    layer): ``make(config.weight_spec)`` (its sizes, or the loaded source) raises
    :class:`~mha.sources.SourceUnavailableError`; other weights are not asked. ``None`` stays ``None``, and so
    does a config whose own sizes or text do not run with random weights either (the reason shown).
    """
    if config is None or config.weights != PRETRAINED:
        return config
    try:
        make(config.weight_spec)
    except SourceUnavailableError as error:
        st.error(source_message(error))
    else:
        return config
    try:
        return dataclasses.replace(config, weights=RANDOM)
    except ConfigError as error:  # the learner's own sizes or text do not run either
        st.error(error_message(error))
        return None
