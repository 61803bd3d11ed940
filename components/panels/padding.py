"""The padded batch: the page's layer on a batch of two sentences, with and without the padding mask.

The page itself runs one sentence (B = 1); this panel shows why padding exists and what the padding
mask does, with numbers computed live (:func:`mha.batching.page_batch`).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.headings import heading
from components.i18n import t
from components.panels.frame import shape
from components.panels.parts import Results, ValueParts
from components.panels.source_code import method_source
from components.safe_text import markdown_table, md_escape
from mha.batching import PADDING_TOLERANCE, PaddingCheck, check_padding, pad_batch
from mha.config import PRETRAINED, TRAINED, AttentionConfig

__all__ = ["render"]


def render(parts: ValueParts) -> None:
    """The padded batch's panel; the batch, its shapes and what the mask changes are ``parts``."""
    box = st.container(border=True)
    heading(box, t("padding.title"))
    parts.add(box, _batch)
    with box.expander(t("padding.code"), icon=":material/code:"):
        st.code("\n\n".join(method_source(func) for func in (pad_batch, check_padding)), language="python")


def _unavailable(config: AttentionConfig) -> str:
    """Why the page has no batch: weights that do not read the text as the project's tokenizer cuts it (a
    checkpoint's own tokenizer, a trained task's own inputs), or a text of fewer than two tokens besides [PAD]."""
    if config.weights in (PRETRAINED, TRAINED):
        return t("padding.unavailable_weights", why=t(f"padding.unavailable.{config.weights}"))
    return t("padding.unavailable")


def _batch(results: Results) -> None:
    """The batch (or what it needs), its shapes, and what the mask changes, measured."""
    if results.run.image is not None:  # images of one size have as many patches: nothing to pad
        st.info(t("padding.image", tokens=len(results.run.tokens)))
        return
    check = results.padding
    if check is None:
        st.info(_unavailable(results.config))
        return
    batch, length, _ = check.x_shape
    left, right = st.columns(2)
    left.markdown(t("padding.what", length=length))
    shapes = {
        "x": shape(check.x_shape),
        "mask": shape(tuple(check.mask.shape)),
        "scores": shape((batch, results.run.num_heads, length, length)),
        "output": shape(check.output_shape),
    }
    right.markdown(t("padding.shapes", **shapes))
    st.markdown(markdown_table(_batch_table(check)))
    _measured(check)
    st.caption(t("padding.causal_note"))


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


def _measured(check: PaddingCheck) -> None:
    """What the mask changes, measured: the short sentence's outputs with and without it, and one token's row."""
    short = check.shortest
    real = check.lengths[short]
    masked, unmasked = check.gap_masked[short], check.gap_unmasked[short]
    with_mask = "padding.with" if check.mask_keeps_outputs else "padding.with_differs"
    without = "padding.without" if check.padding_changes_outputs else "padding.without_same"
    said_with = t(with_mask, count=real, gap=f"{masked:.1e}", tolerance=f"{PADDING_TOLERANCE:.0e}")
    st.markdown(f"{said_with}  \n{t(without, gap=f'{unmasked:.2e}')}")
    token = md_escape(check.tokens[short][real - 1], limit=40)
    st.markdown(t("padding.sample", token=token))
    alone, masked_row, unmasked_row = check.sample
    rows = {"padding.row_alone": alone, "padding.row_masked": masked_row, "padding.row_unmasked": unmasked_row}
    sample = pd.DataFrame(
        [[f"{value:+.4f}" for value in values] for values in rows.values()],
        index=[t(key) for key in rows],
        columns=[f"d{i}" for i in range(len(alone))],
    )
    st.markdown(markdown_table(sample))
