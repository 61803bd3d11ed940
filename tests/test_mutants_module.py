"""The layer at the cases mutation testing (scripts/mutation.sh) found no test for: the sizes and inputs it refuses
(or not), a decoding step's context in its trace, and what the layer's repr says. Expected values are worked out
here from the trace's own weights and the cache's values (query head h reads key/value head h // (H / Hkv))."""

from __future__ import annotations

import pytest
import torch

from mha import MultiHeadAttention
from mha.kv_cache import KVCache
from mha.module import check_sizes


def test_a_decoding_steps_context_is_its_weights_times_the_values_its_heads_read():
    torch.manual_seed(0)
    layer = MultiHeadAttention(16, 4, num_kv_heads=2, rope_base=10_000.0).double().eval()
    x = torch.randn(1, 5, 16, dtype=torch.float64)
    cache = KVCache.for_layer(layer, max_length=5)
    with torch.no_grad():
        layer.forward_step(x[:, :3], cache, 0)
        for start, n in ((3, 1), (4, 1)):
            trace = layer.forward_step(x[:, start : start + n], cache, start)
            for h in range(4):
                values = trace.cache_values[:, h // 2]  # (B, t, Dh): the key/value head of query head h's group
                expected = trace.weights[:, h] @ values  # (B, n, t) @ (B, t, Dh) -> (B, n, Dh)
                torch.testing.assert_close(trace.context[:, h], expected, rtol=1e-12, atol=1e-12)


def test_the_repr_names_grouped_query_heads_and_rope_only_when_the_layer_has_them():
    plain = MultiHeadAttention(16, 4).extra_repr()
    assert plain == "d_model=16, num_heads=4, d_k=4"
    today = MultiHeadAttention(16, 4, num_kv_heads=2, rope_base=1e6).extra_repr()
    assert today == "d_model=16, num_heads=4, d_k=4, num_kv_heads=2, rope_base=1e+06"


@pytest.mark.parametrize("bad", ["query", "key", "value"])
def test_an_input_of_the_wrong_width_is_named(bad):
    layer = MultiHeadAttention(8, 2)
    inputs = {name: torch.zeros(1, 3, 8) for name in ("query", "key", "value")}
    inputs[bad] = torch.zeros(1, 3, 6)
    with pytest.raises(ValueError, match=rf"^{bad} must have shape \[B, L, d_model=8\], got \[1, 3, 6\]"):
        layer(inputs["query"], inputs["key"], inputs["value"])


def test_queries_and_keys_of_different_batch_sizes_are_refused_with_both_sizes():
    layer = MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match="same batch size, got 2 and 3"):
        layer(torch.zeros(2, 4, 8), torch.zeros(3, 5, 8), torch.zeros(3, 5, 8))


def test_the_smallest_layer_is_allowed_and_a_key_value_head_count_that_is_not_a_number_is_refused():
    check_sizes(1, 1)  # one feature, one head: the smallest layer there is
    with pytest.raises(ValueError, match="num_kv_heads must be a positive integer, got num_kv_heads='2'"):
        check_sizes(8, 4, "2")  # type: ignore[arg-type]
