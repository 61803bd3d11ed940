"""Mask builders. One convention: a bool keep-mask, ``True`` = may attend.

Every builder returns a bool tensor of shape (1, 1, Lq, Lk) or (1, 1, 1, Lk) that
broadcasts to (B, H, Lq, Lk). The first tutorial's ``masked_fill(mask == 0, -inf)``
blocks exactly the ``False`` cells; ``F.scaled_dot_product_attention`` reads a bool
mask the same way. ``torch.nn.MultiheadAttention`` reads a bool mask the opposite
way (True = blocked), as does the second tutorial's ``torch.triu(torch.ones(L, L),
diagonal=1).bool()`` with ``masked_fill_(mask, -inf)``: use :func:`to_torch_mha_mask`
to invert it explicitly.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

__all__ = [
    "MASK_TYPES",
    "PAD_TOKENS",
    "build_mask",
    "causal_mask",
    "padding_mask",
    "to_additive_mask",
    "to_torch_mha_mask",
    "window_mask",
]

MASK_TYPES = ("none", "causal", "padding", "window")
PAD_TOKENS = frozenset({"[PAD]", "<pad>", "<PAD>"})


def causal_mask(
    length_q: int, length_k: int | None = None, device: torch.device | str | None = None, start: int = 0
) -> Tensor:
    """Query i may attend key j iff j <= start + i (no peeking ahead). Shape (1, 1, Lq, Lk).

    ``start``: the first query's position (0 for a whole sentence; in a decoding step the first new row's, its
    keys the cache's positions 0 .. start + Lq - 1).
    """
    length_k = length_q if length_k is None else length_k
    keep = torch.ones(length_q, length_k, dtype=torch.bool, device=device).tril(diagonal=start)  # (Lq, Lk)
    return keep.view(1, 1, length_q, length_k)  # (1, 1, Lq, Lk)


def window_mask(
    length_q: int, window: int, length_k: int | None = None, device: torch.device | str | None = None
) -> Tensor:
    """Sliding window: query i may attend key j iff |i - j| <= window. Shape (1, 1, Lq, Lk).

    ``window`` is how many neighbours each side a token sees (0 = only itself).
    """
    if window < 0:
        raise ValueError(f"window must be >= 0, got window={window}")
    length_k = length_q if length_k is None else length_k
    i = torch.arange(length_q, device=device).view(-1, 1)  # (Lq, 1)
    j = torch.arange(length_k, device=device).view(1, -1)  # (1, Lk)
    keep = (i - j).abs() <= window  # (Lq, Lk)
    return keep.view(1, 1, length_q, length_k)  # (1, 1, Lq, Lk)


def padding_mask(
    key_tokens: Sequence[str], pad_tokens: frozenset[str] = PAD_TOKENS, device: torch.device | str | None = None
) -> Tensor:
    """Every query may attend every key that is not a pad token. Shape (1, 1, 1, Lk)."""
    keep = torch.tensor([token not in pad_tokens for token in key_tokens], dtype=torch.bool, device=device)  # (Lk,)
    return keep.view(1, 1, 1, -1)  # (1, 1, 1, Lk)


def build_mask(
    mask_type: str,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str] | None = None,
    window: int = 2,
    device: torch.device | str | None = None,
    block_pad: bool = False,
) -> Tensor | None:
    """The mask named by ``mask_type`` (one of :data:`MASK_TYPES`), or ``None`` for ``"none"``.

    Args:
        mask_type: ``none``, ``causal``, ``padding`` or ``window``.
        query_tokens: the queries' tokens (Lq of them).
        key_tokens: the keys' tokens (Lk of them); the queries' when ``None`` (self-attention).
        window: neighbours each side for ``window``.
        device: where the mask is made.
        block_pad: also block every [PAD] key (``mask & padding_mask``), so that causal or window
            attention of a padded sentence never reads its padding; ``padding`` blocks them anyway.

    Shape:
        (1, 1, Lq, Lk) for ``causal`` and ``window``, (1, 1, 1, Lk) for ``padding`` (and for
        ``none`` with ``block_pad``).
    """
    key_tokens = query_tokens if key_tokens is None else key_tokens
    length_q, length_k = len(query_tokens), len(key_tokens)
    if mask_type not in MASK_TYPES:
        raise ValueError(f"unknown mask_type {mask_type!r}; choose one of {', '.join(MASK_TYPES)}")
    if mask_type == "padding" or (mask_type == "none" and block_pad):
        return padding_mask(key_tokens, device=device)
    if mask_type == "none":
        return None
    if mask_type == "causal":
        keep = causal_mask(length_q, length_k, device=device)  # (1, 1, Lq, Lk)
    else:
        keep = window_mask(length_q, window, length_k, device=device)  # (1, 1, Lq, Lk)
    return keep & padding_mask(key_tokens, device=device) if block_pad else keep  # (1, 1, Lq, Lk)


def to_torch_mha_mask(keep: Tensor, batch: int, num_heads: int, length_q: int, length_k: int) -> Tensor:
    """Our keep-mask -> ``nn.MultiheadAttention``'s bool ``attn_mask`` (True = NOT allowed).

    The meaning is inverted (``~keep``) and the mask expanded to the
    (B * H, Lq, Lk) layout that ``nn.MultiheadAttention`` takes for per-head masks.
    """
    blocked = ~keep.expand(batch, num_heads, length_q, length_k)  # (B, H, Lq, Lk)
    return blocked.reshape(batch * num_heads, length_q, length_k)  # (B*H, Lq, Lk)


def to_additive_mask(keep: Tensor, dtype: torch.dtype = torch.float32) -> Tensor:
    """Our keep-mask -> an additive float mask: 0 where allowed, ``-inf`` where blocked."""
    return torch.zeros(keep.shape, dtype=dtype, device=keep.device).masked_fill(~keep, float("-inf"))
