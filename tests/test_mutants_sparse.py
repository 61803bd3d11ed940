"""Lab 14's sparse patterns on a sentence (:func:`sparse_on_tokens`), a case mutation testing
(scripts/mutation.sh) found no test for: the patterns are checked cell by cell against their rules, on a seed,
a width and a head count other than the defaults."""

from __future__ import annotations

import math

import torch

from mha.experiments.sparse import bigbird_block_layout, sparse_on_tokens


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
