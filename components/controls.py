"""Sidebar controls -> plain values -> a validated config; the URL mirrors the controls.

Widget keys are the contract's names (``d_model``, ``num_heads``, ``mask_type``,
``window``, ``tokens``, ``seed``) plus ``positional`` and ``device``; each widget's
value is the plain value, translated for display with ``format_func`` only. The
same names are the URL query parameters (see :mod:`components.url_params`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, dataclass

import streamlit as st

from components.i18n import t
from components.locale import CATALOG
from components.safe_text import md_escape
from components.url_params import DEFAULTS, URL_KEYS, Problem, clean_text, parse_query_params, to_query_params
from mha.config import LIMITS, AttentionConfig, ConfigError
from mha.device import available_devices
from mha.masks import MASK_TYPES, PAD_TOKENS
from mha.pipeline import AttentionRun, check_tokens
from mha.tokens import tokenize

__all__ = [
    "D_MODEL_PRESETS",
    "EXAMPLES",
    "Choices",
    "build_config",
    "device_options",
    "error_message",
    "load_url_state",
    "nearest_divisors",
    "remember_query_value",
    "render_controls",
    "show_run_notes",
    "show_url_problems",
    "sync_url",
]

D_MODEL_PRESETS = (64, 128, 256, 512, 768, 1024)
#: (name, text): the tutorials' sentences; "padded" ends in [PAD] tokens for the padding mask.
EXAMPLES = (
    ("thinking", "Thinking Machines"),
    ("animal", "The animal didn't cross the street because it was too tired"),
    ("xiaoming", "小明喜欢打球，他放学后去了操场"),
    ("cat", "The cat sat on the mat"),
    ("padded", "The cat sat on the mat [PAD] [PAD] [PAD]"),
)
_WRITTEN = "_playground_url"  # the query values this session last wrote
_PERSIST = "session"  # widget values survive a visit to another page
_RESTORED = "_restored_numbers"  # number fields put back to their defaults in this rerun's callbacks


@dataclass(frozen=True)
class Choices:
    """The sidebar's plain values (may not be runnable: see :func:`build_config`)."""

    d_model: int
    num_heads: int
    mask_type: str
    window: int
    tokens: str
    seed: int
    positional: bool
    device: str


def device_options() -> list[str]:
    """``auto``, ``cpu``, then every accelerator present here."""
    return ["auto", "cpu", *(name for name in available_devices() if name != "cpu")]


def nearest_divisors(d_model: int, num_heads: int, high: int = LIMITS.num_heads_max) -> tuple[int | None, int | None]:
    """The closest head counts below and above ``num_heads`` (within 1..high) that divide ``d_model``."""
    below = next((h for h in range(min(num_heads, high), 0, -1) if d_model % h == 0), None)
    above = next((h for h in range(num_heads + 1, high + 1) if d_model % h == 0), None)
    return below, above


def load_url_state() -> list[Problem]:
    """Copy link values into the widgets' state; return what had to be changed.

    Reads only the query values that differ from what this session last wrote (on the
    first run: all of them), so a link opened or edited by hand is applied, and the
    session's own writes are not read back. Keys still unset get their defaults.
    """
    written = st.session_state.get(_WRITTEN, {})
    incoming = {key: value for key, value in st.query_params.to_dict().items() if key in URL_KEYS}
    changed = {key: value for key, value in incoming.items() if written.get(key) != value}
    parsed = parse_query_params(changed, device_options(), num_heads=st.session_state.get("num_heads"))
    for key, value in parsed.values.items():
        st.session_state[key] = value
    for key in URL_KEYS:
        if key not in st.session_state:
            st.session_state[key] = DEFAULTS[key]
    return parsed.problems


def show_url_problems(problems: list[Problem]) -> None:
    """One translated warning per link value that was changed, naming the parameter and what was used."""
    for problem in problems:
        params = {**problem.params, "value": md_escape(problem.params.get("value", ""), limit=40)}
        st.warning(t(f"url.{problem.code}", name=problem.field, **params))


def sync_url(choices: Choices) -> None:
    """Write the current values to the URL (the link always reproduces the page)."""
    values = to_query_params(asdict(choices))
    written = dict(st.session_state.get(_WRITTEN, {}))
    for key, value in values.items():
        st.query_params[key] = value
        written[key] = value
    st.session_state[_WRITTEN] = written


def remember_query_value(key: str, value: object) -> None:
    """Mirror one value (e.g. the viewed head, from inside a fragment) to the URL."""
    text = to_query_params({key: value})[key]
    st.query_params[key] = text
    st.session_state[_WRITTEN] = {**st.session_state.get(_WRITTEN, {}), key: text}


def _restore_default(key: str) -> None:
    """An emptied number field (or one sent a value outside its range) gets its default back, with a note."""
    if st.session_state.get(key) is None:
        st.session_state[key] = DEFAULTS[key]
        st.session_state[_RESTORED] = [*st.session_state.get(_RESTORED, []), key]


def _show_restored_numbers() -> None:
    for key in st.session_state.pop(_RESTORED, []):
        st.sidebar.warning(t("input.empty_number", name=key, used=DEFAULTS[key]))


def _apply_preset() -> None:
    preset = st.session_state.get("d_model_preset")
    if preset is not None:
        st.session_state["d_model"] = preset


def _use_example(text: str, mask_type: str | None) -> None:
    st.session_state["tokens"] = text
    if mask_type is not None:
        st.session_state["mask_type"] = mask_type


def _render_size_controls(hidden: frozenset[str]) -> tuple[int, int]:
    sidebar = st.sidebar
    d_model, num_heads = st.session_state["d_model"], st.session_state["num_heads"]
    if "d_model" not in hidden:
        st.session_state["d_model_preset"] = d_model if d_model in D_MODEL_PRESETS else None
        sidebar.segmented_control(
            t("controls.d_model_presets"), D_MODEL_PRESETS, key="d_model_preset", on_change=_apply_preset
        )
        d_model = _int_field(
            "d_model",
            LIMITS.d_model_min,
            LIMITS.d_model_max,
            t("controls.d_model_help", low=LIMITS.d_model_min, high=LIMITS.d_model_max),
        )
    if "num_heads" in hidden:
        return int(d_model), int(num_heads)
    num_heads = _int_field(
        "num_heads", 1, LIMITS.num_heads_max, t("controls.num_heads_help", high=LIMITS.num_heads_max)
    )
    if d_model % num_heads == 0:
        sidebar.caption(t("controls.d_k", d_model=d_model, num_heads=num_heads, d_k=d_model // num_heads))
    else:
        sidebar.caption(t("controls.d_k_bad", d_model=d_model, num_heads=num_heads, ratio=f"{d_model / num_heads:.2f}"))
    return int(d_model), int(num_heads)


def _int_field(key: str, low: int, high: int, help_text: str, disabled: bool = False) -> int | None:
    """The sidebar's whole-number field ``key`` (label ``controls.<key>``), ``low``..``high``.

    It starts empty-able (``value=None``): an emptied field gives ``None`` and
    :func:`_restore_default` puts the default back before the next run.
    """
    return st.sidebar.number_input(
        t(f"controls.{key}"),
        min_value=low,
        max_value=high,
        step=1,
        value=None,
        key=key,
        on_change=_restore_default,
        args=(key,),
        disabled=disabled,
        help=help_text,
        persist_state=_PERSIST,
    )


def _render_mask_controls(hidden: frozenset[str]) -> tuple[str, int]:
    sidebar = st.sidebar
    mask_type, window = st.session_state["mask_type"], st.session_state["window"]
    if "mask_type" not in hidden:
        mask_type = sidebar.selectbox(
            t("controls.mask_type"),
            MASK_TYPES,
            key="mask_type",
            format_func=lambda name: t(f"mask.{name}"),
            persist_state=_PERSIST,
        )
        sidebar.caption(t(f"mask.{mask_type}.help"))
    if "window" in hidden:
        return mask_type, int(window)
    window = _int_field("window", 0, LIMITS.tokens_max, t("controls.window_help"), disabled=mask_type != "window")
    return mask_type, int(window)


def _render_text_controls(hidden: frozenset[str]) -> str:
    sidebar = st.sidebar
    if "tokens" in hidden:
        return st.session_state["tokens"]
    text = sidebar.text_area(
        t("controls.tokens"),
        key="tokens",
        max_chars=LIMITS.text_chars_max,
        help=t("controls.tokens_help"),
        persist_state=_PERSIST,
    )
    sidebar.caption(t("controls.examples"))
    row = sidebar.container(horizontal=True, gap="small")
    for name, example in EXAMPLES:
        row.button(
            t(f"example.{name}"),
            key=f"example_{name}",
            on_click=_use_example,
            args=(example, "padding" if name == "padded" else None),
        )
    text, removed = clean_text(text)  # typed or pasted text is user input just like a link
    if removed:
        sidebar.warning(t("input.control_chars", count=removed))
    count = len(tokenize(text))
    sidebar.caption(t("controls.token_count", count=count, high=LIMITS.tokens_max))
    return text


def _render_run_controls(hidden: frozenset[str]) -> tuple[int, bool, str]:
    sidebar = st.sidebar
    seed, positional = st.session_state["seed"], st.session_state["positional"]
    if "seed" not in hidden:
        seed = _int_field("seed", 0, LIMITS.seed_max, t("controls.seed_help"))
    if "positional" not in hidden:
        positional = sidebar.toggle(
            t("controls.positional"), key="positional", help=t("controls.positional_help"), persist_state=_PERSIST
        )
    options = device_options()
    if st.session_state.get("device") not in options:
        st.session_state["device"] = "auto"
    if "device" in hidden:
        return int(seed), bool(positional), st.session_state["device"]
    device = sidebar.selectbox(
        t("controls.device"),
        options,
        key="device",
        format_func=lambda name: t("device.auto") if name == "auto" else name,
        persist_state=_PERSIST,
    )
    return int(seed), bool(positional), device


def render_controls(hidden: Collection[str] = ()) -> Choices:
    """Draw the sidebar controls (call :func:`load_url_state` first) and return their values.

    Args:
        hidden: widget keys not to draw (teacher mode); their values come from the session
            (the link or the defaults) all the same.
    """
    hidden = frozenset(hidden)
    st.sidebar.header(t("controls.header"))
    _show_restored_numbers()
    d_model, num_heads = _render_size_controls(hidden)
    mask_type, window = _render_mask_controls(hidden)
    text = _render_text_controls(hidden)
    seed, positional, device = _render_run_controls(hidden)
    return Choices(d_model, num_heads, mask_type, window, text, seed, positional, device)


def error_message(error: ConfigError) -> str:
    """A translated message for a :class:`ConfigError`, naming the values and what to change."""
    params = dict(error.params)
    if error.code == "not_divisible":
        d_model, num_heads = int(params["d_model"]), int(params["num_heads"])
        below, above = nearest_divisors(d_model, num_heads)
        suggestions = t("error.or").join(str(h) for h in (below, above) if h is not None)
        params.update(ratio=f"{d_model / num_heads:.2f}", suggestions=suggestions)
    key = f"error.{error.field}.{error.code}"
    if key not in CATALOG:
        return t("error.generic", name=error.field, message=md_escape(str(error), limit=200))
    if "value" in params:
        params["value"] = md_escape(params["value"], limit=40)
    return t(key, **params)


def build_config(choices: Choices) -> AttentionConfig | None:
    """Validate the choices; show every problem with ``st.error``; the config when it can run."""
    errors: list[ConfigError] = []
    config = None
    try:
        config = AttentionConfig(**asdict(choices))
    except ConfigError as error:
        errors.append(error)
    try:
        check_tokens(tokenize(choices.tokens))
    except ConfigError as error:
        errors.append(error)
    for error in errors:
        st.error(error_message(error))
    return None if errors else config


def show_run_notes(run: AttentionRun) -> None:
    """Where the run happened (sidebar), and warnings about choices that may not do what the user expects."""
    config, tokens, device = run.config, run.tokens, run.device
    st.sidebar.caption(t("controls.device_used", device=str(device.device), dtype=config.dtype))
    if device.fallback_reason:
        st.warning(t("notes.device_fallback", requested=config.device, used=str(device.device)))
    length = len(tokens)
    if config.mask_type == "window" and config.window >= length - 1:
        st.warning(t("notes.window_covers_all", window=config.window, count=length))
    if config.mask_type == "padding":
        pads = sum(token in PAD_TOKENS for token in tokens)
        if pads == 0:
            st.info(t("notes.no_pad_tokens"))
        elif pads == length:
            st.warning(t("notes.all_pad_tokens"))
