"""Sparse attention patterns and the run that pays off: computing only the blocks a pattern keeps.

- Longformer (Beltagy et al. 2020): a sliding window |i - j| <= w, plus a few *global* tokens that attend
  to every token and that every token attends to (:func:`longformer_mask`, token by token).
- BigBird (Zaheer et al. 2020): the same ideas at the granularity of blocks of b tokens: a window of
  blocks, global blocks, and a few *random* key blocks per query block (:func:`bigbird_block_layout`).

Both are bool keep-masks (``True`` = may attend, :mod:`mha.masks`). Handed to a dense run as a mask they save
nothing: the L × L scores are computed, then most are overwritten with -inf. :func:`block_sparse_attention`
instead gathers, for each query block, only the key blocks its layout keeps and computes those scores:
H · L · (kept blocks per row) · b of them instead of H · L². The token mask inside a kept block (a window's
diagonal edge, a global token in a block) is applied there; a query row left with no key gets zeros, as in
:func:`mha.functional.scaled_dot_product_attention`. L need not be a multiple of b: the last block is
padded, and its padding never attended to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from mha.experiments.inputs import token_heads
from mha.functional import default_scale, scaled_dot_product_attention
from mha.masks import window_mask

__all__ = [
    "SparseOnTokens",
    "bigbird_block_layout",
    "block_layout_of",
    "block_sparse_attention",
    "dense_masked_attention",
    "expand_layout",
    "kept_fraction",
    "longformer_mask",
    "num_blocks",
    "sparse_on_tokens",
]


def num_blocks(length: int, block: int) -> int:
    """Blocks of ``block`` tokens that cover L tokens (the last one may be shorter)."""
    if block < 1:
        raise ValueError(f"block must be >= 1, got block={block}")
    return -(-length // block)


def longformer_mask(length: int, window: int, global_tokens: Sequence[int] = ()) -> Tensor:
    """Longformer's pattern: |i - j| <= ``window``, and every row and column of a global token.

    Shape: (1, 1, L, L), bool, True = may attend.
    """
    keep = window_mask(length, window, device="cpu")[0, 0].clone()  # (L, L)
    chosen = [index for index in global_tokens if 0 <= index < length]
    if len(chosen) != len(global_tokens):
        raise ValueError(f"global tokens {list(global_tokens)} must be positions 0 .. {length - 1}")
    if chosen:
        index = torch.tensor(chosen, device=keep.device)
        keep[index, :] = True  # a global token attends to every token
        keep[:, index] = True  # every token attends to it
    return keep.view(1, 1, length, length)  # (1, 1, L, L)


def bigbird_block_layout(
    blocks: int, window_blocks: int, global_blocks: int, random_blocks: int, seed: int = 0
) -> Tensor:
    """BigBird's pattern on a grid of ``blocks`` × ``blocks`` blocks: query block I keeps key block J when
    |I - J| <= ``window_blocks``, when I or J is one of the first ``global_blocks``, and ``random_blocks`` more
    key blocks drawn (seeded) per query block from those it does not keep yet (fewer when none are left).

    Shape: (blocks, blocks), bool.
    """
    if min(window_blocks, global_blocks, random_blocks) < 0:
        raise ValueError("window_blocks, global_blocks and random_blocks must be >= 0")
    row = torch.arange(blocks, device="cpu").view(-1, 1)  # (nb, 1)
    column = torch.arange(blocks, device="cpu").view(1, -1)  # (1, nb)
    layout = ((row - column).abs() <= window_blocks) | (row < global_blocks) | (column < global_blocks)  # (nb, nb)
    generator = torch.Generator().manual_seed(seed)
    for query_block in range(global_blocks, blocks):  # a global block already keeps every key block
        free = (~layout[query_block]).nonzero().flatten()  # (free,)
        picked = free[torch.randperm(len(free), generator=generator, device="cpu")[:random_blocks]]  # (<= r,)
        layout[query_block, picked] = True
    return layout


def expand_layout(layout: Tensor, block: int, length: int) -> Tensor:
    """A block layout (nb, nb) as the token mask it keeps, cut to L tokens.

    Shape: (nb, nb) -> (1, 1, L, L).
    """
    blocks = layout.shape[0]
    tokens = layout.repeat_interleave(block, dim=0).repeat_interleave(block, dim=1)  # (nb·b, nb·b)
    if blocks * block < length:
        raise ValueError(f"{blocks} blocks of {block} do not cover L={length}")
    return tokens[:length, :length].view(1, 1, length, length)  # (1, 1, L, L)


def block_layout_of(mask: Tensor, block: int) -> Tensor:
    """The blocks a token mask needs: block (I, J) is kept when any of its entries is.

    Shape: (..., L, L) broadcastable, read as its last two dims -> (nb, nb).
    """
    keep = mask.reshape(mask.shape[-2], mask.shape[-1])  # (L, L)
    length = keep.shape[-1]
    blocks = num_blocks(length, block)
    padded = torch.zeros(blocks * block, blocks * block, dtype=torch.bool, device=keep.device)  # (nb·b, nb·b)
    padded[:length, :length] = keep
    return padded.view(blocks, block, blocks, block).any(dim=3).any(dim=1)  # (nb, b, nb, b) -> (nb, nb)


def kept_fraction(mask: Tensor) -> float:
    """The share of the L × L entries a keep-mask keeps."""
    return float(mask.float().mean())


def dense_masked_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor) -> Tensor:
    """The reference: every score computed, the mask applied to the L × L matrix (this engine's core).

    Shape: q, k, v (B, H, L, d), mask (1, 1, L, L) -> (B, H, L, d).
    """
    output, _ = scaled_dot_product_attention(q, k, v, mask)
    return output


def block_sparse_attention(
    q: Tensor, k: Tensor, v: Tensor, layout: Tensor, block: int, mask: Tensor | None = None
) -> Tensor:
    """Attention computed only on the blocks ``layout`` keeps; the same numbers as
    ``dense_masked_attention(q, k, v, expand_layout(layout, block, L) & mask)``.

    Query blocks that keep more than half of the key blocks (BigBird's global blocks) are computed against every
    key block; the others gather their kept key blocks, as many as the busiest of them keeps (m), the unused
    slots masked.

    Args:
        q, k, v: (B, H, L, d); L need not be a multiple of ``block``.
        layout: (nb, nb) bool, nb = ceil(L / block): which key blocks each query block computes.
        block: b, tokens per block.
        mask: optional (1, 1, L, L) bool token mask applied inside the kept blocks (e.g. Longformer's).

    Returns:
        (B, H, L, d); a query row with no kept key gets zeros.

    Memory: the scores of the sparse query blocks are (B, H, n, b, m · b), of the full ones (B, H, n', b, nb · b).
    """
    batch, heads, length, head_dim = q.shape
    blocks = num_blocks(length, block)
    if tuple(layout.shape) != (blocks, blocks):
        raise ValueError(
            f"layout must be ({blocks}, {blocks}) for L={length} and block={block}, got {list(layout.shape)}"
        )
    padded_length = blocks * block
    pad = padded_length - length

    def blocked(x: Tensor) -> Tensor:  # (B, H, L, d) -> zero-padded (B, H, nb, b, d)
        x = torch.nn.functional.pad(x, (0, 0, 0, pad)) if pad else x  # (B, H, nb·b, d)
        return x.reshape(batch, heads, blocks, block, head_dim)  # (B, H, nb, b, d)

    scale = default_scale(head_dim)
    q_blocks = blocked(q)  # (B, H, nb, b, d)
    k_blocks, v_blocks = blocked(k), blocked(v)  # (B, H, nb, b, d) each
    token_keep = None
    if mask is not None:
        token_keep = torch.zeros(
            padded_length, padded_length, dtype=torch.bool, device=q.device
        )  # (nb·b, nb·b): padding never kept
        token_keep[:length, :length] = mask.reshape(length, length)
        token_keep = token_keep.view(blocks, block, blocks, block).permute(0, 2, 1, 3)  # (nb, nb, b, b): [I, J, i, j]
    key_in_range = (torch.arange(padded_length, device=q.device) < length).view(blocks, block)  # (nb, b): not padding

    counts = layout.sum(dim=1)  # (nb,): key blocks per query block
    full = counts * 2 > blocks  # (nb,): computed against every key block
    output = q.new_zeros(batch, heads, blocks, block, head_dim)  # (B, H, nb, b, d)
    for rows in (full.nonzero().flatten(), (~full).nonzero().flatten()):  # (n,) query blocks each
        if len(rows) == 0:
            continue
        width = max(int(counts[rows].max()), 1)  # m: key-block slots per query block
        # per query block, its kept key blocks first (stable sort of ~layout), then whatever comes next
        order = torch.sort((~layout[rows]).to(torch.int8), dim=1, stable=True).indices[:, :width]  # (n, m)
        slot_used = torch.arange(width, device=layout.device).view(1, -1) < counts[rows].view(
            -1, 1
        )  # (n, m): a kept block, not filler
        keep = (slot_used.unsqueeze(-1) & key_in_range[order]).unsqueeze(2)  # (n, m, 1, b): [I, slot, ·, j]
        if token_keep is not None:
            keep = keep & token_keep[rows.view(-1, 1), order]  # (n, m, b, b): [I, slot, i, j]
        # one key block per slot at a time: never more than (B, H, n, b, d) of gathered keys or values at once
        q_rows = q_blocks[:, :, rows]  # (B, H, n, b, d)
        scores = q_rows.new_empty(batch, heads, len(rows), width, block, block)  # (B, H, n, m, b, b)
        for slot in range(width):
            scores[:, :, :, slot] = q_rows @ k_blocks[:, :, order[:, slot]].transpose(-2, -1)  # (B, H, n, b, b)
        weights = _slot_softmax(scores, keep, scale)  # (B, H, n, m, b, b): over (slot, j) for each i
        context = weights[:, :, :, 0] @ v_blocks[:, :, order[:, 0]]  # (B, H, n, b, b) @ (B, H, n, b, d)
        for slot in range(1, width):
            context += weights[:, :, :, slot] @ v_blocks[:, :, order[:, slot]]  # (B, H, n, b, d)
        output[:, :, rows] = context  # (B, H, n, b, d)
    return output.reshape(batch, heads, padded_length, head_dim)[:, :, :length]  # (B, H, L, d)


def _slot_softmax(scores: Tensor, keep: Tensor, scale: float) -> Tensor:
    """Softmax of ``scores · scale`` over the kept entries of dims (slot, key), for each query row; a row with none
    gets zeros (no NaN). In place in ``scores`` when no gradient is wanted (as the engine's core does).

    Shape: scores (B, H, n, m, b, b), keep broadcastable to it -> (B, H, n, m, b, b).
    """
    in_place = not (torch.is_grad_enabled() and scores.requires_grad)
    if in_place:
        scores.mul_(scale).masked_fill_(~keep, float("-inf"))
    else:
        scores = (scores * scale).masked_fill(~keep, float("-inf"))
    top = scores.amax(dim=(3, 5), keepdim=True)  # (B, H, n, 1, b, 1): each row's largest kept score
    empty_rows = top == float("-inf")  # no key kept: every entry -inf
    top = top.masked_fill(empty_rows, 0.0)  # so that -inf - top stays -inf and exp gives 0, never NaN
    exps = scores.sub_(top).exp_() if in_place else (scores - top).exp()  # (B, H, n, m, b, b)
    total = exps.sum(dim=(3, 5), keepdim=True).masked_fill(empty_rows, 1.0)  # (B, H, n, 1, b, 1)
    return exps.div_(total) if in_place else exps / total


@dataclass(frozen=True)
class SparseOnTokens:
    """The two patterns on a sentence, and the block-skipping run against the dense masked run on its q, k, v."""

    longformer: Tensor  # (L, L) bool
    bigbird: Tensor  # (L, L) bool: the block layout expanded to tokens
    longformer_diff: float  # max |block-skipping - dense masked| (float32)
    bigbird_diff: float


def sparse_on_tokens(
    tokens: Sequence[str],
    window: int,
    global_tokens: Sequence[int],
    block: int,
    window_blocks: int,
    global_blocks: int,
    random_blocks: int,
    seed: int = 0,
    d_model: int = 64,
    num_heads: int = 4,
) -> SparseOnTokens:
    """Longformer's mask and BigBird's block pattern on ``tokens``, each run both ways on the seeded layer's q, k, v."""
    length = len(tokens)
    q, k, v = token_heads(tokens, d_model, num_heads, seed)  # (1, H, L, Dh) each
    longformer = longformer_mask(length, window, global_tokens)  # (1, 1, L, L)
    layout = bigbird_block_layout(num_blocks(length, block), window_blocks, global_blocks, random_blocks, seed)
    bigbird = expand_layout(layout, block, length)  # (1, 1, L, L)
    with torch.inference_mode():
        longformer_sparse = block_sparse_attention(q, k, v, block_layout_of(longformer, block), block, longformer)
        bigbird_sparse = block_sparse_attention(q, k, v, layout, block)
        return SparseOnTokens(
            longformer=longformer[0, 0],
            bigbird=bigbird[0, 0],
            longformer_diff=float((longformer_sparse - dense_masked_attention(q, k, v, longformer)).abs().max()),
            bigbird_diff=float((bigbird_sparse - dense_masked_attention(q, k, v, bigbird)).abs().max()),
        )
