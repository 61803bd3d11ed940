"""Hostile input in a real Chromium, through the link and through the widgets.

Nothing a user types or puts in a link may run: an ``<img src=x onerror=...>``, a ``<script>``
and an ``<svg onload=...>`` in the tokens, in an unknown mask name and in the language. Each
payload would set ``window.__pwned`` and open an ``alert``; the test listens for dialogs, reads
the sentinel, and queries the DOM for any element the payload would have created. The raw
tags may appear as text (in a warning, as chart labels), never as elements.

Other hostile input (right-to-left text, U+202E, emoji, control characters, 20,000 tokens,
non-numbers, huge numbers) gets a message and a clamped or default value, and the page keeps
drawing its charts with no traceback and no console error.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from conftest import console_errors, wait_for_app

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
LABELS = """() => Array.from(document.querySelectorAll('.vega-embed'))
    .map(chart => Array.from(chart.querySelectorAll('.role-axis-label text')).map(node => node.textContent))"""
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
    page.goto(f"{base}/?{urlencode(params)}")
    wait_for_app(page)


def wait_for_labels(page, condition: str) -> list[list[str]]:
    """Wait until the charts' axis labels satisfy a JS condition on ``labels`` (a list of strings per chart)."""
    page.wait_for_function(
        f"""() => {{ const charts = ({LABELS})().filter(labels => labels.length);
            return charts.length > 0 && charts.every(labels => {condition}); }}""",
        timeout=60_000,
    )
    wait_for_app(page)
    return [labels for labels in page.evaluate(LABELS) if labels]


def token_labels(labels: list[list[str]]) -> set[str]:
    """The position-prefixed token labels (``3:the``) among all axis labels (feature axes show plain numbers)."""
    return {label for chart in labels for label in chart if re.match(r"^[0-9]+:", label)}


def type_text(page, text: str) -> None:
    area = page.locator(".st-key-tokens textarea")
    area.fill(text)
    area.press("Control+Enter")


def no_traceback(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0
    assert "Traceback" not in page.locator('[data-testid="stApp"]').inner_text()
    assert console_errors(page) == []


def nothing_ran(page, dialogs: list[str]) -> None:
    page.wait_for_timeout(500)  # an onerror of a broken image fires as soon as the element exists
    assert dialogs == []
    assert page.evaluate(INJECTED) == NOTHING_INJECTED


# ---------------------------------------------------------------- script and HTML
def test_payloads_in_the_link_do_not_run(app_url, page, dialogs):
    tokens = f"hello {IMG} {SCRIPT} {SVG} {LINK} end"
    open_link(page, app_url, d_model="64", num_heads="4", tokens=tokens, mask_type=IMG, lang=SCRIPT)
    labels = wait_for_labels(page, "labels.includes('0:hello')")
    nothing_ran(page, dialogs)
    assert token_labels(labels) <= {f"{i}:{token}" for i, token in enumerate(tokenize(tokens))}
    alerts = "\n".join(page.evaluate(ALERTS))
    assert "<img src=x onerror=" in alerts  # the bad mask name, shown as text in the warning
    assert "<script>" in page.locator('[data-testid="stSidebar"]').inner_text()  # the bad language, as text
    assert page.locator(".st-key-mask_type input").input_value() == t("mask.none", lang="en")
    no_traceback(page)


def test_payloads_typed_into_the_text_do_not_run(app_url, page, dialogs):
    open_link(page, app_url, d_model="64", num_heads="4", tokens="the cat sat")
    for payload in (IMG, SCRIPT, f"{SVG} {LINK}"):
        type_text(page, f"start {payload}")
        expected = tokenize(f"start {payload}")
        last = f"{len(expected) - 1}:{expected[-1]}"
        wait_for_labels(page, f"labels.includes({last!r}) && labels.includes('0:start')")
        nothing_ran(page, dialogs)
        token_line = page.get_by_text("Tokens (L =").inner_text()
        assert expected[1] in token_line  # "<" (or "[") shown as a character
    no_traceback(page)


# ---------------------------------------------------------------- text that is odd but harmless
def test_right_to_left_override_emoji_and_control_characters(app_url, page, dialogs):
    raw = f"{RTL} {RLO}evil I ❤ 🐍\x00 end\x07"
    open_link(page, app_url, d_model="64", num_heads="4", tokens=raw)
    labels = wait_for_labels(page, "labels.includes('0:مرحبا')")
    assert not any(RLO in label or "\x00" in label for chart in labels for label in chart)
    assert any("invisible control characters" in alert for alert in page.evaluate(ALERTS))
    cleaned = tokenize(raw.replace(RLO, "").replace("\x00", "").replace("\x07", ""))
    assert token_labels(labels) <= {f"{i}:{token}" for i, token in enumerate(cleaned)}
    assert f"{len(cleaned) - 1}:end" in token_labels(labels)

    type_text(page, f"abc {RLO}def 🙂")  # typed: the same characters are ignored, with a note
    wait_for_labels(page, "labels.includes('1:def') && labels.includes('2:🙂')")
    sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
    assert "1 invisible control or direction characters" in sidebar
    nothing_ran(page, dialogs)
    no_traceback(page)


def test_twenty_thousand_tokens_by_link_and_by_paste(app_url, page):
    words = [f"w{i}" for i in range(20_000)]
    open_link(page, app_url, d_model="64", num_heads="4", tokens=" ".join(words))
    wait_for_labels(page, f"labels.includes('{LIMITS.tokens_max - 1}:{words[LIMITS.tokens_max - 1]}')")
    alerts = "\n".join(page.evaluate(ALERTS))
    assert f"cut to {LIMITS.text_chars_max}" in alerts and f"only the first {LIMITS.tokens_max}" in alerts
    kept = page.locator(".st-key-tokens textarea").input_value()
    assert tokenize(kept) == words[: LIMITS.tokens_max]

    area = page.locator(".st-key-tokens textarea")
    area.click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(" ".join(words))  # a paste over the 2000-character cap: the box refuses it
    assert area.input_value() == kept

    area.fill(" ".join(["w"] * (LIMITS.text_chars_max // 2)))  # 2000 characters: 1000 tokens, over the cap
    area.press("Control+Enter")
    page.wait_for_selector('[data-testid="stAlertContentError"]', timeout=60_000)
    error = page.locator('[data-testid="stAlertContentError"]').inner_text()
    assert "1000 tokens" in error and str(LIMITS.tokens_max) in error
    no_traceback(page)


# ---------------------------------------------------------------- numbers
def test_huge_and_negative_numbers_in_the_link_are_clamped(app_url, page):
    open_link(page, app_url, d_model="1000000000", num_heads="-3", window="1e9", seed="-1", tokens="a b c")
    wait_for_labels(page, "labels.includes('0:a')")
    assert page.locator(".st-key-d_model input").input_value() == str(LIMITS.d_model_max)
    assert page.locator(".st-key-num_heads input").input_value() == "1"
    assert page.locator(".st-key-window input").input_value() == str(DEFAULTS["window"])
    alerts = "\n".join(page.evaluate(ALERTS))
    for name in ("d_model", "num_heads", "window", "seed"):
        assert f"“{name}”" in alerts
    assert page.get_by_text(f"[1, 3, {LIMITS.d_model_max}]").count() >= 1
    no_traceback(page)


def test_non_numbers_and_out_of_range_numbers_typed(app_url, page):
    open_link(page, app_url, d_model="64", num_heads="4", tokens="a b c")
    field = page.locator(".st-key-d_model input")
    field.fill("")
    field.press_sequentially("abc")  # a number field takes no letters: it stays empty
    field.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"stSidebar\"]').innerText.includes('(the default) is used')",
        timeout=60_000,
    )
    wait_for_app(page)
    assert field.input_value() == str(DEFAULTS["d_model"])
    assert page.get_by_text(f"[1, 3, {DEFAULTS['d_model']}]").count() >= 1

    field.fill("1000000000")  # over the cap: the widget says so and keeps the value it had
    field.press("Enter")
    message = page.locator(".st-key-d_model").get_by_text("outside the allowed range")
    message.wait_for(timeout=30_000)
    assert f"between {LIMITS.d_model_min} and {LIMITS.d_model_max}" in message.inner_text()
    page.wait_for_timeout(1000)
    wait_for_app(page)
    assert "d_model=1000000000" not in page.url
    assert page.get_by_text(f"[1, 3, {DEFAULTS['d_model']}]").count() >= 1
    no_traceback(page)
