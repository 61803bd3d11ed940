"""The playground in a real Chromium: the default page draws its charts, with no console errors."""

from __future__ import annotations

import pytest
from conftest import ARTIFACTS, console_errors, wait_for_app
from test_browser_controls import drawn_charts

pytestmark = pytest.mark.browser


def test_default_page_draws_its_charts(app_url, page):
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(app_url)
    wait_for_app(page)
    charts = drawn_charts(page)  # one pixel fingerprint per chart, '' while blank
    # the heads at a glance, steps 1 and 2, all heads, steps 3 and 4
    assert len(charts) == 6 and all(charts), charts
    assert len(set(charts)) == len(charts), "two charts drew the same picture"
    for step in ("1 · Project and split into heads", "2 · Scaled dot-product attention", "4 · Output projection"):
        assert page.get_by_role("heading", name=step).count() == 1
    assert page.get_by_text("Matches PyTorch").count() == 1
    assert console_errors(page) == []
    # no network at run time: fonts, icons, scripts and data all come from the app's own server (the heatmap
    # component's inline code is imported from a blob: URL of the page's own origin)
    assert [url for url in requested if not url.startswith((app_url, f"blob:{app_url}/"))] == []


def test_chinese_page_with_a_chinese_sentence_draws_its_charts(app_url, page):
    page.goto(f"{app_url}/?lang=zh&mask_type=causal&tokens=小明喜欢打球，他放学后去了操场")
    wait_for_app(page)
    charts = drawn_charts(page)
    assert len(charts) == 6 and all(charts), charts  # the heads at a glance, steps 1 and 2, all heads, steps 3 and 4
    assert page.get_by_role("heading", name="1 · 线性投影并拆分成多头").count() == 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "playground-zh.png"), full_page=True)
    assert console_errors(page) == []


def test_the_server_runs_auto_on_the_suites_device(app_url, page, device):
    """The browser tests' server gets the suite's device (ATTN_PLAYGROUND_TEST_DEVICE travels in its environment)."""
    page.goto(f"{app_url}/?d_model=64&num_heads=4&tokens=the%20cat%20sat")
    wait_for_app(page)
    sidebar = page.locator('[data-testid="stSidebar"]').text_content()
    assert f"Computed on {device} in float32." in sidebar, sidebar
