"""A task opens on an input it was made for: the reviews task on a Chinese review (a link without text, the teacher's
model slide, a switch of the controls), in both languages; a link's own text is kept."""

from __future__ import annotations

import pytest
from test_reviews import LINK, open_page

from components.controls.keys import REVIEW_DEFAULT, REVIEW_EXAMPLES
from components.url_params import DEFAULTS


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_reviews_link_without_text_opens_on_a_review(short_trainings, lang):
    at = open_page(LINK, lang)
    assert not at.exception
    assert REVIEW_DEFAULT in [sentence for _, sentence in REVIEW_EXAMPLES]
    assert at.text_area(key="tokens").value == REVIEW_DEFAULT != DEFAULTS["tokens"]
    assert at.query_params["tokens"] in (REVIEW_DEFAULT, [REVIEW_DEFAULT])  # the link says which text the page read


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_teachers_model_slide_opens_on_a_review(short_trainings, lang):
    at = open_page({**LINK, "teacher": "1", "step": "model"}, lang)
    assert not at.exception
    assert at.session_state["tokens"] == REVIEW_DEFAULT


def test_a_link_that_gives_text_keeps_it(short_trainings):
    at = open_page({**LINK, "tokens": DEFAULTS["tokens"]})
    assert at.text_area(key="tokens").value == DEFAULTS["tokens"]


def test_switching_to_the_reviews_task_brings_a_review_and_leaving_it_the_default(short_trainings):
    open_page(LINK)  # the reviews model at the sizes a switch gives is trained (short)
    at = open_page({"d_model": "16", "num_heads": "2"})
    assert at.text_area(key="tokens").value == DEFAULTS["tokens"]
    at.selectbox(key="weights").set_value("trained").run()
    at.selectbox(key="task").set_value("reviews").run()
    assert at.text_area(key="tokens").value == REVIEW_DEFAULT
    at.selectbox(key="task").set_value("previous").run()
    assert at.text_area(key="tokens").value == DEFAULTS["tokens"]
    at.selectbox(key="task").set_value("reviews").run()
    at.text_area(key="tokens").set_value("这家店很一般").run()
    at.selectbox(key="task").set_value("previous").run()
    assert at.text_area(key="tokens").value == "这家店很一般"  # the learner's own text stays
