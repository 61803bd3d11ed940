"""URL query parameters <-> plain values, as pure functions (unit-testable: they read no session).

A link is user input. :func:`parse_query_params` turns the raw strings of a query
string into plain control values, :func:`parse_teacher_params` the presentation
values, and both report every value they had to change as a :class:`Problem`
(field, code, params) that the page translates into a warning. Nothing here makes a
tensor: a huge ``d_model`` is clamped to the limit first. Reading and writing the
session's URL is :mod:`components.url_state`'s job. The slides a ``step=`` may name are the page's sections'
(:func:`components.page_sections.slide_order`), read when a link is parsed: that module draws the sections, and
the panels it imports read this one.

Problem codes and their params (``value`` is always the raw text from the link):
    not_integer     the text is not a whole number; ``used`` is the default taken
    out_of_range    the number is outside ``low..high``; ``used`` is the clamped value
    unknown_choice  not one of ``choices``; ``used`` is the default taken
    not_boolean     not one of true/false/1/0/on/off/yes/no; ``used`` is the default taken
    control_chars   ``count`` control or format characters were removed from the text
    too_long_text   the text had more than ``high`` characters; it was cut
    too_many_tokens the text had ``count`` tokens; only the first ``high`` were kept
    unknown_names   (``hide``) names that are no control; ``value`` lists them, the known ones are kept
    hub_id_off      (``hub_id``) the server loads no checkpoint of a learner's own: the value is dropped
    hub_id_form     (``hub_id``) not of the form owner/name: the value is dropped
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import cast

from components.heatmap import COLOR_SCALES
from mha.checkpoints import any_checkpoint_cap_mb, is_hub_id
from mha.config import DOMAINS, LIMITS, AttentionConfig, Domain
from mha.device import DEVICE_CHOICES
from mha.sources.checkpoint.generation import GENERATE_MAX
from mha.tokens import tokenize

__all__ = [
    "DEFAULTS",
    "HIDEABLE",
    "INT_RANGES",
    "SLIDES",
    "STEPS",
    "TEACHER_KEYS",
    "URL_KEYS",
    "VIEW_DOMAINS",
    "ParsedParams",
    "Problem",
    "clean_text",
    "parse_query_params",
    "parse_teacher_params",
    "to_query_params",
]

#: The page's view, mirrored in the link beside the config: the head steps 1 and 2 show, the colour scale, the new
#: tokens a causal checkpoint generates (0: none; ``mha.sources.checkpoint.generation.GENERATE_MAX`` at most).
VIEW_DOMAINS: dict[str, Domain] = {
    "head": Domain("int", 0, LIMITS.num_heads_max - 1),
    "color_scale": Domain("choice", choices=lambda: COLOR_SCALES),
    "generate": Domain("int", 0, GENERATE_MAX),
}
_DOMAINS = {**DOMAINS, **VIEW_DOMAINS}

#: The controls mirrored in the URL, in parsing order: the config's fields (``tokenizer`` before ``tokens``,
#: the token cap counts its tokens), then the view (``num_heads`` before ``head``). Each is also the widget key
#: (``lang`` is handled by components.language).
URL_KEYS = tuple(_DOMAINS)
#: The presentation values (teacher mode) in the URL.
TEACHER_KEYS = ("teacher", "step", "hide")
#: Controls a host may hide while presenting (all of them; ``tokens`` hides the text box and its examples).
HIDEABLE = URL_KEYS
STEPS = 4
SLIDES = STEPS + 1  # the four steps, then the summary and the live check: ``step=1..5`` in a link
_SLIDE_ALIASES = {"summary": str(SLIDES)}

DEFAULTS: dict[str, object] = {
    **{item.name: item.default for item in fields(AttentionConfig)},
    "head": 0,
    "color_scale": COLOR_SCALES[0],
    "generate": 0,
}

INT_RANGES: dict[str, tuple[int, int]] = {
    **{key: (domain.low, domain.high) for key, domain in _DOMAINS.items() if domain.kind == "int"},
    "step": (1, SLIDES),
}

_TRUE = frozenset({"true", "1", "on", "yes"})
_FALSE = frozenset({"false", "0", "off", "no"})
_INTEGER = re.compile(r"[+-]?[0-9]+")  # ASCII digits only: a plain \d would also take "３" or "٣"
_MAX_DIGITS = 18  # more digits than this is out of every range; never hand int() a 5000-digit string
_KEPT_CONTROLS = frozenset("\n\t")
_SCAN_CHARS = 4 * LIMITS.text_chars_max  # a longer value is cut before cleaning: 200 MB would take seconds


@dataclass(frozen=True)
class Problem:
    """One value from the link that could not be used as it was."""

    field: str
    code: str
    params: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class ParsedParams:
    """Usable values (only for the keys present in the link) and what had to change."""

    values: dict[str, object]
    problems: list[Problem]


def clean_text(text: str) -> tuple[str, int]:
    """Remove control and format characters (bidi overrides, NUL, ...) except newline and tab.

    Returns:
        ``(cleaned, removed_count)``.
    """
    kept = [ch for ch in text if ch in _KEPT_CONTROLS or unicodedata.category(ch) not in {"Cc", "Cf", "Cs"}]
    return "".join(kept), len(text) - len(kept)


def _head_range(num_heads: object) -> tuple[int, int]:
    """``head`` must name one of the page's heads: 0 .. num_heads - 1 (when the head count is known)."""
    low, high = INT_RANGES["head"]
    return (low, high) if not isinstance(num_heads, int) else (low, min(high, max(num_heads, 1) - 1))


def _parse_int(key: str, raw: str, low: int, high: int, default: int) -> tuple[int, Problem | None]:
    text = raw.strip()
    if not _INTEGER.fullmatch(text):
        return default, Problem(key, "not_integer", {"value": raw, "used": default})
    if len(text.lstrip("+-")) > _MAX_DIGITS:
        clamped = low if text.startswith("-") else high
    else:
        number = int(text)
        clamped = min(max(number, low), high)
        if clamped == number:
            return number, None
    return clamped, Problem(key, "out_of_range", {"value": raw, "low": low, "high": high, "used": clamped})


def _kv_heads_that_divide(
    raw: str, kv_heads: int | None, problem: Problem | None, num_heads: int
) -> tuple[int | None, Problem | None]:
    """``kv_heads`` if it divides ``num_heads`` (or is unset); else the largest divisor of ``num_heads`` not above
    it, with one problem (in place of an out-of-range one) saying which value is used instead of the link's."""
    if kv_heads is None or num_heads % kv_heads == 0:
        return kv_heads, problem
    used = max(h for h in range(1, min(kv_heads, num_heads) + 1) if num_heads % h == 0)
    divisors = ", ".join(str(h) for h in range(1, num_heads + 1) if num_heads % h == 0)
    return used, Problem(
        "num_kv_heads", "kv_not_dividing", {"value": raw, "num_heads": num_heads, "divisors": divisors, "used": used}
    )


def _parse_choice(key: str, raw: str, choices: Sequence[str]) -> tuple[str, Problem | None]:
    value = raw.strip()
    if value in choices:
        return value, None
    if value.lower() in choices:
        return value.lower(), None
    default = str(DEFAULTS[key]) if DEFAULTS[key] in choices else (choices[0] if choices else "")
    return default, Problem(key, "unknown_choice", {"value": raw, "choices": ", ".join(choices), "used": default})


#: Old links' on/off ``positional`` (before RoPE): on = the sinusoids, off = no positions.
_OLD_POSITIONAL = {**dict.fromkeys(_TRUE, "sinusoidal"), **dict.fromkeys(_FALSE, "none")}


def _parse_bool(key: str, raw: str, default: bool) -> tuple[bool, Problem | None]:
    value = raw.strip().lower()
    if value in _TRUE:
        return True, None
    if value in _FALSE:
        return False, None
    return default, Problem(key, "not_boolean", {"value": raw, "used": str(default).lower()})


def _parse_hub_id(raw: str) -> tuple[str, Problem | None]:
    """A learner's own checkpoint: kept where the server allows one and it reads ``owner/name``, else dropped."""
    value = raw.strip()
    if not value:
        return "", None
    if any_checkpoint_cap_mb() is None:
        return "", Problem("hub_id", "hub_id_off", {"value": raw})
    if not is_hub_id(value):
        return "", Problem("hub_id", "hub_id_form", {"value": raw})
    return value, None


def _parse_tokens(raw: str, tokenizer: str) -> tuple[str, list[Problem]]:
    problems = []
    text, removed = clean_text(raw[:_SCAN_CHARS])
    if removed:
        problems.append(Problem("tokens", "control_chars", {"value": raw, "count": removed}))
    if len(raw) > _SCAN_CHARS or len(text) > LIMITS.text_chars_max:
        problems.append(Problem("tokens", "too_long_text", {"value": raw, "high": LIMITS.text_chars_max}))
        text = text[: LIMITS.text_chars_max]
    tokens = tokenize(text, tokenizer)
    if len(tokens) > LIMITS.tokens_max:
        problems.append(
            Problem("tokens", "too_many_tokens", {"value": raw, "count": len(tokens), "high": LIMITS.tokens_max})
        )
        text = " ".join(tokens[: LIMITS.tokens_max])  # the same first tokens: spaces keep each one whole
    return text, problems


def parse_query_params(
    params: Mapping[str, str], devices: Sequence[str] = DEVICE_CHOICES, num_heads: int | None = None
) -> ParsedParams:
    """Parse the control values present in a query string.

    Args:
        params: query parameter name -> raw string (the last value when a name repeats).
            Names outside :data:`URL_KEYS` are ignored.
        devices: the device choices offered on this machine (e.g. ``("auto", "cpu")``).
        num_heads: the page's head count, which ``head`` must stay below (the link's own
            ``num_heads`` wins); when neither is known, ``head`` is clamped to the largest head count.

    Returns:
        Values for the keys present (clamped or defaulted where needed) and one
        :class:`Problem` per changed value.
    """
    values: dict[str, object] = {}
    problems: list[Problem] = []
    for key in URL_KEYS:
        if key not in params:
            continue
        raw = str(params[key])
        problem: Problem | None = None
        domain = _DOMAINS[key]
        if domain.kind == "int":
            low, high = _head_range(values.get("num_heads", num_heads)) if key == "head" else INT_RANGES[key]
            default = values.get("num_heads", num_heads) if key == "num_kv_heads" else DEFAULTS[key]
            values[key], problem = _parse_int(key, raw, low, high, cast(int, default))
            if key == "num_kv_heads":
                heads = cast(int, DEFAULTS["num_heads"] if default is None else default)
                values[key], problem = _kv_heads_that_divide(raw, values[key], problem, heads)
            if problem is None and domain.values and values[key] not in domain.values:
                values[key], problem = _parse_choice(key, raw, tuple(map(str, domain.values)))
                values[key] = int(values[key])
        elif key == "positional" and raw.strip().lower() in _OLD_POSITIONAL:
            values[key] = _OLD_POSITIONAL[raw.strip().lower()]
        elif domain.kind == "choice":
            values[key], problem = _parse_choice(key, raw, tuple(devices) if key == "device" else domain.options())
        elif domain.kind == "bool":
            values[key], problem = _parse_bool(key, raw, bool(DEFAULTS[key]))
        elif key == "hub_id":
            values[key], problem = _parse_hub_id(raw)
        else:  # text: the tokens
            tokenizer = str(values.get("tokenizer", DEFAULTS["tokenizer"]))
            values[key], token_problems = _parse_tokens(raw, tokenizer)
            problems.extend(token_problems)
        if problem is not None:
            problems.append(problem)
    return ParsedParams(values, problems)


def to_query_params(values: Mapping[str, object]) -> dict[str, str | None]:
    """Control values -> query strings, the inverse of :func:`parse_query_params` for valid values.

    An empty ``hub_id`` (no checkpoint of the learner's own) is ``None``: the name leaves the link, as does a
    ``num_kv_heads`` equal to ``num_heads`` (the tutorials' layer: a link without it means as many).
    """
    out: dict[str, str | None] = {}
    for key in URL_KEYS:
        if key in values:
            value = values[key]
            out[key] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    if out.get("hub_id") == "":
        out["hub_id"] = None
    if "num_kv_heads" in out and out["num_kv_heads"] in (out.get("num_heads"), "None"):
        out["num_kv_heads"] = None
    return out


def _parse_hide(raw: str) -> tuple[tuple[str, ...], Problem | None]:
    names = {part.strip().lower() for part in raw.split(",")} - {""}
    unknown = sorted(names - set(HIDEABLE))
    known = tuple(name for name in HIDEABLE if name in names)
    if not unknown:
        return known, None
    return known, Problem("hide", "unknown_names", {"value": ", ".join(unknown), "choices": ", ".join(HIDEABLE)})


def _parse_slide(raw: str) -> tuple[str, Problem | None]:
    """A slide's name, or its number (1..SLIDES: the steps, then the summary) as links have always named it."""
    from components.page_sections import slide_order  # the page's sections import the panels, which read this module

    text = raw.strip().lower()
    if text in _SLIDE_ALIASES:
        return _SLIDE_ALIASES[text], None
    if text in slide_order() and not text.isdigit():
        return text, None
    if not text or any(ch.isdigit() for ch in text):  # meant as a number
        number, problem = _parse_int("step", raw, *INT_RANGES["step"], default=1)
        return str(number), problem
    names = ", ".join(sorted({*slide_order(), *_SLIDE_ALIASES}, key=lambda n: (not n.isdigit(), n)))
    return "1", Problem("step", "unknown_choice", {"value": raw, "choices": names, "used": "1"})


def parse_teacher_params(params: Mapping[str, str]) -> ParsedParams:
    """Parse the presentation values present in a query string.

    Args:
        params: query parameter name -> raw string; names outside :data:`TEACHER_KEYS` are ignored.

    Returns:
        Values for the names present (``teacher``: bool, ``step``: a slide's name from
        :func:`components.page_sections.slide_order`, the
        numbers as text, ``"1"`` .. ``"5"``; ``hide``: tuple of known control keys, in :data:`HIDEABLE` order) and one
        :class:`Problem` per value that was changed: ``not_boolean`` (teacher), ``not_integer`` / ``out_of_range``
        (a step's number), ``unknown_choice`` (a word that names no slide), ``unknown_names`` (hide).
    """
    values: dict[str, object] = {}
    problems: list[Problem | None] = []
    if "teacher" in params:
        values["teacher"], problem = _parse_bool("teacher", str(params["teacher"]), False)
        problems.append(problem)
    if "step" in params:
        values["step"], problem = _parse_slide(str(params["step"]))
        problems.append(problem)
    if "hide" in params:
        values["hide"], problem = _parse_hide(str(params["hide"]))
        problems.append(problem)
    return ParsedParams(values, [problem for problem in problems if problem is not None])
