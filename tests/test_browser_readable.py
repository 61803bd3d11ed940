"""Charts a learner can read on a laptop (1280 × 720) in a real Chromium, measured on the page.

The summary's K/V tables stay in their column (the default page, GQA + RoPE, Chinese, a Llama page); heatmap
titles wrap whole (never cut with "…") and clear of the PNG button; labs 13 and 14 keep their charts inside the
content, legends whole. A Vega chart is "whole" when its ink (any pixel not white) stops
short of its canvas' edges: a chart squeezed into its width and height (Streamlit's default autosize) or cut by its
column draws up to the edge. Screenshots of each chart go to ``test-artifacts/readable-*.png``.
"""

from __future__ import annotations

import urllib.parse

import pytest
from conftest import ARTIFACTS, wait_for_app
from local_app import serving

from components.i18n import t

pytestmark = pytest.mark.browser
LAPTOP = {"width": 1280, "height": 720}
PROMPT = "the cat sat on the mat"
# Per Vega-Lite chart: its canvas (or SVG) box, the content box of the column (or main block) it sits in, and how
# many CSS px lie between the chart's ink (a canvas' pixels not white; an SVG's marks and texts) and its right and
# bottom edges.
VEGA = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].map(chart => {
    const canvas = chart.querySelector('canvas');
    const drawing = canvas || chart.querySelector('svg');
    const box = drawing.getBoundingClientRect();
    const holder = chart.parentElement.closest('[data-testid="stColumn"], [data-testid="stMainBlockContainer"]');
    const style = getComputedStyle(holder);
    const room = holder.getBoundingClientRect();
    let inkRight = box.width, inkBottom = box.height;
    if (canvas) {
        const ratio = canvas.width / box.width;
        const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        let right = -1, bottom = -1;
        for (let y = 0; y < canvas.height; y++) {
            for (let x = 0; x < canvas.width; x++) {
                const i = 4 * (y * canvas.width + x);
                if (data[i + 3] > 0 && Math.min(data[i], data[i + 1], data[i + 2]) < 235) {
                    right = Math.max(right, x);
                    bottom = Math.max(bottom, y);
                }
            }
        }
        [inkRight, inkBottom] = [(canvas.width - 1 - right) / ratio, (canvas.height - 1 - bottom) / ratio];
    } else {
        for (const mark of drawing.querySelectorAll('text, path:not(.background), line, rect')) {
            const r = mark.getBoundingClientRect();
            if (r.width === 0 && r.height === 0) continue;
            inkRight = Math.min(inkRight, box.right - r.right);
            inkBottom = Math.min(inkBottom, box.bottom - r.bottom);
        }
    }
    return {
        canvas: Boolean(canvas), left: box.left, right: box.right, top: box.top, width: box.width, height: box.height,
        roomLeft: room.left + parseFloat(style.paddingLeft), roomRight: room.right - parseFloat(style.paddingRight),
        inkRight, inkBottom,
    };
})"""
# Per canvas heatmap: its panels' titles as laid out and drawn, the canvas box, and the PNG button's box (hovered).
TITLES = """() => [...document.querySelectorAll('.attn-heatmap')].map(root => {
    const L = root.attnLayout;
    const canvas = root.querySelector('canvas').getBoundingClientRect();
    const button = root.querySelector('.attn-heatmap-png').getBoundingClientRect();
    return {
        titles: L.titles.map((title, p) => ({...title, x: canvas.left + L.panels[p].x, y: canvas.top + L.panels[p].top,
                                            height: L.titleBand})),
        button: {left: button.left, right: button.right, top: button.top, bottom: button.bottom},
        right: canvas.right,
    };
})"""
# The summary's K/V tables and the column beside them: boxes.
KV_TABLES = """(title) => {
    const block = [...document.querySelectorAll('[data-testid="stMarkdownContainer"]')]
        .find(md => md.textContent.includes(title));
    const column = block.closest('[data-testid="stColumn"]');
    const other = column.nextElementSibling;
    const box = element => { const r = element.getBoundingClientRect(); return {left: r.left, right: r.right}; };
    const style = getComputedStyle(column);
    return {
        tables: [...block.querySelectorAll('table')].map(box),
        right: column.getBoundingClientRect().right - parseFloat(style.paddingRight),
        next: box(other.querySelector('[data-testid="stMarkdownContainer"]')),
    };
}"""


@pytest.fixture
def laptop(browser):
    """A fresh page at 1280 × 720 (``laptop(locale, width)`` for another language or width)."""
    contexts = []

    def open_page(locale: str = "en-US", width: int = LAPTOP["width"]):
        context = browser.new_context(viewport={"width": width, "height": LAPTOP["height"]}, locale=locale)
        contexts.append(context)
        return context.new_page()

    yield open_page
    for context in contexts:
        context.close()


def _shot(page, index: int, name: str) -> None:
    chart = page.locator('[data-testid="stVegaLiteChart"]').nth(index)
    chart.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    chart.screenshot(path=str(ARTIFACTS / f"readable-{name}.png"))


def _assert_whole(chart: dict, what: str) -> None:
    """The chart inside its column's content and its ink short of its canvas' edges (nothing squeezed or cut)."""
    assert chart["left"] >= chart["roomLeft"] - 1 and chart["right"] <= chart["roomRight"] + 1, (what, chart)
    edge = 1 if chart["canvas"] else -0.5  # a canvas' last pixel inked: cut there; an SVG's marks inside its box
    assert chart["inkRight"] >= edge and chart["inkBottom"] >= edge, (what, chart)


def _assert_kv_tables_fit(page, lang: str) -> None:
    kv = page.evaluate(KV_TABLES, t("summary.kv_title", lang=lang))
    assert kv["tables"], kv
    for table in kv["tables"]:  # inside their column, clear of "Does the head count matter?" beside them
        assert table["right"] <= kv["right"] + 1 and table["right"] <= kv["next"]["left"], kv


def _assert_titles_whole(page) -> None:
    for chart in page.evaluate(TITLES):
        for title in chart["titles"]:
            drawn = "".join("".join(title["lines"]).split())  # the lines without spaces (a line break takes one)
            assert drawn == "".join(title["text"].split()), title  # every character drawn, none cut
            assert all(width <= title["max"] + 0.5 for width in title["widths"]), title
            right = title["x"] + max(title["widths"], default=0)
            beside = right <= chart["button"]["left"] or title["x"] >= chart["button"]["right"]
            apart = chart["button"]["bottom"] <= title["y"] or chart["button"]["top"] >= title["y"] + title["height"]
            assert beside or apart, (title, chart["button"])  # the PNG button covers no title


def test_a_llama_pages_kv_tables_fit_a_laptop(laptop, tiny_llama):
    page = laptop()
    query = {"weights": "pretrained", "checkpoint": "llama", "tokens": PROMPT}
    with serving(extra_env={"ATTN_PLAYGROUND_CHECKPOINTS": f"llama={tiny_llama}"}) as url:
        page.goto(f"{url}/?{urllib.parse.urlencode(query)}")
        wait_for_app(page, timeout_ms=180_000)
        page.get_by_text(t("summary.kv_title")).wait_for(timeout=120_000)
        _assert_kv_tables_fit(page, "en")


@pytest.mark.parametrize(
    ("query", "lang"),
    [({"num_kv_heads": "2", "positional": "rope"}, "en"), ({}, "zh")],
    ids=["gqa-rope-en", "default-zh"],
)
def test_heatmap_titles_and_the_kv_tables_fit_a_laptop(app_url, laptop, query, lang):
    page = laptop("zh-CN" if lang == "zh" else "en-US")
    page.goto(f"{app_url}/?{urllib.parse.urlencode({**query, 'lang': lang})}")
    wait_for_app(page, timeout_ms=120_000)
    page.wait_for_function("document.querySelectorAll('.attn-heatmap').length >= 3", timeout=120_000)
    page.wait_for_function(
        "[...document.querySelectorAll('.attn-heatmap')].every(root => root.attnLayout)", timeout=60_000
    )
    ARTIFACTS.mkdir(exist_ok=True)
    for index in range(page.locator(".attn-heatmap").count()):
        chart = page.locator(".attn-heatmap").nth(index)
        chart.scroll_into_view_if_needed()
        chart.hover(position={"x": 5, "y": 5})  # the PNG button shows
        chart.screenshot(path=str(ARTIFACTS / f"readable-titles-{lang}-{index}.png"))
        _assert_titles_whole(page)
    _assert_kv_tables_fit(page, lang)
    summary = page.get_by_text(t("summary.kv_title", lang=lang))
    summary.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / f"readable-kv-{lang}.png"))


def _slide_to(page, index: int, value: int) -> None:
    """Focus the slider's range input and step it with the arrow keys until it reads ``value``."""
    thumb = page.locator('[data-testid="stSlider"]').nth(index).locator('input[type="range"]')
    for _ in range(64):
        now = int(thumb.input_value())
        if now == value:
            break
        thumb.press("ArrowRight" if value > now else "ArrowLeft")  # focuses the thumb first, each time
    assert int(thumb.input_value()) == value
    page.keyboard.press("Tab")  # the slider lets go: its value goes to the script
    wait_for_app(page, timeout_ms=120_000)


@pytest.mark.parametrize(("lab", "lang"), [("flash", "en"), ("efficient", "zh")])
def test_lab_charts_fit_the_content_with_their_legends(app_url, laptop, lab, lang):
    page = laptop("zh-CN" if lang == "zh" else "en-US")
    page.goto(f"{app_url}/{lab}?lang={lang}")
    wait_for_app(page, timeout_ms=120_000)
    if lab == "flash":  # a tall O chart beside the score chart: B_r 16, B_c 7
        _slide_to(page, 0, 16)
        _slide_to(page, 1, 7)
    page.wait_for_function(f"({VEGA})().length > 0 && ({VEGA})().every(chart => chart.width > 0)", timeout=120_000)
    page.wait_for_timeout(1000)
    charts = page.evaluate(VEGA)
    for index, chart in enumerate(charts):
        _shot(page, index, f"{lab}-{index}")
        _assert_whole(chart, f"{lab} chart {index}")
