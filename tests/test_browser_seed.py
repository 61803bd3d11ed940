"""A new seed in a real Chromium: only the parts of the page that show the weights' values are sent again.

The seed's field is one of the live controls, a fragment (``components.live_controls``) that redraws
the parts the panels keep for their values (:mod:`components.panels.parts`). The oracle for what it draws
is the page itself: the same seed opened from a link is a full run, and every text and chart must come
out the same. The parts with widgets of
their own (the head picker, the grid's stage, the downloads) must work on the new weights afterwards.
"""

from __future__ import annotations

import difflib
import io
import json
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
from conftest import console_errors, wait_for_app
from test_browser_controls import CHART_IMAGES, drawn_charts, type_number
from test_browser_head import PICKER, link_says, shows_head
from test_browser_heatmap import cell_point
from tolerances import FLOAT32, printed_forms

from components.i18n import t
from mha.config import AttentionConfig
from mha.pipeline import run_attention

pytestmark = pytest.mark.browser

SIX = "a b c d e f"
CONFIG = {"d_model": 64, "num_heads": 4, "mask_type": "causal", "tokens": SIX}
QUERY = f"d_model=64&num_heads=4&mask_type=causal&tokens={quote(SIX)}&lang=en"
# Counts the websocket messages the page receives (each element the server draws is one), and those that carry
# step 1's code listing (the engine's own lines: drawn by every full run, never by the live fragments, which send the
# values alone; a step's title is no such mark: the values quote it).
COUNT_RECEIVED = """
(() => {
  window.__received = 0;
  window.__heading = 0;
  const Native = window.WebSocket;
  const heading = %s;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        window.__received += 1;
        if (event.data instanceof ArrayBuffer && new TextDecoder().decode(event.data).includes(heading)) {
          window.__heading += 1;
        }
      });
    }
  };
})();
"""
MAIN_TEXT = "() => document.querySelector('[data-testid=\"stMain\"]').innerText"
STEP2, GRID = "heatmap_step2", "heatmap_grid"  # the element keys of step 2's head chart and of every head's grid


def open_seed_page(page, app_url: str, seed: int, query: str = QUERY) -> list[str]:
    page.goto(f"{app_url}/?{query}&seed={seed}")
    wait_for_app(page)
    return drawn_charts(page)


def new_seed(page, seed: int) -> list[str]:
    """Type ``seed`` into its field; wait for the link to say it and the charts to settle."""
    type_number(page, "seed", seed)
    page.wait_for_function(f"() => new URLSearchParams(location.search).get('seed') === '{seed}'", timeout=30_000)
    return drawn_charts(page)


def tooltip(page, chart: str, panel: int, row: int, column: int) -> list[str]:
    """The lines of the tooltip of the chart keyed ``chart`` over one cell of its panel ``panel``."""
    root = f".st-key-{chart} .attn-heatmap"
    layout = page.evaluate(f"() => document.querySelector('{root}').attnLayout")
    canvas = page.locator(f"{root} canvas")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    x, y = cell_point(layout, panel, row, column)
    page.mouse.move(box["x"] + x, box["y"] + y)
    return page.locator(f"{root} .attn-heatmap-tip").inner_text().splitlines()


def test_a_new_seed_draws_the_page_a_link_with_that_seed_opens_and_sends_less_than_a_full_run(app_url, page):
    fresh = page.context.new_page()
    linked = open_seed_page(fresh, app_url, 7)  # a full run of seed 7
    linked_text = fresh.evaluate(MAIN_TEXT)

    page.add_init_script(COUNT_RECEIVED % json.dumps("# 1) project and split into heads"))
    first = open_seed_page(page, app_url, 0)
    assert page.evaluate(MAIN_TEXT) != linked_text  # the numbers the seed changes are on the page
    assert page.evaluate("window.__heading") >= 1  # the page's full run drew step 1's listing
    received, headings = page.evaluate("[window.__received, window.__heading]")
    redrawn = new_seed(page, 7)
    seed_messages = page.evaluate("window.__received") - received
    seed_headings = page.evaluate("window.__heading") - headings
    assert redrawn == linked  # every chart: the same pixels
    assert all(a != b for a, b in zip(first, redrawn, strict=True))  # and each of them changed
    assert page.evaluate(MAIN_TEXT) == linked_text  # every text (numbers, notes, tables, the export's script)

    received, headings = page.evaluate("[window.__received, window.__heading]")
    type_number(page, "d_model", 32)  # another size: a live control too, the parts alone are sent again
    page.wait_for_function("() => new URLSearchParams(location.search).get('d_model') === '32'", timeout=30_000)
    drawn_charts(page)
    size_messages = page.evaluate("window.__received") - received
    size_headings = page.evaluate("window.__heading") - headings

    received, headings = page.evaluate("[window.__received, window.__heading]")
    stretch = page.locator(".st-key-color_scale button", has_text=t("color_scale.stretch", lang="en"))
    stretch.click()  # outside the live controls: the whole page runs
    page.wait_for_function("() => new URLSearchParams(location.search).get('color_scale') === 'stretch'")
    drawn_charts(page)
    full_messages = page.evaluate("window.__received") - received
    full_headings = page.evaluate("window.__heading") - headings
    print(f"messages: seed {seed_messages}, size {size_messages}, full run {full_messages}")
    # a full run sends the page around the values again, step 1's listing with it; a live change sends none of it
    headings = {"full run": full_headings, "seed": seed_headings, "size": size_headings}
    assert headings["full run"] >= 1 and headings["seed"] == 0 and headings["size"] == 0, headings
    # the values are about half the page's messages; each step's questions are values too (their answers come from
    # the run), so a live change sends them again: under 0.6 of a full run, which resends every control and frame
    assert seed_messages < 0.6 * full_messages, (seed_messages, full_messages)
    assert size_messages < 0.6 * full_messages, (size_messages, full_messages)
    assert console_errors(page) == []


def test_after_a_new_seed_the_head_picker_and_the_grid_show_the_new_weights(app_url, page):
    open_seed_page(page, app_url, 0)
    new_seed(page, 7)
    run = run_attention(AttentionConfig(**CONFIG, seed=7))
    page.locator(f"{PICKER} label").nth(2).click()  # drawn in the browser from what the new seed sent
    shows_head(page, 2, timeout_ms=500)
    expected = {f"weight: {w}" for w in printed_forms(run.trace.attend.weights[0, 2, 4, 1].item(), ".4f")}
    assert tooltip(page, STEP2, 2, 4, 1)[-1] in expected  # the server's run; ours again: the same to the last bits
    link_says(page, 2)  # the picker's fragment told the server: its charts are the new seed's still
    page.wait_for_timeout(500)
    assert tooltip(page, STEP2, 2, 4, 1)[-1] in expected

    grid = drawn_charts(page)[3]  # after the heads at a glance, step 1 and step 2's head
    page.locator(".st-key-grid_stage button").nth(0).click()  # the grid's own fragment: raw scores
    page.wait_for_function(f"grid => ({CHART_IMAGES})()[3] !== grid", arg=grid, timeout=30_000)
    drawn_charts(page)
    raw = printed_forms(run.trace.attend.raw_scores[0, 1, 3, 2].item(), ".4f")
    assert tooltip(page, GRID, 1, 3, 2)[-1].replace("\u2212", "-").split(": ")[-1] in raw
    assert "seed=7" in page.url  # nothing ran the page again
    assert console_errors(page) == []


def test_after_a_new_seed_the_downloads_are_the_new_weights(app_url, page):
    open_seed_page(page, app_url, 0)
    new_seed(page, 7)
    button = page.get_by_role("button", name=t("export.npz.label")).first
    button.scroll_into_view_if_needed()
    with page.expect_download() as download:
        button.click()
    assert download.value.suggested_filename.endswith("_seed7.npz")
    arrays = np.load(io.BytesIO(Path(download.value.path()).read_bytes()))
    run = run_attention(AttentionConfig(**CONFIG, seed=7))
    ours = run.trace.attend.weights.cpu().numpy()
    np.testing.assert_allclose(arrays["attend.weights"], ours, **FLOAT32)  # the server's


def test_the_reproducing_script_is_drawn_once_opened_and_follows_the_seed(app_url, page):
    """Folded (components.folds): closed, nothing is drawn in it; opened, the script of the page's weights."""
    open_seed_page(page, app_url, 0)
    folded = page.get_by_test_id("stExpander").filter(has_text=t("export.code.title"))
    folded.scroll_into_view_if_needed()
    assert folded.get_by_test_id("stCode").count() == 0
    folded.get_by_text(t("export.code.title")).click()
    script = folded.get_by_test_id("stCode")
    script.wait_for(timeout=30_000)
    assert "SEED = 0\n" in script.inner_text()
    new_seed(page, 7)
    folded.get_by_test_id("stCode").filter(has_text="SEED = 7").wait_for(timeout=30_000)
    assert "SEED = 7\n" in folded.get_by_test_id("stCode").inner_text()
    assert folded.get_by_test_id("stCode").count() == 1
    assert not console_errors(page)


def test_a_new_seed_where_the_charts_hold_one_head_keeps_the_head_the_server_drew(app_url, page):
    words = " ".join(f"w{i}" for i in range(128))
    query = f"d_model=64&num_heads=32&tokens={quote(words)}&lang=en"
    open_seed_page(page, app_url, 0, query)
    page.locator(f"{PICKER} select").select_option("5")  # the server draws head 5 (a run of the picker)
    link_says(page, 5, timeout_ms=30_000)
    new_seed(page, 3)
    title = f"() => document.querySelector('.st-key-{STEP2} .attn-heatmap canvas').getAttribute('aria-label')"
    assert t("step2.weights", head=5) in page.evaluate(title)
    assert page.locator(f"{PICKER} select").input_value() == "5"
    assert console_errors(page) == []


def test_a_new_seed_on_a_slide_runs_the_whole_slide(app_url, page):
    page.goto(f"{app_url}/?{QUERY}&seed=0&teacher=1&step=2&hide=device")
    wait_for_app(page)
    before = drawn_charts(page)
    page.get_by_test_id("stExpandSidebarButton").click()  # a slide folds the sidebar
    after = new_seed(page, 7)
    assert after != before
    assert page.get_by_text(t("teacher.step_of", step=2, steps=4)).first.is_visible()
    assert console_errors(page) == []


def test_an_emptied_seed_gets_its_default_back_with_the_sidebars_note(app_url, page):
    open_seed_page(page, app_url, 5)
    type_number(page, "seed", "")
    page.wait_for_function("() => new URLSearchParams(location.search).get('seed') === '0'", timeout=30_000)
    note = page.get_by_test_id("stSidebar").get_by_text(t("input.empty_number", name="seed", used=0))
    note.wait_for(timeout=30_000)
    assert page.locator(".st-key-seed input").input_value() == "0"
    assert console_errors(page) == []


def test_a_new_seed_updates_the_page_in_place_and_builds_nothing_anew(app_url, page):
    """Every node of the main page, every chart's canvas and every table cell included, is the same node after a
    new seed: React updated them in place (a chart drawn in a new block would lose its canvas and start over)."""
    open_seed_page(page, app_url, 0)
    tagged = page.evaluate(
        """() => {
          window.__tagged = [...document.querySelectorAll('[data-testid="stMain"] *')];
          return window.__tagged.length;
        }"""
    )
    new_seed(page, 7)
    replaced = page.evaluate(
        """() => window.__tagged.filter((node) => !node.isConnected)
                   .map((node) => (node.closest('[data-testid]') || node).dataset?.testid || node.tagName)"""
    )
    assert tagged > 1000 and page.locator('[data-testid="stMain"] canvas').count() >= 5
    assert replaced == []


def test_the_controls_and_the_values_fragments_in_turn_leave_the_page_a_fresh_link_draws(app_url, page):
    """A size or window change reruns the controls' and the values' fragments, a seed the values' alone. After each
    in turn the page must read as a fresh page of its link: no note, number or chart left stale or twice (a run
    note comes and goes with the window covering every key). The values' fragment nested in the controls' fails
    here: its runs after the controls' left their earlier elements on the page."""
    fresh = page.context.new_page()
    open_seed_page(page, app_url, 0, QUERY.replace("mask_type=causal", "mask_type=window"))
    covers_all = t("notes.window_covers_all", window=20, count=len(SIX.split()))
    for action, expected_note in (
        (lambda: type_number(page, "window", 20), True),  # the controls' fragment: the note appears
        (lambda: new_seed(page, 7), True),  # the values' fragment alone
        (lambda: type_number(page, "window", 1), False),  # the controls' again: the note goes
        (lambda: new_seed(page, 8), False),
    ):
        action()
        page.wait_for_timeout(300)
        drawn = drawn_charts(page)
        fresh.goto(page.url)
        wait_for_app(fresh)
        assert drawn_charts(fresh) == drawn
        mine, theirs = page.evaluate(MAIN_TEXT), fresh.evaluate(MAIN_TEXT)
        assert mine == theirs, "\n".join(difflib.unified_diff(theirs.splitlines(), mine.splitlines(), lineterm="", n=1))
        assert (covers_all in page.evaluate(MAIN_TEXT)) is expected_note
    assert console_errors(page) == []
