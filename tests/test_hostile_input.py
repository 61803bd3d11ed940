"""Hostile input through URL query parameters and through the widgets (AppTest), and the pure helpers.

Every input gets a clear message and a clamped or default value, and the page keeps
working: no exception, its title, its parameter summary. User text is never markdown
or HTML: every ``<`` of a payload reaches the page escaped (``\\<``), and in the charts
only as data (Vega draws it as text on its canvas).

Small sizes (d_model 64, 4 heads, a few tokens) keep each page run short.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import HeadPicker, headings, heatmaps
from streamlit.testing.v1 import AppTest

from components.safe_text import markdown_table, md_escape, printable
from components.url_params import DEFAULTS, clean_text, parse_query_params
from mha.config import LIMITS
from mha.tokens import tokenize

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
SMALL = {"d_model": "64", "num_heads": "4", "tokens": "the cat sat"}
IMG = "<img src=x onerror=alert(1)>"
SCRIPT_TAG = "<script>window.__pwned=1</script>"
RTL = "مرحبا بالعالم שלום עולם"
RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: would flip how the rest of a label reads
EMOJI = "I ❤ 🐍 and 🇨🇳"
TEXT_KINDS = ("title", "header", "subheader", "markdown", "caption", "error", "warning", "info", "success")
UNESCAPED_TAG = re.compile(r"(?<!\\)<\s*(img|script|a|iframe|svg)", re.IGNORECASE)


# ---------------------------------------------------------------- helpers
def open_page(**params: str) -> AppTest:
    """Run the page once with these URL query parameters."""
    at = AppTest.from_file(SCRIPT, default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def texts(at: AppTest) -> list[str]:
    """The text of every markdown-like element (main area and sidebar)."""
    return [str(element.value) for kind in TEXT_KINDS for element in at.get(kind)]


def chart_labels(at: AppTest) -> list[list[str]]:
    """The token labels of every chart (its rows, and its columns where they are tokens), one list per axis."""
    found = []
    for figure in heatmaps(at):
        found.append(list(figure.row_labels))
        if figure.col_labels is not None:
            found.append(list(figure.col_labels))
    return found


def messages(at: AppTest, field: str) -> list[str]:
    """Warnings and errors (main area and sidebar) that name ``field`` in quotes."""
    return [str(m.value) for kind in ("warning", "error") for m in at.get(kind) if f"“{field}”" in str(m.value)]


def page_keeps_working(at: AppTest) -> None:
    """No exception, no traceback text, no live HTML in any text; the title and the summary are there."""
    assert not at.exception, [e.value for e in at.exception]
    every = texts(at)
    assert headings(at, 1) == ["Attention Playground"]
    assert not [text for text in every if "Traceback" in text]
    assert not [text for text in every if UNESCAPED_TAG.search(text)], [t for t in every if UNESCAPED_TAG.search(t)]
    d_model = at.number_input(key="d_model").value
    assert f"{4 * d_model**2 + 4 * d_model:,}" in "\n".join(every)  # the summary's tables are Markdown


def runs(at: AppTest) -> bool:
    """The page got to the charts (the config was runnable)."""
    return len(heatmaps(at)) >= 4  # steps 1-4 (the all-heads grid may be summarised as bars)


# ---------------------------------------------------------------- pure: parsing and escaping
def test_a_giant_number_is_clamped_without_int_ever_seeing_it(monkeypatch):
    import components.url_params as url_params

    seen: list[int] = []

    def counting_int(text: str) -> int:
        seen.append(len(text))
        return int(text)

    monkeypatch.setattr(url_params, "int", counting_int, raising=False)
    parsed = parse_query_params({"d_model": "1000000000", "num_heads": "9" * 100_000, "seed": "-" + "9" * 100_000})
    assert parsed.values["d_model"] == LIMITS.d_model_max
    assert parsed.values["num_heads"] == LIMITS.num_heads_max
    assert parsed.values["seed"] == 0
    assert seen and max(seen) <= 18  # only short texts reach int(); the 100,000-digit ones never do


def test_a_megabyte_link_value_is_cut_before_it_is_cleaned(monkeypatch):
    import components.url_params as url_params

    cleaned_lengths: list[int] = []

    def spying_clean_text(text: str) -> tuple[str, int]:
        cleaned_lengths.append(len(text))
        return clean_text(text)

    monkeypatch.setattr(url_params, "clean_text", spying_clean_text)
    raw = "w " * 500_000 + "\x00" * 500_000  # 1.5 M characters
    parsed = parse_query_params({"tokens": raw})
    assert cleaned_lengths == [4 * LIMITS.text_chars_max]  # the work does not grow with the link
    assert len(parsed.values["tokens"]) <= LIMITS.text_chars_max
    assert len(tokenize(parsed.values["tokens"])) == LIMITS.tokens_max
    assert {problem.code for problem in parsed.problems} == {"too_long_text", "too_many_tokens"}


@pytest.mark.parametrize(
    "payload",
    [
        IMG,
        SCRIPT_TAG,
        "[click](javascript:alert(1))",
        "![x](http://127.0.0.1:1/x.png)",
        "$\\href{javascript:alert(1)}{x}$",
        ":red[boom] :material/warning: **bold**",
        "<a href='javascript:alert(1)'>x</a>",
    ],
)
def test_md_escape_disarms_markdown_and_html(payload):
    escaped = md_escape(payload, limit=200)
    assert not UNESCAPED_TAG.search(escaped)
    # every ASCII punctuation mark is escaped: no markdown construct can start
    assert not re.search(r"(?<!\\)[<>\[\]()$*:!`]", escaped)
    assert escaped.replace("\\", "") == payload.replace("\\", "")


def test_a_markdown_table_keeps_escaped_user_text_in_its_cell():
    labels = [md_escape(token, limit=40) for token in ("a|b", SCRIPT_TAG, "[x](javascript:alert(1))")]
    table = markdown_table(pd.DataFrame([["0.1", "0.2", "0.3"]], index=["row"], columns=labels))
    header, rule, row = table.splitlines()
    cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", header)[1:-1]]
    assert cells == ["", *labels]  # one cell per label: its escaped | does not split it
    assert rule == "| --- | --- | --- | --- |" and row == "| row | 0.1 | 0.2 | 0.3 |"
    assert not UNESCAPED_TAG.search(table)


def test_printable_drops_bidi_and_control_characters_and_is_bounded(monkeypatch):
    import components.safe_text as safe_text

    assert printable(f"a{RLO}b\x00c\u200bd\u2066e") == "abcde"
    assert printable("x\ny\tz") == "x y z"
    assert printable("a" * 1000, limit=10) == "a" * 9 + "…"
    looked_at: list[str] = []

    class CountingUnicodedata:
        @staticmethod
        def category(ch: str) -> str:
            looked_at.append(ch)
            return unicodedata.category(ch)

    monkeypatch.setattr(safe_text, "unicodedata", CountingUnicodedata)
    assert printable("\x00" * 10_000_000 + "visible", limit=40) == "…"
    assert len(looked_at) <= 8 * 40  # a bounded look at the start, not 10 million characters


def test_clean_text_keeps_every_script_and_emoji_but_no_direction_override():
    assert clean_text(RTL) == (RTL, 0)
    assert clean_text(EMOJI) == (EMOJI, 0)
    assert clean_text(f"abc{RLO}def\u2067") == ("abcdef", 2)


# ---------------------------------------------------------------- URL parameters, through the page
@pytest.mark.parametrize(
    ("params", "field", "used"),
    [
        ({"d_model": "abc"}, "d_model", 512),
        ({"d_model": "５１２"}, "d_model", 512),  # full-width digits are not ASCII digits
        ({"d_model": "1000000000", "num_heads": "4"}, "d_model", LIMITS.d_model_max),
        ({"d_model": "9" * 5000, "num_heads": "4"}, "d_model", LIMITS.d_model_max),
        ({"d_model": "-64", "num_heads": "1"}, "d_model", LIMITS.d_model_min),
        ({"num_heads": "0"}, "num_heads", 1),
        ({"num_heads": "1e9"}, "num_heads", 8),
        ({"num_heads": "65"}, "num_heads", LIMITS.num_heads_max),
        ({"window": "-1", "mask_type": "window"}, "window", 0),
        ({"window": "99999999999999999999", "mask_type": "window"}, "window", LIMITS.tokens_max),
        ({"seed": "-1"}, "seed", 0),
        ({"seed": "NaN"}, "seed", 0),
    ],
)
def test_bad_numbers_in_the_link(params, field, used):
    at = open_page(**{**SMALL, **params})
    page_keeps_working(at)
    (message,) = messages(at, field)
    assert str(used) in message
    assert at.number_input(key=field).value == used
    assert at.query_params[field] == str(used)  # the link is rewritten to what is shown


@pytest.mark.parametrize(
    ("key", "raw", "used"),
    [
        ("mask_type", "<script>alert(1)</script>", "none"),
        ("mask_type", "diagonal", "none"),
        ("device", "tpu", "auto"),
        ("positional", "maybe", "sinusoidal"),
    ],
)
def test_unknown_choices_in_the_link(key, raw, used):
    at = open_page(**{**SMALL, key: raw})
    page_keeps_working(at)
    assert runs(at)
    (message,) = messages(at, key)
    assert md_escape(raw, limit=40) in message  # the bad value, escaped, in the message
    widget = at.radio(key=key) if key == "positional" else at.selectbox(key=key)
    assert widget.value == used


def test_a_bad_language_in_the_link_falls_back_to_english():
    at = open_page(**SMALL, lang=IMG)
    page_keeps_working(at)
    (warning,) = [w.value for w in at.sidebar.warning]
    assert md_escape(IMG) in warning and "en, zh" in warning
    assert at.selectbox(key="lang").value == "en"


def test_an_unknown_head_is_clamped():
    at = open_page(**SMALL, head="999")
    page_keeps_working(at)
    assert HeadPicker(at).value == 3  # 4 heads: the last one
    (message,) = messages(at, "head")
    assert "0..3" in message and "using 3" in message


def test_twenty_thousand_tokens_in_the_link_are_cut_to_the_limit():
    words = [f"w{i}" for i in range(20_000)]
    at = open_page(d_model="64", num_heads="4", tokens=" ".join(words))
    page_keeps_working(at)
    assert runs(at)
    text = "\n".join(messages(at, "tokens"))
    assert f"{LIMITS.text_chars_max}" in text  # cut to 2000 characters first
    assert f"only the first {LIMITS.tokens_max}" in text
    kept = tokenize(at.text_area(key="tokens").value)
    assert kept == words[: LIMITS.tokens_max]
    assert all(len(labels) == LIMITS.tokens_max for labels in chart_labels(at))


@pytest.mark.parametrize(
    ("raw", "removed", "tokens"),
    [
        ("the\x00 cat\x1b sat\x7f", 3, ["the", "cat", "sat"]),
        (f"{RLO}evil ok\u2066", 2, ["evil", "ok"]),
        (f"{RTL} {RLO}", 1, tokenize(RTL)),
    ],
)
def test_control_and_direction_characters_in_the_link(raw, removed, tokens):
    at = open_page(d_model="64", num_heads="4", tokens=raw)
    page_keeps_working(at)
    (message,) = messages(at, "tokens")
    assert f"{removed} invisible" in message
    assert tokenize(at.text_area(key="tokens").value) == tokens
    for labels in chart_labels(at):
        assert labels == [f"{i}:{token}" for i, token in enumerate(tokens)]


@pytest.mark.parametrize("payload", [f"hello {IMG} world", f"a {SCRIPT_TAG} b", "[x](javascript:alert(1)) y"])
def test_html_and_script_in_the_link_are_shown_as_text(payload):
    at = open_page(d_model="64", num_heads="4", tokens=payload)
    page_keeps_working(at)
    assert runs(at)
    expected = tokenize(payload)
    for labels in chart_labels(at):  # the charts get the tokens as data, nothing more
        assert labels == [f"{i}:{token}" for i, token in enumerate(expected)]
    (line,) = [text for text in texts(at) if text.startswith("**Tokens**")]
    assert "\\<" in line or "\\[" in line  # escaped in the markdown token line


@pytest.mark.parametrize(("raw", "fragment"), [("", "no tokens"), ("   \n\t ", "no tokens"), ("\x00\x01", "no tokens")])
def test_a_link_with_no_tokens_explains_itself(raw, fragment):
    at = open_page(d_model="64", num_heads="4", tokens=raw)
    page_keeps_working(at)
    assert not runs(at)
    assert any(fragment in error.value for error in at.error)


# ---------------------------------------------------------------- typed into the widgets
@pytest.fixture(scope="module")
def small_page() -> AppTest:
    """One small page that the widget tests below type into, one after another."""
    return open_page(**SMALL)


def _type_tokens(at: AppTest, text: str) -> AppTest:
    return at.text_area(key="tokens").set_value(text).run()


@pytest.mark.parametrize(
    ("typed", "removed", "tokens"),
    [
        ("the\x00 cat\x1b sat", 2, ["the", "cat", "sat"]),
        (f"abc {RLO}def", 1, ["abc", "def"]),
        (f"{RTL}", 0, tokenize(RTL)),
        (EMOJI, 0, tokenize(EMOJI)),
    ],
)
def test_typed_text_with_control_direction_rtl_and_emoji(small_page, typed, removed, tokens):
    at = _type_tokens(small_page, typed)
    page_keeps_working(at)
    assert runs(at)
    note = f"The text contains {removed} invisible control or direction characters; they are ignored."
    assert [w.value for w in at.sidebar.warning if "invisible" in w.value] == ([note] if removed else [])
    for labels in chart_labels(at):
        assert labels == [f"{i}:{token}" for i, token in enumerate(tokens)]
        assert not any(RLO in label or "\x00" in label for label in labels)


@pytest.mark.parametrize("payload", [f"x {IMG} y", f"{SCRIPT_TAG} z", "<b>bold</b> <iframe src=x>"])
def test_typed_html_and_script_are_shown_as_text(small_page, payload):
    at = _type_tokens(small_page, payload)
    page_keeps_working(at)
    assert runs(at)
    for labels in chart_labels(at):
        assert labels == [f"{i}:{token}" for i, token in enumerate(tokenize(payload))]


def test_typed_twenty_thousand_tokens_are_refused_with_the_count(small_page):
    at = _type_tokens(small_page, " ".join(["w"] * 20_000))
    page_keeps_working(at)
    assert not runs(at)
    (error,) = at.error
    # the text area keeps at most 2000 characters: 1000 one-letter tokens, over the cap of 128
    assert "1000 tokens" in error.value and str(LIMITS.tokens_max) in error.value


def test_typed_chinese_over_the_cap_is_refused(small_page):
    at = _type_tokens(small_page, "注意力" * 50)  # 150 characters, one token each
    page_keeps_working(at)
    (error,) = at.error
    assert "150 tokens" in error.value


@pytest.mark.parametrize(("key", "value"), [("d_model", None), ("num_heads", None), ("seed", None), ("d_model", 10**9)])
def test_an_emptied_or_impossible_number_gets_its_default_with_a_note(small_page, key, value):
    at = _type_tokens(small_page, "the cat sat")
    at.number_input(key=key).set_value(value).run()
    page_keeps_working(at)
    assert at.number_input(key=key).value == DEFAULTS[key]
    notes = [w.value for w in at.sidebar.warning if f"“{key}”" in w.value]
    assert notes == [f"“{key}” was empty, not a number or out of range: {DEFAULTS[key]} (the default) is used instead."]
    at.run()  # the note was about that change: it does not stay
    assert not [w.value for w in at.sidebar.warning if f"“{key}”" in w.value]
    at.number_input(key="d_model").set_value(64).run()
    at.number_input(key="num_heads").set_value(4).run()


def test_padding_mask_over_only_pad_tokens_gives_zeros_with_a_note():
    at = open_page(d_model="64", num_heads="4", mask_type="padding", tokens="[PAD] [PAD]")
    page_keeps_working(at)
    assert any("all weights are zero (not NaN)" in warning.value for warning in at.warning)
    panels = [panel for figure in heatmaps(at) for panel in figure.panels if figure.row_title == "query token"]
    for panel in panels:
        # a score of -inf is drawn as a grey "masked" cell; nothing else may be infinite or NaN
        assert panel.masked[~np.isfinite(panel.values)].all()
        assert not np.isnan(panel.values).any()
    raw = [panel for panel in panels if not panel.masked.any()]  # raw scores: before the mask
    masked = [panel for panel in panels if panel.masked.all()]  # every key is [PAD]: all blocked
    assert len(raw) + len(masked) == len(panels) and raw and masked
    assert all(np.isfinite(panel.values).all() for panel in raw)
    # the weights (the chosen head large, and every head of the grid) are exact zeros, never NaN
    weights = [panel for panel in masked if np.isfinite(panel.values).all()]
    assert len(weights) == 1 + 4
    assert all((panel.values == 0).all() for panel in weights)
    assert any("Grey cells with × are masked" in caption.value for caption in at.caption)
