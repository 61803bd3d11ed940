"""Lab 1: why the scores are divided by √d_k."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from components import cache, check_yourself
from components.i18n import t
from components.labs.charts import SERIES_COLORS, Series, Size, Titles, attention_panels, line_chart
from components.labs.common import lab_header, show_chart, token_input
from mha.experiments.scaling import D_K_VALUES, SCALING_MODES, example_weights, scaling_stats
from mha.lab_questions import scaling_questions
from mha.tokens import token_labels

__all__ = ["render", "stats_frame"]

DEFAULT_TEXT = "The cat sat on the mat because it was tired"
MAX_TOKENS = 16
# One colour, one meaning on this page: each scaling keeps its colour in every chart; the variance of
# the raw scores (measured and theory) gets colours no scaling uses.
MODE_COLORS = dict(zip(SCALING_MODES, SERIES_COLORS[:3], strict=True))  # scaled, unscaled, temperature
VARIANCE_COLORS = {"measured": SERIES_COLORS[4], "theory": SERIES_COLORS[3]}


def _compared_modes(mode: str) -> list[str]:
    """Always scaled and unscaled; the temperature too when it is chosen."""
    return ["scaled", "unscaled"] + (["temperature"] if mode == "temperature" else [])


def _series_label(mode: str, temperature: float) -> str:
    return t(f"lab.scaling.series.{mode}", tau=temperature)


@cache.results(max_entries=32)
def stats_frame(mode: str, temperature: float) -> pd.DataFrame:
    """The statistics of :func:`scaling_stats` for each of :func:`_compared_modes`.

    Columns: ``mode, d_k, variance_raw, variance_scaled, entropy, max_weight, entropy_uniform``.
    """
    rows = []
    for each in _compared_modes(mode):
        rows += [{"mode": each, **vars(stats)} for stats in scaling_stats(each, temperature)]
    return pd.DataFrame(rows)


@cache.results(max_entries=32)
def _example_weights(tokens: tuple[str, ...], d_k: int, mode: str, temperature: float) -> np.ndarray:
    """(P, L, L): one weight matrix per compared mode."""
    return np.stack([example_weights(tokens, d_k, each, temperature).numpy() for each in _compared_modes(mode)])


def render() -> None:
    """Draw the lab."""
    lab_header("scaling")
    left, middle, right = st.columns(3)
    mode = left.radio(
        t("lab.scaling.mode"), SCALING_MODES, key="scaling_mode", format_func=lambda m: t(f"lab.scaling.mode.{m}")
    )
    temperature = middle.slider(
        t("lab.scaling.temperature"),
        min_value=0.25,
        max_value=4.0,
        value=2.0,
        step=0.25,
        key="scaling_temperature",
        disabled=mode != "temperature",
        help=t("lab.scaling.temperature_help"),
    )
    d_k = right.select_slider(t("lab.scaling.d_k"), options=D_K_VALUES, value=64, key="scaling_d_k")
    frame = stats_frame(mode, float(temperature))
    frame["setting"] = [_series_label(each, temperature) for each in frame["mode"]]
    chosen = frame[(frame["mode"] == mode) & (frame["d_k"] == d_k)].iloc[0]

    raw = frame[frame["mode"] == "scaled"][["d_k", "variance_raw"]]
    variance = pd.concat(
        [
            raw.assign(series=t("lab.scaling.series.measured"), value=raw["variance_raw"], theory=False),
            raw.assign(series=t("lab.scaling.series.theory"), value=raw["d_k"].astype(float), theory=True),
        ]
    )
    st.subheader(t("lab.scaling.variance_title"))
    cols = st.columns(4)
    cols[0].metric(t("lab.scaling.metric.variance_raw", d_k=d_k), f"{chosen.variance_raw:.1f}")
    cols[1].metric(t("lab.scaling.metric.variance_scaled"), f"{chosen.variance_scaled:.2f}")
    cols[2].metric(
        t("lab.scaling.metric.entropy"),
        f"{chosen.entropy:.2f}",
        help=t("lab.scaling.entropy_help", top=chosen.entropy_uniform),
    )
    cols[3].metric(t("lab.scaling.metric.max_weight"), f"{chosen.max_weight:.2f}")
    st.caption(t("lab.scaling.variance_caption"))
    size = Size(210, 240)  # three side by side, with horizontal axis titles, within a 1280-px screen
    variance_chart = line_chart(
        variance,
        Series(x="d_k", y="value", series="series", dashed="theory"),
        Titles(x="d_k", y=t("lab.scaling.axis.variance"), chart=t("lab.scaling.chart.variance")),
        log_x=True,
        log_y=True,
        size=size,
        colors={t(f"lab.scaling.series.{name}"): color for name, color in VARIANCE_COLORS.items()},
    )
    mode_colors = {_series_label(mode, temperature): MODE_COLORS[mode] for mode in _compared_modes(mode)}
    softmax_charts = [
        line_chart(
            frame,
            Series(x="d_k", y=column, series="setting"),
            Titles(x="d_k", y=t(f"lab.scaling.axis.{column}"), chart=t(f"lab.scaling.chart.{column}")),
            log_x=True,
            size=size,
            colors=mode_colors,
        )
        for column in ("entropy", "max_weight")
    ]
    show_chart(alt.hconcat(variance_chart, *softmax_charts).resolve_scale(color="independent"))
    st.caption(t("lab.scaling.colors_caption"))
    at_d_k = frame[frame["d_k"] == d_k].set_index("mode")
    check_yourself.render_lab(
        "lab1",
        scaling_questions(
            int(d_k),
            mode,
            float(temperature),
            float(chosen.variance_raw),
            {each: float(at_d_k.loc[each, "max_weight"]) for each in ("scaled", "unscaled")},
        ),
    )

    st.subheader(t("lab.scaling.example_title", d_k=d_k))
    tokens = token_input(t("lab.common.text"), DEFAULT_TEXT, "scaling_text", MAX_TOKENS)
    if tokens is None:
        return
    values = _example_weights(tuple(tokens), d_k, mode, float(temperature))  # (P, L, L)
    labels = token_labels(tokens)
    panels = [_series_label(each, temperature) for each in _compared_modes(mode)]
    titles = Titles(x=t("lab.common.key"), y=t("lab.common.query"), color=t("lab.common.weight"))
    show_chart(attention_panels(values, labels, panels, titles, most_per_row=3))
    st.caption(t("lab.scaling.example_caption"))
