"""Rotary position embedding (RoPE): positions put into q and k by rotation, as Hugging Face's Llama does it.

Shape legend: B batch, H heads, L length, Dh head size (even), P = Dh / 2 feature pairs.

Feature i of a head is paired with feature i + Dh/2 (``rotate_half``), not 2i with 2i + 1: the pairing Hugging
Face's Llama, Qwen2 and Mistral code applies to the weights as they are stored on the hub (Meta's own Llama code
pairs 2i with 2i + 1; the conversion to Hugging Face's format reorders W_q's and W_k's rows to match). Pair i turns
by ``position · θ_i`` with ``θ_i = base^(-2i / Dh)``, so the score of a query at position m and a key at position
n depends on the two vectors and on n - m, not on m and n themselves (Su et al. 2021, "RoFormer").
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["apply_rotary_pos_emb", "check_rope", "inverse_frequencies", "rotary_cos_sin", "rotate", "rotate_half"]


def check_rope(head_dim: int, base: float) -> None:
    """Raise ``ValueError`` naming the values unless RoPE can rotate heads of ``head_dim`` with ``base``."""
    if head_dim % 2:
        raise ValueError(
            f"RoPE rotates pairs of features, so d_k must be even, got d_k={head_dim}; "
            "choose d_model and num_heads so that d_model / num_heads is even"
        )
    if isinstance(base, bool) or not isinstance(base, int | float) or base <= 1:
        raise ValueError(f"rope_base must be a number above 1, got rope_base={base!r}")


def inverse_frequencies(head_dim: int, base: float) -> Tensor:
    """θ_i = base^(-2i / Dh) for i = 0 .. Dh/2 - 1: the angle pair i turns by per position, shape (P,), float64, on
    the CPU (float64 work stays there: Apple's mps has none)."""
    return base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64, device="cpu") / head_dim)  # (P,)


def rotary_cos_sin(
    positions: Tensor,
    head_dim: int,
    base: float,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> tuple[Tensor, Tensor]:
    """cos and sin of every position's angles, each feature pair's angle written twice (i and i + Dh/2).

    Args:
        positions: (L,) whole-number positions (0 .. L-1 for a sentence; later positions for a cache).
        head_dim: Dh, even.
        base: θ's base (10000 in Llama 2; 1e5 in SmolLM2; 1e6 in Qwen2.5).
        dtype: the number type of cos and sin.
        device: where cos and sin go (the layer's device); ``None``: ``positions``' device.

    Returns:
        ``(cos, sin)``, each (L, Dh) in ``dtype`` on ``device``. The angles are computed in float64 on the CPU
        whatever the device (Apple's mps has no float64), then moved.
    """
    device = positions.device if device is None else device
    angles = positions.cpu().to(torch.float64)[:, None] * inverse_frequencies(head_dim, base)  # (L, P) on the CPU
    angles = torch.cat((angles, angles), dim=-1)  # (L, P) -> (L, Dh): pair i's angle at i and i + Dh/2
    return angles.cos().to(device, dtype), angles.sin().to(device, dtype)


def rotate_half(x: Tensor) -> Tensor:
    """(x_1, x_2) -> (-x_2, x_1), with x_1 the first Dh/2 features and x_2 the rest: shape (..., Dh) kept."""
    half = x.size(-1) // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)  # (..., Dh/2) twice -> (..., Dh)


def rotate(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """Turn every feature pair (i, i + Dh/2) of ``x`` by its position's angle: ``x · cos + rotate_half(x) · sin``.

    Shape: x (B, H, L, Dh); cos, sin (L, Dh) from :func:`rotary_cos_sin` -> (B, H, L, Dh).
    """
    return x * cos + rotate_half(x) * sin  # (B, H, L, Dh) * (L, Dh) -> (B, H, L, Dh)


def apply_rotary_pos_emb(q: Tensor, k: Tensor, cos: Tensor, sin: Tensor) -> tuple[Tensor, Tensor]:
    """Hugging Face's form: q and k turned by the same angles, cos and sin computed once for both.

    Each takes the first rows of ``cos`` and ``sin``, one per position it holds (q and k of one sentence hold the
    same positions; a cross-attention's q and k may hold fewer or more).

    Shape: q (B, H, Lq, Dh), k (B, Hkv, Lk, Dh), cos and sin (L, Dh) with L >= Lq, Lk -> q, k rotated, shapes kept.
    """
    lq, lk = q.size(-2), k.size(-2)
    return rotate(q, cos[:lq], sin[:lq]), rotate(k, cos[:lk], sin[:lk])  # (B, H, Lq, Dh), (B, Hkv, Lk, Dh)
