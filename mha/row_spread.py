"""How alike the rows of a (L, D) matrix are: the measure behind "why do the rows of steps 3 and 4 look alike?".

If a head's weights are all equal (1/L over the keys a token may attend), its context row is
exactly the average of those keys' V rows: with no mask, the same row for every token. Random
(untrained) W_q and W_k give weights close to uniform, so the concatenated contexts of step 3
-- and the output of step 4, one linear map of them -- have rows close to one average row.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor

__all__ = ["ALIKE_RATIO", "NEAR_UNIFORM_RATIO", "RowSpread", "near_uniform_bound", "row_spread"]

#: Rows count as alike when no cell is further from its column's mean than this share of the largest value.
ALIKE_RATIO = 1 / 3
#: Weights count as close to uniform when none is above this many times the uniform weight 1/L.
NEAR_UNIFORM_RATIO = 4


@dataclass(frozen=True)
class RowSpread:
    """The largest distance of a cell from its column's mean (``spread``) and the largest |value| (``size``)."""

    spread: float
    size: float

    @property
    def alike(self) -> bool:
        """Every row is close to the average row: ``spread <= ALIKE_RATIO * size``."""
        return self.spread <= ALIKE_RATIO * self.size


def row_spread(matrix: Tensor) -> RowSpread:
    """How far the rows of ``matrix`` are from their average row.

    Args:
        matrix: one sentence's rows, shape (L, D).

    Returns:
        ``spread = max |matrix - mean of its rows|`` and ``size = max |matrix|``.
    """
    average = matrix.mean(dim=0, keepdim=True)  # (1, D)
    return RowSpread(spread=float((matrix - average).abs().max()), size=float(matrix.abs().max()))


def near_uniform_bound(weights: Tensor) -> float | None:
    """The bound ``NEAR_UNIFORM_RATIO / L`` when every weight is within it: the weights are close to uniform.

    Args:
        weights: softmax weights over L keys, shape (..., Lq, L).

    Returns:
        The bound, or ``None`` when a weight is above it, or when L is too short for the bound to mean
        anything (it must be at most 1/2: with L < 2 · NEAR_UNIFORM_RATIO any weight would pass).
    """
    length = weights.size(-1)
    bound = NEAR_UNIFORM_RATIO / length
    if bound > 1 / 2 or float(weights.max()) > bound:
        return None
    return bound
