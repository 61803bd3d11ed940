"""Every chart downloads as a PNG at slide resolution: the canvas heatmaps through their own "PNG" button
(``components/heatmap.js``), the Vega-Lite charts through Streamlit's element toolbar ("Download as PNG",
Vega's ``toImageURL`` at max(2, devicePixelRatio)).

In Chromium, on the main page, a teacher slide and a lab: the download is a PNG at least twice the chart's
size on the page, on a white background, and clicking the button starts no run of the script. The PNGs and a
screenshot of the button go to ``test-artifacts/``. The button's words come from the page's language (AppTest).
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from conftest import ARTIFACTS, console_errors, heatmaps, wait_for_app
from PIL import Image
from streamlit.testing.v1 import AppTest
from test_browser_controls import drawn_charts

from components.i18n import t

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SCALE = 2  # a download's pixels per CSS pixel, at least
WHITE = (255, 255, 255)
# Records whether the script runs from now on (the app's state attribute turning "running").
WATCH_RUNS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    window.attnRuns = 0;
    new MutationObserver(() => {
        if (app.getAttribute('data-test-script-state') === 'running') window.attnRuns += 1;
    }).observe(app, { attributes: true, attributeFilter: ['data-test-script-state'] });
}"""
RECT = "element => { const r = element.getBoundingClientRect(); return [r.width, r.height]; }"


def _download(page, control, name: str) -> tuple[Image.Image, str]:
    """Click ``control``, take the file it downloads; the image (checked to be a PNG) and its file name."""
    with page.expect_download(timeout=20_000) as info:
        control.click()
    download = info.value
    data = Path(download.path()).read_bytes()
    assert data[:8] == PNG_SIGNATURE, data[:16]
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"png-{name}.png").write_bytes(data)
    image = Image.open(io.BytesIO(data))
    assert image.format == "PNG"
    return image.convert("RGBA"), download.suggested_filename


def _check_size_and_background(image: Image.Image, css_size: tuple[float, float]) -> None:
    width, height = css_size
    assert width > 50 and height > 50, css_size
    assert image.width >= SCALE * width - 1 and image.height >= SCALE * height - 1, (image.size, css_size)
    for corner in [(0, 0), (image.width - 1, 0), (0, image.height - 1), (image.width - 1, image.height - 1)]:
        assert image.getpixel(corner) == (*WHITE, 255), (corner, image.getpixel(corner))


MAIN_STEP2 = 2  # on the main page: the heads at a glance, step 1's chart, then step 2's


def _save_heatmap(page, index: int, name: str) -> tuple[Image.Image, str]:
    """Download the ``index``-th canvas heatmap through its PNG button; checks size, background, no run."""
    chart = page.locator(".attn-heatmap").nth(index)
    chart.scroll_into_view_if_needed()
    css_size = page.locator(".attn-heatmap canvas").nth(index).evaluate(RECT)
    button = chart.locator("button.attn-heatmap-png")
    assert button.inner_text() == "PNG"
    assert "PNG" in button.get_attribute("aria-label") and "PNG" in button.get_attribute("title")
    chart.hover()
    page.wait_for_timeout(250)  # the button fades in
    chart.screenshot(path=str(ARTIFACTS / f"png-{name}-button.png"))
    page.evaluate(WATCH_RUNS)
    image, filename = _download(page, button, name)
    _check_size_and_background(image, css_size)
    assert re.fullmatch(r"[a-z0-9-]+\.png", filename), filename
    page.wait_for_timeout(1500)
    assert page.evaluate("window.attnRuns") == 0, "the PNG button started a run of the script"
    return image, filename


@pytest.mark.browser
def test_main_page_heatmaps_download_as_png(app_url, page):
    page.goto(f"{app_url}/?lang=en")
    wait_for_app(page)
    drawn_charts(page)
    count = page.locator(".attn-heatmap").count()
    assert count >= 3
    assert page.locator("button.attn-heatmap-png").count() == count  # one per heatmap
    _, glance = _save_heatmap(page, 0, "main-glance")  # the heads at a glance come first, then the steps' charts
    _, first = _save_heatmap(page, 1, "main-step1")
    image, second = _save_heatmap(page, MAIN_STEP2, "main-step2")
    assert len({glance, first, second}) == 3 and "head" in second, (glance, first, second)  # step 2 names its head
    # the chart's ink is in the picture: the legend's darkest blue and the labels' grey
    colours = {colour[:3] for _, colour in image.getcolors(maxcolors=1 << 20)}
    assert (49, 51, 63) in colours or any(max(c) < 80 for c in colours)
    # keyboard: the button is reachable and Enter downloads too
    page.locator("button.attn-heatmap-png").first.focus()
    assert page.evaluate("document.activeElement.className") == "attn-heatmap-png"
    with page.expect_download(timeout=20_000) as info:
        page.keyboard.press("Enter")
    assert info.value.suggested_filename.endswith(".png")
    assert console_errors(page) == []


@pytest.mark.browser
def test_head_picker_and_tooltip_still_work_after_a_download(app_url, page):
    page.goto(f"{app_url}/?lang=en&d_model=64&num_heads=4")
    wait_for_app(page)
    drawn_charts(page)
    _save_heatmap(page, MAIN_STEP2, "step2-head0")
    before = page.locator(".attn-heatmap canvas").nth(MAIN_STEP2).evaluate("canvas => canvas.toDataURL()")
    page.locator('.attn-head-picker input[value="2"]').check()
    page.wait_for_timeout(300)
    after = page.locator(".attn-heatmap canvas").nth(MAIN_STEP2).evaluate("canvas => canvas.toDataURL()")
    assert after != before  # head 2 drawn in the browser
    page.wait_for_timeout(1500)  # the picker tells the server a second after the pick (one run): let it pass
    wait_for_app(page)
    _, filename = _save_heatmap(page, MAIN_STEP2, "step2-head2")
    assert "head-2" in filename, filename
    layout = page.evaluate(f"() => document.querySelectorAll('.attn-heatmap')[{MAIN_STEP2}].attnLayout")
    box = layout["panels"][0]
    canvas = page.locator(".attn-heatmap canvas").nth(MAIN_STEP2)
    canvas.hover(position={"x": box["x"] + box["cw"] / 2, "y": box["y"] + box["ch"] / 2})
    assert page.locator(".attn-heatmap-tip").nth(MAIN_STEP2).is_visible()


@pytest.mark.browser
def test_teacher_slide_heatmap_downloads_as_png_in_chinese(app_url, page):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{app_url}/?teacher=1&step=2&lang=zh")
    wait_for_app(page)
    drawn_charts(page)
    assert page.locator(".attn-heatmap").count() >= 1
    button = page.locator("button.attn-heatmap-png").first
    assert button.get_attribute("aria-label") == button.get_attribute("title") == t("chart.save_png", lang="zh")
    _, filename = _save_heatmap(page, 0, "slide-step2-zh")  # Chinese titles: still an ASCII file name
    assert "head-0" in filename, filename
    assert console_errors(page) == []


@pytest.mark.browser
def test_lab_vega_heatmap_downloads_as_png_from_the_toolbar(app_url, page):
    # The labs draw their heatmaps with Vega-Lite (st.altair_chart): Streamlit's element toolbar exports them.
    page.goto(f"{app_url}/masks?lang=en")
    wait_for_app(page)
    drawn_charts(page)
    element = page.locator('[data-testid="stElementContainer"]:has([data-testid="stVegaLiteChart"])').first
    element.scroll_into_view_if_needed()
    css_size = element.locator("canvas, svg.marks").first.evaluate(RECT)
    element.hover()
    button = element.get_by_role("button", name=re.compile("PNG"))
    button.wait_for(state="visible", timeout=10_000)
    page.screenshot(path=str(ARTIFACTS / "png-lab-toolbar.png"))
    page.evaluate(WATCH_RUNS)
    image, filename = _download(page, button, "lab-mask-translator")
    _check_size_and_background(image, css_size)
    assert filename.endswith(".png")
    page.wait_for_timeout(1000)
    assert page.evaluate("window.attnRuns") == 0
    # a page under a path first probes <path>/_stcore/... (404) before the root: Streamlit's own, harmless
    assert [error for error in console_errors(page) if "404" not in error] == []


def test_png_button_words_come_in_the_page_language():
    for lang, expected in (("en", "Download this chart as PNG"), ("zh", "将此图下载为 PNG")):
        assert t("chart.save_png", lang=lang) == expected
        at = AppTest.from_file(SCRIPT, default_timeout=60)
        at.query_params.update({"lang": lang, "d_model": "64", "num_heads": "4", "tokens": "the cat sat"})
        at.run()
        assert not at.exception
        figures = heatmaps(at, payload=True)
        assert figures and {figure.save_word for figure in figures} == {expected}
