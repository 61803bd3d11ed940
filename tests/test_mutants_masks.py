"""Mask builders at the cases mutation testing (scripts/mutation.sh) found no test for.

Each mask is checked against its rule written out here cell by cell (``j <= i``, ``|i - j| <= w``), and against
the device it was asked for: the ``meta`` device stands in for a GPU, so a builder that forgets ``device=`` (and
would hand a CPU mask to a layer on CUDA) fails on a machine without one.
"""

from __future__ import annotations

import pytest
import torch

from mha.masks import build_mask, causal_mask, padding_mask, to_additive_mask, window_mask


def _rule(length_q: int, length_k: int, keep) -> torch.Tensor:
    """The (1, 1, Lq, Lk) mask whose cell (i, j) is ``keep(i, j)``, built one cell at a time."""
    cells = [[bool(keep(i, j)) for j in range(length_k)] for i in range(length_q)]
    return torch.tensor(cells, dtype=torch.bool).view(1, 1, length_q, length_k)


@pytest.mark.parametrize(("window", "length_q", "length_k"), [(0, 3, 5), (1, 3, 5), (2, 4, 7), (1, 5, 2)])
def test_a_window_mask_between_sentences_of_two_lengths_keeps_every_key_near_the_query(window, length_q, length_k):
    """Cross-attention: Lq queries against Lk keys; query i keeps key j iff |i - j| <= window."""
    queries, keys = [f"q{i}" for i in range(length_q)], [f"k{j}" for j in range(length_k)]
    expected = _rule(length_q, length_k, lambda i, j: abs(i - j) <= window)
    assert torch.equal(window_mask(length_q, window, length_k), expected)
    assert torch.equal(build_mask("window", queries, keys, window=window), expected)


def test_build_mask_sees_two_neighbours_each_side_unless_told():
    """The documented default window of :func:`build_mask` is 2: query i keeps keys i-2 .. i+2."""
    tokens = [f"t{i}" for i in range(7)]
    assert torch.equal(build_mask("window", tokens), _rule(7, 7, lambda i, j: abs(i - j) <= 2))


def test_build_mask_blocks_pad_keys_of_another_sentence_in_cross_attention():
    """``block_pad`` with Lq != Lk: the pad keys of the key sentence are blocked for every query."""
    queries, keys = ["a", "b"], ["x", "y", "[PAD]", "[PAD]"]
    expected = _rule(2, 4, lambda i, j: j <= i and j < 2)
    assert torch.equal(build_mask("causal", queries, keys, block_pad=True), expected)


@pytest.mark.parametrize("mask_type", ["causal", "window", "padding"])
@pytest.mark.parametrize("block_pad", [False, True])
def test_every_mask_is_made_on_the_device_asked_for(mask_type, block_pad):
    """A mask for a layer on another device is made there (``meta`` stands in for a GPU here)."""
    tokens = ["a", "b", "[PAD]"]
    mask = build_mask(mask_type, tokens, device="meta", block_pad=block_pad)
    assert mask.device.type == "meta"
    assert mask.dtype == torch.bool


def test_the_builders_make_their_masks_on_the_device_asked_for():
    for mask in (
        causal_mask(3, device="meta"),
        window_mask(3, 1, 4, device="meta"),
        padding_mask(["a"], device="meta"),
    ):
        assert mask.device.type == "meta"
    assert build_mask("none", ["a", "[PAD]"], device="meta", block_pad=True).device.type == "meta"
    assert to_additive_mask(causal_mask(3, device="meta")).device.type == "meta"
