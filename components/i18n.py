"""Two languages, one lookup: ``t("key", **params)`` in English (``en``) or Simplified Chinese (``zh``).

Messages live in ``components/locale/*.py``, one catalog per area of the app, each
mapping a key to ``{"en": ..., "zh": ...}``; a test checks that every key has both.
The language of the current session is ``st.session_state["lang"]`` (set by the
page from the ``lang`` URL parameter, the selector, or the browser's locale).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from components.locale import CATALOG

__all__ = [
    "DEFAULT_LANGUAGE",
    "LANGUAGES",
    "choice_labels",
    "current_language",
    "language_from_locale",
    "restore_choices",
    "t",
    "use_language",
]

LANGUAGES = ("en", "zh")
DEFAULT_LANGUAGE = "en"
# The language of the session's runs, once the page's set-up has chosen it (a run's thread is its session's): the
# page asks for it hundreds of times a run, and a session-state read is ~25 µs.
_chosen: ContextVar[str | None] = ContextVar("chosen_language", default=None)


def language_from_locale(locale: str | None) -> str:
    """``"zh"`` for any Chinese locale (``zh``, ``zh-CN``, ``zh-Hans-TW``...), else English."""
    return "zh" if locale and locale.lower().startswith("zh") else DEFAULT_LANGUAGE


def use_language(lang: str | None) -> None:
    """Remember ``lang`` as the language of this session's runs from here on (``None``: read the session again)."""
    _chosen.set(lang)


def current_language() -> str:
    """The session's language; English outside a Streamlit session."""
    chosen = _chosen.get()
    if chosen is not None:
        return chosen
    if get_script_run_ctx(suppress_warning=True) is None:  # plain Python, unit tests
        return DEFAULT_LANGUAGE
    lang = st.session_state.get("lang", DEFAULT_LANGUAGE)
    return lang if lang in LANGUAGES else DEFAULT_LANGUAGE


Label = Callable[[object, str], str]  # (option, language) -> what a choice widget shows for it
# Choice widgets whose options are shown translated: widget key -> (its options, how each is shown).
_TRANSLATED: dict[str, tuple[tuple[object, ...], Label]] = {}


def choice_labels(key: str, options: Sequence[object], label: Label) -> Callable[[object], str]:
    """The ``format_func`` of the choice widget ``key``: ``label(option, lang)`` in the session's language.

    A selectbox or a radio sends the browser's *label* of the chosen option, and Streamlit maps it back through
    the labels of the run: the first run after a language switch gets the label in the old language, which maps
    to no option. The widget is remembered here so that :func:`restore_choices` can map that label back.
    """
    _TRANSLATED[key] = (tuple(options), label)
    return lambda option: label(option, current_language())


def restore_choices() -> None:
    """Put back the option of every translated choice widget whose value is its label in some language (the first
    run after a language switch: see :func:`choice_labels`). Call it before the widgets' values are used."""
    state = st.session_state
    for key, (options, label) in _TRANSLATED.items():
        value = state.get(key)
        if isinstance(value, list):  # a multiselect: each chosen label
            restored = [_option(item, options, label) for item in value]
            if restored != value:
                state[key] = restored
        elif value is not None and value not in options:
            state[key] = _option(value, options, label)


def _option(value: object, options: tuple[object, ...], label: Label) -> object:
    """The option whose label, in some language, is ``value`` (``value`` itself when it is an option or no label)."""
    if value in options:
        return value
    return next((option for option in options if any(label(option, lang) == value for lang in LANGUAGES)), value)


def t(key: str, lang: str | None = None, **params: object) -> str:
    """The message ``key`` in ``lang`` (default: the session's), formatted with ``params``.

    An unknown key raises ``KeyError``: a missing message is a bug, caught by the tests.
    """
    entry = CATALOG[key]
    text = entry[lang or current_language()]
    return text.format(**params) if params else text
