"""The key/value cache at the cases mutation testing (scripts/mutation.sh) found no test for: the values its
errors name, the device it is made on (``meta`` stands in for a GPU) and what its repr says."""

from __future__ import annotations

import pytest
import torch

from mha import MultiHeadAttention
from mha.kv_cache import KVCache

SIZES = {"batch": 1, "kv_heads": 2, "max_length": 8, "d_k": 4}


@pytest.mark.parametrize("name", list(SIZES))
@pytest.mark.parametrize("bad", [0, -1, 2.0, True])
def test_a_size_that_is_not_a_positive_integer_is_refused_by_name(name, bad):
    sizes = {**SIZES, name: bad}
    with pytest.raises(ValueError, match=f"{name} must be a positive integer, got {name}={bad!r}"):
        KVCache(**sizes)


def test_the_errors_of_update_give_the_filled_positions_and_the_length_needed():
    """Three positions filled: a start of 5 is refused as past 0 .. 2; writing 4 at 3 needs a cache of 7 (3 + 4)."""
    cache = KVCache(1, 2, 6, 4)
    cache.update(0, torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4))
    with pytest.raises(ValueError, match=r"length=3 \(positions 0 \.\. 2 are filled\), got start=5"):
        cache.update(5, torch.zeros(1, 2, 1, 4), torch.zeros(1, 2, 1, 4))
    with pytest.raises(ValueError, match=r"writing 4 position\(s\) at 3 \.\. 6 .* at least 7 long"):
        cache.update(3, torch.zeros(1, 2, 4, 4), torch.zeros(1, 2, 4, 4))


def test_a_cache_is_made_on_the_device_asked_for_and_on_its_layers():
    cache = KVCache(1, 2, 8, 4, device="meta")
    assert cache.k.device.type == "meta" and cache.v.device.type == "meta"
    layer = MultiHeadAttention(16, 4, num_kv_heads=2).to("meta")
    cache = KVCache.for_layer(layer, max_length=5)
    assert cache.k.device.type == "meta" and cache.v.device.type == "meta"
    assert cache.k.shape == cache.v.shape == (1, 2, 5, 4)  # (B, Hkv, L_max, d_model / H)


def test_the_repr_gives_the_sizes_and_how_much_is_filled():
    cache = KVCache(2, 3, 8, 4)
    cache.update(0, torch.zeros(2, 3, 5, 4), torch.zeros(2, 3, 5, 4))
    assert "batch=2, kv_heads=3, max_length=8, d_k=4, length=5" in repr(cache)
