"""Token inputs for the labs: the playground's own embeddings (:func:`mha.sources.seeded.embed_inputs`), on the CPU.

Labels for the token axes are :func:`mha.tokens.token_labels`, the same as on the main page.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from mha.config import AttentionConfig
from mha.sources.seeded import embed_inputs

__all__ = ["token_inputs"]


def token_inputs(tokens: Sequence[str], d_model: int, seed: int = 0) -> Tensor:
    """Embeddings of ``tokens`` (seeded per token) plus sinusoidal positions, as a batch of one, in float32.

    Exactly what the playground feeds its layer for the same tokens, ``d_model`` and seed.

    Shape:
        (1, L, d_model).
    """
    config = AttentionConfig(d_model=d_model, num_heads=1, seed=seed)  # the head count plays no part here
    return embed_inputs(list(tokens), config, torch.device("cpu"))  # (1, L, D)
