"""Hostile input in a real Chromium, through the link and through the widgets.

Nothing a user types or puts in a link may run: an ``<img src=x onerror=...>``, a ``<script>``
and an ``<svg onload=...>`` in the tokens, in an unknown mask name and in the language. Each
payload would set ``window.__pwned`` and open an ``alert``; the test listens for dialogs, reads
the sentinel, and queries the DOM for any element the payload would have created. The raw
tags may appear as text (in a warning, in the token line, drawn in a chart), never as elements.

Other hostile input (right-to-left text, U+202E, emoji, control characters, 20,000 tokens,
non-numbers, huge numbers) gets a message and a clamped or default value, and the page keeps
drawing its charts with no traceback and no console error.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from urllib.parse import urlencode

import pytest
from conftest import wait_for_app
from test_browser_controls import drawn_charts, main_text, no_errors, settle, text_appears, token_line, type_text

from components.i18n import t
from components.url_params import DEFAULTS
from mha.config import LIMITS
from mha.tokens import tokenize

pytestmark = pytest.mark.browser

IMG = "<img src=x onerror=\"window.__pwned='img';alert('img')\">"
SCRIPT = "<script>window.__pwned='script';alert('script')</script>"
SVG = "<svg onload=\"window.__pwned='svg';alert('svg')\"></svg>"
LINK = "[click](javascript:alert('link'))"
RLO = "\u202e"
RTL = "مرحبا بالعالم שלום עולם"
INJECTED = """() => ({
    pwned: window.__pwned === undefined ? null : String(window.__pwned),
    imgs: document.querySelectorAll('img[src="x"], img[src$="/x"]').length,
    handlers: document.querySelectorAll('[onerror], [onload]').length,
    scripts: Array.from(document.scripts).filter(s => s.text.includes('__pwned')).length,
    svgs: Array.from(document.querySelectorAll('svg')).filter(s => s.getAttribute('onload')).length,
    jsLinks: document.querySelectorAll('a[href^="javascript"]').length,
})"""
ALERTS = """() => Array.from(document.querySelectorAll('[data-testid="stAlert"]')).map(node => node.textContent)"""
NOTHING_INJECTED = {"pwned": None, "imgs": 0, "handlers": 0, "scripts": 0, "svgs": 0, "jsLinks": 0}


# ---------------------------------------------------------------- helpers
@pytest.fixture
def dialogs(page) -> list[str]:
    """Every alert/confirm/prompt the page tries to open (dismissed at once)."""
    opened: list[str] = []

    def record(dialog) -> None:
        opened.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", record)
    return opened


def open_link(page, base: str, **params: str) -> None:
    """Open the page with these query parameters and wait until its charts are drawn."""
    page.goto(f"{base}/?{urlencode(params)}")
    wait_for_app(page)
    drawn_charts(page)


def line_of(tokens: list[str]) -> str:
    """The token line's text for these tokens, as the page shows it."""
    return " · ".join(f"{i}:{token}" for i, token in enumerate(tokens))


def alerts(page) -> str:
    return "\n".join(page.evaluate(ALERTS))


def nothing_ran(page, dialogs: list[str]) -> None:
    page.wait_for_timeout(500)  # an onerror of a broken image fires as soon as the element exists
    assert dialogs == []
    assert page.evaluate(INJECTED) == NOTHING_INJECTED


# ---------------------------------------------------------------- script and HTML
def test_payloads_in_the_link_do_not_run(app_url, page, dialogs):
    tokens = f"hello {IMG} {SCRIPT} {SVG} {LINK} end"
    open_link(page, app_url, d_model="64", num_heads="4", tokens=tokens, mask_type=IMG, lang=SCRIPT)
    nothing_ran(page, dialogs)
    assert line_of(tokenize(tokens)) in token_line(page)  # every "<", "img", "onerror" shown as a character
    assert "<img src=x onerror=" in alerts(page)  # the bad mask name, as text in its warning
    assert "<script>" in page.locator('[data-testid="stSidebar"]').inner_text()  # the bad language, as text
    assert page.locator(".st-key-mask_type input").input_value() == t("mask.none", lang="en")
    no_errors(page)


def test_payloads_typed_into_the_text_do_not_run(app_url, page, dialogs):
    open_link(page, app_url, d_model="64", num_heads="4", tokens="the cat sat")
    for payload in (IMG, SCRIPT, f"{SVG} {LINK}"):
        text = f"start {payload}"
        type_text(page, text)
        settle(page, text_appears(line_of(tokenize(text))))
        nothing_ran(page, dialogs)
    no_errors(page)


# ---------------------------------------------------------------- text that is odd but harmless
def test_right_to_left_override_emoji_and_control_characters(app_url, page, dialogs):
    raw = f"{RTL} {RLO}evil I ❤ 🐍\x00 end\x07"
    open_link(page, app_url, d_model="64", num_heads="4", tokens=raw)
    cleaned = tokenize(raw.replace(RLO, "").replace("\x00", "").replace("\x07", ""))
    assert line_of(cleaned) in token_line(page)
    assert RLO not in main_text(page)
    assert "3 invisible control characters" in alerts(page)

    type_text(page, f"abc {RLO}def 🙂")  # typed: the same characters are ignored, with a note
    settle(page, text_appears(line_of(["abc", "def", "🙂"])))
    assert "1 invisible control or direction characters" in page.locator('[data-testid="stSidebar"]').inner_text()
    nothing_ran(page, dialogs)
    no_errors(page)


def test_twenty_thousand_tokens_by_link_and_by_paste(app_url, page):
    open_link(page, app_url, d_model="64", num_heads="4", tokens=" ".join(["w"] * 20_000))
    assert f"(L = {LIMITS.tokens_max})" in token_line(page)
    assert f"cut to {LIMITS.text_chars_max}" in alerts(page)
    assert f"only the first {LIMITS.tokens_max}" in alerts(page)
    area = page.locator(".st-key-tokens textarea")
    kept = area.input_value()
    assert tokenize(kept) == ["w"] * LIMITS.tokens_max

    area.click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(" ".join(f"w{i}" for i in range(20_000)))  # a paste over the 2000-character cap
    assert area.input_value() == kept  # the text box refuses it whole

    area.fill(" ".join(["w"] * (LIMITS.text_chars_max // 2)))  # 2000 characters: 1000 tokens, over the cap
    area.press("Control+Enter")
    page.wait_for_selector('[data-testid="stAlertContentError"]', timeout=90_000)
    error = page.locator('[data-testid="stAlertContentError"]').inner_text()
    assert "1000 tokens" in error and str(LIMITS.tokens_max) in error
    no_errors(page)


def test_a_link_over_the_servers_header_limit_is_refused_and_the_server_carries_on(app_url):
    huge = f"{app_url}/?{urlencode({'tokens': ' '.join(f'w{i}' for i in range(20_000))})}"  # about 130 KB
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(huge, timeout=30)
    assert 400 <= refused.value.code < 500
    with urllib.request.urlopen(f"{app_url}/_stcore/health", timeout=30) as response:
        assert response.status == 200


# ---------------------------------------------------------------- numbers
def test_huge_and_negative_numbers_in_the_link_are_clamped(app_url, page):
    open_link(page, app_url, d_model="1000000000", num_heads="-3", window="1e9", seed="-1", tokens="a b c")
    assert page.locator(".st-key-d_model input").input_value() == str(LIMITS.d_model_max)
    assert page.locator(".st-key-num_heads input").input_value() == "1"
    assert page.locator(".st-key-window input").input_value() == str(DEFAULTS["window"])
    for name in ("d_model", "num_heads", "window", "seed"):
        assert f"“{name}”" in alerts(page)
    assert f"x [1, 3, {LIMITS.d_model_max}]" in main_text(page)
    no_errors(page)


def test_non_numbers_and_out_of_range_numbers_typed(app_url, page):
    open_link(page, app_url, d_model="64", num_heads="4", tokens="a b c")
    field = page.locator(".st-key-d_model input")
    field.fill("")
    field.press_sequentially("abc")  # a number field takes no letters: it stays empty
    field.press("Enter")
    settle(page, text_appears(f"x [1, 3, {DEFAULTS['d_model']}]"))
    assert field.input_value() == str(DEFAULTS["d_model"])
    sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
    assert f"{DEFAULTS['d_model']} (the default) is used instead" in sidebar

    field.fill("1000000000")  # over the cap: the widget says so and keeps the value it had
    field.press("Enter")
    message = page.locator(".st-key-d_model").get_by_text("outside the allowed range")
    message.wait_for(timeout=30_000)
    assert f"between {LIMITS.d_model_min} and {LIMITS.d_model_max}" in message.inner_text()
    page.wait_for_timeout(1000)
    wait_for_app(page)
    assert "d_model=1000000000" not in page.url
    assert f"x [1, 3, {DEFAULTS['d_model']}]" in main_text(page)
    no_errors(page)
