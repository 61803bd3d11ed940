"""The generation step chart (one decoding step's weights, a row per head over the cached keys) on a laptop's
1280 × 720, in Chromium, on a GPT-2 and a Llama page (the tests' tiny checkpoints, 4 query heads each), in English and
in Chinese: read from the page's SVG, each head has a row a label fits in, the head labels stand apart, each beside its
own row, and the colour legend lies whole inside the chart, which lies inside the content. Screenshots go to
``test-artifacts/step-chart-<model>-<lang>.png``."""

from __future__ import annotations

import itertools
import urllib.parse

import pytest
from conftest import ARTIFACTS, console_errors, wait_for_app
from local_app import serving

from components.i18n import t

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1280, "height": 720}
HEADS = 4  # the tiny GPT-2's and the tiny Llama's query heads (conftest)
ROW_MIN_PX = 16  # a head's row holds its label (11 px type) with room to spare
PROMPT = "the cat sat on the mat"
#: The step chart (the Vega-Lite chart whose axes are titled ``head`` and ``key``): its cells' rows, its head axis'
#: labels, its legend, its SVG box and the content box of the column it sits in.
STEP_CHART = """([head, key]) => {
    const box = (node) => { const r = node.getBoundingClientRect();
                            return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
    for (const chart of document.querySelectorAll('[data-testid="stVegaLiteChart"]')) {
        const svg = chart.querySelector('svg');
        if (!svg) continue;
        const axes = [...svg.querySelectorAll('g.role-axis')];
        const titled = (word) => axes.find((axis) => {
            const title = axis.querySelector('g.role-axis-title text');
            return title && title.textContent === word;
        });
        const [heads, keys] = [titled(head), titled(key)];
        if (!heads || !keys) continue;
        const cells = [...svg.querySelectorAll('g.mark-rect.layer_0_marks path')].map(box);
        const rows = {};
        for (const cell of cells) rows[Math.round(cell.top)] = cell;
        const holder = chart.closest('[data-testid="stColumn"], [data-testid="stMainBlockContainer"]');
        const style = getComputedStyle(holder);
        const room = holder.getBoundingClientRect();
        const legend = svg.querySelector('g.role-legend');
        return {
            rows: Object.values(rows).map((c) => ({top: c.top, bottom: c.bottom})).sort((a, b) => a.top - b.top),
            labels: [...heads.querySelectorAll('g.role-axis-label text')]
                .map((label) => ({text: label.textContent, ...box(label)})),
            legend: legend ? box(legend) : null,
            legendTexts: legend ? [...legend.querySelectorAll('text')].map((text) => text.textContent) : [],
            svg: box(svg),
            roomLeft: room.left + parseFloat(style.paddingLeft), roomRight: room.right - parseFloat(style.paddingRight),
        };
    }
    return null;
}"""


@pytest.fixture(scope="module")
def causal_url(tiny_gpt2, tiny_llama):
    with serving(extra_env={"ATTN_PLAYGROUND_CHECKPOINTS": f"gpt2={tiny_gpt2},llama={tiny_llama}"}) as url:
        yield url


def within(inner: dict, outer: dict, slack: float = 0.5) -> bool:
    return (
        inner["left"] >= outer["left"] - slack
        and inner["right"] <= outer["right"] + slack
        and inner["top"] >= outer["top"] - slack
        and inner["bottom"] <= outer["bottom"] + slack
    )


@pytest.mark.parametrize("model", ["gpt2", "llama"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_each_head_of_the_step_chart_has_a_readable_row_and_the_legend_its_room(causal_url, browser, model, lang):
    context = browser.new_context(viewport=LAPTOP, locale="zh-CN" if lang == "zh" else "en-US")
    page = context.new_page()
    page.collected_console = []
    page.on("console", lambda message: page.collected_console.append(message))
    page.on("pageerror", lambda error: page.collected_console.append(error))
    query = {"weights": "pretrained", "checkpoint": model, "tokens": PROMPT, "generate": "3", "lang": lang}
    page.goto(f"{causal_url}/?{urllib.parse.urlencode(query)}")
    wait_for_app(page, timeout_ms=180_000)
    words = [t("gen.chart.head", lang=lang), t("gen.chart.key", lang=lang)]
    page.wait_for_function(f"(words) => ({STEP_CHART})(words)?.rows.length > 0", arg=words, timeout=180_000)
    page.wait_for_timeout(800)  # the chart settles into its size
    chart = page.evaluate(STEP_CHART, words)
    page.locator('[data-testid="stVegaLiteChart"]').filter(has_text=words[1]).last.scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"step-chart-{model}-{lang}.png"))

    rows, labels = chart["rows"], chart["labels"]
    assert len(rows) == HEADS, chart  # a row of cells per head
    assert all(row["bottom"] - row["top"] >= ROW_MIN_PX for row in rows), rows
    assert sorted(label["text"] for label in labels) == [str(h) for h in range(HEADS)], labels
    ordered = sorted(labels, key=lambda label: label["top"])
    assert all(a["bottom"] <= b["top"] for a, b in itertools.pairwise(ordered)), ordered  # apart
    for row, label in zip(rows, ordered, strict=True):  # each label beside its own row
        middle = (label["top"] + label["bottom"]) / 2
        assert row["top"] <= middle <= row["bottom"], (row, label)
    assert chart["legend"] is not None and within(chart["legend"], chart["svg"]), chart  # the legend whole
    assert t("gen.chart.weight", lang=lang) in chart["legendTexts"], chart
    assert chart["svg"]["left"] >= chart["roomLeft"] - 1 and chart["svg"]["right"] <= chart["roomRight"] + 1, chart
    assert console_errors(page) == []
    context.close()
