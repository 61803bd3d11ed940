"""The "batches and padding" panel: the page's layer on a padded batch of two sentences, with and without the mask.

The page itself runs one sentence (B = 1); this panel shows why padding exists and what the
padding mask does, with numbers computed live (:func:`mha.batching.page_batch`).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.headings import heading
from components.i18n import t
from components.reseed import Places, draw_or_keep
from components.safe_text import markdown_table, md_escape
from components.steps import method_source
from mha.batching import PaddingCheck, check_padding, pad_batch

__all__ = ["render_padding_panel"]

_TOLERANCE = 1e-4  # float32 sums of d_model products in another order agree to ~1e-6


def _shape(shape: tuple[int, ...]) -> str:
    return str(list(shape))


def _batch_table(check: PaddingCheck) -> pd.DataFrame:
    """One row per sentence: its padded tokens, how many are real, its row of the mask as 1s and 0s.

    A table's cells are markdown: the tokens (user text) are escaped.
    """
    return pd.DataFrame(
        {
            t("padding.col_tokens"): [md_escape(" ".join(tokens), limit=600) for tokens in check.tokens],
            t("padding.col_real"): [str(n) for n in check.lengths],
            t("padding.col_mask"): [" ".join(str(int(v)) for v in row) for row in check.mask[:, 0, 0].tolist()],
        },
        index=[t("padding.sentence", index=b) for b in range(len(check.tokens))],
    )


def _sample_table(check: PaddingCheck) -> pd.DataFrame:
    alone, masked, unmasked = check.sample
    rows = {"padding.row_alone": alone, "padding.row_masked": masked, "padding.row_unmasked": unmasked}
    return pd.DataFrame(
        [[f"{value:+.4f}" for value in values] for values in rows.values()],
        index=[t(key) for key in rows],
        columns=[f"d{i}" for i in range(len(alone))],
    )


def render_padding_panel(check: PaddingCheck | None, num_heads: int, places: Places | None = None) -> None:
    """Draw the panel for the page's batch ``check`` (``None``: say what the batch needs).

    Args:
        check: the padded batch run through the page's layer.
        num_heads: h, for the shape the mask broadcasts to.
        places: the measured numbers are left to the seed's fragment (see :mod:`components.reseed`).
    """
    box = st.container(border=True)
    heading(box, t("padding.title"))
    if check is None:
        box.info(t("padding.unavailable"))
        return
    batch, length, _ = check.x_shape
    left, right = box.columns(2)
    left.markdown(t("padding.what", length=length))
    shapes = {
        "x": _shape(check.x_shape),
        "mask": _shape(tuple(check.mask.shape)),
        "scores": _shape((batch, num_heads, length, length)),
        "output": _shape(check.output_shape),
    }
    right.markdown(t("padding.shapes", **shapes))
    box.table(_batch_table(check))
    draw_or_keep(box, places, _draw_measured, check, lambda computed: computed.padding)
    box.caption(t("padding.causal_note"))
    with box.expander(t("padding.code"), icon=":material/code:"):
        st.code("\n\n".join(method_source(func) for func in (pad_batch, check_padding)), language="python")


def _draw_measured(check: PaddingCheck | None) -> None:
    """What the mask changes, measured: the short sentence's outputs with and without it, and one token's row."""
    if check is None:  # the same text and sizes make a batch for any seed
        return
    short = min(range(len(check.lengths)), key=check.lengths.__getitem__)
    count = check.lengths[short]
    masked, unmasked = check.gap_masked[short], check.gap_unmasked[short]
    with_mask = "padding.with" if masked <= _TOLERANCE else "padding.with_differs"
    without = "padding.without" if unmasked > _TOLERANCE else "padding.without_same"
    st.markdown(f"{t(with_mask, count=count, gap=f'{masked:.1e}')}  \n{t(without, gap=f'{unmasked:.2e}')}")
    token = md_escape(check.tokens[short][count - 1], limit=40)
    st.markdown(t("padding.sample", token=token))
    st.markdown(markdown_table(_sample_table(check)))
