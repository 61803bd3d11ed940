"""The head picker in a real Chromium: another head is drawn in the browser at once, the server hears of it later.

Steps 1 and 2 send every head's panels (``components.heatmap.Heads``); a pick redraws them with no
websocket message, and the picker tells the server once, about a second after the last pick (the link
then says the head). Expected numbers come from the engine (``run_attention``), never from the page.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest
from conftest import console_errors, wait_for_app
from test_browser_controls import drawn_charts, type_number
from test_browser_heatmap import cell_point
from tolerances import printed_forms

from components.i18n import t
from mha.config import AttentionConfig
from mha.pipeline import run_attention

pytestmark = pytest.mark.browser

SIX = "a b c d e f"
QUERY = f"d_model=64&num_heads=4&mask_type=causal&tokens={quote(SIX)}&lang=en&seed=0"
# Counts the messages the page sends the server (each widget change or component state is one).
COUNT_SENDS = """
(() => {
  window.__sent = 0;
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) { window.__sent += 1; return send.call(this, data); };
})();
"""
#: The titles of steps 1 and 2's charts that follow the head (by their element keys: the heads at a glance come first)
TITLES = """() => ['heatmap_step1', 'heatmap_step2'].map(
    (key) => document.querySelector(`.st-key-${key} .attn-heatmap canvas`)?.getAttribute('aria-label') || '')"""
STEP2 = ".st-key-heatmap_step2 .attn-heatmap"
PICKER = ".st-key-head_picker"


def open_picker_page(page, app_url: str, query: str = QUERY) -> None:
    page.add_init_script(COUNT_SENDS)
    page.goto(f"{app_url}/?{query}")
    wait_for_app(page)
    drawn_charts(page)


def shows_head(page, head: int, timeout_ms: int = 2_000) -> None:
    """Wait until steps 1 and 2 are drawn for ``head``."""
    step_1 = t("step1.chart", name="Q", head=head, length=6, d_k=16)
    step_2 = t("step2.weights", head=head)
    page.wait_for_function(
        f"([a, b]) => {{ const titles = ({TITLES})(); return titles[0].includes(a) && titles[1].includes(b); }}",
        arg=[step_1, step_2],
        timeout=timeout_ms,
    )


def link_says(page, head: int, timeout_ms: int = 5_000) -> None:
    page.wait_for_function(
        "head => new URLSearchParams(location.search).get('head') === String(head)", arg=head, timeout=timeout_ms
    )


def test_a_picked_head_is_drawn_at_once_without_the_server_and_reaches_the_link_a_moment_later(app_url, page):
    open_picker_page(page, app_url)
    sent = page.evaluate("window.__sent")
    page.locator(f"{PICKER} label").nth(3).click()
    shows_head(page, 3, timeout_ms=500)
    assert page.evaluate("window.__sent") == sent  # drawn by the page itself: nothing asked of the server
    assert "head=0" in page.url or "head=" not in page.url
    # the tooltip gives head 3's numbers (the server's run; ours, computed again, agrees to the last float32 bits)
    run = run_attention(AttentionConfig(d_model=64, num_heads=4, mask_type="causal", tokens=SIX))
    step2 = page.evaluate(f"() => document.querySelector('{STEP2}').attnLayout")
    canvas = page.locator(f"{STEP2} canvas")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    x, y = cell_point(step2, 2, 4, 2)  # weights, query 4:e, key 2:c
    page.mouse.move(box["x"] + x, box["y"] + y)
    lines = page.locator(f"{STEP2} .attn-heatmap-tip").inner_text().splitlines()
    assert lines[0] == t("step2.weights", head=3)
    assert lines[-1] in {f"weight: {w}" for w in printed_forms(run.trace.attend.weights[0, 3, 4, 2].item(), ".4f")}
    link_says(page, 3)  # the picker told the server, which wrote the link
    assert page.evaluate("window.__sent") == sent + 1
    page.wait_for_timeout(500)
    shows_head(page, 3)  # its run sent no chart again, and the charts stay
    type_number(page, "seed", 7)  # a run of the whole page keeps the head shown
    page.wait_for_function("() => new URLSearchParams(location.search).get('seed') === '7'", timeout=30_000)
    page.wait_for_timeout(500)
    shows_head(page, 3)
    assert page.locator(f"{PICKER} input").nth(3).is_checked()
    assert console_errors(page) == []


def test_clicking_through_the_heads_tells_the_server_once(app_url, page):
    open_picker_page(page, app_url)
    sent = page.evaluate("window.__sent")
    for head in (1, 2, 3, 2):
        page.locator(f"{PICKER} label").nth(head).click()
        shows_head(page, head, timeout_ms=500)
    link_says(page, 2)
    page.wait_for_timeout(1_500)
    assert page.evaluate("window.__sent") == sent + 1  # one message, after the last pick
    assert console_errors(page) == []


def test_arrow_keys_move_between_heads(app_url, page):
    open_picker_page(page, app_url)
    page.locator(f"{PICKER} input").nth(0).focus()
    page.keyboard.press("ArrowRight")
    shows_head(page, 1, timeout_ms=500)
    page.keyboard.press("ArrowRight")
    shows_head(page, 2, timeout_ms=500)
    link_says(page, 2)


def test_charts_too_big_for_every_head_ask_the_server_at_once(app_url, page):
    words = " ".join(f"w{i}" for i in range(128))
    open_picker_page(page, app_url, f"d_model=64&num_heads=32&tokens={quote(words)}&lang=en")  # 32 heads: a list
    select = page.locator(f"{PICKER} select")
    assert select.locator("option").count() == 32
    sent = page.evaluate("window.__sent")
    select.select_option("5")
    link_says(page, 5, timeout_ms=30_000)
    assert page.evaluate("window.__sent") >= sent + 1
    page.wait_for_function(
        f"t => ({TITLES})()[1].includes(t)", arg=t("step2.weights", head=5), timeout=30_000
    )  # redrawn by the server's run
    assert console_errors(page) == []


def open_menu(page) -> None:
    """Unfold the sidebar's menu of the playground and its labs (folded on every page): wait for the page to settle
    first (after a page switch the old page's menu may still be there, about to be replaced), then unfold it unless
    it is open, until its links show."""
    menu = t("nav.menu", count=14)
    wait_for_app(page)
    links = page.locator('[data-testid="stSidebar"] [data-testid="stExpander"] a')
    if not links.first.is_visible():
        page.locator('[data-testid="stSidebar"] [data-testid="stExpander"] summary', has_text=menu).click()
    links.first.wait_for(state="visible", timeout=30_000)


def test_a_pick_cut_short_by_a_visit_to_a_lab_reaches_the_server_on_the_way_back(app_url, page):
    open_picker_page(page, app_url)
    page.locator(f"{PICKER} label").nth(3).click()
    shows_head(page, 3, timeout_ms=500)
    open_menu(page)
    page.locator('[data-testid="stSidebar"] a', has_text=t("nav.lab.scaling")).click()  # before the picker told
    page.wait_for_function("() => location.pathname.endsWith('/scaling')", timeout=30_000)
    open_menu(page)
    page.locator('[data-testid="stSidebar"] a', has_text=t("nav.home")).click()
    drawn_charts(page)
    shows_head(page, 3, timeout_ms=10_000)  # the page kept its head ...
    link_says(page, 3, timeout_ms=10_000)  # ... and told the server
    sent = page.evaluate("window.__sent")
    page.wait_for_timeout(2_500)
    assert page.evaluate("window.__sent") == sent  # once: no exchange back and forth
    assert console_errors(page) == []
