"""Head sweep: the same input and the same W_q, W_k, W_v, W_o, split into 1, 2, 4, 8 or 16 heads.

:func:`mha.pipeline.build_model` draws the weights from the seed alone (their shapes do not
depend on the head count), so every run of the sweep holds exactly the same numbers:
only the split changes. d_k = d_model / h shrinks; the parameter count stays 4·d² + 4·d.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from mha.counting import count_parameters, total_parameters
from mha.experiments.inputs import token_inputs
from mha.experiments.scaling import row_entropy
from mha.sources.seeded import build_model

__all__ = ["SWEEP_HEAD_COUNTS", "HeadRun", "head_sweep"]

SWEEP_HEAD_COUNTS = (1, 2, 4, 8, 16)


@dataclass(frozen=True)
class HeadRun:
    """One head count of the sweep."""

    num_heads: int
    d_k: int
    params: int  # counted on the module
    params_formula: int  # 4·d² + 4·d
    weights: Tensor  # (H, L, L)
    output: Tensor  # (L, D)
    entropy: Tensor  # (H,) mean row entropy of each head, bits

    @property
    def weight_entries(self) -> int:
        """Numbers in the weight tensor, H·L²: more heads, more attention maps."""
        return self.weights.numel()


def head_sweep(
    tokens: Sequence[str],
    d_model: int,
    seed: int = 0,
    query_gain: float = 1.0,
    head_counts: Sequence[int] = SWEEP_HEAD_COUNTS,
) -> list[HeadRun]:
    """Run self-attention on ``tokens`` once per head count, with the same weights every time.

    Args:
        tokens: the input tokens (L of them).
        d_model: the model dimension; every head count must divide it.
        seed: seeds the embeddings and the weights.
        query_gain: multiplies W_q (weight and bias), so every score by the same factor. Freshly
            initialised weights give nearly uniform attention; a gain of a few imitates the larger
            scores of a trained model. The same for every head count.
        head_counts: the h values to try.

    Returns:
        One :class:`HeadRun` per head count.

    Raises:
        ValueError: a head count does not divide ``d_model`` (the message names both).
    """
    x = token_inputs(tokens, d_model, seed)  # (1, L, D)
    runs = []
    for num_heads in head_counts:
        model = build_model(d_model, num_heads, seed)
        with torch.no_grad():
            model.W_q.weight.mul_(query_gain)
            model.W_q.bias.mul_(query_gain)
        with torch.inference_mode():
            output, weights = model(x, x, x)  # (1, L, D), (1, H, L, L)
        runs.append(
            HeadRun(
                num_heads=num_heads,
                d_k=model.d_k,
                params=count_parameters(model),
                params_formula=total_parameters(d_model),
                weights=weights[0],
                output=output[0],
                entropy=row_entropy(weights[0]).mean(dim=-1),
            )
        )
    return runs
