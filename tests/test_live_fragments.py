"""The live controls' fragments (``components/live_controls.py``), headless: production's path in AppTest.

A session with no browser behind it runs the page whole on every change (AppTest's tree after a fragment-only run
holds only what that run sent); here the session answers that a browser is behind it
(``live_controls.browser_behind``), so a live change takes the path a learner's browser takes: the values' fragment
alone for a run setting (the seed), the controls' and the values' for a size. What those runs send must be what a
full run of the new values draws, and nothing of the page around them. Chromium takes the same path in
``tests/test_browser_seed.py`` and ``tests/test_browser_controls.py``.
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


@pytest.mark.parametrize(
    ("key", "value", "params"),
    [("seed", 7, {"seed": "7"}), ("d_model", 128, {"d_model": "128"})],
    ids=["a run setting: the values' fragment", "a size: the controls' and the values' fragments"],
)
def test_a_live_change_sends_the_values_of_a_full_run_and_nothing_else(browser_behind, key, value, params):
    at = _open(SMALL)
    assert t("step1.title") in headings(at, 3)  # the first run is the whole page
    at.number_input(key=key).set_value(value).run()
    _sent_only_the_values(at)
    fresh = _open({**SMALL, **params})  # the same values opened from a link: a full run
    assert_same_charts(heatmaps(at, payload=True), heatmaps(fresh, payload=True))
    assert_same_charts([glance_heatmap(at)], [glance_heatmap(fresh)])
    assert at.query_params[key] == [str(value)]  # the values' fragment wrote the link


def test_without_a_browser_behind_it_a_session_runs_the_page_whole():
    at = _open(SMALL)
    at.number_input(key="seed").set_value(7).run()
    assert t("step1.title") in headings(at, 3)
