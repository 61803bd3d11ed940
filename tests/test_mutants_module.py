"""The layer at the cases mutation testing (scripts/mutation.sh) found no test for: a decoding step's context in
its trace and what the layer's repr says. Expected values are worked out here from the trace's own weights and
the cache's values (query head h reads key/value head h // (H / Hkv))."""

from __future__ import annotations

import torch

from mha import MultiHeadAttention
from mha.kv_cache import KVCache


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
