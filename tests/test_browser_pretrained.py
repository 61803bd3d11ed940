"""A pretrained page in a real Chromium (the tiny BERT; no network): every chart drawn, the head finder
on "it" -> "animal", the check against the checkpoint, no console errors, nothing fetched from outside.
"""

from __future__ import annotations

import urllib.parse

import pytest
from conftest import ARTIFACTS, console_errors, wait_for_app
from local_app import serving
from test_browser_controls import drawn_charts
from test_browser_gpt2 import MAPS

pytestmark = pytest.mark.browser
ANIMAL = "The animal didn't cross the street because it was too tired"


@pytest.fixture(scope="module")
def pretrained_url(tiny_checkpoint):
    with serving(extra_env={"ATTN_PLAYGROUND_CHECKPOINTS": f"tiny={tiny_checkpoint}"}) as url:
        yield url


def test_a_pretrained_page_with_the_head_finder_draws_in_chromium(pretrained_url, page):
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    query = {"weights": "pretrained", "checkpoint": "tiny", "tokens": ANIMAL}
    query |= {"finder_query": "it", "finder_key": "animal"}
    page.goto(f"{pretrained_url}/?{urllib.parse.urlencode(query)}")
    wait_for_app(page, timeout_ms=180_000)
    charts = drawn_charts(page)
    # the heads at a glance, the step panels' five canvas heatmaps (Q K V, one head's three stages, all heads,
    # concat, output) and the head finder's layer x head map
    assert len(charts) == 7 and all(charts), charts
    assert page.get_by_role("heading", name="Head finder: every head of every layer").count() == 1
    assert page.get_by_text("Weight from 10:it to 2:animal").count() >= 1
    (finder,) = page.evaluate(MAPS)
    assert finder["cells"] == 2 * 4 and finder["width"] > 100, finder  # a cell per head of each layer, drawn
    assert page.get_by_text("Matches the checkpoint").count() == 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "playground-pretrained.png"), full_page=True)
    assert console_errors(page) == []
    # the page's own components load their code from blob: URLs of the page's origin
    assert [url for url in requested if not url.startswith((pretrained_url, f"blob:{pretrained_url}/"))] == []
