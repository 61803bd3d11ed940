"""Vega-Lite charts on the page through Streamlit's public API, their data as compact Arrow tables.

``st.vega_lite_chart`` takes a spec whose top-level ``datasets`` hold "anything ``st.dataframe``
takes"; a ``pyarrow.Table`` is one, and Streamlit serialises it to the Arrow IPC stream the
browser reads. The tables come from :func:`components.frames.arrow_table` (no pandas metadata,
small integer columns, NaN as null): the same bytes as serialising them here, for about 0.05 ms
more a chart than handing Streamlit ready-made IPC bytes, which only its Altair integration
does (docs/PERFORMANCE.md).
"""

from __future__ import annotations

from typing import Any, Literal

import streamlit as st

from components import frames

__all__ = ["draw"]


def draw(
    box: st.delta_generator.DeltaGenerator, spec: dict[str, Any], width: Literal["content", "stretch"] = "content"
) -> None:
    """Send ``spec``, whose ``datasets`` are DataFrames under their names, to ``box`` (Streamlit's theme off)."""
    datasets = {name: frames.arrow_table(frame) for name, frame in spec["datasets"].items()}
    box.vega_lite_chart({**spec, "datasets": datasets}, theme=None, width=width)
