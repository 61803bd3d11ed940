"""The canvas heatmaps in a real Chromium: the pixels of a known pattern, the tooltip, every token label.

Expected values are computed here from the engine (``run_attention`` with the page's settings) and the
colour tables of ``components/heatmap.js``, never read off the page. A chart's layout (where each cell
is, which labels it drew at what size) is read from the root element's ``attnLayout``; its pixels from
its canvas. Screenshots of the Chinese page at 15 and 32 tokens go to ``test-artifacts/``.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest
from conftest import ARTIFACTS, console_errors, wait_for_app
from test_browser_controls import drawn_charts
from tolerances import printed_forms

from components import frames
from components.i18n import t
from mha.config import AttentionConfig
from mha.pipeline import run_attention

pytestmark = pytest.mark.browser

SIX = "a b c d e f"
GREY = (212, 212, 212)  # masked cells
BLUES_LOW, BLUES_HIGH = (207, 225, 242), (10, 70, 144)  # the first and last colour of the weights' scheme
EN_32 = (
    "when the quiet river finally reached the old stone bridge near our village every child ran "
    "down the hill to watch the tired ferry bring home twelve strangers from the far city"
)
ZH_15 = "小明喜欢打球，他放学后去了操场"
ZH_32 = "小明喜欢打球他放学后去了操场我们一起看书写字画画唱歌跳舞吃饭睡觉"

#: The steps' canvas charts in page order, by their element keys (the heads at a glance above them are not counted).
STEP_CHARTS = ("heatmap_step1", "heatmap_step2", "heatmap_grid", "heatmap_step3", "heatmap_step4")
_STEPS_JS = "[...document.querySelectorAll('.attn-heatmap')].filter((root) => !root.closest('.st-key-heatmap_glance'))"
LAYOUTS = f"() => {_STEPS_JS}.map(root => root.attnLayout)"
PIXEL = f"""([chart, x, y]) => {{
    const canvas = {_STEPS_JS}[chart].querySelector('canvas');
    const ratio = canvas.width / canvas.getBoundingClientRect().width;
    return Array.from(canvas.getContext('2d').getImageData(Math.round(x * ratio), Math.round(y * ratio), 1, 1).data);
}}"""


def open_charts(page, app_url: str, query: str) -> list[dict]:
    page.goto(f"{app_url}/?{query}")
    wait_for_app(page)
    drawn_charts(page)
    return page.evaluate(LAYOUTS)


def step_chart(page, chart: int):
    """The root of step chart ``chart`` (an index into :data:`STEP_CHARTS`)."""
    return page.locator(f".st-key-{STEP_CHARTS[chart]} .attn-heatmap")


def pixel(page, chart: int, x: float, y: float) -> tuple[int, ...]:
    return tuple(page.evaluate(PIXEL, [chart, x, y])[:3])


def cell_point(layout: dict, panel: int, row: int, col: int, across: float = 0.5) -> tuple[float, float]:
    """A point inside a cell (``across``: how far from its left edge), in the canvas's CSS pixels."""
    box = layout["panels"][panel]
    return box["x"] + (col + across) * box["cw"], box["y"] + (row + 0.5) * box["ch"]


def test_causal_mask_draws_a_staircase_of_grey_crossed_cells(app_url, page):
    layouts = open_charts(page, app_url, f"d_model=64&num_heads=4&mask_type=causal&tokens={quote(SIX)}&lang=en")
    step2 = layouts[1]
    assert [(box["R"], box["C"]) for box in step2["panels"]] == [(6, 6)] * 3
    for panel in (1, 2):  # scaled + masked scores, weights
        for q in range(6):
            for k in range(6):
                edge = pixel(page, 1, *cell_point(step2, panel, q, k, across=0.12))  # off the x and the number
                if k > q:
                    assert edge == GREY, (panel, q, k, edge)
                    centre = pixel(page, 1, *cell_point(step2, panel, q, k))
                    assert max(centre) < 150, (panel, q, k, centre)  # the x crosses the cell's centre
                else:
                    assert edge != GREY, (panel, q, k, edge)
    for q in range(6):  # raw scores come before the mask: nothing is grey
        for k in range(6):
            assert pixel(page, 1, *cell_point(step2, 0, q, k, across=0.12)) != GREY
    grid = layouts[2]
    assert len(grid["panels"]) == 4 and not grid["axes"]
    for head in range(4):
        assert pixel(page, 2, *cell_point(grid, head, 0, 5, across=0.12)) == GREY
        assert max(pixel(page, 2, *cell_point(grid, head, 0, 5))) < 150  # its x
        assert pixel(page, 2, *cell_point(grid, head, 5, 0, across=0.12)) != GREY
    assert console_errors(page) == []


def test_hovering_a_cell_shows_its_tokens_and_exact_value(app_url, page):
    query = f"d_model=64&num_heads=4&mask_type=causal&tokens={quote(SIX)}&lang=en&head=2"
    step2 = open_charts(page, app_url, query)[1]
    run = run_attention(AttentionConfig(d_model=64, num_heads=4, mask_type="causal", tokens=SIX))
    canvas = step_chart(page, 1).locator("canvas")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    tip = step_chart(page, 1).locator(".attn-heatmap-tip")
    x, y = cell_point(step2, 2, 3, 1)  # weights, query 3:d, key 1:b
    page.mouse.move(box["x"] + x, box["y"] + y)
    expected = printed_forms(run.trace.attend.weights[0, 2, 3, 1].item(), ".4f")  # the server's run, ours again
    lines = tip.inner_text().splitlines()
    assert lines[:-1] == [t("step2.weights", head=2), "query token: 3:d", "key token: 1:b"]
    assert lines[-1] in {f"weight: {weight}" for weight in expected}, lines
    x, y = cell_point(step2, 1, 2, 4)  # scaled scores, a masked cell
    page.mouse.move(box["x"] + x, box["y"] + y)
    assert tip.inner_text().splitlines()[-2:] == ["score: −∞", "masked: ×"]
    page.mouse.move(box["x"] + 2, box["y"] + 2)  # off the matrices: no tooltip
    assert not tip.is_visible()


def test_a_chart_sent_with_four_decimals_shows_the_digits_of_the_value_as_computed(app_url, page):
    """Steps 1, 3 and 4 go as int16 counts of 10⁻⁴ (components.heatmap.fixed_point): each tooltip must show
    what JavaScript's ``toFixed(4)`` shows for the engine's float32 value itself (the server's run; ours, computed
    again, may round to the neighbouring digit where the value is within its last float32 bits of halfway)."""
    layouts = open_charts(page, app_url, f"d_model=64&num_heads=4&tokens={quote(SIX)}&lang=en")
    trace = run_attention(AttentionConfig(d_model=64, num_heads=4, tokens=SIX)).trace
    cells = [  # chart, panel, tensor (R, C), cells
        (0, 0, trace.project.q_heads[0, 0], [(0, 0), (2, 5), (5, 15)]),
        (0, 2, trace.project.v_heads[0, 0], [(1, 3), (4, 9)]),
        (3, 0, trace.concat.concat[0], [(0, 7), (3, 40), (5, 63)]),
        (4, 0, trace.out.output[0], [(2, 2), (4, 33), (5, 60)]),
    ]
    view = f"{_STEPS_JS}[chart].parentElement.attnHeatmapView"
    fixed = f"(chart) => {view}.full.header.fixed"
    assert [page.evaluate(fixed, chart) for chart in (0, 3, 4)] == [[True] * 12, [True], [True]]  # 4 heads x Q, K, V
    for chart, panel, tensor, points in cells:
        canvas = step_chart(page, chart).locator("canvas")
        canvas.scroll_into_view_if_needed()
        box = canvas.bounding_box()
        for row, column in points:
            x, y = cell_point(layouts[chart], panel, row, column)
            page.mouse.move(box["x"] + x, box["y"] + y)
            shown = step_chart(page, chart).locator(".attn-heatmap-tip").inner_text().splitlines()[-1]
            expected = printed_forms(tensor[row, column].item(), lambda v: page.evaluate("(v) => v.toFixed(4)", v))
            assert shown.split(": ")[-1] in expected, (chart, panel, row, column, shown, expected)
    assert console_errors(page) == []


@pytest.mark.parametrize(
    ("lang", "text"), [("en", EN_32), ("zh", ZH_15), ("zh", ZH_32)], ids=["en-32", "zh-15", "zh-32"]
)
def test_every_token_label_is_drawn_readable_on_every_axis(app_url, page, lang, text):
    from mha.tokens import tokenize

    labels = frames.token_labels(tokenize(text))
    assert len(labels) in (15, 32)
    layouts = open_charts(page, app_url, f"lang={lang}&mask_type=causal&tokens={quote(text)}")
    with_axes = [layout for layout in layouts if layout["axes"]]
    assert len(with_axes) == 4  # steps 1, 2, 3, 4 (the grid names its cells in the tooltip)
    for layout in with_axes:
        assert layout["rowStep"] == 1 and layout["rowLabels"] == labels
        assert layout["rowFont"] >= 10 and layout["ch"] >= layout["rowFont"] + 2  # rows apart, text not tiny
    step2 = with_axes[1]
    assert step2["colStep"] == 1 and step2["colLabels"] == labels
    assert step2["colFont"] >= 10 and step2["cw"] >= step2["colFont"] + 2  # vertical labels side by side
    assert page.locator(".attn-heatmap-note:visible").count() == 0  # no "point at a cell" note needed
    if lang == "zh":
        ARTIFACTS.mkdir(exist_ok=True)
        page.set_viewport_size({"width": 1400, "height": 3000})  # the page scrolls inside: show it all
        drawn_charts(page)
        for chart, name in ((0, "step1"), (1, "step2")):
            step_chart(page, chart).screenshot(path=str(ARTIFACTS / f"heatmap-zh-{len(labels)}-{name}.png"))
    assert console_errors(page) == []


def test_beyond_what_fits_labels_thin_out_with_a_note(app_url, page):
    text = " ".join(f"w{i}" for i in range(100))
    layouts = open_charts(page, app_url, f"lang=en&d_model=64&num_heads=2&tokens={quote(text)}")
    assert max(layout["rowStep"] for layout in layouts if layout["axes"]) > 1
    note = page.locator(".attn-heatmap-note:visible").first
    assert note.inner_text() == t("chart.hover", lang="en")


def test_stretched_colour_scale_runs_from_the_lightest_to_the_darkest_blue(app_url, page):
    query = f"d_model=64&num_heads=4&tokens={quote(SIX)}&lang=en"
    step2 = open_charts(page, app_url, query)[1]
    weights = run_attention(AttentionConfig(d_model=64, num_heads=4, tokens=SIX)).trace.attend.weights[0, 0]
    low, high = divmod(int(weights.argmin()), 6), divmod(int(weights.argmax()), 6)
    assert weights.max() < 0.5  # random weights: pale on the fixed 0-1 scale
    fixed_high = pixel(page, 1, *cell_point(step2, 2, *high, across=0.12))
    assert fixed_high != BLUES_HIGH
    page.locator(".st-key-color_scale button", has_text=t("color_scale.stretch", lang="en")).click()
    page.wait_for_url("**color_scale=stretch**")
    page.wait_for_function(
        f"() => {{ const image = ({PIXEL})([1, ...{list(cell_point(step2, 2, *high, across=0.12))}]); "
        f"return image[0] === {BLUES_HIGH[0]} && image[2] === {BLUES_HIGH[2]}; }}"
    )
    assert pixel(page, 1, *cell_point(step2, 2, *high, across=0.12)) == BLUES_HIGH
    assert pixel(page, 1, *cell_point(step2, 2, *low, across=0.12)) == BLUES_LOW
    assert console_errors(page) == []


def test_rows_without_a_loss_are_drawn_faded_and_say_so(app_url, page):
    """A trained page (previous_and_first: position 0 has no target): row 0 of step 2's weights is drawn over
    white at a quarter strength, so each of its channels is at least 255 - 255 / 4; a row with a loss has a
    weight of at least 1 / L = 0.2 somewhere, darker than that on the 0-1 blues."""
    from test_browser_controls import settle, text_appears

    page.goto(f"{app_url}/?weights=trained&task=previous_and_first&d_model=16&num_heads=2&tokens=3 1 4 1 5&lang=en")
    settle(page, text_appears("Training timeline"), timeout_ms=180_000)
    step2 = page.evaluate(LAYOUTS)[1]
    faded_floor = 255 - 255 / 4
    row_0 = [pixel(page, 1, *cell_point(step2, 2, 0, k, across=0.12)) for k in range(5)]
    assert all(min(colour) >= faded_floor for colour in row_0), row_0
    for q in range(1, 5):
        darkest = min(min(pixel(page, 1, *cell_point(step2, 2, q, k, across=0.12))) for k in range(5))
        assert darkest < faded_floor, (q, darkest)
    canvas = step_chart(page, 1).locator("canvas")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    page.mouse.move(box["x"] + cell_point(step2, 2, 0, 1)[0], box["y"] + cell_point(step2, 2, 0, 1)[1])
    tip = step_chart(page, 1).locator(".attn-heatmap-tip")
    assert tip.inner_text().splitlines()[-1] == t("chart.unscored", lang="en")
    assert console_errors(page) == []
