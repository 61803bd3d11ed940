"""What every page does first: thread cap, language, page config, navigation."""

from __future__ import annotations

import streamlit as st

from components.i18n import restore_choices, t
from components.language import select_language
from components.nav import render_nav
from mha.threads import apply_thread_cap

__all__ = ["setup_page"]


def setup_page(title_key: str, icon: str, initial_sidebar_state: str = "auto") -> str:
    """Set up a page of the app and return the session's language (``"en"`` or ``"zh"``).

    The language is resolved before ``st.set_page_config`` so that the browser tab's
    title is in that language from the first run.
    """
    apply_thread_cap()
    lang = select_language()
    restore_choices()  # the first run after a language switch: the choice widgets' labels map back to options
    st.set_page_config(
        page_title=t(title_key), page_icon=icon, layout="wide", initial_sidebar_state=initial_sidebar_state
    )
    render_nav()
    return lang
