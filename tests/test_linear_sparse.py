"""Lab 14's engine against independent formulas: linear attention as the kernel sum written pair by pair (and its
causal form as a loop with prefix sums), the sparse patterns by their definitions, and the block-skipping run
against the dense masked run (float64)."""

from __future__ import annotations

import math

import pytest
import torch

from mha.experiments.efficient_cost import (
    METHODS,
    EfficientRow,
    crossover,
    measure_efficient,
    measure_efficient_isolated,
)
from mha.experiments.linear import (
    compare_on_tokens,
    flatter_rows,
    implied_weights,
    linear_attention,
    linear_state,
    phi,
    row_entropy,
    softmax_weights,
)
from mha.experiments.sparse import (
    bigbird_block_layout,
    block_layout_of,
    block_sparse_attention,
    dense_masked_attention,
    expand_layout,
    kept_fraction,
    longformer_mask,
    num_blocks,
)


def _qkv(length: int, head_dim: int = 5, heads: int = 2, seed: int = 0, dtype=torch.float64):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(3, 2, heads, length, head_dim, generator=generator, dtype=dtype)  # 3 x (B=2, H, L, d)


def _phi_scalar(x: float) -> float:
    """elu(x) + 1 from its definition: elu(x) = x for x > 0, exp(x) - 1 otherwise."""
    return (x if x > 0 else math.exp(x) - 1.0) + 1.0


def _kernel_formula(q, k, v, causal: bool):
    """out_i = Σ_j φ(q_i)·φ(k_j) v_j / Σ_j φ(q_i)·φ(k_j), every pair written out (j ≤ i when causal)."""
    batch, heads, length, _ = q.shape
    out = torch.zeros(batch, heads, length, v.shape[-1], dtype=torch.float64)
    fq = q.double().clone().apply_(_phi_scalar)
    fk = k.double().clone().apply_(_phi_scalar)
    for b in range(batch):
        for h in range(heads):
            for i in range(length):
                numerator = torch.zeros(v.shape[-1], dtype=torch.float64)
                denominator = 0.0
                for j in range(i + 1 if causal else length):
                    similarity = float(sum(fq[b, h, i, c] * fk[b, h, j, c] for c in range(q.shape[-1])))
                    numerator += similarity * v[b, h, j].double()
                    denominator += similarity
                out[b, h, i] = numerator / denominator
    return out


def _running_sum(q, k, v):
    """The causal form as an RNN: a loop over i, the state S and z grown by one key at a time (prefix sums)."""
    batch, heads, length, head_dim = q.shape
    out = torch.zeros(batch, heads, length, v.shape[-1], dtype=torch.float64)
    fq, fk = q.double().clone().apply_(_phi_scalar), k.double().clone().apply_(_phi_scalar)
    state = torch.zeros(batch, heads, head_dim, v.shape[-1], dtype=torch.float64)
    key_sum = torch.zeros(batch, heads, head_dim, dtype=torch.float64)
    for i in range(length):
        state = state + fk[:, :, i, :, None] * v[:, :, i, None, :].double()  # S_i = S_{i-1} + φ(k_i) v_iᵀ
        key_sum = key_sum + fk[:, :, i]  # z_i = z_{i-1} + φ(k_i)
        numerator = (fq[:, :, i, :, None] * state).sum(dim=-2)  # φ(q_i)ᵀ S_i
        out[:, :, i] = numerator / (fq[:, :, i] * key_sum).sum(dim=-1, keepdim=True)
    return out


# ---------------------------------------------------------------- linear attention
def test_phi_is_elu_plus_one_and_stays_positive_where_float32_elu_plus_one_rounds_to_zero():
    x = torch.tensor([-30.0, -2.0, -0.5, 0.0, 0.7, 3.0], dtype=torch.float64)
    assert torch.allclose(phi(x), torch.tensor([_phi_scalar(float(v)) for v in x], dtype=torch.float64), rtol=1e-12)
    deep = torch.tensor([-30.0])
    assert float(torch.nn.functional.elu(deep) + 1) == 0.0  # the rounding phi avoids
    assert float(phi(deep)) > 0


@pytest.mark.parametrize("length", [1, 4, 7])
def test_linear_attention_is_the_kernel_formula(length):
    q, k, v = _qkv(length)
    expected = _kernel_formula(q, k, v, causal=False)
    torch.testing.assert_close(linear_attention(q, k, v), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("length", [1, 5, 8])
def test_causal_linear_attention_is_the_running_sum_and_the_masked_kernel_formula(length):
    q, k, v = _qkv(length, seed=1)
    got = linear_attention(q, k, v, causal=True)
    torch.testing.assert_close(got, _running_sum(q, k, v), rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(got, _kernel_formula(q, k, v, causal=True), rtol=1e-10, atol=1e-12)


def test_causal_rows_do_not_read_later_tokens():
    q, k, v = _qkv(6, seed=2)
    changed = v.clone()
    changed[:, :, 4:] += 10.0
    torch.testing.assert_close(
        linear_attention(q, k, v, causal=True)[:, :, :4], linear_attention(q, k, changed, causal=True)[:, :, :4]
    )
    assert not torch.allclose(linear_attention(q, k, v)[:, :, :4], linear_attention(q, k, changed)[:, :, :4])


@pytest.mark.parametrize("causal", [False, True])
def test_implied_weights_are_the_normalised_kernel_and_give_the_output(causal):
    q, k, v = _qkv(6, seed=3)
    weights = implied_weights(q, k, causal)
    fq, fk = q.clone().apply_(_phi_scalar), k.clone().apply_(_phi_scalar)
    b, h, i, j = 1, 0, 4, 2
    pair = float((fq[b, h, i] * fk[b, h, j]).sum())
    row = sum(float((fq[b, h, i] * fk[b, h, n]).sum()) for n in range(i + 1 if causal else 6))
    assert float(weights[b, h, i, j]) == pytest.approx(pair / row, rel=1e-12)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 2, 6, dtype=torch.float64))
    torch.testing.assert_close(weights @ v, linear_attention(q, k, v, causal))
    if causal:
        assert float(weights[b, h, 2, 5]) == 0.0


def test_linear_weights_are_another_function_than_softmax():
    """Not an approximation that converges: on the same q, k the weights differ, and they still differ at 16×
    the size of d (nothing in the formula tends to softmax's)."""
    for head_dim in (8, 128):
        q, k, _ = _qkv(12, head_dim=head_dim, seed=4)
        difference = (implied_weights(q, k) - softmax_weights(q, k)).abs().max()
        assert difference > 0.05
    q, k, _ = _qkv(5, seed=5)
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(5)
    torch.testing.assert_close(softmax_weights(q, k), torch.softmax(scores, dim=-1))


def test_the_state_kept_is_one_s_and_z_or_every_running_sum_when_causal():
    """S = Σ φ(k_j) v_jᵀ and z = Σ φ(k_j) (d × d + d numbers per head); causal: S_i and z_i at every i, summed
    here one position at a time (L · (d × d + d) numbers per head), as the lab counts them."""
    _, k, v = _qkv(6, head_dim=4, heads=3)
    phi_k = phi(k)
    state, key_sum = linear_state(phi_k, v)
    assert state.shape == (2, 3, 4, 4) and key_sum.shape == (2, 3, 4)
    torch.testing.assert_close(state, phi_k.transpose(-2, -1) @ v)
    states, key_sums = linear_state(phi_k, v, causal=True)
    assert states.shape == (2, 3, 6, 4, 4) and key_sums.shape == (2, 3, 6, 4)
    running, running_z = torch.zeros(2, 3, 4, 4, dtype=torch.float64), torch.zeros(2, 3, 4, dtype=torch.float64)
    for i in range(6):
        running = running + phi_k[:, :, i, :, None] * v[:, :, i, None, :]  # S_i = S_(i-1) + φ(k_i) v_iᵀ
        running_z = running_z + phi_k[:, :, i]
        torch.testing.assert_close(states[:, :, i], running)
        torch.testing.assert_close(key_sums[:, :, i], running_z)
    tokens = list("abcdefg")
    for heads in (1, 2, 4):
        d = 64 // heads
        assert compare_on_tokens(tokens, 64, heads, causal=False).state_numbers == d * d + d
        assert compare_on_tokens(tokens, 64, heads, causal=True).state_numbers == len(tokens) * (d * d + d)


def test_flatter_rows_are_counted_by_entropy():
    uniform = torch.full((1, 4), 0.25)
    peaked = torch.tensor([[0.7, 0.1, 0.1, 0.1]])
    torch.testing.assert_close(row_entropy(uniform), torch.tensor([math.log(4)]))
    torch.testing.assert_close(row_entropy(torch.tensor([[1.0, 0.0, 0.0, 0.0]])), torch.tensor([0.0]))
    softmax = torch.cat([peaked, uniform, uniform])  # (3, 4)
    linear = torch.cat([uniform, peaked, uniform])
    assert flatter_rows(softmax, linear) == (1, 1, 1)


# ---------------------------------------------------------------- sparse patterns
def test_longformer_mask_is_a_window_plus_global_rows_and_columns():
    length, window, global_tokens = 9, 1, (0, 5)
    mask = longformer_mask(length, window, global_tokens)[0, 0]
    for i in range(length):
        for j in range(length):
            expected = abs(i - j) <= window or i in global_tokens or j in global_tokens
            assert bool(mask[i, j]) == expected, (i, j)
    with pytest.raises(ValueError, match="global tokens"):
        longformer_mask(4, 1, (4,))


def test_bigbird_layout_has_window_global_and_exactly_r_random_blocks_per_row_seeded():
    blocks, window, global_blocks, random_blocks = 10, 1, 1, 2
    layout = bigbird_block_layout(blocks, window, global_blocks, random_blocks, seed=7)
    assert layout[0].all() and layout[:, 0].all()  # the global block
    for row in range(blocks):
        for column in range(blocks):
            if abs(row - column) <= window:
                assert layout[row, column]
    for row in range(global_blocks, blocks):
        fixed = sum(1 for c in range(blocks) if abs(row - c) <= window or c < global_blocks)
        assert int(layout[row].sum()) == fixed + random_blocks
    assert torch.equal(layout, bigbird_block_layout(blocks, window, global_blocks, random_blocks, seed=7))
    assert not torch.equal(layout, bigbird_block_layout(blocks, window, global_blocks, random_blocks, seed=8))


def test_expand_layout_and_block_layout_of_are_block_granular():
    layout = torch.tensor([[True, False], [False, True]])
    mask = expand_layout(layout, 3, 5)[0, 0]  # blocks {0, 1, 2} and {3, 4}
    assert mask.shape == (5, 5)
    assert mask[2, 2] and not mask[2, 3] and mask[4, 3] and not mask[0, 4]
    assert torch.equal(block_layout_of(longformer_mask(8, 0), 4), layout)
    assert kept_fraction(mask) == pytest.approx((9 + 4) / 25)
    assert num_blocks(5, 3) == 2 and num_blocks(6, 3) == 2


# ---------------------------------------------------------------- block-skipping run = dense masked run
@pytest.mark.parametrize(("length", "block"), [(16, 4), (50, 8), (37, 5), (7, 4), (12, 16), (64, 16)])
def test_block_sparse_equals_dense_masked_for_bigbird(length, block):
    q, k, v = _qkv(length, head_dim=6, seed=length)
    layout = bigbird_block_layout(num_blocks(length, block), 1, 1, 1, seed=block)
    dense = dense_masked_attention(q, k, v, expand_layout(layout, block, length))
    torch.testing.assert_close(block_sparse_attention(q, k, v, layout, block), dense, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("length", "block", "window", "global_tokens"), [(20, 4, 2, (0,)), (33, 8, 1, (0, 17)), (9, 4, 0, ())]
)
def test_block_sparse_equals_dense_masked_for_longformer(length, block, window, global_tokens):
    q, k, v = _qkv(length, head_dim=4, seed=length + 1)
    mask = longformer_mask(length, window, global_tokens)
    got = block_sparse_attention(q, k, v, block_layout_of(mask, block), block, mask)
    torch.testing.assert_close(got, dense_masked_attention(q, k, v, mask), rtol=1e-12, atol=1e-12)


def test_block_sparse_without_the_token_mask_computes_whole_blocks():
    """Sanity of the comparison above: the Longformer case depends on the token mask inside the kept blocks."""
    q, k, v = _qkv(20, head_dim=4, seed=9)
    mask = longformer_mask(20, 1, (0,))
    layout = block_layout_of(mask, 4)
    whole_blocks = block_sparse_attention(q, k, v, layout, 4)
    assert not torch.allclose(whole_blocks, dense_masked_attention(q, k, v, mask))
    torch.testing.assert_close(whole_blocks, dense_masked_attention(q, k, v, expand_layout(layout, 4, 20)))


def test_a_row_with_no_kept_key_is_zero_not_nan_in_both_runs():
    q, k, v = _qkv(8, head_dim=3, seed=10)
    layout = torch.tensor([[True, False], [False, False]])  # query block 1 keeps nothing
    sparse = block_sparse_attention(q, k, v, layout, 4)
    dense = dense_masked_attention(q, k, v, expand_layout(layout, 4, 8))
    assert not sparse.isnan().any() and not dense.isnan().any()
    assert torch.equal(sparse[:, :, 4:], torch.zeros_like(sparse[:, :, 4:]))
    torch.testing.assert_close(sparse, dense)


def test_block_sparse_refuses_a_layout_of_the_wrong_size():
    q, k, v = _qkv(10)
    with pytest.raises(ValueError, match="layout must be"):
        block_sparse_attention(q, k, v, torch.ones(2, 2, dtype=torch.bool), 4)


# ---------------------------------------------------------------- the cost measurement
def test_crossover_is_the_first_length_from_which_the_cheaper_stays_cheaper():
    def rows(values):
        return [
            EfficientRow(method, length, seconds, 0, seconds, seconds, 1)
            for length, pair in values.items()
            for method, seconds in zip(("softmax", "linear"), pair, strict=True)
        ]

    assert crossover(rows({32: (1, 2), 64: (2, 1), 128: (4, 2)}), "softmax", "linear") == 64
    assert crossover(rows({32: (2, 1), 64: (1, 2), 128: (4, 2)}), "softmax", "linear") == 128  # not from 32
    assert crossover(rows({32: (1, 2), 64: (1, 2)}), "softmax", "linear") is None


def test_measurement_has_every_method_and_length_and_block_sparse_holds_less_than_dense_at_length():
    rows = measure_efficient([64, 512], num_heads=1, head_dim=16, block=32, repeats=3)
    assert {(r.method, r.length) for r in rows} == {(m, n) for m in METHODS for n in (64, 512)}
    assert all(r.low_s <= r.seconds <= r.high_s and r.peak_bytes > 0 for r in rows)
    peak = {(r.method, r.length): r.peak_bytes for r in rows}
    # dense: at least the 512 x 512 float32 scores; the masked one no less; block-skipping far less
    assert peak["dense", 512] >= 4 * 512 * 512 and peak["dense_masked", 512] >= peak["dense", 512]
    assert peak["block_sparse", 512] < peak["dense_masked", 512] / 2
    assert peak["linear", 512] < peak["softmax", 512]
    with pytest.raises(ValueError, match="at most"):
        measure_efficient([4096])


def test_the_isolated_measurement_comes_back_as_rows():
    steady = measure_efficient_isolated([32, 64], num_heads=1, head_dim=8, block=16, repeats=3)
    assert {r.method for r in steady.result} == set(METHODS) and steady.attempts >= 1
