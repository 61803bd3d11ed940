"""The playground in a real Chromium: the default page draws its charts, with no console errors."""

from __future__ import annotations

import pytest
from conftest import ARTIFACTS, console_errors, wait_for_app

pytestmark = pytest.mark.browser

# Heatmap cells drawn by each chart (Vega's SVG renderer: one path per rect; an empty chart has none).
_CELLS_DRAWN = """() => Array.from(document.querySelectorAll('.vega-embed'))
    .map(chart => chart.querySelectorAll('.mark-rect path').length)"""


def _cells_per_chart(page, charts: int) -> list[int]:
    page.wait_for_function(f"({_CELLS_DRAWN})().filter(cells => cells > 0).length >= {charts}", timeout=60_000)
    return page.evaluate(_CELLS_DRAWN)


def test_default_page_draws_its_charts(app_url, page):
    page.goto(app_url)
    wait_for_app(page)
    cells = _cells_per_chart(page, charts=7)
    assert len(cells) >= 7
    # the default sentence has 11 tokens: every chart has at least one 11 x 11 matrix
    assert all(count >= 11 * 11 for count in cells), cells
    for step in ("1 · Project and split into heads", "2 · Scaled dot-product attention", "4 · Output projection"):
        assert page.get_by_role("heading", name=step).count() == 1
    assert page.get_by_text("Matches PyTorch").count() == 1
    assert console_errors(page) == []


def test_chinese_page_with_a_chinese_sentence_draws_its_charts(app_url, page):
    page.goto(f"{app_url}/?lang=zh&mask_type=causal&tokens=小明喜欢打球，他放学后去了操场")
    wait_for_app(page)
    cells = _cells_per_chart(page, charts=7)
    assert all(count >= 15 * 15 // 2 for count in cells), cells  # 15 characters; causal: half the cells or more
    assert page.get_by_role("heading", name="1 · 线性投影并拆分成多头").count() == 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "playground-zh.png"), full_page=True)
    assert console_errors(page) == []
