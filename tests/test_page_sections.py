"""The page's layout is one registry (``components/page_sections.py``): the main page, the slides and the link's
``step=`` read it. Every slide of the registry is named by a link and drawn where a page has it; a section added as
one entry is on the page, on its slide and in the link, with nothing else changed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from components import page_sections
from components.i18n import LANGUAGES, t
from components.page_sections import SECTIONS, Section, Slide, draw_slide, slide_names, slide_order, slide_title
from components.url_params import parse_teacher_params
from mha.config import RANDOM, WEIGHT_SOURCES

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
SMALL = {"d_model": "64", "num_heads": "4", "tokens": "the cat sat on the mat", "lang": "en"}
PAGE_KINDS = [(weights, image) for weights in WEIGHT_SOURCES for image in (False, True)]
PROBE = "probe section drawn"


def _open(**params: str) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=60)
    at.query_params.update({**SMALL, **params})
    return at.run()


def _recording(monkeypatch, draws: bool = True) -> list[str]:
    """Every section's draw recorded by name (then drawn as before, with ``draws``); the names drawn, in order."""
    drawn: list[str] = []

    def recorded(section: Section):
        def draw(page) -> None:
            drawn.append(section.name)
            if draws:
                section.draw(page)

        return draw

    monkeypatch.setattr(page_sections, "SECTIONS", tuple(replace(s, draw=recorded(s)) for s in SECTIONS))
    return drawn


def test_every_slide_of_the_registry_is_named_by_a_link_titled_and_on_some_page():
    assert len(set(slide_order())) == len(slide_order())
    for section in SECTIONS:
        if section.slide is None:
            continue
        name = section.slide.name
        parsed = parse_teacher_params({"step": name})
        assert parsed.values["step"] == name and parsed.problems == [], name  # the link's step= reaches it
        for lang in LANGUAGES:
            assert slide_title(name) and t(section.slide.title, lang=lang, step=name, steps=4)
        pages = [kind for kind in PAGE_KINDS if name in slide_names(*kind)]
        assert pages or section.slide.asked, f"no page has the slide {name!r}"
        assert section.slide.asked or section.on_page, f"{section.name}: off the page, its slide must be asked for"


def test_a_slide_draws_exactly_the_sections_that_name_it_in_page_order(monkeypatch):
    drawn = _recording(monkeypatch, draws=False)
    for name in slide_order():
        drawn.clear()
        draw_slide(name, None)
        assert drawn == [s.name for s in SECTIONS if s.slide is not None and s.slide.name == name] != [], name


def test_the_main_page_draws_every_section_of_the_page_in_registry_order_the_last_after_the_values(monkeypatch):
    drawn = _recording(monkeypatch)
    at = _open()
    assert not at.exception, at.exception
    on_page = [s for s in SECTIONS if s.on_page]
    assert drawn == [s.name for s in on_page if not s.last] + [s.name for s in on_page if s.last]


@pytest.mark.parametrize("step", ["1", "2", "3", "4", "5"])
def test_each_slide_of_the_random_page_draws_its_sections(monkeypatch, step):
    drawn = _recording(monkeypatch)
    at = _open(teacher="1", step=step)
    assert not at.exception and at.query_params["step"] == step, at.query_params
    assert drawn == [s.name for s in SECTIONS if s.slide is not None and s.slide.name == step]


def _probe(page) -> None:
    st.markdown(PROBE)


def test_a_section_added_as_one_entry_is_on_the_page_on_its_slide_and_in_the_link(monkeypatch):
    after = [s.name for s in SECTIONS].index("step4") + 1
    probe = Section("probe", _probe, Slide("probe", "teacher.slide.model", weights=(RANDOM,)))
    monkeypatch.setattr(page_sections, "SECTIONS", (*SECTIONS[:after], probe, *SECTIONS[after:]))
    assert slide_names() == ("1", "2", "3", "4", "probe", "5")
    assert slide_names("trained") == ("model", "1", "2", "3", "4", "timeline", "5")  # not on other pages
    assert parse_teacher_params({"step": "probe"}).values["step"] == "probe"
    page = _open()
    texts = [element.value for element in page.markdown]
    assert PROBE in texts
    before, probe_at = texts.index(f"### {t('step4.title')}"), texts.index(PROBE)
    assert before < probe_at < texts.index(f"### {t('summary.title')}")  # in its place among the sections
    slide = _open(teacher="1", step="probe")
    assert not slide.exception and not slide.info, [i.value for i in slide.info]  # no "the page has no such slide"
    assert PROBE in [element.value for element in slide.markdown]
    assert slide.query_params["step"] == "probe"
    slide.button(key="teacher_next_top").click().run()  # the next slide after it is the summary
    assert slide.query_params["step"] == "5"
