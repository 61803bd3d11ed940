"""One mask, four spellings, and what each implementation does with it.

The same blocked cells written the ways the two tutorials and PyTorch write them:

- ``keep``: bool, True = may attend. This engine and ``F.scaled_dot_product_attention``; the first
  tutorial's ``scores.masked_fill(mask == 0, -inf)`` reads its mask the same way (1 = may attend).
- ``block``: bool, True = blocked: ``nn.MultiheadAttention``'s ``attn_mask``.
- ``tutorial2``: bool, True = blocked, the second tutorial's: ``torch.triu(torch.ones(L, L), diagonal=1).bool()``
  for the causal mask, applied with ``scores.masked_fill_(mask, -inf)``. The same cells as ``block``,
  the opposite of ``keep``.
- ``additive``: float, 0 where allowed and -inf where blocked, added to the scores; all take it.

Each is run, with the same weights, through this engine, ``F.scaled_dot_product_attention``,
``nn.MultiheadAttention`` and the tutorials' plain masked_fill-then-softmax. What each does with a
fully masked query row is measured, not assumed. :data:`FORM_CODE` is the code the lab shows for
making each spelling from the keep-mask and applying it (the tests run it).
"""

from __future__ import annotations

import math
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
    "FORM_CODE",
    "IMPLEMENTATIONS",
    "MASK_FORMS",
    "MASK_PRESETS",
    "MaskRun",
    "apply_form",
    "mask_forms",
    "preset_mask",
    "row_behaviour",
    "run_mask_forms",
    "second_tutorial_causal",
]

MASK_PRESETS = ("causal", "window", "padding", "none", "blocked_row")
MASK_FORMS = ("keep", "block", "tutorial2", "additive")  # True = may attend; True = blocked (twice); 0 / -inf
# nn.MultiheadAttention takes different code paths: need_weights=True runs its own softmax;
# need_weights=False in eval mode under no_grad takes the fused "fast path". Both are measured.
# tutorial1 / tutorial2: the tutorials' own step 2, masked_fill on the scores then a plain softmax.
IMPLEMENTATIONS = ("ours", "sdpa", "torch_mha", "torch_mha_fast", "tutorial1", "tutorial2")
FORMS_TAKEN = {  # the bool spelling each documents, then the additive one where it takes it
    "ours": ("keep", "additive"),
    "sdpa": ("keep", "additive"),
    "torch_mha": ("block", "additive"),
    "torch_mha_fast": ("block", "additive"),
    "tutorial1": ("keep",),
    "tutorial2": ("tutorial2",),
}
#: Per spelling: how to make it from the keep-mask ``keep`` (L x L bool), and how it is applied to
#: ``scores`` (B, H, L, L) as ``mask``: the code the lab shows, exactly (the tests run it).
FORM_CODE = {
    "keep": ("mask = keep", "scores.masked_fill(mask == 0, float('-inf'))"),
    "block": ("mask = ~keep", "nn.MultiheadAttention(...)(x, x, x, attn_mask=mask)"),
    "tutorial2": ("mask = ~keep", "scores.masked_fill_(mask, float('-inf'))"),
    "additive": ("mask = torch.zeros(L, L).masked_fill(~keep, float('-inf'))", "scores + mask"),
}


def preset_mask(preset: str, tokens: Sequence[str], window: int = 1, device: torch.device | str = "cpu") -> Tensor:
    """A bool keep-mask (True = may attend) for a preset, on ``device``; ``blocked_row`` is causal with its last row
    all False.

    Shape:
        (L, L).
    """
    length = len(tokens)
    if preset == "blocked_row":
        keep = preset_mask("causal", tokens, device=device)
        keep[-1] = False
        return keep
    if preset not in MASK_PRESETS:
        raise ValueError(f"unknown mask preset {preset!r}; choose one of {', '.join(MASK_PRESETS)}")
    mask = build_mask(preset, tokens, window=window, device=device)  # (1, 1, L, L), (1, 1, 1, L) or None
    if mask is None:
        return torch.ones(length, length, dtype=torch.bool, device=device)
    return mask.expand(1, 1, length, length)[0, 0].clone()  # (L, L)


def second_tutorial_causal(length: int, device: torch.device | str = "cpu") -> Tensor:
    """The second tutorial's causal mask, as it writes it: True above the diagonal = blocked, made on ``device``.

    Shape: (L, L).
    """
    return torch.triu(torch.ones(length, length, device=device), diagonal=1).bool()


def mask_forms(keep: Tensor) -> dict[str, Tensor]:
    """The keep-mask in the four spellings of :data:`MASK_FORMS`: ``keep`` (bool, True = may attend),
    ``block`` and ``tutorial2`` (bool, True = blocked: ``~keep``) and ``additive`` (float, 0 or -inf)."""
    return {"keep": keep, "block": ~keep, "tutorial2": ~keep, "additive": to_additive_mask(keep)}


def apply_form(form: str, scores: Tensor, mask: Tensor) -> Tensor:
    """The scores after ``mask``, in spelling ``form``, is applied the way its users apply it (-inf = blocked).

    ``keep`` as the first tutorial does, ``tutorial2`` as the second does (out of place here),
    ``block`` as ``nn.MultiheadAttention`` turns its bool ``attn_mask`` into -inf, ``additive`` added.

    Shape: scores (..., Lq, Lk), mask broadcastable to it -> (..., Lq, Lk).
    """
    if form == "keep":
        return scores.masked_fill(mask == 0, float("-inf"))
    if form in ("block", "tutorial2"):
        return scores.masked_fill(mask, float("-inf"))
    if form == "additive":
        return scores + mask
    raise ValueError(f"unknown mask form {form!r}; choose one of {', '.join(MASK_FORMS)}")


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
    masked_rows: tuple[str, ...]  # row_behaviour() of each fully masked row, in row order


def _sdpa_layer(model: MultiHeadAttention, x: Tensor, mask: Tensor) -> Tensor:
    """Our projections and W_o around PyTorch's attention core. x (1, L, D) -> (1, L, D)."""
    _, _, _, q_heads, k_heads, v_heads = model.project_and_split(x, x, x)  # 3 x (1, H, L, Dh)
    context = F.scaled_dot_product_attention(q_heads, k_heads, v_heads, attn_mask=mask)  # (1, H, L, Dh)
    return model.project_out(model.concat_heads(context))  # (1, L, D)


def _tutorial_layer(model: MultiHeadAttention, x: Tensor, form: str, mask: Tensor) -> Tensor:
    """Our projections and W_o around the tutorials' step 2: masked_fill, then a plain softmax (a fully
    masked row becomes NaN). x (1, L, D) -> (1, L, D)."""
    _, _, _, q_heads, k_heads, v_heads = model.project_and_split(x, x, x)  # 3 x (1, H, L, Dh)
    scores = q_heads @ k_heads.transpose(-2, -1) / math.sqrt(model.d_k)  # (1, H, L, Dh) @ (1, H, Dh, L) -> (1, H, L, L)
    weights = torch.softmax(apply_form(form, scores, mask), dim=-1)  # (1, H, L, L)
    return model.project_out(model.concat_heads(weights @ v_heads))  # (1, H, L, Dh) -> (1, L, D)


def run_mask_forms(model: MultiHeadAttention, x: Tensor, keep: Tensor) -> list[MaskRun]:
    """Run each implementation of :data:`IMPLEMENTATIONS` with each spelling it takes.

    Args:
        model: supplies the weights of all three.
        x: self-attention input, (1, L, D).
        keep: bool keep-mask (True = may attend), (L, L).

    Returns:
        One run per implementation (:data:`IMPLEMENTATIONS`) and spelling in :data:`FORMS_TAKEN`, in that order.
    """
    forms = mask_forms(keep)
    torch_mha = to_torch_mha(model).eval()
    layers = {
        "ours": lambda mask: model(x, x, x, mask)[0],
        "sdpa": lambda mask: _sdpa_layer(model, x, mask),
        "torch_mha": lambda mask: torch_mha(x, x, x, attn_mask=mask, need_weights=True)[0],
        "torch_mha_fast": lambda mask: torch_mha(x, x, x, attn_mask=mask, need_weights=False)[0],
        "tutorial1": lambda mask: _tutorial_layer(model, x, "keep", mask),
        "tutorial2": lambda mask: _tutorial_layer(model, x, "tutorial2", mask),
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
