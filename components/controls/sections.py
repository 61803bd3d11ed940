"""The sidebar's sections: where the weights come from (a change runs the page) and the live controls (the sizes,
the mask, the text or the image, the run's settings), with their callbacks."""

from __future__ import annotations

from collections.abc import Collection

import streamlit as st

from components import checkpoints, training
from components.controls.choices import reads_image, session_sizes
from components.controls.fields import after, int_field, select, show_restored_numbers
from components.controls.keys import (
    D_MODEL_PRESETS,
    EXAMPLES,
    LIVE_KEYS,
    PERSIST,
    REVIEW_EXAMPLES,
    RUN_KEYS,
    TRAINED_SIZES,
    Changed,
    options,
)
from components.controls.link import open_on_task_input
from components.controls.uploads import render_image_controls
from components.headings import heading
from components.i18n import choice_labels, restore_choices, t
from components.url_params import (
    clean_text,
)
from mha.checkpoints import any_checkpoint_cap_mb
from mha.config import DOMAINS, IMAGE_TASKS, LIMITS, PRETRAINED, RANDOM, TRAINED
from mha.text.reviews import LENGTH
from mha.tokens import tokenize
from mha.training.tasks import reads_characters, task_mask


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
        if st.session_state["num_heads"] % st.session_state.get("num_kv_heads", 1):
            st.session_state["num_kv_heads"] = st.session_state["num_heads"]
        _follow_heads()
        _on_task_change()
    else:
        open_on_task_input()


def _on_task_change() -> None:
    """A task is shown with the mask it trains with (the learner may change it afterwards, with a note)."""
    restore_choices()  # a callback may run in the first run after a language switch
    st.session_state["mask_type"] = task_mask(st.session_state.get("task", ""))
    open_on_task_input()


def _render_weight_controls(hidden: frozenset[str]) -> None:
    weights = select(
        "weights",
        hidden,
        format_func=choice_labels("weights", options("weights"), lambda name, lang: t(f"weights.{name}", lang=lang)),
        on_change=_on_weights_change,
        help=t("controls.weights_help"),
    )
    if weights == TRAINED:
        labels = choice_labels("task", options("task"), lambda name, lang: t(f"task.{name}", lang=lang))
        select("task", hidden, format_func=labels, on_change=_on_task_change)
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
                persist_state=PERSIST,
            )
    if weights == PRETRAINED:
        select("checkpoint", hidden, help=t("controls.checkpoint_help"))
        cap_mb = any_checkpoint_cap_mb()
        if cap_mb is not None and "hub_id" not in hidden:  # the server lets a learner name a checkpoint of their own
            st.text_input(
                t("controls.hub_id"),
                key="hub_id",
                max_chars=LIMITS.hub_id_chars_max,
                placeholder="owner/name",
                help=t("controls.hub_id_help", cap_mb=cap_mb),
                persist_state=PERSIST,
            )
        hub_id = str(st.session_state.get("hub_id", "")).strip()
        if hub_id and cap_mb is not None:
            checkpoints.ensure_hub_downloaded(hub_id)
        else:
            checkpoints.ensure_downloaded(st.session_state["checkpoint"])


def _render_layer_control(hidden: frozenset[str]) -> None:
    sizes = session_sizes() if st.session_state["weights"] != RANDOM else None
    layers = 1 if sizes is None else sizes.num_layers
    if not 0 <= st.session_state["layer"] < layers:
        if layers > 1:  # with one layer (or weights that cannot be made here) there is no layer to choose
            st.warning(t("controls.layer_clamped", value=st.session_state["layer"], high=layers - 1))
        st.session_state["layer"] = min(max(st.session_state["layer"], 0), layers - 1)
    if layers > 1 and "layer" not in hidden:
        int_field("layer", 0, layers - 1, t("controls.layer_help", high=layers - 1))


def _render_size_controls(hidden: frozenset[str], changed: Changed) -> None:
    """d_model and the head count side by side, d_k under them (a checkpoint's sizes: a caption)."""
    if st.session_state["weights"] == PRETRAINED:  # the checkpoint's sizes; the learner's wait for their return
        locked = session_sizes()
        if locked is not None and not {"d_model", "num_heads"} <= hidden:
            d_k = locked.d_model // locked.num_heads
            st.caption(t("controls.sizes_locked", d_model=locked.d_model, num_heads=locked.num_heads, d_k=d_k))
        return
    d_model, num_heads = st.session_state["d_model"], st.session_state["num_heads"]
    d_high, h_high = _size_caps()
    left, right = st.columns(2, gap="small", vertical_alignment="bottom")
    if "d_model" not in hidden:
        help_text = t("controls.d_model_help", low=LIMITS.d_model_min, high=d_high)
        with left:
            d_model = int_field("d_model", LIMITS.d_model_min, LIMITS.d_model_max, help_text, changed=changed)
    if "num_heads" in hidden:
        return
    help_text = t("controls.num_heads_help", high=h_high)
    with right:
        num_heads = int_field("num_heads", 1, LIMITS.num_heads_max, help_text, changed=after(changed, _follow_heads))
    if d_model % num_heads == 0:
        st.caption(t("controls.d_k", d_model=d_model, num_heads=num_heads, d_k=d_model // num_heads))
    else:
        st.caption(t("controls.d_k_bad", d_model=d_model, num_heads=num_heads, ratio=f"{d_model / num_heads:.2f}"))
    st.session_state[_HEADS_SEEN] = num_heads


def _size_caps() -> tuple[int, int]:
    """The largest d_model and head count the weights allow (a training here has lower caps)."""
    if st.session_state["weights"] == TRAINED:
        return LIMITS.train_d_model_max, LIMITS.train_num_heads_max
    return LIMITS.d_model_max, LIMITS.num_heads_max


def _render_more_size_controls(hidden: frozenset[str], changed: Changed) -> None:
    """The rarer sizes, under the others: d_model's presets and the key/value heads."""
    if st.session_state["weights"] == PRETRAINED:
        return
    if "d_model" not in hidden:
        d_model = st.session_state["d_model"]
        presets = tuple(p for p in D_MODEL_PRESETS if p <= _size_caps()[0])
        st.session_state["d_model_preset"] = d_model if d_model in presets else None
        st.segmented_control(
            t("controls.d_model_presets"),
            presets,
            key="d_model_preset",
            on_change=after(changed, _apply_preset),
        )
    if not {"num_heads", "num_kv_heads"} & hidden:
        _render_kv_heads(st.session_state["num_heads"], changed)


_HEADS_SEEN = "_num_heads_drawn"  # the head count the controls last showed (num_kv_heads follows it from there)


def _follow_heads() -> None:
    """A layer with one K/V head per query head keeps it when the head count changes (MHA stays MHA)."""
    if st.session_state.get("num_kv_heads") == st.session_state.get(_HEADS_SEEN):
        st.session_state["num_kv_heads"] = st.session_state["num_heads"]


def _render_kv_heads(num_heads: int, changed: Changed) -> None:
    help_text = t("controls.num_kv_heads_help")
    kv_heads = int_field("num_kv_heads", 1, LIMITS.num_heads_max, help_text, changed=changed)
    if kv_heads is None:
        return
    if num_heads % kv_heads == 0:
        kind = "MHA" if kv_heads == num_heads else ("MQA" if kv_heads == 1 else "GQA")
        group = num_heads // kv_heads
        st.caption(t("controls.kv_groups", num_heads=num_heads, num_kv_heads=kv_heads, group=group, kind=kind))
    else:
        divisors = ", ".join(str(h) for h in range(1, num_heads + 1) if num_heads % h == 0)
        st.caption(t("controls.kv_groups_bad", num_heads=num_heads, num_kv_heads=kv_heads, divisors=divisors))


def _render_mask_controls(hidden: frozenset[str], changed: Changed) -> None:
    labels = choice_labels("mask_type", options("mask_type"), lambda name, lang: t(f"mask.{name}", lang=lang))
    mask_type = select("mask_type", hidden, format_func=labels, on_change=after(changed))
    if "mask_type" not in hidden:
        st.caption(t(f"mask.{mask_type}.help"))
        sizes = session_sizes() if st.session_state["weights"] == PRETRAINED else None
        if sizes is not None and sizes.causal:  # the checkpoint's causal mask, whatever is chosen here
            st.caption(t("controls.mask_causal_checkpoint"))
    if "window" not in hidden:
        window_help = t("controls.window_help")
        int_field("window", 0, LIMITS.tokens_max, window_help, disabled=mask_type != "window", changed=changed)
    if "block_pad" not in hidden:
        st.toggle(
            t("controls.block_pad"),
            key="block_pad",
            help=t("controls.block_pad_help"),
            disabled=mask_type == "padding",  # the padding mask blocks them already
            on_change=after(changed),
            persist_state=PERSIST,
        )


_TEXT_BOX_PX = 76  # three lines of the sentence: the sizes and the mask stay on the sidebar's first screen


def _render_text_box(hidden: frozenset[str], changed: Changed) -> None:
    """The learner's sentence, first in the live controls (what was removed from it, under it)."""
    if "tokens" in hidden:
        return
    text = st.text_area(
        t("controls.tokens"),
        key="tokens",
        height=_TEXT_BOX_PX,
        max_chars=LIMITS.text_chars_max,
        help=t("controls.tokens_help"),
        on_change=after(changed),
        persist_state=PERSIST,
    )
    if removed := clean_text(text)[1]:  # typed or pasted text is user input just like a link
        st.warning(t("input.control_chars", count=removed))


def _render_text_controls(hidden: frozenset[str], changed: Changed) -> None:
    """Under the sentence, the sizes and the mask: the examples to click, the tokenizer and the count."""
    if "tokens" in hidden:
        return
    text = clean_text(st.session_state["tokens"])[0]
    st.caption(t("controls.examples"))
    row = st.container(horizontal=True, gap="small")
    for name, example in EXAMPLES:
        row.button(
            t(f"example.{name}"),
            key=f"example_{name}",
            on_click=after(changed, _use_example, example, "padding" if name == "padded" else None),
        )
    checkpoints.render_example_buttons(st, dict(EXAMPLES))
    training.render_examples_link(st)
    characters = st.session_state["weights"] == TRAINED and reads_characters(st.session_state["task"])
    if characters:  # the reviews
        _render_review_examples(changed)
    if st.session_state["weights"] == PRETRAINED:  # a checkpoint cuts the text with its own tokenizer
        st.caption(t("controls.tokenizer_checkpoint"))
        return
    if characters:  # the model reads characters whatever the tokenizer says
        st.caption(t("controls.tokenizer_reviews", length=LENGTH))
        st.caption(t("controls.review_count", count=len("".join(text.split())), length=LENGTH))  # as read_review
        return
    tokenizer = st.session_state["tokenizer"]
    if "tokenizer" not in hidden:
        tokenizer = st.radio(
            t("controls.tokenizer"),
            options("tokenizer"),
            key="tokenizer",
            horizontal=True,
            format_func=choice_labels(
                "tokenizer", options("tokenizer"), lambda name, lang: t(f"tokenizer.{name}", lang=lang)
            ),
            help=t("controls.tokenizer_help"),
            on_change=after(changed),
            persist_state=PERSIST,
        )
    count = len(tokenize(text, tokenizer))
    st.caption(t("controls.token_count", count=count, high=LIMITS.tokens_max))


def _render_review_examples(changed: Changed) -> None:
    """The reviews task's sentences of both kinds, to click."""
    st.caption(t("reviews.examples"))
    row = st.container(horizontal=True, gap="small")
    for number, (kind, text) in enumerate(REVIEW_EXAMPLES):
        row.button(
            t(f"reviews.example.{kind}", text=text),
            key=f"review_example_{number}",
            on_click=after(changed, _use_example, text, None),
        )


def _render_run_controls(hidden: frozenset[str], changed: Changed) -> None:
    """The seed, positional encoding, device and number type."""
    weights = st.session_state["weights"]
    if "seed" not in hidden:
        help_text = t("controls.seed_help" if weights == RANDOM else f"controls.seed_help_{weights}")
        int_field("seed", 0, LIMITS.seed_max, help_text, disabled=weights == PRETRAINED, changed=changed)
    if "positional" not in hidden:
        st.radio(
            t("controls.positional"),
            options("positional"),
            key="positional",
            horizontal=True,
            format_func=choice_labels(
                "positional", options("positional"), lambda name, lang: t(f"positional.{name}", lang=lang)
            ),
            help=t("controls.positional_help"),
            disabled=weights == PRETRAINED,
            on_change=after(changed),
            persist_state=PERSIST,
        )
        if weights != RANDOM:
            st.caption(t(f"controls.positional_{weights}"))
    labels = choice_labels(
        "device", options("device"), lambda name, lang: t("device.auto", lang=lang) if name == "auto" else str(name)
    )
    select("device", hidden, format_func=labels, on_change=after(changed))
    select("dtype", hidden, help=t("controls.dtype_help"), on_change=after(changed))


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
        show_restored_numbers({"layer"})
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
    show_restored_numbers(set(LIVE_KEYS) - set(RUN_KEYS))
    image = reads_image()
    if image:
        render_image_controls(hidden, changed)
    else:
        _render_text_box(hidden, changed)
    _render_size_controls(hidden, changed)
    _render_mask_controls(hidden, changed)
    if not image:
        _render_text_controls(hidden, changed)
    _render_more_size_controls(hidden, changed)


def render_run_controls(changed: Changed, hidden: Collection[str] = ()) -> None:
    """Where the page is drawing (under the other live controls): the seed, positional encoding, device and number
    type (:data:`RUN_KEYS`), as :func:`render_live_controls` draws the others."""
    hidden = frozenset(hidden)
    show_restored_numbers(RUN_KEYS)
    _render_run_controls(hidden, changed)
