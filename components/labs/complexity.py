"""Lab 6: time and memory of attention against the sequence length, measured live up to a cap."""

from __future__ import annotations

import time

import altair as alt
import pandas as pd
import streamlit as st

from components.i18n import t
from components.labs.charts import line_chart
from components.labs.common import format_bytes, lab_header, measurement_slot, show_chart
from mha.experiments.complexity import (
    ALL_LENGTHS,
    LIVE_MAX_LENGTH,
    ComplexityRow,
    extrapolate,
    measure_complexity,
    score_bytes,
)

__all__ = ["complexity_frame", "plot_frame", "render"]

HEADS = (1, 2, 4, 8)
HEAD_DIMS = (16, 32, 64)
WINDOWS = (16, 32, 64, 128)
CAPS = (256, 512, LIVE_MAX_LENGTH)
REFERENCE_FROM = 64
MAX_REPEATS = 5


@st.cache_data(ttl=600, max_entries=16, show_spinner=False)
def complexity_frame(cap: int, num_heads: int, head_dim: int, window: int, repeats: int) -> tuple[pd.DataFrame, str]:
    """Measured rows up to ``cap`` plus extrapolated rows up to 4096, and the time of measurement.

    Columns: ``method, L, ms, bytes, measured, formula_bytes``. Cached 10 minutes, shared by all sessions.
    """
    lengths = [length for length in ALL_LENGTHS if length <= cap]
    rows: list[ComplexityRow] = measure_complexity(lengths, num_heads, head_dim, window, repeats)
    rows += extrapolate(rows, ALL_LENGTHS)
    frame = pd.DataFrame(
        {
            "method": [row.method for row in rows],
            "L": [row.length for row in rows],
            "ms": [row.seconds * 1e3 for row in rows],
            "bytes": [row.peak_bytes for row in rows],
            "measured": [row.measured for row in rows],
            "formula_bytes": [score_bytes(row.method, row.length, num_heads, window) for row in rows],
        }
    )
    return frame.sort_values(["method", "L"], kind="stable").reset_index(drop=True), time.strftime("%H:%M:%S")


def _quadratic_reference(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """c·L² through the full method's longest measured point, drawn from L = 64 up to that point
    (beyond it, the full method's own estimate is exactly this line)."""
    full = frame[(frame["method"] == "full") & frame["measured"]]
    last = full.loc[full["L"].idxmax()]
    lengths = pd.Series([n for n in ALL_LENGTHS if REFERENCE_FROM <= n <= last["L"]], dtype=float)
    return pd.DataFrame(
        {"L": lengths, column: last[column] * (lengths / last["L"]) ** 2, "method": "L²", "estimated": True}
    )


def plot_frame(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """Rows to draw for ``column``: measured points solid; each method's estimates dashed, starting
    from its last measured point so that the two pieces join; plus the L² reference."""
    measured = frame[frame["measured"]]
    estimated = frame[~frame["measured"]]
    joints = measured[measured["method"].isin(estimated["method"])]
    joints = joints.loc[joints.groupby("method")["L"].idxmax()]
    pieces = [
        measured.assign(estimated=False),
        joints.assign(estimated=True),
        estimated.assign(estimated=True),
    ]
    plotted = pd.concat([piece[["L", column, "method", "estimated"]] for piece in pieces])
    return pd.concat([plotted, _quadratic_reference(frame, column)], ignore_index=True)


def _chart(frame: pd.DataFrame, column: str, y_title: str, title: str) -> alt.Chart:
    plotted = plot_frame(frame, column)
    plotted["series"] = [t(f"lab.complexity.method.{m}") for m in plotted["method"]]
    return line_chart(
        plotted,
        x="L",
        y=column,
        series="series",
        dashed="estimated",
        x_title=t("lab.complexity.axis.length"),
        y_title=y_title,
        series_title="",
        log_x=True,
        log_y=True,
        width=380,
        height=300,
        title=title,
    )


def render() -> None:
    """Draw the lab."""
    lab_header("complexity")
    cols = st.columns(5)
    num_heads = cols[0].select_slider(t("lab.common.num_heads"), options=HEADS, value=4, key="complexity_heads")
    head_dim = cols[1].select_slider("d_k", options=HEAD_DIMS, value=32, key="complexity_head_dim")
    window = cols[2].select_slider(t("lab.complexity.window"), options=WINDOWS, value=64, key="complexity_window")
    cap = cols[3].select_slider(t("lab.complexity.cap"), options=CAPS, value=LIVE_MAX_LENGTH, key="complexity_cap")
    repeats = cols[4].slider(t("lab.loop.repeats"), 1, MAX_REPEATS, 3, key="complexity_repeats")
    st.info(t("lab.complexity.cap_note", cap=LIVE_MAX_LENGTH, big=format_bytes(2 * 8 * 4096 * 4096 * 4)))

    settings = (int(cap), int(num_heads), int(head_dim), int(window), int(repeats))
    if st.button(t("lab.loop.measure"), key="complexity_measure", type="primary"):
        st.session_state["complexity_measured"] = settings
    if st.session_state.get("complexity_measured") != settings:
        st.info(t("lab.complexity.press"))
        return
    with measurement_slot() as free:
        if not free:
            return
        with st.spinner(t("lab.loop.measuring")):
            frame, measured_at = complexity_frame(*settings)
    st.caption(t("lab.common.measured_at", time=measured_at))

    frame["MiB"] = frame["bytes"] / 2**20
    show_chart(
        alt.hconcat(
            _chart(frame, "ms", t("lab.complexity.axis.ms"), t("lab.complexity.chart.time")),
            _chart(frame, "MiB", t("lab.complexity.axis.mib"), t("lab.complexity.chart.memory")),
        )
    )
    st.caption(t("lab.complexity.chart_caption"))

    table = pd.DataFrame(
        {
            t("lab.complexity.col.method"): [t(f"lab.complexity.method.{m}") for m in frame["method"]],
            "L": frame["L"],
            t("lab.complexity.col.ms"): frame["ms"].map(lambda v: f"{v:.3f}"),
            t("lab.complexity.col.peak"): frame["bytes"].map(format_bytes),
            t("lab.complexity.col.formula"): frame["formula_bytes"].map(format_bytes),
            t("lab.complexity.col.source"): frame["measured"].map(
                lambda m: t("lab.complexity.measured" if m else "lab.complexity.estimated")
            ),
        }
    )
    with st.expander(t("lab.complexity.table_title")):
        st.dataframe(table, hide_index=True)
    full = frame[(frame["method"] == "full") & frame["measured"]].set_index("L")
    if len(full) >= 2:
        longest = full.index.max()
        st.markdown(
            t(
                "lab.complexity.summary",
                short=longest // 2,
                long=longest,
                time_ratio=full.loc[longest, "ms"] / full.loc[longest // 2, "ms"],
                memory_ratio=full.loc[longest, "bytes"] / full.loc[longest // 2, "bytes"],
            )
        )
