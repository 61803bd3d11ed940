"""The controls' values (the session's, one per config field), the sizes of the source they name, and whether the
run reads an image: the one place that decides it."""

from __future__ import annotations

import streamlit as st

from components import runner
from components.controls.keys import Choices, options
from components.url_params import (
    DEFAULTS,
    clean_text,
)
from mha.config import DOMAINS, PRETRAINED, trains_on_images, weight_spec_of
from mha.sources import SourceSizes, SourceUnavailableError
from mha.sources.base import IMAGE


def current_choices() -> Choices:
    """The controls' values by config field, from the session where the widgets keep them (after
    :func:`load_url_state`): a choice that is no longer offered becomes the first offered, and the text is
    cleaned of control characters (the text box says how many)."""
    state = st.session_state
    for key, domain in DOMAINS.items():
        if domain.kind == "choice" and state.get(key) not in options(key):
            state[key] = (options(key) or ("",))[0]
        if domain.kind == "int" and not isinstance(state.get(key), int):  # an emptied field: its default
            state[key] = state["num_heads"] if key == "num_kv_heads" else DEFAULTS[key]
    choices = {key: state[key] for key in DOMAINS}
    choices["tokens"] = clean_text(str(state["tokens"]))[0]
    choices["hub_id"] = str(state["hub_id"]).strip()
    return choices


def session_sizes() -> SourceSizes | None:
    """The sizes of the source the session's choices name, or ``None`` when it cannot be made here (build_config
    says why). Asked before the choices validate (the layer control needs the source's layers): the spec comes from
    the same rule as a config's (:func:`mha.config.weight_spec_of`)."""
    try:
        return runner.cached_sizes(weight_spec_of(st.session_state))
    except (SourceUnavailableError, ValueError):
        return None


def reads_image() -> bool:
    """Whether the session's run reads an image instead of the text: an image task with trained weights, or a
    checkpoint that reads images (a ViT: its ``config.json`` says so, before any weight loads).

    The one place the controls decide it: the image controls replace the text's, the upload reaches the run
    (:func:`current_upload`).
    """
    state = st.session_state
    if state.get("weights") == PRETRAINED:
        sizes = session_sizes()
        return sizes is not None and sizes.modality == IMAGE
    return trains_on_images(state.get("weights"), state.get("task"))
