"""The labs' computations (mha.experiments): each checked against a definition, not against its own output.

Tiny sizes throughout; no timing is asserted (speed belongs in bench/).
"""

from __future__ import annotations

import difflib
import inspect
import textwrap
from pathlib import Path

import pytest
import torch
from tolerances import FLOAT32

from components.frames import head_summary_frame
from components.i18n import t
from mha.counting import count_parameters, total_parameters
from mha.experiments import tutorial_code
from mha.experiments.attribution import (
    ablation_deltas,
    disagreements,
    kendall_tau,
    key_measures,
    prediction_effects,
    ranks,
    spearman,
)
from mha.experiments.complexity import (
    LIVE_MAX_LENGTH,
    METHODS,
    ComplexityRow,
    block_diagonal_mask,
    block_local_attention,
    complexity_breaks,
    extrapolate,
    measure_complexity,
    peak_bytes,
)
from mha.experiments.cross import run_cross_attention
from mha.experiments.encoder_block import (
    ACTIVATIONS,
    PRESETS,
    EncoderSizes,
    build_encoder,
    parameter_breakdown,
    to_torch_encoder_layer,
)
from mha.experiments.heads import head_sweep
from mha.experiments.inputs import token_inputs
from mha.experiments.loop_vs_fused import (
    FullWidthLoopAttention,
    full_width_flops,
    full_width_parameters,
    loop_from_fused,
    measure_loop_vs_fused,
)
from mha.experiments.mask_translate import (
    FORM_CODE,
    FORMS_TAKEN,
    IMPLEMENTATIONS,
    MASK_FORMS,
    MASK_PRESETS,
    apply_form,
    mask_forms,
    preset_mask,
    row_behaviour,
    run_mask_forms,
    second_tutorial_causal,
)
from mha.experiments.onnx_export import (
    MaskedSelfAttention,
    check_lengths,
    check_masks,
    empty_row_check,
    export_onnx,
    graph_nodes,
    onnx_session,
    run_onnx,
    wrong_reshape_check,
)
from mha.experiments.onnx_isolated import check_export_isolated, run_lengths, time_isolated
from mha.experiments.reshape import compare_reshapes, forward_view_only, head_sources
from mha.experiments.scaling import D_K_VALUES, example_weights, row_entropy, scaling_stats, score_scale
from mha.experiments.sculpt import PATTERNS, run_sculpted, sculpted_model, shift_rotation
from mha.experiments.timing import peak_allocated_bytes
from mha.experiments.tutorial_causal import (
    FIX_CODE,
    TOLERANCE,
    mixed_causal,
    row_pattern,
    section2_lines,
    section5_line,
    tutorial_module,
)
from mha.functional import scaled_dot_product_attention
from mha.masks import causal_mask
from mha.module import MultiHeadAttention
from mha.reference import to_torch_mha
from mha.sources.seeded import build_model
from mha.tokens import positional_encoding, token_labels
from mha.training.tasks import make_task

TOKENS = ["the", "cat", "sat", "on", "the", "mat"]
EXACT32 = {"rtol": 0.0, "atol": 1e-6}


# ---------------------------------------------------------------- inputs
def test_token_labels_keep_repeated_tokens_apart():
    labels = token_labels(TOKENS)
    assert labels[0] == "0:the" and labels[4] == "4:the"
    assert len(set(labels)) == len(TOKENS)


def test_token_inputs_are_embeddings_plus_positions_as_a_batch_of_one():
    x = token_inputs(TOKENS, 8)
    assert list(x.shape) == [1, 6, 8]
    # the two "the" differ only by their positional encodings
    pe = positional_encoding(6, 8)
    torch.testing.assert_close(x[0, 4] - x[0, 0], pe[4] - pe[0], **EXACT32)


# ---------------------------------------------------------------- lab 1: scaling
def test_score_scale_follows_its_definition():
    assert score_scale("scaled", 64) == pytest.approx(1 / 8)
    assert score_scale("unscaled", 64) == 1.0
    assert score_scale("temperature", 64, 2.0) == pytest.approx(1 / 16)
    with pytest.raises(ValueError, match="temperature"):
        score_scale("temperature", 64, 0.0)
    with pytest.raises(ValueError, match="unknown scaling mode"):
        score_scale("cooled", 64)


def test_row_entropy_is_in_bits_log2_l_for_uniform_and_zero_for_one_hot():
    uniform = torch.full((3, 8), 1 / 8)
    one_hot = torch.eye(8)[:3]
    torch.testing.assert_close(row_entropy(uniform), torch.full((3,), 3.0), rtol=0, atol=1e-6)  # log2 8 = 3 bits
    torch.testing.assert_close(row_entropy(one_hot), torch.zeros(3), rtol=0, atol=1e-6)
    half = torch.tensor([[0.5, 0.5, 0.0, 0.0]])
    torch.testing.assert_close(row_entropy(half), torch.tensor([1.0]), rtol=0, atol=1e-6)  # a fair coin: 1 bit


def test_the_labs_and_the_main_page_give_the_same_entropy_in_the_same_unit():
    run = head_sweep(TOKENS, 16, seed=1, query_gain=4.0, head_counts=(4,))[0]
    main_page = head_summary_frame(run.weights)["entropy"].to_numpy()  # bits, as the main page shows them
    torch.testing.assert_close(run.entropy.cpu(), torch.tensor(main_page), rtol=0, atol=1e-5)
    assert scaling_stats("scaled", d_k_values=(16,), num_keys=32)[0].entropy_uniform == 5.0  # log2 32 bits


def test_measured_variance_of_q_dot_k_tracks_d_k_and_scaling_brings_it_to_one():
    for stats in scaling_stats("scaled", num_queries=256, num_keys=32):
        # 8192 dot products per d_k: the sample variance is within ~10% of d_k with overwhelming probability
        assert stats.variance_raw == pytest.approx(stats.d_k, rel=0.15), stats
        assert stats.variance_scaled == pytest.approx(1.0, rel=0.15), stats


def test_without_scaling_the_softmax_saturates_as_d_k_grows():
    unscaled = scaling_stats("unscaled")
    scaled = scaling_stats("scaled")
    entropies = [stats.entropy for stats in unscaled]
    assert entropies == sorted(entropies, reverse=True), entropies
    assert unscaled[-1].max_weight > 0.85 and unscaled[-1].entropy < 0.5
    # with the scale the softmax looks the same at every d_k
    assert max(s.entropy for s in scaled) - min(s.entropy for s in scaled) < 0.2
    assert [s.d_k for s in scaled] == list(D_K_VALUES)


def test_a_higher_temperature_flattens_the_weights():
    cool, warm = scaling_stats("temperature", 0.5), scaling_stats("temperature", 2.0)
    for low, high in zip(cool, warm, strict=True):
        assert high.entropy > low.entropy and high.max_weight < low.max_weight


def test_example_weights_are_softmax_rows():
    weights = example_weights(TOKENS, 16, "unscaled")
    assert list(weights.shape) == [6, 6]
    torch.testing.assert_close(weights.sum(-1), torch.ones(6), rtol=0, atol=1e-6)


# ---------------------------------------------------------------- lab 2: head sweep
def test_head_sweep_keeps_the_weights_and_the_parameter_count():
    runs = head_sweep(TOKENS, 32, seed=3, head_counts=(1, 2, 4, 8))
    for run in runs:
        assert run.params == run.params_formula == 4 * 32 * 32 + 4 * 32
        assert run.d_k * run.num_heads == 32
        assert list(run.weights.shape) == [run.num_heads, 6, 6]
        assert run.weight_entries == run.num_heads * 36
    # same weights, only the split differs: h = 1 equals a single-head model built from the same seed
    single = build_model(32, 1, seed=3)
    x = token_inputs(TOKENS, 32, 3)
    torch.testing.assert_close(runs[0].output, single(x, x, x)[0][0], **EXACT32)
    assert (runs[3].output - runs[0].output).abs().max() > 1e-3


def test_query_gain_multiplies_every_score():
    gain = 3.0
    plain = head_sweep(TOKENS, 16, head_counts=(2,))[0]
    sharp = head_sweep(TOKENS, 16, query_gain=gain, head_counts=(2,))[0]

    def scores(weights: torch.Tensor) -> torch.Tensor:
        """The scores a softmax row came from, up to the constant it ignores: log w, centred per row."""
        logs = weights.double().log()  # (H, Lq, Lk)
        return logs - logs.mean(dim=-1, keepdim=True)

    # every score times the gain, to FLOAT32: two float32 computations (measured here: 6e-7 apart, scores up to 1.2)
    torch.testing.assert_close(scores(sharp.weights), gain * scores(plain.weights), **FLOAT32)
    assert scores(plain.weights).abs().max() > 1e-2  # scores that are not all alike, so the gain shows
    assert (sharp.entropy < plain.entropy).all()  # and so the weights sharpen


def test_head_sweep_names_both_numbers_when_h_does_not_divide():
    with pytest.raises(ValueError, match=r"d_model=12 is not divisible by num_heads=8"):
        head_sweep(TOKENS, 12, head_counts=(8,))


# ---------------------------------------------------------------- lab 3: wrong reshape
@pytest.mark.parametrize(("length", "heads"), [(6, 2), (5, 4), (3, 8)])
def test_head_sources_match_the_memory_layout(length, heads):
    d_k = 2
    q = torch.arange(length * heads * d_k).view(1, length, heads * d_k)  # q[0, token, feature] = its flat index
    wrong = q.view(1, heads, length, d_k)[0]  # (H, L, Dh)
    right = q.view(1, length, heads, d_k).transpose(1, 2)[0]  # (H, L, Dh)
    for transpose, split in ((True, right), (False, wrong)):
        sources = head_sources(length, heads, transpose)
        for h in range(heads):
            for i in range(length):
                token, piece = sources[h, i].tolist()
                assert split[h, i].tolist() == q[0, token, piece * d_k : (piece + 1) * d_k].tolist()


def test_view_only_no_longer_matches_torch_but_the_correct_split_does():
    model = build_model(16, 4, seed=1)
    result = compare_reshapes(model, token_inputs(TOKENS, 16, 1))
    assert result.correct_check.passed
    assert not result.wrong_check.passed
    assert result.wrong_check.max_abs_output > 100 * result.wrong_check.tolerance


def test_view_only_is_harmless_with_one_head():
    model = build_model(8, 1, seed=0)
    x = token_inputs(TOKENS, 8)
    torch.testing.assert_close(forward_view_only(model, x)[0], model(x, x, x)[0], **EXACT32)


# ---------------------------------------------------------------- lab 4: mask translator
def test_mask_forms_are_the_same_cells_in_four_spellings():
    keep = preset_mask("causal", TOKENS)
    forms = mask_forms(keep)
    assert list(forms) == list(MASK_FORMS) == ["keep", "block", "tutorial2", "additive"]
    assert torch.equal(forms["block"], ~keep) and torch.equal(forms["tutorial2"], ~keep)
    assert torch.equal(torch.isneginf(forms["additive"]), ~keep)
    assert torch.equal(forms["additive"][keep], torch.zeros(int(keep.sum())))


def test_the_second_tutorials_triu_mask_is_the_causal_mask_with_true_blocked():
    for length in (1, 4, 9):
        keep = preset_mask("causal", ["w"] * length)
        assert torch.equal(second_tutorial_causal(length), ~keep)
        assert torch.equal(mask_forms(keep)["tutorial2"], torch.triu(torch.ones(length, length), diagonal=1).bool())


@pytest.mark.parametrize("preset", MASK_PRESETS)
def test_each_spelling_applied_as_its_users_apply_it_blocks_the_same_cells(preset):
    keep = preset_mask(preset, [*TOKENS, "[PAD]"], window=1)  # (L, L)
    length = keep.shape[0]
    scores = torch.randn(1, 2, length, length, generator=torch.Generator().manual_seed(0))  # (B, H, L, L)
    for form in MASK_FORMS:
        # the code the lab shows, run as it is shown: make the spelling from keep, then apply it
        made = {"keep": keep, "L": length, "torch": torch}
        exec(FORM_CODE[form][0], {}, made)
        torch.testing.assert_close(made["mask"], mask_forms(keep)[form], rtol=0, atol=0)  # bools, or 0 and -inf
        blocked = torch.isneginf(apply_form(form, scores, made["mask"]))
        assert torch.equal(blocked, (~keep).expand_as(scores)), form
        if form != "block":  # nn.MultiheadAttention is checked by running it, below
            shown = eval(FORM_CODE[form][1], {"torch": torch}, {"scores": scores.clone(), "mask": made["mask"]})
            assert torch.equal(torch.isneginf(shown), (~keep).expand_as(scores)), form
    # nn.MultiheadAttention with its spelling gives weight 0 exactly on the blocked cells of rows with a key
    model = build_model(16, 2, seed=0)
    x = token_inputs([*TOKENS, "[PAD]"], 16)
    with torch.inference_mode():
        _, weights = to_torch_mha(model).eval()(
            x, x, x, attn_mask=mask_forms(keep)["block"], average_attn_weights=False
        )
    live = keep.any(dim=-1)  # (L,) rows with a key
    assert torch.equal(weights[0][:, live] == 0, (~keep)[live].expand(2, -1, -1))


def test_every_implementation_and_spelling_agrees_on_rows_with_a_key():
    model = build_model(16, 2, seed=0)
    keep = preset_mask("blocked_row", TOKENS)
    runs = run_mask_forms(model, token_inputs(TOKENS, 16), keep)
    assert [(run.implementation, run.form) for run in runs] == [
        (name, form) for name in IMPLEMENTATIONS for form in FORMS_TAKEN[name]
    ]
    for run in runs:
        assert run.max_abs_diff < 1e-5, run
        assert len(run.masked_rows) == 1  # the last row
    behaviour = {run.implementation: run.masked_rows for run in runs}
    assert behaviour["ours"] == ("zero_context",)
    # the tutorials' plain softmax over a row of -inf is 0/0
    assert behaviour["tutorial1"] == behaviour["tutorial2"] == ("nan",)


def test_row_behaviour_tells_nan_bias_and_numbers_apart():
    bias = torch.tensor([0.5, -0.5])
    assert row_behaviour(torch.tensor([float("nan"), 0.0]), bias) == "nan"
    assert row_behaviour(bias.clone(), bias) == "zero_context"
    assert row_behaviour(torch.zeros(2), None) == "zero_context"
    assert row_behaviour(torch.tensor([0.1, 0.2]), bias) == "values"


# ---------------------------------------------------------------- lab 4: the first tutorial's two causal masks
#: The first tutorial's code lines as the article prints them, kept as test data (not read from the module).
TUTORIAL_QUOTES = Path(__file__).parent / "data" / "tutorial_quotes.txt"


def _article_runs() -> dict[str, list[str]]:
    """``{section: [run, ...]}`` from :data:`TUTORIAL_QUOTES`: each run the lines that follow each other in the
    article, joined by newlines, indented relative to the run's first line."""
    _, _, body = TUTORIAL_QUOTES.read_text(encoding="utf-8").partition("\n----\n")
    sections: dict[str, list[str]] = {}
    for block in body.strip().split("\n\n"):
        lines = block.splitlines()
        if lines[0].startswith("[section "):
            section, lines = lines[0].strip("[]"), lines[1:]
        if lines:
            sections.setdefault(section, []).append("\n".join(lines))
    return sections


def _runs_of(source: str, size: int) -> list[str]:
    """Every ``size`` consecutive lines of ``source``, dedented, in order."""
    lines = source.splitlines()
    return [textwrap.dedent("\n".join(lines[i : i + size])) for i in range(len(lines) - size + 1)]


def _float64_scores(model, x):
    """Each head's scaled scores in float64 from the layer's weights: q k^T / sqrt(d_k). (H, L, L)."""
    x64 = x[0].double()  # (L, D)
    q, k = (x64 @ linear.weight.double().T + linear.bias.double() for linear in (model.W_q, model.W_k))  # (L, D)
    length, heads, d_k = x64.shape[0], model.num_heads, model.d_k
    q = q.view(length, heads, d_k).transpose(0, 1)  # (H, L, Dh)
    k = k.view(length, heads, d_k).transpose(0, 1)  # (H, L, Dh)
    return q @ k.transpose(-2, -1) / d_k**0.5  # (H, L, Dh) @ (H, Dh, L) -> (H, L, L)


def test_the_first_tutorials_code_is_kept_as_it_writes_it_and_says_where_it_comes_from():
    article = _article_runs()
    assert sorted(article) == ["section 2", "section 5"]
    # the exact quotes the lab shows, read from the module, are the article's lines
    assert section5_line() in article["section 5"]
    assert section2_lines() in article["section 2"]
    # and every line of the article the module keeps is in it, in the article's order
    source = Path(tutorial_code.__file__).read_text(encoding="utf-8")
    for section, code in (("section 2", inspect.getsource(tutorial_code.MultiHeadAttention)),
                          ("section 5", inspect.getsource(tutorial_code.section5_causal_mask))):  # fmt: skip
        found = [_runs_of(code, run.count("\n") + 1).index(run) for run in article[section]]  # ValueError: missing
        assert found == sorted(found), (section, found)
    assert source.startswith("# fmt: off\n")  # the formatter may not restyle it (single quotes stay)
    header = tutorial_code.__doc__
    assert "first tutorial" in header and "section 2" in header and "section 5" in header
    assert "NOT the project's engine" in header


def _tutorial_weights(scores: torch.Tensor, section5_mask: torch.Tensor) -> torch.Tensor:
    """Section 2's weights, the formula its code writes: ``masked_fill(mask == 0, -inf)`` sets every cell where
    the mask is 0 to -inf and leaves the others' scores as they are (the mask's -inf is never added), then the
    softmax over the keys. Shape: scores (H, L, L), mask (L, L) -> (H, L, L)."""
    return torch.softmax(scores.masked_fill(section5_mask == 0, float("-inf")), dim=-1)


@pytest.mark.parametrize(("length", "seed"), [(5, 0), (7, 3), (2, 1)])
def test_the_labs_numbers_are_the_tutorials_code_run_as_written(length, seed):
    """The lab's three weight maps against the formulas, computed here in float64 from the layer's weights, and
    section 5's mask against its definition: 0 on and below the diagonal, -inf above it."""
    tokens = TOKENS[:length] if length <= len(TOKENS) else [*TOKENS, "[PAD]"]
    case = mixed_causal(tokens, 16, 2, seed)
    above = torch.ones(length, length, dtype=torch.bool).triu(1)  # (L, L): key j after query i
    section5 = torch.tensor([[float("-inf") if j > i else 0.0 for j in range(length)] for i in range(length)])
    torch.testing.assert_close(case.mask, section5, rtol=0, atol=0)
    scores = _float64_scores(build_model(16, 2, seed), token_inputs(tokens, 16, seed))  # (H, L, L)
    as_written = _tutorial_weights(scores, section5.double())
    torch.testing.assert_close(case.as_written.double(), as_written, equal_nan=True, rtol=0, atol=1e-6)
    causal = torch.softmax(scores.masked_fill(above, float("-inf")), dim=-1)  # keys j <= i
    torch.testing.assert_close(case.intended.double(), causal, rtol=0, atol=1e-6)
    # this engine given the cells section 2 lets through (j > i): the same weights, and zeros, not NaN, in the
    # last row, which has no such cell
    same_cells = torch.nan_to_num(as_written, nan=0.0)
    torch.testing.assert_close(case.same_cells.double(), same_cells, rtol=0, atol=1e-6)


@pytest.mark.parametrize(("length", "seed"), [(1, 0), (2, 0), (6, 0), (6, 5), (10, 2)])
def test_the_inverted_staircase_and_the_nan_row_come_from_the_weights(length, seed):
    tokens = [f"w{i}" for i in range(length)]
    case = mixed_causal(tokens, 16, 2, seed)
    # float64 reference of what masked_fill(mask == 0) does to section 5's mask: each query keeps only keys j > i
    scores = _float64_scores(build_model(16, 2, seed), token_inputs(tokens, 16, seed))  # (H, L, L)
    after = torch.ones(length, length, dtype=torch.bool).triu(1)  # (L, L): key after the query
    expected = torch.softmax(scores.masked_fill(~after, float("-inf")), dim=-1)  # (H, L, L): the last row 0/0
    assert torch.isnan(expected[:, -1]).all() and not torch.isnan(expected[:, :-1]).any()
    torch.testing.assert_close(case.as_written.double(), expected, equal_nan=True, rtol=0, atol=1e-6)
    assert case.pattern.future_only == tuple(range(length - 1))
    assert case.pattern.nan == (length - 1,)
    assert case.pattern.past_only == case.pattern.zero == ()
    # the intended result is causal in every row; this engine fed the same cells gives 0 where the tutorial has NaN
    assert row_pattern(case.intended).past_only == tuple(range(length))
    same = row_pattern(case.same_cells)
    assert same.zero == (length - 1,) and same.nan == () and same.future_only == tuple(range(length - 1))
    assert torch.equal(case.same_cells[:, -1], torch.zeros(2, length))
    torch.testing.assert_close(case.same_cells[:, :-1], case.as_written[:, :-1], **EXACT32)


def test_row_pattern_sorts_rows_by_where_their_weight_is():
    weights = torch.tensor(
        [
            [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [float("nan")] * 3],
            [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [float("nan")] * 3],
        ]
    )  # (H, L, L)
    assert row_pattern(weights).past_only == (0,) and row_pattern(weights).future_only == (1,)
    assert row_pattern(weights).nan == (2,) and row_pattern(weights).zero == ()
    weights[1, 1] = torch.tensor([0.5, 0.0, 0.5])  # head 1 looks back too: row 1 is neither any more
    weights[:, 2] = 0.0
    pattern = row_pattern(weights)
    assert pattern.future_only == () and pattern.past_only == (0,) and pattern.zero == (2,) and pattern.nan == ()


@pytest.mark.parametrize(("length", "seed"), [(1, 0), (5, 0), (9, 4)])
def test_both_fixes_give_this_engines_causal_result(length, seed):
    assert TOLERANCE == 1e-6
    tokens = [f"w{i}" for i in range(length)]
    case = mixed_causal(tokens, 16, 2, seed)
    assert [check.fix for check in case.fixes] == ["tril", "additive"]
    for check in case.fixes:
        assert check.agrees and max(check.weights_diff, check.output_diff) <= TOLERANCE, check
        torch.testing.assert_close(check.weights, case.intended, rtol=0, atol=TOLERANCE)
    # checked here again, run from the shown code: tril's line, and the module with its one line changed
    model = build_model(16, 2, seed)
    x = token_inputs(tokens, 16, seed)
    made = {"seq_len": length}
    exec(FIX_CODE["tril"], {"torch": torch}, made)
    with torch.no_grad():
        expected_output, expected = model(x, x, x, causal_mask(length))
        for module, mask in (
            (tutorial_module(model), made["mask"]),
            (tutorial_module(model, fill="additive"), tutorial_code.section5_causal_mask(length)),
        ):
            output, weights = module(x, x, x, mask)
            torch.testing.assert_close(weights, expected, rtol=0, atol=TOLERANCE)
            torch.testing.assert_close(output, expected_output, rtol=0, atol=TOLERANCE)


def test_the_additive_fix_changes_exactly_one_line_of_the_tutorials_module():
    fixed = type(tutorial_module(build_model(8, 2, 0), fill="additive"))
    assert fixed is not tutorial_code.MultiHeadAttention
    assert inspect.getsource(fixed.__init__) == inspect.getsource(tutorial_code.MultiHeadAttention.__init__)
    original = inspect.getsource(tutorial_code.MultiHeadAttention.forward).splitlines()
    changed = [line for line in difflib.ndiff(original, inspect.getsource(fixed.forward).splitlines())
               if line[:2] in ("- ", "+ ")]  # fmt: skip
    assert [line[:2] + line[2:].strip() for line in changed] == [
        "- scores = scores.masked_fill(mask == 0, float('-inf'))",
        "+ scores = scores + mask",
    ]


# ---------------------------------------------------------------- lab 5: loop vs fused
@pytest.mark.parametrize("heads", [1, 2, 4, 8])
def test_the_loop_over_heads_computes_the_same_function(heads):
    model = build_model(16, heads, seed=2)
    loop = loop_from_fused(model)
    assert count_parameters(loop) == count_parameters(model)
    x = torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(0))
    y = torch.randn(2, 7, 16, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(loop(x, x, x), model(x, x, x)[0], **EXACT32)
    torch.testing.assert_close(loop(x, y, y), model(x, y, y)[0], **EXACT32)


@pytest.mark.parametrize(("d_model", "heads"), [(8, 1), (8, 2), (16, 4), (12, 3)])
def test_full_width_heads_hold_h_times_the_projection_parameters(d_model, heads):
    layer = FullWidthLoopAttention(d_model, heads)
    assert count_parameters(layer) == full_width_parameters(d_model, heads)
    head = layer.heads[0]
    assert all(list(getattr(head, name).weight.shape) == [d_model, d_model] for name in ("W_q", "W_k", "W_v"))
    assert list(layer.W_o.weight.shape) == [d_model, heads * d_model]
    # one full-width head is the fused layer; each further head adds 4·d² + 3·d
    assert full_width_parameters(d_model, 1) == total_parameters(d_model)  # two formulas, each checked on its module
    assert full_width_parameters(d_model, heads) - total_parameters(d_model) == (heads - 1) * (
        4 * d_model * d_model + 3 * d_model
    )
    x = torch.randn(2, 5, d_model, generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        assert list(layer(x, x, x).shape) == [2, 5, d_model]


def test_full_width_flops_count_every_matmul():
    d, h, n = 8, 2, 4
    per_head = 3 * (2 * n * d * d) + 2 * (2 * n * n * d)  # Q, K, V projections; QKᵀ and weights·V
    assert full_width_flops(d, h, n) == h * per_head + 2 * n * (h * d) * d  # + W_o: (h·d) -> d


def test_measure_loop_vs_fused_reports_each_length():
    rows = measure_loop_vs_fused(8, 2, [4, 8], repeats=3)
    assert [row.length for row in rows] == [4, 8]
    for row in rows:
        for timing in (row.fused, row.loop, row.full_width, row.torch_mha):
            assert 0 < timing.low_s <= timing.median_s <= timing.high_s and timing.rounds == 3
        assert row.ratio == pytest.approx(row.loop.median_s / row.fused.median_s)
        assert row.max_abs_diff < 1e-6


# ---------------------------------------------------------------- lab 6: complexity
@pytest.mark.parametrize(("length", "block"), [(16, 4), (12, 3), (8, 8), (4, 16)])
def test_block_local_attention_is_full_attention_with_the_block_diagonal_mask(length, block):
    generator = torch.Generator().manual_seed(0)
    q, k, v = torch.randn(3, 2, 3, length, 4, generator=generator)
    out, weights = block_local_attention(q, k, v, block)
    expected, _ = scaled_dot_product_attention(q, k, v, mask=block_diagonal_mask(length, block))
    torch.testing.assert_close(out, expected, rtol=0, atol=1e-6)
    b = min(block, length)
    assert list(weights.shape) == [2, 3, length // b, b, b]


def test_block_local_attention_refuses_a_length_that_blocks_do_not_tile():
    q = torch.zeros(1, 1, 10, 4)
    with pytest.raises(ValueError, match=r"L=10 must be a multiple of block=4"):
        block_local_attention(q, q, q, 4)


def test_peak_bytes_follow_the_formulas():
    assert peak_bytes("full", 1024, 8, 64, 64) == 4 * 8 * 1024 * (1024 + 64)  # one H·L² tensor + H·L·Dh
    assert peak_bytes("blocks", 1024, 8, 64, 64) == 4 * 8 * 1024 * (64 + 64)
    assert peak_bytes("blocks", 32, 8, 64, 64) == 4 * 8 * 32 * (32 + 64)  # a block longer than L is cut to L
    assert peak_bytes("sdpa", 1024, 8, 64, 64) is None
    with pytest.raises(ValueError, match="unknown method"):
        peak_bytes("flash", 16, 1, 8, 8)


@pytest.mark.parametrize(
    ("length", "heads", "head_dim", "block"), [(1024, 4, 32, 64), (512, 8, 64, 128), (256, 1, 16, 16), (64, 2, 8, 16)]
)
def test_peak_bytes_are_what_the_profiler_measures(length, heads, head_dim, block):
    """The lab's formula against the allocator's own peak (within 2 %): one L × L tensor without gradients, not two
    (at L 1024, 4 heads, d_k 32: 16.5 MiB, where two tensors would be 32.5)."""
    q, k, v = torch.randn(3, 1, heads, length, head_dim, generator=torch.Generator().manual_seed(0))
    full = peak_allocated_bytes(lambda: scaled_dot_product_attention(q, k, v))
    blocks = peak_allocated_bytes(lambda: block_local_attention(q, k, v, block))
    assert full == pytest.approx(peak_bytes("full", length, heads, head_dim, block), rel=0.02)
    assert blocks == pytest.approx(peak_bytes("blocks", length, heads, head_dim, block), rel=0.02)
    assert full < 1.5 * 4 * heads * length * length  # far below two score-sized tensors


def test_measure_complexity_stops_at_the_live_cap():
    with pytest.raises(ValueError, match="live cap"):
        measure_complexity([16, 2 * LIVE_MAX_LENGTH])


def test_measure_complexity_measures_the_score_matrix_of_full_attention():
    rows = measure_complexity([16, 64], num_heads=2, head_dim=8, block=16, repeats=3)
    assert [(row.method, row.length) for row in rows] == [(m, n) for n in (16, 64) for m in METHODS]
    full64 = next(row for row in rows if row.method == "full" and row.length == 64)
    # the (1, 2, 64, 64) float32 scores (softmaxed in place) and the scaled queries, measured by the profiler
    assert full64.peak_bytes == pytest.approx(peak_bytes("full", 64, 2, 8, 16), rel=0.02)
    assert all(row.measured and 0 < row.low_s <= row.seconds <= row.high_s for row in rows)


def test_complexity_breaks_flag_time_that_outgrows_its_work():
    def rows(seconds_at_512: float) -> list[ComplexityRow]:  # full attention, L² work: 4x per doubling
        return [ComplexityRow("full", 256, 1.0, 0, True), ComplexityRow("full", 512, seconds_at_512, 0, True)]

    assert complexity_breaks(rows(4.2), block=64) == []
    (broken,) = complexity_breaks(rows(19.2), block=64)  # the 19.2x once shown for a doubling
    assert (broken.series, broken.size_from, broken.size_to, broken.work_ratio) == ("full", 256, 512, 4.0)
    # block-local attention past its block size is linear: 2x the work per doubling, so 8x is off
    linear = [ComplexityRow("blocks", 256, 1.0, 0, True), ComplexityRow("blocks", 512, 8.0, 0, True)]
    assert [b.work_ratio for b in complexity_breaks(linear, block=64)] == [2.0]


def test_extrapolate_scales_time_by_its_power_and_memory_by_the_formula():
    rows = [
        ComplexityRow("full", 512, 1.0, 1000, True),
        ComplexityRow("blocks", 512, 1.0, 1000, True),
        ComplexityRow("sdpa", 512, 1.0, 1000, True),
    ]
    heads, head_dim, block = 4, 32, 64
    estimates = {
        (row.method, row.length): row for row in extrapolate(rows, [256, 512, 1024, 2048], heads, head_dim, block)
    }
    assert set(estimates) == {(m, n) for m in METHODS for n in (1024, 2048)}
    assert estimates[("full", 2048)].seconds == pytest.approx(16.0)
    assert estimates[("full", 2048)].peak_bytes == int(1000 * (2048 * (2048 + 32)) / (512 * (512 + 32)))
    assert estimates[("blocks", 2048)].seconds == pytest.approx(4.0)
    assert estimates[("blocks", 2048)].peak_bytes == 4000  # L · (b + Dh): linear in L
    assert estimates[("sdpa", 2048)].seconds == pytest.approx(16.0)
    assert estimates[("sdpa", 2048)].peak_bytes == 4000
    assert not any(row.measured for row in estimates.values())


# ---------------------------------------------------------------- lab 7: cross-attention
def test_cross_attention_scores_are_lq_by_lk_and_match_torch():
    query = list("注意力就是你所需要的一切")
    run = run_cross_attention(query, ["Attention", "is", "all", "you", "need"], 16, 4)
    assert list(run.trace.weights.shape) == [1, 4, 12, 5]
    assert list(run.trace.output.shape) == [1, 12, 16]
    assert run.mask is None and run.check.passed


def test_cross_attention_masks_pad_keys():
    run = run_cross_attention(["a", "b", "c"], ["x", "y", "[PAD]"], 8, 2)
    assert run.mask is not None and run.check.passed
    assert torch.equal(run.trace.weights[..., -1].cpu(), torch.zeros(1, 2, 3))  # values, wherever the lab ran


# ---------------------------------------------------------------- lab 8: pattern sculpting
def test_shift_rotation_moves_a_positional_encoding_by_the_shift():
    pe = positional_encoding(12, 32)
    for shift in (-1, 2):
        rotation = shift_rotation(16, 32, shift)
        for p in range(3, 9):
            torch.testing.assert_close(rotation @ pe[p, :16], pe[p + shift, :16], rtol=0, atol=1e-5)
    with pytest.raises(ValueError, match="even"):
        shift_rotation(5, 32, 1)


@pytest.mark.parametrize("length", [4, 10, 24])
def test_sculpted_heads_make_the_promised_patterns(length):
    weights = run_sculpted(length, 64, sharpness=12.0).weights[0]  # (4, L, L)
    argmax = weights.argmax(dim=-1)  # (4, L)
    positions = torch.arange(length)
    assert PATTERNS == ("self", "previous", "first", "uniform")
    assert torch.equal(argmax[0], positions)
    assert torch.equal(argmax[1, 1:], positions[:-1])
    assert torch.equal(argmax[2], torch.zeros(length, dtype=torch.long))
    torch.testing.assert_close(weights[3], torch.full((length, length), 1 / length), rtol=0, atol=1e-6)
    assert (weights[0].diagonal() > 0.9).all()


def test_zero_sharpness_makes_every_head_uniform_and_causal_keeps_the_past():
    weights = run_sculpted(6, 64, sharpness=0.0).weights[0]
    torch.testing.assert_close(weights, torch.full((4, 6, 6), 1 / 6), rtol=0, atol=1e-6)
    causal = run_sculpted(6, 64, sharpness=12.0, causal=True).weights[0]
    assert torch.equal(causal.triu(1), torch.zeros_like(causal))
    assert causal[1, 0, 0] == pytest.approx(1.0)  # the previous-token head at position 0 can only see itself


def test_sculpted_model_passes_values_through_unchanged():
    model = sculpted_model(64, 1.0)
    eye = torch.eye(64)
    for linear in (model.W_v, model.W_o):
        assert torch.equal(linear.weight, eye) and not linear.bias.any()


# ---------------------------------------------------------------- lab 9: encoder block
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_encoder_parameter_count_matches_the_formulas_and_torch(preset):
    sizes = PRESETS[preset]
    block = build_encoder(sizes, norm_first=False, activation="gelu")
    layer = to_torch_encoder_layer(block)
    parts = parameter_breakdown(sizes)
    assert parts["attention"] == 4 * sizes.d_model**2 + 4 * sizes.d_model
    assert count_parameters(block) == sum(parts.values()) == count_parameters(layer)


def test_bert_base_layer_has_the_published_size():
    # 12 heads, d_model 768, d_ff 3072: 4·768² + 4·768 + 2·768·3072 + 3072 + 768 + 4·768
    assert sum(parameter_breakdown(PRESETS["bert_base"]).values()) == 7_087_872


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_encoder_block_equals_torch_encoder_layer_with_copied_weights(norm_first, activation):
    block = build_encoder(EncoderSizes(16, 4, 32), norm_first, activation, seed=5)
    layer = to_torch_encoder_layer(block)
    x = torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        torch.testing.assert_close(block(x), layer(x), rtol=0, atol=1e-5)


@pytest.mark.parametrize(("norm_first", "last"), [(False, "norm2"), (True, "residual2")])
def test_encoder_steps_are_in_computation_order(norm_first, last):
    block = build_encoder(EncoderSizes(8, 2, 16), norm_first, "relu")
    x = torch.randn(1, 3, 8, generator=torch.Generator().manual_seed(0))
    steps = block.forward_steps(x)
    names = [step.name for step in steps]
    assert names[0] == "input" and names[-1] == last and len(set(names)) == 8
    shapes = {step.name: list(step.tensor.shape) for step in steps}
    assert shapes["ffn_hidden"] == [1, 3, 16] and shapes[last] == [1, 3, 8]
    if not norm_first:  # Post-Norm output is LayerNorm'd: mean 0, variance 1 per token
        torch.testing.assert_close(steps[-1].tensor.mean(-1), torch.zeros(1, 3), rtol=0, atol=1e-5)


def test_post_norm_output_has_rms_1_only_while_gamma_is_1_and_beta_0():
    """What lab 9 says: LayerNorm's output has RMS ≈ 1 because the lab's γ = 1 and β = 0, not whatever they are."""
    block = build_encoder(EncoderSizes(16, 4, 32), norm_first=False, activation="relu", seed=2)
    assert torch.equal(block.norm2.weight, torch.ones(16)) and torch.equal(block.norm2.bias, torch.zeros(16))
    x = torch.randn(1, 5, 16, generator=torch.Generator().manual_seed(0))

    def output_rms() -> torch.Tensor:
        with torch.inference_mode():
            return block.forward_steps(x)[-1].tensor.pow(2).mean(-1).sqrt()  # (1, L)

    torch.testing.assert_close(output_rms(), torch.ones(1, 5), rtol=0, atol=1e-3)
    with torch.no_grad():
        block.norm2.weight.fill_(3.0)  # a γ training could give
    torch.testing.assert_close(output_rms(), torch.full((1, 5), 3.0), rtol=0, atol=3e-3)
    with torch.no_grad():
        block.norm2.weight.fill_(1.0)
        block.norm2.bias.fill_(2.0)  # β shifts every number: RMS² = 1 + β²
    torch.testing.assert_close(output_rms(), torch.full((1, 5), 5**0.5), rtol=0, atol=3e-3)
    for lang in ("en", "zh"):
        caption = t("lab.encoder.steps_caption.post", lang=lang)
        assert "γ = 1" in caption and "β = 0" in caption and "always" not in caption and "总是" not in caption


def test_unknown_activation_is_refused():
    with pytest.raises(ValueError, match="unknown activation"):
        build_encoder(EncoderSizes(8, 2, 16), False, "tanh")


# ---------------------------------------------------------------- lab 11: weight, norm and the effect of removing a key
def _float64_layer(d_model: int = 16, num_heads: int = 4, seed: int = 3) -> MultiHeadAttention:
    return build_model(d_model, num_heads, seed, dtype=torch.float64)


def _rerun(layer: MultiHeadAttention, x, mask, *, zero_value: tuple[int, int] | None = None):
    """The layer's output through its own four steps, with v_j of one head (head, key) zeroed on request."""
    with torch.inference_mode():
        _, _, _, q_heads, k_heads, v_heads = layer.project_and_split(x, x, x)  # (1, H, L, Dh) each
        if zero_value is not None:
            v_heads = v_heads.clone()
            v_heads[:, zero_value[0], zero_value[1]] = 0.0
        context, _ = layer.attend(q_heads, k_heads, v_heads, mask)  # (1, H, L, Dh)
        return layer.project_out(layer.concat_heads(context))  # (1, L, D)


def test_norms_equal_what_zeroing_the_value_removes_from_the_output():
    """‖α f(x_j)‖ per head against the engine's own steps rerun with v_j of that head zeroed (float64)."""
    layer, x = _float64_layer(), torch.randn(1, 6, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    mask = causal_mask(6).view(1, 1, 6, 6)
    query = 4
    measures = key_measures(layer, x, mask, query)
    full = _rerun(layer, x, mask)[0, query]
    for head in range(4):
        for key in range(6):
            removed = full - _rerun(layer, x, mask, zero_value=(head, key))[0, query]
            assert float(measures.norms[head, key]) == pytest.approx(float(removed.norm()), abs=1e-10)
    # the layer's vectors: every head's contributions plus W_o's bias give the output itself
    deltas = ablation_deltas(layer, x, mask, query, None, "zero_value")  # (L, D): -Σ_h α f
    torch.testing.assert_close(-deltas.sum(0) + layer.W_o.bias, full, rtol=0, atol=1e-12)
    torch.testing.assert_close(measures.layer_norms, deltas.norm(dim=-1), rtol=0, atol=1e-12)
    assert measures.allowed.tolist() == [True] * 5 + [False]
    assert float(measures.norms[:, 5].abs().max()) == 0.0  # a blocked key adds nothing


@pytest.mark.parametrize("query", [0, 3, 5])
def test_masking_a_key_changes_the_output_as_a_rerun_with_that_key_masked(query):
    """Per head and for the layer, against the layer's forward with the engine's mask blocking cell (query, j)."""
    layer = _float64_layer()
    x = torch.randn(1, 6, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    mask = causal_mask(6).view(1, 1, 6, 6)
    measures = key_measures(layer, x, mask, query)
    with torch.inference_mode():
        full = layer(x, x, x, mask)[0][0, query]
    for key in range(query + 1):
        blocked = mask.expand(1, 4, 6, 6).clone()
        blocked[:, :, query, key] = False  # in every head
        with torch.inference_mode():
            rerun = layer(x, x, x, blocked)[0][0, query]
        assert float(measures.layer_masked_effects[key]) == pytest.approx(float((rerun - full).norm()), abs=1e-10)
        for head in range(4):
            one_head = mask.expand(1, 4, 6, 6).clone()
            one_head[:, head, query, key] = False
            with torch.inference_mode():
                rerun = layer(x, x, x, one_head)[0][0, query]
            assert float(measures.masked_effects[head, key]) == pytest.approx(float((rerun - full).norm()), abs=1e-10)
    # query 0 has one key: masking it leaves no key, zero weights, and the output falls back to W_o's bias
    if query == 0:
        assert float(measures.layer_masked_effects[0]) == pytest.approx(float((full - layer.W_o.bias).norm()))


def _disagreeing_layer() -> tuple[MultiHeadAttention, torch.Tensor]:
    """One head that puts ~91 % of its weight on key 0, whose value is tiny, and ~4.5 % on keys 1 and 2, whose
    values are 1000 times larger."""
    layer = MultiHeadAttention(4, 1).double()
    with torch.no_grad():
        for linear in (layer.W_q, layer.W_k, layer.W_v, layer.W_o):
            linear.weight.zero_()
            linear.bias.zero_()
        layer.W_q.bias.copy_(torch.tensor([6.0, 0, 0, 0]))  # every query asks for feature 0
        layer.W_k.weight.copy_(torch.eye(4))  # keys are the tokens themselves
        layer.W_v.weight.copy_(torch.diag(torch.tensor([0.01, 10.0, 10.0, 0.0])))
        layer.W_o.weight.copy_(torch.eye(4))
    x = torch.eye(4, dtype=torch.float64)[:3].unsqueeze(0)  # (1, 3, 4): token j is feature j
    return layer, x


def test_a_constructed_head_whose_weight_and_norm_disagree():
    layer, x = _disagreeing_layer()
    measures = key_measures(layer, x, None, query=2)
    weights, norms = measures.weights[0], measures.norms[0]
    expected = torch.softmax(torch.tensor([3.0, 0.0, 0.0], dtype=torch.float64), dim=0)  # scores 6 · 1/√4
    torch.testing.assert_close(weights, expected)
    torch.testing.assert_close(norms, expected * torch.tensor([0.01, 10.0, 10.0], dtype=torch.float64))
    assert int(weights.argmax()) == 0 and float(norms[0]) < float(norms[1]) / 40
    assert spearman(weights, norms) == pytest.approx(-1.0)
    assert disagreements(weights, norms)[0] == (0, 1.0, 3.0)  # first by weight, last by what it adds


def test_rank_correlations_match_their_textbook_values():
    a = torch.tensor([1.0, 2, 3, 4, 5])
    b = torch.tensor([2.0, 1, 4, 3, 5])
    assert spearman(a, b) == pytest.approx(1 - 6 * 4 / (5 * 24))  # no ties: 1 - 6 Σd² / (n (n² - 1)), Σd² = 4
    assert kendall_tau(a, b) == pytest.approx((8 - 2) / 10)  # 2 of the 10 pairs are discordant
    assert kendall_tau(torch.tensor([1.0, 1, 2]), torch.tensor([1.0, 2, 3])) == pytest.approx(2 / 6**0.5)  # τ-b
    assert ranks(torch.tensor([1.0, 2, 2, 5])).tolist() == [4.0, 2.5, 2.5, 1.0]
    assert spearman(a, torch.ones(5)) is None and kendall_tau(a, torch.ones(5)) is None


def test_prediction_effects_match_a_rerun_of_the_trained_model_with_the_key_masked():
    """A two-layer task model: removing (query, key) in layer 0 and running everything after it again."""
    task = make_task("induction")
    model = task.build_model(16, 2, torch.Generator().manual_seed(0)).eval().requires_grad_(False)
    ids = task.example(torch.Generator().manual_seed(1))[:9]
    mask = causal_mask(9).view(1, 1, 9, 9)
    query, layer_index, readouts = 6, 0, (0,)
    with torch.inference_mode():
        xs, _ = model.layer_inputs(ids.unsqueeze(0), mask)
    deltas = ablation_deltas(model.layers[layer_index], xs[layer_index], mask, query, None, "mask")
    effects = prediction_effects(model, ids, mask, layer_index, query, deltas, readouts)
    with torch.inference_mode():
        base = torch.softmax(model(ids.unsqueeze(0), mask)[0][0, 0, query].double(), dim=-1)
    assert int(effects.predicted[0]) == int(base.argmax())
    for key in range(query + 1):
        blocked = mask.clone()
        blocked[..., query, key] = False
        with torch.inference_mode():
            x = model.embed(ids.unsqueeze(0))
            for index, attention in enumerate(model.layers):
                x = x + attention(x, x, x, blocked if index == layer_index else mask)[0]
            probabilities = torch.softmax(model.readouts[0](x[0, query]).double(), dim=-1)
        drop = float(base[effects.predicted[0]] - probabilities[effects.predicted[0]])
        assert float(effects.drops[key, 0]) == pytest.approx(drop, abs=1e-5)
        assert bool(effects.flips[key, 0]) == (int(probabilities.argmax()) != int(base.argmax()))


# ---------------------------------------------------------------- lab 12: the exported layer in ONNX Runtime
@pytest.fixture(scope="module")
def exported():
    """A small seeded layer exported at L = 8 (all keys allowed), its graph and an ONNX Runtime session."""
    layer = build_model(32, 4, 7)
    x = torch.randn(1, 8, 32, generator=torch.Generator().manual_seed(2))
    model_bytes = export_onnx(MaskedSelfAttention(layer), (x, torch.ones(1, 1, 8, 8, dtype=torch.bool)))
    return layer, x, model_bytes, onnx_session(model_bytes)


def test_the_exported_graph_runs_at_three_lengths_as_pytorch(exported):
    layer, x, _, session = exported
    checks = check_lengths(layer, session, x, [3, 8, 37])
    assert [(c.length, c.seen_at_export) for c in checks] == [(3, False), (8, True), (37, False)]
    for check in checks:
        assert check.max_abs_output <= 1e-5 and check.max_abs_weights <= 1e-5, check
    # and directly, at a length never seen, with the shapes the layer gives
    y = torch.randn(1, 37, 32, generator=torch.Generator().manual_seed(5))
    output, weights = run_onnx(session, y, torch.ones(1, 1, 37, 37, dtype=torch.bool))
    assert list(output.shape) == [1, 37, 32] and list(weights.shape) == [1, 4, 37, 37]
    with torch.inference_mode():
        torch.testing.assert_close(output, layer(y, y, y)[0], rtol=0, atol=1e-5)


def test_the_exported_graph_honours_the_mask(exported):
    layer, _, _, session = exported
    causal = check_masks(layer, session, 21)
    assert causal.max_abs_output <= 1e-5 and causal.max_abs_weights <= 1e-5
    keep = torch.rand(1, 1, 12, 12, generator=torch.Generator().manual_seed(4)) < 0.5
    keep[..., 0] = True  # every row keeps a key
    y = torch.randn(1, 12, 32, generator=torch.Generator().manual_seed(6))
    output, weights = run_onnx(session, y, keep)
    assert float(weights[0][:, ~keep[0, 0]].abs().max()) == 0.0  # blocked cells get no weight
    with torch.inference_mode():
        expected_output, expected_weights = layer(y, y, y, keep)
    torch.testing.assert_close(output, expected_output, rtol=0, atol=1e-5)
    torch.testing.assert_close(weights, expected_weights, rtol=0, atol=1e-5)


def test_a_row_with_no_key_is_nan_in_the_plain_export_and_zeros_in_one_traced_with_such_a_row(exported):
    """The tracer records the branch of masked_softmax the example took (the lab says so; this keeps it true)."""
    layer, _, _, session = exported
    check = empty_row_check(layer, session, 5)
    assert check.torch_row_sum == 0.0
    assert check.plain_row == "nan" and check.plain_max_abs <= 1e-5
    assert check.recorded_row == "zeros" and check.recorded_max_abs <= 1e-5


def test_the_wrong_reshape_exports_its_wrong_numbers_faithfully(exported):
    layer, x, _, _ = exported
    check = wrong_reshape_check(layer, x)
    assert check.onnx_vs_torch_wrong <= 1e-5  # ONNX Runtime = PyTorch, both with the bug
    assert check.wrong_vs_right > 0.05  # and both far from the correct layer
    with torch.inference_mode():
        assert float((forward_view_only(layer, x)[0] - layer(x, x, x)[0]).abs().max()) == pytest.approx(
            check.wrong_vs_right
        )


def test_each_operator_is_traced_back_to_the_line_of_mha_it_came_from(exported):
    _, _, model_bytes, _ = exported
    nodes = graph_nodes(model_bytes)
    by_op: dict[str, set[str]] = {}
    for node in nodes:
        by_op.setdefault(node.op, set()).add(node.code)
    assert all(".view(" in code for code in by_op["Reshape"])  # split_heads and concat_heads
    assert {n.file for n in nodes if n.op == "Reshape"} == {"mha/module.py"}
    assert any("transpose(1, 2)" in code for code in by_op["Transpose"])
    assert by_op["Softmax"] == {"return torch.softmax(masked_scores, dim=-1)"}
    assert by_op["Where"] == {'return scores.masked_fill(~mask, float("-inf"))'}
    projections = [n for n in nodes if n.name.startswith(("/layer/W_q/", "/layer/W_o/"))]
    assert projections and all(n.file == "mha/module.py" and "self.W_" in n.code for n in projections)
    assert all(n.file or n.op == "Unsqueeze" for n in nodes)  # only the exporter's own Unsqueezes have no line


def test_torch_export_refuses_the_masked_layer_as_the_lab_says():
    """The lab's text: the torch.export-based exporter stops at masked_softmax's branch on the data."""
    layer = build_model(16, 2, 0)
    module = MaskedSelfAttention(layer)
    length = torch.export.Dim("L", min=2, max=64)
    example = (torch.randn(1, 8, 16), torch.ones(1, 1, 8, 8, dtype=torch.bool))
    with pytest.raises(Exception, match=r"data-dependent"):
        torch.export.export(module, example, dynamic_shapes=({1: length}, {2: length, 3: length}))


def test_the_isolated_export_reports_what_the_functions_measure():
    layer = build_model(16, 2, 1)
    x = torch.randn(1, 5, 16, generator=torch.Generator().manual_seed(3))
    report, model_bytes = check_export_isolated(layer, x)
    assert report.export_length == 5 and report.model_bytes == len(model_bytes) > 0
    assert [c.length for c in report.lengths] == list(run_lengths(5)) == [5, 3, 37]
    assert all(max(c.max_abs_output, c.max_abs_weights) <= 1e-5 for c in report.lengths)
    assert report.empty_row.plain_row == "nan" and report.reshape.onnx_vs_torch_wrong <= 1e-5
    assert {"Reshape", "Transpose", "MatMul", "Softmax"} <= {node.op for node in report.nodes}
    session = onnx_session(model_bytes)  # the bytes that came back are the graph that was checked
    torch.testing.assert_close(run_onnx(session, x, torch.ones(1, 1, 5, 5, dtype=torch.bool))[0], layer(x, x, x)[0])
    timed = time_isolated(layer, [8, 16], repeats=3)
    assert [row.length for row in timed.result] == [8, 16]
    assert all(row.torch.rounds == 3 and row.onnx.median_s > 0 for row in timed.result)


def test_lab_11_reads_a_layer_with_grouped_kv_heads_and_rope_as_its_forward_does():
    """Weights and the effect of masking a key, for a layer with 2 K/V heads for 4 and RoPE, against its forward."""
    from mha.sources.seeded import build_model

    layer = build_model(16, 4, seed=2, dtype=torch.float64, num_kv_heads=2, rope_base=10000.0)
    x = torch.randn(1, 6, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    mask, query = causal_mask(6).view(1, 1, 6, 6), 5
    measures = key_measures(layer, x, mask, query)
    with torch.inference_mode():
        full, weights = layer(x, x, x, mask)
    torch.testing.assert_close(measures.weights, weights[0, :, query], rtol=0, atol=1e-12)
    for key in range(query + 1):
        blocked = mask.expand(1, 4, 6, 6).clone()
        blocked[:, :, query, key] = False
        with torch.inference_mode():
            rerun = layer(x, x, x, blocked)[0][0, query]
        assert float(measures.layer_masked_effects[key]) == pytest.approx(
            float((rerun - full[0, query]).norm()), abs=1e-10
        )
