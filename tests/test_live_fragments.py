"""The live controls' fragments (``components/live_controls.py``), headless: production's path in AppTest.

A session with no browser behind it runs the page whole on every change (AppTest's tree after a fragment-only run
holds only what that run sent); here the session answers that a browser is behind it
(``live_controls.browser_behind``), so a change of a size, the mask or the text takes the path a learner's browser
takes: its callback asks for the controls' and the values' fragments alone, which fill the page's parts. What that
run sends must be what a full run of the new values draws, and nothing of the page around them.

AppTest sends a widget's change as a run of the whole script (it names no fragment), so a run setting's own path
(the seed: the values' fragment alone, rerun by the browser) is Chromium's to take: ``tests/test_browser_seed.py``
(the page updated in place, fewer messages than a full run, the same page as a fresh link) and
``tests/test_browser_controls.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import glance_heatmap, headings, heatmaps
from streamlit.testing.v1 import AppTest
from tolerances import assert_same_charts

from components import live_controls
from components.i18n import t

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
SMALL = {"d_model": "64", "num_heads": "4", "tokens": "the cat sat on the mat", "lang": "en"}


@pytest.fixture
def browser_behind(monkeypatch):
    monkeypatch.setattr(live_controls, "browser_behind", lambda: True)


def _open(params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=60)
    at.query_params.update(params)
    return at.run()


def _sent_only_the_values(at: AppTest) -> None:
    """The run sent no frame: no title, no step's heading or explanation (only the parts and the fragments)."""
    assert not at.exception, at.exception
    assert headings(at, 1) == [] and headings(at, 3) == [], headings(at, 3)
    assert t("page.intro") not in [element.value for element in at.markdown]


CHANGES = {
    "d_model": lambda at: at.number_input(key="d_model").set_value(128),
    "num_heads": lambda at: at.number_input(key="num_heads").set_value(2),
    "tokens": lambda at: at.text_area(key="tokens").set_value("a dog ran home"),
}
LINKS = {"d_model": {"d_model": "128"}, "num_heads": {"num_heads": "2"}, "tokens": {"tokens": "a dog ran home"}}


@pytest.mark.parametrize("key", CHANGES)
def test_a_live_change_sends_the_values_of_a_full_run_and_nothing_else(browser_behind, key):
    at = _open(SMALL)
    assert t("step1.title") in headings(at, 3)  # the first run is the whole page
    CHANGES[key](at).run()
    _sent_only_the_values(at)
    fresh = _open({**SMALL, **LINKS[key]})  # the same values opened from a link: a full run
    assert_same_charts(heatmaps(at, payload=True), heatmaps(fresh, payload=True))
    assert_same_charts([glance_heatmap(at)], [glance_heatmap(fresh)])
    for name, value in LINKS[key].items():
        assert at.query_params[name] == value  # the values' fragment wrote the link


def test_without_a_browser_behind_it_a_session_runs_the_page_whole():
    at = _open(SMALL)
    at.number_input(key="seed").set_value(7).run()
    assert t("step1.title") in headings(at, 3)
