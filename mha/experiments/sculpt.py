"""Pattern sculpting: heads whose W_q, W_k are written by hand, not learned.

The input is nothing but the sinusoidal positional encodings PE (no words), so every pattern
comes from the weights. Each head reads the first d_k features of PE: pairs
(sin(ω·p), cos(ω·p)) with the highest frequencies ω. Two facts do all the work:

- PE_i · PE_j = Σ cos(ω·(i - j)) over the pairs: largest when i = j;
- rotating each pair by the angle -ω turns PE_i into PE_{i-1} (a linear map, so a matrix).

From them: ``self`` (W_q = W_k = the feature selection: q_i·k_j peaks at j = i),
``previous`` (W_q also rotates by one step back: peaks at j = i - 1), ``first`` (W_q = 0 and
the bias b_q = PE_0: every query asks for position 0), ``uniform`` (W_q = 0: all scores equal).
``sharpness`` multiplies W_q and b_q: larger scores, peakier softmax.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from mha.masks import causal_mask
from mha.module import MultiHeadAttention
from mha.tokens import positional_encoding
from mha.trace import AttentionTrace

__all__ = ["PATTERNS", "pattern_projection", "run_sculpted", "sculpted_model", "shift_rotation"]

PATTERNS = ("self", "previous", "first", "uniform")


def shift_rotation(d_k: int, d_model: int, shift: int) -> Tensor:
    """The matrix R with R · PE_p[:d_k] = PE_{p+shift}[:d_k]: a rotation by ω·shift in each (sin, cos) pair.

    Shape: (d_k, d_k); d_k must be even.
    """
    if d_k % 2:
        raise ValueError(f"d_k must be even to hold (sin, cos) pairs, got d_k={d_k}")
    rotation = torch.zeros(d_k, d_k, device="cpu")
    for pair in range(d_k // 2):
        angle = shift * math.exp(-math.log(10000.0) * 2 * pair / d_model)  # ω_pair · shift
        c, s = math.cos(angle), math.sin(angle)
        i = 2 * pair
        # sin(ω(p+δ)) = sin(ωp)·cos(ωδ) + cos(ωp)·sin(ωδ);  cos(ω(p+δ)) = cos(ωp)·cos(ωδ) - sin(ωp)·sin(ωδ)
        rotation[i : i + 2, i : i + 2] = torch.tensor([[c, s], [-s, c]], device=rotation.device)
    return rotation


def pattern_projection(pattern: str, d_k: int, d_model: int, sharpness: float) -> dict[str, Tensor]:
    """One head's slices of W_q, b_q, W_k, b_k for a pattern (see the module docstring).

    Returns:
        ``{"W_q": (Dh, D), "b_q": (Dh,), "W_k": (Dh, D), "b_k": (Dh,)}``.
    """
    select = torch.eye(d_k, d_model, device="cpu")  # (Dh, D): keeps the first Dh features of PE
    zero_bias = torch.zeros(d_k, device="cpu")
    if pattern == "self":
        w_q, b_q = sharpness * select, zero_bias
    elif pattern == "previous":
        w_q, b_q = sharpness * shift_rotation(d_k, d_model, -1) @ select, zero_bias  # (Dh, Dh) @ (Dh, D)
    elif pattern == "first":
        w_q, b_q = torch.zeros(d_k, d_model, device="cpu"), sharpness * positional_encoding(1, d_model)[0, :d_k]
    elif pattern == "uniform":
        w_q, b_q = torch.zeros(d_k, d_model, device="cpu"), zero_bias
    else:
        raise ValueError(f"unknown pattern {pattern!r}; choose one of {', '.join(PATTERNS)}")
    return {"W_q": w_q, "b_q": b_q, "W_k": select, "b_k": zero_bias}


def sculpted_model(d_model: int, sharpness: float, patterns: tuple[str, ...] = PATTERNS) -> MultiHeadAttention:
    """A MultiHeadAttention with one hand-built head per pattern; W_v and W_o are the identity."""
    num_heads = len(patterns)
    model = MultiHeadAttention(d_model, num_heads)
    d_k = model.d_k
    with torch.no_grad():
        for linear in (model.W_v, model.W_o):
            linear.weight.copy_(torch.eye(d_model, device=linear.weight.device))
            linear.bias.zero_()
        for h, pattern in enumerate(patterns):
            rows = slice(h * d_k, (h + 1) * d_k)
            piece = pattern_projection(pattern, d_k, d_model, sharpness)
            model.W_q.weight[rows] = piece["W_q"]
            model.W_q.bias[rows] = piece["b_q"]
            model.W_k.weight[rows] = piece["W_k"]
            model.W_k.bias[rows] = piece["b_k"]
    return model.eval().requires_grad_(False)


def run_sculpted(length: int, d_model: int, sharpness: float, causal: bool = False) -> AttentionTrace:
    """Run the sculpted heads on positional encodings alone.

    Shape:
        trace.weights (1, 4, L, L); input (1, L, D) = PE.
    """
    model = sculpted_model(d_model, sharpness)
    x = positional_encoding(length, d_model).unsqueeze(0)  # (1, L, D)
    mask = causal_mask(length) if causal else None
    with torch.inference_mode():
        return model.forward_traced(x, x, x, mask)
