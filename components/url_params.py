"""URL query parameters <-> control values, as pure functions (no Streamlit: unit-testable).

A link is user input. :func:`parse_query_params` turns the raw strings of a query
string into plain control values, and reports every value it had to change as a
:class:`Problem` (field, code, params) that the page translates into a warning.
Nothing here makes a tensor: a huge ``d_model`` is clamped to the limit first.

Problem codes and their params (``value`` is always the raw text from the link):
    not_integer     the text is not a whole number; ``used`` is the default taken
    out_of_range    the number is outside ``low..high``; ``used`` is the clamped value
    unknown_choice  not one of ``choices``; ``used`` is the default taken
    not_boolean     not one of true/false/1/0/on/off/yes/no; ``used`` is the default taken
    control_chars   ``count`` control or format characters were removed from the text
    too_long_text   the text had more than ``high`` characters; it was cut
    too_many_tokens the text had ``count`` tokens; only the first ``high`` were kept
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from mha.config import LIMITS, AttentionConfig
from mha.device import DEVICE_CHOICES
from mha.masks import MASK_TYPES
from mha.tokens import tokenize

__all__ = [
    "DEFAULTS",
    "INT_RANGES",
    "URL_KEYS",
    "ParsedParams",
    "Problem",
    "clean_text",
    "parse_query_params",
    "to_query_params",
]

_DEFAULT_CONFIG = AttentionConfig()

#: The controls mirrored in the URL; each is also the widget key (``lang`` is handled by components.language).
URL_KEYS = ("d_model", "num_heads", "mask_type", "window", "tokens", "seed", "positional", "device", "head")

DEFAULTS: dict[str, object] = {
    "d_model": _DEFAULT_CONFIG.d_model,
    "num_heads": _DEFAULT_CONFIG.num_heads,
    "mask_type": _DEFAULT_CONFIG.mask_type,
    "window": _DEFAULT_CONFIG.window,
    "tokens": _DEFAULT_CONFIG.tokens,
    "seed": _DEFAULT_CONFIG.seed,
    "positional": _DEFAULT_CONFIG.positional,
    "device": _DEFAULT_CONFIG.device,
    "head": 0,
}

INT_RANGES: dict[str, tuple[int, int]] = {
    "d_model": (LIMITS.d_model_min, LIMITS.d_model_max),
    "num_heads": (1, LIMITS.num_heads_max),
    "window": (0, LIMITS.tokens_max),
    "seed": (0, LIMITS.seed_max),
    "head": (0, LIMITS.num_heads_max - 1),
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


def _parse_int(key: str, raw: str, low: int, high: int) -> tuple[int, Problem | None]:
    text = raw.strip()
    if not _INTEGER.fullmatch(text):
        default = int(DEFAULTS[key])  # type: ignore[call-overload]
        return default, Problem(key, "not_integer", {"value": raw, "used": default})
    if len(text.lstrip("+-")) > _MAX_DIGITS:
        clamped = low if text.startswith("-") else high
    else:
        number = int(text)
        clamped = min(max(number, low), high)
        if clamped == number:
            return number, None
    return clamped, Problem(key, "out_of_range", {"value": raw, "low": low, "high": high, "used": clamped})


def _parse_choice(key: str, raw: str, choices: Sequence[str]) -> tuple[str, Problem | None]:
    value = raw.strip().lower()
    if value in choices:
        return value, None
    default = str(DEFAULTS[key])
    return default, Problem(key, "unknown_choice", {"value": raw, "choices": ", ".join(choices), "used": default})


def _parse_bool(key: str, raw: str) -> tuple[bool, Problem | None]:
    value = raw.strip().lower()
    if value in _TRUE:
        return True, None
    if value in _FALSE:
        return False, None
    default = bool(DEFAULTS[key])
    return default, Problem(key, "not_boolean", {"value": raw, "used": str(default).lower()})


def _parse_tokens(raw: str) -> tuple[str, list[Problem]]:
    problems = []
    text, removed = clean_text(raw[:_SCAN_CHARS])
    if removed:
        problems.append(Problem("tokens", "control_chars", {"value": raw, "count": removed}))
    if len(raw) > _SCAN_CHARS or len(text) > LIMITS.text_chars_max:
        problems.append(Problem("tokens", "too_long_text", {"value": raw, "high": LIMITS.text_chars_max}))
        text = text[: LIMITS.text_chars_max]
    tokens = tokenize(text)
    if len(tokens) > LIMITS.tokens_max:
        problems.append(
            Problem("tokens", "too_many_tokens", {"value": raw, "count": len(tokens), "high": LIMITS.tokens_max})
        )
        text = " ".join(tokens[: LIMITS.tokens_max])  # the same first tokens, re-tokenised identically
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
        if key in INT_RANGES:
            low, high = _head_range(values.get("num_heads", num_heads)) if key == "head" else INT_RANGES[key]
            values[key], problem = _parse_int(key, raw, low, high)
        elif key == "mask_type":
            values[key], problem = _parse_choice(key, raw, MASK_TYPES)
        elif key == "device":
            values[key], problem = _parse_choice(key, raw, tuple(devices))
        elif key == "positional":
            values[key], problem = _parse_bool(key, raw)
        else:  # tokens
            values[key], token_problems = _parse_tokens(raw)
            problems.extend(token_problems)
        if problem is not None:
            problems.append(problem)
    return ParsedParams(values, problems)


def to_query_params(values: Mapping[str, object]) -> dict[str, str]:
    """Control values -> query strings, the inverse of :func:`parse_query_params` for valid values."""
    out = {}
    for key in URL_KEYS:
        if key in values:
            value = values[key]
            out[key] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return out
