"""User text inside Streamlit markdown, shown as text: never as HTML, links, LaTeX or emoji codes."""

from __future__ import annotations

import re
import string
import unicodedata

__all__ = ["md_escape", "printable"]

_PUNCTUATION = re.compile("([" + re.escape(string.punctuation) + "])")


def printable(text: str, limit: int = 80) -> str:
    """Drop control and format characters (incl. bidi overrides), fold newlines, cut to ``limit`` characters."""
    kept = "".join(ch if ch not in "\r\n\t" else " " for ch in text)
    kept = "".join(ch for ch in kept if unicodedata.category(ch) not in {"Cc", "Cf", "Cs", "Co", "Cn"})
    return kept if len(kept) <= limit else kept[: limit - 1] + "…"


def md_escape(text: object, limit: int = 80) -> str:
    """``text`` made safe to put inside a markdown string (``st.error``, ``st.markdown``...).

    Every ASCII punctuation mark is backslash-escaped (CommonMark allows that for all
    of them), which disarms ``<tags>``, ``[links](...)``, ``$latex$``, ``:emoji:`` and
    ``*emphasis*`` alike; control characters are dropped first.
    """
    return _PUNCTUATION.sub(r"\\\1", printable(str(text), limit))
