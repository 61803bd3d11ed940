"""Each slide's main chart whole on a projector's 1280 × 720, in Chromium: its box (read from the page) lies within
the window's height and the content's width, under the slide's heading; on a step's slide no note between the two.
On every slide, read from the page too: no text drawn over other text (the boxes of the main area's text, an SVG
chart's labels included), every canvas heatmap's legends inside its canvas, every SVG Vega-Lite chart inside its column
with its marks (legend included) inside its box.

The pages: random weights, trained weights on a sequence task, on the digits and on the reviews (small models trained
on the server: seconds), and a checkpoint (the tests' tiny BERT and ViT; no network). Each slide is opened by its own
link, as a host opens the deck at a slide, and its screenshot is saved to ``test-artifacts/slide-fit/``
(``<page>-<lang>-<step>.png``) with the boxes measured beside them (``<page>.txt``).

The main chart of a slide: the first thing under its heading that shows values (a canvas heatmap, a Vega-Lite chart,
an image, a table: the summary's) with a height. A note above it is an alert, a caption or a paragraph in the main
area between the heading and the chart (the head picker and the colour scale's buttons are controls, not notes).
"""

from __future__ import annotations

import time
import urllib.parse

import pytest
from conftest import ARTIFACTS, console_errors, wait_for_app
from local_app import serving
from test_browser_readable import VEGA, _assert_whole

from components.i18n import LANGUAGES
from components.page_sections import slide_names

pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1280, "height": 720}
SHOTS = ARTIFACTS / "slide-fit"
#: Slides whose main chart must be whole: the steps and the slides of what a model brings besides them.
WHOLE = ("1", "2", "3", "4", "patches", "heads", "timeline")
CHART = (
    '.attn-heatmap canvas, [data-testid="stVegaLiteChart"], [data-testid="stImage"] img, [data-testid="stDataFrame"], '
    '[data-testid="stMarkdownContainer"] table'
)
NOTE = '[data-testid="stAlert"], [data-testid="stCaptionContainer"], [data-testid="stMarkdownContainer"] p'
#: The heading, the main chart (its box), the content's edges and the notes between heading and chart.
_MEASURE = """([chart, note]) => {
    const main = document.querySelector('[data-testid="stMain"]');
    const content = main.querySelector('[data-testid="stMainBlockContainer"]');
    const heading = main.querySelector('h3');
    if (!heading) return null;
    const under = heading.getBoundingClientRect().bottom;
    const charts = [...main.querySelectorAll(chart)]
        .map((c) => [c, c.getBoundingClientRect()])
        .filter(([, box]) => box.height > 0 && box.top >= under - 1)
        .sort((a, b) => a[1].top - b[1].top);
    if (!charts.length) return null;
    const [element, box] = charts[0];
    const drawn = element.closest('.attn-heatmap');  // a canvas heatmap keeps its layout: its matrices' rows
    const rows = drawn && drawn.attnLayout ? drawn.attnLayout.panels.map((panel) => panel.R) : null;
    const style = getComputedStyle(content);
    const inner = content.getBoundingClientRect();
    const notes = [...main.querySelectorAll(note)]
        .filter((n) => !n.closest('[data-testid="stWidgetLabel"], [data-testid="stExpander"], label'))
        .filter((n) => n.getBoundingClientRect().height > 0)
        .filter((n) => n.getBoundingClientRect().top >= under - 1 && n.getBoundingClientRect().bottom <= box.top + 1)
        .filter((n) => !heading.contains(n))
        .map((n) => n.textContent.trim().slice(0, 80));
    return {
        heading: heading.getBoundingClientRect().top, under,
        top: box.top, bottom: box.bottom, left: box.left, right: box.right, height: box.height,
        contentLeft: inner.left + parseFloat(style.paddingLeft),
        contentRight: inner.right - parseFloat(style.paddingRight),
        notes, scroll: main.scrollTop, rows,
    };
}"""
#: The text of the main area laid out over other text: pairs of text boxes (one per line of a text node; an SVG chart's
#: labels too) that cover each other by more than 2 px both ways. Hidden text, a folded expander's content and the
#: tooltips are left out.
OVERLAPS = """() => {
    const main = document.querySelector('[data-testid="stMain"]');
    const boxes = [];
    const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.textContent.trim();
        const element = node.parentElement;
        if (!text || element.closest('[role="tooltip"], .attn-heatmap-tip')) continue;
        // a folded expander keeps its content laid out where it would unfold, unseen: only its summary shows
        if (element.closest('details:not([open])') && !element.closest('summary')) continue;
        const style = getComputedStyle(element);
        if (style.visibility !== 'visible' || Number(style.opacity) === 0) continue;
        const range = document.createRange();
        range.selectNodeContents(node);
        for (const r of range.getClientRects()) {
            if (r.width >= 1 && r.height >= 1) boxes.push({node, text: text.slice(0, 40), r});
        }
    }
    const over = [];
    for (let i = 0; i < boxes.length; i++) {
        for (let j = i + 1; j < boxes.length; j++) {
            const [a, b] = [boxes[i], boxes[j]];
            if (a.node === b.node) continue;
            const wide = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
            const high = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
            if (wide > 2 && high > 2) over.push([a.text, b.text]);
        }
    }
    return over.slice(0, 10);
}"""
#: Per canvas heatmap's legend (heatmap.js: its title, the colour bar of LEGEND_BAR = 140 px and its end ticks, or
#: the masked / faded swatch and words; a line of legends is LEGEND_LINE = 32 px high, times the type's scale k):
#: how far its right and bottom lie inside the canvas (negative: cut).
LEGENDS = """() => [...document.querySelectorAll('[data-testid="stMain"] .attn-heatmap')].flatMap((root) => {
    const L = root.attnLayout;
    if (!L) return [];
    const width = root.querySelector('canvas').getBoundingClientRect().width;
    return L.legends.map((item) => {
        const wide = item.kind === 'scale' ? item.titleWidth + (8 + 140 + 16) * L.k : 20 * L.k + item.titleWidth;
        return {kind: item.kind, right: width - (item.x + wide), bottom: L.height - (item.y + 32 * L.k)};
    });
})"""
REVIEW = "质量很好，物流也快，包装完好，下次还会再来买。"
#: Each kind of page: its link and its slides.
PAGES = {
    "random": ({"d_model": "64", "num_heads": "4"}, slide_names()),
    "trained": (
        {"weights": "trained", "task": "previous_and_first", "d_model": "16", "num_heads": "2", "seed": "0"},
        slide_names("trained"),
    ),
    "digits": (
        {"weights": "trained", "task": "digits", "d_model": "32", "num_heads": "2", "patch": "4", "image": "digit-3"},
        slide_names("trained", image=True),
    ),
    "reviews": (
        {"weights": "trained", "task": "reviews", "d_model": "32", "num_heads": "2", "seed": "0", "tokens": REVIEW},
        slide_names("trained"),
    ),
    "bert": ({"weights": "pretrained", "checkpoint": "bert", "tokens": "the cat sat on the mat"},
             slide_names("pretrained")),
    "vit": ({"weights": "pretrained", "checkpoint": "vit", "image": "digit-3"}, slide_names("pretrained")),
}  # fmt: skip
#: A trained link without every size gets a note (it belongs under the chart or on the model slide): here num_heads
#: is left out (2 is taken: the trained page's sizes, quick to train).
SIZELESS = {"weights": "trained", "task": "previous_and_first", "d_model": "16", "seed": "0"}


@pytest.fixture(scope="module")
def slides_url(tiny_checkpoint, tiny_vit):
    with serving(extra_env={"ATTN_PLAYGROUND_CHECKPOINTS": f"bert={tiny_checkpoint},vit={tiny_vit}"}) as url:
        yield url


def open_slide(page, url: str, link: dict, lang: str, step: str) -> tuple[dict, float]:
    """Open the slide ``step`` by its link; its boxes once drawn and settled, and the seconds until then."""
    page.set_viewport_size(PROJECTOR)
    query = urllib.parse.urlencode({**link, "lang": lang, "teacher": "1", "step": step})
    started = time.monotonic()
    page.goto(f"{url}/?{query}")
    wait_for_app(page, timeout_ms=180_000)
    page.wait_for_function(_MEASURE, arg=[CHART, NOTE], timeout=180_000)
    seconds = time.monotonic() - started
    page.wait_for_timeout(800)
    return page.evaluate(_MEASURE, [CHART, NOTE]), seconds


def check_whole(step: str, box: dict) -> None:
    """The main chart whole on the screen and in the content's width, nothing to scroll; on a step's slide no note
    between its heading and its chart (the other slides may say first what their chart shows)."""
    assert box["scroll"] == 0, (step, box)
    assert box["top"] >= box["under"] - 1, (step, box)
    assert box["bottom"] <= PROJECTOR["height"], (step, box)
    assert box["left"] >= box["contentLeft"] - 1 and box["right"] <= box["contentRight"] + 1, (step, box)
    if step.isdigit():
        assert box["notes"] == [], (step, box)


@pytest.mark.timeout(1500)  # a guard against a hang: 10-16 slide links (and a training) on a busy machine take minutes
@pytest.mark.parametrize("kind", list(PAGES))
def test_every_slides_main_chart_is_whole_on_a_projector(slides_url, page, kind):
    link, slides = PAGES[kind]
    SHOTS.mkdir(parents=True, exist_ok=True)
    lines, boxes = [], []
    for lang in LANGUAGES:
        for step in slides:
            box, seconds = open_slide(page, slides_url, link, lang, step)
            page.screenshot(path=str(SHOTS / f"{kind}-{lang}-{step}.png"))
            box |= {"overlaps": page.evaluate(OVERLAPS), "legends": page.evaluate(LEGENDS), "vega": page.evaluate(VEGA)}
            lines.append(
                f"{lang} {step}: chart {box['top']:.0f}-{box['bottom']:.0f} px ({box['height']:.0f} tall), "
                f"x {box['left']:.0f}-{box['right']:.0f} of {box['contentLeft']:.0f}-{box['contentRight']:.0f}, "
                f"heading {box['heading']:.0f}, notes above {len(box['notes'])}, drawn in {seconds:.1f} s; "
                f"text over text {box['overlaps']}, legends {len(box['legends'])}, Vega charts {len(box['vega'])}"
            )
            boxes.append((f"{lang} {step}", box))
    (SHOTS / f"{kind}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")  # every slide's, then the checks
    for shown, box in boxes:
        step = shown.split()[1]
        if step in WHOLE:
            check_whole(step, box)
        else:  # the model's and the summary's slides: their first chart starts on the screen
            assert box["top"] + 60 <= PROJECTOR["height"], (shown, box)
        assert box["overlaps"] == [], (shown, box["overlaps"])  # no text over text
        for legend in box["legends"]:  # a heatmap's legends whole in its canvas
            assert legend["right"] >= -0.5 and legend["bottom"] >= -0.5, (shown, legend)
        for index, chart in enumerate(box["vega"]):  # an SVG chart in its column, its marks and legend inside it
            if not chart["canvas"]:  # (a canvas' ink at its edge may be a plot's frame: the training's live curves)
                _assert_whole(chart, f"{shown}: Vega-Lite chart {index}")
    if kind == "reviews":  # the timeline: each head's [CLS] row (the one a review's answer reads), not L x L squares
        for lang in LANGUAGES:
            timeline = dict(boxes)[f"{lang} timeline"]
            assert timeline["rows"] == [1, 1], timeline
    assert console_errors(page) == []


@pytest.mark.timeout(900)  # a guard: a training and two slide links on a busy machine
def test_a_link_note_goes_under_the_first_steps_chart(slides_url, page):
    """A trained link without every size says which it took: under step 1's chart, not between heading and chart (the
    link opened again once its weights are trained: while they train, the note is all the slide shows)."""
    open_slide(page, slides_url, SIZELESS, "en", "1")
    box, _ = open_slide(page, slides_url, SIZELESS, "en", "1")
    page.screenshot(path=str(SHOTS / "sizeless-en-1.png"))
    check_whole("1", box)
    note = page.get_by_text("without giving every size")
    note.wait_for(timeout=30_000)
    assert note.bounding_box()["y"] >= box["bottom"]
