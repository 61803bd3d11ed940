"""The one place that caches engine work for every session: Streamlit's caches, keyed the project's way.

Two decorators, each Streamlit's own with the hashing the project's frozen records need:

- :func:`shared` (``st.cache_resource``): one object for every session, never copied -- sources, runs, checks.
  What it returns is read-only (models in eval mode with ``requires_grad_(False)``, inference tensors, frozen
  records), so sessions can share it.
- :func:`results` (``st.cache_data``): a value each caller gets its own copy of -- a lab's tables and numbers.

A config, a spec or an upload is a frozen dataclass of plain values: its repr names it. Streamlit's own hashing
walks the dataclass field by field, several calls per run; hashing the repr is much cheaper.
An upload's repr is its file's SHA-256 (its pixels are left out: the same file, the same pixels).
``tests/test_architecture.py`` checks that no other module calls Streamlit's cache decorators.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from mha.config import AttentionConfig, WeightSpec
from mha.vision.upload import Upload

__all__ = ["HASH_KEYS", "results", "shared"]

HASH_KEYS: dict[type, Callable[[Any], str]] = {AttentionConfig: repr, WeightSpec: repr, Upload: repr}

F = TypeVar("F", bound=Callable[..., Any])


def shared(max_entries: int, ttl: float | None = None) -> Callable[[F], F]:
    """``st.cache_resource`` with the project's hash keys and no spinner: one result for every session, shared."""
    return st.cache_resource(max_entries=max_entries, ttl=ttl, show_spinner=False, hash_funcs=HASH_KEYS)


def results(max_entries: int, ttl: float | None = None) -> Callable[[F], F]:
    """``st.cache_data`` with the project's hash keys and no spinner: each caller gets a copy of the result."""
    return st.cache_data(max_entries=max_entries, ttl=ttl, show_spinner=False, hash_funcs=HASH_KEYS)
