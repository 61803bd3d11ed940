"""The engine behind the main page's lessons from the tutorials: uniform weights, dropout, batch order, padding.

Each expectation comes from a definition: uniform weights average V; ``F.dropout`` itself;
``nn.MultiheadAttention`` fed each token alone; a sentence run alone.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn.functional as F
from tolerances import FLOAT32

from mha.batching import PAD, Sentence, check_padding, page_batch
from mha.config import AttentionConfig
from mha.dropout import training_dropout
from mha.pipeline import run_attention
from mha.reference import batch_order_check, compare_with_torch, to_torch_mha
from mha.row_spread import ALIKE_RATIO, NEAR_UNIFORM_RATIO, near_uniform_bound, row_spread
from mha.score_scale import score_spread
from mha.sources import make_source
from mha.sources.seeded import build_model, embed_inputs

CPU = torch.device("cpu")
CONFIG = AttentionConfig(d_model=16, num_heads=4, tokens="the cat sat on the mat today")


# ---------------------------------------------------------------- uniform weights make every row the average of V
def test_uniform_weights_make_every_context_row_the_average_of_v():
    model = build_model(16, 4, seed=3)
    with torch.no_grad():  # W_q = 0 and b_q = 0: every score is 0, every weight exactly 1/L
        model.W_q.weight.zero_()
        model.W_q.bias.zero_()
    x = embed_inputs(("a", "b", "c", "d", "e"), CONFIG, CPU)  # (1, 5, 16)
    trace = model.forward_traced(x, x, x)
    torch.testing.assert_close(trace.weights, torch.full_like(trace.weights, 1 / 5))
    average_v = trace.project.v_heads.mean(dim=2, keepdim=True)  # (1, H, 1, Dh)
    torch.testing.assert_close(trace.attend.context, average_v.expand_as(trace.attend.context))
    for matrix in (trace.concat.concat[0], trace.output[0]):  # step 3 and step 4
        spread = row_spread(matrix)
        assert spread.spread < 1e-6 < spread.size
        assert spread.alike


def test_row_spread_is_the_largest_distance_from_the_average_row():
    matrix = torch.tensor([[1.0, -4.0], [3.0, 0.0], [2.0, 1.0]])  # column means 2 and -1
    spread = row_spread(matrix)
    assert (spread.spread, spread.size) == (3.0, 4.0)  # |-4 - (-1)| = 3, max |value| = 4
    assert not spread.alike and ALIKE_RATIO * spread.size < spread.spread


def test_random_weights_give_alike_rows_and_a_causal_mask_does_not():
    plain = run_attention(AttentionConfig())  # the page's default: random weights, no mask
    causal = run_attention(AttentionConfig(mask_type="causal"))  # row 0 is V_0 alone, row 10 an average of 11
    assert row_spread(plain.trace.concat.concat[0]).alike
    assert not row_spread(causal.trace.concat.concat[0]).alike


# ---------------------------------------------------------------- "close to uniform" is tied to 1/L
def test_near_uniform_means_no_weight_above_4_times_1_over_l():
    assert NEAR_UNIFORM_RATIO == 4
    uniform = torch.full((2, 128, 128), 1 / 128)  # (H, Lq, Lk)
    assert near_uniform_bound(uniform) == 4 / 128
    picked = uniform.clone()
    picked[1, 5] = torch.full((128,), 0.71 / 127)
    picked[1, 5, 9] = 0.29  # the old rule's "below 0.3" passed this: 37× uniform at 128 tokens
    assert near_uniform_bound(picked) is None
    just_within = uniform.clone()
    just_within[0, 0, :2] = torch.tensor([4 / 128, 0.0])  # 4 × 1/L exactly: within
    assert near_uniform_bound(just_within) == 4 / 128


def test_near_uniform_says_nothing_for_so_few_keys_that_any_weight_would_pass():
    assert near_uniform_bound(torch.full((1, 7, 7), 1 / 7)) is None  # 4/7 > 1/2: the bound would mean nothing
    assert near_uniform_bound(torch.full((1, 8, 8), 1 / 8)) == 1 / 2


# ---------------------------------------------------------------- why √d_k: the spread stops depending on d_k
@pytest.mark.parametrize("d_k", [4, 16, 64, 256])
@pytest.mark.parametrize(("sigma_q", "sigma_k"), [(1.0, 1.0), (0.5, 0.7), (2.0, 1.5)])
def test_dividing_by_root_d_k_leaves_sigma_q_sigma_k_whatever_d_k(d_k, sigma_q, sigma_k):
    """Independent entries: the raw scores spread like σ_q·σ_k·√d_k, the scaled ones like σ_q·σ_k (within 5 %)."""
    generator = torch.Generator().manual_seed(d_k)
    q = sigma_q * torch.randn(2, 200, d_k, generator=generator, dtype=torch.float64)  # (H, Lq, Dh)
    k = sigma_k * torch.randn(2, 200, d_k, generator=generator, dtype=torch.float64)  # (H, Lk, Dh)
    spread = score_spread(q, k, q @ k.transpose(-2, -1), d_k**-0.5)  # (H, Lq, Lk)
    assert spread.d_k == d_k
    assert spread.q_std == pytest.approx(sigma_q, rel=0.05) and spread.k_std == pytest.approx(sigma_k, rel=0.05)
    assert spread.raw_std == pytest.approx(sigma_q * sigma_k * d_k**0.5, rel=0.05)
    assert spread.scaled_std == pytest.approx(sigma_q * sigma_k, rel=0.05)
    assert spread.scaled_std == pytest.approx(spread.expected_scaled_std, rel=0.05)


@pytest.mark.parametrize(("mean_q", "mean_k"), [(0.0, 0.0), (1.0, 0.5), (-0.8, 1.2)])
def test_the_scaled_spread_follows_the_mean_aware_product_formula(mean_q, mean_k):
    """Independent entries with means: a product's variance is (σ_q² + μ_q²)(σ_k² + μ_k²) − μ_q²μ_k², not σ_q²σ_k²
    (1.0 and 0.5 about double the standard deviation). The prediction must follow the data within 5 %, with or
    without means."""
    generator = torch.Generator().manual_seed(7)
    q = mean_q + 0.6 * torch.randn(2, 200, 64, generator=generator, dtype=torch.float64)  # (H, Lq, Dh)
    k = mean_k + 0.6 * torch.randn(2, 200, 64, generator=generator, dtype=torch.float64)  # (H, Lk, Dh)
    spread = score_spread(q, k, q @ k.transpose(-2, -1), 64**-0.5)  # (H, Lq, Lk)
    product_var = (0.36 + mean_q**2) * (0.36 + mean_k**2) - (mean_q * mean_k) ** 2  # the formula, from the numbers
    assert spread.expected_scaled_std == pytest.approx(product_var**0.5, rel=0.05)
    assert spread.scaled_std == pytest.approx(product_var**0.5, rel=0.05)
    assert spread.independent_enough


@pytest.mark.parametrize(("d_model", "num_heads"), [(512, 1), (512, 8), (512, 32), (64, 4), (256, 16)])
def test_on_the_page_the_scaled_spread_is_sigma_q_sigma_k_not_1(d_model, num_heads):
    """What step 2 prints: on random weights the scaled scores spread like σ_q·σ_k (within 20 %: one sentence's
    few scores), and that is not 1: ``nn.Linear``'s initialisation gives entries of standard deviation below 1."""
    run = run_attention(AttentionConfig(d_model=d_model, num_heads=num_heads))
    p, a = run.trace.project, run.trace.attend
    spread = score_spread(p.q_heads[0], p.k_heads[0], a.raw_scores[0], a.scale)
    assert spread.d_k == d_model // num_heads
    assert spread.raw_std == pytest.approx(spread.expected_raw_std, rel=0.2)
    assert spread.scaled_std == pytest.approx(spread.expected_scaled_std, rel=0.2)
    assert spread.q_std < 0.9 and spread.k_std < 0.9 and spread.scaled_std < 0.7  # far from variance 1


# ---------------------------------------------------------------- dropout in training
def test_training_dropout_is_f_dropout_with_a_private_generator():
    weights = torch.softmax(torch.randn(4, 9, 9, generator=torch.Generator().manual_seed(1)), dim=-1)
    state = torch.get_rng_state()
    ours = training_dropout(weights, 0.25, seed=7)
    assert torch.equal(torch.get_rng_state(), state)  # the global random state is untouched
    torch.manual_seed(7)
    theirs = F.dropout(weights, 0.25, training=True)
    kept = ours != 0
    assert torch.equal(kept, theirs != 0)  # the same draws drop the same weights
    torch.testing.assert_close(ours, theirs, **FLOAT32)  # the survivors scaled by two computations of 1 / (1 - p)
    torch.testing.assert_close(ours[kept], weights[kept] / 0.75)  # survivors scaled by 1 / (1 - p)
    assert torch.equal(training_dropout(weights, 0.0), weights)  # p = 0 multiplies by exactly 1: the same bytes
    with pytest.raises(ValueError, match="p=1"):
        training_dropout(weights, 1)


# ---------------------------------------------------------------- nn.MultiheadAttention's [L, B, E] default
def test_batch_first_input_in_the_default_order_attends_each_token_to_itself():
    run = run_attention(CONFIG)
    check = batch_order_check(run.model, run.x)
    length = len(run.tokens)
    assert check.input_shape == check.wrong_output_shape == (1, length, 16)  # no error, the same shape
    assert check.wrong_weights_shape == (length, 4, 1, 1)
    assert check.transposed_gap < 1e-5 and check.batch_first_gap < 1e-5
    # the wrong call equals our layer run on each token alone: one token attends only itself
    alone = torch.cat(
        [run.model(run.x[:, i : i + 1], run.x[:, i : i + 1], run.x[:, i : i + 1])[0] for i in range(length)], 1
    )
    with torch.inference_mode():
        wrong, weights = to_torch_mha(run.model, batch_first=False)(run.x, run.x, run.x, average_attn_weights=False)
    torch.testing.assert_close(wrong, alone, rtol=0, atol=1e-5)
    assert torch.equal(weights, torch.ones_like(weights))  # a softmax over one key is exactly 1
    assert check.wrong_gap == pytest.approx(float((alone - run.trace.output).abs().max()), abs=1e-5)
    assert check.wrong_gap > 1e-2


def test_both_torch_checks_can_share_one_copy_of_the_layer():
    run = run_attention(dataclasses.replace(CONFIG, mask_type="causal"))
    shared = to_torch_mha(run.model)
    trace = run.trace
    alone = compare_with_torch(run.model, run.x, run.x, run.x, run.mask, trace.output, trace.weights)
    check = compare_with_torch(run.model, run.x, run.x, run.x, run.mask, trace.output, trace.weights, shared)
    order = batch_order_check(run.model, run.x, torch_mha=shared)
    assert check == alone and check.passed
    assert order == batch_order_check(run.model, run.x)  # the same numbers as with a copy of its own
    assert shared.batch_first  # switched for the default-order calls, then back
    wider = to_torch_mha(build_model(32, 4))  # a layer the input does not fit: its call fails
    with pytest.raises(AssertionError, match="embed"):
        batch_order_check(run.model, run.x, torch_mha=wider)
    assert wider.batch_first  # restored all the same


# ---------------------------------------------------------------- a padded batch
def test_with_the_padding_mask_a_padded_sentence_gets_its_own_outputs():
    model = build_model(16, 4, seed=1)
    long = ("the", "cat", "sat", "on", "the", "mat")
    short = ("a", "dog")
    pads = embed_inputs((PAD,) * 6, CONFIG, CPU)  # (1, 6, 16)
    sentences = [Sentence(long, embed_inputs(long, CONFIG, CPU)), Sentence(short, embed_inputs(short, CONFIG, CPU))]
    check = check_padding(model, sentences, pads)
    assert check.tokens[1] == ("a", "dog", PAD, PAD, PAD, PAD)
    assert (check.x_shape, check.output_shape, tuple(check.mask.shape)) == ((2, 6, 16), (2, 6, 16), (2, 1, 1, 6))
    expected = [[j < n for j in range(6)] for n in (6, 2)]  # True = a real key
    assert check.mask[:, 0, 0].tolist() == expected
    assert max(check.gap_masked) < 1e-5  # both sentences: exactly their outputs alone
    assert check.gap_unmasked[0] < 1e-5  # the long one has no padding to attend
    assert check.gap_unmasked[1] > 1e-2  # the short one attended four [PAD] keys
    alone, masked, unmasked = check.sample  # the short sentence's last real token
    assert alone == pytest.approx(masked, abs=1e-5) and alone != pytest.approx(unmasked, abs=1e-3)


def test_page_batch_is_the_pages_sentence_and_its_first_half():
    config = dataclasses.replace(CONFIG, tokens="the cat sat on the mat today [PAD] [PAD]")
    check = page_batch(config, make_source(config.weight_spec), CPU)
    assert check is not None and check.lengths == (7, 4)
    assert check.tokens[0] == ("the", "cat", "sat", "on", "the", "mat", "today")
    assert check.tokens[1] == ("the", "cat", "sat", "on", PAD, PAD, PAD)
    assert check.x_shape == (2, 7, 16)
    assert max(check.gap_masked) < 1e-5 and check.gap_unmasked[1] > 1e-2
    assert page_batch(dataclasses.replace(config, tokens="one [PAD]"), make_source(config.weight_spec), CPU) is None
