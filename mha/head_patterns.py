"""Pattern search over every head of every layer: a previous-token score and an induction score per head.

* **Previous-token score**: the mean, over the queries i >= 1 of a text, of the weight on key i-1.
  A head that always looks one token back scores 1; uniform causal weights score the mean of
  1/(i+1).
* **Induction score** (Olsson et al. 2022, "In-context Learning and Induction Heads"; essentially the
  measurement of ARENA's TransformerLens exercises, which average 10 sequences drawn with repeats allowed after a
  BOS, and whose diagonal also takes the first copy's last two queries; TransformerLens's Main Demo has no BOS and
  takes one): on one seeded sequence of n distinct random tokens
  repeated once, r_0 .. r_{n-1} r_0 .. r_{n-1} (after a prefix such as a BOS token), the mean over the
  second copy's positions of the weight on the token right after the same token's earlier copy: from
  position ``start + n + t`` to ``start + t + 1``. Nothing in the tokens' meaning predicts that key;
  only a head that finds "where was my token before, and what came next" looks there.

Each score reads a checkpoint's own softmax weights ``(layers, H, L, L)`` from one forward pass
(``output_attentions``); nothing here runs a model. Shape legend: H heads, L tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

__all__ = [
    "HeadPatterns",
    "RepeatedSequence",
    "causal_uniform",
    "head_patterns",
    "induction_scores",
    "previous_token_scores",
    "repeated_sequence",
]


@dataclass(frozen=True)
class RepeatedSequence:
    """``prefix``, n distinct random tokens, the same n tokens again, ``suffix``: the induction score's input."""

    ids: Tensor  # (L,) long
    start: int  # the position of the first copy's first token (= the prefix's length)
    half: int  # n, the tokens of one copy

    @property
    def queries(self) -> Tensor:
        """(n,): the second copy's positions."""
        return torch.arange(self.half, device=self.ids.device) + self.start + self.half

    @property
    def targets(self) -> Tensor:
        """(n,): for each query, the position right after its token's earlier copy."""
        return torch.arange(self.half, device=self.ids.device) + self.start + 1


def repeated_sequence(
    candidates: Tensor, half: int, seed: int, prefix: Sequence[int] = (), suffix: Sequence[int] = ()
) -> RepeatedSequence:
    """``half`` distinct tokens drawn from ``candidates`` (seeded: the same for the same arguments), twice.

    Args:
        candidates: (V,) token ids to draw from (a vocabulary less its special tokens).
        half: n, at least 2 and at most V.
        seed: the draw's seed (a private ``torch.Generator``; the global RNG is untouched).
        prefix, suffix: ids put before and after the two copies (a BOS token, a tokenizer's [CLS] and [SEP]).

    Raises:
        ValueError: ``half`` below 2 or above the candidates' count.
    """
    if not 2 <= half <= candidates.numel():
        raise ValueError(f"half must be from 2 to the {candidates.numel()} candidates, got half={half}")
    generator = torch.Generator().manual_seed(seed)  # drawn on the CPU: the same tokens whatever the run's device
    order = torch.randperm(candidates.numel(), generator=generator, device="cpu")  # (V,)
    drawn = candidates.cpu()[order[:half]]  # (n,): distinct tokens
    ends = [torch.tensor(ids, dtype=torch.long, device="cpu") for ids in (prefix, suffix)]
    ids = torch.cat([ends[0], drawn, drawn, ends[1]])  # (L,) = (len(prefix) + 2n + len(suffix),), on the CPU
    return RepeatedSequence(ids, len(prefix), half)


def previous_token_scores(maps: Tensor) -> Tensor:
    """Each head's mean weight on key i-1 over the queries i >= 1.

    Args:
        maps: (layers, H, L, L) softmax weights, L >= 2.

    Returns:
        (layers, H) float64.
    """
    if maps.size(-1) < 2:
        raise ValueError(f"a previous-token score needs at least 2 tokens, got maps of shape {list(maps.shape)}")
    below = torch.diagonal(maps.double(), offset=-1, dim1=-2, dim2=-1)  # (layers, H, L-1): [i, i-1] for i = 1..L-1
    return below.mean(dim=-1)  # (layers, H)


def induction_scores(maps: Tensor, sequence: RepeatedSequence) -> Tensor:
    """Each head's mean weight, from the second copy's tokens, on the token after their earlier copy.

    Args:
        maps: (layers, H, L, L) softmax weights on ``sequence.ids``.

    Returns:
        (layers, H) float64.
    """
    if maps.size(-1) != sequence.ids.numel():
        raise ValueError(f"maps of shape {list(maps.shape)} are not over the {sequence.ids.numel()} tokens")
    picked = maps.double()[:, :, sequence.queries, sequence.targets]  # (layers, H, n): [start+n+t, start+t+1]
    return picked.mean(dim=-1)  # (layers, H)


def causal_uniform(length: int) -> Tensor:
    """Uniform weights under the causal mask: row i gives 1/(i+1) to keys 0..i. Shape (1, 1, L, L), float64."""
    keep = torch.ones(length, length, dtype=torch.float64, device="cpu").tril()  # (L, L): float64 on the CPU
    return (keep / keep.sum(dim=-1, keepdim=True)).view(1, 1, length, length)  # (1, 1, L, L)


@dataclass(frozen=True)
class HeadPatterns:
    """Both scores of every head of every layer, and what uniform causal weights would score."""

    previous: Tensor  # (layers, H) float64, on the learner's text
    induction: Tensor  # (layers, H) float64, on the repeated random sequence
    half: int  # the random tokens of one copy
    uniform_previous: float
    uniform_induction: float


def head_patterns(text_maps: Tensor, sequence: RepeatedSequence, induction: Tensor) -> HeadPatterns:
    """The pattern search's result from a text's weights and the induction scores (:func:`induction_scores`).

    Args:
        text_maps: (layers, H, L, L) softmax weights on the learner's text.
        sequence: the repeated sequence the induction scores were measured on.
        induction: (layers, H) induction scores.
    """
    return HeadPatterns(
        previous=previous_token_scores(text_maps),  # (layers, H)
        induction=induction.double(),
        half=sequence.half,
        uniform_previous=float(previous_token_scores(causal_uniform(text_maps.size(-1)))[0, 0]),
        uniform_induction=float(induction_scores(causal_uniform(sequence.ids.numel()), sequence)[0, 0]),
    )
