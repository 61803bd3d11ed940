"""The playground with a GPT-2 checkpoint (the tiny ones of ``tiny_checkpoint``; no network): the check
against the checkpoint, what a GPT-2 reader must know, the causal mask, the pattern search and its buttons,
both languages and the link.
"""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow as pa
import pytest
from conftest import HeadPicker
from streamlit.testing.v1 import AppTest
from test_languages import HAN, leftover_english, shown_texts, user_tokens
from tiny_checkpoint import GPT2_HEADS, GPT2_LAYERS, INDUCTION_HEAD, PREVIOUS_HEAD

from components.i18n import t
from components.runner import cached_head_patterns
from mha.config import PRETRAINED, WeightSpec
from mha.device import resolve_device
from mha.head_finder import rank_table

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
ANIMAL = "The animal didn't cross the street because it was too tired"
GPT2 = {"weights": "pretrained", "checkpoint": "gpt2", "tokens": ANIMAL}


def _page_device() -> str:
    """The device the page's run uses (its ``device`` left to auto): the page's cached forwards are keyed by it."""
    return str(resolve_device("auto").device)


@pytest.fixture(autouse=True)
def _gpt2s_on_the_list(listed_gpt2):
    """Every test here runs on a server that lists the tiny GPT-2s."""


def open_page(params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=90)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def texts(at: AppTest, kind: str) -> list[str]:
    return [str(element.value) for element in at.get(kind)]


def chart(at: AppTest, title: str) -> dict[tuple[int, int], float]:
    """The (layer, head) -> value cells of the Vega-Lite map titled ``title``."""
    (found,) = [c for c in at.get("vega_lite_chart") if f'"title": "{title}"' in c.proto.spec]
    frame = pa.ipc.open_stream(io.BytesIO(found.proto.data.data)).read_all().to_pandas()
    return {(int(row.layer), int(row.head)): float(row.weight) for row in frame.itertuples()}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_sidebar_says_a_causal_checkpoint_runs_under_its_own_mask(lang):
    at = open_page({**GPT2, "lang": lang, "mask_type": "none"})
    assert not at.exception
    assert t("controls.mask_causal_checkpoint", lang=lang) in [c.value for c in at.sidebar.caption]
    random = open_page({"lang": lang, "mask_type": "none"})  # not under random weights (nor an encoder's)
    assert t("controls.mask_causal_checkpoint", lang=lang) not in [c.value for c in random.sidebar.caption]


def test_a_gpt2_layer_matches_the_checkpoint_under_its_causal_mask_and_says_how_it_was_read():
    at = open_page({**GPT2, "layer": "2"})
    assert not at.exception and not at.error, texts(at, "error")
    passed = [s for s in texts(at, "success") if "gpt2" in s]
    assert passed and passed[0].startswith("✓ Matches the checkpoint **gpt2** itself, layer 2")
    assert t("check.checkpoint_how_gpt2") in texts(at, "caption")
    infos = texts(at, "info")
    assert t("notes.family_gpt2", checkpoint="gpt2") in infos  # how the layer is read, and that it is causal
    assert t("notes.gpt2_unframed") in infos
    assert at.number_input(key="layer").max == GPT2_LAYERS - 1
    assert at.selectbox(key="mask_type").value == "none"  # the learner's choice is kept in the link ...
    page = "\n".join(texts(at, "markdown"))
    assert "0\\:The · 1\\: animal" in page and "\\[CLS\\]" not in page  # GPT-2's own tokens, no [CLS]


def test_the_window_mask_is_not_a_what_if_for_a_causal_checkpoint():
    at = open_page({**GPT2, "mask_type": "window", "window": "1"})
    assert not at.exception and not at.error
    assert [s for s in texts(at, "success") if "gpt2" in s]  # the checkpoint's causal mask ran: the check applies
    assert not [i for i in texts(at, "info") if i == t("check.checkpoint_what_if", checkpoint="gpt2")]


def test_the_pattern_search_maps_every_head_and_its_buttons_open_the_strongest():
    at = open_page({**GPT2, "checkpoint": "planted"})
    assert not at.exception and not at.error
    patterns = cached_head_patterns(WeightSpec(PRETRAINED, checkpoint="planted"), ANIMAL, _page_device()).value
    previous = chart(at, t("patterns.previous_chart"))
    induction = chart(at, t("patterns.induction_chart"))
    assert sorted(previous) == sorted(induction) == [(a, b) for a in range(2) for b in range(2)]
    assert previous[PREVIOUS_HEAD] == pytest.approx(float(patterns.previous[PREVIOUS_HEAD]), abs=1e-6)
    assert induction[INDUCTION_HEAD] == pytest.approx(float(patterns.induction[INDUCTION_HEAD]), abs=1e-6)
    assert induction[INDUCTION_HEAD] > 0.99 and previous[PREVIOUS_HEAD] > 0.99
    top = rank_table(patterns.induction)[0]
    label = t("patterns.top", label=t("label.induction"))
    line = next(text for text in texts(at, "markdown") if text.startswith(label))
    assert line.startswith(f"{label} {t('finder.entry', layer=top.layer, head=top.head, weight=f'{top.weight:.2f}')}")
    at.button(key="pattern_induction_0").click().run()
    assert (at.number_input(key="layer").value, HeadPicker(at).value) == INDUCTION_HEAD
    at.button(key="pattern_previous_0").click().run()
    assert (at.number_input(key="layer").value, HeadPicker(at).value) == PREVIOUS_HEAD


def test_repeating_the_text_lets_the_steps_label_the_induction_head():
    at = open_page({**GPT2, "checkpoint": "planted", "tokens": "the cat sat on a mat", "layer": "1"})
    at.button(key="pattern_repeat").click().run()
    assert not at.exception
    assert at.text_area(key="tokens").value == "the cat sat on a mat the cat sat on a mat"
    labels = next(text for text in texts(at, "markdown") if text.startswith(t("step2.labels_title")))
    assert t("label.induction") in labels


def test_the_pattern_search_is_for_causal_checkpoints_only():
    at = open_page({**GPT2, "checkpoint": "tiny"})
    assert not at.exception
    assert not [b for b in at.button if b.key and b.key.startswith("pattern_")]
    gpt2 = open_page(GPT2)
    keys = {b.key for b in gpt2.button}
    assert {f"pattern_{kind}_{n}" for kind in ("previous", "induction") for n in range(3)} <= keys


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("checkpoint", ["gpt2", "gpt2-chinese"])
def test_the_gpt2_page_reads_in_its_language(lang, checkpoint):
    at = open_page({**GPT2, "checkpoint": checkpoint, "lang": lang, "tokens": ANIMAL + " 小明"})
    assert not at.exception
    pieces = {label.split(":", 1)[-1].strip() for label in at.selectbox(key="finder_query").options}
    data = user_tokens(at) | {p for p in pieces if len(p) > 3} | set(at.selectbox(key="checkpoint").options)
    shown = [(key, text) for key, text in shown_texts(at) if key != "lang" and not key.startswith("example_")]
    assert len(shown) > 20
    if lang == "zh":
        leftovers = [(key, text[:80], words) for key, text in shown if (words := leftover_english(text, data))]
        assert not leftovers, leftovers
    else:
        chinese = [(key, text[:80]) for key, text in shown if HAN.search(_without(text, data))]
        assert not chinese, chinese


def _without(text: str, words: set[str]) -> str:
    for word in sorted(words, key=len, reverse=True):
        text = text.replace(word, " ")
    return text


def test_a_gpt2_link_written_by_one_session_opens_the_same_page_in_another():
    first = open_page(GPT2)
    first.number_input(key="layer").set_value(1).run()
    first.selectbox(key="finder_key").set_value(1).run()
    assert not first.exception and not first.error
    link = dict(first.query_params)
    assert (link["weights"], link["checkpoint"], link["layer"], link["finder_key"]) == ("pretrained", "gpt2", "1", "1")
    second = open_page(link)
    assert not second.exception and dict(second.query_params) == link
    assert texts(second, "markdown") == texts(first, "markdown")
    assert texts(second, "success") == texts(first, "success")
    assert HeadPicker(second).data["count"] == GPT2_HEADS
