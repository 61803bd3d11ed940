"""Lab 9: attention inside a Transformer encoder block: Post-Norm vs Pre-Norm, residuals, FFN."""

from __future__ import annotations

import pandas as pd
import streamlit as st
import torch

from components import cache
from components.i18n import t
from components.labs.charts import Size, Titles, bar_chart
from components.labs.common import lab_header, show_chart, show_verdict, token_input
from mha.counting import count_parameters
from mha.experiments.encoder_block import (
    ACTIVATIONS,
    NORM_PLACEMENTS,
    PRESETS,
    EncoderBlock,
    build_encoder,
    parameter_breakdown,
    to_torch_encoder_layer,
)
from mha.experiments.inputs import token_inputs
from mha.reference import TOLERANCE

__all__ = ["render", "steps_frame"]

DEFAULT_TEXT = "The animal didn't cross the street because it was too tired"
MAX_TOKENS = 16
ACTIVATION_NAMES = {"relu": "ReLU", "gelu": "GELU"}
BERT_LAYERS = 12
# What each preset brings along when it is chosen (the learner may change both afterwards): BERT-base
# is a Post-Norm block with GELU; the small block follows the original Transformer (Post-Norm, ReLU).
PRESET_CHOICES = {"small": ("post", "relu"), "bert_base": ("post", "gelu")}

FORMULAS = {
    ("post", "input"): "x",
    ("post", "attention"): "MHA(x, x, x)",
    ("post", "residual1"): "x + MHA(x)",
    ("post", "norm1"): "x₁ = LayerNorm₁(x + MHA(x))",
    ("post", "ffn_hidden"): "act(x₁ W₁ᵀ + b₁)",
    ("post", "ffn"): "FFN(x₁) = act(…) W₂ᵀ + b₂",
    ("post", "residual2"): "x₁ + FFN(x₁)",
    ("post", "norm2"): "y = LayerNorm₂(x₁ + FFN(x₁))",
    ("pre", "input"): "x",
    ("pre", "norm1"): "LayerNorm₁(x)",
    ("pre", "attention"): "MHA(LayerNorm₁(x))",
    ("pre", "residual1"): "x₁ = x + MHA(LayerNorm₁(x))",
    ("pre", "norm2"): "LayerNorm₂(x₁)",
    ("pre", "ffn_hidden"): "act(LayerNorm₂(x₁) W₁ᵀ + b₁)",
    ("pre", "ffn"): "FFN(LayerNorm₂(x₁))",
    ("pre", "residual2"): "y = x₁ + FFN(LayerNorm₂(x₁))",
}


@cache.shared(max_entries=2)
def _block(preset: str, placement: str, activation: str, seed: int) -> EncoderBlock:
    """The block, read-only and shared by every session (BERT-base: 7 M parameters, 28 MB)."""
    return build_encoder(PRESETS[preset], placement == "pre", activation, seed)


def steps_frame(block: EncoderBlock, x: torch.Tensor) -> pd.DataFrame:
    """One row per intermediate: ``step, formula, shape, rms`` (root mean square of its numbers)."""
    placement = "pre" if block.norm_first else "post"
    with torch.inference_mode():
        steps = block.forward_steps(x)
    return pd.DataFrame(
        {
            "step": [step.name for step in steps],
            "formula": [FORMULAS[(placement, step.name)] for step in steps],
            "shape": [str(list(step.tensor.shape)) for step in steps],
            "rms": [float(step.tensor.pow(2).mean().sqrt()) for step in steps],
        }
    )


@cache.results(max_entries=16)
def _run(preset: str, placement: str, activation: str, seed: int, tokens: tuple[str, ...]) -> dict:
    block = _block(preset, placement, activation, seed)
    layer = to_torch_encoder_layer(block)  # built for the check only, not kept
    x = token_inputs(tokens, block.sizes.d_model, seed)  # (1, L, D)
    with torch.inference_mode():
        diff = float((block(x) - layer(x)).abs().max())
    return {
        "steps": steps_frame(block, x),
        "ours": count_parameters(block),
        "torch": count_parameters(layer),
        "diff": diff,
    }


def _apply_preset() -> None:
    """Set the LayerNorm placement and the activation to those of the chosen preset."""
    placement, activation = PRESET_CHOICES[st.session_state["encoder_preset"]]
    st.session_state["encoder_placement"] = placement
    st.session_state["encoder_activation"] = activation


def render() -> None:
    """Draw the lab."""
    lab_header("encoder")
    cols = st.columns([2, 2, 2, 3])
    preset = cols[0].radio(
        t("lab.encoder.preset"),
        list(PRESETS),
        key="encoder_preset",
        format_func=lambda p: t(f"lab.encoder.preset.{p}"),
        on_change=_apply_preset,
    )
    placement = cols[1].radio(
        t("lab.encoder.placement"),
        NORM_PLACEMENTS,
        key="encoder_placement",
        format_func=lambda p: t(f"lab.encoder.placement.{p}"),
    )
    activation = cols[2].radio(
        t("lab.encoder.activation"), ACTIVATIONS, key="encoder_activation", format_func=ACTIVATION_NAMES.get
    )
    with cols[3]:
        tokens = token_input(t("lab.common.text"), DEFAULT_TEXT, "encoder_text", MAX_TOKENS)
    if tokens is None:
        return
    sizes = PRESETS[preset]
    st.code(t(f"lab.encoder.code.{placement}"), language="text")
    result = _run(preset, placement, activation, 0, tuple(tokens))

    st.subheader(t("lab.encoder.params_title", d=sizes.d_model, h=sizes.num_heads, d_ff=sizes.d_ff))
    parts = parameter_breakdown(sizes)
    left, right = st.columns([3, 2])
    with left:
        frame = pd.DataFrame(
            {"part": [t(f"lab.encoder.part.{name}") for name in parts], "params": list(parts.values())}
        )
        show_chart(bar_chart(frame, "params", "part", Titles(x=t("lab.encoder.axis.params")), Size(420, 180)))
    with right:
        total = sum(parts.values())
        st.metric(t("lab.encoder.metric.formula"), f"{total:,}")
        st.metric(t("lab.encoder.metric.ours"), f"{result['ours']:,}")
        st.metric(t("lab.encoder.metric.torch"), f"{result['torch']:,}")
    st.caption(t("lab.encoder.params_caption", share=parts["ffn"] / total * 100, attention=parts["attention"]))
    if preset == "bert_base":
        st.caption(t("lab.encoder.bert_stack", layers=BERT_LAYERS, total=BERT_LAYERS * total))
        if (placement, activation) != PRESET_CHOICES["bert_base"]:
            st.caption(
                t(
                    "lab.encoder.bert_differs",
                    placement=t(f"lab.encoder.placement.{placement}"),
                    activation=ACTIVATION_NAMES[activation],
                )
            )
    show_verdict(st, t("lab.encoder.check"), result["diff"], TOLERANCE[torch.float32])

    st.subheader(t("lab.encoder.steps_title"))
    steps = result["steps"]
    st.dataframe(
        pd.DataFrame(
            {
                t("lab.encoder.col.step"): [t(f"lab.encoder.step.{name}") for name in steps["step"]],
                t("lab.encoder.col.formula"): steps["formula"],
                t("lab.encoder.col.shape"): steps["shape"],
                t("lab.encoder.col.rms"): steps["rms"].round(3),
            }
        ),
        hide_index=True,
    )
    st.caption(t(f"lab.encoder.steps_caption.{placement}"))
