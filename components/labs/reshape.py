"""Lab 3: splitting heads with view but no transpose, the classic bug."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from components import cache, check_yourself
from components.i18n import t
from components.labs.charts import Grid, Titles, heatmap, matrix_frame, source_grid
from components.labs.common import lab_header, show_chart, show_verdict, token_input
from mha.experiments.inputs import token_inputs
from mha.experiments.reshape import compare_reshapes, head_sources
from mha.lab_questions import reshape_questions
from mha.sources.seeded import build_model
from mha.tokens import token_labels

__all__ = ["render", "sources_frame"]

DEFAULT_TEXT = "I love cats and dogs too"
MAX_TOKENS = 12
D_MODELS = (8, 16, 32, 64)
HEADS = (2, 4, 8)

# Code shown to the learner: shape comments only, so that nothing in it needs translating.
CORRECT_CODE = "q.view(B, L, H, d_k).transpose(1, 2)   # (B, L, H, d_k) -> (B, H, L, d_k)"
WRONG_CODE = "q.view(B, H, L, d_k)                   # (B, L, D) -> (B, H, L, d_k)"


def sources_frame(tokens: list[str], num_heads: int, transpose: bool) -> pd.DataFrame:
    """Which token (and which slice of it) fills row i of head h: columns ``row, column, token, text``.

    Heads, rows and slices are numbered from 0, like token positions.
    """
    sources = head_sources(len(tokens), num_heads, transpose).numpy()  # (H, L, 2)
    rows = []
    for head in range(num_heads):
        for position in range(len(tokens)):
            token, piece = sources[head, position]
            rows.append(
                {
                    "row": f"{position}",
                    "column": t("lab.common.head", n=head),
                    "token": f"{token}:{tokens[token]}",
                    "text": t("lab.reshape.cell", token=tokens[token], index=token, piece=piece),
                }
            )
    return pd.DataFrame(rows)


@cache.results(max_entries=32)
def _compare(tokens: tuple[str, ...], d_model: int, num_heads: int, seed: int) -> dict:
    model = build_model(d_model, num_heads, seed)
    result = compare_reshapes(model, token_inputs(tokens, d_model, seed))
    return {
        "correct": result.correct_weights.numpy(),
        "wrong": result.wrong_weights.numpy(),
        "correct_diff": (result.correct_check.max_abs_output, result.correct_check.max_abs_weights),
        "wrong_diff": (result.wrong_check.max_abs_output, result.wrong_check.max_abs_weights),
        "tolerance": result.correct_check.tolerance,
    }


def render() -> None:
    """Draw the lab."""
    lab_header("reshape")
    left, middle, right = st.columns([3, 2, 2])
    with left:
        tokens = token_input(t("lab.common.text"), DEFAULT_TEXT, "reshape_text", MAX_TOKENS)
    d_model = middle.select_slider(t("lab.common.d_model"), options=D_MODELS, value=16, key="reshape_d_model")
    num_heads = middle.select_slider(t("lab.common.num_heads"), options=HEADS, value=4, key="reshape_heads")
    bug = right.toggle(t("lab.reshape.toggle"), value=True, key="reshape_bug")
    seed = right.number_input(t("lab.common.seed"), 0, 9999, 0, key="reshape_seed")
    if tokens is None:
        return
    result = _compare(tuple(tokens), int(d_model), int(num_heads), int(seed))

    st.code(WRONG_CODE if bug else CORRECT_CODE, language="python")
    st.subheader(t("lab.reshape.check_title"))
    correct, wrong = st.columns(2)
    show_verdict(correct, t("lab.reshape.correct_check"), max(result["correct_diff"]), result["tolerance"])
    show_verdict(wrong, t("lab.reshape.wrong_check"), max(result["wrong_diff"]), result["tolerance"])

    st.subheader(t("lab.reshape.sources_title_bug" if bug else "lab.reshape.sources_title_ok"))
    frame = sources_frame(tokens, int(num_heads), transpose=not bug)
    positions = [str(i) for i in range(len(tokens))]
    head_names = [t("lab.common.head", n=h) for h in range(int(num_heads))]
    titles = Titles(y=t("lab.reshape.row_in_head"), color=t("lab.reshape.source_token"))
    grid = Grid(positions, head_names, cell=min(130, 760 // int(num_heads)))
    show_chart(source_grid(frame, titles, grid, token_labels(tokens)))
    st.caption(t("lab.reshape.sources_caption") + " " + t("lab.common.heads_from_zero"))
    check_yourself.render_lab("lab3", reshape_questions(tokens, int(d_model), int(num_heads)))

    st.subheader(t("lab.reshape.weights_title_bug" if bug else "lab.reshape.weights_title_ok"))
    weights: np.ndarray = result["wrong" if bug else "correct"]  # (H, L, L)
    labels = token_labels(tokens)
    row_labels = positions if bug else labels
    titles = Titles(
        x=t("lab.reshape.row_key" if bug else "lab.common.key"),
        y=t("lab.reshape.row_query" if bug else "lab.common.query"),
        color=t("lab.common.weight"),
    )
    grid = Grid.fitted(row_labels, row_labels, head_names, most_per_row=4)
    show_chart(heatmap(matrix_frame(weights, row_labels, row_labels, head_names), titles, grid))
    if bug:
        st.caption(t("lab.reshape.weights_caption_bug"))
