"""The link: its values copied into the widgets' state (with what had to change), and the values written back."""

from __future__ import annotations

from collections.abc import Collection

import streamlit as st

from components.controls.keys import REVIEW_DEFAULT, TRAINED_SIZES, Choices, device_options
from components.head_picker import HEAD_KEY, move_head
from components.i18n import t
from components.safe_text import md_escape
from components.url_params import (
    DEFAULTS,
    URL_KEYS,
    Problem,
    parse_query_params,
    to_query_params,
)
from components.url_state import changed_in_link, link_values, write_link
from mha.checkpoints import checkpoint_names
from mha.config import TRAINED

_TRAINED_SIZES_NOTE = "trained_sizes"  # the note (not a problem) when a trained link gets TRAINED_SIZES


def load_url_state() -> list[Problem]:
    """Copy the link's values into the widgets' state; return what had to be changed.

    Only values this session did not write itself are read (see :mod:`components.url_state`).
    Keys still unset get their defaults; the checkpoint defaults to the first on the server's list.
    """
    changed = changed_in_link(URL_KEYS)
    parsed = parse_query_params(changed, device_options(), num_heads=st.session_state.get("num_heads"))
    in_link = link_values()
    problems = parsed.problems + _sizes_for_trained_link(parsed.values, set(in_link))
    if "num_heads" in parsed.values and "num_kv_heads" not in in_link:  # a link without it: as many
        parsed.values["num_kv_heads"] = parsed.values["num_heads"]
    for key, value in parsed.values.items():
        st.session_state[key] = value
    if any(problem.field == "generate" for problem in parsed.problems):  # a page that does not generate never
        write_link(to_query_params({"generate": parsed.values["generate"]}))  # writes it: the used value goes back
    if HEAD_KEY in parsed.values:  # the link chose the head: the page shows it over the browser's pick
        move_head(parsed.values[HEAD_KEY])
    for key in URL_KEYS:
        if key not in st.session_state:
            st.session_state[key] = DEFAULTS[key]
    if st.session_state["num_kv_heads"] is None:  # the default: one key/value head per query head
        st.session_state["num_kv_heads"] = st.session_state["num_heads"]
    if {"weights", "task"} & parsed.values.keys() and "tokens" not in in_link:
        open_on_task_input()
    names = checkpoint_names()
    if names and st.session_state["checkpoint"] not in names:
        st.session_state["checkpoint"] = names[0]
    return problems


def open_on_task_input() -> None:
    """The reviews task opens on a review (:data:`REVIEW_DEFAULT`) where the text is the default sentence; leaving it
    with that review brings the default sentence back. A learner's own text is kept."""
    reviews = st.session_state.get("weights") == TRAINED and st.session_state.get("task") == "reviews"
    text = st.session_state.get("tokens")
    if reviews and text == DEFAULTS["tokens"]:
        st.session_state["tokens"] = REVIEW_DEFAULT
    elif not reviews and text == REVIEW_DEFAULT:
        st.session_state["tokens"] = DEFAULTS["tokens"]


def _sizes_for_trained_link(values: dict[str, object], in_link: Collection[str]) -> list[Problem]:
    """A link that asks for trained weights and leaves out d_model or num_heads gets :data:`TRAINED_SIZES` for
    them, as switching the widget does (``values`` is changed in place), and a note saying which sizes; a size
    the link gives is kept (over the training cap it gets the cap's error)."""
    missing = [key for key in ("d_model", "num_heads") if key not in in_link]
    if values.get("weights") != TRAINED or not missing:
        return []
    for key, size in zip(("d_model", "num_heads"), TRAINED_SIZES, strict=True):
        if key in missing:
            values[key] = size
    used = {key: values.get(key, st.session_state.get(key, DEFAULTS[key])) for key in ("d_model", "num_heads")}
    return [Problem("weights", _TRAINED_SIZES_NOTE, used)]


def show_url_problems(problems: list[Problem]) -> None:
    """One translated warning per link value that was changed, naming the parameter and what was used
    (a note, ``st.info``, for the sizes a trained link was given)."""
    for problem in problems:
        params = {**problem.params, "value": md_escape(problem.params.get("value", ""), limit=40)}
        show = st.info if problem.code == _TRAINED_SIZES_NOTE else st.warning
        show(t(f"url.{problem.code}", name=problem.field, **params))


def sync_url(choices: Choices) -> None:
    """Write the current values to the URL (the link always reproduces the page)."""
    write_link(to_query_params(choices))
