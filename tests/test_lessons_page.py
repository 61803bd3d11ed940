"""The main page's lessons from the tutorials, through AppTest, in both languages.

Why rows look alike (steps 3 and 4), why √d_k, dropout after the softmax, ``.contiguous()``
before ``view``, each step's labs, a padded batch of two, and ``nn.MultiheadAttention``'s
[L, B, E] default. The numbers on the page are checked against the engine's own functions
run here on the same configuration.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import torch
from streamlit.testing.v1 import AppTest

from components.i18n import LANGUAGES, t
from components.nav import LAB_PAGES
from components.safe_text import md_escape
from components.steps import DROPOUT_KEY, STEP_LABS, SUMMARY_LABS
from mha.batching import page_batch
from mha.config import AttentionConfig
from mha.pipeline import run_attention
from mha.reference import batch_order_check
from mha.row_spread import row_spread
from mha.sources import make_source

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
SMALL = {"d_model": "64", "num_heads": "4", "tokens": "the cat sat on the mat today"}  # L = 7, d_k = 16
CONFIG = AttentionConfig(d_model=64, num_heads=4, tokens="the cat sat on the mat today")
LAB_PATHS = {lab: Path(page).stem.split("_", 1)[1] for page, lab, _ in LAB_PAGES}  # "scaling" -> "scaling"


def markdown_frame(table: str) -> pd.DataFrame:
    """A markdown table (``components.safe_text.markdown_table``) read back: header, index and cells as text."""
    header, rule, *rows = [re.split(r"(?<!\\)\|", line.strip())[1:-1] for line in table.splitlines()]
    assert [cell.strip() for cell in rule] == ["---"] * len(header), table
    cells = [[cell.strip() for cell in row] for row in rows]
    columns = [cell.strip() for cell in header[1:]]
    return pd.DataFrame([row[1:] for row in cells], index=[row[0] for row in cells], columns=columns)


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
    note = t(
        "step3.alike_note",
        lang=lang,
        largest=f"{float(run.trace.weights[0].max()):.2f}",
        uniform=f"{1 / 7:.2f}",
        spread=f"{concat.spread:.2f}",
        size=f"{concat.size:.2f}",
    )
    assert note in texts(panel(at, t("step3.title", lang=lang)), "Markdown")
    note_4 = t("step4.alike_note", lang=lang, spread=f"{output.spread:.2f}", size=f"{output.size:.2f}")
    assert note_4 in texts(panel(at, t("step4.title", lang=lang)), "Markdown")


def test_no_alike_note_when_the_rows_differ():
    at = open_page(mask_type="causal")  # row 0 sees only itself: its context is V_0, far from the others
    assert not row_spread(run_attention(dataclasses.replace(CONFIG, mask_type="causal")).trace.concat.concat[0]).alike
    shown = "\n".join(m.value for m in at.markdown)
    assert "**Why the rows look alike:**" not in shown and "**Alike rows again:**" not in shown


# ---------------------------------------------------------------- step 2: √d_k and dropout; labs of every step
@pytest.mark.parametrize("lang", LANGUAGES)
def test_step_2_says_why_root_d_k_with_the_numbers_of_every_head(lang):
    at = open_page(lang=lang, head="1")  # the same text whatever head is shown: the browser switches heads
    raw = run_attention(CONFIG).trace.attend.raw_scores[0].double()  # (H, Lq, Lk)
    expected = t(
        "step2.why_scale",
        lang=lang,
        d_k=16,
        root="4.0",
        heads=4,
        raw_std=f"{float(raw.std(correction=0)):.2f}",
        scaled_std=f"{float((raw / 4).std(correction=0)):.2f}",
    )
    step_2 = panel(at, t("step2.title", lang=lang))
    assert expected in texts(step_2, "Markdown")
    assert LAB_PATHS["scaling"] in page_links(step_2)


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


# ---------------------------------------------------------------- a padded batch of two
@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_padding_panel_runs_a_batch_of_two_with_and_without_the_mask(lang):
    at = open_page(lang=lang, tokens="the cat sat on the mat today [PAD]", mask_type="padding")
    assert not at.exception
    box = panel(at, t("padding.title", lang=lang))
    shown = "\n".join(texts(box, "Markdown"))
    assert "`[2, 7, 64]`" in shown and "`[2, 1, 1, 7]`" in shown and "`[2, 4, 7, 7]`" in shown
    config = dataclasses.replace(CONFIG, mask_type="padding")
    check = page_batch(config, make_source(config.weight_spec), torch.device("cpu"))
    assert t("padding.with", lang=lang, count=4, gap=f"{check.gap_masked[1]:.1e}") in shown
    assert t("padding.without", lang=lang, gap=f"{check.gap_unmasked[1]:.2e}") in shown
    (batch,) = [n.value for n in _walk(box) if type(n).__name__ == "Table"]
    assert list(batch.iloc[:, 2]) == ["1 1 1 1 1 1 1", "1 1 1 1 0 0 0"]
    sample = markdown_frame(texts(box, "Markdown")[-1])  # the short sentence's last token: alone, masked, unmasked
    shown_values = [float(value) for row in sample.values for value in row]
    assert shown_values == pytest.approx([value for row in check.sample for value in row], abs=5e-5)
    assert list(sample.index) == [t(f"padding.row_{row}", lang=lang) for row in ("alone", "masked", "unmasked")]
    assert sample.iloc[0].tolist() == sample.iloc[1].tolist() != sample.iloc[2].tolist()


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
    expected = t(
        "check.order",
        lang=lang,
        x="[1, 7, 64]",
        out="[1, 7, 64]",
        weights="[7, 4, 1, 1]",
        length=7,
        wrong=f"{order.wrong_gap:.2e}",
        transposed=f"{order.transposed_gap:.2e}",
        batch_first=f"{order.batch_first_gap:.2e}",
    )
    check = panel(at, t("check.title", lang=lang))
    assert expected in texts(check, "Markdown")
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
