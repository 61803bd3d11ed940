"""The head steps 1 and 2 show: picked in the browser, told to the server, mirrored to the link (``head``).

``st.session_state["head"]`` (an int, the URL parameter ``head``) is the server's head. The picker
(:func:`components.canvas.head_picker`) switches the charts that follow the head in the browser,
without a run, and tells the server a moment later (:func:`_picked` copies its state into ``head``).
When the server itself chooses the head (:func:`move_head`: a link, the head finder, a head that no
longer exists) the ``moves`` token changes and the page follows it.
"""

from __future__ import annotations

import streamlit as st

from components import canvas
from components.heatmap import Heads
from components.i18n import t
from components.url_params import to_query_params
from components.url_state import write_link

__all__ = ["HEAD_KEY", "PICKER_KEY", "move_head", "picked_on_server", "select_head"]

HEAD_KEY = "head"
PICKER_KEY = "head_picker"  # the picker component's key; its state's ``head`` is the browser's pick
_MOVES = "_head_moves"  # how often the server moved the head in this session
_PICKED = "_head_picked"  # the picker told the server a new head in this run


def move_head(head: int) -> None:
    """Show ``head`` because the server chose it (a link, the head finder): the page takes it over its own pick."""
    st.session_state[HEAD_KEY] = head
    st.session_state[_MOVES] = st.session_state.get(_MOVES, 0) + 1


def _picked() -> None:
    """The picker's head reached the server (its charts already show it): keep it, as an int."""
    state = st.session_state.get(PICKER_KEY)
    head = state.get("head") if hasattr(state, "get") else None
    if isinstance(head, int) and not isinstance(head, bool) and head >= 0:  # the range is checked on use
        st.session_state[HEAD_KEY] = head
        st.session_state[_PICKED] = True


def select_head(num_heads: int, hidden: bool = False, every: bool = True) -> Heads:
    """The head steps 1 and 2 show, with its picker (unless ``hidden``: teacher mode uses the link's).

    Args:
        num_heads: the run's heads; a head out of range becomes head 0.
        hidden: draw no picker.
        every: the charts hold every head, so the picker switches them in the browser; otherwise the
            server draws a picked head (see :func:`picked_on_server`).

    Returns:
        What the charts that follow the head need to know (:class:`components.heatmap.Heads`).
    """
    head = st.session_state.get(HEAD_KEY, 0)
    if not (isinstance(head, int) and 0 <= head < num_heads):
        move_head(0)
    head = int(st.session_state[HEAD_KEY])
    heads = Heads(num_heads, head, str(st.session_state.get(_MOVES, 0)), every)
    if hidden:  # a run that draws no picker follows no pick (see picked_on_server)
        st.session_state.pop(_PICKED, None)
    else:
        canvas.head_picker(PICKER_KEY, t("steps.head", high=num_heads - 1), heads, on_change=_picked)
    write_link(to_query_params({HEAD_KEY: head}))
    return heads


def picked_on_server(heads: Heads) -> bool:
    """Whether this run follows a pick the browser could not draw itself (``heads.every`` false): the charts
    that follow the head must be drawn again, for the new head.

    The picker's message reruns the fragment that draws it; its callback marks the pick, this reads the
    mark once, and a run that draws no picker clears it.
    """
    return bool(st.session_state.pop(_PICKED, False)) and not heads.every
