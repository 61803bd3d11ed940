"""The heads at a glance above the steps (``components/panels/glance.py``): the first heads' softmax weights of the
learner's sentence, small, as the steps compute them; a line instead where the sentence is too long to draw small or
while the learner predicts step 2's chart. Its place on the first screen is read in Chromium
(``tests/test_browser_first_screen.py``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import glance_heatmap, heatmaps
from streamlit.testing.v1 import AppTest
from tolerances import SHOWN_ATOL

from components.i18n import t
from components.panels import glance

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")


def _open(**params: str) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=60)
    at.query_params.update({"lang": "en", **params})
    return at.run()


def _captions(at: AppTest) -> list[str]:
    return [caption.value for caption in at.caption]


def test_the_default_page_shows_every_heads_weights_as_step_two_computes_them():
    at = _open()
    assert not at.exception
    shown = glance_heatmap(at)
    step2 = heatmaps(at, payload=True)[1]  # every head's raw scores, scaled scores and weights, head after head
    heads = step2.heads.count
    assert heads == 8 and len(shown.panels) == min(heads, glance.HEADS)
    assert [panel.title for panel in shown.panels] == [f"{t('chart.head')} {h}" for h in range(heads)]
    for head, panel in enumerate(shown.panels):
        weights = step2.panels[3 * head + 2]
        assert weights.title == t("step2.weights", head=head)
        np.testing.assert_array_equal(panel.values, weights.values)  # the same sent numbers: four decimals each
        sums = panel.values.astype(np.float64).sum(axis=1)  # softmax rows, each value rounded to four decimals
        assert np.abs(sums - 1).max() <= SHOWN_ATOL * panel.values.shape[1]
    assert shown.square and not shown.axes and shown.columns == heads  # one row of small squares
    assert (shown.scales[0].low, shown.scales[0].high) == (0.0, 1.0)  # the page's default: the fixed 0-1 scale
    assert t("glance.caption", heads=heads) in _captions(at)


def test_a_causal_page_with_more_heads_than_drawn_shows_the_first_ones_masked_above_the_diagonal():
    at = _open(d_model="96", num_heads="12", mask_type="causal", tokens="one two three four five")
    shown = glance_heatmap(at)
    assert len(shown.panels) == glance.HEADS < 12
    length = 5
    above = np.triu(np.ones((length, length), bool), k=1)  # key after query: blocked by the causal mask
    for panel in shown.panels:
        np.testing.assert_array_equal(panel.masked, above)
        assert (panel.values[above] == 0).all()
    assert t("glance.caption_some", heads=12, last=glance.HEADS - 1) in _captions(at)


def test_zh_words_and_a_sentence_too_long_to_draw_small():
    at = _open(lang="zh", tokens=" ".join(f"w{i}" for i in range(glance.MAX_TOKENS + 1)))
    assert glance_heatmap(at) is None
    assert t("glance.too_long", lang="zh", length=glance.MAX_TOKENS + 1) in _captions(at)
    at = _open(lang="zh", num_heads="4", d_model="64")
    assert [panel.title for panel in glance_heatmap(at).panels] == [
        f"{t('chart.head', lang='zh')} {h}" for h in range(4)
    ]
    assert t("glance.caption", lang="zh", heads=4) in _captions(at)


def test_the_glance_stretches_its_colours_with_the_pages_colour_scale():
    at = _open(d_model="64", num_heads="4", color_scale="stretch")
    shown = glance_heatmap(at)
    values = np.stack([panel.values for panel in shown.panels])  # (h, L, L) as sent
    scale = shown.scales[0]
    assert scale.low == pytest.approx(values.min(), abs=SHOWN_ATOL) and scale.high == pytest.approx(
        values.max(), abs=SHOWN_ATOL
    )
    assert scale.high < 1.0  # random weights: far from the fixed scale's top


@pytest.mark.parametrize("predicting", [False, True])
def test_the_glance_waits_while_the_learner_predicts_step_two(predicting):
    at = AppTest.from_file(SCRIPT, default_timeout=60)
    at.query_params.update({"lang": "en", "d_model": "64", "num_heads": "4"})
    at.session_state["predict_2"] = predicting
    at.run()
    assert (glance_heatmap(at) is None) == predicting
    assert (t("glance.predicting") in _captions(at)) == predicting
