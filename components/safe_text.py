"""User text inside Streamlit markdown, shown as text: never as HTML, links, LaTeX or emoji codes."""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable, Sequence

import pandas as pd

__all__ = ["markdown_rows", "markdown_table", "md_escape", "printable"]

_PUNCTUATION = re.compile("([" + re.escape(string.punctuation) + "])")
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})
_SCAN_FACTOR = 8  # look at most this many characters per shown one: a 10 MB link value costs no more than 80 B


def printable(text: str, limit: int = 80) -> str:
    """Drop control and format characters (incl. bidi overrides), fold newlines, cut to ``limit`` characters.

    Only the first ``_SCAN_FACTOR * limit`` characters are looked at, so the cost does not
    grow with the length of the text (a link value can be megabytes long).
    """
    head = text[: _SCAN_FACTOR * limit]
    folded = "".join(" " if ch in "\r\n\t" else ch for ch in head)
    kept = "".join(ch for ch in folded if unicodedata.category(ch) not in _HIDDEN)
    if len(kept) <= limit and len(head) == len(text):
        return kept
    return kept[: limit - 1] + "…"


def md_escape(text: object, limit: int = 80) -> str:
    """``text`` made safe to put inside a markdown string (``st.error``, ``st.markdown``...).

    Every ASCII punctuation mark is backslash-escaped (CommonMark allows that for all
    of them), which disarms ``<tags>``, ``[links](...)``, ``$latex$``, ``:emoji:`` and
    ``*emphasis*`` alike; control characters are dropped first.
    """
    return _PUNCTUATION.sub(r"\\\1", printable(str(text), limit))


def markdown_table(frame: pd.DataFrame, index: bool = True) -> str:
    """``frame`` as a GitHub-flavoured markdown table, its index in the first column (under an empty header) unless
    ``index`` is false.

    Every cell is markdown: escape user text in it with :func:`md_escape` first. A table of numbers that
    change with the weights is drawn this way rather than with ``st.table``, which renders every cell with
    Streamlit's Markdown renderer (the browser's time for every redraw of the page).
    """
    header = [*([""] if index else []), *(str(column) for column in frame.columns)]
    return markdown_rows(header, frame.itertuples(index=index))  # ([index,] *values) per row


def markdown_rows(header: Sequence[object], rows: Iterable[Sequence[object]]) -> str:
    """A GitHub-flavoured markdown table of ``header`` and ``rows`` (its cells are markdown: see
    :func:`markdown_table`)."""
    lines = [[str(cell) for cell in header], ["---"] * len(header), *([str(cell) for cell in row] for row in rows)]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)
