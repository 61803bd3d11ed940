"""Every control of the playground, used in a real Chromium the way people use it: typing, clicking, selecting.

Each change must redraw the charts (their pixels change), change the text that names the
tokens and the shapes, keep the number of charts, and leave no error on the page or in the
console. Widgets are found by their key (Streamlit puts ``st-key-<key>`` on a keyed widget's
container). Expected shapes are computed here from the inputs, not read off the page.

The charts are drawn on a canvas (the page's heatmap component, or Vega's canvas renderer for the
per-head summary) or as SVG; :data:`CHART_IMAGES` reads either as one fingerprint per chart ('' while
it is not drawn), so "the chart changed" means its pixels changed. The page helpers here are also
used by ``test_browser_hostile.py`` and ``test_many_users.py``.

Console messages filtered as harmless: none. ``console_errors`` collects errors only; Vega's
console *warnings* (e.g. 'Autosize "fit" only works for single views') are not errors.
"""

from __future__ import annotations

import re

import pytest
from conftest import ARTIFACTS, console_errors, wait_for_app

from components.i18n import t

pytestmark = pytest.mark.browser

START = "/?d_model=64&num_heads=4&tokens=the+cat+sat&mask_type=none&seed=0&lang=en"
CHART_IMAGES = """() => {
    const hash = text => { let h = 5381; for (let i = 0; i < text.length; i++) h = (h * 33 + text.charCodeAt(i)) | 0;
                           return (h >>> 0).toString(16) + ':' + text.length; };
    return Array.from(document.querySelectorAll('.vega-embed, .attn-heatmap')).map(chart => {
        const canvas = chart.querySelector('canvas');
        if (canvas) {
            if (!canvas.width || !canvas.height) return '';
            const blank = document.createElement('canvas');
            [blank.width, blank.height] = [canvas.width, canvas.height];
            const image = canvas.toDataURL();
            return image === blank.toDataURL() ? '' : hash(image);
        }
        const svg = chart.querySelector('svg');
        // a gradient's fill names the page's address (url(http://...?seed=7#gradient_0)) and Vega numbers its ids:
        // the same picture drawn after the link changed reads otherwise
        const drawn = svg && svg.outerHTML.replace(/\\b(id|href)="[^"]*"/g, '$1').replace(/url\\([^)]*\\)/g, 'url');
        return svg && svg.querySelector('path') ? hash(drawn) : '';
    });
}"""


# ---------------------------------------------------------------- page helpers
def chart_images(page) -> list[str]:
    """One fingerprint per chart on the page ('' for a chart not drawn yet)."""
    return page.evaluate(CHART_IMAGES)


def drawn_charts(page, timeout_ms: int = 90_000) -> list[str]:
    """Wait until every chart is drawn and nothing has changed for a second; return their fingerprints."""
    page.wait_for_function(f"(({CHART_IMAGES})()).some(image => image)", timeout=timeout_ms)
    seen: list[list[str]] = []
    for _ in range(timeout_ms // 250):
        seen.append(chart_images(page))
        if len(seen) >= 4 and seen[-1] and all(seen[-1]) and all(images == seen[-1] for images in seen[-4:]):
            return seen[-1]
        page.wait_for_timeout(250)
    raise AssertionError(f"the charts did not settle: {seen[-1]}")


def open_page(page, base: str, query: str = START) -> list[str]:
    """Open the page and wait until all its charts are drawn; returns their fingerprints."""
    page.goto(base + query)
    wait_for_app(page)
    return drawn_charts(page)


def main_text(page) -> str:
    return page.locator('[data-testid="stMainBlockContainer"]').inner_text()


def token_line(page) -> str:
    """The step-1 line that lists the tokens: ``Tokens (L = 3): 0:the · 1:cat · 2:sat``."""
    return page.locator('[data-testid="stMarkdownContainer"] p', has_text="Tokens (L =").first.inner_text()


def text_appears(text: str) -> str:
    """A JS condition: the main area shows ``text``."""
    return f"""() => (document.querySelector('[data-testid="stMainBlockContainer"]') || {{innerText: ''}})
        .innerText.includes({text!r})"""


def settle(page, condition: str, arg: object = None, timeout_ms: int = 90_000) -> list[str]:
    """Wait until a JS condition (of ``arg``) holds, the script has finished and the charts are drawn."""
    page.wait_for_function(condition, arg=arg, timeout=timeout_ms)
    wait_for_app(page, timeout_ms)
    images = drawn_charts(page, timeout_ms)
    page.wait_for_function(condition, arg=arg, timeout=timeout_ms)
    return images


def type_number(page, key: str, value: int | str) -> None:
    field = page.locator(f".st-key-{key} input")
    field.fill(str(value))
    field.press("Enter")


def choose(page, key: str, label: str) -> None:
    """Open the selectbox with widget key ``key`` and click the option shown as ``label``."""
    field = page.locator(f".st-key-{key} input[role='combobox']")
    field.click()
    field.press("ArrowDown")  # a click focuses the box; the arrow key opens its list
    page.locator("[role='option']").filter(has_text=re.compile(f"^{re.escape(label)}$")).click()


def type_text(page, text: str) -> None:
    area = page.locator(".st-key-tokens textarea")
    area.fill(text)
    area.press("Control+Enter")


def no_errors(page) -> None:
    """No exception box, no traceback text, no console error."""
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "Traceback" not in page.locator('[data-testid="stApp"]').inner_text()
    assert console_errors(page) == []


def changed(before: list[str], after: list[str]) -> int:
    """How many charts were redrawn differently (same number of charts required)."""
    assert len(after) == len(before), (len(before), len(after))
    return sum(a != b for a, b in zip(before, after, strict=True))


# ---------------------------------------------------------------- the controls
def test_d_model_typed_and_by_preset_and_heads_change_the_shapes(app_url, page):
    images = open_page(page, app_url)
    assert "x [1, 3, 64]" in main_text(page)
    for action, shape in (
        (lambda: type_number(page, "d_model", 128), "[1, 4, 3, 32]"),  # (B, h, L, d_k) = (1, 4, 3, 128 / 4)
        (lambda: page.locator(".st-key-d_model_preset").get_by_role("radio", name="256").click(), "[1, 4, 3, 64]"),
        (lambda: type_number(page, "num_heads", 8), "[1, 8, 3, 32]"),
    ):
        action()
        after = settle(page, text_appears(shape))
        assert changed(images, after) >= 3  # at least step 1, step 2 and the grid are drawn anew
        images = after
        no_errors(page)
    assert page.locator(".st-key-d_model input").input_value() == "256"
    assert page.locator(".st-key-head_picker input[type='radio']").count() == 8  # one choice per head
    assert "d_model=256" in page.url and "num_heads=8" in page.url

    type_number(page, "num_heads", 7)  # 256 / 7 is not whole: a clear error, the page keeps working
    page.wait_for_selector('[data-testid="stAlertContentError"]', timeout=90_000)
    error = page.locator('[data-testid="stAlertContentError"]').inner_text()
    assert "256" in error and "7" in error and "8" in error  # names the numbers and a head count that works
    no_errors(page)


def test_mask_and_window_redraw_the_attention_charts(app_url, page):
    images = open_page(page, app_url)
    masked_note = t("step2.masked_note", lang="en")
    assert masked_note not in main_text(page)
    choose(page, "mask_type", t("mask.causal", lang="en"))
    after = settle(page, text_appears(masked_note))
    assert changed(images, after) >= 3  # step 2 (scaled scores, weights), the all-heads grid, steps 3 and 4
    assert "mask_type=causal" in page.url
    no_errors(page)

    choose(page, "mask_type", t("mask.window", lang="en"))
    covers_all = t("notes.window_covers_all", lang="en", window=2, count=3)
    images = settle(page, text_appears(covers_all))  # window 2 covers all 3 tokens: said so
    page.wait_for_function("() => !document.querySelector('.st-key-window input').disabled")
    type_number(page, "window", 0)
    after = settle(page, f"() => !({text_appears(covers_all)})() && ({text_appears(masked_note)})()")
    assert changed(images, after) >= 3
    assert "window=0" in page.url
    no_errors(page)


def test_typed_sentence_seed_and_positional_redraw_the_charts(app_url, page):
    images = open_page(page, app_url)
    type_text(page, "zebra likes jam")
    after = settle(page, text_appears("0:zebra · 1:likes · 2:jam"))
    assert "cat" not in token_line(page)
    assert changed(images, after) == len(images)  # new tokens: every chart is new
    no_errors(page)

    for change, in_url in (("seed", "seed=7"), ("positional", "positional=none")):
        images = after
        if change == "seed":
            type_number(page, "seed", 7)
        else:
            page.locator(".st-key-positional label").filter(has_text="none").click()
        page.wait_for_url(f"**{in_url}**", timeout=90_000)
        after = settle(page, f"before => JSON.stringify(({CHART_IMAGES})()) !== JSON.stringify(before)", images)
        assert changed(images, after) >= len(images) - 1  # new numbers everywhere (a summary may keep its shape)
        no_errors(page)


def test_a_run_is_one_history_entry_and_back_undoes_a_change(app_url, page):
    """The first run writes the whole link at once (it once wrote 18 entries, one per value), a change
    adds one entry, and the browser's Back button brings the page and its link back to what they were."""
    entries = page.evaluate("history.length")
    open_page(page, app_url, "/?d_model=64&num_heads=4&tokens=the+cat+sat")
    link = page.evaluate("location.search")
    assert "seed=0" in link and "mask_type=none" in link and "lang=en" in link  # every value, written by the run
    assert page.evaluate("history.length") == entries + 2  # the page opened, and the link the first run wrote

    type_number(page, "d_model", 32)
    settle(page, text_appears("[1, 3, 32]"))
    assert page.evaluate("history.length") == entries + 3
    assert "d_model=32" in page.evaluate("location.search")

    page.go_back()
    settle(page, text_appears("[1, 3, 64]"))
    assert page.locator(".st-key-d_model input").input_value() == "64"
    assert page.evaluate("location.search") == link
    no_errors(page)


def test_chinese_interface_labels_render(app_url, page):
    images = open_page(page, app_url, "/?d_model=64&num_heads=4&tokens=小明喜欢打球&lang=en")
    choose(page, "lang", t("lang.zh", lang="zh"))
    after = settle(page, text_appears(t("step1.title", lang="zh")))
    assert changed(images, after) >= 3  # chart titles and axis titles are drawn in Chinese
    assert page.get_by_role("heading", name=t("app.title", lang="zh")).count() == 1
    assert t("controls.header", lang="zh") in page.locator('[data-testid="stSidebar"]').inner_text()
    assert "0:小 · 1:明 · 2:喜 · 3:欢 · 4:打 · 5:球" in main_text(page)
    assert "lang=zh" in page.url
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "playground-controls-zh.png"))
    page.get_by_role("heading", name=t("step2.title", lang="zh")).scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "playground-controls-zh-charts.png"))
    no_errors(page)


def test_a_language_switch_keeps_every_choice(app_url, page):
    """The selectboxes and radios send their labels: after a switch of language the old labels come back once, and
    the page maps them to their options (the mask stays causal, the tokenizer words) instead of failing."""
    open_page(page, app_url, "/?d_model=64&num_heads=4&tokens=小明喜欢打球&mask_type=causal&tokenizer=words&lang=en")
    choose(page, "lang", t("lang.zh"))
    settle(page, text_appears(t("step2.masked_note", lang="zh")))
    assert "mask_type=causal" in page.url and "tokenizer=words" in page.url and "lang=zh" in page.url
    choose(page, "mask_type", t("mask.window", lang="zh"))  # the page still answers its controls
    page.wait_for_url("**mask_type=window**", timeout=60_000)
    type_number(page, "seed", 3)  # and again: every widget's state goes back to the server with each change
    page.wait_for_url("**seed=3**", timeout=60_000)
    wait_for_app(page)
    assert "tokenizer=words" in page.url and "weights=random" in page.url
    no_errors(page)
