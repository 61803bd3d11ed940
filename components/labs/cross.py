"""Lab 7: cross-attention, queries from one sentence, keys and values from another."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components import cache
from components.i18n import t
from components.labs.charts import Grid, Titles, heatmap, matrix_frame
from components.labs.common import lab_header, show_chart, show_verdict, token_input
from mha.experiments.cross import run_cross_attention
from mha.tokens import token_labels

__all__ = ["render", "shapes_frame"]

DEFAULT_QUERY = "注意力就是你所需要的一切"
DEFAULT_KEY = "Attention is all you need"
MAX_TOKENS = 24
D_MODELS = (16, 32, 64, 128)
HEADS = (1, 2, 4, 8)


def shapes_frame(query_length: int, key_length: int, d_model: int, num_heads: int) -> pd.DataFrame:
    """The tensors of cross-attention and their shapes (``"[1, 4, 12, 5]"``), for the shapes table."""
    d_k = d_model // num_heads
    return pd.DataFrame(
        {
            "tensor": ["x_query", "x_key = x_value", "Q", "K", "V", "Q Kᵀ / √d_k", "weights · V", "output"],
            "shape": [
                str(shape)
                for shape in [
                    [1, query_length, d_model],
                    [1, key_length, d_model],
                    [1, num_heads, query_length, d_k],
                    [1, num_heads, key_length, d_k],
                    [1, num_heads, key_length, d_k],
                    [1, num_heads, query_length, key_length],
                    [1, num_heads, query_length, d_k],
                    [1, query_length, d_model],
                ]
            ],
            "dims": [
                "B, L_q, D",
                "B, L_k, D",
                "B, H, L_q, d_k",
                "B, H, L_k, d_k",
                "B, H, L_k, d_k",
                "B, H, L_q, L_k",
                "B, H, L_q, d_k",
                "B, L_q, D",
            ],
        }
    )


@cache.results(max_entries=32)
def _run(query: tuple[str, ...], key: tuple[str, ...], d_model: int, num_heads: int, seed: int) -> dict:
    run = run_cross_attention(query, key, d_model, num_heads, seed)
    return {
        "weights": run.trace.weights[0].numpy(),
        "diff": max(run.check.max_abs_output, run.check.max_abs_weights),
        "tolerance": run.check.tolerance,
        "masked": run.mask is not None,
    }


def render() -> None:
    """Draw the lab."""
    lab_header("cross")
    left, right = st.columns(2)
    with left:
        query = token_input(t("lab.cross.query_text"), DEFAULT_QUERY, "cross_query", MAX_TOKENS)
    with right:
        key = token_input(t("lab.cross.key_text"), DEFAULT_KEY, "cross_key", MAX_TOKENS)
    cols = st.columns(3)
    d_model = cols[0].select_slider(t("lab.common.d_model"), options=D_MODELS, value=64, key="cross_d_model")
    num_heads = cols[1].select_slider(t("lab.common.num_heads"), options=HEADS, value=4, key="cross_heads")
    seed = cols[2].number_input(t("lab.common.seed"), 0, 9999, 0, key="cross_seed")
    if query is None or key is None:
        return
    result = _run(tuple(query), tuple(key), int(d_model), int(num_heads), int(seed))

    st.subheader(t("lab.cross.shapes_title", lq=len(query), lk=len(key)))
    shapes = shapes_frame(len(query), len(key), int(d_model), int(num_heads))
    st.dataframe(
        shapes.rename(columns={"tensor": t("lab.cross.col.tensor"), "shape": t("lab.cross.col.shape")})
        .assign(**{t("lab.cross.col.dims"): shapes["dims"]})
        .drop(columns="dims"),
        hide_index=True,
    )
    show_verdict(st, t("lab.cross.check"), result["diff"], result["tolerance"])
    if result["masked"]:
        st.info(t("lab.cross.padding"))

    st.subheader(t("lab.cross.weights_title"))
    query_labels, key_labels = token_labels(query), token_labels(key)
    head_names = [t("lab.common.head", n=h) for h in range(int(num_heads))]
    titles = Titles(x=t("lab.cross.axis.key"), y=t("lab.cross.axis.query"), color=t("lab.common.weight"))
    grid = Grid.fitted(query_labels, key_labels, head_names, most_per_row=4)
    show_chart(heatmap(matrix_frame(result["weights"], query_labels, key_labels, head_names), titles, grid))
    st.caption(t("lab.cross.caption") + " " + t("lab.common.heads_from_zero"))
