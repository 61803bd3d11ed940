"""Lab 6: time and memory of attention against the sequence length, measured live up to a cap."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from components import cache
from components.i18n import t
from components.labs.charts import Series, Size, Titles, line_chart
from components.labs.common import format_bytes, lab_header, show_chart
from components.labs.measure import Measured, measure_on_click, measured, repeats_slider, show_measurement_notes
from components.nav import render_lab_links
from mha.experiments.complexity import ALL_LENGTHS, LIVE_MAX_LENGTH, extrapolate, peak_bytes
from mha.experiments.isolated import IsolatedMeasurementError, measure_complexity_isolated

__all__ = ["complexity_frame", "plot_frame", "render"]

HEADS = (1, 2, 4, 8)
HEAD_DIMS = (16, 32, 64)
BLOCKS = (16, 32, 64, 128)
CAPS = (256, 512, LIVE_MAX_LENGTH)
REFERENCE_FROM = 64
EXAMPLE_LENGTH = 4096  # the length the note about the cap talks about


@cache.results(ttl=600, max_entries=16)
def complexity_frame(cap: int, num_heads: int, head_dim: int, block: int, repeats: int) -> Measured[pd.DataFrame]:
    """Measured rows up to ``cap`` plus extrapolated rows up to 4096, measured in a child process.

    Columns: ``method, L, ms, ms_low, ms_high, bytes, measured, formula_bytes`` (``ms_low``/``ms_high``:
    the middle half of the rounds, NaN for estimates; ``formula_bytes``: :func:`peak_bytes`, None for sdpa).
    Cached 10 minutes and shared by all sessions, but only when the times followed their work
    (see :func:`mha.experiments.complexity.complexity_breaks`).
    """
    lengths = [length for length in ALL_LENGTHS if length <= cap]
    steady = measure_complexity_isolated(lengths, num_heads, head_dim, block, repeats)
    rows = steady.result + extrapolate(steady.result, ALL_LENGTHS, num_heads, head_dim, block)
    frame = pd.DataFrame(
        {
            "method": [row.method for row in rows],
            "L": [row.length for row in rows],
            "ms": [row.seconds * 1e3 for row in rows],
            "ms_low": [row.low_s * 1e3 if row.low_s is not None else float("nan") for row in rows],
            "ms_high": [row.high_s * 1e3 if row.high_s is not None else float("nan") for row in rows],
            "bytes": [row.peak_bytes for row in rows],
            "measured": [row.measured for row in rows],
            "formula_bytes": [peak_bytes(row.method, row.length, num_heads, head_dim, block) for row in rows],
        }
    )
    return measured(steady, frame.sort_values(["method", "L"], kind="stable").reset_index(drop=True))


def _quadratic_reference(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """c·L² through the full method's longest measured point, drawn from L = 64 up to that point
    (beyond it, the full method's own estimate is exactly this line)."""
    full = frame[(frame["method"] == "full") & frame["measured"]]
    last = full.loc[full["L"].idxmax()]
    lengths = pd.Series([n for n in ALL_LENGTHS if REFERENCE_FROM <= n <= last["L"]], dtype=float)
    return pd.DataFrame(
        {"L": lengths, column: last[column] * (lengths / last["L"]) ** 2, "method": "L²", "estimated": True}
    )


def plot_frame(frame: pd.DataFrame, column: str, spread: tuple[str, str] | None = None) -> pd.DataFrame:
    """Rows to draw for ``column``: measured points solid; each method's estimates dashed, starting
    from its last measured point so that the two pieces join; plus the L² reference. ``spread`` names
    the columns of the measured points' spread, kept on the measured rows only."""
    measured_rows = frame[frame["measured"]]
    estimated = frame[~frame["measured"]]
    joints = measured_rows[measured_rows["method"].isin(estimated["method"])]
    joints = joints.loc[joints.groupby("method")["L"].idxmax()]
    kept = ["L", column, "method", "estimated", *(spread or ())]
    pieces = [
        measured_rows.assign(estimated=False),
        joints.assign(estimated=True, **dict.fromkeys(spread or (), float("nan"))),
        estimated.assign(estimated=True),
    ]
    plotted = pd.concat([piece[kept] for piece in pieces])
    return pd.concat([plotted, _quadratic_reference(frame, column)], ignore_index=True)


def _method_name(method: str) -> str:
    return t(f"lab.complexity.method.{method}")


def _chart(frame: pd.DataFrame, column: str, titles: Titles, spread: tuple[str, str] | None = None) -> alt.Chart:
    plotted = plot_frame(frame, column, spread)
    plotted["series"] = [_method_name(m) for m in plotted["method"]]
    low, high = spread or (None, None)
    return line_chart(
        plotted,
        Series(x="L", y=column, series="series", dashed="estimated", low=low, high=high),
        titles,
        log_x=True,
        log_y=True,
        size=Size(380, 300),
    )


def _render_result(frame: pd.DataFrame, num_heads: int) -> None:
    frame = frame.assign(MiB=frame["bytes"] / 2**20)
    length = t("lab.complexity.axis.length")
    time_titles = Titles(x=length, y=t("lab.complexity.axis.ms"), chart=t("lab.complexity.chart.time"))
    memory_titles = Titles(x=length, y=t("lab.complexity.axis.mib"), chart=t("lab.complexity.chart.memory"))
    show_chart(
        alt.hconcat(_chart(frame, "ms", time_titles, ("ms_low", "ms_high")), _chart(frame, "MiB", memory_titles))
    )
    st.caption(t("lab.complexity.chart_caption"))
    table = pd.DataFrame(
        {
            t("lab.complexity.col.method"): [_method_name(m) for m in frame["method"]],
            "L": frame["L"],
            t("lab.complexity.col.ms"): frame["ms"].map(lambda v: f"{v:.3f}"),
            t("lab.complexity.col.spread"): [
                "—" if pd.isna(low) else f"{low:.3f}–{high:.3f}"
                for low, high in zip(frame["ms_low"], frame["ms_high"], strict=True)
            ],
            t("lab.complexity.col.peak"): frame["bytes"].map(format_bytes),
            t("lab.complexity.col.formula"): frame["formula_bytes"].map(
                lambda b: "—" if pd.isna(b) else format_bytes(b)
            ),
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


def render() -> None:
    """Draw the lab."""
    lab_header("complexity")
    cols = st.columns(5)
    num_heads = int(cols[0].select_slider(t("lab.common.num_heads"), options=HEADS, value=4, key="complexity_heads"))
    head_dim = int(cols[1].select_slider("d_k", options=HEAD_DIMS, value=32, key="complexity_head_dim"))
    block = int(cols[2].select_slider(t("lab.complexity.block"), options=BLOCKS, value=64, key="complexity_block"))
    cap = int(cols[3].select_slider(t("lab.complexity.cap"), options=CAPS, value=LIVE_MAX_LENGTH, key="complexity_cap"))
    repeats = repeats_slider(cols[4], "complexity_repeats")
    big = format_bytes(peak_bytes("full", EXAMPLE_LENGTH, num_heads, head_dim, block))
    note = {"cap": LIVE_MAX_LENGTH, "heads": num_heads, "length": EXAMPLE_LENGTH, "d_k": head_dim, "big": big}
    st.info(t("lab.complexity.cap_note", **note))

    _measure((cap, num_heads, head_dim, block, repeats))
    st.markdown(t("lab.complexity.next"))
    render_lab_links(st, ["flash", "efficient"])


def _measure(settings: tuple[int, int, int, int, int]) -> None:
    """The Measure button and, once pressed, the result for ``settings`` (cap, heads, d_k, block, repeats)."""
    try:
        result = measure_on_click("complexity", settings, lambda: complexity_frame(*settings))
    except IsolatedMeasurementError:
        st.error(t("lab.complexity.failed"))
        return
    if result is not None:
        show_measurement_notes(result, settings[4], _method_name)
        _render_result(result.value, settings[1])
