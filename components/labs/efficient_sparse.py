"""Lab 14, sparse part: Longformer's and BigBird's patterns on the learner's tokens, and the block-skipping run
checked against the dense masked run."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from components import cache
from components.i18n import t
from components.labs.charts import Grid, Titles, mask_grid, matrix_frame
from components.labs.common import show_chart, show_verdict
from mha.experiments.sparse import SparseOnTokens, kept_fraction, sparse_on_tokens
from mha.tokens import token_labels

__all__ = ["SAME_RUN_TOLERANCE", "kept_caption", "render", "sparse_result"]

SAME_RUN_TOLERANCE = 1e-5  # float32: the same kept scores, summed in another order
BLOCKS = (1, 2, 3, 4)


@cache.results(max_entries=32)
def sparse_result(
    tokens: tuple[str, ...], settings: tuple[int, tuple[int, ...], int, int, int, int, int]
) -> SparseOnTokens:
    """:func:`mha.experiments.sparse.sparse_on_tokens` (settings: window, global tokens, block, window blocks,
    global blocks, random blocks, seed), cached per sentence."""
    window, global_tokens, block, window_blocks, global_blocks, random_blocks, seed = settings
    return sparse_on_tokens(tokens, window, global_tokens, block, window_blocks, global_blocks, random_blocks, seed)


def _mask_frame(masks: list[np.ndarray], labels: list[str], panels: list[str]) -> pd.DataFrame:
    frame = matrix_frame(np.stack(masks).astype(np.float32), labels, labels, panels)  # value 1 = may attend
    frame["text"] = np.where(frame["value"] > 0.5, "1", "0")
    return frame


def kept_caption(length: int, panels: list[str], shares: list[float]) -> str:
    """The caption under the two shares kept, its words chosen from them: whether each pattern keeps more than half
    of the L × L entries (``panels``: the patterns' names, ``shares``: their shares, in the same order)."""
    most = [share > 0.5 for share in shares]
    cells = length * length
    entries = t("lab.efficient.entries.one") if cells == 1 else t("lab.efficient.entries.many", count=f"{cells:,}")
    if all(most):
        return t("lab.efficient.kept_caption.most", length=length, entries=entries)
    if not any(most):
        return t("lab.efficient.kept_caption.few", length=length, entries=entries)
    more, less = (panels[0], panels[1]) if most[0] else (panels[1], panels[0])
    return t("lab.efficient.kept_caption.mixed", length=length, entries=entries, more=more, less=less)


def render(tokens: list[str]) -> None:
    """The two patterns' controls, their masks on ``tokens``, the share they keep and the two runs' verdicts."""
    st.subheader(t("lab.efficient.sparse_title"))
    st.markdown(t("lab.efficient.sparse_intro"))
    length = len(tokens)
    labels = token_labels(tokens)
    left, right = st.columns(2)
    left.markdown(t("lab.efficient.longformer"))
    window = int(left.slider(t("lab.efficient.window"), 0, 4, 1, key="efficient_window"))
    global_tokens = left.multiselect(
        t("lab.efficient.global_tokens"),
        list(range(length)),
        default=[0],
        format_func=lambda i: labels[i],
        key="efficient_global",
    )
    right.markdown(t("lab.efficient.bigbird"))
    block = int(right.select_slider(t("lab.efficient.block"), options=BLOCKS, value=2, key="efficient_block"))
    cols = right.columns(3)
    window_blocks = int(cols[0].number_input(t("lab.efficient.window_blocks"), 0, 3, 0, key="efficient_wblocks"))
    global_blocks = int(cols[1].number_input(t("lab.efficient.global_blocks"), 0, 3, 1, key="efficient_gblocks"))
    random_blocks = int(cols[2].number_input(t("lab.efficient.random_blocks"), 0, 3, 1, key="efficient_rblocks"))
    seed = int(right.number_input(t("lab.common.seed"), 0, 999, 0, key="efficient_seed"))

    settings = (window, tuple(sorted(global_tokens)), block, window_blocks, global_blocks, random_blocks, seed)
    result = sparse_result(tuple(tokens), settings)
    panels = [t("lab.efficient.panel.longformer"), t("lab.efficient.panel.bigbird")]
    grid = Grid.fitted(labels, labels, panels, most_per_row=2)
    titles = Titles(x=t("lab.common.key"), y=t("lab.common.query"))
    show_chart(
        mask_grid(_mask_frame([result.longformer.numpy(), result.bigbird.numpy()], labels, panels), titles, grid)
    )
    shares = [kept_fraction(result.longformer), kept_fraction(result.bigbird)]
    cols = st.columns(2)
    for col, panel, share in zip(cols, panels, shares, strict=True):
        col.metric(t("lab.efficient.metric.kept", pattern=panel), f"{share:.0%}")
    st.caption(kept_caption(length, panels, shares))
    show_verdict(st, t("lab.efficient.check.longformer"), result.longformer_diff, SAME_RUN_TOLERANCE)
    show_verdict(st, t("lab.efficient.check.bigbird"), result.bigbird_diff, SAME_RUN_TOLERANCE)
