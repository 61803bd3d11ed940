"""The layer the main page shows in this session, for the labs that examine the learner's own weights (11, 12).

The main page's controls keep their values for the whole session (``st.session_state`` under their URL names,
across pages); a lab reads them here and asks the page's own cache (:func:`components.runner.cached_run`) for
the same run: the same weights (random, trained here, a checkpoint's layer), tokens, mask and layer. A learner
who opens the lab first gets the main page's defaults. This module is the only place where a lab depends on
the main page's choices.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from components import runner
from components.controls import error_message, source_message
from components.i18n import t
from components.nav import HOME_PAGE, entry_script, linkable
from components.safe_text import md_escape
from mha.config import PRETRAINED, RANDOM, TRAINED, AttentionConfig, ConfigError
from mha.pipeline import AttentionRun
from mha.sources import SourceUnavailableError

__all__ = ["session_config", "session_run", "show_layer_caption"]

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
    if config.weights != PRETRAINED:
        return config
    try:
        runner.cached_sizes(config.weight_spec)
    except SourceUnavailableError as error:
        st.error(source_message(error))
        return dataclasses.replace(config, weights=RANDOM)
    return config


def session_run() -> tuple[AttentionConfig, AttentionRun] | None:
    """The main page's config and run for this session (cached and shared like the page's), or ``None`` after an
    error. Cache further work on the config returned here: it is the key of the page's own run (``run.config``
    carries a checkpoint's sizes instead of the learner's, a different key)."""
    config = session_config()
    if config is None:
        return None
    try:
        with st.spinner(t("lab.layer.loading")):
            return config, runner.cached_run(config)
    except ConfigError as error:
        st.error(error_message(error))
        return None


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
