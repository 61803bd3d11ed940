"""What the reviews' characters say without attention: logistic regression on a bag of characters, in torch.

Shape legend: N reviews, V the vocabulary (the training split's, :mod:`mha.text.reviews`), K = 2 classes.

    counts[n, v] = how often character v occurs in review n      (N, V); [PAD], [CLS] and [UNK] not counted
    logits = counts W + b                                         (N, K)

fitted on the training split by L-BFGS (full batch, from zeros: the same weights every time) with an L2 penalty
:data:`L2` on W, chosen by the accuracy on the validation split among 0, 1e-4, 1e-3 and 1e-2. No order, no
attention: what the Transformer reaches beyond it is what reading the characters in context adds.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor
from torch.nn import functional as F

from mha.text.reviews import LABELS, SPECIALS, Reviews

__all__ = ["BASELINE_HELD_OUT", "L2", "BaselineResult", "bag_of_characters"]

L2 = 1e-3  # the penalty on W (chosen on the validation split)
#: :func:`bag_of_characters`'s accuracy on the held-out split, as the page states it (``tests/test_reviews.py``
#: fits it again and compares).
BASELINE_HELD_OUT = 0.822
_ITERATIONS = 200  # L-BFGS iterations


@dataclass(frozen=True)
class BaselineResult:
    """The bag of characters' accuracy on each split (shares in [0, 1])."""

    train: float
    validation: float
    held_out: float


def _counts(reviews: Reviews, split: str) -> Tensor:
    """(N, L) ids of ``split`` -> (N, V) character counts, the special tokens' columns zero."""
    ids = reviews.ids[reviews.splits[split]]  # (N, L)
    counts = torch.zeros(ids.size(0), len(reviews.vocab), device=ids.device)  # (N, V)
    counts.scatter_add_(1, ids, torch.ones(ids.shape, device=ids.device))
    counts[:, : len(SPECIALS)] = 0
    return counts


def bag_of_characters(reviews: Reviews, l2: float = L2) -> BaselineResult:
    """Fit the bag of characters on the training split and measure it on each split (about a second, one thread)."""
    x, y = _counts(reviews, "train"), reviews.labels[reviews.splits["train"]]
    weight = torch.zeros(x.size(1), len(LABELS), requires_grad=True, device=x.device)  # (V, K)
    bias = torch.zeros(len(LABELS), requires_grad=True, device=x.device)
    optimizer = torch.optim.LBFGS([weight, bias], max_iter=_ITERATIONS, line_search_fn="strong_wolfe")

    def closure() -> Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(x @ weight + bias, y) + l2 * weight.pow(2).sum()  # (N, V) @ (V, K) -> (N, K)
        loss.backward()
        return loss

    with torch.enable_grad():
        optimizer.step(closure)

    def accuracy(split: str) -> float:
        with torch.no_grad():
            logits = _counts(reviews, split) @ weight + bias  # (N, K)
        return float((logits.argmax(dim=1) == reviews.labels[reviews.splits[split]]).float().mean())

    return BaselineResult(accuracy("train"), accuracy("validation"), accuracy("held_out"))
