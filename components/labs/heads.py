"""Lab 2: the same layer split into 1, 2, 4, 8 and 16 heads."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from components import cache, check_yourself
from components.i18n import t
from components.labs.charts import Titles, attention_panels, dot_chart
from components.labs.common import lab_header, show_chart, token_input
from mha.experiments.heads import SWEEP_HEAD_COUNTS, head_sweep
from mha.lab_questions import heads_questions
from mha.tokens import token_labels

__all__ = ["render", "sweep_frames"]

DEFAULT_TEXT = "The animal didn't cross the street because it was too tired"
MAX_TOKENS = 16
D_MODELS = (16, 32, 64, 128, 256)


@cache.results(max_entries=32)
def sweep_frames(
    tokens: tuple[str, ...], d_model: int, seed: int, query_gain: float
) -> tuple[pd.DataFrame, pd.DataFrame, dict[int, np.ndarray]]:
    """The sweep as plain data: a summary row per head count, a row per head with its mean
    entropy in bits (columns ``h, head, entropy``; heads numbered from 0), and the weights
    ``{h: (h, L, L) array}``."""
    runs = head_sweep(tokens, d_model, seed, query_gain)
    reference = runs[0].output
    summary = pd.DataFrame(
        {
            "h": [run.num_heads for run in runs],
            "d_k": [run.d_k for run in runs],
            "params": [run.params for run in runs],
            "formula": [run.params_formula for run in runs],
            "maps": [run.weight_entries for run in runs],
            "entropy": [float(run.entropy.mean()) for run in runs],
            "diff": [float((run.output - reference).abs().max()) for run in runs],
        }
    )
    entropy = pd.DataFrame(
        [
            {"h": run.num_heads, "head": head, "entropy": float(value)}
            for run in runs
            for head, value in enumerate(run.entropy)
        ]
    )
    return summary, entropy, {run.num_heads: run.weights.numpy() for run in runs}


def render() -> None:
    """Draw the lab."""
    lab_header("heads")
    left, middle, right = st.columns([3, 2, 2])
    with left:
        tokens = token_input(t("lab.common.text"), DEFAULT_TEXT, "heads_text", MAX_TOKENS)
    d_model = middle.select_slider(t("lab.common.d_model"), options=D_MODELS, value=64, key="heads_d_model")
    query_gain = right.slider(t("lab.heads.gain"), 1.0, 8.0, 4.0, 0.5, key="heads_gain", help=t("lab.heads.gain_help"))
    seed = right.number_input(t("lab.common.seed"), 0, 9999, 0, key="heads_seed")
    if tokens is None:
        return
    summary, entropy, weights = sweep_frames(tuple(tokens), int(d_model), int(seed), float(query_gain))

    st.subheader(t("lab.heads.table_title"))
    table = pd.DataFrame(
        {
            t("lab.heads.col.h"): summary["h"],
            "d_k = d_model / h": summary["d_k"],
            t("lab.heads.col.params"): summary["params"].map("{:,}".format),
            "4·d² + 4·d": summary["formula"].map("{:,}".format),
            t("lab.heads.col.maps"): summary["maps"].map("{:,}".format),
            t("lab.heads.col.entropy"): summary["entropy"].round(3),
            t("lab.heads.col.diff"): summary["diff"].map(lambda v: f"{v:.3g}"),
        }
    )
    st.dataframe(table, hide_index=True)
    st.caption(t("lab.heads.table_caption", d=d_model, params=int(summary["formula"].iloc[0])))
    counts = [summary[column].astype(int).tolist() for column in ("h", "params", "maps")]
    check_yourself.render_lab("lab2", heads_questions(int(d_model), len(tokens), *counts))

    labels = token_labels(tokens)
    titles = Titles(x=t("lab.common.key"), y=t("lab.common.query"), color=t("lab.common.weight"))
    st.subheader(t("lab.heads.first_title"))
    panels = [t("lab.heads.panel", h=h) for h in SWEEP_HEAD_COUNTS]
    first_heads = np.stack([weights[h][0] for h in SWEEP_HEAD_COUNTS])  # (5, L, L): head 0 of each h
    show_chart(attention_panels(first_heads, labels, panels, titles, most_per_row=5))

    st.subheader(t("lab.heads.all_title"))
    chosen = st.segmented_control(
        t("lab.heads.choose_h"), SWEEP_HEAD_COUNTS, default=8, key="heads_show", format_func=lambda h: f"h = {h}"
    )
    chosen = 8 if chosen is None else chosen
    head_names = [t("lab.common.head", n=i) for i in range(chosen)]
    show_chart(attention_panels(weights[chosen], labels, head_names, titles, most_per_row=4))
    st.caption(t("lab.common.heads_from_zero"))

    entropy_titles = Titles(x=t("lab.heads.col.h"), y=t("lab.heads.col.entropy"), chart=t("lab.heads.entropy_title"))
    uniform = (float(np.log2(len(tokens))), t("lab.heads.uniform"))
    show_chart(dot_chart(entropy, x="h", y="entropy", titles=entropy_titles, rule=uniform))
    st.caption(t("lab.heads.entropy_caption", bits=uniform[0], count=len(tokens)))
