"""Lab 14's sparse attention at the cases mutation testing (scripts/mutation.sh) found no test for: the patterns
on a sentence (:func:`sparse_on_tokens`, checked cell by cell against their rules on a seed, a width and a head
count other than the defaults), the limits the builders refuse, and the block-skipping run with autograd on."""

from __future__ import annotations

import math

import pytest
import torch

from mha.experiments.sparse import (
    bigbird_block_layout,
    block_layout_of,
    block_sparse_attention,
    longformer_mask,
    num_blocks,
    sparse_on_tokens,
)


def test_the_patterns_on_a_sentence_are_longformers_and_bigbirds_rules():
    length, window, global_tokens, block = 16, 1, (0, 7), 2
    tokens = [f"w{i}" for i in range(length)]
    result = sparse_on_tokens(tokens, window, global_tokens, block, 1, 1, 1, seed=4, d_model=32, num_heads=2)
    cells = range(length)
    expected = [[abs(i - j) <= window or i in global_tokens or j in global_tokens for j in cells] for i in cells]
    assert result.longformer.tolist() == expected
    layout = bigbird_block_layout(8, 1, 1, 1, seed=4)  # L / b = 8 blocks; the layout's rules are tested on their own
    assert not torch.equal(layout, bigbird_block_layout(8, 1, 1, 1, seed=0))  # so the seed shows
    assert result.bigbird.tolist() == [[bool(layout[i // block, j // block]) for j in cells] for i in cells]


def test_the_block_skipping_run_gives_the_dense_runs_numbers_on_the_sentence():
    """Both runs compute the same attention on the sentence's q, k, v: the gaps are rounding (float32)."""
    tokens = [f"w{i}" for i in range(9)]
    result = sparse_on_tokens(tokens, 1, (0,), 2, 1, 1, 1, seed=2, d_model=32, num_heads=2)
    for diff in (result.longformer_diff, result.bigbird_diff):
        assert math.isfinite(diff) and 0.0 <= diff < 1e-5


def test_blocks_of_one_token_are_allowed_and_blocks_of_none_refused():
    assert num_blocks(5, 1) == 5 and num_blocks(5, 2) == 3 and num_blocks(6, 3) == 2  # ceil(L / b)
    with pytest.raises(ValueError, match="block must be >= 1, got block=0"):
        num_blocks(5, 0)


def test_a_global_token_outside_the_sentence_is_refused_with_the_positions_allowed():
    with pytest.raises(ValueError, match=r"global tokens \[5\] must be positions 0 \.\. 4"):
        longformer_mask(5, 1, (5,))


@pytest.mark.parametrize("sizes", [(-1, 0, 0), (0, -1, 0), (0, 0, -1)])
def test_bigbird_refuses_a_negative_window_global_or_random_count(sizes):
    with pytest.raises(ValueError, match="must be >= 0"):
        bigbird_block_layout(4, *sizes)


def test_bigbird_with_no_window_global_or_random_block_keeps_only_the_diagonal_and_its_seed_defaults_to_0():
    assert torch.equal(bigbird_block_layout(4, 0, 0, 0), torch.eye(4, dtype=torch.bool))  # |I - J| <= 0
    assert torch.equal(bigbird_block_layout(8, 1, 1, 1), bigbird_block_layout(8, 1, 1, 1, seed=0))


def test_block_layout_of_reads_a_two_dimensional_mask_too():
    """A plain (L, L) mask, as well as (1, 1, L, L): block (I, J) kept when any of its cells is."""
    keep = torch.zeros(5, 5, dtype=torch.bool)
    keep[4, 0] = True  # query 4 (block 2) reads key 0 (block 0), blocks of 2
    expected = torch.zeros(3, 3, dtype=torch.bool)
    expected[2, 0] = True
    assert torch.equal(block_layout_of(keep, 2), expected)
    assert torch.equal(block_layout_of(keep.view(1, 1, 5, 5), 2), expected)


def test_block_sparse_attention_with_autograd_gives_the_dense_numbers_and_gradients():
    """With a gradient wanted the slot softmax is not done in place: the output and dL/dq, dL/dk, dL/dv are those
    of softmax(q kᵀ / √d, masked) v worked out here on the expanded layout (L = 7, blocks of 2, float64)."""
    generator = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 2, 7, 4, generator=generator, dtype=torch.float64, requires_grad=True) for _ in range(3))
    layout = bigbird_block_layout(4, 0, 1, 1, seed=1)  # (4, 4): a global block and one random block per row
    keep = torch.tensor([[bool(layout[i // 2, j // 2]) for j in range(7)] for i in range(7)])  # (7, 7)
    sparse = block_sparse_attention(q, k, v, layout, 2)
    dense = torch.softmax((q @ k.transpose(-2, -1) / 2.0).masked_fill(~keep, float("-inf")), dim=-1) @ v  # √4 = 2
    torch.testing.assert_close(sparse, dense, rtol=1e-10, atol=1e-12)
    upstream = torch.randn(1, 2, 7, 4, generator=generator, dtype=torch.float64)
    got = torch.autograd.grad(sparse, (q, k, v), upstream)
    expected = torch.autograd.grad(dense, (q, k, v), upstream)
    for a, b in zip(got, expected, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)
