"""The playground with a pretrained checkpoint (the tiny BERT of ``tiny_checkpoint``; no network):
locked controls, the layer, refusals, the check against the checkpoint, the head finder, notes,
the tutorials' example buttons and both languages.
"""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow as pa
import pytest
from conftest import HeadPicker
from streamlit.testing.v1 import AppTest
from test_languages import HAN, leftover_english, shown_texts, user_tokens
from tiny_checkpoint import HEADS, HIDDEN, LAYERS

from components.i18n import t
from components.runner import cached_attention_maps
from mha.config import WeightSpec
from mha.device import resolve_device
from mha.head_finder import rank_heads
from mha.sources import hub

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
ANIMAL = "The animal didn't cross the street because it was too tired"
PRETRAINED = {"weights": "pretrained", "checkpoint": "tiny", "tokens": ANIMAL, "d_model": "48", "num_heads": "4"}


def _page_device() -> str:
    """The device the page's run uses (its ``device`` left to auto): the page's cached forwards are keyed by it."""
    return str(resolve_device("auto").device)


@pytest.fixture(autouse=True)
def _tiny_on_the_list(listed_tiny):
    """Every test here runs on a server that lists the tiny checkpoint."""


def open_page(params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def texts(at: AppTest, kind: str) -> list[str]:
    return [str(element.value) for element in at.get(kind)]


def test_a_checkpoint_brings_its_sizes_tokens_and_layers():
    at = open_page({**PRETRAINED, "layer": "1"})
    assert not at.exception and not at.error and not at.warning, texts(at, "warning")
    keys = {widget.key for widget in at.number_input}
    assert not {"d_model", "num_heads"} & keys  # locked: shown as a caption
    d_k = HIDDEN // HEADS
    assert t("controls.sizes_locked", d_model=HIDDEN, num_heads=HEADS, d_k=d_k) in texts(at, "caption")
    layer = at.number_input(key="layer")
    assert (layer.value, layer.min, layer.max) == (1, 0, LAYERS - 1)
    assert at.number_input(key="seed").disabled
    assert not [radio for radio in at.radio if radio.key == "tokenizer"]
    page = "\n".join(texts(at, "markdown"))
    assert "0\\:\\[CLS\\]" in page and "\\[SEP\\]" in page  # the checkpoint's tokens on the token line
    assert f"[1, {HEADS}, 15, {d_k}]" in page  # (B, H, L, d_k): 13 word pieces + [CLS] + [SEP]
    assert at.query_params["d_model"] == "48"  # the learner's own size waits for the other weights


def test_a_layer_beyond_the_checkpoint_is_clamped_with_a_warning():
    at = open_page({**PRETRAINED, "layer": "7"})
    assert not at.exception
    assert t("controls.layer_clamped", value=7, high=LAYERS - 1) in texts(at, "warning")
    assert at.number_input(key="layer").value == LAYERS - 1


@pytest.mark.parametrize("asked", ["/etc/passwd", "https://example.com/model", "org/model", "../tiny"])
def test_a_checkpoint_off_the_list_from_a_link_is_refused_and_never_opened(asked, monkeypatch):
    opened = []
    real = hub.checkpoint_folder
    monkeypatch.setattr(
        hub, "checkpoint_folder", lambda name, location: opened.append(location) or real(name, location)
    )
    at = open_page({**PRETRAINED, "checkpoint": asked})
    assert not at.exception
    assert any("checkpoint" in warning for warning in texts(at, "warning"))
    assert at.selectbox(key="checkpoint").value == "tiny"  # the first name on the list
    assert asked not in opened


def test_an_offline_checkpoint_says_what_to_do_and_the_page_goes_on_with_random_weights():
    at = open_page({**PRETRAINED, "checkpoint": "offline"})
    assert not at.exception
    (error,) = texts(at, "error")
    assert "offline" in error and "org\\/not\\-cached" in error and "hf download" in error
    assert "[1, 4, 11, 12]" in "\n".join(texts(at, "markdown"))  # random weights at the learner's 48 / 4
    assert at.selectbox(key="weights").value == "pretrained"


def test_the_live_check_names_the_checkpoint_and_passes():
    at = open_page(PRETRAINED)
    passed = [s for s in texts(at, "success") if "tiny" in s]
    assert passed and passed[0].startswith("✓ Matches the checkpoint **tiny** itself, layer 0")


@pytest.mark.parametrize("mask_type", ["causal", "window"])
def test_a_what_if_mask_says_the_comparison_does_not_apply(mask_type):
    at = open_page({**PRETRAINED, "mask_type": mask_type})
    assert not at.exception
    assert t("check.checkpoint_what_if", checkpoint="tiny") in texts(at, "info")
    assert not [s for s in texts(at, "success") + texts(at, "error") if "checkpoint" in s]


def test_pad_left_unmasked_says_to_choose_the_padding_mask():
    at = open_page({**PRETRAINED, "tokens": "the cat sat [PAD] [PAD]"})
    assert t("check.checkpoint_pad_unmasked", checkpoint="tiny") in texts(at, "info")
    padded = open_page({**PRETRAINED, "tokens": "the cat sat [PAD] [PAD]", "mask_type": "padding"})
    assert [s for s in texts(padded, "success") if "tiny" in s]


def test_unknown_tokens_are_noted():
    at = open_page({**PRETRAINED, "tokens": "小明喜欢打球，他放学后去了操场"})
    assert not at.exception
    infos = texts(at, "info")
    assert any("[UNK]" in info and "tiny" in info for info in infos)
    assert t("notes.unk_chinese_unlisted", checkpoint="tiny") in infos


def test_head_labels_and_the_head_finder_from_a_link():
    at = open_page({**PRETRAINED, "finder_query": "it", "finder_key": "animal"})
    assert not at.exception and not at.warning
    assert any(text.startswith(t("step2.labels_title")) for text in texts(at, "markdown"))
    assert (at.selectbox(key="finder_query").value, at.selectbox(key="finder_key").value) == (10, 2)
    assert (at.query_params["finder_query"], at.query_params["finder_key"]) == ("10", "2")
    _, maps = cached_attention_maps(WeightSpec("pretrained", checkpoint="tiny"), ANIMAL, _page_device()).value
    ranked = rank_heads(maps, 10, 2)
    line = next(text for text in texts(at, "markdown") if text.startswith(t("finder.top")))
    first = t("finder.entry", layer=ranked[0].layer, head=ranked[0].head, weight=f"{ranked[0].weight:.2f}")
    assert line.startswith(f"{t('finder.top')} {first}")
    title = t("finder.chart", looking="10:it", looked_at="2:animal")
    (chart,) = [chart for chart in at.get("vega_lite_chart") if title in chart.proto.spec]
    frame = pa.ipc.open_stream(io.BytesIO(chart.proto.data.data)).read_all().to_pandas()
    cells = {(int(row.layer), int(row.head)): float(row.weight) for row in frame.itertuples()}
    assert sorted(cells) == [(a, b) for a in range(LAYERS) for b in range(HEADS)]  # a cell per head of each layer
    assert cells[ranked[0].layer, ranked[0].head] == pytest.approx(ranked[0].weight, abs=1e-6)
    at.button(key="finder_show_0").click().run()
    assert (at.number_input(key="layer").value, HeadPicker(at).value) == (ranked[0].layer, ranked[0].head)
    assert at.query_params["layer"] == str(ranked[0].layer)


def test_a_finder_link_naming_no_token_warns_and_uses_the_default():
    at = open_page({**PRETRAINED, "finder_query": "zebra"})
    assert not at.exception
    assert any("finder_query" in warning and "zebra" in warning for warning in texts(at, "warning"))
    assert at.selectbox(key="finder_query").value == 10  # the default pair: "it" -> "animal"


def test_the_tutorials_example_opens_in_a_real_model_with_the_finder_on_its_pair():
    at = open_page({"d_model": "48", "num_heads": "4", "tokens": "a b c"})
    assert not [chart for chart in at.selectbox if chart.key == "finder_query"]
    at.button(key="example_pretrained_animal").click().run()
    assert not at.exception
    assert at.query_params["weights"] == "pretrained" and at.query_params["checkpoint"] == "tiny"
    assert at.text_area(key="tokens").value == ANIMAL
    assert (at.selectbox(key="finder_query").value, at.selectbox(key="finder_key").value) == (10, 2)


def _without(text: str, words: set[str]) -> str:
    for word in sorted(words, key=len, reverse=True):
        text = text.replace(word, " ")
    return text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_pretrained_page_reads_in_its_language(lang):
    at = open_page({**PRETRAINED, "lang": lang, "mask_type": "causal", "tokens": ANIMAL + " 小明"})
    assert not at.exception
    # The user's words (also as the checkpoint cut them: "didn") and the server's checkpoint names are data.
    pieces = {label.split(":", 1)[-1] for label in at.selectbox(key="finder_query").options}
    data = user_tokens(at) | {piece for piece in pieces if len(piece) > 3} | set(at.selectbox(key="checkpoint").options)
    shown = [(key, text) for key, text in shown_texts(at) if key != "lang" and not key.startswith("example_")]
    assert len(shown) > 20
    if lang == "zh":
        leftovers = [(key, text[:80], words) for key, text in shown if (words := leftover_english(text, data))]
        assert not leftovers, leftovers
    else:
        chinese = [(key, text[:80]) for key, text in shown if HAN.search(_without(text, data))]
        assert not chinese, chinese


def test_a_pretrained_link_written_by_one_session_opens_the_same_page_in_another():
    first = open_page(PRETRAINED)
    first.number_input(key="layer").set_value(1).run()
    first.selectbox(key="finder_key").set_value(1).run()
    first.selectbox(key="mask_type").set_value("padding").run()
    assert not first.exception and not first.error
    link = dict(first.query_params)
    assert (link["weights"], link["checkpoint"], link["layer"], link["finder_key"]) == ("pretrained", "tiny", "1", "1")
    second = open_page(link)
    assert not second.exception and dict(second.query_params) == link
    for key in ("layer", "finder_query", "finder_key", "checkpoint", "mask_type"):
        widget = second.number_input(key=key) if key == "layer" else second.selectbox(key=key)
        original = first.number_input(key=key) if key == "layer" else first.selectbox(key=key)
        assert widget.value == original.value, key
    assert texts(second, "markdown") == texts(first, "markdown")
    assert texts(second, "success") == texts(first, "success")


def test_the_batch_note_on_a_checkpoint_page_gives_the_real_reason():
    at = open_page(PRETRAINED)  # a sentence of many tokens: their count is not what keeps the batch off this page
    assert not at.exception
    notes = texts(at, "info")
    assert t("padding.unavailable_weights", why=t("padding.unavailable.pretrained")) in notes
    assert t("padding.unavailable") not in notes
