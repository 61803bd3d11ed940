"""Typed records of every intermediate tensor of one forward pass, one dataclass per step.

A traced forward returns an :class:`AttentionTrace`; the model itself never keeps
the last pass (it is shared between sessions). Shapes use the legend of
:mod:`mha.functional` (B, H, Lq, Lk, Dh) plus D = d_model.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from torch import Tensor

__all__ = ["AttendStep", "AttentionTrace", "ConcatStep", "OutputStep", "ProjectStep"]


@dataclass(frozen=True)
class ProjectStep:
    """Step 1: project the inputs with W_q, W_k, W_v and split into heads."""

    x_query: Tensor  # (B, Lq, D)
    x_key: Tensor  # (B, Lk, D)
    x_value: Tensor  # (B, Lk, D)
    q: Tensor  # (B, Lq, D)   x_query @ W_qᵀ + b_q
    k: Tensor  # (B, Lk, D)
    v: Tensor  # (B, Lk, D)
    q_heads: Tensor  # (B, H, Lq, Dh)   q.view(B, Lq, H, Dh).transpose(1, 2)
    k_heads: Tensor  # (B, H, Lk, Dh)
    v_heads: Tensor  # (B, H, Lk, Dh)


@dataclass(frozen=True)
class AttendStep:
    """Step 2: scaled dot-product attention, per head."""

    scale: float  # 1 / sqrt(Dh)
    mask: Tensor | None  # bool keep-mask or additive float mask, broadcastable to (B, H, Lq, Lk)
    raw_scores: Tensor  # (B, H, Lq, Lk)   Q Kᵀ
    scaled_scores: Tensor  # (B, H, Lq, Lk)   Q Kᵀ · scale
    masked_scores: Tensor  # (B, H, Lq, Lk)   blocked cells are -inf
    weights: Tensor  # (B, H, Lq, Lk)   softmax over Lk; a fully blocked row is all zeros
    context: Tensor  # (B, H, Lq, Dh)   weights @ V


@dataclass(frozen=True)
class ConcatStep:
    """Step 3: put the heads side by side again."""

    concat: Tensor  # (B, Lq, D)   context.transpose(1, 2).contiguous().view(B, Lq, D)


@dataclass(frozen=True)
class OutputStep:
    """Step 4: the output projection W_o."""

    output: Tensor  # (B, Lq, D)


@dataclass(frozen=True)
class AttentionTrace:
    """Every intermediate of the four pipeline steps of one forward pass."""

    project: ProjectStep
    attend: AttendStep
    concat: ConcatStep
    out: OutputStep

    @property
    def output(self) -> Tensor:
        """The layer's output, (B, Lq, D)."""
        return self.out.output

    @property
    def weights(self) -> Tensor:
        """The per-head attention weights, (B, H, Lq, Lk)."""
        return self.attend.weights

    def tensors(self) -> dict[str, Tensor]:
        """All tensors of the trace by dotted name (``"attend.weights"``, ...), in pipeline order."""
        named: dict[str, Tensor] = {}
        for step_field in fields(self):
            step = getattr(self, step_field.name)
            for f in fields(step):
                value = getattr(step, f.name)
                if isinstance(value, Tensor):
                    named[f"{step_field.name}.{f.name}"] = value
        return named
