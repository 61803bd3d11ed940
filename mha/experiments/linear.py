"""Linear attention (Katharopoulos et al. 2020, "Transformers are RNNs"): softmax's exp(q·k) replaced by a
kernel φ(q)·φ(k) with φ = elu + 1, so that the sum over keys can be done once for every query.

Softmax attention, for query i: out_i = Σ_j exp(q_i·k_j / √d) v_j / Σ_j exp(q_i·k_j / √d): every query
scores every key, an L × L matrix. With a kernel that factorises, sim(q, k) = φ(q)·φ(k):

    out_i = Σ_j (φ(q_i)·φ(k_j)) v_j / Σ_j φ(q_i)·φ(k_j) = φ(q_i)ᵀ (Σ_j φ(k_j) v_jᵀ) / φ(q_i)ᵀ (Σ_j φ(k_j))

and the bracket S = φ(K)ᵀ V is one d × d_v state (and z = Σ_j φ(k_j) one d vector) shared by every query:
O(L · d · d_v) work and no L × L matrix. Causal: query i may read only keys j ≤ i, so S_i and z_i become
running sums, S_i = S_{i-1} + φ(k_i) v_iᵀ: a recurrent network whose state is S (the paper's title).

It is another function, not an approximation of softmax attention that gets closer with more of
something: its weights φ(q_i)·φ(k_j) / Σ_j φ(q_i)·φ(k_j) are not exp(q_i·k_j / √d) / Σ_j ..., and nothing
here tends to them. (The paper uses no 1/√d: φ is applied to q and k as they are.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from mha.experiments.inputs import token_heads
from mha.functional import scaled_dot_product_attention
from mha.masks import causal_mask

__all__ = [
    "LinearComparison",
    "compare_on_tokens",
    "flatter_rows",
    "implied_weights",
    "linear_attention",
    "linear_state",
    "phi",
    "row_entropy",
    "softmax_weights",
]


def phi(x: Tensor) -> Tensor:
    """φ(x) = elu(x) + 1, elementwise: x + 1 for x > 0, exp(x) otherwise (always > 0).

    Written as the two pieces rather than ``elu(x) + 1``: the same function, but for x below about -17.3 float32
    rounds ``exp(x) - 1`` to -1 and ``elu(x) + 1`` to 0, which would leave a query with no weight at all.
    """
    return torch.where(x > 0, x + 1, torch.exp(torch.clamp(x, max=0)))


def linear_state(phi_k: Tensor, v: Tensor, causal: bool = False) -> tuple[Tensor, Tensor]:
    """The state linear attention keeps: S = Σ_j φ(k_j) v_jᵀ and z = Σ_j φ(k_j).

    Args:
        phi_k: φ(K), (B, H, L, d); v: (B, H, L, d_v).
        causal: keep the running sums S_i, z_i at every position i (computed here with cumulative sums; a loop
            over positions, or a kernel, would keep only the current one).

    Returns:
        ``(S, z)``: (B, H, d, d_v) and (B, H, d); causal: (B, H, L, d, d_v) and (B, H, L, d).
    """
    if not causal:
        state = torch.einsum("bhjd,bhje->bhde", phi_k, v)  # S = φ(K)ᵀ V: (B, H, d, d_v)
        return state, phi_k.sum(dim=2)  # z = Σ_j φ(k_j): (B, H, d)
    # φ(k_j) v_jᵀ: (B, H, L, d, 1) * (B, H, L, 1, d_v) -> (B, H, L, d, d_v)
    outer = phi_k.unsqueeze(-1) * v.unsqueeze(-2)
    states = outer.cumsum(dim=2)  # S_i = Σ_{j≤i} φ(k_j) v_jᵀ: (B, H, L, d, d_v)
    return states, phi_k.cumsum(dim=2)  # z_i = Σ_{j≤i} φ(k_j): (B, H, L, d)


def linear_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool = False) -> Tensor:
    """φ(Q) (φ(K)ᵀ V), each row divided by φ(q_i) · Σ_j φ(k_j) (the sum over j ≤ i when ``causal``).

    Args:
        q, k: (B, H, L, d); v: (B, H, L, d_v).
        causal: query i reads only keys j ≤ i: the state is a running sum over the positions.

    Returns:
        (B, H, L, d_v).

    Memory: the state of :func:`linear_state`: non-causal one (B, H, d, d_v) state; causal, computed here with
    cumulative sums, the state at every position, (B, H, L, d, d_v).
    """
    phi_q = phi(q)  # (B, H, L, d)
    state, key_sum = linear_state(phi(k), v, causal)
    if not causal:
        numerator = torch.einsum("bhid,bhde->bhie", phi_q, state)  # φ(q_i)ᵀ S: (B, H, L, d_v)
        denominator = torch.einsum("bhid,bhd->bhi", phi_q, key_sum)  # φ(q_i)ᵀ z: (B, H, L)
    else:
        numerator = torch.einsum("bhid,bhide->bhie", phi_q, state)  # φ(q_i)ᵀ S_i: (B, H, L, d_v)
        denominator = (phi_q * key_sum).sum(dim=-1)  # φ(q_i)ᵀ z_i: (B, H, L)
    return numerator / denominator.unsqueeze(-1)  # (B, H, L, d_v) / (B, H, L, 1)


def implied_weights(q: Tensor, k: Tensor, causal: bool = False) -> Tensor:
    """The L × L weights linear attention never builds: φ(q_i)·φ(k_j) / Σ_j φ(q_i)·φ(k_j) (j ≤ i when ``causal``).

    ``implied_weights(q, k) @ v`` is :func:`linear_attention`'s output; built here only to be looked at.

    Shape: q, k (B, H, L, d) -> (B, H, L, L), each row summing to 1.
    """
    scores = phi(q) @ phi(k).transpose(-2, -1)  # (B, H, L, d) @ (B, H, d, L) -> (B, H, L, L), all > 0
    if causal:
        scores = scores.masked_fill(~causal_mask(q.shape[-2], device=q.device), 0.0)  # (1, 1, L, L) broadcasts
    return scores / scores.sum(dim=-1, keepdim=True)  # (B, H, L, L)


def softmax_weights(q: Tensor, k: Tensor, causal: bool = False) -> Tensor:
    """Softmax attention's weights on the same q and k (this engine's core, scaled by 1/√d).

    Shape: q, k (B, H, L, d) -> (B, H, L, L).
    """
    mask = causal_mask(q.shape[-2], device=q.device) if causal else None  # (1, 1, L, L) or None
    _, weights = scaled_dot_product_attention(q, k, torch.zeros_like(k[..., :1]), mask)  # v unused: (B, H, L, 1)
    return weights


def row_entropy(weights: Tensor) -> Tensor:
    """-Σ_j w_ij log w_ij of each row (0 · log 0 = 0): higher is flatter, 0 is all the weight on one key.

    Shape: (..., L, L) -> (..., L).
    """
    logs = torch.where(weights > 0, weights.log(), torch.zeros_like(weights))  # (..., L, L)
    return -(weights * logs).sum(dim=-1)


def flatter_rows(softmax: Tensor, linear: Tensor, tolerance: float = 1e-6) -> tuple[int, int, int]:
    """How many rows linear attention's weights spread more evenly than softmax's (entropy higher by more than
    ``tolerance``), how many less, and how many the same.

    Shape: softmax, linear (..., L, L) -> (flatter, sharper, same) counted over every row.
    """
    gap = row_entropy(linear) - row_entropy(softmax)  # (..., L)
    flatter, sharper = int((gap > tolerance).sum()), int((gap < -tolerance).sum())
    return flatter, sharper, gap.numel() - flatter - sharper


@dataclass(frozen=True)
class LinearComparison:
    """Softmax and linear attention on the same q, k, v of a sentence (one seeded layer, every head)."""

    softmax_weights: Tensor  # (H, L, L)
    linear_weights: Tensor  # (H, L, L): the implied φ(q)·φ(k) weights, normalised
    weight_diff: float  # max |softmax weight - linear weight| over every head and pair
    output_diff: float  # max |softmax output - linear output|
    form_diff: float  # max |φ(Q)(φ(K)ᵀV) - (implied weights) V|: the causal running sum against the masked form
    head_dim: int
    state_numbers: int  # numbers per head in the state linear_attention keeps (S and z; every position's if causal)


def compare_on_tokens(
    tokens: Sequence[str], d_model: int, num_heads: int, causal: bool, seed: int = 0
) -> LinearComparison:
    """Both attentions on ``tokens`` with the playground's seeded layer (:func:`mha.experiments.inputs.token_heads`)."""
    q, k, v = token_heads(tokens, d_model, num_heads, seed)  # (1, H, L, Dh) each
    with torch.inference_mode():
        soft = softmax_weights(q, k, causal)  # (1, H, L, L)
        implied = implied_weights(q, k, causal)  # (1, H, L, L)
        linear_out = linear_attention(q, k, v, causal)  # (1, H, L, Dh): the d x d state (or its running sum)
        state, key_sum = linear_state(phi(k), v, causal)  # what linear_attention keeps, as it computes it
        return LinearComparison(
            softmax_weights=soft[0],
            linear_weights=implied[0],
            weight_diff=float((soft - implied).abs().max()),
            output_diff=float((soft @ v - linear_out).abs().max()),
            form_diff=float((implied @ v - linear_out).abs().max()),
            head_dim=q.shape[-1],
            state_numbers=(state.numel() + key_sum.numel()) // (q.shape[0] * q.shape[1]),  # per head
        )
