"""Token inputs shared by the labs: deterministic embeddings plus sinusoidal positions."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from mha.tokens import embed_tokens, positional_encoding

__all__ = ["token_inputs", "token_labels"]


def token_inputs(tokens: Sequence[str], d_model: int, seed: int = 0, dtype: torch.dtype = torch.float32) -> Tensor:
    """Embeddings of ``tokens`` (seeded per token) plus positional encodings, as a batch of one.

    Shape:
        (1, L, d_model).
    """
    x = embed_tokens(tokens, d_model, seed, dtype=dtype) + positional_encoding(len(tokens), d_model, dtype=dtype)
    return x.unsqueeze(0)  # (L, D) -> (1, L, D)


def token_labels(tokens: Sequence[str]) -> list[str]:
    """``"0:the", "1:cat", ...``: distinct axis labels even when a token repeats."""
    return [f"{i}:{token}" for i, token in enumerate(tokens)]
