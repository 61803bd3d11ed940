"""Cached engine calls for the pages: the model per size and seed, the run and the live check per config.

Everything cached here is shared between sessions and never mutated: the model is
built read-only (``requires_grad_(False)``, eval mode) and keeps no attention of its
own; a run's tensors are inference tensors that the pages only read.
"""

from __future__ import annotations

import streamlit as st
import torch

from mha.config import AttentionConfig
from mha.device import resolve_device
from mha.module import MultiHeadAttention
from mha.pipeline import AttentionRun, build_model, run_attention
from mha.reference import TorchCheck, compare_with_torch

__all__ = ["cached_check", "cached_model", "cached_run"]


@st.cache_resource(max_entries=8, show_spinner=False)
def cached_model(d_model: int, num_heads: int, seed: int, device: str, dtype: str) -> MultiHeadAttention:
    """The seeded model for these sizes, built once per process (``device`` as resolved, e.g. ``"cpu"``)."""
    return build_model(d_model, num_heads, seed, torch.device(device), getattr(torch, dtype))


def _model_for(config: AttentionConfig) -> MultiHeadAttention:
    device = resolve_device(config.device).device
    return cached_model(config.d_model, config.num_heads, config.seed, str(device), config.dtype)


@st.cache_resource(max_entries=16, show_spinner=False)
def cached_run(config: AttentionConfig) -> AttentionRun:
    """The traced forward pass of ``config`` (raises ``ConfigError`` for an empty or over-long text)."""
    return run_attention(config, _model_for(config))


@st.cache_resource(max_entries=16, show_spinner=False)
def cached_check(config: AttentionConfig) -> TorchCheck:
    """The page's run compared with ``torch.nn.MultiheadAttention`` holding the same weights."""
    run = cached_run(config)
    return compare_with_torch(_model_for(config), run.x, run.x, run.x, run.mask, run.trace.output, run.trace.weights)
