"""Dropout on the attention weights, as a tutorial layer's ``nn.Dropout(p)`` applies it during training.

The tutorials' layer computes ``weights = softmax(scores)`` then ``weights = self.dropout(weights)``
before ``weights @ V``. In training mode each weight is zeroed with probability ``p`` and the
others are scaled by ``1 / (1 - p)`` (so every row still sums to 1 on average); ``model.eval()``
turns it off. The playground's layer has no dropout: it always shows evaluation mode.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

__all__ = ["DropoutExample", "dropout_example", "training_dropout"]


def training_dropout(weights: Tensor, p: float, seed: int = 0) -> Tensor:
    """``F.dropout(weights, p, training=True)`` drawn from a private generator seeded with ``seed``.

    The same numbers as ``torch.manual_seed(seed); F.dropout(weights, p, training=True)``
    (on the CPU), without touching the global random state (the server is multi-threaded).

    Args:
        weights: attention weights, any shape, e.g. (Lq, Lk).
        p: the drop probability, 0 <= p < 1.
        seed: the private generator's seed.

    Returns:
        A new tensor of ``weights``' shape: each weight zeroed with probability ``p``, the rest times 1/(1 - p).
    """
    if not 0 <= p < 1:
        raise ValueError(f"dropout p must be in [0, 1), got p={p}")
    generator = torch.Generator(device=weights.device).manual_seed(seed)
    keep = torch.empty_like(weights).bernoulli_(1 - p, generator=generator)  # 1 = kept, 0 = dropped
    return weights * (keep * (1 / (1 - p)))


@dataclass(frozen=True)
class DropoutExample:
    """One row of weights before and after training-mode dropout: head ``head``'s row of query ``query``.

    Shape:
        row, dropped: (Lk,).
    """

    head: int
    query: int
    p: float
    row: Tensor
    dropped: Tensor


def dropout_example(weights: Tensor, p: float, seed: int, head: int = 0) -> DropoutExample:
    """Head ``head``'s row of the last query that may attend a key (under a causal mask it attends the most keys),
    and :func:`training_dropout` of it.

    Args:
        weights: (H, Lq, Lk) softmax weights; p: the drop probability; seed: the private generator's seed.
    """
    head_weights = weights[head]  # (Lq, Lk)
    attending = (head_weights.sum(dim=-1) > 0).nonzero()  # (rows, 1): queries with a key they may attend
    query = int(attending[-1]) if len(attending) else head_weights.size(0) - 1
    row = head_weights[query]  # (Lk,)
    return DropoutExample(head, query, p, row, training_dropout(row, p, seed=seed))
