"""Lab 14: attention that costs less. Linear attention next to softmax on the learner's tokens (this module),
the sparse patterns (:mod:`components.labs.efficient_sparse`) and both bargains' cost
(:mod:`components.labs.efficient_cost`)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from components import cache
from components.i18n import current_language, t
from components.labs import efficient_cost, efficient_sparse
from components.labs.charts import Titles, attention_panels
from components.labs.common import lab_header, show_chart, show_verdict, token_input
from components.nav import render_lab_links
from mha.experiments.linear import LinearComparison, compare_on_tokens, flatter_rows
from mha.tokens import token_labels

__all__ = [
    "DEFAULT_TEXT",
    "FORM_TOLERANCE",
    "SAME_FUNCTION_TOLERANCE",
    "comparison",
    "render",
    "show_difference",
    "state_caption",
]

DEFAULT_TEXT = {
    "en": "The animal didn't cross the street because it was too tired",
    "zh": "动物没有过马路因为它太累了",
}
MAX_TOKENS = 24
D_MODEL = 64
HEADS = (1, 2, 4)
FORM_TOLERANCE = 1e-5  # float32: the same sum in two orders
SAME_FUNCTION_TOLERANCE = 1e-3  # two functions that differ by less would look the same on every chart here


@cache.results(max_entries=32)
def comparison(tokens: tuple[str, ...], num_heads: int, causal: bool) -> LinearComparison:
    """:func:`mha.experiments.linear.compare_on_tokens` with the lab's d_model (cached per sentence and setting)."""
    return compare_on_tokens(tokens, D_MODEL, num_heads, causal)


def show_difference(check: str, diff: float, tolerance: float) -> None:
    """The "another function" verdict: a yellow box saying by how much the two differ when ``diff`` > ``tolerance``,
    a green one when they agree within it (the measurement decides, never the page)."""
    if diff > tolerance:
        st.warning(f"{check}  \n{t('lab.efficient.differs', diff=diff, tol=tolerance)}")
    else:
        st.success(f"{check}  \n{t('lab.efficient.agrees', diff=diff, tol=tolerance)}")


def state_caption(length: int, head_dim: int, causal: bool, matrix: int, state: int) -> str:
    """What the two metrics mean and which holds more on these tokens, chosen from the numbers shown: softmax's
    ``matrix`` (L × L) against the ``state`` linear attention keeps (S and z, at every position when ``causal``)."""
    past = matrix > state  # the L × L weights already hold more numbers than the state
    yours = t("lab.efficient.yours.one") if length == 1 else t("lab.efficient.yours.many", count=length)
    if causal:
        key = "lab.efficient.state_caption_causal_past" if past else "lab.efficient.state_caption_causal"
        return t(key, d=head_dim, limit=f"{head_dim * head_dim + head_dim:,}", yours=yours)
    return t("lab.efficient.state_caption_past" if past else "lab.efficient.state_caption", d=head_dim, yours=yours)


def _render_linear(tokens: list[str]) -> None:
    st.subheader(t("lab.efficient.linear_title"))
    # the sizes and the head in one row: the weights' chart starts on a laptop's first screen
    left, middle, right = st.columns(3)
    num_heads = int(left.select_slider(t("lab.common.num_heads"), options=HEADS, value=2, key="efficient_heads"))
    causal = middle.toggle(t("lab.efficient.causal"), value=False, key="efficient_causal")
    result = comparison(tuple(tokens), num_heads, bool(causal))
    head = 0
    if num_heads > 1:
        head = int(right.radio(t("lab.efficient.head"), list(range(num_heads)), horizontal=True, key="efficient_head"))
    values = np.stack([result.softmax_weights[head].numpy(), result.linear_weights[head].numpy()])  # (2, L, L)
    panels = [t("lab.efficient.panel.softmax"), t("lab.efficient.panel.linear")]
    titles = Titles(x=t("lab.common.key"), y=t("lab.common.query"), color=t("lab.common.weight"))
    show_chart(attention_panels(values, token_labels(tokens), panels, titles, most_per_row=2))
    st.caption(t("lab.efficient.weights_caption"))
    flatter, sharper, same = flatter_rows(result.softmax_weights[head], result.linear_weights[head])
    rows = len(tokens)
    st.caption(t("lab.efficient.rows_flatter", head=head, flatter=flatter, sharper=sharper, same=same, rows=rows))
    show_difference(t("lab.efficient.check.weights"), result.weight_diff, SAME_FUNCTION_TOLERANCE)
    show_difference(t("lab.efficient.check.outputs"), result.output_diff, SAME_FUNCTION_TOLERANCE)
    form = "lab.efficient.check.running_sum" if causal else "lab.efficient.check.state"
    show_verdict(st, t(form), result.form_diff, FORM_TOLERANCE)

    length, head_dim = len(tokens), result.head_dim
    matrix, state = length * length, result.state_numbers  # per head: the L × L weights, the state kept
    cols = st.columns(2)
    cols[0].metric(t("lab.efficient.metric.matrix", length=length), f"{matrix:,}")
    cols[1].metric(t("lab.efficient.metric.state_causal" if causal else "lab.efficient.metric.state", d=head_dim),
                   f"{state:,}")  # fmt: skip
    st.caption(state_caption(length, head_dim, bool(causal), matrix, state))


def render() -> None:
    """Draw the lab."""
    lab_header("efficient")
    default = DEFAULT_TEXT.get(current_language(), DEFAULT_TEXT["en"])
    tokens = token_input(t("lab.common.text"), default, "efficient_text", MAX_TOKENS)
    if tokens is not None:
        _render_linear(tokens)
        efficient_sparse.render(tokens)
    efficient_cost.render()
    render_lab_links(st, ["complexity"])
