"""Typed records of every intermediate tensor of one forward pass, one dataclass per step.

A traced forward returns an :class:`AttentionTrace`; a decoding step with a key/value cache a
:class:`DecodeTrace`. The model itself never keeps the last pass (it is shared between sessions). Shapes use
the legend of :mod:`mha.functional` (B, H, Lq, Lk, Dh) plus D = d_model, Hkv key/value heads, n new rows and
t = start + n cached positions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields

from torch import Tensor

__all__ = ["AttendStep", "AttentionTrace", "ConcatStep", "DecodeTrace", "OutputStep", "ProjectStep"]


@dataclass(frozen=True)
class ProjectStep:
    """Step 1: project the inputs with W_q, W_k, W_v and split into heads (H for Q, Hkv for K and V).

    A layer with RoPE also keeps q and k after their rotation; ``kv_head_of[h]`` is the key/value head that
    query head h reads (``h`` itself in the tutorials' layer).
    """

    x_query: Tensor  # (B, Lq, D)
    x_key: Tensor  # (B, Lk, D)
    x_value: Tensor  # (B, Lk, D)
    q: Tensor  # (B, Lq, D)   x_query @ W_qᵀ + b_q
    k: Tensor  # (B, Lk, Hkv·Dh)   Hkv·Dh = D in the tutorials' layer
    v: Tensor  # (B, Lk, Hkv·Dh)
    q_heads: Tensor  # (B, H, Lq, Dh)   q.view(B, Lq, H, Dh).transpose(1, 2)
    k_heads: Tensor  # (B, Hkv, Lk, Dh)
    v_heads: Tensor  # (B, Hkv, Lk, Dh)
    q_rotated: Tensor | None = None  # (B, H, Lq, Dh)   RoPE: q_heads turned by position; None without RoPE
    k_rotated: Tensor | None = None  # (B, Hkv, Lk, Dh)
    kv_head_of: tuple[int, ...] = field(default=())  # (H,) the key/value head each query head reads

    @property
    def num_kv_heads(self) -> int:
        """Hkv, read from the keys' shape."""
        return self.k_heads.size(1)


@dataclass(frozen=True)
class AttendStep:
    """Step 2: scaled dot-product attention, per head.

    ``queries``, ``keys`` and ``values`` are what the scores and the context read: q and k after RoPE, and each
    key/value head repeated for its query heads (GQA); in the tutorials' layer they are step 1's split heads.
    """

    scale: float  # 1 / sqrt(Dh)
    mask: Tensor | None  # bool keep-mask or additive float mask, broadcastable to (B, H, Lq, Lk)
    raw_scores: Tensor  # (B, H, Lq, Lk)   Q Kᵀ
    scaled_scores: Tensor  # (B, H, Lq, Lk)   Q Kᵀ · scale
    masked_scores: Tensor  # (B, H, Lq, Lk)   blocked cells are -inf
    weights: Tensor  # (B, H, Lq, Lk)   softmax over Lk; a fully blocked row is all zeros
    context: Tensor  # (B, H, Lq, Dh)   weights @ V
    queries: Tensor | None = None  # (B, H, Lq, Dh)
    keys: Tensor | None = None  # (B, H, Lk, Dh)
    values: Tensor | None = None  # (B, H, Lk, Dh)


@dataclass(frozen=True)
class ConcatStep:
    """Step 3: put the heads side by side again."""

    concat: Tensor  # (B, Lq, D)   context.transpose(1, 2).contiguous().view(B, Lq, D)


@dataclass(frozen=True)
class OutputStep:
    """Step 4: the output projection W_o."""

    output: Tensor  # (B, Lq, D)


#: Step 2's inputs, the split heads themselves unless RoPE or GQA made new ones.
_STEP_2_READS = frozenset({"attend.queries", "attend.keys", "attend.values"})


def _is_one_of(tensor: Tensor, others: Iterable[Tensor]) -> bool:
    return any(tensor is other for other in others)


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
        """All tensors of the trace by dotted name (``"attend.weights"``, ...), in pipeline order; a tensor that is
        step 1's own (step 2's ``queries``, ``keys``, ``values`` in the tutorials' layer are step 1's split heads)
        is named once."""
        named: dict[str, Tensor] = {}
        for step_field in fields(self):
            step = getattr(self, step_field.name)
            for f in fields(step):
                value = getattr(step, f.name)
                name = f"{step_field.name}.{f.name}"
                if not isinstance(value, Tensor) or (name in _STEP_2_READS and _is_one_of(value, named.values())):
                    continue
                named[name] = value
        return named


@dataclass(frozen=True)
class DecodeTrace:
    """One decoding step (:meth:`~mha.module.MultiHeadAttention.forward_step`): n new rows at positions
    ``start .. start+n-1`` against every position the cache holds after they are appended.

    Row i of ``weights`` is position ``start + i``'s query over positions 0 .. t-1; its keys after ``start + i``
    are blocked (-inf in ``scores``, 0 in ``weights``): causal within the new rows. With n = 1 nothing is blocked.
    """

    start: int  # the position of the first new row
    q: Tensor  # (B, H, n, Dh)   the new rows' queries, after RoPE (turned by positions start .. start+n-1)
    cache_keys: Tensor  # (B, Hkv, t, Dh)   the cache's keys after the append (after RoPE), before repeat_kv
    cache_values: Tensor  # (B, Hkv, t, Dh)
    scores: Tensor  # (B, H, n, t)   q Kᵀ · 1/sqrt(Dh), causal mask applied
    weights: Tensor  # (B, H, n, t)   softmax over t
    context: Tensor  # (B, H, n, Dh)   weights @ V
    output: Tensor  # (B, n, D)   concat W_oᵀ + b_o
    appended: tuple[int, ...]  # the positions written to the cache: start .. start+n-1

    @property
    def length(self) -> int:
        """t: the positions the new rows attend to (the cache's length after the append)."""
        return self.cache_keys.size(2)
