"""The interface language: the ``lang`` URL parameter, then the selector, then the browser's locale."""

from __future__ import annotations

import streamlit as st

from components.i18n import LANGUAGES, language_from_locale, t, use_language
from components.safe_text import md_escape
from components.url_state import link_value, write_link

__all__ = ["select_language"]

_REMEMBERED = "_lang"  # survives page switches; the widget key "lang" does not


def _initial_language() -> tuple[str, str | None]:
    """Language for a session's first run, and the bad ``lang`` URL value if there was one."""
    requested = link_value("lang")
    if requested in LANGUAGES:
        return requested, None
    return language_from_locale(st.context.locale), requested


def select_language() -> str:
    """Render the language selector in the sidebar (key ``lang``), mirror it to the URL, return it."""
    use_language(None)  # the selector may have changed it: read the session
    bad_value = None
    if "lang" not in st.session_state:
        remembered = st.session_state.get(_REMEMBERED)
        if remembered in LANGUAGES:
            st.session_state["lang"] = remembered
        else:
            st.session_state["lang"], bad_value = _initial_language()
    st.sidebar.selectbox(t("lang.label"), LANGUAGES, key="lang", format_func=lambda code: t(f"lang.{code}", lang=code))
    lang = st.session_state["lang"]
    use_language(lang)
    st.session_state[_REMEMBERED] = lang
    write_link({"lang": lang})
    if bad_value is not None:
        st.sidebar.warning(t("lang.invalid", value=md_escape(bad_value), choices=", ".join(LANGUAGES)))
    return lang
