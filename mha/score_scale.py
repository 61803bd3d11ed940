"""Why step 2 divides by √d_k: how the scores' spread follows the spread of Q's and K's entries and d_k.

A score ``q · k`` is a sum of d_k products ``q_i k_i``. If the entries are independent with mean 0 (the
paper's assumption, Vaswani et al. 2017, footnote 4) and standard deviations σ_q and σ_k, each product has
standard deviation σ_q·σ_k and the sum about σ_q·σ_k·√d_k; dividing by √d_k leaves about σ_q·σ_k, whatever d_k
is. That is variance 1 only when σ_q·σ_k = 1: ``nn.Linear``'s default initialisation (weights uniform in
±1/√d_model) gives entries of variance about a third of the input's, so on random weights the scaled scores
spread less than 1.

The entries have means μ_q and μ_k (from the biases and from the inputs' own mean). Independent entries with
means have products of variance (σ_q² + μ_q²)(σ_k² + μ_k²) − μ_q²μ_k², which is what :class:`ScoreSpread`
predicts from; still approximate, since each feature has its own mean (the entries are not draws from one distribution).

When queries line up with their keys (what trained W_q and W_k learn), the entries are not independent: a score
then grows like d_k, and dividing by √d_k leaves a spread that still grows like √d_k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from torch import Tensor

__all__ = ["PREDICTION_SLACK", "ScoreSpread", "score_spread"]

#: How far the scaled scores' spread may stray from :attr:`ScoreSpread.product_std` (as a factor either way) and
#: still be "about" it.
PREDICTION_SLACK = 1.5


@dataclass(frozen=True)
class ScoreSpread:
    """The standard deviations (over every head and cell) of Q's and K's entries and of the raw and scaled scores."""

    d_k: int
    q_std: float
    k_std: float
    raw_std: float
    scaled_std: float
    q_mean: float = 0.0
    k_mean: float = 0.0
    scores: int = 0  # how many scores the spreads are measured over

    @property
    def product_std(self) -> float:
        """A product q_i·k_i's spread for independent entries: √((σ_q² + μ_q²)(σ_k² + μ_k²) − μ_q²μ_k²), which is
        σ_q·σ_k when the means are 0."""
        q_square = self.q_std**2 + self.q_mean**2  # E[q_i²]
        k_square = self.k_std**2 + self.k_mean**2  # E[k_i²]
        return math.sqrt(q_square * k_square - (self.q_mean * self.k_mean) ** 2)

    @property
    def expected_raw_std(self) -> float:
        """The raw scores' spread if the entries were independent: a sum of d_k products, √d_k · :attr:`product_std`."""
        return self.product_std * math.sqrt(self.d_k)

    @property
    def expected_scaled_std(self) -> float:
        """What is left after dividing by √d_k: :attr:`product_std`, the same for every d_k."""
        return self.product_std

    @property
    def prediction_ratio(self) -> float:
        """The scaled scores' spread over its prediction: about 1 when Q's and K's entries are independent."""
        return self.scaled_std / self.expected_scaled_std

    @property
    def independent_enough(self) -> bool:
        """Whether :attr:`product_std` predicts the scaled spread within :data:`PREDICTION_SLACK` (trained W_q and
        W_k that line queries up with their keys make the entries dependent, and the spread larger)."""
        return 1 / PREDICTION_SLACK <= self.prediction_ratio <= PREDICTION_SLACK

    @property
    def wider_than_predicted(self) -> bool:
        """The scaled scores spread more than :data:`PREDICTION_SLACK` times the prediction: queries lined up with
        keys (what trained W_q and W_k learn)."""
        return self.prediction_ratio > PREDICTION_SLACK


def _std(values: Tensor) -> float:
    return float(values.cpu().double().std(correction=0))  # float64 on the CPU (Apple's mps has none)


def score_spread(q_heads: Tensor, k_heads: Tensor, raw_scores: Tensor, scale: float) -> ScoreSpread:
    """The spreads behind step 2's "why divide by √d_k": Q's and K's entries, the scores before and after scaling.

    Args:
        q_heads: the queries split into heads.
        k_heads: the keys split into heads.
        raw_scores: ``q_heads @ k_headsᵀ``.
        scale: ``1 / √d_k``, what the scores are multiplied by.

    Shape:
        q_heads: (H, Lq, Dh); k_heads: (H, Lk, Dh); raw_scores: (H, Lq, Lk).

    Returns:
        Population standard deviations and means (every head together) and d_k = Dh.
    """
    return ScoreSpread(
        d_k=int(q_heads.size(-1)),
        q_std=_std(q_heads),
        k_std=_std(k_heads),
        raw_std=_std(raw_scores),
        scaled_std=_std(raw_scores * scale),  # (H, Lq, Lk)
        q_mean=float(q_heads.cpu().double().mean()),
        k_mean=float(k_heads.cpu().double().mean()),
        scores=raw_scores.numel(),
    )
