"""A pretrained checkpoint on the page: loading it (or saying why not), whether it generates, and what its panels
share (the checkpoint's source, where its own forwards ran). Its panels -- the check against the checkpoint, the
head finder, the pattern search -- are modules of :mod:`components.panels`.
"""

from __future__ import annotations

from typing import cast

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components import runner
from components.controls import weights_made_here
from components.i18n import t
from components.safe_text import md_escape
from mha.config import PRETRAINED, AttentionConfig, WeightSpec
from mha.memory import Placed
from mha.sources import SourceUnavailableError
from mha.sources.checkpoint.source import PretrainedSource

__all__ = ["checkpoint_source", "generates", "use_checkpoint", "where_ran"]


def use_checkpoint(config: AttentionConfig | None) -> AttentionConfig | None:
    """Load the config's checkpoint (a spinner the first time); if it cannot be, say why and use random weights."""
    if config is None or config.weights != PRETRAINED:
        return config

    def load(spec: WeightSpec) -> None:
        with st.spinner(t("pretrained.loading", name=md_escape(config.pretrained_name))):
            runner.cached_source(spec)

    return weights_made_here(config, load)


def checkpoint_source(config: AttentionConfig) -> PretrainedSource:
    """The loaded checkpoint of ``config`` (a checkpoint's page: :func:`use_checkpoint` loaded it)."""
    return cast(PretrainedSource, runner.cached_source(config.weight_spec))


def where_ran(box: DeltaGenerator, placed: Placed[object]) -> None:
    """Where the checkpoint's own forward ran, and why on the CPU where the run's device ran out of memory."""
    failed = placed.out_of_memory
    if failed is not None:
        size = {name: md_escape(str(value), limit=200) for name, value in failed.size.items()}
        box.warning(t("pretrained.out_of_memory", device=failed.device, **size))
    box.caption(t("pretrained.ran_on", device=placed.device))


def generates(config: AttentionConfig) -> bool:
    """Whether ``config``'s weights are a checkpoint that generates (a causal language model with its head); ``False``
    for other weights and where the checkpoint cannot be made here."""
    if config.weights != PRETRAINED:
        return False
    try:
        return bool(getattr(runner.cached_source(config.weight_spec), "generates", False))
    except (SourceUnavailableError, ValueError):
        return False
