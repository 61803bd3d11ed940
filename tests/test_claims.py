"""Sentences a careful reader found misleading, each checked where it can come back.

Where a claim has a number, the number is checked against its definition (here or in the page's own test file:
step 2's √d_k in ``test_lessons_page.py``, attention distance and rollout in ``test_image_page.py``). Where a
claim is qualitative, the test pins what the sentence must say or must not say, in both languages.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from test_labs_pages import open_lab, text_of

from components.i18n import LANGUAGES, t
from components.labs.windows import COST_PATCH_PX, COST_SIDES

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_windows_cost_line_names_the_image_size_it_means(lang):
    """256 × 256 patches of 16 pixels are an image of 4096 × 4096 pixels, not "a 4096-pixel image"."""
    pixels = COST_SIDES[-1] * COST_PATCH_PX
    assert pixels == 4096  # the lab's largest image: 256 patches of 16 pixels a side
    at = open_lab("pages/10_windows.py", lang)
    assert f"{pixels:,} × {pixels:,}" in text_of(at)
    template = t("lab.windows.cost_summary", lang=lang)
    assert "4096-pixel" not in template and "4096 像素的图像" not in template


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_digits_accuracy_is_called_a_validation_accuracy(lang):
    """The 364 held-out digits chose the recipe and the depth: the page must not pass them off as a test set."""
    word = {"en": "validation", "zh": "验证"}[lang]
    for key in ("training.task.digits", "training.done.held_out_images"):
        assert word in t(key, lang=lang), key
    readme = (REPO / "README.md").read_text()
    assert "That is a validation accuracy, not a test accuracy" in readme


@pytest.mark.parametrize("lang", LANGUAGES)
def test_lab_11_cites_what_kobayashi_et_al_report_and_no_encoder_only_layer(lang):
    """Kobayashi et al. 2020 report [CLS], [SEP] and punctuation (not "the first token"); a checkpoint's layer may be
    a decoder's (GPT-2) or Pre-Norm (GPT-2, ViT), where no LayerNorm follows the attention output."""
    explain = t("lab.attribution.explain", lang=lang)
    assert {"en": "punctuation", "zh": "标点"}[lang] in explain
    assert {"en": "or the first token", "zh": "或第一个词元"}[lang] not in explain
    checkpoint = t("lab.attribution.no_prediction_checkpoint", lang=lang)
    assert {"en": "bare encoder", "zh": "只有编码器"}[lang] not in checkpoint
    assert "Post-Norm" in checkpoint and "BERT" in checkpoint  # the LayerNorm after the residual is BERT's kind


def test_the_two_languages_make_claims_of_the_same_strength():
    """Chinese that changed a claim's strength: "only looks at" for a mean weight; "not completely the same as"
    against an English "are not"."""
    assert "只看" not in t("patterns.what", lang="zh")  # the English scores a mean weight, not "only"
    english, chinese = t("lab.attribution.explain", lang="en"), t("lab.attribution.explain", lang="zh")
    assert "并不能完全等同于" in chinese  # the tutorial's own words (6.2)
    assert "cannot be taken as wholly the same as" in english


def test_heads_md_says_how_its_induction_score_differs_from_the_tutorials():
    heads = " ".join((REPO / "docs/HEADS.md").read_text().split())
    assert "the same measurement as this page" not in heads.replace("essentially the same measurement", "")
    for difference in ("batch of 10", "repeats allowed", "two queries of the first copy", "50 distinct tokens"):
        assert difference in heads, difference


def test_no_issue_numbers_in_the_project():
    """The code and docs describe the project, not its tracker."""
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    pattern = re.compile(r"\bissues? ?#?\d+", re.IGNORECASE)
    found = []
    for name in files:
        if name.endswith((".py", ".md", ".toml", ".txt", ".yaml", ".yml", ".sh", ".js")) or name.startswith(".ci/"):
            text = (REPO / name).read_text(errors="replace")
            found += [f"{name}: {match.group(0)}" for match in pattern.finditer(text)]
    assert not found, found


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_sentences_the_reader_found_false_stay_out(lang):
    """Each was false of what the page computes (see the tests of their numbers): the words must not come back."""
    gone = {
        "step2.why_scale_dependent": {"en": "still takes the √d_k out", "zh": "仍然把其中的 √d_k 去掉"},
        "patches.rollout_one_layer": {"en": "the same picture", "zh": "同一幅图"},
        "patches.rollout_numbers": {"en": "adds up:", "zh": "累积起来"},
        "patches.distance_uniform": {
            "en": "Below it a head looks nearer than chance, above",
            "zh": "低于它，这个头看得比随机更近；",
        },
    }
    for key, words in gone.items():
        assert words[lang] not in t(key, lang=lang), key


def test_step_2_explains_a_narrower_spread_without_calling_it_lined_up():
    """On random weights and a short text the scaled scores can spread less than predicted: few scores, not queries
    lined up with keys. The page must then not give the lined-up explanation."""
    from streamlit.testing.v1 import AppTest

    from mha.config import AttentionConfig
    from mha.pipeline import run_attention
    from mha.score_scale import PREDICTION_SLACK, score_spread

    params = {"d_model": 64, "num_heads": 1, "tokens": "the cat sat on the mat today", "seed": 0}
    run = run_attention(AttentionConfig(**params))
    p, a = run.trace.project, run.trace.attend
    spread = score_spread(p.q_heads[0], p.k_heads[0], a.raw_scores[0], a.scale)
    assert spread.prediction_ratio < 1 / PREDICTION_SLACK  # the premise: narrower than predicted
    at = AppTest.from_file(str(REPO / "playground.py"), default_timeout=60)
    at.query_params.update({key: str(value) for key, value in params.items()})
    shown = "\n".join(m.value for m in at.run().markdown)
    ratio = f"{spread.prediction_ratio:.1f}"
    assert t("step2.why_scale_low", ratio=ratio, count=f"{spread.scores:,}") in shown
    assert t("step2.why_scale_dependent", ratio=ratio) not in shown
