"""The widgets the sections are made of: a whole-number field that restores its default when emptied, a select
over a config field's choices, and a live control's callback."""

from __future__ import annotations

from collections.abc import Callable, Collection

import streamlit as st

from components.controls.keys import PERSIST, Changed, options
from components.i18n import t
from components.url_params import (
    DEFAULTS,
)

_RESTORED = "_restored_numbers"  # number fields put back to their defaults in this rerun's callbacks


def default_of(key: str) -> object:
    """The value an emptied field gets: its default (``num_kv_heads``: as many as the query heads)."""
    return st.session_state.get("num_heads") if key == "num_kv_heads" else DEFAULTS[key]


def restore_default(key: str) -> None:
    """An emptied number field (or one sent a value outside its range) gets its default back, with a note."""
    if st.session_state.get(key) is None:
        st.session_state[key] = default_of(key)
        st.session_state[_RESTORED] = [*st.session_state.get(_RESTORED, []), key]


def show_restored_numbers(keys: Collection[str]) -> None:
    """Where the page is drawing (its sidebar), the note for each field of ``keys`` put back to its default in this
    rerun's callbacks (the notes of the others wait for their own section)."""
    restored = st.session_state.pop(_RESTORED, [])
    shown = [key for key in restored if key in keys]
    if len(shown) < len(restored):
        st.session_state[_RESTORED] = [key for key in restored if key not in shown]
    for key in shown:
        st.warning(t("input.empty_number", name=key, used=default_of(key)))
        st.session_state[key] = default_of(key)


def int_field(
    key: str, low: int, high: int, help_text: str, disabled: bool = False, changed: Changed | None = None
) -> int | None:
    """The whole-number field ``key`` (label ``controls.<key>``), ``low``..``high``, where the page is drawing.

    It starts empty-able (``value=None``): an emptied field gives ``None`` and
    :func:`restore_default` puts the default back before the next run; then ``changed()``, for a live control.
    """
    return st.number_input(
        t(f"controls.{key}"),
        min_value=low,
        max_value=high,
        step=1,
        value=None,
        key=key,
        on_change=after(changed, restore_default, key),
        disabled=disabled,
        help=help_text,
        persist_state=PERSIST,
    )


def after(changed: Changed | None, action: Callable[..., None] | None = None, *args: object) -> Callable[[], None]:
    """A widget's callback: its own ``action(*args)``, then ``changed()`` for a live control."""

    def callback() -> None:
        if action is not None:
            action(*args)
        if changed is not None:
            changed()

    return callback


def select(key: str, hidden: frozenset[str], **kwargs: object) -> str:
    """The selectbox ``key`` (label ``controls.<key>``) over its config field's choices, or its value when hidden."""
    if key in hidden:
        return st.session_state[key]
    return st.selectbox(t(f"controls.{key}"), options(key), key=key, persist_state=PERSIST, **kwargs)
