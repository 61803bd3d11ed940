"""Why step 3 calls ``.contiguous()`` before ``.view``: the strides of the transposed context, and ``view``'s refusal.

``transpose`` swaps two strides and moves no numbers, so ``context.transpose(1, 2)`` walks
memory out of order; ``view`` reinterprets memory as it lies and refuses such a tensor.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor

__all__ = ["TransposedView", "packed_strides", "transposed_context"]


@dataclass(frozen=True)
class TransposedView:
    """``context.transpose(1, 2)``: its shape and strides, the strides it would have laid out in order, and
    what ``.view(B, L, D)`` says of it (``None``: it worked)."""

    shape: tuple[int, ...]  # (B, L, H, Dh)
    strides: tuple[int, ...]
    packed: tuple[int, ...]  # a contiguous tensor of this shape
    contiguous: bool
    view_error: str | None


def packed_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The strides of a contiguous (row-major) tensor of ``shape``: each is the product of the sizes after it."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def transposed_context(context: Tensor) -> TransposedView:
    """Transpose the heads' contexts as step 3 does and try ``view`` on the result without ``.contiguous()``.

    Args:
        context: per-head contexts, (B, H, L, Dh).
    """
    batch, heads, length, d_k = context.shape
    moved = context.transpose(1, 2)  # (B, L, H, Dh), the same memory
    try:
        moved.view(batch, length, heads * d_k)  # (B, L, D) -- only if the memory is in order
        error = None
    except RuntimeError as refused:
        error = str(refused)
    return TransposedView(
        shape=tuple(moved.shape),
        strides=tuple(moved.stride()),
        packed=packed_strides(tuple(moved.shape)),
        contiguous=moved.is_contiguous(),
        view_error=error,
    )
