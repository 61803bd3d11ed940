"""What each pipeline step costs: parameters, FLOPs and the bytes of the score tensor.

FLOPs count the matrix multiplications (one multiply-add = 2 FLOPs), the part that
dominates; the softmax and the bias additions are a few operations per element
more and are left out. All counts are exact integers from the sizes alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn

__all__ = ["StepCost", "count_parameters", "projection_parameters", "step_costs", "total_parameters"]


@dataclass(frozen=True)
class StepCost:
    """The cost of one pipeline step (``step`` is 1..4; the page names it in the reader's language)."""

    step: int
    params: int
    flops: int
    score_bytes: int = 0


def projection_parameters(d_model: int, bias: bool = True) -> int:
    """Parameters of one ``nn.Linear(d_model, d_model)``: d² weights + d biases."""
    return d_model * d_model + (d_model if bias else 0)


def total_parameters(d_model: int, bias: bool = True) -> int:
    """W_q, W_k, W_v and W_o together: 4·d² + 4·d with biases -- independent of the head count."""
    return 4 * projection_parameters(d_model, bias)


def count_parameters(module: nn.Module) -> int:
    """Parameters actually held by a module (to check the formulas against)."""
    return sum(p.numel() for p in module.parameters())


def step_costs(
    d_model: int,
    num_heads: int,
    length_q: int,
    length_k: int | None = None,
    batch: int = 1,
    bias: bool = True,
    itemsize: int = 4,
) -> list[StepCost]:
    """Parameters, matmul FLOPs and score-tensor bytes of the four steps.

    Args:
        d_model, num_heads: the layer's sizes (D, H).
        length_q, length_k: query and key lengths (Lk defaults to Lq).
        batch: B.
        bias: whether the projections have biases.
        itemsize: bytes per element of the score tensor (4 for float32).
    """
    length_k = length_q if length_k is None else length_k
    one = projection_parameters(d_model, bias)
    project_flops = 2 * batch * d_model * d_model * (length_q + 2 * length_k)  # Q from Lq rows, K and V from Lk rows
    attend_flops = 2 * 2 * batch * length_q * length_k * d_model  # QKᵀ and weights·V, summed over heads (H·Dh = D)
    return [
        StepCost(1, 3 * one, project_flops),
        StepCost(2, 0, attend_flops, batch * num_heads * length_q * length_k * itemsize),
        StepCost(3, 0, 0),
        StepCost(4, one, 2 * batch * length_q * d_model * d_model),
    ]
