"""One mask, three spellings: our bool keep-mask, nn.MultiheadAttention's bool block-mask, an additive mask.

The same blocked cells written three ways, run through three implementations
(this engine, ``F.scaled_dot_product_attention``, ``nn.MultiheadAttention``) with the
same weights. What each does with a fully masked query row is measured, not assumed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor
from torch.nn import functional as F

from mha.masks import build_mask, to_additive_mask
from mha.module import MultiHeadAttention
from mha.reference import to_torch_mha

__all__ = [
    "FORMS_TAKEN",
    "IMPLEMENTATIONS",
    "MASK_FORMS",
    "MASK_PRESETS",
    "ROW_BEHAVIOURS",
    "MaskRun",
    "mask_forms",
    "preset_mask",
    "row_behaviour",
    "run_mask_forms",
]

MASK_PRESETS = ("causal", "window", "padding", "none", "blocked_row")
MASK_FORMS = ("keep", "block", "additive")  # True = may attend; True = blocked; 0 / -inf
ROW_BEHAVIOURS = ("nan", "zero_context", "values")
# nn.MultiheadAttention takes different code paths: need_weights=True runs its own softmax;
# need_weights=False in eval mode under no_grad takes the fused "fast path". Both are measured.
IMPLEMENTATIONS = ("ours", "sdpa", "torch_mha", "torch_mha_fast")
FORMS_TAKEN = {  # the bool spelling each documents, then the additive one they share
    "ours": ("keep", "additive"),
    "sdpa": ("keep", "additive"),
    "torch_mha": ("block", "additive"),
    "torch_mha_fast": ("block", "additive"),
}


def preset_mask(preset: str, tokens: Sequence[str], window: int = 1) -> Tensor:
    """A bool keep-mask (True = may attend) for a preset; ``blocked_row`` is causal with its last row all False.

    Shape:
        (L, L).
    """
    length = len(tokens)
    if preset == "blocked_row":
        keep = preset_mask("causal", tokens)
        keep[-1] = False
        return keep
    if preset not in MASK_PRESETS:
        raise ValueError(f"unknown mask preset {preset!r}; choose one of {', '.join(MASK_PRESETS)}")
    mask = build_mask(preset, tokens, window=window)  # (1, 1, L, L), (1, 1, 1, L) or None
    if mask is None:
        return torch.ones(length, length, dtype=torch.bool)
    return mask.expand(1, 1, length, length)[0, 0].clone()  # (L, L)


def mask_forms(keep: Tensor) -> dict[str, Tensor]:
    """The keep-mask in the three spellings: ``keep`` (bool, True = may attend), ``block`` (bool, True =
    blocked, nn.MultiheadAttention's meaning: ``~keep``) and ``additive`` (float, 0 or -inf)."""
    return {"keep": keep, "block": ~keep, "additive": to_additive_mask(keep)}


def row_behaviour(output_row: Tensor, bias: Tensor | None, tolerance: float = 1e-6) -> str:
    """What a layer returned for a fully masked query row: ``"nan"``, ``"zero_context"`` (the output is
    just W_o's bias, so the attention context was zero) or ``"values"`` (other numbers)."""
    if torch.isnan(output_row).any():
        return "nan"
    expected = torch.zeros_like(output_row) if bias is None else bias
    return "zero_context" if torch.allclose(output_row, expected, atol=tolerance, rtol=0) else "values"


@dataclass(frozen=True)
class MaskRun:
    """One implementation fed one spelling of the mask."""

    implementation: str  # one of IMPLEMENTATIONS
    form: str  # one of MASK_FORMS
    output: Tensor  # (L, D)
    max_abs_diff: float  # vs ours with the keep-mask, over rows that may attend to at least one key
    masked_rows: tuple[str, ...]  # the behaviour on each fully masked row, in row order


def _sdpa_layer(model: MultiHeadAttention, x: Tensor, mask: Tensor) -> Tensor:
    """Our projections and W_o around PyTorch's attention core. x (1, L, D) -> (1, L, D)."""
    _, _, _, q_heads, k_heads, v_heads = model.project_and_split(x, x, x)  # 3 x (1, H, L, Dh)
    context = F.scaled_dot_product_attention(q_heads, k_heads, v_heads, attn_mask=mask)  # (1, H, L, Dh)
    return model.project_out(model.concat_heads(context))  # (1, L, D)


def run_mask_forms(model: MultiHeadAttention, x: Tensor, keep: Tensor) -> list[MaskRun]:
    """Run ours, ``F.scaled_dot_product_attention`` and ``nn.MultiheadAttention`` with each fitting spelling.

    Args:
        model: supplies the weights of all three.
        x: self-attention input, (1, L, D).
        keep: bool keep-mask (True = may attend), (L, L).

    Returns:
        Two runs per implementation (:data:`IMPLEMENTATIONS`), one per spelling in :data:`FORMS_TAKEN`.
    """
    forms = mask_forms(keep)
    torch_mha = to_torch_mha(model).eval()
    layers = {
        "ours": lambda mask: model(x, x, x, mask)[0],
        "sdpa": lambda mask: _sdpa_layer(model, x, mask),
        "torch_mha": lambda mask: torch_mha(x, x, x, attn_mask=mask, need_weights=True)[0],
        "torch_mha_fast": lambda mask: torch_mha(x, x, x, attn_mask=mask, need_weights=False)[0],
    }
    with torch.inference_mode():
        outputs = {
            (name, form): layers[name](forms[form]) for name in IMPLEMENTATIONS for form in FORMS_TAKEN[name]
        }  # each (1, L, D)
    reference = outputs[("ours", "keep")][0]  # (L, D)
    has_key = keep.any(dim=-1)  # (L,)
    bias = model.W_o.bias
    runs = []
    for (implementation, form), output in outputs.items():
        diff = (output[0] - reference)[has_key]  # (rows with a key, D)
        runs.append(
            MaskRun(
                implementation=implementation,
                form=form,
                output=output[0],
                max_abs_diff=float(diff.abs().max()) if diff.numel() else 0.0,
                masked_rows=tuple(row_behaviour(output[0, i], bias) for i in torch.nonzero(~has_key).flatten()),
            )
        )
    return runs
