"""The first screen at a laptop's (or a projector's) 1280 × 720, in Chromium, read from the page's boxes: the main page
shows the learner's sentence, d_model, the heads and the mask in the sidebar and a picture of attention in the main
area, whole (the heads at a glance, ``components/panels/glance.py``), with step 1's heading still on the screen, the
labs behind a folded menu; so does a checkpoint's page; on a slide the arrow keys walk the slides whatever has focus.
Screenshots go to ``test-artifacts/first-screen/``."""

from __future__ import annotations

import urllib.parse

import pytest
from conftest import ARTIFACTS, console_errors, wait_for_app
from test_browser_pretrained import ANIMAL, pretrained_url  # noqa: F401 (a fixture: the tiny BERT's server)

from components.i18n import LANGUAGES, t
from components.nav import LAB_PAGES

pytestmark = pytest.mark.browser

SCREEN = {"width": 1280, "height": 720}
SHOTS = ARTIFACTS / "first-screen"
CHART = '[data-testid="stMain"] [data-testid="stVegaLiteChart"], [data-testid="stMain"] .attn-heatmap'
#: Boxes (top, bottom in px from the window's top) of the sidebar's first controls, the main area's first chart, the
#: heads at a glance and step 1's heading, and the sidebar's height.
_BOXES = """([chart, step1]) => {
    const box = (node) => {
        if (!node) return null;
        const r = node.getBoundingClientRect();
        return r.height > 0 ? {top: Math.round(r.top), bottom: Math.round(r.bottom)} : null;
    };
    const field = (key) => box(document.querySelector(`.st-key-${key} input, .st-key-${key} textarea`));
    const charts = [...document.querySelectorAll(chart)].map(box).filter((b) => b);
    charts.sort((a, b) => a.top - b.top);
    const headings = [...document.querySelectorAll('[data-testid="stMain"] h3')];
    const heading = headings.find((h) => h.textContent.includes(step1));
    const sidebar = document.querySelector('[data-testid="stSidebarContent"]');
    return {
        tokens: field('tokens'), d_model: field('d_model'), num_heads: field('num_heads'),
        mask_type: field('mask_type'),
        chart: charts[0] || null, glance: box(document.querySelector('.st-key-heatmap_glance .attn-heatmap')),
        step1: box(heading), sidebar: sidebar ? sidebar.scrollHeight : null,
    };
}"""


def _first_screen(page, url: str, name: str, lang: str) -> dict:
    """Open ``url`` at 1280 × 720, wait for its first chart, take the screenshot ``name``; the boxes read."""
    page.set_viewport_size(SCREEN)
    page.goto(url)
    wait_for_app(page, timeout_ms=180_000)
    page.wait_for_selector(CHART, timeout=120_000)
    page.wait_for_timeout(1500)  # the charts settle into their size
    boxes = page.evaluate(_BOXES, [CHART, t("step1.title", lang=lang)])
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))
    (SHOTS / f"{name}.txt").write_text(f"{boxes}\n", encoding="utf-8")
    return boxes


def _shows_attention_first(boxes: dict) -> None:
    """The main area's first chart is whole on the first screen, the heads at a glance, and step 1 begins there."""
    chart, step1 = boxes["chart"], boxes["step1"]
    assert chart is not None and chart["top"] >= 0 and chart["bottom"] <= SCREEN["height"], boxes  # whole, on screen
    assert boxes["glance"] == chart, boxes  # the heads at a glance
    assert step1 is not None and chart["bottom"] <= step1["top"] < SCREEN["height"], boxes  # the steps follow it


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_first_screen_offers_the_sentence_the_sizes_the_mask_and_a_picture_of_attention(app_url, page, lang):
    boxes = _first_screen(page, f"{app_url}/?lang={lang}", f"main-{lang}", lang)
    for key in ("tokens", "d_model", "num_heads", "mask_type"):  # whole, on the sidebar's first screen
        assert boxes[key] is not None and boxes[key]["top"] >= 0 and boxes[key]["bottom"] <= SCREEN["height"], boxes
    _shows_attention_first(boxes)
    # The labs wait behind the folded menu: no link of theirs takes the sidebar's room until it opens.
    links = page.locator('[data-testid="stSidebar"] [data-testid="stPageLink"]')
    assert links.count() == 1 + len(LAB_PAGES) and not any(link.is_visible() for link in links.all())
    page.locator('[data-testid="stSidebar"] [data-testid="stExpander"] summary').first.click()
    links.last.wait_for(state="visible")
    assert all(link.is_visible() for link in links.all())
    assert console_errors(page) == []


def test_a_checkpoints_first_screen_shows_its_heads_attention(pretrained_url, page):  # noqa: F811
    query = urllib.parse.urlencode({"weights": "pretrained", "checkpoint": "tiny", "tokens": ANIMAL, "lang": "en"})
    boxes = _first_screen(page, f"{pretrained_url}/?{query}", "checkpoint-en", "en")
    assert boxes["tokens"] is not None and boxes["tokens"]["bottom"] <= SCREEN["height"], boxes
    _shows_attention_first(boxes)
    assert console_errors(page) == []


def _slide_shown(page, step: str) -> None:
    page.wait_for_url(f"**step={step}**", timeout=60_000)
    wait_for_app(page, timeout_ms=120_000)


def test_the_arrows_walk_the_slides_after_a_click_on_a_slides_control(app_url, page):
    page.set_viewport_size(SCREEN)
    query = urllib.parse.urlencode({"d_model": "64", "num_heads": "4", "teacher": "1", "step": "1", "lang": "en"})
    page.goto(f"{app_url}/?{query}")
    wait_for_app(page, timeout_ms=120_000)
    radio = page.locator(".st-key-head_picker input[type=radio]").nth(1)
    radio.wait_for(state="attached", timeout=60_000)
    page.locator(".st-key-head_picker label").nth(1).click()  # the head radio now has focus
    page.wait_for_url("**head=1**", timeout=60_000)  # the pick reached the server, which reran the page
    wait_for_app(page, timeout_ms=60_000)
    page.wait_for_timeout(1000)
    assert page.evaluate("() => document.activeElement.type") == "radio"
    page.keyboard.press("ArrowRight")
    _slide_shown(page, "2")
    stretch = page.locator(".st-key-color_scale button", has_text=t("color_scale.stretch", lang="en"))
    stretch.click()  # the colour scale's button now has focus
    page.wait_for_url("**color_scale=stretch**", timeout=60_000)
    wait_for_app(page, timeout_ms=60_000)
    page.wait_for_timeout(1000)
    assert page.evaluate("() => document.activeElement.dataset.variant") == "segmented_control"
    page.screenshot(path=str(SHOTS / "slide-2-after-click.png"))
    page.keyboard.press("ArrowRight")
    _slide_shown(page, "3")
    page.keyboard.press("ArrowLeft")
    _slide_shown(page, "2")
    assert console_errors(page) == []


#: How much of a lab's first chart at least shows on the first screen (px above the window's bottom edge).
LAB_CHART_SHOWN_PX = 60


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("lab", ["flash", "efficient"])
def test_labs_13_and_14_begin_their_first_chart_on_the_first_screen(app_url, page, lab, lang):
    """Labs 13 and 14 at 1280 × 720: the first chart (the tiles' scores; softmax beside linear attention) begins on
    the first screen, with its top rows in view, under the lab's controls."""
    boxes = _first_screen(page, f"{app_url}/{lab}?lang={lang}", f"lab-{lab}-{lang}", lang)
    chart = boxes["chart"]
    assert chart is not None and 0 <= chart["top"] <= SCREEN["height"] - LAB_CHART_SHOWN_PX, boxes
