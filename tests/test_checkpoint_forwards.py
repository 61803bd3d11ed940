"""What a checkpoint's page runs for a new sentence (the tiny GPT-2s of ``tiny_checkpoint``; no network): one forward
of the checkpoint serves our layer's input, the check against the checkpoint and the head finder; the induction
sequence's maps are computed once per checkpoint; no padded batch is tried; the steps and their values are drawn
before the head finder computes anything.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from transformers import GPT2Model

from components import runner
from components.i18n import t
from mha.batching import page_batch
from mha.config import PRETRAINED, AttentionConfig, WeightSpec
from mha.memory import CPU
from mha.sources import make_source
from mha.sources.checkpoint.source import PretrainedSource

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
GPT2 = {"lang": "en", "weights": "pretrained", "checkpoint": "gpt2"}


@pytest.fixture(autouse=True)
def _gpt2s_on_the_list(listed_gpt2):
    """Every test here runs on a server that lists the tiny GPT-2s."""


@pytest.fixture
def forwards(monkeypatch) -> list[tuple[int, ...]]:
    """Every forward of a GPT-2 (any caller), as the shape of its ids."""
    seen: list[tuple[int, ...]] = []
    original = GPT2Model.forward

    def counted(self, *args, **kwargs):
        ids = kwargs.get("input_ids") if kwargs.get("input_ids") is not None else args[0]
        seen.append(tuple(ids.shape))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(GPT2Model, "forward", counted)
    return seen


def open_page(text: str) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=90)
    for key, value in {**GPT2, "tokens": text}.items():
        at.query_params[key] = value
    return at.run()


def texts(at: AppTest) -> str:
    kinds = ("markdown", "success", "error", "caption", "info")
    return "\n".join(str(element.value) for kind in kinds for element in at.get(kind))


def test_one_forward_per_new_sentence_serves_the_layer_the_check_and_the_head_finder(forwards):
    at = open_page("the cat sat on the mat one")
    assert not at.exception
    forwards.clear()
    at.text_area(key="tokens").set_value("a dog sat under the tree two").run()
    assert not at.exception
    shown = texts(at)
    assert "Matches the checkpoint **gpt2** itself" in shown  # the check ran, and passed
    assert t("finder.title") in shown and t("patterns.title") in shown  # the head finder and the pattern search
    assert len(forwards) == 1, forwards  # one forward of the checkpoint for all three


def test_the_induction_maps_are_computed_once_per_checkpoint_across_sentences(monkeypatch):
    runner.cached_induction_scores.clear()
    calls = []
    original = PretrainedSource.induction_maps

    def counted(self, *args, **kwargs):
        calls.append(self.name)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(PretrainedSource, "induction_maps", counted)
    at = open_page("the cat sat on the mat three")
    at.text_area(key="tokens").set_value("a dog sat under the tree four").run()
    assert not at.exception
    assert t("patterns.title") in texts(at)
    assert calls == ["gpt2"]


def test_a_checkpoint_tries_no_padded_batch(forwards):
    """Its own tokenizer cuts the text: the page has no batch, and finds that out without a forward."""
    config = AttentionConfig(weights=PRETRAINED, checkpoint="gpt2", tokens="the cat sat five")
    source = make_source(WeightSpec(PRETRAINED, checkpoint="gpt2"))
    forwards.clear()
    assert page_batch(config, source, CPU) is None
    assert forwards == []


def test_the_steps_and_their_values_are_drawn_before_the_head_finder_computes(monkeypatch):
    """The head finder's maps fail here: everything the steps show is already on the page, the check included."""

    asked = []

    def fails(*args, **kwargs):
        asked.append(args)
        raise RuntimeError("the head finder's maps")

    monkeypatch.setattr(runner, "cached_attention_maps", fails)
    at = open_page("the cat sat on the mat six")
    assert asked and at.exception  # the head finder asked for its maps, and the page stopped there
    shown = texts(at)
    for title in ("step1.title", "step2.title", "step3.title", "step4.title", "check.title"):
        assert t(title) in shown, title
    assert "Matches the checkpoint **gpt2** itself" in shown  # the check against the checkpoint, a value
    assert "(B, h, L, d_k)" in shown  # step 1's shapes, drawn by the values' fragment
    assert t("finder.title") not in shown
