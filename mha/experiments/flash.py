"""FlashAttention's forward pass written out: the same numbers as softmax attention, one tile at a time.

Dao et al. 2022, "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness", with the online
softmax of Milakov & Gimelshein 2018, "Online normalizer calculation for softmax". The loops are ordered as in
FlashAttention-2 (Dao 2023, Algorithm 1): for each query block Q_i (``block_q`` rows) the keys and values are
read one tile K_j, V_j (``block_k`` columns) at a time, O is divided by l once at the end, and three running
quantities per row are kept (the 2022 paper's Algorithm 1 runs the same update with the tiles in the outer loop
and O divided by l after every tile):

- ``m``: the largest score seen so far (starts at −inf);
- ``l``: the sum of exp(score − m) over the keys seen so far (starts at 0);
- ``O``: the sum of exp(score − m) · v over the keys seen so far (starts at 0), not yet divided by ``l``.

After tile j, with S_j = Q_i K_jᵀ / √d:  m' = max(m, rowmax S_j);  P_j = exp(S_j − m');
l' = e^{m − m'} l + rowsum P_j;  O' = e^{m − m'} O + P_j V_j. When a larger score appears (m' > m), the factor
e^{m − m'} < 1 corrects everything the earlier tiles added. At the end O / l is softmax(Q Kᵀ / √d) V exactly
(to rounding), and no score matrix larger than block_q × block_k was ever held.

With a bool keep-mask (True = may attend) a tile whose every cell is masked is skipped (never read); a row whose
cells in a read tile are all masked keeps m = −inf, and the guard of the authors' flash-attn code (subtract 0
instead of −inf) keeps it free of NaN. A row masked everywhere gives zeros, as
:func:`mha.functional.masked_softmax` does.

Shapes: B batch, H heads, L length, d head size; Br = block_q and Bc = block_k (the last block may be shorter).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from mha.experiments.inputs import token_inputs
from mha.functional import scaled_dot_product_attention
from mha.masks import causal_mask
from mha.sources.seeded import build_model

__all__ = ["TileStep", "TiledRun", "count_skipped", "flash_inputs", "tile_ranges", "tiled_attention", "tiled_run"]


@dataclass(frozen=True)
class TileStep:
    """What one K/V tile did to one query block: the running m, l and O after it (and m, l before it)."""

    query_block: int  # i, from 0
    rows: tuple[int, int]  # query rows [start, stop)
    tile: int  # j, from 0
    columns: tuple[int, int]  # key columns [start, stop)
    skipped: bool  # every cell of the tile masked: never read, m, l, O unchanged
    m_before: Tensor  # (B, H, Br) running max before the tile
    l_before: Tensor  # (B, H, Br) running sum before the tile
    m: Tensor  # (B, H, Br) running max after the tile
    l: Tensor  # (B, H, Br) running sum after the tile  # noqa: E741 (the paper's name)
    O: Tensor  # (B, H, Br, d) running output after the tile, not yet divided by l  # noqa: E741
    rescale: Tensor  # (B, H, Br) e^{m_before − m}: what the earlier tiles' l and O were multiplied by
    tile_max: Tensor  # (B, H, Br) rowmax S_j of this tile (−inf where the row's cells are all masked)


def tile_ranges(length: int, block: int) -> list[tuple[int, int]]:
    """``[start, stop)`` of each block of ``block`` positions over ``length``; the last one may be shorter.

    Raises:
        ValueError: a block size below 1.
    """
    if block < 1:
        raise ValueError(f"block size must be at least 1, got {block}")
    return [(start, min(start + block, length)) for start in range(0, length, block)]


def _keep_block(mask: Tensor | None, rows: tuple[int, int], columns: tuple[int, int]) -> Tensor | None:
    """The mask's cells of one tile, ``None`` without a mask. Shape (B or 1, H or 1, Br, Bc)."""
    if mask is None:
        return None
    return mask[..., rows[0] : rows[1], columns[0] : columns[1]]


def count_skipped(mask: Tensor | None, length: int, block_q: int, block_k: int) -> int:
    """How many tiles :func:`tiled_attention` skips: those whose every cell is masked (0 without a mask)."""
    if mask is None:
        return 0
    return sum(
        not bool(_keep_block(mask, rows, columns).any())
        for rows in tile_ranges(length, block_q)
        for columns in tile_ranges(length, block_k)
    )


def tiled_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    block_q: int,
    block_k: int,
    mask: Tensor | None = None,
    *,
    keep_steps: bool = True,
) -> tuple[Tensor, list[TileStep]]:
    """softmax(Q Kᵀ / √d) V computed as FlashAttention(-2) does: query blocks × K/V tiles, online softmax.

    Args:
        q, k, v: (B, H, L, d), the same L (self-attention).
        block_q: Br, query rows per block (need not divide L: the last block is shorter).
        block_k: Bc, key/value columns per tile (need not divide L).
        mask: ``None`` or a bool keep-mask (True = may attend) broadcastable to (B, H, L, L).
        keep_steps: record a :class:`TileStep` per (query block, tile); ``False`` keeps only the output (the
            memory measurement: the records would hold more than the algorithm itself).

    Shape:
        output (B, H, L, d).

    Returns:
        ``(output, steps)``: steps in the order they ran, query block by query block, every tile of each
        (skipped ones included, marked ``skipped``); empty when ``keep_steps`` is False.

    Raises:
        ValueError: shapes that do not fit, a block size below 1, a mask that is not bool.
    """
    if q.shape != k.shape or k.shape != v.shape or q.dim() != 4:
        raise ValueError(
            f"q, k, v must share one shape (B, H, L, d); got {list(q.shape)}, {list(k.shape)}, {list(v.shape)}"
        )
    if mask is not None and mask.dtype != torch.bool:
        raise ValueError(f"mask must be a bool keep-mask (True = may attend), got dtype {mask.dtype}")
    batch, heads, length, head_dim = q.shape
    scale = 1.0 / math.sqrt(head_dim)
    row_blocks, column_tiles = tile_ranges(length, block_q), tile_ranges(length, block_k)
    output = torch.empty_like(q)  # (B, H, L, d)
    steps: list[TileStep] = []
    for i, rows in enumerate(row_blocks):
        Q_i = q[:, :, rows[0] : rows[1]] * scale  # (B, H, Br, d)
        size = rows[1] - rows[0]
        m = q.new_full((batch, heads, size), float("-inf"))  # (B, H, Br)
        l = q.new_zeros((batch, heads, size))  # (B, H, Br)  # noqa: E741
        O = q.new_zeros((batch, heads, size, head_dim))  # (B, H, Br, d)  # noqa: E741
        for j, columns in enumerate(column_tiles):
            keep = _keep_block(mask, rows, columns)  # (B|1, H|1, Br, Bc) or None
            if keep is not None and not keep.any():
                if keep_steps:
                    steps.append(_step(i, rows, j, columns, True, (m, l), (m, l, O), torch.ones_like(m), None))
                continue
            K_j, V_j = k[:, :, columns[0] : columns[1]], v[:, :, columns[0] : columns[1]]  # (B, H, Bc, d) each
            S_j = Q_i @ K_j.transpose(-2, -1)  # (B, H, Br, d) @ (B, H, d, Bc) -> (B, H, Br, Bc)
            if keep is not None:
                S_j = S_j.masked_fill(~keep, float("-inf"))  # (B, H, Br, Bc)
            tile_max = S_j.amax(dim=-1)  # (B, H, Br)
            m_new = torch.maximum(m, tile_max)  # (B, H, Br)
            # The guard: a row with nothing to attend so far has m_new = -inf; exp(-inf - (-inf)) would be NaN.
            m_safe = m_new.masked_fill(m_new == float("-inf"), 0.0)  # (B, H, Br)
            P_j = torch.exp(S_j - m_safe.unsqueeze(-1))  # (B, H, Br, Bc); masked cells exp(-inf) = 0
            rescale = torch.exp(m - m_safe)  # (B, H, Br); 0 where m = -inf (l and O are 0 there anyway)
            l_new = rescale * l + P_j.sum(dim=-1)  # (B, H, Br)
            O_new = rescale.unsqueeze(-1) * O + P_j @ V_j  # (B, H, Br, Bc) @ (B, H, Bc, d) -> (B, H, Br, d)
            if keep_steps:
                steps.append(_step(i, rows, j, columns, False, (m, l), (m_new, l_new, O_new), rescale, tile_max))
            m, l, O = m_new, l_new, O_new  # noqa: E741
        # A row masked everywhere has l = 0 and O = 0: divide by 1 there, giving zeros (not 0/0 = NaN).
        output[:, :, rows[0] : rows[1]] = O / l.masked_fill(l == 0, 1.0).unsqueeze(-1)  # (B, H, Br, d)
    return output, steps


def _step(
    i: int,
    rows: tuple[int, int],
    j: int,
    columns: tuple[int, int],
    skipped: bool,
    before: tuple[Tensor, Tensor],
    after: tuple[Tensor, Tensor, Tensor],
    rescale: Tensor,
    tile_max: Tensor | None,
) -> TileStep:
    """One record, detached copies of the running values (the loop goes on replacing them)."""
    m, l, O = after  # noqa: E741
    if tile_max is None:
        tile_max = torch.full_like(m, float("-inf"))
    return TileStep(
        i, rows, j, columns, skipped, before[0].clone(), before[1].clone(), m.clone(), l.clone(), O.clone(),
        rescale.clone(), tile_max.clone(),
    )  # fmt: skip


def flash_inputs(tokens: Sequence[str], head_dim: int, seed: int = 0) -> tuple[Tensor, Tensor, Tensor]:
    """q, k, v of one head for ``tokens``: the playground's embeddings through a seeded layer's W_q, W_k, W_v.

    Shape:
        q, k, v (1, 1, L, d) each, float32 (d = ``head_dim``: one head of width d_model = d).
    """
    model = build_model(head_dim, 1, seed)
    x = token_inputs(tokens, head_dim, seed)  # (1, L, d)
    length = x.shape[1]
    with torch.inference_mode():
        q, k, v = (W(x).view(1, length, 1, head_dim).transpose(1, 2) for W in (model.W_q, model.W_k, model.W_v))
    return q, k, v  # (1, 1, L, d) each


@dataclass(frozen=True)
class TiledRun:
    """Lab 13's run: one head's tiled attention over a learner's tokens, and full attention beside it."""

    scores: Tensor  # (L, L) q kᵀ / √d, NaN where the mask blocks
    steps: list[TileStep]  # every (query block, tile) step, in the order the loops read them
    difference: float  # max |tiled output - full attention's output|
    skipped: int  # tiles never read (every cell masked)


def tiled_run(tokens: Sequence[str], head_dim: int, block_q: int, block_k: int, causal: bool, seed: int) -> TiledRun:
    """The tiled run of ``tokens`` (one head of ``head_dim``, :func:`flash_inputs`) stepped through, its scores and its
    largest difference from full attention (:func:`mha.functional.scaled_dot_product_attention`).

    Args:
        tokens: the learner's tokens (L of them).
        head_dim: d, the head's width.
        block_q, block_k: rows per query block, columns per K/V tile.
        causal: whether each row may read only the keys up to its own position.
        seed: the seed of the embeddings and of W_q, W_k, W_v.
    """
    q, k, v = flash_inputs(tokens, head_dim, seed)  # (1, 1, L, d) each
    length = q.shape[2]
    mask = causal_mask(length, device=q.device) if causal else None  # (1, 1, L, L)
    output, steps = tiled_attention(q, k, v, block_q, block_k, mask)  # (1, 1, L, d)
    full, _ = scaled_dot_product_attention(q, k, v, mask)  # (1, 1, L, d)
    scores = (q @ k.transpose(-2, -1))[0, 0] / math.sqrt(head_dim)  # (L, d) @ (d, L) -> (L, L)
    if mask is not None:
        scores = scores.masked_fill(~mask[0, 0], float("nan"))  # (L, L): NaN where blocked
    return TiledRun(
        scores=scores,
        steps=steps,
        difference=float((output - full).abs().max()),
        skipped=count_skipped(mask, length, block_q, block_k),
    )
