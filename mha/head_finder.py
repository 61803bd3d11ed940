"""The head finder: which heads of which layers look from one token to another.

Given every head's weights in every layer (layers, H, L, L) -- a checkpoint's own
``attentions`` -- and a query and a key position, each head's weight on that key from
that query, as a (layers, H) table, and the heads ranked by it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

__all__ = ["RankedHead", "find_token", "head_weights", "rank_heads", "rank_table"]


@dataclass(frozen=True)
class RankedHead:
    """One head of one layer and the weight it puts on the key from the query."""

    layer: int
    head: int
    weight: float


def head_weights(maps: Tensor, query: int, key: int) -> Tensor:
    """Each head's weight on ``key`` from ``query``.

    Args:
        maps: (layers, H, L, L) softmax weights.
        query: the query row, 0 .. L-1.
        key: the key column, 0 .. L-1.

    Returns:
        (layers, H).
    """
    length = maps.size(-1)
    if not (0 <= query < length and 0 <= key < length):
        raise IndexError(f"query={query} and key={key} must be positions 0..{length - 1}")
    return maps[:, :, query, key]  # (layers, H)


def rank_table(table: Tensor) -> tuple[RankedHead, ...]:
    """Every head of a (layers, H) table of values, the largest first (ties: lower layer, then lower head)."""
    flat = table.double().flatten()  # (layers * H,)
    heads = table.size(1)
    order = torch.argsort(-flat, stable=True)  # (layers * H,)
    return tuple(RankedHead(int(i) // heads, int(i) % heads, float(flat[i])) for i in order)


def rank_heads(maps: Tensor, query: int, key: int) -> tuple[RankedHead, ...]:
    """Every head of every layer, the largest weight on ``key`` from ``query`` first (ties: lower layer, head)."""
    return rank_table(head_weights(maps, query, key))  # (layers, H) ranked


def find_token(tokens: Sequence[str], wanted: str) -> int | None:
    """The first position whose token is ``wanted`` (case, a word piece's ``##`` and a byte-level BPE token's
    leading space ignored), or ``None``."""
    target = wanted.strip().lower()
    for position, token in enumerate(tokens):
        if token.strip().lower().removeprefix("##") == target:
            return position
    return None
