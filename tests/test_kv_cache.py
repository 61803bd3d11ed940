"""The key/value cache and one decoding step of our layer against the traced forward over the whole sequence."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch

from mha import MultiHeadAttention
from mha.counting import KVCacheSize, kv_cache_numbers
from mha.experiments.decode_cost import step_calls, step_times
from mha.kv_cache import KVCache
from mha.masks import causal_mask

D_MODEL, HEADS, LENGTH = 16, 4, 7
#: (num_kv_heads, rope_base): the tutorials' layer, GQA 4/2, MQA 4/1, RoPE, GQA with RoPE.
LAYERS = [(None, None), (2, None), (1, None), (None, 10_000.0), (2, 10_000.0), (1, 1e6)]
EXACT = 1e-12  # float64: the same sums in another order


def _layer(num_kv_heads, rope_base, seed=0) -> MultiHeadAttention:
    torch.manual_seed(seed)
    return MultiHeadAttention(D_MODEL, HEADS, num_kv_heads=num_kv_heads, rope_base=rope_base).double().eval()


def _blocks(batch=2, kv_heads=2, sizes=(3, 1, 2), d_k=4):
    generator = torch.Generator().manual_seed(1)
    return [
        (
            torch.randn(batch, kv_heads, n, d_k, generator=generator),
            torch.randn(batch, kv_heads, n, d_k, generator=generator),
        )
        for n in sizes
    ]


# ---------------------------------------------------------------- the cache
def test_update_returns_every_block_written_so_far_in_order():
    cache = KVCache(2, 2, 8, 4)
    written_k, written_v, start = [], [], 0
    for k, v in _blocks():
        keys, values = cache.update(start, k, v)
        written_k.append(k)
        written_v.append(v)
        start += k.size(2)
        assert cache.length == start
        torch.testing.assert_close(keys, torch.cat(written_k, dim=2), rtol=0, atol=0)
        torch.testing.assert_close(values, torch.cat(written_v, dim=2), rtol=0, atol=0)
    assert keys.shape == (2, 2, 6, 4)
    assert float(cache.k[:, :, start:].abs().max()) == 0.0  # nothing written past the filled part


def test_a_rewind_writes_over_the_later_positions_and_forgets_what_followed():
    cache = KVCache(2, 2, 8, 4)
    (k1, v1), (k2, v2), (k3, v3) = _blocks()
    cache.update(0, k1, v1)
    cache.update(3, k2, v2)
    keys, values = cache.update(1, k3, v3)  # positions 1, 2 again
    assert cache.length == 3
    torch.testing.assert_close(keys, torch.cat([k1[:, :, :1], k3], dim=2), rtol=0, atol=0)
    torch.testing.assert_close(values, torch.cat([v1[:, :, :1], v3], dim=2), rtol=0, atol=0)


def test_writes_inside_inference_mode_reach_a_cache_made_outside_it():
    cache = KVCache(1, 1, 4, 2)
    k = torch.ones(1, 1, 2, 2)
    with torch.inference_mode():
        keys, _ = cache.update(0, k, 2 * k)
    assert float(cache.k[:, :, :2].sum()) == 4.0 and float(cache.v[:, :, :2].sum()) == 8.0
    assert keys.shape == (1, 1, 2, 2)


def test_a_write_past_l_max_is_refused_with_the_numbers():
    cache = KVCache(1, 2, 4, 3)
    cache.update(0, torch.zeros(1, 2, 3, 3), torch.zeros(1, 2, 3, 3))
    with pytest.raises(ValueError, match=r"2 position\(s\) at 3 \.\. 4 passes the cache's L_max=4"):
        cache.update(3, torch.zeros(1, 2, 2, 3), torch.zeros(1, 2, 2, 3))
    assert cache.length == 3  # nothing written


@pytest.mark.parametrize(
    ("start", "k_shape", "v_shape", "message"),
    [
        (2, (1, 2, 1, 3), (1, 2, 1, 3), r"start must lie in 0 \.\. length=1.*got start=2"),
        (-1, (1, 2, 1, 3), (1, 2, 1, 3), r"got start=-1"),
        (1, (1, 3, 1, 3), (1, 3, 1, 3), r"\[B=1, Hkv=2, n, Dh=3\], got \[1, 3, 1, 3\]"),
        (1, (1, 2, 1, 3), (1, 2, 2, 3), r"got \[1, 2, 1, 3\] and \[1, 2, 2, 3\]"),
        (1, (2, 1, 3), (2, 1, 3), r"got \[2, 1, 3\]"),
    ],
)
def test_a_gap_or_a_wrong_shape_is_refused_naming_it(start, k_shape, v_shape, message):
    cache = KVCache(1, 2, 4, 3)
    cache.update(0, torch.zeros(1, 2, 1, 3), torch.zeros(1, 2, 1, 3))
    with pytest.raises(ValueError, match=message):
        cache.update(start, torch.zeros(k_shape), torch.zeros(v_shape))


@pytest.mark.parametrize("size", [0, -2, 1.5, True])
def test_a_cache_of_no_size_is_refused(size):
    with pytest.raises(ValueError, match="max_length must be a positive integer"):
        KVCache(1, 2, size, 4)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_bytes_per_token_are_what_the_buffers_hold_per_position(dtype):
    batch, kv_heads, max_length, d_k = 1, 3, 10, 8
    cache = KVCache(batch, kv_heads, max_length, d_k, dtype=dtype)
    held = cache.k.numel() * cache.k.element_size() + cache.v.numel() * cache.v.element_size()
    assert cache.nbytes_per_token == held // max_length
    size = KVCacheSize(1, kv_heads, d_k, dtype)
    assert size.bytes_for(max_length) == held  # the buffers' bytes, every position filled
    assert size.numbers_per_token == (cache.k.numel() + cache.v.numel()) // max_length
    layers = 5
    assert KVCacheSize(layers, kv_heads, d_k, dtype).bytes_per_token == layers * held // max_length


def test_grouped_query_attention_divides_the_cache_by_its_groups():
    """Qwen2.5-0.5B's sizes (bench/pretrained.py: 24 layers, 14 query / 2 K/V heads, d_k 64; bf16): 12 KiB against
    84 KiB."""
    assert KVCacheSize(24, 2, 64, torch.bfloat16).bytes_per_token == 12 * 1024
    assert KVCacheSize(24, 14, 64, torch.bfloat16).bytes_per_token == 84 * 1024
    assert KVCacheSize(24, 2, 64).numbers_per_token == kv_cache_numbers(24, 2, 64) == 6 * 1024  # float32 by default


def test_a_cache_for_a_layer_takes_its_heads_size_dtype_and_device():
    layer = _layer(2, None)
    cache = KVCache.for_layer(layer, 9, batch=3)
    assert cache.k.shape == (3, layer.num_kv_heads, 9, layer.d_k) and cache.k.dtype == torch.float64
    assert cache.max_length == 9 and cache.length == 0
    assert not dict(cache.state_dict())  # buffers of a run, never saved with a model


# ---------------------------------------------------------------- forward_step against forward_traced
#: How the LENGTH rows are fed: a prompt (the first block, at start 0), then blocks at the positions that follow.
#: (2, 3, 1, 1): a block of 3 new rows at start 2 after a prompt of 2, the mask within a block away from start 0.
FEEDS = [(1,) * LENGTH, (3, 1, 1, 1, 1), (2, 3, 1, 1), (4, 3)]


@pytest.mark.parametrize(("num_kv_heads", "rope_base"), LAYERS)
@pytest.mark.parametrize("sizes", FEEDS, ids=lambda sizes: "+".join(map(str, sizes)))
def test_steps_of_any_block_sizes_give_the_traced_causal_forward_row_by_row(num_kv_heads, rope_base, sizes, device):
    """On the suite's device: the cache, its positions and the rotation live where the layer does."""
    if device.type == "mps":
        pytest.skip("mps has no float64")
    assert sum(sizes) == LENGTH
    layer = _layer(num_kv_heads, rope_base).to(device)
    x = torch.randn(2, LENGTH, D_MODEL, dtype=torch.float64, generator=torch.Generator().manual_seed(2)).to(device)
    with torch.inference_mode():
        trace = layer.forward_traced(x, x, x, causal_mask(LENGTH).to(device))
        cache = KVCache.for_layer(layer, LENGTH, batch=2)
        steps, start = [], 0
        for n in sizes:
            steps.append(layer.forward_step(x[:, start : start + n], cache, start))
            start += n
    queries = trace.project.q_rotated if rope_base is not None else trace.project.q_heads  # (B, H, L, Dh)
    keys = trace.project.k_rotated if rope_base is not None else trace.project.k_heads  # (B, Hkv, L, Dh)
    start = 0
    for step, n in zip(steps, sizes, strict=True):
        rows = list(range(start, start + n))
        t = start + n
        assert list(step.appended) == rows and step.start == start and step.length == t
        assert step.weights.shape == (2, HEADS, n, t)
        assert step.cache_keys.shape == (2, layer.num_kv_heads, t, layer.d_k)
        torch.testing.assert_close(step.weights, trace.weights[:, :, rows, :t], rtol=0, atol=EXACT)
        torch.testing.assert_close(step.scores, trace.attend.masked_scores[:, :, rows, :t], rtol=0, atol=EXACT)
        torch.testing.assert_close(step.output, trace.output[:, rows], rtol=0, atol=EXACT)
        torch.testing.assert_close(step.q, queries[:, :, rows], rtol=0, atol=EXACT)
        torch.testing.assert_close(step.cache_keys, keys[:, :, :t], rtol=0, atol=EXACT)
        torch.testing.assert_close(step.cache_values, trace.project.v_heads[:, :, :t], rtol=0, atol=EXACT)
        later = torch.arange(t) > torch.tensor(rows)[:, None]  # (n, t): each new row's positions after its own
        if later.any():  # a block of several rows: none of them read a later row of the same block
            assert float(step.weights.cpu()[:, :, later].abs().max()) == 0.0
        assert bool((step.weights.cpu()[:, :, ~later] > 0).all())  # and every position up to its own gets some weight
        start = t


def test_a_new_row_of_a_rope_layer_is_turned_by_its_true_position():
    """Steps that all claimed position 0 would score the same as a sentence of one token: they must not."""
    layer = _layer(2, 10_000.0)
    x = torch.randn(1, 4, D_MODEL, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    with torch.inference_mode():
        cache = KVCache.for_layer(layer, 4)
        layer.forward_step(x[:, :3], cache, 0)
        true = layer.forward_step(x[:, 3:], cache, 3).q
        at_zero = layer.forward_traced(x[:, 3:], x[:, 3:], x[:, 3:]).project.q_rotated  # position 0
    assert float((true - at_zero).abs().max()) > 1e-3


def test_a_step_past_the_cache_names_the_cache_size():
    layer = _layer(None, None)
    cache = KVCache.for_layer(layer, 2)
    x = torch.randn(1, 3, D_MODEL, dtype=torch.float64)
    with pytest.raises(ValueError, match="L_max=2"):
        layer.forward_step(x, cache, 0)


def test_the_timed_calls_compute_the_same_row():
    layer = _layer(2, 10_000.0)
    cached, recompute = step_calls(layer, 9)
    with torch.inference_mode():
        first, again, full = cached(), cached(), recompute()
    assert first.shape == full.shape == (1, D_MODEL)
    torch.testing.assert_close(first, full, rtol=0, atol=EXACT)
    torch.testing.assert_close(again, first, rtol=0, atol=0)  # a second call writes over the same position


def test_step_times_give_each_length_and_the_cache_it_holds():
    layer = _layer(2, None).float()
    rows = step_times(layer, [1, 5, 12], repeats=3)
    assert [row.length for row in rows] == [1, 5, 12]
    for row in rows:
        assert row.cache_bytes == row.length * 2 * 2 * 4 * 4  # t · 2 (K and V) · Hkv 2 · Dh 4 (16 / 4 heads) · float32
    with pytest.raises(ValueError, match="length must be a positive integer, got length=0"):
        step_times(layer, [0], repeats=3)


def _factors(node: ast.expr) -> list[ast.expr]:
    """The factors of a product ``a * b * c`` (one factor where ``node`` is no product)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return [*_factors(node.left), *_factors(node.right)]
    return [node]


def _cache_products(tree: ast.AST) -> list[int]:
    """Lines of the products shaped like the cache's formula: 2 times key/value heads times d_k."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
            continue
        factors = _factors(node)
        names = [
            (f.id if isinstance(f, ast.Name) else f.attr).lower()
            for f in factors
            if isinstance(f, ast.Name | ast.Attribute)
        ]
        two = any(isinstance(f, ast.Constant) and f.value == 2 for f in factors)
        if two and any("kv" in n for n in names) and any(n in ("d_k", "dh", "head_dim") for n in names):
            found.append(node.lineno)
    return found


def test_the_cache_size_per_token_is_counted_in_one_place():
    """No module but ``mha/counting.py`` writes the cache's 2 · layers · h_kv · d_k: every cache size reads
    ``kv_cache_numbers`` (through :class:`KVCacheSize` where the bytes follow)."""
    root = Path(__file__).resolve().parents[1]
    assert _cache_products(ast.parse("2 * layers * kv_heads * d_k")) == [1]  # the rule finds the formula
    found = []
    for path in [*(root / "mha").rglob("*.py"), *(root / "components").rglob("*.py"), *(root / "bench").rglob("*.py")]:
        if path.name != "counting.py":
            lines = _cache_products(ast.parse(path.read_text(encoding="utf-8")))
            found += [f"{path.relative_to(root)}:{line}" for line in lines]
    assert found == []
