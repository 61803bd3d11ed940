"""Lab 8: attention patterns made by hand-written W_q and W_k over positional encodings."""

from __future__ import annotations

import numpy as np
import streamlit as st

from components import cache
from components.i18n import t
from components.labs.charts import Grid, Titles, attention_panels, heatmap, matrix_frame
from components.labs.common import lab_header, show_chart
from mha.experiments.sculpt import PATTERNS, pattern_projection, run_sculpted

__all__ = ["render"]

D_MODEL = 64
D_K = D_MODEL // len(PATTERNS)
FEATURE_CELL = 12  # px: the 64 feature columns of W_q and W_k (labels 0..63) within a 1280-px screen


@cache.results(max_entries=64)
def _weights(length: int, sharpness: float, causal: bool) -> np.ndarray:
    """(4, L, L): one weight matrix per sculpted head."""
    return run_sculpted(length, D_MODEL, sharpness, causal).weights[0].numpy()


def render() -> None:
    """Draw the lab."""
    lab_header("sculpt")
    cols = st.columns(3)
    length = cols[0].slider(t("lab.sculpt.length"), 4, 24, 10, key="sculpt_length")
    sharpness = cols[1].slider(
        t("lab.sculpt.sharpness"), 0.0, 32.0, 12.0, 1.0, key="sculpt_sharpness", help=t("lab.sculpt.sharpness_help")
    )
    causal = cols[2].toggle(t("lab.sculpt.causal"), value=False, key="sculpt_causal")

    weights = _weights(int(length), float(sharpness), bool(causal))
    positions = [str(i) for i in range(int(length))]
    names = [t(f"lab.sculpt.pattern.{p}") for p in PATTERNS]
    st.subheader(t("lab.sculpt.weights_title"))
    titles = Titles(x=t("lab.sculpt.axis.key"), y=t("lab.sculpt.axis.query"), color=t("lab.common.weight"))
    show_chart(attention_panels(weights, positions, names, titles, most_per_row=4))

    st.subheader(t("lab.sculpt.recipe_title"))
    pattern = st.segmented_control(
        t("lab.sculpt.choose"),
        PATTERNS,
        default="previous",
        key="sculpt_pattern",
        format_func=lambda p: t(f"lab.sculpt.pattern.{p}"),
    )
    pattern = "previous" if pattern is None else pattern
    st.markdown(t(f"lab.sculpt.recipe.{pattern}"))
    piece = pattern_projection(pattern, D_K, D_MODEL, float(sharpness))
    rows = [str(i) for i in range(D_K)]
    features = [str(j) for j in range(D_MODEL)]
    titles = Titles(
        x=t("lab.sculpt.axis.pe_feature"), y=t("lab.sculpt.axis.head_feature"), color=t("lab.sculpt.axis.entry")
    )
    for name in ("W_q", "W_k"):  # separate colour scales: W_q carries the sharpness, W_k is 0 or 1
        panel = t(f"lab.sculpt.panel.{name.lower()}")
        grid = Grid(rows, features, [panel], per_row=1, cell=FEATURE_CELL)
        show_chart(
            heatmap(matrix_frame(piece[name].numpy()[None], rows, features, [panel]), titles, grid, diverging=True)
        )
    bias = piece["b_q"].numpy()
    if np.any(bias):
        st.caption(t("lab.sculpt.bias", values=", ".join(f"{v:.2f}" for v in bias)))
    st.caption(t("lab.sculpt.matrix_caption", d_k=D_K, d_model=D_MODEL))
