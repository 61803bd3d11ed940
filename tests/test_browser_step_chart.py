"""The generation step chart (one decoding step's weights, a row per head over the cached keys) on a laptop's
1280 × 720, in Chromium, on a GPT-2 and a Llama page (the tests' tiny checkpoints, 4 query heads each), in English and
in Chinese: read from the canvas' pixels, each head has a row its label fits in; the chart lies inside its column and
the colour legend on its right is whole (a legend cut at the canvas' edge leaves its colour bar's ink there).
Screenshots go to ``test-artifacts/step-chart-<model>-<lang>.png``."""

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
EDGE_INK_PX = 40  # the legend's title and a label may end at the canvas' edge (no padding): their glyphs' ink there
#: The step chart (the Vega-Lite chart under the caption that starts with ``caption``, drawn on a canvas): its index
#: among the page's Vega-Lite charts, and the rows of its cells, read from its pixels: at the prefill step every
#: cell is a key the step appended, outlined in red (#d62728), so the outlines' long horizontal edges are the rows'
#: borders (CSS px from the canvas' top); how many CSS px of its height have ink in its last two columns, and coloured
#: ink (a legend cut at the edge: its colour bar; a whole one: at most its title's and a label's grey glyphs), the
#: coloured ink in its last two rows (a legend cut at the bottom); its box and its column's.
STEP_CHART = """(caption) => {
    const charts = [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')];
    const said = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')]
        .find((node) => node.textContent.startsWith(caption));
    if (!said) return null;
    const index = charts.findIndex((chart) => said.compareDocumentPosition(chart) & Node.DOCUMENT_POSITION_FOLLOWING);
    const canvas = index >= 0 ? charts[index].querySelector('canvas') : null;
    if (!canvas || canvas.width === 0) return null;
    const ratio = canvas.width / canvas.getBoundingClientRect().width;
    const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    const red = (x, y) => { const i = 4 * (y * canvas.width + x);
                            return Math.abs(data[i] - 214) < 40 && data[i + 1] < 90 && data[i + 2] < 90; };
    const edges = [];
    for (let y = 0; y < canvas.height; y++) {
        let run = 0, longest = 0;
        for (let x = 0; x < canvas.width; x++) { run = red(x, y) ? run + 1 : 0; longest = Math.max(longest, run); }
        if (longest < 20 * ratio) continue;
        if (edges.length && y - edges[edges.length - 1].last <= 2) edges[edges.length - 1].last = y;
        else edges.push({first: y, last: y});
    }
    let edgeInk = 0, edgeColour = 0;  // rows with ink in the canvas' last two columns; with colour (not text's grey)
    for (let y = 0; y < canvas.height; y++) {
        let ink = false, colour = false;
        for (const x of [canvas.width - 1, canvas.width - 2]) {
            const i = 4 * (y * canvas.width + x);
            const [r, g, b] = [data[i], data[i + 1], data[i + 2]];
            ink ||= data[i + 3] > 0 && Math.min(r, g, b) < 235;
            colour ||= data[i + 3] > 0 && Math.max(r, g, b) - Math.min(r, g, b) > 40;
        }
        edgeInk += ink;
        edgeColour += colour;
    }
    let bottomColour = 0;  // columns with colour in its last two rows (the legend's colour bar cut at the bottom)
    for (let x = 0; x < canvas.width; x++) {
        for (const y of [canvas.height - 1, canvas.height - 2]) {
            const i = 4 * (y * canvas.width + x);
            const [r, g, b] = [data[i], data[i + 1], data[i + 2]];
            if (data[i + 3] > 0 && Math.max(r, g, b) - Math.min(r, g, b) > 40) { bottomColour++; break; }
        }
    }
    const box = canvas.getBoundingClientRect();
    const holder = charts[index].closest('[data-testid="stColumn"], [data-testid="stMainBlockContainer"]');
    const style = getComputedStyle(holder);
    const room = holder.getBoundingClientRect();
    return {
        index, edges: edges.map((edge) => (edge.first + edge.last) / 2 / ratio), edgeInk: edgeInk / ratio,
        edgeColour: edgeColour / ratio, bottomColour: bottomColour / ratio,
        left: box.left, right: box.right,
        roomLeft: room.left + parseFloat(style.paddingLeft), roomRight: room.right - parseFloat(style.paddingRight),
    };
}"""


@pytest.fixture(scope="module")
def causal_url(tiny_gpt2, tiny_llama):
    with serving(extra_env={"ATTN_PLAYGROUND_CHECKPOINTS": f"gpt2={tiny_gpt2},llama={tiny_llama}"}) as url:
        yield url


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
    caption = t("gen.chart", lang=lang, t="\0", n="\0").split("\0")[0]
    page.wait_for_function(f"(caption) => ({STEP_CHART})(caption) !== null", arg=caption, timeout=180_000)
    page.wait_for_timeout(800)  # the chart settles into its size
    chart = page.evaluate(STEP_CHART, caption)
    page.get_by_test_id("stVegaLiteChart").nth(chart["index"]).scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"step-chart-{model}-{lang}.png"))

    edges = chart["edges"]  # the rows' borders: one more than the rows
    assert len(edges) == HEADS + 1, chart  # a row of cells per head
    rows = [b - a for a, b in itertools.pairwise(edges)]
    assert all(row >= ROW_MIN_PX for row in rows), rows  # each head's row holds its label
    assert chart["edgeColour"] == 0 and chart["edgeInk"] <= EDGE_INK_PX, chart  # the legend whole, not cut at the edge
    assert chart["bottomColour"] == 0, chart  # nor at the bottom
    assert chart["left"] >= chart["roomLeft"] - 1 and chart["right"] <= chart["roomRight"] + 1, chart  # in its column
    assert console_errors(page) == []
    context.close()
