"""Why divide by √d_k: the variance of q·k grows with d_k, and softmax saturates without the scale.

The argument of "Attention Is All You Need" (footnote 4): if the components of q and k
are independent with mean 0 and variance 1, then q·k = Σ q_i k_i has mean 0 and
variance d_k. Here q and k are drawn exactly so, and the variance is measured.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from mha.functional import scaled_dot_product_attention
from mha.tokens import embed_tokens

__all__ = [
    "D_K_VALUES",
    "SCALING_MODES",
    "ScalingStats",
    "example_weights",
    "row_entropy",
    "scaling_stats",
    "score_scale",
]

SCALING_MODES = ("scaled", "unscaled", "temperature")
D_K_VALUES = (16, 32, 64, 128, 256, 512)


def score_scale(mode: str, d_k: int, temperature: float = 1.0) -> float:
    """The multiplier of q·k: ``1/√d_k`` (scaled), ``1`` (unscaled) or ``1/(τ·√d_k)`` (temperature τ)."""
    if mode == "scaled":
        return 1.0 / math.sqrt(d_k)
    if mode == "unscaled":
        return 1.0
    if mode == "temperature":
        if temperature <= 0:
            raise ValueError(f"temperature must be positive, got temperature={temperature}")
        return 1.0 / (temperature * math.sqrt(d_k))
    raise ValueError(f"unknown scaling mode {mode!r}; choose one of {', '.join(SCALING_MODES)}")


def row_entropy(weights: Tensor) -> Tensor:
    """Shannon entropy in bits of each softmax row (the main page's unit); ``0 · log 0`` counts as 0.

    0 bits = all weight on one key; log2(Lk) bits = spread evenly over Lk keys.

    Shape: (..., Lk) -> (...).
    """
    return -(weights * weights.clamp_min(1e-30).log2()).sum(dim=-1)


@dataclass(frozen=True)
class ScalingStats:
    """What the softmax sees at one d_k, averaged over many random query rows."""

    d_k: int
    variance_raw: float  # measured Var(q·k); the theory says d_k
    variance_scaled: float  # measured Var(q·k · scale)
    entropy: float  # mean row entropy of the weights, bits; log2(num_keys) = uniform
    max_weight: float  # mean of each row's largest weight; 1 = one-hot
    entropy_uniform: float  # log2(num_keys) bits, the largest possible entropy


def scaling_stats(
    mode: str,
    temperature: float = 1.0,
    d_k_values: Sequence[int] = D_K_VALUES,
    num_queries: int = 256,
    num_keys: int = 32,
    seed: int = 0,
) -> list[ScalingStats]:
    """Measure Var(q·k), softmax entropy and max weight for each d_k, with q, k ~ N(0, 1).

    Args:
        mode, temperature: how the scores are scaled (see :func:`score_scale`).
        d_k_values: the head sizes to try.
        num_queries: query rows per d_k (the statistics average over them).
        num_keys: keys per row (the softmax length).
        seed: the same seed gives the same numbers.

    Returns:
        One :class:`ScalingStats` per d_k, in the order given.
    """
    generator = torch.Generator().manual_seed(seed)
    stats = []
    for d_k in d_k_values:
        q = torch.randn(num_queries, d_k, generator=generator, device="cpu")  # (Lq, Dh)
        k = torch.randn(num_keys, d_k, generator=generator, device="cpu")  # (Lk, Dh)
        scale = score_scale(mode, d_k, temperature)
        raw = q @ k.T  # (Lq, Dh) @ (Dh, Lk) -> (Lq, Lk)
        _, weights = scaled_dot_product_attention(q, k, k, scale=scale)  # weights (Lq, Lk)
        stats.append(
            ScalingStats(
                d_k=d_k,
                variance_raw=float(raw.var()),
                variance_scaled=float((raw * scale).var()),
                entropy=float(row_entropy(weights).mean()),
                max_weight=float(weights.max(dim=-1).values.mean()),
                entropy_uniform=math.log2(num_keys),
            )
        )
    return stats


def example_weights(tokens: Sequence[str], d_k: int, mode: str, temperature: float = 1.0, seed: int = 0) -> Tensor:
    """Attention weights of one head for ``tokens``, with queries and keys ~ N(0, 1) per token.

    The queries are the tokens' seeded embeddings; the keys use the next seed, so q and k are
    independent like in the footnote's argument (a trained model learns its own).

    Shape:
        (L, L).
    """
    q = embed_tokens(tokens, d_k, seed)  # (L, Dh)
    k = embed_tokens(tokens, d_k, seed + 1)  # (L, Dh)
    _, weights = scaled_dot_product_attention(q, k, k, scale=score_scale(mode, d_k, temperature))  # (L, L)
    return weights
