"""Lab 4: one mask in four spellings (ours, nn.MultiheadAttention's, the two tutorials'), run through each
implementation; the fully masked row; the first tutorial's two causal masks put together (:mod:`.mixed_causal`)."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import streamlit as st
import torch

from components import cache, check_yourself
from components.i18n import t
from components.labs import mixed_causal
from components.labs.charts import Grid, Titles, attention_panels, mask_grid, matrix_frame
from components.labs.common import lab_header, show_chart, token_input
from components.safe_text import md_escape
from mha.experiments.inputs import token_inputs
from mha.experiments.mask_translate import (
    FORM_CODE,
    MASK_FORMS,
    MASK_PRESETS,
    mask_forms,
    preset_mask,
    run_mask_forms,
    second_tutorial_causal,
)
from mha.lab_questions import masks_questions
from mha.sources.seeded import build_model
from mha.tokens import token_labels

__all__ = ["forms_frame", "render", "runs_frame", "translation_table"]

DEFAULT_TEXT = "The cat sat on the mat [PAD]"
MAX_TOKENS = 10
D_MODEL, NUM_HEADS = 16, 2


def forms_frame(keep: np.ndarray, labels: list[str]) -> pd.DataFrame:
    """The spellings of ``keep`` (L, L) in :data:`MASK_FORMS` order as one long frame:
    ``panel, row, column, value, text`` (value 1 = may attend, whatever the spelling)."""
    forms = mask_forms(torch.tensor(keep, device="cpu"))
    texts = {
        form: np.where(keep, "0", "-∞") if form == "additive" else np.where(forms[form].numpy(), "T", "F")
        for form in MASK_FORMS
    }
    panels = [t(f"lab.masks.form.{form}") for form in MASK_FORMS]
    frame = matrix_frame(np.stack([keep.astype(np.float32)] * len(MASK_FORMS)), labels, labels, panels)
    frame["text"] = np.concatenate([texts[form].ravel() for form in MASK_FORMS])
    return frame


def translation_table() -> str:
    """A markdown table, one row per spelling (named with who uses it): what True means, the code that makes it
    from ``keep`` and the code that applies it to the scores (code in code spans: it is not translated)."""
    header = [t(f"lab.masks.col.{name}") for name in ("spelling", "true_means", "make", "apply")]
    rows = [
        [
            t(f"lab.masks.form.{form}"),
            t(f"lab.masks.true_means.{form}"),
            f"`{FORM_CODE[form][0]}`",
            f"`{FORM_CODE[form][1]}`",
        ]
        for form in MASK_FORMS
    ]
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def runs_frame(tokens: tuple[str, ...], keep: np.ndarray, seed: int) -> pd.DataFrame:
    """One row per (implementation, spelling): ``implementation, form, diff, rows`` (masked-row behaviours)."""
    model = build_model(D_MODEL, NUM_HEADS, seed)
    runs = run_mask_forms(model, token_inputs(tokens, D_MODEL, seed), torch.tensor(keep, device="cpu"))
    return pd.DataFrame(
        {
            "implementation": [run.implementation for run in runs],
            "form": [run.form for run in runs],
            "diff": [run.max_abs_diff for run in runs],
            "rows": [list(run.masked_rows) for run in runs],
        }
    )


@cache.results(max_entries=64)
def _cached_runs(tokens: tuple[str, ...], keep_bytes: bytes, length: int, seed: int) -> pd.DataFrame:
    keep = np.frombuffer(keep_bytes, dtype=bool).reshape(length, length)
    return runs_frame(tokens, keep, seed)


@cache.results(max_entries=64)
def _our_weights(tokens: tuple[str, ...], keep_bytes: bytes, length: int, seed: int) -> np.ndarray:
    keep = torch.tensor(np.frombuffer(keep_bytes, dtype=bool).reshape(length, length), device="cpu")
    model = build_model(D_MODEL, NUM_HEADS, seed)
    x = token_inputs(tokens, D_MODEL, seed)
    with torch.inference_mode():
        return model(x, x, x, keep)[1][0].numpy()  # (H, L, L)


def _behaviour_text(rows: list[str]) -> str:
    if not rows:
        return "—"
    return ", ".join(dict.fromkeys(t(f"lab.masks.row.{row}") for row in rows))


def _edited_mask(tokens: list[str], preset: str, window: int) -> np.ndarray:
    """The preset as a grid of checkboxes the learner can click; returns the edited (L, L) keep-mask."""
    labels = token_labels(tokens)
    start = pd.DataFrame(preset_mask(preset, tokens, window).numpy(), index=labels, columns=labels)
    digest = hashlib.blake2b("\x00".join(tokens).encode(), digest_size=6).hexdigest()
    edited = st.data_editor(
        start,
        key=f"masks_editor_{preset}_{window}_{digest}",
        column_config={label: st.column_config.CheckboxColumn(label, width="small") for label in labels},
    )
    return edited.to_numpy(dtype=bool)


def render() -> None:
    """Draw the lab."""
    lab_header("masks")
    st.caption(t("lab.masks.mixup.jump", anchor=mixed_causal.ANCHOR))
    left, middle, right = st.columns([3, 2, 2])
    with left:
        tokens = token_input(t("lab.common.text"), DEFAULT_TEXT, "masks_text", MAX_TOKENS)
    preset = middle.selectbox(
        t("lab.masks.preset"),
        MASK_PRESETS,
        index=MASK_PRESETS.index("blocked_row"),
        key="masks_preset",
        format_func=lambda p: t(f"lab.masks.preset.{p}"),
    )
    window = right.slider(t("lab.masks.window"), 0, 4, 1, key="masks_window", disabled=preset != "window")
    seed = right.number_input(t("lab.common.seed"), 0, 9999, 0, key="masks_seed")
    if tokens is None:
        return
    labels = token_labels(tokens)
    st.subheader(t("lab.masks.edit_title"))
    st.caption(t("lab.masks.edit_caption"))
    keep = _edited_mask(tokens, preset, int(window))

    st.subheader(t("lab.masks.forms_title"))
    titles = Titles(x=t("lab.common.key"), y=t("lab.common.query"))
    panels = [t(f"lab.masks.form.{form}") for form in MASK_FORMS]
    show_chart(mask_grid(forms_frame(keep, labels), titles, Grid.fitted(labels, labels, panels, 2, largest=40)))
    st.caption(t("lab.masks.forms_caption"))
    st.markdown(translation_table())
    if np.array_equal(~keep, second_tutorial_causal(len(tokens)).numpy()):
        st.caption(t("lab.masks.triu_caption"))

    st.subheader(t("lab.masks.runs_title"))
    runs = _cached_runs(tuple(tokens), keep.tobytes(), len(tokens), int(seed))
    table = pd.DataFrame(
        {
            t("lab.masks.col.implementation"): [t(f"lab.masks.impl.{name}") for name in runs["implementation"]],
            t("lab.masks.col.call"): [t(f"lab.masks.passed.{form}") for form in runs["form"]],
            t("lab.masks.col.diff"): [f"{d:.1e}" for d in runs["diff"]],
            t("lab.masks.col.masked_rows"): [_behaviour_text(rows) for rows in runs["rows"]],
        }
    )
    st.dataframe(table, hide_index=True)
    empty = [labels[i] for i in np.flatnonzero(~keep.any(axis=1))]
    if empty:
        st.warning(t("lab.masks.empty_rows", rows=md_escape(", ".join(empty), limit=300)))
    else:
        st.info(t("lab.masks.no_empty_rows"))
    st.caption(t("lab.masks.runs_caption"))
    check_yourself.render_lab("lab4", masks_questions(tokens, torch.tensor(keep, device="cpu")))

    st.subheader(t("lab.masks.weights_title"))
    weights = _our_weights(tuple(tokens), keep.tobytes(), len(tokens), int(seed))
    head_names = [t("lab.common.head", n=h) for h in range(NUM_HEADS)]
    titles = Titles(x=t("lab.common.key"), y=t("lab.common.query"), color=t("lab.common.weight"))
    show_chart(attention_panels(weights, labels, head_names, titles, most_per_row=NUM_HEADS, largest=36))
    st.caption(t("lab.common.heads_from_zero"))

    mixed_causal.render(tokens, labels, D_MODEL, NUM_HEADS, int(seed))
