"""How alike the rows of a (L, D) matrix are: the measure behind "why do the rows of steps 3 and 4 look alike?".

If a head's weights are all equal (1/L over the keys a token may attend), its context row is
exactly the average of those keys' V rows: with no mask, the same row for every token. Random
(untrained) W_q and W_k give weights close to uniform, so the concatenated contexts of step 3
-- and the output of step 4, one linear map of them -- have rows close to one average row.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor

__all__ = ["ALIKE_RATIO", "RowSpread", "row_spread"]

#: Rows count as alike when no cell is further from its column's mean than this share of the largest value.
ALIKE_RATIO = 1 / 3


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
