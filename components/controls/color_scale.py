"""How attention weights are coloured: the ``color_scale`` control, in the link."""

from __future__ import annotations

import streamlit as st

from components.controls.keys import PERSIST
from components.heatmap import COLOR_SCALES
from components.i18n import t
from components.url_params import (
    to_query_params,
)
from components.url_state import write_link


def select_color_scale(hidden: bool = False, inline: bool = False) -> str:
    """How attention weights are coloured (widget key ``color_scale``: ``fixed`` 0-1 or ``stretch``), in the URL.

    With ``hidden`` (teacher mode) no control is drawn: the link's value is used. With ``inline``
    (a slide, beside the head selector) the control goes without its label: its two choices name
    themselves, and the head selector and it fit one line of a 1280 px screen.
    """
    if st.session_state.get("color_scale") not in COLOR_SCALES:
        st.session_state["color_scale"] = COLOR_SCALES[0]
    scale = str(st.session_state["color_scale"])
    if not hidden:
        scale = st.segmented_control(
            t("controls.color_scale"),
            COLOR_SCALES,
            key="color_scale",
            required=True,
            format_func=lambda name: t(f"color_scale.{name}"),
            help=t("controls.color_scale_help"),
            label_visibility="collapsed" if inline else "visible",
            persist_state=PERSIST,
        )
    write_link(to_query_params({"color_scale": scale}))
    return str(scale)
