"""Token inputs for the labs: the playground's own embeddings (:func:`mha.sources.seeded.embed_inputs`), on the CPU.

Labels for the token axes are :func:`mha.tokens.token_labels`, the same as on the main page.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from mha.config import AttentionConfig
from mha.sources.seeded import build_model, embed_inputs

__all__ = ["token_heads", "token_inputs"]


def token_inputs(tokens: Sequence[str], d_model: int, seed: int = 0) -> Tensor:
    """Embeddings of ``tokens`` (seeded per token) plus sinusoidal positions, as a batch of one, in float32.

    Exactly what the playground feeds its layer for the same tokens, ``d_model`` and seed.

    Shape:
        (1, L, d_model).
    """
    config = AttentionConfig(d_model=d_model, num_heads=1, seed=seed)  # the head count plays no part here
    return embed_inputs(list(tokens), config, torch.device("cpu"))  # (1, L, D)


def token_heads(tokens: Sequence[str], d_model: int, num_heads: int, seed: int = 0) -> tuple[Tensor, Tensor, Tensor]:
    """q, k, v per head of the playground's seeded layer (:func:`mha.sources.seeded.build_model`) on ``tokens``.

    Shape:
        three (1, H, L, d_model / H).
    """
    model = build_model(d_model, num_heads, seed)
    x = token_inputs(tokens, d_model, seed)  # (1, L, D)
    with torch.inference_mode():
        _, _, _, q, k, v = model.project_and_split(x, x, x)  # (1, H, L, Dh) each
    return q, k, v
