"""A label per head, computed from its weights: which relation gets most of its attention.

A relation is a set of key cells per query row -- ``previous token`` is key i-1 for
query i. A head's *share* of a relation is the weight it puts on those cells, averaged
over the rows that count: the relation points somewhere, the mask leaves the row at
least two keys to choose from (row 0 of a causal mask can only look at itself), and,
for a trained model, its loss looked at the row. The label is the relation with the
largest share when that share is at least :data:`LABEL_THRESHOLD` and at least
:data:`LIFT` times what uniform weights would give it; otherwise the head is ``broad``
and the share shown is the best relation's, so ``broad 0.12`` means no relation gets
more than 12 % of the weight.

The positional relations are known for any input (:data:`POSITIONAL`); a weight source
adds its own (``last digit`` for a task, ``[SEP]`` for a BERT tokenizer's text, ``induction``
for a causal checkpoint: :func:`induction_relation`) as bool (L, L) tensors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import Tensor

__all__ = [
    "BROAD",
    "LABEL_THRESHOLD",
    "LIFT",
    "POSITIONAL",
    "HeadLabel",
    "induction_relation",
    "induction_sources",
    "label_heads",
    "positional_relations",
    "shares",
]

LABEL_THRESHOLD = 0.5
LIFT = 2.0
BROAD = "broad"
#: The relations every input has, in the order ties are broken.
POSITIONAL = ("previous token", "next token", "first token", "itself")


@dataclass(frozen=True)
class HeadLabel:
    """A head's label (a relation name or ``broad``) and the share of weight behind it, in 0..1."""

    name: str
    share: float


def positional_relations(length: int, device: torch.device | str | None = None) -> dict[str, Tensor]:
    """The positional relations as (L, L) bool tensors of key cells per query row.

    ``first token`` leaves out row 0 (where it would be ``itself``).
    """
    i = torch.arange(length, device=device).view(-1, 1)  # (L, 1)
    j = torch.arange(length, device=device).view(1, -1)  # (1, L)
    return {
        "previous token": j == i - 1,  # (L, L)
        "next token": j == i + 1,
        "first token": (j == 0) & (i > 0),
        "itself": j == i,
    }


def induction_sources(ids: Tensor) -> Tensor:
    """(B, L) token ids -> (B, L): for each i, 1 + the most recent j < i with token j == token i, or -1 (none)."""
    length = ids.size(1)
    same = ids.unsqueeze(2) == ids.unsqueeze(1)  # (B, L, L): token i == token j
    earlier = torch.ones(length, length, dtype=torch.bool, device=ids.device).tril(-1)  # (L, L): j < i
    positions = torch.arange(length, device=ids.device)
    candidates = torch.where(same & earlier, positions, torch.full_like(positions, -1))  # (B, L, L)
    latest = candidates.amax(dim=2)  # (B, L)
    return torch.where(latest >= 0, latest + 1, latest)


def induction_relation(ids: Tensor) -> Tensor:
    """The ``induction`` relation of one sequence of token ids (L,): from each row, the key right after
    the most recent earlier copy of the row's token (rows whose token did not occur before point nowhere).

    Returns:
        (L, L) bool.
    """
    source = induction_sources(ids.view(1, -1))[0]  # (L,)
    keys = torch.arange(ids.numel(), device=ids.device)  # (L,)
    return (keys.view(1, -1) == source.view(-1, 1)) & (source.view(-1, 1) >= 0)  # (L, L)


def shares(weights: Tensor, relation: Tensor, rows: Tensor) -> Tensor:
    """Each head's mean weight on the relation's cells, over the rows that count.

    Args:
        weights: (H, Lq, Lk) softmax weights (or any (H, Lq, Lk) with rows summing to 1).
        relation: (Lq, Lk) bool, the cells the relation points at.
        rows: (Lq,) bool, the rows to count (the relation is left out where it points nowhere).

    Returns:
        (H,) float64; 0 for every head when no row counts.
    """
    counted = rows & relation.any(dim=-1)  # (Lq,)
    if not bool(counted.any()):
        return torch.zeros(weights.size(0), dtype=torch.float64)
    on_relation = (weights.cpu().double() * relation.cpu()).sum(dim=-1)  # (H, Lq): float64 on the CPU (mps has none)
    return on_relation[:, counted.cpu()].mean(dim=-1)  # (H,)


def label_heads(
    weights: Tensor,
    allowed: Tensor | None = None,
    relations: Mapping[str, Tensor] | None = None,
    rows: Tensor | None = None,
    positional: bool = True,
) -> tuple[HeadLabel, ...]:
    """One :class:`HeadLabel` per head (see the module docstring).

    Args:
        weights: (H, Lq, Lk) weights of one input (self-attention: Lq == Lk).
        allowed: bool keep-mask broadcastable to (Lq, Lk); ``None``: every key is allowed.
        relations: a source's own relations, name -> (Lq, Lk) bool; checked after the positional ones.
        rows: (Lq,) bool, the rows a training loss looked at (``None``: all rows).
        positional: check the sequence's :data:`POSITIONAL` relations; ``False`` where the order of the tokens
            is not the input's (an image's patches: ``relations`` then hold the grid's,
            :func:`mha.vision.patches.grid_relations`).
    """
    num_heads, length_q, length_k = weights.shape
    device = weights.device
    keep = torch.ones(length_q, length_k, dtype=torch.bool, device=device)  # (Lq, Lk)
    if allowed is not None:
        keep = keep & allowed.to(device).reshape(-1, *allowed.shape[-2:]).all(dim=0)  # (Lq, Lk)
    counted = keep.sum(dim=-1) >= 2  # (Lq,): rows with a choice to make
    if rows is not None:
        counted &= rows.to(device)
    uniform = (keep / keep.sum(dim=-1, keepdim=True).clamp(min=1)).unsqueeze(0)  # (1, Lq, Lk)
    candidates = {**(positional_relations(length_q, device) if positional else {}), **(relations or {})}
    names = list(candidates)
    table = torch.stack([shares(weights, cells.to(device), counted) for cells in candidates.values()])  # (R, H)
    baseline = torch.stack([shares(uniform, cells.to(device), counted)[0] for cells in candidates.values()])  # (R,)
    labels = []
    for head in range(num_heads):
        best = int(table[:, head].argmax())  # the first of equal shares: positional relations win ties
        share = float(table[best, head])
        learned = share >= LABEL_THRESHOLD and share >= LIFT * float(baseline[best])
        labels.append(HeadLabel(names[best] if learned else BROAD, share))
    return tuple(labels)
