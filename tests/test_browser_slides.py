"""Every slide of every kind of page at a projector's 1280 × 720, in Chromium, in both languages: the slide's heading
and its first chart start on the first screen (a presenter never scrolls to find what the slide is about).

The pages: random weights, trained weights on a sequence task and on the digits (real trainings on the server, of
small models: seconds), and a checkpoint's layer of each family a workshop shows -- a BERT, a GPT-2 and a ViT (the
tests' tiny checkpoints, listed on one server; no network). Each page is walked from its first slide to its last
with Next, as a presenter walks it, and every slide's screenshot is saved to ``test-artifacts/slides/``
(``<page>-<lang>-<nn>-<step>.png``).

What counts as the slide's heading: the first ``h3`` of the main area (each panel's heading is one). What counts as
its first chart: the first thing in the main area that shows values rather than words -- a canvas heatmap
(``.attn-heatmap``), a Vega-Lite chart, an image, a data frame or a Markdown table (the summary's tables, a
checkpoint's sizes) -- with a height. Its top must leave :data:`MIN_CHART_SHOWN_PX` of it on the screen.
"""

from __future__ import annotations

import urllib.parse

import pytest
from conftest import ARTIFACTS, console_errors, wait_for_app
from local_app import serving

from components.i18n import LANGUAGES, t
from components.page_sections import slide_names

pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1280, "height": 720}
MIN_CHART_SHOWN_PX = 60  # of the first chart, at least this much on the first screen
SHOTS = ARTIFACTS / "slides"
CHART = (
    '.attn-heatmap, [data-testid="stVegaLiteChart"], [data-testid="stImage"] img, [data-testid="stDataFrame"], '
    '[data-testid="stMarkdownContainer"] table'
)
#: The slide's heading and first chart (their tops, in px from the top of the window), the scroll, the label.
_MEASURE = """(chart) => {
    const main = document.querySelector('[data-testid="stMain"]');
    const heading = main.querySelector('h3');
    const charts = [...main.querySelectorAll(chart)].filter((c) => c.getBoundingClientRect().height > 0);
    if (!heading || !charts.length) return null;
    const first = charts.sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)[0];
    return {
        heading: heading.getBoundingClientRect().top,
        headingText: heading.textContent.trim(),
        chart: first.getBoundingClientRect().top,
        chartKind: first.getAttribute('data-testid') || first.className || first.tagName,
        scroll: main.scrollTop,
    };
}"""
TEXT = "the cat sat on the mat"
ANIMAL = "The animal didn't cross the street because it was too tired"
#: Each kind of page: its link (the slides follow from its weights and whether it reads an image).
PAGES = {
    "random": ({"d_model": "64", "num_heads": "4", "tokens": ANIMAL}, slide_names()),
    "trained": (
        {"weights": "trained", "task": "previous_and_first", "d_model": "16", "num_heads": "2", "seed": "0"},
        slide_names("trained"),
    ),
    "digits": (
        {"weights": "trained", "task": "digits", "d_model": "32", "num_heads": "2", "patch": "4", "image": "digit-3"},
        slide_names("trained", image=True),
    ),
    "bert": ({"weights": "pretrained", "checkpoint": "bert", "tokens": TEXT}, slide_names("pretrained")),
    "gpt2": ({"weights": "pretrained", "checkpoint": "gpt2", "tokens": TEXT}, slide_names("pretrained")),
    "vit": ({"weights": "pretrained", "checkpoint": "vit", "image": "digit-3"}, slide_names("pretrained")),
}  # fmt: skip


#: Each slide's own heading (its panel's title), as the locale words it.
HEADINGS = {"1": "step1.title", "2": "step2.title", "3": "step3.title", "4": "step4.title", "5": "summary.title",
            "patches": "patches.title", "heads": "finder.title", "timeline": "training.timeline"}  # fmt: skip
TASKS = {"trained": "previous_and_first", "digits": "digits"}


def slide_heading(kind: str, step: str, lang: str) -> str:
    """The heading the slide ``step`` of the page ``kind`` must start with: its own, not another slide's."""
    if step != "model":
        return t(HEADINGS[step], lang=lang)
    if kind in TASKS:
        return t("training.title", lang=lang, task=t(f"task.{TASKS[kind]}", lang=lang))
    return t("teacher.model.title", lang=lang, checkpoint=kind)


@pytest.fixture(scope="module")
def slides_url(tiny_checkpoint, tiny_gpt2, tiny_vit):
    listed = f"bert={tiny_checkpoint},gpt2={tiny_gpt2},vit={tiny_vit}"
    with serving(extra_env={"ATTN_PLAYGROUND_CHECKPOINTS": listed}) as url:
        yield url


def measure(page) -> dict:
    """The slide once its heading and first chart are drawn (and have settled into their size)."""
    page.wait_for_function(_MEASURE, arg=CHART, timeout=180_000)
    page.wait_for_timeout(700)
    return page.evaluate(_MEASURE, CHART)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("kind", list(PAGES))
def test_every_slide_starts_with_its_heading_and_chart_on_the_first_screen(slides_url, page, kind, lang):
    link, slides = PAGES[kind]
    page.set_viewport_size(PROJECTOR)
    query = urllib.parse.urlencode({**link, "lang": lang, "teacher": "1", "step": slides[0]})
    page.goto(f"{slides_url}/?{query}")
    wait_for_app(page, timeout_ms=180_000)
    SHOTS.mkdir(parents=True, exist_ok=True)
    seen = {}
    for number, step in enumerate(slides):
        if number:  # Next, as the presenter presses it
            page.locator(".st-key-teacher_next_top button").click()
            page.wait_for_url(f"**step={step}**", timeout=60_000)
            wait_for_app(page, timeout_ms=180_000)
        box = measure(page)
        seen[step] = box
        page.screenshot(path=str(SHOTS / f"{kind}-{lang}-{number:02d}-{step}.png"))
        assert box["scroll"] == 0, (step, box)
        assert box["headingText"] == slide_heading(kind, step, lang), (step, box)  # nothing of another slide above
        assert box["heading"] < PROJECTOR["height"], (step, box)
        assert box["chart"] >= box["heading"], (step, box)  # the first chart is the slide's, under its heading
        assert box["chart"] + MIN_CHART_SHOWN_PX <= PROJECTOR["height"], (step, box)
    assert list(seen) == list(slides)
    assert page.locator(".st-key-teacher_next_top button").is_disabled()  # the last slide: nothing after it
    (ARTIFACTS / "slides" / f"{kind}-{lang}.txt").write_text(
        "\n".join(f"{step}: heading {b['heading']:.0f} px, chart {b['chart']:.0f} px ({b['chartKind']}) "
                  f"{b['headingText']}" for step, b in seen.items()) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    assert console_errors(page) == []
