"""The check against the checkpoint itself: beside the check against PyTorch, our layer's weights and output against
the checkpoint's own attentions and block output, with the checkpoint's name on the line (a checkpoint's page only)."""

from __future__ import annotations

import streamlit as st

from components import runner
from components.i18n import t
from components.pretrained import where_ran
from components.safe_text import md_escape
from mha.config import PRETRAINED
from mha.pipeline import AttentionRun

__all__ = ["render"]


def render(run: AttentionRun) -> None:
    """Our layer against the checkpoint itself, with its name on the line; nothing for other weights."""
    if run.source_kind != PRETRAINED:
        return
    placed = runner.cached_checkpoint_check(run.config, run)
    check = placed.value
    box = st.container(border=True)
    name = md_escape(check.checkpoint)
    if not check.applies:
        box.info(t(f"check.checkpoint_{check.reason}", checkpoint=name))
        return
    where_ran(box, placed)
    numbers = {
        "checkpoint": name,
        "layer": check.layer,
        "weights": f"{check.max_abs_weights:.2e}",
        "out": f"{check.max_abs_output:.2e}",
        "tol": f"{check.tolerance:.0e}",
        "tol_out": f"{check.output_tolerance:.1e}" if check.output_scale > 1 else f"{check.tolerance:.0e}",
    }
    (box.success if check.passed else box.error)(t(f"check.checkpoint_{'pass' if check.passed else 'fail'}", **numbers))
    if check.output_scale > 1:
        box.caption(t("check.checkpoint_scaled", scale=f"{check.output_scale:.3g}", tol=numbers["tol"]))
    box.caption(t(check.how, kv_heads=_kv_heads(run)))


def _kv_heads(run: AttentionRun) -> str:
    """How the checkpoint's key/value heads meet its query heads, in the words of the check's note: repeated for a
    group, or one each (the note of a family without ``repeat_kv`` does not use it)."""
    kv, heads = run.model.num_kv_heads, run.model.num_heads
    return t("check.kv_repeated", kv=kv, group=heads // kv) if kv < heads else t("check.kv_own")
