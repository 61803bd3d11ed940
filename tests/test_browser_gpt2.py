"""A GPT-2 page in a real Chromium (the planted 2-layer GPT-2; no network): every chart drawn, the head finder's
and the pattern search's layer x head maps drawn cell by cell, the check against the checkpoint, no console
errors.
"""

from __future__ import annotations

import urllib.parse

import pytest
from conftest import ARTIFACTS, console_errors, wait_for_app
from local_app import serving
from test_browser_controls import drawn_charts

pytestmark = pytest.mark.browser
TEXT = "the cat sat on a mat the cat sat on a mat"
#: Per Vega-Lite map: its title, its width and the cells it drew that one can see (one path per datum of its
#: rect mark, at least 10 px wide and inside the chart's SVG, which a chart squeezed by autosize "fit" is not).
MAPS = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].map(chart => {
    const svg = chart.querySelector('svg').getBoundingClientRect();
    const paths = [...chart.querySelectorAll('g.mark-rect.layer_0_marks path[role="graphics-symbol"]')];
    const shown = paths.map(path => path.getBoundingClientRect()).filter(box => box.width >= 10
        && box.left >= svg.left - 0.5 && box.right <= svg.right + 0.5
        && box.top >= svg.top - 0.5 && box.bottom <= svg.bottom + 0.5);
    return {
        cells: shown.length,
        width: svg.width,
        title: (chart.querySelector('g.role-title text') || {textContent: ''}).textContent,
    };
})"""


@pytest.fixture(scope="module")
def gpt2_url(induction_gpt2):
    with serving(extra_env={"ATTN_PLAYGROUND_CHECKPOINTS": f"planted={induction_gpt2}"}) as url:
        yield url


def test_a_gpt2_page_with_the_pattern_search_draws_in_chromium(gpt2_url, page):
    query = {"weights": "pretrained", "checkpoint": "planted", "tokens": TEXT, "layer": "1"}
    page.goto(f"{gpt2_url}/?{urllib.parse.urlencode(query)}")
    wait_for_app(page, timeout_ms=180_000)
    charts = drawn_charts(page)
    # the heads at a glance, the step panels' five canvas heatmaps, the head finder's map and the pattern search's two
    # maps
    assert len(charts) == 9 and all(charts), charts
    page.get_by_text("Pattern search: previous-token and induction heads").wait_for(timeout=60_000)
    page.wait_for_function(f"({MAPS})().length === 3 && ({MAPS})().every(map => map.cells === 4)", timeout=60_000)
    maps = page.evaluate(MAPS)
    assert [m["title"] for m in maps][1:] == ["Previous-token score", "Induction score"], maps
    assert all(m["cells"] == 4 and m["width"] > 100 for m in maps), maps  # 2 layers x 2 heads, title and legend
    assert page.get_by_text("Matches the checkpoint").count() == 1
    assert page.get_by_text("induction 1.00").count() >= 1  # head 0 of layer 1, labelled on the repeated text
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "playground-gpt2.png"), full_page=True)
    assert console_errors(page) == []
