"""Lab 14's linear attention at the cases mutation testing (scripts/mutation.sh) found no test for: softmax's
causal weights, ``implied_weights``' default and :func:`compare_on_tokens`, checked against the formulas worked
out here in float64 (softmax(q kᵀ / √d) with j <= i; φ(q)·φ(k) normalised, φ = elu + 1)."""

from __future__ import annotations

import math

import pytest
import torch

from mha.experiments.inputs import token_heads
from mha.experiments.linear import compare_on_tokens, implied_weights, softmax_weights


def _qk(heads: int = 2, length: int = 5, d: int = 4, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(1, heads, length, d, generator=generator, dtype=torch.float64) for _ in range(2))


def _softmax_by_hand(q: torch.Tensor, k: torch.Tensor, causal: bool) -> torch.Tensor:
    """exp(q_i·k_j / √d) / Σ_j' exp(q_i·k_j' / √d) per head and row, over j <= i when causal; (B, H, L, L)."""
    _, heads, length, d = q.shape
    out = torch.zeros(1, heads, length, length, dtype=torch.float64)
    for h in range(heads):
        for i in range(length):
            keys = range(i + 1) if causal else range(length)
            exps = {j: math.exp(float(q[0, h, i] @ k[0, h, j]) / math.sqrt(d)) for j in keys}
            for j, e in exps.items():
                out[0, h, i, j] = e / sum(exps.values())
    return out


def _linear_by_hand(q: torch.Tensor, k: torch.Tensor, causal: bool) -> torch.Tensor:
    """φ(q_i)·φ(k_j) / Σ_j' φ(q_i)·φ(k_j') with φ(x) = x + 1 (x > 0) or exp(x); over j <= i when causal."""
    phi = lambda x: [v + 1 if v > 0 else math.exp(v) for v in x.tolist()]  # noqa: E731
    _, heads, length, _ = q.shape
    out = torch.zeros(1, heads, length, length, dtype=torch.float64)
    for h in range(heads):
        for i in range(length):
            keys = range(i + 1) if causal else range(length)
            sims = {j: sum(a * b for a, b in zip(phi(q[0, h, i]), phi(k[0, h, j]), strict=True)) for j in keys}
            for j, s in sims.items():
                out[0, h, i, j] = s / sum(sims.values())
    return out


@pytest.mark.parametrize("causal", [False, True])
def test_softmax_weights_are_the_softmax_of_the_scaled_scores(causal):
    """Two heads and five positions (H != L, so a head count read as a length would show)."""
    q, k = _qk()
    torch.testing.assert_close(softmax_weights(q, k, causal), _softmax_by_hand(q, k, causal), rtol=1e-9, atol=1e-12)


def test_implied_weights_see_every_key_unless_told_causal():
    q, k = _qk()
    torch.testing.assert_close(implied_weights(q, k), _linear_by_hand(q, k, causal=False), rtol=1e-9, atol=1e-12)
    torch.testing.assert_close(implied_weights(q, k, causal=True), _linear_by_hand(q, k, True), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
def test_compare_on_tokens_measures_the_two_attentions_it_names(causal):
    """The lab's comparison on a sentence: its weights are the two formulas on the seeded layer's q and k, and
    its differences are the largest gaps between them (weights, and outputs = weights @ v)."""
    tokens = ["the", "cat", "sat", "on", "the", "mat"]
    comparison = compare_on_tokens(tokens, d_model=16, num_heads=2, causal=causal, seed=3)
    q, k, v = (t.double() for t in token_heads(tokens, 16, 2, seed=3))  # (1, 2, 6, 8) each
    soft, linear = _softmax_by_hand(q, k, causal), _linear_by_hand(q, k, causal)
    torch.testing.assert_close(comparison.softmax_weights.double(), soft[0], rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(comparison.linear_weights.double(), linear[0], rtol=1e-4, atol=1e-6)
    assert comparison.weight_diff == pytest.approx(float((soft - linear).abs().max()), rel=1e-4, abs=1e-6)
    assert comparison.output_diff == pytest.approx(float((soft @ v - linear @ v).abs().max()), rel=1e-4, abs=1e-6)
    assert comparison.weight_diff > 1e-3  # another function: the two are not the same weights
    assert 0 <= comparison.form_diff < 1e-5  # the running sum and the masked form are one computation
    assert comparison.head_dim == 16 // 2


def test_implied_weights_are_made_on_the_device_of_q_and_k():
    """The causal mask is made where q is (``meta`` stands in for a GPU): a CPU mask would not apply there."""
    q, k = (t.to("meta") for t in _qk())
    assert implied_weights(q, k, causal=True).device.type == "meta"
