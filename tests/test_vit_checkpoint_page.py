"""The playground with a ViT checkpoint (the tiny ones of ``tiny_checkpoint``; no network): the four steps on an
image's patches, the check against the checkpoint, what a ViT reader must know, the head finder from [CLS], a mask
as a "what if", both languages. The image is chosen through the link (``image``), as its control will set it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import headings, heatmaps
from streamlit.testing.v1 import AppTest
from test_languages import HAN, leftover_english, shown_texts, user_tokens
from tiny_checkpoint import VIT_HEADS, VIT_HIDDEN, VIT_LAYERS

from components.i18n import t
from mha.config import AttentionConfig
from mha.pipeline import run_attention
from mha.sources import make_source

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
VIT = {"weights": "pretrained", "checkpoint": "tinyvit", "image": "photo-temple"}
STEPS = ("step1.title", "step2.title", "step3.title", "step4.title")
CENTRE = 1 + 2 * 4 + 2  # r2c2 of the 4 × 4 grid, after [CLS]


@pytest.fixture(autouse=True)
def _vits_on_the_list(listed_vit):
    """Every test here runs on a server that lists the tiny ViT and DeiT (and the tiny BERT)."""


def open_page(params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=90)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def texts(at: AppTest, kind: str) -> list[str]:
    return [str(element.value) for element in at.get(kind)]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_vit_layer_shows_the_four_steps_on_the_images_patches_and_matches_the_checkpoint(lang):
    at = open_page({**VIT, "layer": "1", "lang": lang})
    assert not at.exception and not at.error, texts(at, "error")
    step_titles = [t(step, lang=lang) for step in STEPS]
    assert [title for title in headings(at, 3) if title in step_titles] == step_titles
    run = run_attention(AttentionConfig(**{**VIT, "layer": 1}))
    check = make_source(run.config.weight_spec).compare(run.config, run.trace.weights, run.trace.output, run.mask)
    numbers = {"weights": f"{check.max_abs_weights:.2e}", "out": f"{check.max_abs_output:.2e}", "tol": "1e-05"}
    numbers["tol_out"] = f"{1e-5 * check.output_scale:.1e}" if check.output_scale > 1 else "1e-05"
    assert check.passed
    assert t("check.checkpoint_pass", lang=lang, checkpoint="tinyvit", layer=1, **numbers) in texts(at, "success")
    assert t("check.checkpoint_how_vit", lang=lang) in texts(at, "caption")
    note = t("notes.family_vit", lang=lang, checkpoint="tinyvit", size="32 × 32", patch=8, grid="4 × 4")
    assert note in texts(at, "info")
    page = "\n".join(texts(at, "markdown"))
    assert "0\\:\\[CLS\\] · 1\\:r0c0 · 2\\:r0c1" in page  # [CLS], then the grid row by row
    assert f"[1, {VIT_HEADS}, 17, {VIT_HIDDEN // VIT_HEADS}]" in page  # (B, H, L, d_k): 16 patches + [CLS]
    assert at.number_input(key="layer").max == VIT_LAYERS - 1
    assert (at.selectbox(key="finder_query").value, at.selectbox(key="finder_key").value) == (0, CENTRE)


def test_a_deit_shows_its_distillation_token():
    at = open_page({**VIT, "checkpoint": "tinydeit", "image": "digit-5"})
    assert not at.exception and not at.error
    assert t("notes.deit_dist", checkpoint="tinydeit", size="32 × 32", patch=8, grid="4 × 4") in texts(at, "info")
    assert "0\\:\\[CLS\\] · 1\\:\\[DIST\\] · 2\\:r0c0" in "\n".join(texts(at, "markdown"))
    assert [s for s in texts(at, "success") if "tinydeit" in s]


def test_a_causal_mask_on_a_vit_is_a_what_if_the_check_does_not_compare():
    at = open_page({**VIT, "mask_type": "causal"})
    assert not at.exception and not at.error
    assert t("check.checkpoint_what_if_image", checkpoint="tinyvit") in texts(at, "info")
    assert not [s for s in texts(at, "success") if "tinyvit" in s]


def _shows_every_heads_weights(at: AppTest, weights: np.ndarray) -> bool:
    """Some heatmap of the page holds every head's weights (H, L, L) as panels, to the 10⁻⁴ a tooltip shows."""
    for figure in heatmaps(at):
        panels = np.stack([panel.values for panel in figure.panels])  # (P, R, C)
        if panels.shape == weights.shape and np.abs(panels - weights).max() <= 1e-4:
            return True
    return False


def test_the_image_in_the_link_is_the_image_that_runs():
    """Each page shows the heads' weights of its own image's run, not the other's."""
    runs = {
        image: run_attention(AttentionConfig(**{**VIT, "image": image})).trace.weights[0].cpu().numpy()  # (H, L, L)
        for image in ("photo-temple", "digit-3")
    }
    assert np.abs(runs["photo-temple"] - runs["digit-3"]).max() > 0.01
    for image, other in (("photo-temple", "digit-3"), ("digit-3", "photo-temple")):
        at = open_page({**VIT, "image": image})
        assert not at.exception and at.query_params["image"] == image
        assert _shows_every_heads_weights(at, runs[image]) and not _shows_every_heads_weights(at, runs[other])


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("checkpoint", ["tinyvit", "tinydeit"])
def test_the_vit_page_reads_in_its_language(lang, checkpoint):
    at = open_page({**VIT, "checkpoint": checkpoint, "lang": lang, "mask_type": "window"})
    assert not at.exception
    data = user_tokens(at) | set(at.selectbox(key="checkpoint").options)
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
