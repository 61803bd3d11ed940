"""Sidebar controls -> plain values -> a validated config; the URL mirrors the controls.

Widget keys are the contract's names (``weights``, ``task``, ``checkpoint``, ``layer``,
``d_model``, ``num_heads``, ``mask_type``, ``window``, ``tokenizer``, ``tokens``, ``seed``)
plus ``block_pad``, ``positional``, ``device`` and ``dtype``; each widget's value is the plain
value, translated for display with ``format_func`` only. The same names are the URL
query parameters (parsed in :mod:`components.url_params`, read and written through
:mod:`components.url_state`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import asdict, dataclass

import streamlit as st

from components import checkpoints, runner, training
from components.head_picker import HEAD_KEY, move_head
from components.headings import heading
from components.heatmap import COLOR_SCALES
from components.i18n import t
from components.locale import CATALOG
from components.safe_text import md_escape
from components.url_params import (
    DEFAULTS,
    URL_KEYS,
    Problem,
    clean_text,
    parse_query_params,
    to_query_params,
)
from components.url_state import changed_in_link, write_link
from mha.checkpoints import checkpoint_names
from mha.config import DTYPES, LIMITS, TASKS, WEIGHT_SOURCES, AttentionConfig, ConfigError, WeightSpec
from mha.device import available_devices
from mha.masks import MASK_TYPES, PAD_TOKENS
from mha.pipeline import AttentionRun
from mha.sources import SourceSizes, SourceUnavailableError
from mha.tokens import TOKENIZERS, tokenize
from mha.training.tasks import task_mask

__all__ = [
    "D_MODEL_PRESETS",
    "EXAMPLES",
    "TRAINED_SIZES",
    "Choices",
    "build_config",
    "device_options",
    "error_message",
    "load_url_state",
    "nearest_divisors",
    "render_controls",
    "seed_field",
    "select_color_scale",
    "show_restored_seed",
    "show_run_notes",
    "show_url_problems",
    "sync_url",
]

D_MODEL_PRESETS = (64, 128, 256, 512, 768, 1024)
#: d_model and num_heads a learner gets on switching to trained weights (each task trains in a few seconds).
TRAINED_SIZES = (64, 2)
#: (name, text): the tutorials' sentences; "padded" ends in [PAD] tokens for the padding mask.
EXAMPLES = (
    ("thinking", "Thinking Machines"),
    ("animal", "The animal didn't cross the street because it was too tired"),
    ("xiaoming", "小明喜欢打球，他放学后去了操场"),
    ("cat", "The cat sat on the mat"),
    ("padded", "The cat sat on the mat [PAD] [PAD] [PAD]"),
)
_PERSIST = "session"  # widget values survive a visit to another page
_RESTORED = "_restored_numbers"  # number fields put back to their defaults in this rerun's callbacks
_TRAINED_SIZES_NOTE = "trained_sizes"  # the note (not a problem) when a trained link gets TRAINED_SIZES


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
    dtype: str = "float32"
    weights: str = "random"
    task: str = "previous_and_first"
    checkpoint: str = ""
    layer: int = 0
    tokenizer: str = "characters"
    block_pad: bool = False


def device_options() -> list[str]:
    """``auto``, ``cpu``, then every accelerator present here."""
    return ["auto", "cpu", *(name for name in available_devices() if name != "cpu")]


def nearest_divisors(d_model: int, num_heads: int, high: int = LIMITS.num_heads_max) -> tuple[int | None, int | None]:
    """The closest head counts below and above ``num_heads`` (within 1..high) that divide ``d_model``."""
    below = next((h for h in range(min(num_heads, high), 0, -1) if d_model % h == 0), None)
    above = next((h for h in range(num_heads + 1, high + 1) if d_model % h == 0), None)
    return below, above


# ---------------------------------------------------------------- the link
def load_url_state() -> list[Problem]:
    """Copy the link's values into the widgets' state; return what had to be changed.

    Only values this session did not write itself are read (see :mod:`components.url_state`).
    Keys still unset get their defaults; the checkpoint defaults to the first on the server's list.
    """
    changed = changed_in_link(URL_KEYS)
    parsed = parse_query_params(changed, device_options(), num_heads=st.session_state.get("num_heads"))
    problems = parsed.problems + _sizes_for_trained_link(parsed.values, set(st.query_params.to_dict()))
    for key, value in parsed.values.items():
        st.session_state[key] = value
    if HEAD_KEY in parsed.values:  # the link chose the head: the page shows it over the browser's pick
        move_head(parsed.values[HEAD_KEY])
    for key in URL_KEYS:
        if key not in st.session_state:
            st.session_state[key] = DEFAULTS[key]
    names = checkpoint_names()
    if names and st.session_state["checkpoint"] not in names:
        st.session_state["checkpoint"] = names[0]
    return problems


def _sizes_for_trained_link(values: dict[str, object], in_link: Collection[str]) -> list[Problem]:
    """A link that asks for trained weights and leaves out d_model or num_heads gets :data:`TRAINED_SIZES` for
    them, as switching the widget does (``values`` is changed in place), and a note saying which sizes; a size
    the link gives is kept (over the training cap it gets the cap's error)."""
    missing = [key for key in ("d_model", "num_heads") if key not in in_link]
    if values.get("weights") != "trained" or not missing:
        return []
    for key, size in zip(("d_model", "num_heads"), TRAINED_SIZES, strict=True):
        if key in missing:
            values[key] = size
    used = {key: values.get(key, st.session_state.get(key, DEFAULTS[key])) for key in ("d_model", "num_heads")}
    return [Problem("weights", _TRAINED_SIZES_NOTE, used)]


def show_url_problems(problems: list[Problem]) -> None:
    """One translated warning per link value that was changed, naming the parameter and what was used
    (a note, ``st.info``, for the sizes a trained link was given)."""
    for problem in problems:
        params = {**problem.params, "value": md_escape(problem.params.get("value", ""), limit=40)}
        show = st.info if problem.code == _TRAINED_SIZES_NOTE else st.warning
        show(t(f"url.{problem.code}", name=problem.field, **params))


def sync_url(choices: Choices) -> None:
    """Write the current values to the URL (the link always reproduces the page)."""
    write_link(to_query_params(asdict(choices)))


# ---------------------------------------------------------------- callbacks
def _restore_default(key: str) -> None:
    """An emptied number field (or one sent a value outside its range) gets its default back, with a note."""
    if st.session_state.get(key) is None:
        st.session_state[key] = DEFAULTS[key]
        st.session_state[_RESTORED] = [*st.session_state.get(_RESTORED, []), key]


def _show_restored_numbers(where: st.delta_generator.DeltaGenerator | None = None, only: str | None = None) -> None:
    """The note for each number field put back to its default, in ``where`` (the sidebar's top); with ``only``,
    for that field alone (the others' notes wait for the sidebar)."""
    restored = st.session_state.pop(_RESTORED, [])
    shown = [key for key in restored if only in (None, key)]
    if len(shown) < len(restored):
        st.session_state[_RESTORED] = [key for key in restored if key not in shown]
    for key in shown:
        (where or st.sidebar).warning(t("input.empty_number", name=key, used=DEFAULTS[key]))
        if only is None:  # before the field: written in this run, so that it shows where it was emptied in a
            st.session_state[key] = DEFAULTS[key]  # run of the seed's fragment that then ran the page


def _apply_preset() -> None:
    preset = st.session_state.get("d_model_preset")
    if preset is not None:
        st.session_state["d_model"] = preset


def _use_example(text: str, mask_type: str | None) -> None:
    st.session_state["tokens"] = text
    if mask_type is not None:
        st.session_state["mask_type"] = mask_type


def _on_weights_change() -> None:
    """Switching to trained weights starts from sizes that train in seconds, with the task's own mask."""
    if st.session_state.get("weights") == "trained":
        st.session_state["d_model"], st.session_state["num_heads"] = TRAINED_SIZES
        _on_task_change()


def _on_task_change() -> None:
    """A task is shown with the mask it trains with (the learner may change it afterwards, with a note)."""
    st.session_state["mask_type"] = task_mask(st.session_state.get("task", ""))


# ---------------------------------------------------------------- the sections of the sidebar
def _int_field(
    key: str,
    low: int,
    high: int,
    help_text: str,
    disabled: bool = False,
    where: st.delta_generator.DeltaGenerator | None = None,
) -> int | None:
    """The whole-number field ``key`` (label ``controls.<key>``), ``low``..``high``, in ``where`` (the sidebar).

    It starts empty-able (``value=None``): an emptied field gives ``None`` and
    :func:`_restore_default` puts the default back before the next run.
    """
    return (where or st.sidebar).number_input(
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


def _select(key: str, options: tuple[str, ...] | list[str], hidden: frozenset[str], **kwargs: object) -> str:
    """A sidebar selectbox ``key`` (label ``controls.<key>``), or its session value when hidden."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = options[0]
    if key in hidden:
        return st.session_state[key]
    return st.sidebar.selectbox(t(f"controls.{key}"), options, key=key, persist_state=_PERSIST, **kwargs)


def _render_weight_controls(hidden: frozenset[str]) -> tuple[str, str, str]:
    weights = _select(
        "weights",
        WEIGHT_SOURCES,
        hidden,
        format_func=lambda name: t(f"weights.{name}"),
        on_change=_on_weights_change,
        help=t("controls.weights_help"),
    )
    task, checkpoint = st.session_state["task"], st.session_state["checkpoint"]
    if weights == "trained":
        task = _select("task", TASKS, hidden, format_func=lambda name: t(f"task.{name}"), on_change=_on_task_change)
    if weights == "pretrained":
        checkpoint = _select("checkpoint", checkpoint_names(), hidden, help=t("controls.checkpoint_help"))
        checkpoints.ensure_downloaded(checkpoint)
    return weights, task, checkpoint


def _source_sizes(weights: str, task: str, checkpoint: str) -> SourceSizes | None:
    """The sizes of the chosen source, or ``None`` when it cannot be made here (build_config says why)."""
    state = st.session_state
    if weights == "pretrained":
        spec = WeightSpec("pretrained", checkpoint=checkpoint)
    else:
        spec = WeightSpec(weights, state["d_model"], state["num_heads"], state["seed"], task=task)
    try:
        return runner.cached_sizes(spec)
    except (SourceUnavailableError, ValueError):
        return None


def _render_layer_control(hidden: frozenset[str], sizes: SourceSizes | None) -> int:
    layers = 1 if sizes is None else sizes.num_layers
    if not 0 <= st.session_state["layer"] < layers:
        if layers > 1:  # with one layer (or weights that cannot be made here) there is no layer to choose
            st.sidebar.warning(t("controls.layer_clamped", value=st.session_state["layer"], high=layers - 1))
        st.session_state["layer"] = min(max(st.session_state["layer"], 0), layers - 1)
    if layers == 1 or "layer" in hidden:
        return int(st.session_state["layer"])
    layer = _int_field("layer", 0, layers - 1, t("controls.layer_help", high=layers - 1))
    return int(layer)


def _render_size_controls(hidden: frozenset[str], locked: SourceSizes | None) -> tuple[int, int]:
    sidebar = st.sidebar
    d_model, num_heads = st.session_state["d_model"], st.session_state["num_heads"]
    if locked is not None:  # a checkpoint brings its sizes; the learner's own values wait for their return
        if not {"d_model", "num_heads"} <= hidden:
            d_k = locked.d_model // locked.num_heads
            sidebar.caption(t("controls.sizes_locked", d_model=locked.d_model, num_heads=locked.num_heads, d_k=d_k))
        return int(d_model), int(num_heads)
    trained = st.session_state["weights"] == "trained"
    d_high = LIMITS.train_d_model_max if trained else LIMITS.d_model_max
    h_high = LIMITS.train_num_heads_max if trained else LIMITS.num_heads_max
    if "d_model" not in hidden:
        presets = tuple(p for p in D_MODEL_PRESETS if p <= d_high)
        st.session_state["d_model_preset"] = d_model if d_model in presets else None
        sidebar.segmented_control(t("controls.d_model_presets"), presets, key="d_model_preset", on_change=_apply_preset)
        help_text = t("controls.d_model_help", low=LIMITS.d_model_min, high=d_high)
        d_model = _int_field("d_model", LIMITS.d_model_min, LIMITS.d_model_max, help_text)
    if "num_heads" in hidden:
        return int(d_model), int(num_heads)
    num_heads = _int_field("num_heads", 1, LIMITS.num_heads_max, t("controls.num_heads_help", high=h_high))
    if d_model % num_heads == 0:
        sidebar.caption(t("controls.d_k", d_model=d_model, num_heads=num_heads, d_k=d_model // num_heads))
    else:
        sidebar.caption(t("controls.d_k_bad", d_model=d_model, num_heads=num_heads, ratio=f"{d_model / num_heads:.2f}"))
    return int(d_model), int(num_heads)


def _render_mask_controls(hidden: frozenset[str]) -> tuple[str, int, bool]:
    sidebar = st.sidebar
    mask_type = _select("mask_type", MASK_TYPES, hidden, format_func=lambda name: t(f"mask.{name}"))
    if "mask_type" not in hidden:
        sidebar.caption(t(f"mask.{mask_type}.help"))
    window, block_pad = st.session_state["window"], st.session_state["block_pad"]
    if "window" not in hidden:
        window = _int_field("window", 0, LIMITS.tokens_max, t("controls.window_help"), disabled=mask_type != "window")
    if "block_pad" not in hidden:
        block_pad = sidebar.toggle(
            t("controls.block_pad"),
            key="block_pad",
            help=t("controls.block_pad_help"),
            disabled=mask_type == "padding",  # the padding mask blocks them already
            persist_state=_PERSIST,
        )
    return mask_type, int(window), bool(block_pad)


def _render_text_controls(hidden: frozenset[str], own_tokenizer: bool) -> tuple[str, str]:
    sidebar = st.sidebar
    tokenizer = st.session_state["tokenizer"]
    if "tokens" in hidden:
        return st.session_state["tokens"], tokenizer
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
    checkpoints.render_example_buttons(sidebar, dict(EXAMPLES))
    training.render_examples_link(sidebar)
    text, removed = clean_text(text)  # typed or pasted text is user input just like a link
    if removed:
        sidebar.warning(t("input.control_chars", count=removed))
    if own_tokenizer:  # a checkpoint cuts the text with its own tokenizer
        sidebar.caption(t("controls.tokenizer_checkpoint"))
        return text, tokenizer
    if "tokenizer" not in hidden:
        tokenizer = sidebar.radio(
            t("controls.tokenizer"),
            TOKENIZERS,
            key="tokenizer",
            horizontal=True,
            format_func=lambda name: t(f"tokenizer.{name}"),
            help=t("controls.tokenizer_help"),
            persist_state=_PERSIST,
        )
    count = len(tokenize(text, tokenizer))
    sidebar.caption(t("controls.token_count", count=count, high=LIMITS.tokens_max))
    return text, tokenizer


def _render_run_controls(
    hidden: frozenset[str], weights: str
) -> tuple[int, st.delta_generator.DeltaGenerator | None, bool, str, str]:
    """The seed (its value and the place kept for its field), positional encoding, device and number type."""
    sidebar = st.sidebar
    seed, positional = st.session_state["seed"], st.session_state["positional"]
    if not isinstance(seed, int):  # an emptied field: its default comes back (see _restore_default)
        seed = DEFAULTS["seed"]
    seed_place = None if "seed" in hidden else sidebar.container()
    if "positional" not in hidden:
        positional = sidebar.toggle(
            t("controls.positional"),
            key="positional",
            help=t("controls.positional_help"),
            disabled=weights != "random",
            persist_state=_PERSIST,
        )
        if weights != "random":
            sidebar.caption(t(f"controls.positional_{weights}"))
    device = _select(
        "device", device_options(), hidden, format_func=lambda name: t("device.auto") if name == "auto" else name
    )
    dtype = _select("dtype", DTYPES, hidden, help=t("controls.dtype_help"))
    return int(seed), seed_place, bool(positional), device, dtype


def seed_field(place: st.delta_generator.DeltaGenerator, weights: str) -> int:
    """The seed's field, in ``place`` (kept by :func:`render_controls`); its value.

    Drawn by the page's last step, a fragment (see :mod:`components.reseed`), so that a new seed can
    redraw only what it changes.
    """
    help_text = t("controls.seed_help" if weights == "random" else f"controls.seed_help_{weights}")
    seed = _int_field("seed", 0, LIMITS.seed_max, help_text, disabled=weights == "pretrained", where=place)
    return DEFAULTS["seed"] if seed is None else int(seed)


def show_restored_seed(place: st.delta_generator.DeltaGenerator) -> None:
    """Under the seed's field, in a run of its own fragment: the note that an emptied field got its default."""
    _show_restored_numbers(place, only="seed")


def render_controls(hidden: Collection[str] = ()) -> tuple[Choices, st.delta_generator.DeltaGenerator | None]:
    """Draw the sidebar controls (call :func:`load_url_state` first); their values, and the seed field's place.

    The seed's field is left to the page's last step (:func:`seed_field`); its value is the session's.

    Args:
        hidden: widget keys not to draw (teacher mode); their values come from the session
            (the link or the defaults) all the same. A hidden seed has no place.
    """
    hidden = frozenset(hidden)
    heading(st.sidebar, t("controls.header"), level=2)
    _show_restored_numbers()
    weights, task, checkpoint = _render_weight_controls(hidden)
    sizes = _source_sizes(weights, task, checkpoint) if weights != "random" else None
    layer = _render_layer_control(hidden, sizes)
    d_model, num_heads = _render_size_controls(hidden, sizes if weights == "pretrained" else None)
    mask_type, window, block_pad = _render_mask_controls(hidden)
    text, tokenizer = _render_text_controls(hidden, own_tokenizer=weights == "pretrained")
    seed, seed_place, positional, device, dtype = _render_run_controls(hidden, weights)
    choices = Choices(
        d_model,
        num_heads,
        mask_type,
        window,
        text,
        seed,
        positional,
        device,
        dtype=dtype,
        weights=weights,
        task=task,
        checkpoint=checkpoint,
        layer=layer,
        tokenizer=tokenizer,
        block_pad=block_pad,
    )
    return choices, seed_place


def select_color_scale(hidden: bool = False, inline: bool = False) -> str:
    """How attention weights are coloured (widget key ``color_scale``: ``fixed`` 0-1 or ``stretch``), in the URL.

    With ``hidden`` (teacher mode) no control is drawn: the link's value is used. With ``inline``
    (a slide, beside the head selector) the control goes without its label: its two choices name
    themselves, and the head selector and it fit one line of a 1280 px screen.
    """
    if st.session_state.get("color_scale") not in COLOR_SCALES:
        st.session_state["color_scale"] = COLOR_SCALES[0]
    scale = str(st.session_state["color_scale"])
    if not hidden:
        scale = st.segmented_control(
            t("controls.color_scale"),
            COLOR_SCALES,
            key="color_scale",
            required=True,
            format_func=lambda name: t(f"color_scale.{name}"),
            help=t("controls.color_scale_help"),
            label_visibility="collapsed" if inline else "visible",
            persist_state=_PERSIST,
        )
    write_link(to_query_params({"color_scale": scale}))
    return str(scale)


# ---------------------------------------------------------------- choices -> config
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


def source_message(error: SourceUnavailableError) -> str:
    """A translated message for a weight source that cannot be made here, saying what to do."""
    params = {name: md_escape(value, limit=80) for name, value in error.params.items()}
    key = f"source.{error.code}"
    if key not in CATALOG:
        return t("source.generic", message=md_escape(str(error), limit=200))
    return t(key, **params)


def build_config(choices: Choices) -> AttentionConfig | None:
    """Validate the choices; show the problem with ``st.error``; the config when it can run.

    A weight source that cannot be made here (a checkpoint offline, say) is reported and the
    page goes on with random weights.
    """
    try:
        config = AttentionConfig(**asdict(choices))
    except ConfigError as error:
        st.error(error_message(error))
        return None
    if config.weights == "pretrained":
        try:
            runner.cached_sizes(config.weight_spec)
        except SourceUnavailableError as error:
            st.error(source_message(error))
            return _with_random_weights(config)
    return config


def _with_random_weights(config: AttentionConfig) -> AttentionConfig | None:
    try:
        return dataclasses.replace(config, weights="random")
    except ConfigError as error:  # the learner's own sizes or text do not run either
        st.error(error_message(error))
        return None


def show_run_notes(run: AttentionRun) -> None:
    """Where the run happened (sidebar), and warnings about choices that may not do what the user expects."""
    config, tokens, device = run.config, run.tokens, run.device
    st.sidebar.caption(t("controls.device_used", device=str(device.device), dtype=config.dtype))
    if device.fallback_reason:
        st.warning(t("notes.device_fallback", requested=config.device, used=str(device.device)))
    length = len(tokens)
    if config.mask_type == "window" and config.window >= length - 1:
        st.warning(t("notes.window_covers_all", window=config.window, count=length))
    pads = sum(token in PAD_TOKENS for token in tokens)
    if config.mask_type == "padding":
        if pads == 0:
            st.info(t("notes.no_pad_tokens"))
        elif pads == length:
            st.warning(t("notes.all_pad_tokens"))
    elif config.block_pad and pads == 0:
        st.info(t("notes.block_pad_no_pads"))
    for note in run.notes:
        st.info(t(f"notes.{note.code}", **{name: md_escape(value, limit=200) for name, value in note.params.items()}))
