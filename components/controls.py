"""Sidebar controls -> plain values -> a validated config; the URL mirrors the controls.

The sidebar has two sections: where the weights come from (drawn by the page's full run,
:func:`render_source_controls`) and the live controls (:func:`render_live_controls`, drawn by the fragment
of :mod:`components.live_controls`), whose changes redraw only the page's values. The values are the
session's (:func:`current_choices`): one per field of :class:`~mha.config.AttentionConfig`.

Widget keys are the contract's names (``weights``, ``task``, ``checkpoint``, ``layer``,
``d_model``, ``num_heads``, ``mask_type``, ``window``, ``tokenizer``, ``tokens``, ``seed``)
plus ``block_pad``, ``positional``, ``device``, ``dtype``, ``patch`` and ``image``; each widget's value is
the plain value, translated for display with ``format_func`` only. The same names are the URL
query parameters (parsed in :mod:`components.url_params`, read and written through
:mod:`components.url_state`).

A run that reads an image (:func:`reads_image`) shows the image controls instead of the text's: a bundled
sample (``image``), the patch size where the learner chooses it (``patch``), and an upload of one's own
(:data:`UPLOAD_KEY`, not in the link: :func:`current_upload` hands it to the run, its SHA-256 its name).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection

import streamlit as st

from components import checkpoints, runner, training
from components.head_picker import HEAD_KEY, move_head
from components.headings import heading
from components.heatmap import COLOR_SCALES
from components.i18n import choice_labels, restore_choices, t
from components.image_names import image_name
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
from mha.checkpoints import any_checkpoint_cap_mb, checkpoint_names
from mha.config import (
    DOMAINS,
    IMAGE_TASKS,
    LIMITS,
    PRETRAINED,
    RANDOM,
    TRAINED,
    AttentionConfig,
    ConfigError,
    WeightSpec,
)
from mha.device import available_devices
from mha.masks import PAD_TOKENS
from mha.pipeline import AttentionRun
from mha.sources import SourceSizes, SourceUnavailableError
from mha.tokens import tokenize
from mha.training.tasks import task_mask
from mha.vision.upload import ACCEPTED_FORMATS, Upload, read_upload

__all__ = [
    "D_MODEL_PRESETS",
    "EXAMPLES",
    "LIVE_KEYS",
    "RUN_KEYS",
    "TRAINED_SIZES",
    "UPLOAD_KEY",
    "Choices",
    "build_config",
    "current_choices",
    "current_upload",
    "device_options",
    "error_message",
    "load_url_state",
    "nearest_divisors",
    "reads_image",
    "render_live_controls",
    "render_run_controls",
    "render_source_controls",
    "select_color_scale",
    "show_device_used",
    "show_run_notes",
    "show_url_problems",
    "source_message",
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
UPLOAD_KEY = "image_upload"  # the file uploader of a learner's own image (never in the link)
_UPLOAD = "_image_upload"  # the session's decoded upload (an Upload) while the uploader holds its file
_UPLOAD_REFUSED = "_image_upload_refused"  # the ConfigError that refused the uploader's file
#: The uploader's own cap, in MB: LIMITS.image_bytes_max, which the widget states and the browser enforces (with
#: Streamlit's own message); the server checks the file again (decode_image), with the page's translated message.
_UPLOAD_MB = -(-LIMITS.image_bytes_max // 2**20)
_UPLOAD_TYPES = ("png", "jpg", "jpeg")


Choices = dict[str, object]  # the controls' values by config field name (may not run: see build_config)


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
    if values.get("weights") != TRAINED or not missing:
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
    write_link(to_query_params(choices))


# ---------------------------------------------------------------- callbacks
def _restore_default(key: str) -> None:
    """An emptied number field (or one sent a value outside its range) gets its default back, with a note."""
    if st.session_state.get(key) is None:
        st.session_state[key] = DEFAULTS[key]
        st.session_state[_RESTORED] = [*st.session_state.get(_RESTORED, []), key]


def _show_restored_numbers(keys: Collection[str]) -> None:
    """Where the page is drawing (its sidebar), the note for each field of ``keys`` put back to its default in this
    rerun's callbacks (the notes of the others wait for their own section)."""
    restored = st.session_state.pop(_RESTORED, [])
    shown = [key for key in restored if key in keys]
    if len(shown) < len(restored):
        st.session_state[_RESTORED] = [key for key in restored if key not in shown]
    for key in shown:
        st.warning(t("input.empty_number", name=key, used=DEFAULTS[key]))
        st.session_state[key] = DEFAULTS[key]


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
    restore_choices()  # a callback may run in the first run after a language switch
    if st.session_state.get("weights") == TRAINED:
        st.session_state["d_model"], st.session_state["num_heads"] = TRAINED_SIZES
        _on_task_change()


def _on_task_change() -> None:
    """A task is shown with the mask it trains with (the learner may change it afterwards, with a note)."""
    restore_choices()  # a callback may run in the first run after a language switch
    st.session_state["mask_type"] = task_mask(st.session_state.get("task", ""))


def _read_upload() -> None:
    """The uploader's new file decoded (or its refusal kept, to be shown): before the run that follows."""
    state = st.session_state
    state.pop(_UPLOAD, None)
    state.pop(_UPLOAD_REFUSED, None)
    file = state.get(UPLOAD_KEY)
    if file is None:
        return
    try:
        state[_UPLOAD] = read_upload(file.getvalue())
    except ConfigError as error:
        state[_UPLOAD_REFUSED] = error


# ---------------------------------------------------------------- images
def reads_image() -> bool:
    """Whether the session's run reads an image instead of the text: an image task with trained weights, or a
    checkpoint that reads images (a ViT: its ``config.json`` says so, before any weight loads).

    The one place the controls decide it: the image controls replace the text's, the upload reaches the run
    (:func:`current_upload`).
    """
    state = st.session_state
    if state.get("weights") == PRETRAINED:
        sizes = _source_sizes()
        return sizes is not None and sizes.modality == "image"
    return state.get("weights") == TRAINED and state.get("task") in IMAGE_TASKS


def current_upload() -> Upload | None:
    """The learner's own image, while the run reads an image and the uploader holds it (its refusal: ``None``)."""
    state = st.session_state
    if not reads_image() or state.get(UPLOAD_KEY) is None:
        return None
    return state.get(_UPLOAD)


# ---------------------------------------------------------------- the sections of the sidebar
#: The controls drawn by the controls' fragment (:mod:`components.live_controls`): a change of one of them redraws
#: the values (and, where it shows there, this section of the sidebar), not the page. The others run the page.
LIVE_KEYS = (
    *("d_model", "num_heads", "mask_type", "window", "block_pad", "tokenizer", "tokens", "seed"),
    *("positional", "device", "dtype", "image"),
)
#: The live controls whose change shows nowhere else in the sidebar (:func:`render_run_controls`).
RUN_KEYS = ("seed", "positional", "device", "dtype")


def _int_field(
    key: str, low: int, high: int, help_text: str, disabled: bool = False, changed: Changed | None = None
) -> int | None:
    """The whole-number field ``key`` (label ``controls.<key>``), ``low``..``high``, where the page is drawing.

    It starts empty-able (``value=None``): an emptied field gives ``None`` and
    :func:`_restore_default` puts the default back before the next run; then ``changed()``, for a live control.
    """
    return st.number_input(
        t(f"controls.{key}"),
        min_value=low,
        max_value=high,
        step=1,
        value=None,
        key=key,
        on_change=_after(changed, _restore_default, key),
        disabled=disabled,
        help=help_text,
        persist_state=_PERSIST,
    )


Changed = Callable[[], None]  # called after a live control's change (components.live_controls)


def _after(changed: Changed | None, action: Callable[..., None] | None = None, *args: object) -> Callable[[], None]:
    """A widget's callback: its own ``action(*args)``, then ``changed()`` for a live control."""

    def callback() -> None:
        if action is not None:
            action(*args)
        if changed is not None:
            changed()

    return callback


def _options(key: str) -> tuple[str, ...]:
    """The choices of the control ``key`` (the machine's devices for ``device``)."""
    return tuple(device_options()) if key == "device" else DOMAINS[key].options()


def _select(key: str, hidden: frozenset[str], **kwargs: object) -> str:
    """The selectbox ``key`` (label ``controls.<key>``) over its config field's choices, or its value when hidden."""
    if key in hidden:
        return st.session_state[key]
    return st.selectbox(t(f"controls.{key}"), _options(key), key=key, persist_state=_PERSIST, **kwargs)


def _render_weight_controls(hidden: frozenset[str]) -> None:
    weights = _select(
        "weights",
        hidden,
        format_func=choice_labels("weights", _options("weights"), lambda name, lang: t(f"weights.{name}", lang=lang)),
        on_change=_on_weights_change,
        help=t("controls.weights_help"),
    )
    if weights == TRAINED:
        labels = choice_labels("task", _options("task"), lambda name, lang: t(f"task.{name}", lang=lang))
        _select("task", hidden, format_func=labels, on_change=_on_task_change)
        if st.session_state["task"] in IMAGE_TASKS and "patch" not in hidden:  # a new patch size: a new model
            st.radio(
                t("controls.patch"),
                DOMAINS["patch"].values,
                key="patch",
                horizontal=True,
                format_func=choice_labels(
                    "patch", DOMAINS["patch"].values, lambda size, lang: t("controls.patch_size", lang=lang, patch=size)
                ),
                help=t("controls.patch_help"),
                persist_state=_PERSIST,
            )
    if weights == PRETRAINED:
        _select("checkpoint", hidden, help=t("controls.checkpoint_help"))
        cap_mb = any_checkpoint_cap_mb()
        if cap_mb is not None and "hub_id" not in hidden:  # the server lets a learner name a checkpoint of their own
            st.text_input(
                t("controls.hub_id"),
                key="hub_id",
                max_chars=LIMITS.hub_id_chars_max,
                placeholder="owner/name",
                help=t("controls.hub_id_help", cap_mb=cap_mb),
                persist_state=_PERSIST,
            )
        hub_id = str(st.session_state.get("hub_id", "")).strip()
        if hub_id and cap_mb is not None:
            checkpoints.ensure_hub_downloaded(hub_id)
        else:
            checkpoints.ensure_downloaded(st.session_state["checkpoint"])


def _source_sizes() -> SourceSizes | None:
    """The sizes of the chosen source, or ``None`` when it cannot be made here (build_config says why)."""
    state = st.session_state
    if state["weights"] == PRETRAINED:
        hub_id = str(state.get("hub_id", "")).strip()
        spec = (
            WeightSpec(PRETRAINED, hub_id=hub_id) if hub_id else WeightSpec(PRETRAINED, checkpoint=state["checkpoint"])
        )
    else:
        spec = WeightSpec(state["weights"], state["d_model"], state["num_heads"], state["seed"], task=state["task"])
    try:
        return runner.cached_sizes(spec)
    except (SourceUnavailableError, ValueError):
        return None


def _render_layer_control(hidden: frozenset[str]) -> None:
    sizes = _source_sizes() if st.session_state["weights"] != RANDOM else None
    layers = 1 if sizes is None else sizes.num_layers
    if not 0 <= st.session_state["layer"] < layers:
        if layers > 1:  # with one layer (or weights that cannot be made here) there is no layer to choose
            st.warning(t("controls.layer_clamped", value=st.session_state["layer"], high=layers - 1))
        st.session_state["layer"] = min(max(st.session_state["layer"], 0), layers - 1)
    if layers > 1 and "layer" not in hidden:
        _int_field("layer", 0, layers - 1, t("controls.layer_help", high=layers - 1))


def _render_size_controls(hidden: frozenset[str], changed: Changed) -> None:
    d_model = st.session_state["d_model"]
    if st.session_state["weights"] == PRETRAINED:  # the checkpoint's sizes; the learner's wait for their return
        locked = _source_sizes()
        if locked is not None and not {"d_model", "num_heads"} <= hidden:
            d_k = locked.d_model // locked.num_heads
            st.caption(t("controls.sizes_locked", d_model=locked.d_model, num_heads=locked.num_heads, d_k=d_k))
        return
    trained = st.session_state["weights"] == TRAINED
    d_high = LIMITS.train_d_model_max if trained else LIMITS.d_model_max
    h_high = LIMITS.train_num_heads_max if trained else LIMITS.num_heads_max
    if "d_model" not in hidden:
        presets = tuple(p for p in D_MODEL_PRESETS if p <= d_high)
        st.session_state["d_model_preset"] = d_model if d_model in presets else None
        st.segmented_control(
            t("controls.d_model_presets"),
            presets,
            key="d_model_preset",
            on_change=_after(changed, _apply_preset),
        )
        help_text = t("controls.d_model_help", low=LIMITS.d_model_min, high=d_high)
        d_model = _int_field("d_model", LIMITS.d_model_min, LIMITS.d_model_max, help_text, changed=changed)
    if "num_heads" in hidden:
        return
    help_text = t("controls.num_heads_help", high=h_high)
    num_heads = _int_field("num_heads", 1, LIMITS.num_heads_max, help_text, changed=changed)
    if d_model % num_heads == 0:
        st.caption(t("controls.d_k", d_model=d_model, num_heads=num_heads, d_k=d_model // num_heads))
    else:
        st.caption(t("controls.d_k_bad", d_model=d_model, num_heads=num_heads, ratio=f"{d_model / num_heads:.2f}"))


def _render_mask_controls(hidden: frozenset[str], changed: Changed) -> None:
    labels = choice_labels("mask_type", _options("mask_type"), lambda name, lang: t(f"mask.{name}", lang=lang))
    mask_type = _select("mask_type", hidden, format_func=labels, on_change=_after(changed))
    if "mask_type" not in hidden:
        st.caption(t(f"mask.{mask_type}.help"))
        sizes = _source_sizes() if st.session_state["weights"] == PRETRAINED else None
        if sizes is not None and sizes.causal:  # the checkpoint's causal mask, whatever is chosen here
            st.caption(t("controls.mask_causal_checkpoint"))
    if "window" not in hidden:
        window_help = t("controls.window_help")
        _int_field("window", 0, LIMITS.tokens_max, window_help, disabled=mask_type != "window", changed=changed)
    if "block_pad" not in hidden:
        st.toggle(
            t("controls.block_pad"),
            key="block_pad",
            help=t("controls.block_pad_help"),
            disabled=mask_type == "padding",  # the padding mask blocks them already
            on_change=_after(changed),
            persist_state=_PERSIST,
        )


def _render_text_controls(hidden: frozenset[str], changed: Changed) -> None:
    if "tokens" in hidden:
        return
    text = st.text_area(
        t("controls.tokens"),
        key="tokens",
        max_chars=LIMITS.text_chars_max,
        help=t("controls.tokens_help"),
        on_change=_after(changed),
        persist_state=_PERSIST,
    )
    st.caption(t("controls.examples"))
    row = st.container(horizontal=True, gap="small")
    for name, example in EXAMPLES:
        row.button(
            t(f"example.{name}"),
            key=f"example_{name}",
            on_click=_after(changed, _use_example, example, "padding" if name == "padded" else None),
        )
    checkpoints.render_example_buttons(st, dict(EXAMPLES))
    training.render_examples_link(st)
    text, removed = clean_text(text)  # typed or pasted text is user input just like a link
    if removed:
        st.warning(t("input.control_chars", count=removed))
    if st.session_state["weights"] == PRETRAINED:  # a checkpoint cuts the text with its own tokenizer
        st.caption(t("controls.tokenizer_checkpoint"))
        return
    tokenizer = st.session_state["tokenizer"]
    if "tokenizer" not in hidden:
        tokenizer = st.radio(
            t("controls.tokenizer"),
            _options("tokenizer"),
            key="tokenizer",
            horizontal=True,
            format_func=choice_labels(
                "tokenizer", _options("tokenizer"), lambda name, lang: t(f"tokenizer.{name}", lang=lang)
            ),
            help=t("controls.tokenizer_help"),
            on_change=_after(changed),
            persist_state=_PERSIST,
        )
    count = len(tokenize(text, tokenizer))
    st.caption(t("controls.token_count", count=count, high=LIMITS.tokens_max))


def _render_image_controls(hidden: frozenset[str], changed: Changed) -> None:
    """The image a run reads: a bundled sample, or the learner's upload (refused with a message, the sample kept)."""
    if "image" in hidden:
        return
    upload = current_upload()
    st.selectbox(
        t("controls.image"),
        _options("image"),
        key="image",
        format_func=choice_labels("image", _options("image"), image_name),
        disabled=upload is not None,
        help=t("controls.image_help"),
        on_change=_after(changed),
        persist_state=_PERSIST,
    )
    st.file_uploader(
        t("controls.image_upload"),
        type=_UPLOAD_TYPES,
        key=UPLOAD_KEY,
        on_change=_after(changed, _read_upload),
        max_upload_size=_UPLOAD_MB,
        help=t(
            "controls.image_upload_help",
            formats=" / ".join(ACCEPTED_FORMATS),
            mb=f"{LIMITS.image_bytes_max / 2**20:.0f}",
            pixels=f"{LIMITS.image_pixels_max:,}",
        ),
    )
    refused = st.session_state.get(_UPLOAD_REFUSED)
    if refused is not None and st.session_state.get(UPLOAD_KEY) is not None:
        st.error(error_message(refused))
    st.caption(t("controls.image_upload_shown" if upload is not None else "controls.image_upload_link"))


def _render_run_controls(hidden: frozenset[str], changed: Changed) -> None:
    """The seed, positional encoding, device and number type."""
    weights = st.session_state["weights"]
    if "seed" not in hidden:
        help_text = t("controls.seed_help" if weights == RANDOM else f"controls.seed_help_{weights}")
        _int_field("seed", 0, LIMITS.seed_max, help_text, disabled=weights == PRETRAINED, changed=changed)
    if "positional" not in hidden:
        st.toggle(
            t("controls.positional"),
            key="positional",
            help=t("controls.positional_help"),
            disabled=weights != RANDOM,
            on_change=_after(changed),
            persist_state=_PERSIST,
        )
        if weights != RANDOM:
            st.caption(t(f"controls.positional_{weights}"))
    labels = choice_labels(
        "device", _options("device"), lambda name, lang: t("device.auto", lang=lang) if name == "auto" else str(name)
    )
    _select("device", hidden, format_func=labels, on_change=_after(changed))
    _select("dtype", hidden, help=t("controls.dtype_help"), on_change=_after(changed))


def render_source_controls(hidden: Collection[str] = ()) -> st.delta_generator.DeltaGenerator:
    """The sidebar's top: where the weights come from (the task, the checkpoint, the layer). Returns the place of the
    live controls, which :func:`render_live_controls` fills (call :func:`load_url_state` first).

    Args:
        hidden: widget keys not to draw (teacher mode); their values come from the session
            (the link or the defaults) all the same.
    """
    hidden = frozenset(hidden)
    with st.sidebar:
        heading(st, t("controls.header"), level=2)
        _show_restored_numbers({"layer"})
        _render_weight_controls(hidden)
        _render_layer_control(hidden)
    return st.sidebar.container()


def render_live_controls(changed: Changed, hidden: Collection[str] = ()) -> None:
    """Where the page is drawing (the live controls' place in the sidebar): the sizes, the mask and the text (or the
    image), the live controls but :data:`RUN_KEYS`. Their values are the session's: read them with
    :func:`current_choices` (and the upload with :func:`current_upload`).

    Args:
        changed: called after each change (its callback; see :mod:`components.live_controls`).
        hidden: controls not drawn (teacher mode).
    """
    hidden = frozenset(hidden)
    _show_restored_numbers(set(LIVE_KEYS) - set(RUN_KEYS))
    _render_size_controls(hidden, changed)
    _render_mask_controls(hidden, changed)
    if reads_image():
        _render_image_controls(hidden, changed)
    else:
        _render_text_controls(hidden, changed)


def render_run_controls(changed: Changed, hidden: Collection[str] = ()) -> None:
    """Where the page is drawing (under the other live controls): the seed, positional encoding, device and number
    type (:data:`RUN_KEYS`), as :func:`render_live_controls` draws the others."""
    hidden = frozenset(hidden)
    _show_restored_numbers(RUN_KEYS)
    _render_run_controls(hidden, changed)


def current_choices() -> Choices:
    """The controls' values by config field, from the session where the widgets keep them (after
    :func:`load_url_state`): a choice that is no longer offered becomes the first offered, and the text is
    cleaned of control characters (the text box says how many)."""
    state = st.session_state
    for key, domain in DOMAINS.items():
        if domain.kind == "choice" and state.get(key) not in _options(key):
            state[key] = (_options(key) or ("",))[0]
        if domain.kind == "int" and not isinstance(state.get(key), int):  # an emptied field: its default
            state[key] = DEFAULTS[key]
    choices = {key: state[key] for key in DOMAINS}
    choices["tokens"] = clean_text(str(state["tokens"]))[0]
    choices["hub_id"] = str(state["hub_id"]).strip()
    return choices


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
        config = AttentionConfig(**choices)
    except ConfigError as error:
        st.error(error_message(error))
        return None
    if config.weights == PRETRAINED:
        try:
            runner.cached_sizes(config.weight_spec)
        except SourceUnavailableError as error:
            st.error(source_message(error))
            return _with_random_weights(config)
    return config


def _with_random_weights(config: AttentionConfig) -> AttentionConfig | None:
    try:
        return dataclasses.replace(config, weights=RANDOM)
    except ConfigError as error:  # the learner's own sizes or text do not run either
        st.error(error_message(error))
        return None


def show_device_used(run: AttentionRun) -> None:
    """Where the run happened (under the controls)."""
    st.caption(t("controls.device_used", device=str(run.device.device), dtype=run.config.dtype))


def show_run_notes(run: AttentionRun) -> None:
    """Warnings about choices that may not do what the user expects."""
    config, tokens, device = run.config, run.tokens, run.device
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
