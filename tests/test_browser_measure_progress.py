"""Labs 13's and 14's Measure in Chromium: while the child process measures, a progress bar says how many parts are done
and which it measures now; once the results are drawn the bar is gone. Screenshots of the bar go to
``test-artifacts/measure-progress-<lab>-<lang>.png``."""

from __future__ import annotations

import pytest
from conftest import ARTIFACTS, console_errors, wait_for_app

pytestmark = pytest.mark.browser

#: Every text the progress bar showed, as it changed (recorded in the page: the bar lives a few seconds).
RECORD = """
(() => {
  window.__bar = [];
  new MutationObserver(() => {
    const bar = document.querySelector('[data-testid="stProgress"]');
    const text = bar ? bar.innerText.trim() : null;
    if (text && window.__bar[window.__bar.length - 1] !== text) window.__bar.push(text);
  }).observe(document, { subtree: true, childList: true, characterData: true });
})();
"""
#: Per lab: what the bar reads as its last part starts (5 memory lengths + the backends; a warm-up, 7 lengths' times
#: and memory), in English and in Chinese.
LABS = {"flash": ("5 of 6", "已测完 5 / 6"), "efficient": ("14 of 15", "已测完 14 / 15")}


@pytest.mark.parametrize(("lab", "lang"), [("flash", "en"), ("efficient", "zh")])
def test_measure_says_what_it_measures_as_it_goes(app_url, page, lab, lang):
    page.add_init_script(RECORD)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{app_url}/{lab}?lang={lang}")
    wait_for_app(page, timeout_ms=120_000)
    charts = page.get_by_test_id("stVegaLiteChart")
    before = charts.count()
    button = page.locator(f".st-key-{lab}_measure button")
    button.scroll_into_view_if_needed()
    button.click()
    bar = page.get_by_test_id("stProgress")
    bar.wait_for(timeout=60_000)
    page.wait_for_function("() => /\\d+ (of|\\/) \\d+/.test(window.__bar[window.__bar.length - 1] || '')",
                           timeout=60_000)  # fmt: skip
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"measure-progress-{lab}-{lang}.png"))
    bar.wait_for(state="detached", timeout=240_000)  # the results are drawn, the bar gone
    wait_for_app(page, timeout_ms=240_000)
    said = page.evaluate("window.__bar")
    last = LABS[lab][0 if lang == "en" else 1]
    assert any(last in text for text in said), said  # counted up to the last part
    counted = [text for text in said if "/" in text or " of " in text]
    assert len(counted) >= 3, said  # several parts told, one after the other
    assert charts.count() > before  # the measured charts
    # a page under a path first probes <path>/_stcore/... (404) before the root: Streamlit's own, harmless
    assert [error for error in console_errors(page) if "404" not in error] == []
