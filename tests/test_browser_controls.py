"""Every control of the playground, used in a real Chromium the way people use it: typing, clicking, selecting.

Each change must update the charts (their token labels, their cells, the shapes in the text)
while the number of charts stays the same, with no error on the page or in the console.
Widgets are found by their key (Streamlit puts ``st-key-<key>`` on a keyed widget's container).
Expected numbers are computed here from the inputs (shapes, masked cells), not read off the page.

Console messages filtered as harmless: none. Errors only: Vega's console *warnings* (e.g.
'Autosize "fit" only works for single views') are not errors and are not collected by
``console_errors``.
"""

from __future__ import annotations

import pytest
from conftest import ARTIFACTS, console_errors, wait_for_app

from components.i18n import t
from mha.masks import MASK_TYPES, window_mask

pytestmark = pytest.mark.browser

START = "/?d_model=64&num_heads=4&tokens=the+cat+sat&mask_type=none&seed=0&lang=en"
MASKED_FILL = "#d4d4d4"  # components.charts.MASKED_COLOR: blocked cells are drawn in this grey
CHARTS = "document.querySelectorAll('.vega-embed').length"
ALL_DRAWN = "Array.from(document.querySelectorAll('.vega-embed')).every(chart => chart.querySelector('svg path'))"
LABELS = """() => Array.from(document.querySelectorAll('.vega-embed'))
    .map(chart => Array.from(chart.querySelectorAll('.role-axis-label text')).map(node => node.textContent))"""
CELL_FILLS = """() => Array.from(document.querySelectorAll('.vega-embed .mark-rect path'))
    .map(path => path.getAttribute('fill')).join(',')"""
MASKED_CELLS = f"""() => document.querySelectorAll('.vega-embed .mark-rect path[fill="{MASKED_FILL}"]').length"""


# ---------------------------------------------------------------- helpers
def drawn_charts(page, timeout_ms: int = 60_000) -> int:
    """Wait until every chart on the page has drawn and their number held still for a second; return it."""
    page.wait_for_function(f"({CHARTS}) > 0 && {ALL_DRAWN}", timeout=timeout_ms)
    counts: list[int] = []
    for _ in range(timeout_ms // 250):
        counts.append(page.evaluate(f"{ALL_DRAWN} ? {CHARTS} : -1"))
        if len(counts) >= 4 and counts[-1] > 0 and len(set(counts[-4:])) == 1:
            return counts[-1]
        page.wait_for_timeout(250)
    raise AssertionError(f"the charts did not settle: {counts[-8:]}")


def open_page(page, base: str, query: str = START) -> int:
    """Open the page, wait for all its charts; returns the number of charts."""
    page.goto(base + query)
    wait_for_app(page)
    return drawn_charts(page)


def settle(page, condition: str, timeout_ms: int = 60_000) -> None:
    """Wait until a JS condition holds and the script has finished its rerun."""
    page.wait_for_function(condition, timeout=timeout_ms)
    wait_for_app(page, timeout_ms)
    page.wait_for_function(condition, timeout=timeout_ms)


def main_text(page) -> str:
    return page.locator('[data-testid="stMainBlockContainer"]').inner_text()


def text_appears(text: str) -> str:
    """A JS condition: the main area shows ``text``."""
    return f"""() => (document.querySelector('[data-testid="stMainBlockContainer"]') || {{innerText: ''}})
        .innerText.includes({text!r})"""


def type_number(page, key: str, value: int) -> None:
    field = page.locator(f".st-key-{key} input")
    field.fill(str(value))
    field.press("Enter")


def choose(page, key: str, label: str) -> None:
    """Open the selectbox with widget key ``key`` and click the option shown as ``label``."""
    page.locator(f".st-key-{key} [role='combobox']").click()
    page.get_by_role("option", name=label, exact=True).click()


def type_text(page, text: str) -> None:
    area = page.locator(".st-key-tokens textarea")
    area.fill(text)
    area.press("Control+Enter")


def healthy(page, charts: int) -> None:
    """The same number of charts, every one drawn, no error element, no console error."""
    assert drawn_charts(page) == charts
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "Traceback" not in main_text(page)
    assert console_errors(page) == []


def masked_per_matrix(mask_type: str, length: int, window: int = 0) -> int:
    """Blocked cells of one (L, L) matrix, from the mask builders (no pad tokens in these sentences)."""
    if mask_type == "causal":
        return length * (length - 1) // 2
    if mask_type == "window":
        return int((~window_mask(length, window)).sum())
    return 0


# ---------------------------------------------------------------- the controls
def test_d_model_typed_and_by_preset_and_heads_change_the_shapes(app_url, page):
    charts = open_page(page, app_url)
    assert "[1, 3, 64]" in main_text(page)
    type_number(page, "d_model", 128)
    settle(page, text_appears("[1, 4, 3, 32]"))  # (B, h, L, d_k) = (1, 4, 3, 128 / 4)
    assert page.url.count("d_model=128") == 1
    healthy(page, charts)

    page.locator(".st-key-d_model_preset").get_by_role("radio", name="256", exact=True).click()
    settle(page, text_appears("[1, 4, 3, 64]"))
    assert page.locator(".st-key-d_model input").input_value() == "256"
    healthy(page, charts)

    type_number(page, "num_heads", 8)
    settle(page, text_appears("[1, 8, 3, 32]"))
    assert page.locator(".st-key-head input[type='radio']").count() == 8  # one choice per head
    healthy(page, charts)

    type_number(page, "num_heads", 7)  # 256 / 7 is not whole: a clear error, the page keeps working
    settle(page, "() => document.querySelectorAll('[data-testid=\"stAlertContentError\"]').length === 1")
    error = page.locator('[data-testid="stAlertContentError"]').inner_text()
    assert "256" in error and "7" in error and "8" in error  # names the numbers and a head count that works
    assert page.locator('[data-testid="stException"]').count() == 0
    assert console_errors(page) == []


def test_mask_and_window_block_the_cells_they_should(app_url, page):
    charts = open_page(page, app_url)
    length, heads = 3, 4
    assert page.evaluate(MASKED_CELLS) == 0
    for mask_type in ("causal", "window"):
        assert mask_type in MASK_TYPES
        choose(page, "mask_type", t(f"mask.{mask_type}", lang="en"))
        if mask_type == "window":
            settle(page, "() => !document.querySelector('.st-key-window input').disabled")
            type_number(page, "window", 0)
        # blocked cells are grey in the chosen head's scaled scores and weights, and in every head of the grid
        expected = (2 + heads) * masked_per_matrix(mask_type, length, window=0)
        settle(page, f"() => ({MASKED_CELLS})() === {expected}")
        assert f"mask_type={mask_type}" in page.url
        healthy(page, charts)


def test_typed_sentence_seed_and_positional_redraw_the_charts(app_url, page):
    charts = open_page(page, app_url)
    type_text(page, "zebra likes jam")
    settle(
        page,
        f"""() => {{ const charts = ({LABELS})().filter(labels => labels.length);
            return charts.length > 0 && charts.every(labels => labels.includes('0:zebra')
                && labels.includes('2:jam') && !labels.includes('1:cat')); }}""",
    )
    assert "zebra · 1:likes · 2:jam" in main_text(page)
    healthy(page, charts)

    for change in ("seed", "positional"):
        before = page.evaluate(CELL_FILLS)
        if change == "seed":
            type_number(page, "seed", 7)
        else:
            page.locator(".st-key-positional label").click()
        settle(page, f"() => ({CELL_FILLS})() !== {before!r} && ({CELL_FILLS})().length > 0")
        assert ("seed=7" if change == "seed" else "positional=false") in page.url
        healthy(page, charts)


def test_chinese_interface_labels_render(app_url, page):
    charts = open_page(page, app_url, "/?d_model=64&num_heads=4&tokens=小明喜欢打球&lang=en")
    choose(page, "lang", t("lang.zh", lang="zh"))
    settle(page, text_appears(t("step1.title", lang="zh")))
    assert page.get_by_role("heading", name=t("app.title", lang="zh")).count() == 1
    assert t("controls.header", lang="zh") in page.locator('[data-testid="stSidebar"]').inner_text()
    labels = [label for chart in page.evaluate(LABELS) for label in chart]
    assert "0:小" in labels and "5:球" in labels
    # the chart titles and axis titles are translated too
    titles = page.evaluate(
        "() => Array.from(document.querySelectorAll('.vega-embed .role-title-text text, "
        ".vega-embed .role-axis-title text')).map(node => node.textContent).join('|')"
    )
    assert t("chart.key", lang="zh") in titles
    assert "lang=zh" in page.url
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "playground-controls-zh.png"), full_page=True)
    healthy(page, charts)
