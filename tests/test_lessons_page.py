"""The main page's lessons from the tutorials, through AppTest, in both languages.

Why rows look alike (steps 3 and 4), why √d_k, dropout after the softmax, ``.contiguous()``
before ``view``, each step's labs, a padded batch of two, and ``nn.MultiheadAttention``'s
[L, B, E] default. The numbers on the page are checked against the engine's own functions
run here on the same configuration.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from conftest import markdown_frame
from streamlit.testing.v1 import AppTest
from tolerances import FLOAT32, NUMBER, SHOWN_ATOL, SHOWN_TWICE_ATOL, printed_forms, printed_numbers

from components.i18n import LANGUAGES, t
from components.nav import LAB_PAGES
from components.panels.frame import STEP_LABS
from components.panels.step2 import DROPOUT_KEY
from components.panels.summary import SUMMARY_LABS
from components.safe_text import md_escape
from mha.batching import page_batch
from mha.config import AttentionConfig
from mha.pipeline import run_attention
from mha.reference import batch_order_check
from mha.row_spread import row_spread
from mha.score_scale import score_spread
from mha.sources import make_source

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
SMALL = {"d_model": "64", "num_heads": "4", "tokens": "the cat sat on the mat today"}  # L = 7, d_k = 16
SMALL_CONFIG = {"d_model": 64, "num_heads": 4, "tokens": "the cat sat on the mat today"}
CONFIG = AttentionConfig(**SMALL_CONFIG)
LAB_PATHS = {lab: Path(page).stem.split("_", 1)[1] for page, lab, _ in LAB_PAGES}  # "scaling" -> "scaling"


def open_page(**params: str) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=60)
    for key, value in {**SMALL, **params}.items():
        at.query_params[key] = value
    return at.run()


def _walk(node) -> Iterator:
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def panel(at: AppTest, title: str):
    """The bordered block whose heading is ``title``."""
    (found,) = [
        node
        for node in _walk(at._tree)
        if type(node).__name__ == "Block"
        and any(type(c).__name__ == "Markdown" and c.value == f"### {title}" for c in node.children.values())
    ]
    return found


def texts(node, kind: str) -> list[str]:
    return [str(n.value) for n in _walk(node) if type(n).__name__ == kind]


def page_links(node) -> list[str]:
    return [n.proto.page for n in _walk(node) if type(n).__name__ == "PageLink"]


# ---------------------------------------------------------------- rows alike: uniform weights average V
@pytest.mark.parametrize("lang", LANGUAGES)
def test_steps_3_and_4_say_why_their_rows_look_alike_with_the_numbers(lang):
    at = open_page(lang=lang)
    assert not at.exception
    run = run_attention(CONFIG)
    concat, output = row_spread(run.trace.concat.concat[0]), row_spread(run.trace.out.output[0])
    assert concat.alike  # random weights: close to uniform
    step_3 = texts(panel(at, t("step3.title", lang=lang)), "Markdown")
    note = printed_numbers(
        step_3, "step3.alike_note", lang, largest=NUMBER, uniform=f"{1 / 7:.2f}", spread=NUMBER, size=NUMBER
    )
    assert note["largest"] in printed_forms(float(run.trace.weights[0].max()), ".2f")
    assert note["spread"] in printed_forms(concat.spread, ".2f")
    assert note["size"] in printed_forms(concat.size, ".2f")
    step_4 = texts(panel(at, t("step4.title", lang=lang)), "Markdown")
    formula = "output = concat W_oᵀ + b_o"  # random weights: W_o has a bias
    note_4 = printed_numbers(step_4, "step4.alike_note", lang, formula=formula, spread=NUMBER, size=NUMBER)
    assert note_4["spread"] in printed_forms(output.spread, ".2f")
    assert note_4["size"] in printed_forms(output.size, ".2f")


def test_no_alike_note_when_the_rows_differ():
    at = open_page(mask_type="causal")  # row 0 sees only itself: its context is V_0, far from the others
    assert not row_spread(run_attention(dataclasses.replace(CONFIG, mask_type="causal")).trace.concat.concat[0]).alike
    shown = "\n".join(m.value for m in at.markdown)
    assert "**Why the rows look alike:**" not in shown and "**Alike rows again:**" not in shown


# ---------------------------------------------------------------- step 2: √d_k and dropout; labs of every step
@pytest.mark.parametrize("lang", LANGUAGES)
def test_step_2_says_why_root_d_k_with_the_numbers_of_every_head(lang):
    at = open_page(lang=lang, head="1")  # the same text whatever head is shown: the browser switches heads
    trace = run_attention(CONFIG).trace
    raw = trace.attend.raw_scores[0].double()  # (H, Lq, Lk)
    q, k = (x[0].double() for x in (trace.project.q_heads, trace.project.k_heads))  # (H, L, Dh)
    q_std, k_std = float(q.std(correction=0)), float(k.std(correction=0))
    q_mean, k_mean = float(q.mean()), float(k.mean())
    # A product of independent entries with means: E[q²]E[k²] − (E[q]E[k])², computed here from the definitions.
    product_var = float(((q**2).mean() * (k**2).mean()) - (q.mean() * k.mean()) ** 2)
    step_2 = panel(at, t("step2.title", lang=lang))
    names = ("q_std", "k_std", "q_mean", "k_mean", "expected_raw", "raw_std", "scaled_std", "expected_scaled")
    numbers = {"d_k": 16, "root": "4.0", "heads": 4, **dict.fromkeys(names, NUMBER)}
    shown = printed_numbers(texts(step_2, "Markdown"), "step2.why_scale", lang, **numbers)
    expected = {
        "q_std": q_std,
        "k_std": k_std,
        "q_mean": q_mean,
        "k_mean": k_mean,
        "expected_raw": product_var**0.5 * 4,
        "raw_std": float(raw.std(correction=0)),
        "scaled_std": float((raw / 4).std(correction=0)),
        "expected_scaled": product_var**0.5,
    }
    for name, value in expected.items():
        assert shown[name] in printed_forms(value, ".2f"), name
    assert LAB_PATHS["scaling"] in page_links(step_2)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_why_root_d_k_claims_variance_1_only_when_the_entries_give_it(lang):
    """Dividing by √d_k makes the spread independent of d_k; it is variance 1 only when σ_q·σ_k = 1."""
    text = t("step2.why_scale", lang=lang)  # the template, placeholders unfilled
    assert "σ_q·σ_k = 1" in text and "`nn.Linear`" in text
    for false_claim in ("back to variance 1", "for every d_k", "方差回到 1"):
        assert false_claim not in text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_why_root_d_k_states_the_mean_0_assumption_and_the_formula_it_prints_with(lang):
    """σ_q·σ_k is a product's spread only for mean-0 entries (the paper's footnote); the page's biases give means,
    so the sentence names them and predicts with the mean-aware formula its numbers are computed by."""
    text = t("step2.why_scale", lang=lang)
    assert "{q_mean}" in text and "{k_mean}" in text
    assert "√((σ_q² + μ_q²)(σ_k² + μ_k²) − μ_q²μ_k²)" in text


def _lined_up_spread(d_k: int, seed: int = 0):
    """Keys with entries N(0, 1/3) (``nn.Linear``'s variance), each query its key plus as much noise: dependent."""
    generator = torch.Generator().manual_seed(seed)
    k = torch.randn(4, 32, d_k, generator=generator, dtype=torch.float64) / 3**0.5  # (H, L, Dh)
    q = k + torch.randn(4, 32, d_k, generator=generator, dtype=torch.float64) / 3**0.5  # (H, L, Dh)
    return score_spread(q, k, q @ k.transpose(-2, -1), d_k**-0.5)  # (H, Lq, Lk)


def test_dividing_by_root_d_k_does_not_remove_d_k_when_queries_line_up_with_keys():
    """The claim step 2 makes where its numbers break the rule: lined-up queries give scores that grow like d_k,
    so the scaled spread still grows like √d_k (×2 per ×4 of d_k, asymptotically); independent entries do not."""
    spreads = [_lined_up_spread(d_k).scaled_std for d_k in (256, 1024, 4096)]
    for smaller, larger in itertools.pairwise(spreads):
        assert 1.6 < larger / smaller < 2.2  # √4 = 2, not 1
    generator = torch.Generator().manual_seed(1)
    independent = []
    for d_k in (64, 1024):
        q, k = (torch.randn(4, 32, d_k, generator=generator, dtype=torch.float64) for _ in range(2))
        independent.append(score_spread(q, k, q @ k.transpose(-2, -1), d_k**-0.5).scaled_std)
    assert independent[1] / independent[0] == pytest.approx(1.0, abs=0.1)
    assert not _lined_up_spread(256).independent_enough  # the page would print the dependence sentence


@pytest.mark.parametrize("lang", LANGUAGES)
def test_step_2_calls_random_weights_close_to_uniform_only_within_4_times_1_over_l(lang):
    tokens = "The animal didn't cross the street because it was too tired"  # L = 11: 4/L = 0.364
    weights = run_attention(dataclasses.replace(CONFIG, tokens=tokens)).trace.attend.weights[0]  # (H, L, L)
    largest = float(weights.max())
    assert largest <= 4 / 11  # the premise: within the bound here
    note = t("step2.uniform_note", lang=lang, ratio=4, bound="0.364", largest=f"{largest:.3f}", uniform="0.091")
    assert note in texts(panel(open_page(lang=lang, tokens=tokens), t("step2.title", lang=lang)), "Caption")
    sharp = open_page(lang=lang, tokens=tokens, seed="3", d_model="64", num_heads="32")  # d_k 2: a weight > 4/L
    config = dataclasses.replace(CONFIG, tokens=tokens, seed=3, num_heads=32)
    assert float(run_attention(config).trace.attend.weights.max()) > 4 / 11
    prefix = t("step2.uniform_note", lang=lang).split("{")[0]
    assert not [c for c in texts(panel(sharp, t("step2.title", lang=lang)), "Caption") if c.startswith(prefix)]


def test_every_step_links_to_its_labs():
    at = open_page()
    for step, labs in STEP_LABS.items():
        assert page_links(panel(at, t(f"step{step}.title"))) == [LAB_PATHS[lab] for lab in labs]
    assert page_links(panel(at, t("summary.title"))) == [LAB_PATHS[lab] for lab in SUMMARY_LABS]
    assert "onnx" in SUMMARY_LABS and "attribution" in STEP_LABS[2]


def test_dropout_is_shown_on_the_weights_after_the_softmax_in_training_only():
    at = open_page(head="2")  # the example row is head 0's, whatever head is shown, and says so
    (expander,) = [e for e in at.expander if e.label == t("step2.dropout_title")]
    assert not expander.children, "drawn only once opened (components.folds)"
    at.session_state[DROPOUT_KEY] = True  # what opening it in the browser sets
    (expander,) = [e for e in at.run().expander if e.label == t("step2.dropout_title")]
    assert "`model.eval()`" in expander.markdown[0].value
    assert expander.markdown[0].value == t("step2.dropout", head=0, query=md_escape("6:today"), p=0.1)
    frame = markdown_frame(expander.markdown[1].value)
    weights = run_attention(CONFIG).trace.weights[0, 0, -1]  # the last query's row of head 0
    assert [float(v) for v in frame.iloc[0, :-1]] == pytest.approx(weights.tolist(), abs=6e-4)
    assert float(frame.iloc[0, -1]) == pytest.approx(1.0, abs=1e-3)  # evaluation: the row sums to 1
    kept = [(float(a), float(b)) for a, b in zip(frame.iloc[0, :-1], frame.iloc[1, :-1], strict=True) if float(b)]
    assert kept and all(b == pytest.approx(a / 0.9, abs=2e-3) for a, b in kept)  # survivors times 1 / (1 - p)

    at.number_input(key="seed").set_value(CONFIG.seed + 1).run()  # still open, and following the seed
    (expander,) = [e for e in at.expander if e.label == t("step2.dropout_title")]
    reseeded = run_attention(dataclasses.replace(CONFIG, seed=CONFIG.seed + 1)).trace.weights[0, 0, -1]
    frame = markdown_frame(expander.markdown[1].value)
    assert [float(v) for v in frame.iloc[0, :-1]] == pytest.approx(reseeded.tolist(), abs=6e-4)
    assert not torch.allclose(reseeded, weights, atol=1e-3)


# ---------------------------------------------------------------- step 3: contiguous before view
@pytest.mark.parametrize("lang", LANGUAGES)
def test_step_3_shows_why_contiguous_comes_before_view(lang):
    at = open_page(lang=lang)
    (expander,) = [e for e in at.expander if e.label == t("step3.contiguous_title", lang=lang)]
    shown = "\n".join(m.value for m in expander.markdown)
    assert "`[1, 7, 4, 16]`" in shown and "`(448, 16, 112, 1)`" in shown  # strides of the transposed view
    assert "`(448, 64, 16, 1)`" in shown  # ... and of that shape laid out in order
    (error,) = expander.code
    assert error.value.startswith("RuntimeError: view size is not compatible")


def test_with_one_head_the_view_happens_to_work_and_the_page_says_so():
    at = open_page(num_heads="1")
    (expander,) = [e for e in at.expander if e.label == t("step3.contiguous_title")]
    assert t("step3.contiguous_lucky", contiguous=True) in [m.value for m in expander.markdown]
    assert not expander.code


@pytest.mark.parametrize("lang", LANGUAGES)
def test_step_3_says_contiguous_memory_is_enough_for_view_not_needed(lang):
    """``view`` needs the merged dimensions to lie one after the other; contiguous is sufficient, not necessary."""
    moved = torch.arange(2 * 7 * 4 * 16.0).view(2, 4, 7, 16).transpose(1, 2)  # (B, L, H, Dh), as step 3's
    assert not moved.is_contiguous()
    assert moved.view(2, 7, 4, 4, 4).shape == (2, 7, 4, 4, 4)  # splitting d_k: works without .contiguous()
    one_head = moved[:, :, :1]  # (B, L, 1, Dh): still not contiguous (batch stride 448, not 112) ...
    assert not one_head.is_contiguous()
    assert one_head.view(2, 7, 16).shape == (2, 7, 16)  # ... yet merging h and d_k works: they lie in order
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        moved.view(2, 7, 64)  # merging h (stride 7·16) with d_k (16 × stride 1): they do not follow each other
    text = t("step3.contiguous", lang=lang)
    assert ("it is not required" if lang == "en" else "连续并不是必需的") in text
    assert "so it needs contiguous memory" not in text and "因此要求内存连续" not in text


# ---------------------------------------------------------------- a padded batch of two
@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_padding_panel_runs_a_batch_of_two_with_and_without_the_mask(lang, device):
    at = open_page(lang=lang, tokens="the cat sat on the mat today [PAD]", mask_type="padding")
    assert not at.exception
    box = panel(at, t("padding.title", lang=lang))
    shown = "\n".join(texts(box, "Markdown"))
    assert "`[2, 7, 64]`" in shown and "`[2, 1, 1, 7]`" in shown and "`[2, 4, 7, 7]`" in shown
    config = dataclasses.replace(CONFIG, mask_type="padding")
    check = page_batch(config, make_source(config.weight_spec), device)  # on the suite's device, as the page
    # with the mask the gap is a float32 rounding difference (its digits are noise, ours are others): FLOAT32-small
    masked_gap = printed_numbers([shown], "padding.with", lang, count=4, gap=NUMBER, tolerance="1e-04")["gap"]
    assert float(masked_gap) <= FLOAT32["atol"] and check.gap_masked[1] <= FLOAT32["atol"]
    unmasked_gap = printed_numbers([shown], "padding.without", lang, gap=NUMBER)["gap"]
    assert unmasked_gap in printed_forms(check.gap_unmasked[1], ".2e")
    (batch,) = [markdown_frame(text) for text in texts(box, "Markdown") if t("padding.col_mask", lang=lang) in text]
    assert list(batch.iloc[:, 2]) == ["1 1 1 1 1 1 1", "1 1 1 1 0 0 0"]
    sample = markdown_frame(texts(box, "Markdown")[-1])  # the short sentence's last token: alone, masked, unmasked
    shown_values = [float(value) for row in sample.values for value in row]
    assert shown_values == pytest.approx([value for row in check.sample for value in row], abs=SHOWN_ATOL)
    assert list(sample.index) == [t(f"padding.row_{row}", lang=lang) for row in ("alone", "masked", "unmasked")]
    alone, masked, unmasked = ([float(value) for value in sample.iloc[row]] for row in range(3))
    assert masked == pytest.approx(alone, abs=SHOWN_TWICE_ATOL)  # two computations, each shown with 4 decimals
    assert max(abs(a - b) for a, b in zip(alone, unmasked, strict=True)) > 1e-2  # the [PAD] keys attended


def test_the_padding_panel_says_what_it_needs_for_a_one_word_text():
    at = open_page(tokens="hello [PAD]")
    assert not at.exception
    assert t("padding.unavailable") in [i.value for i in at.info]


# ---------------------------------------------------------------- the live check: [L, B, E] by default
@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_live_check_shows_the_batch_order_pitfall_measured(lang):
    at = open_page(lang=lang)
    run = run_attention(CONFIG)
    order = batch_order_check(run.model, run.x)
    check = panel(at, t("check.title", lang=lang))
    shown = printed_numbers(
        texts(check, "Markdown"), "check.order", lang, x="[1, 7, 64]", out="[1, 7, 64]", weights="[7, 4, 1, 1]",
        length=7, wrong=NUMBER, transposed=NUMBER, batch_first=NUMBER,
    )  # fmt: skip
    assert shown["wrong"] in printed_forms(order.wrong_gap, ".2e")
    # the two fixes leave a float32 rounding difference (its digits are noise, ours are others): FLOAT32-small
    assert max(float(shown["transposed"]), float(shown["batch_first"])) <= FLOAT32["atol"]
    assert max(order.transposed_gap, order.batch_first_gap) <= FLOAT32["atol"]
    assert any("batch_first=True" in code for code in texts(check, "Code"))


# ---------------------------------------------------------------- [PAD] keys blocked under a causal mask
def test_block_pad_toggle_blocks_the_pad_keys_under_causal_and_is_off_for_padding():
    tokens = "the cat sat [PAD] [PAD]"
    at = open_page(tokens=tokens, mask_type="causal", block_pad="true")
    assert not at.exception and not at.error
    assert at.toggle(key="block_pad").value is True and not at.toggle(key="block_pad").disabled
    assert at.query_params["block_pad"] == "true"
    at.toggle(key="block_pad").set_value(False).run()
    assert at.query_params["block_pad"] == "false"
    assert open_page(tokens=tokens, mask_type="padding").toggle(key="block_pad").disabled
    note = open_page(mask_type="window", block_pad="true")
    assert t("notes.block_pad_no_pads") in [i.value for i in note.info]


def test_score_spread_says_when_sigma_q_sigma_k_predicts_the_scaled_spread():
    generator = torch.Generator().manual_seed(0)
    q, k = (torch.randn(4, 11, 16, generator=generator) for _ in range(2))  # (H, L, Dh): independent entries
    independent = score_spread(q, k, q @ k.transpose(-2, -1), 0.25)
    assert independent.independent_enough
    shared = torch.randn(4, 1, 16, generator=generator)  # every query and key leans on one direction
    q, k = q * 0.1 + shared, k * 0.1 + shared
    dependent = score_spread(q, k, q @ k.transpose(-2, -1), 0.25)
    assert not dependent.independent_enough  # the scores spread far from σ_q·σ_k


#: Three pages and what step 2 must add to its rule of thumb on each: nothing where it holds; "few scores" where the
#: scaled scores spread less than predicted (nine rows of two kinds: near-copies give nearly equal scores); "lined
#: up" where they spread more (trained W_q and W_k that line each query up with the keys it looks for).
SPREAD_PAGES = (
    ({}, None),
    ({"tokens": "a a a a a a a a b", "positional": "false"}, "step2.why_scale_low"),
    (
        {"weights": "trained", "task": "previous_and_first", "d_model": "64", "num_heads": "2"},
        "step2.why_scale_dependent",
    ),
)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize(("changes", "said"), SPREAD_PAGES, ids=["holds", "narrower", "wider"])
def test_step_2_says_when_its_numbers_break_the_independence_rule(lang, changes, said):
    """The prediction holds only for independent entries; where it is off, step 2 says which way and why."""
    from components import runner
    from mha.training.service import training_service

    config = AttentionConfig(**{**SMALL_CONFIG, **{key: _plain(value) for key, value in changes.items()}})
    if config.weights == "trained":  # trained from an English page (AppTest reruns a Chinese one's widgets in English)
        open_page(lang="en", **changes)
        job = training_service().job(config.weight_spec)
        assert job is None or job.finished.wait(120)
    page = open_page(lang=lang, **changes)
    run = runner.cached_run(config)  # the page's own run
    p, a = run.trace.project, run.trace.attend
    spread = score_spread(p.q_heads[0], p.k_heads[0], a.raw_scores[0], a.scale)  # (H, L, Dh), (H, Lq, Lk)
    expected = {None: spread.independent_enough, "step2.why_scale_low": spread.prediction_ratio < 1 / 1.5}
    expected["step2.why_scale_dependent"] = spread.prediction_ratio > 1.5
    assert expected[said]  # the premise: the page's numbers are of that kind
    step_2 = texts(panel(page, t("step2.title", lang=lang)), "Markdown")
    for key in ("step2.why_scale_low", "step2.why_scale_dependent"):
        params = {"ratio": NUMBER, **({"count": f"{spread.scores:,}"} if key == "step2.why_scale_low" else {})}
        if key == said:
            shown = printed_numbers(step_2, key, lang, **params)
            assert shown["ratio"] in printed_forms(spread.prediction_ratio, ".1f")
        else:
            with pytest.raises(AssertionError, match="no text reads"):
                printed_numbers(step_2, key, lang, **params)


def _plain(value: str) -> object:
    """A link's value as the config takes it."""
    return {"true": True, "false": False}.get(value, int(value) if value.isdigit() else value)
