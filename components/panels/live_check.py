"""The live check: our output and per-head weights against ``torch.nn.MultiheadAttention`` with the same weights,
then the tutorials' common pitfall measured on the same input: ``nn.MultiheadAttention`` takes [L, B, E] unless
``batch_first=True``."""

from __future__ import annotations

import streamlit as st

from components.folds import folded
from components.headings import heading
from components.i18n import t
from components.nav import render_lab_links
from components.panels.frame import shape
from components.panels.parts import Results, ValueParts
from components.panels.source_code import method_source
from mha.reference import to_torch_mha
from mha.reference_today import sdpa_attention

__all__ = ["CHECK_LABS", "CODE_KEY", "render"]

CHECK_LABS = ("masks",)
CODE_KEY = "fold_check_code"  # the reference's code, drawn only while open (components.folds)
_ORDER_CODE = """\
mha = nn.MultiheadAttention(d_model, num_heads)  # batch_first=False: input [L, B, E]
out, w = mha(x, x, x)  # x [B, L, E] is read as L = B, batch = L: no error, wrong numbers
out, w = mha(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1))  # [L, B, E]: right
out = out.transpose(0, 1)  # back to [B, L, E]
mha = nn.MultiheadAttention(d_model, num_heads, batch_first=True)  # or: [B, L, E] as it is"""


def render(parts: ValueParts) -> None:
    """The live check's panel; the measured differences and the pitfall's numbers are ``parts`` (a layer with
    grouped K/V heads or RoPE is compared with ``F.scaled_dot_product_attention``, the tutorials' layer with
    ``nn.MultiheadAttention``: the text names both, the result says which ran)."""
    box = st.container(border=True)
    heading(box, t("check.title"))
    box.markdown(t("check.what"))
    code = folded(box, t("check.code"), key=CODE_KEY, icon=":material/code:")
    if code is not None:  # drawn only once opened: two highlighted listings
        code.code(method_source(to_torch_mha), language="python")
        code.code(method_source(sdpa_attention), language="python")
    parts.add(box, _result)
    box.markdown(f"**{t('check.order_title')}**")
    parts.add(box, _batch_order)
    box.code(_ORDER_CODE, language="python")
    render_lab_links(box, CHECK_LABS)


def _result(results: Results) -> None:
    """Passed or failed, with the largest differences and the tolerance; which rows were compared; the mask."""
    check, run = results.check, results.run
    against = "nn.MultiheadAttention" if run.model.is_plain else "F.scaled_dot_product_attention"
    numbers = {
        "against": against,
        "out": f"{check.max_abs_output:.2e}",
        "weights": f"{check.max_abs_weights:.2e}",
        "tol": f"{check.tolerance:.0e}",
    }
    if check.passed:
        st.success(t("check.pass", **numbers))
    else:
        st.error(t("check.fail", **numbers))
    if check.rows_compared < check.rows_total:
        st.caption(t("check.rows", compared=check.rows_compared, total=check.rows_total))
    if run.mask is not None:
        st.info(t("check.mask_note"))


def _batch_order(results: Results) -> None:
    """``nn.MultiheadAttention``'s default [L, B, E] fed our [B, L, E]: the shapes and differences, measured."""
    order = results.batch_order
    if order is None:
        st.caption(t("check.order_not_here"))
        return
    numbers = {
        "x": shape(order.input_shape),
        "out": shape(order.wrong_output_shape),
        "weights": shape(order.wrong_weights_shape),
        "length": len(results.run.tokens),
        "wrong": f"{order.wrong_gap:.2e}",
        "transposed": f"{order.transposed_gap:.2e}",
        "batch_first": f"{order.batch_first_gap:.2e}",
    }
    st.markdown(t("check.order", **numbers))
