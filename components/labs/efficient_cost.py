"""Lab 14, cost part: time and peak memory against L behind the Measure button, measured in a child process:
softmax against linear attention (equal multiply-adds at L = d; the measured crossover is where the times put it),
dense, dense masked and block-skipping sparse."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from components import cache
from components.i18n import t
from components.labs.charts import Series, Size, Titles, line_chart
from components.labs.common import format_bytes, show_chart
from components.labs.measure import (
    Measured,
    measure_on_click,
    measured,
    measurement_progress,
    repeats_slider,
    show_measurement_notes,
)
from mha.experiments.efficient_cost import (
    LENGTHS,
    LINEAR_METHODS,
    LIVE_MAX_LENGTH,
    SPARSE_METHODS,
    EfficientRow,
    crossover,
    measure_efficient_isolated,
)
from mha.experiments.isolated import IsolatedMeasurementError
from mha.experiments.timing import MEASURE_ATTEMPTS

__all__ = ["cost_frame", "mask_saving", "render"]

HEAD_DIMS = (32, 64)
BLOCKS = (32, 64)
CAPS = (512, 1024, LIVE_MAX_LENGTH)


@cache.results(ttl=600, max_entries=16)
def cost_frame(cap: int, head_dim: int, block: int, repeats: int) -> Measured[tuple[EfficientRow, ...]]:
    """Every method from L = 32 up to ``cap``, one head, measured in a child process (kept 10 minutes and shared,
    only when the times followed their work); a progress bar says which part it measures."""
    lengths = [length for length in LENGTHS if length <= cap]
    with measurement_progress(t("lab.efficient.progress.start"), _progress_text) as progress:
        steady = measure_efficient_isolated(lengths, 1, head_dim, block, repeats, progress=progress)
    return measured(steady, tuple(steady.result))


def _progress_text(part: str, length: int, done: int, total: int, attempt: int) -> str:
    """A progress report of the measuring child in words: how many parts are done, the one it measures now, and
    which attempt it is when the times were measured again."""
    text = t(f"lab.efficient.progress.{part}", length=length, done=done, total=total)
    if attempt > 1:
        text += " " + t("lab.efficient.progress.again", attempt=attempt, attempts=MEASURE_ATTEMPTS)
    return text


def _method_name(method: str) -> str:
    return t(f"lab.efficient.method.{method}")


def _frame(rows: tuple[EfficientRow, ...]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "method": [row.method for row in rows],
            "series": [_method_name(row.method) for row in rows],
            "L": [row.length for row in rows],
            "ms": [row.seconds * 1e3 for row in rows],
            "ms_low": [row.low_s * 1e3 for row in rows],
            "ms_high": [row.high_s * 1e3 for row in rows],
            "MiB": [row.peak_bytes / 2**20 for row in rows],
            "bytes": [row.peak_bytes for row in rows],
        }
    )


def _charts(frame: pd.DataFrame, methods: tuple[str, ...], title: str) -> None:
    chosen = frame[frame["method"].isin(methods)]
    length = t("lab.efficient.axis.length")
    size = Size(380, 280)
    time_chart = line_chart(
        chosen,
        Series(x="L", y="ms", series="series", low="ms_low", high="ms_high"),
        Titles(x=length, y=t("lab.efficient.axis.ms"), chart=t("lab.efficient.chart.time", what=title)),
        log_x=True,
        log_y=True,
        size=size,
    )
    memory_chart = line_chart(
        chosen,
        Series(x="L", y="MiB", series="series"),
        Titles(x=length, y=t("lab.efficient.axis.mib"), chart=t("lab.efficient.chart.memory", what=title)),
        log_x=True,
        log_y=True,
        size=size,
    )
    show_chart(alt.hconcat(time_chart, memory_chart))


def _crossing(rows: tuple[EfficientRow, ...], dearer: str, cheaper: str, longest: int) -> str:
    """One sentence per measure: from which measured L the cheaper method stays cheaper, or that it did not."""
    parts = []
    for column, what in (("seconds", "time"), ("peak_bytes", "memory")):
        found = crossover(rows, dearer, cheaper, column)
        key = "lab.efficient.crossing" if found is not None else "lab.efficient.no_crossing"
        parts.append(
            t(
                key,
                what=t(f"lab.efficient.what.{what}"),
                cheaper=_method_name(cheaper),
                dearer=_method_name(dearer),
                length=found,
                longest=longest,
            )
        )
    return " ".join(parts)


def mask_saving(dense_bytes: float, masked_bytes: float, dense_ms: float, masked_ms: float) -> str:
    """The message key for what the mask saved against the dense run, chosen from the measured numbers: nothing,
    memory, time or both (less is a saving; equal is not)."""
    memory, time = masked_bytes < dense_bytes, masked_ms < dense_ms
    saved = "both" if memory and time else "memory" if memory else "time" if time else "nothing"
    return f"lab.efficient.mask.{saved}"


def _render_result(rows: tuple[EfficientRow, ...], head_dim: int) -> None:
    frame = _frame(rows)
    longest = int(frame["L"].max())
    _charts(frame, LINEAR_METHODS, t("lab.efficient.chart.linear"))
    st.markdown(t("lab.efficient.linear_summary", d=head_dim) + " " + _crossing(rows, "softmax", "linear", longest))
    _charts(frame, SPARSE_METHODS, t("lab.efficient.chart.sparse"))
    at = frame[frame["L"] == longest].set_index("method")
    saved = mask_saving(at.loc["dense", "bytes"], at.loc["dense_masked", "bytes"], at.loc["dense", "ms"],
                        at.loc["dense_masked", "ms"])  # fmt: skip
    st.markdown(
        t(
            "lab.efficient.sparse_summary",
            length=longest,
            dense=format_bytes(at.loc["dense", "bytes"]),
            masked=format_bytes(at.loc["dense_masked", "bytes"]),
            sparse=format_bytes(at.loc["block_sparse", "bytes"]),
            dense_ms=at.loc["dense", "ms"],
            masked_ms=at.loc["dense_masked", "ms"],
            sparse_ms=at.loc["block_sparse", "ms"],
        )
        + " "
        + t(saved)
        + " "
        + _crossing(rows, "dense_masked", "block_sparse", longest)
    )
    st.caption(t("lab.efficient.chart_caption"))
    table = pd.DataFrame(
        {
            t("lab.efficient.col.method"): frame["series"],
            "L": frame["L"],
            t("lab.efficient.col.ms"): frame["ms"].map(lambda v: f"{v:.3f}"),
            t("lab.efficient.col.spread"): [
                f"{low:.3f}–{high:.3f}" for low, high in zip(frame["ms_low"], frame["ms_high"], strict=True)
            ],
            t("lab.efficient.col.peak"): frame["bytes"].map(format_bytes),
        }
    )
    with st.expander(t("lab.efficient.table_title")):
        st.dataframe(table, hide_index=True)


def render() -> None:
    """The Measure section."""
    st.subheader(t("lab.efficient.cost_title"))
    cols = st.columns(4)
    head_dim = int(cols[0].select_slider("d", options=HEAD_DIMS, value=64, key="efficient_head_dim"))
    block = int(cols[1].select_slider(t("lab.efficient.block_b"), options=BLOCKS, value=64, key="efficient_cost_block"))
    cap = int(cols[2].select_slider(t("lab.efficient.cap"), options=CAPS, value=LIVE_MAX_LENGTH, key="efficient_cap"))
    repeats = repeats_slider(cols[3], "efficient_repeats")
    st.caption(t("lab.efficient.cost_note", cap=LIVE_MAX_LENGTH))
    settings = (cap, head_dim, block, repeats)
    try:
        result = measure_on_click("efficient", settings, lambda: cost_frame(*settings))
    except IsolatedMeasurementError:
        st.error(t("lab.efficient.failed"))
        return
    if result is not None:
        show_measurement_notes(result, repeats, _method_name)
        _render_result(result.value, head_dim)
