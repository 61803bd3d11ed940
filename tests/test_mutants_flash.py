"""Lab 13's tiled attention at the cases mutation testing (scripts/mutation.sh) found no test for: the shapes it
refuses, the record of every step (which block and tile, m, l and the tile's row maximum before and after), and
the inputs it is shown on. Expected values are worked out here from the tile's own scores, S = Q Kᵀ / √d."""

from __future__ import annotations

import math

import pytest
import torch

from mha.experiments.flash import flash_inputs, tiled_attention
from mha.experiments.inputs import token_heads
from mha.masks import causal_mask


def _qkv(length: int = 5, d: int = 4, seed: int = 0) -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(1, 2, length, d, generator=generator, dtype=torch.float64) for _ in range(3))


@pytest.mark.parametrize("which", ["q", "k", "v"])
def test_q_k_and_v_of_different_shapes_are_refused(which):
    """Any one of the three a different size (a wider v, a longer k, ...) is refused, not computed."""
    q, k, v = _qkv()
    wider = torch.zeros(1, 2, 5, 6, dtype=torch.float64)
    args = {"q": q, "k": k, "v": v, which: wider}
    with pytest.raises(ValueError, match="must share one shape"):
        tiled_attention(args["q"], args["k"], args["v"], 2, 2)


def test_every_step_records_its_block_its_tile_and_the_running_values_before_and_after():
    """Blocks of 2 queries × tiles of 2 keys over 5 positions, causal: each record's (block, tile) is its place in
    the loops, skipped ones included; m_before and l_before are the previous tile's m and l (−inf and 0 at a block's
    start); tile_max is the row maximum of that tile's masked scores; a skipped tile leaves m and l as they were."""
    q, k, v = _qkv()
    mask = causal_mask(5)  # (1, 1, 5, 5)
    _, steps = tiled_attention(q, k, v, 2, 2, mask)
    blocks = [(0, 2), (2, 4), (4, 5)]
    assert [(s.query_block, s.tile) for s in steps] == [(i, j) for i in range(3) for j in range(3)]
    scores = (q @ k.transpose(-2, -1) / math.sqrt(4)).masked_fill(~mask, -math.inf)  # (1, 2, 5, 5)
    for s in steps:
        (r0, r1), (c0, c1) = blocks[s.query_block], blocks[s.tile]
        assert (s.rows, s.columns) == ((r0, r1), (c0, c1))
        assert s.skipped == (c0 > r1 - 1)  # causal: a tile wholly right of the block's last row is never read
        if s.tile == 0:
            assert bool((s.m_before == -math.inf).all()) and float(s.l_before.abs().max()) == 0.0
        else:
            previous = steps[steps.index(s) - 1]
            torch.testing.assert_close(s.m_before, previous.m, rtol=0, atol=0)
            torch.testing.assert_close(s.l_before, previous.l, rtol=0, atol=0)
        if s.skipped:
            assert bool((s.tile_max == -math.inf).all())
            torch.testing.assert_close(s.m, s.m_before, rtol=0, atol=0)
            torch.testing.assert_close(s.l, s.l_before, rtol=0, atol=0)
        else:
            torch.testing.assert_close(s.tile_max, scores[:, :, r0:r1, c0:c1].amax(dim=-1), rtol=1e-12, atol=1e-12)
            torch.testing.assert_close(s.m, torch.maximum(s.m_before, s.tile_max), rtol=0, atol=0)


def test_the_labs_inputs_are_one_head_of_the_playgrounds_seeded_layer():
    """q, k, v of :func:`flash_inputs` are those of the playground's layer with one head (another code path:
    ``project_and_split``), for the default seed 0 and for another seed."""
    tokens = ["the", "cat", "sat", "down"]
    for seed in (0, 5):
        expected = token_heads(tokens, 8, 1, seed)  # (1, 1, L, 8) each
        got = flash_inputs(tokens, 8, seed) if seed else flash_inputs(tokens, 8)
        for a, b in zip(got, expected, strict=True):
            torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-6)
    assert not torch.allclose(flash_inputs(tokens, 8, 5)[0], flash_inputs(tokens, 8, 0)[0])
