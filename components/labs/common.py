"""Pieces every lab page shares: the header with its explanation, token input, charts, numbers."""

from __future__ import annotations

import altair as alt
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.i18n import t
from components.labs.charts import styled
from components.safe_text import md_escape
from components.units import format_bytes
from mha.tokens import tokenize

__all__ = ["format_bytes", "lab_header", "show_chart", "show_verdict", "table_height", "token_input"]


#: A lab starts nearer the window's top than Streamlit's default 6rem, so that its first chart begins on a laptop's
#: first screen (1280 × 720). Constant CSS only, scoped to the main area.
LAB_TOP_CSS = '<style>[data-testid="stMainBlockContainer"] { padding-top: 2.5rem; }</style>'


def lab_header(lab: str) -> None:
    """Title, one-line question and the short explanation of lab ``lab`` (message keys ``lab.<lab>.*``)."""
    st.html(LAB_TOP_CSS)
    st.title(t(f"lab.{lab}.title"))
    st.markdown(t(f"lab.{lab}.intro"))
    with st.expander(t("lab.common.explain"), expanded=False):
        st.markdown(t(f"lab.{lab}.explain"))


def token_input(label: str, default: str, key: str, max_tokens: int) -> list[str] | None:
    """A text box tokenised like the playground; ``None`` (after an ``st.error``) when empty or too long."""
    text = st.text_input(label, value=default, key=key, max_chars=400)
    tokens = tokenize(text)
    if not tokens:
        st.error(t("lab.common.tokens_empty"))
        return None
    if len(tokens) > max_tokens:
        st.error(t("lab.common.tokens_too_many", count=len(tokens), high=max_tokens))
        return None
    seen = "lab.common.token_seen" if len(tokens) == 1 else "lab.common.tokens_seen"
    st.caption(t(seen, count=len(tokens), tokens=md_escape(" · ".join(tokens), limit=300)))
    return tokens


def show_verdict(place: DeltaGenerator, check: str, diff: float, tolerance: float) -> bool:
    """Whether two computations gave the same numbers, as the measurement says: a box with ``check`` (what was
    compared) and "max |difference| = 3.1e-07 ≤ 1e-04: the same numbers", green (``st.success``) when ``diff`` is
    within ``tolerance``, else "… > 1e-04: different numbers" in red (``st.error``; a NaN is not within).

    Returns:
        Whether ``diff <= tolerance``.
    """
    same = diff <= tolerance
    verdict = t("lab.common.max_diff_ok" if same else "lab.common.max_diff_bad", diff=diff, tol=tolerance)
    (place.success if same else place.error)(f"{check}  \n{verdict}")
    return same


def show_chart(chart: alt.TopLevelMixin) -> None:
    """Draw an Altair chart at its own size with the labs' large fonts (``theme=None``: Streamlit's theme
    would override them)."""
    st.altair_chart(styled(chart), width="content", theme=None)


def table_height(rows: int, most: int = 20) -> int:
    """Pixels for an ``st.dataframe`` that shows up to ``most`` rows whole (a header and 35 px a row), then scrolls."""
    return 38 + 35 * min(rows, most)
