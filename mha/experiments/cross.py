"""Cross-attention: queries from one sequence, keys and values from another.

In a translation model the decoder's tokens (the sentence being written) ask, and the
encoder's tokens (the source sentence) answer. Q has L_q rows, K and V have L_k rows, so
the score matrix is L_q × L_k and the output has one row per query token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from mha.experiments.inputs import token_inputs
from mha.masks import PAD_TOKENS, padding_mask
from mha.reference import TorchCheck, compare_with_torch
from mha.sources.seeded import build_model
from mha.trace import AttentionTrace

__all__ = ["CrossRun", "run_cross_attention"]


@dataclass(frozen=True)
class CrossRun:
    """One cross-attention pass and its check against nn.MultiheadAttention."""

    query_tokens: list[str]
    key_tokens: list[str]
    mask: Tensor | None  # padding keep-mask (1, 1, 1, Lk) when a key is a pad token
    trace: AttentionTrace
    check: TorchCheck


def run_cross_attention(
    query_tokens: Sequence[str], key_tokens: Sequence[str], d_model: int, num_heads: int, seed: int = 0
) -> CrossRun:
    """Attend from ``query_tokens`` to ``key_tokens`` (both get their own positions 0, 1, ...).

    Pad tokens among the keys (``[PAD]``) are masked out.

    Shape:
        trace.weights (1, H, Lq, Lk), trace.output (1, Lq, D).
    """
    model = build_model(d_model, num_heads, seed)
    x_query = token_inputs(query_tokens, d_model, seed)  # (1, Lq, D)
    x_key = token_inputs(key_tokens, d_model, seed)  # (1, Lk, D)
    mask = padding_mask(key_tokens) if any(token in PAD_TOKENS for token in key_tokens) else None  # (1, 1, 1, Lk)
    with torch.inference_mode():
        trace = model.forward_traced(x_query, x_key, x_key, mask)
    check = compare_with_torch(model, x_query, x_key, x_key, mask, trace.output, trace.weights)
    return CrossRun(list(query_tokens), list(key_tokens), mask, trace, check)
