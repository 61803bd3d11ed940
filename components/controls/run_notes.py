"""Notes under the controls and above the steps: where the run happened, and choices that may not do what a learner
expects."""

from __future__ import annotations

import streamlit as st

from components.i18n import t
from components.safe_text import md_escape
from mha.masks import PAD_TOKENS
from mha.pipeline import AttentionRun


def show_device_used(run: AttentionRun) -> None:
    """Where the run happened (under the controls)."""
    st.caption(t("controls.device_used", device=str(run.device.device), dtype=run.config.dtype))


def show_run_notes(run: AttentionRun) -> bool:
    """Warnings about choices that may not do what the user expects; whether there were any."""
    shown = 0
    config, tokens, device = run.config, run.tokens, run.device
    if device.fallback_reason:
        shown += 1
        st.warning(t("notes.device_fallback", requested=config.device, used=str(device.device)))
    length = len(tokens)
    if config.mask_type == "window" and config.window >= length - 1:
        shown += 1
        st.warning(t("notes.window_covers_all", window=config.window, count=length))
    pads = sum(token in PAD_TOKENS for token in tokens)
    if config.mask_type == "padding":
        if pads == 0:
            shown += 1
            st.info(t("notes.no_pad_tokens"))
        elif pads == length:
            shown += 1
            st.warning(t("notes.all_pad_tokens"))
    elif config.block_pad and pads == 0:
        shown += 1
        st.info(t("notes.block_pad_no_pads"))
    for note in run.notes:
        shown += 1
        st.info(t(f"notes.{note.code}", **{name: md_escape(value, limit=200) for name, value in note.params.items()}))
    return shown > 0
