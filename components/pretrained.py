"""The parts of the page for a pretrained checkpoint: loading it (or saying why not), the check
against the checkpoint itself, the head finder over every head of every layer (of the text, or of
an image checkpoint's image) and, for a causal checkpoint (GPT-2), the pattern search:
previous-token and induction scores of every head.

Each function does nothing for other weight sources, so the page calls them unconditionally.
"""

from __future__ import annotations

import re
from typing import cast

import pandas as pd
import streamlit as st
import torch
from torch import Tensor

from components import runner
from components.charts import PRESENTATION_FONT_SCALE, scale_fonts
from components.checkpoints import FINDER_REQUEST, PAIRS
from components.controls import source_message, with_random_weights
from components.head_picker import move_head
from components.headings import heading
from components.i18n import t
from components.safe_text import md_escape
from components.url_state import changed_in_link, write_link
from mha.config import PRETRAINED, AttentionConfig
from mha.head_finder import find_token, head_weights, rank_heads, rank_table
from mha.memory import Placed
from mha.pipeline import AttentionRun
from mha.sources import SourceUnavailableError
from mha.sources.base import IMAGE
from mha.sources.checkpoint.source import PretrainedSource

__all__ = [
    "FINDER_KEYS",
    "finder_chart",
    "finder_frame",
    "generates",
    "render_checkpoint_check",
    "render_head_finder",
    "render_head_patterns",
    "use_checkpoint",
]

#: The head finder's widget keys, also its URL names (a position, or in a link a token's text).
FINDER_KEYS = ("finder_query", "finder_key")
_TOP = 5  # heads listed under the map
_BUTTONS = 3  # of them, with a button that shows the head in the four steps
_ANNOTATE_CELLS = 400  # write each weight in its cell up to this many cells
#: The layer axis's title written level, above the labels (a rotated CJK title is hard to read).
_UPRIGHT_TITLE = {"titleAngle": 0, "titleAlign": "right", "titleBaseline": "bottom", "titleX": -4, "titleY": -4}


def use_checkpoint(config: AttentionConfig | None) -> AttentionConfig | None:
    """Load the config's checkpoint (a spinner the first time); if it cannot be, say why and use random weights."""
    if config is None or config.weights != PRETRAINED:
        return config
    try:
        with st.spinner(t("pretrained.loading", name=md_escape(config.pretrained_name))):
            runner.cached_source(config.weight_spec)
    except SourceUnavailableError as error:
        st.error(source_message(error))
        return with_random_weights(config)
    return config


# ---------------------------------------------------------------- the check against the checkpoint
def render_checkpoint_check(run: AttentionRun) -> None:
    """Beside the check against PyTorch: our layer against the checkpoint itself, with its name on the line."""
    if run.source_kind != PRETRAINED:
        return
    placed = runner.cached_checkpoint_check(run.config, run)
    check = placed.value
    box = st.container(border=True)
    name = md_escape(check.checkpoint)
    if not check.applies:
        box.info(t(f"check.checkpoint_{check.reason}", checkpoint=name))
        return
    _where(box, placed)
    numbers = {
        "checkpoint": name,
        "layer": check.layer,
        "weights": f"{check.max_abs_weights:.2e}",
        "out": f"{check.max_abs_output:.2e}",
        "tol": f"{check.tolerance:.0e}",
        "tol_out": f"{check.output_tolerance:.1e}" if check.output_scale > 1 else f"{check.tolerance:.0e}",
    }
    (box.success if check.passed else box.error)(t(f"check.checkpoint_{'pass' if check.passed else 'fail'}", **numbers))
    if check.output_scale > 1:
        box.caption(t("check.checkpoint_scaled", scale=f"{check.output_scale:.3g}", tol=numbers["tol"]))
    box.caption(t(check.how, kv_heads=_kv_heads(run)))


def _kv_heads(run: AttentionRun) -> str:
    """How the checkpoint's key/value heads meet its query heads, in the words of the check's note: repeated for a
    group, or one each (the note of a family without ``repeat_kv`` does not use it)."""
    kv, heads = run.model.num_kv_heads, run.model.num_heads
    return t("check.kv_repeated", kv=kv, group=heads // kv) if kv < heads else t("check.kv_own")


# ---------------------------------------------------------------- the head finder
_PATCH = re.compile(r"r(\d+)c(\d+)")  # a patch's label: its row and column (mha.vision.patches)


def _default_pair(tokens: tuple[str, ...], image: bool) -> tuple[int, int]:
    """For an image [CLS] -> the centre patch; for a text the tutorials' pair where it has it ("it" -> "animal"),
    else the last word -> the first."""
    last_patch = _PATCH.fullmatch(tokens[-1]) if image else None
    if last_patch is not None:  # an image's tokens end with the patch of the last row and column
        rows, columns = (int(number) + 1 for number in last_patch.groups())
        centre = find_token(tokens, f"r{rows // 2}c{columns // 2}")
        return 0, 1 if centre is None else centre
    for query_text, key_text in PAIRS.values():
        query, key = find_token(tokens, query_text), find_token(tokens, key_text)
        if query is not None and key is not None:
            return query, key
    last = max(len(tokens) - 2, 0)  # before [SEP]
    return last, min(1, len(tokens) - 1)  # after [CLS]


def _position(raw: object, tokens: tuple[str, ...]) -> int | None:
    """A link's or a button's value as a position: a number in range, or a token's text."""
    text = str(raw).strip()
    if text.lstrip("-").isdigit():
        return int(text) if 0 <= int(text) < len(tokens) else None
    return find_token(tokens, text)


def _load_pair(tokens: tuple[str, ...], image: bool) -> None:
    """Put the finder's (query, key) in the session: asked by a button, by the link, kept, or the default."""
    state = st.session_state
    default = dict(zip(FINDER_KEYS, _default_pair(tokens, image), strict=True))
    requested = dict(zip(FINDER_KEYS, state.pop(FINDER_REQUEST, ()), strict=False))
    requested |= changed_in_link(FINDER_KEYS)
    for key in FINDER_KEYS:
        if key in requested:
            position = _position(requested[key], tokens)
            if position is None:
                used = f"{default[key]}:{tokens[default[key]]}"
                st.warning(t("finder.link_token", name=key, value=md_escape(requested[key], limit=40), used=used))
            state[key] = default[key] if position is None else position
        elif not (isinstance(state.get(key), int) and 0 <= state[key] < len(tokens)):
            state[key] = default[key]


def _show_head(layer: int, head: int) -> None:
    st.session_state["layer"] = layer
    move_head(head)


def finder_frame(table: Tensor) -> pd.DataFrame:
    """(layers, H) weights -> one row per head: ``layer``, ``head``, ``weight``."""
    layers, heads = table.shape
    return pd.DataFrame(
        {
            "layer": torch.arange(layers, device="cpu").repeat_interleave(heads).numpy(),  # (layers * H,)
            "head": torch.arange(heads, device="cpu").repeat(layers).numpy(),
            "weight": table.flatten().float().numpy(),
        }
    )


def finder_chart(
    layers: int, heads: int, title: str, value_title: str | None = None, width: int | None = None
) -> dict[str, object]:
    """A layer x head heatmap of weights on 0..1 (data: :func:`finder_frame`), each weight in its cell when few.

    Args:
        value_title: what the values are called in the legend and tooltip (default: weight).
        width: the cells' width at most, in pixels (default: 36 per head, 20 beyond 16 heads).
    """
    layer_title, head_title = t("chart.layer"), t("chart.head")
    weight_title = t("chart.weight") if value_title is None else value_title
    encoding = {
        "x": {"field": "head", "type": "ordinal", "title": head_title, "axis": {"labelAngle": 0}},
        "y": {"field": "layer", "type": "ordinal", "title": layer_title, "axis": _UPRIGHT_TITLE},
        "tooltip": [
            {"field": "layer", "type": "ordinal", "title": layer_title},
            {"field": "head", "type": "ordinal", "title": head_title},
            {"field": "weight", "type": "quantitative", "title": weight_title, "format": ".3f"},
        ],
    }
    scale = {"domain": [0, 1], "scheme": "blues"}  # the weights' colours of the step panels
    color = {"field": "weight", "type": "quantitative", "title": weight_title, "scale": scale}
    cells = [{"mark": {"type": "rect"}, "encoding": {**encoding, "color": color}}]
    if layers * heads <= _ANNOTATE_CELLS:
        text_color = {"condition": {"test": "datum.weight > 0.5", "value": "white"}, "value": "black"}
        cells.append(
            {
                "mark": {"type": "text", "fontSize": 10},
                "encoding": {**encoding, "text": {"field": "weight", "format": ".2f"}, "color": text_color},
            }
        )
    cell = 36 if heads <= 16 else 20
    if width is not None:
        cell = max(min(cell, width // heads), 12)
    # width and height size the cells; without "pad" Streamlit's default autosize ("fit") squeezes the title,
    # axes and legend into them too, and a 2-layer map drew no cell at all
    autosize = {"type": "pad", "contains": "padding"}
    return {"title": title, "width": cell * heads, "height": cell * layers, "autosize": autosize, "layer": cells}


#: Vega-Lite's default sizes of a chart's words, made explicit so that a slide can enlarge them (``scale_fonts``).
_WORD_SIZES = {
    "axis": {"labelFontSize": 10, "titleFontSize": 11},
    "legend": {"labelFontSize": 10, "titleFontSize": 11},
    "title": {"fontSize": 13},
}
_SLIDE_CELL_SCALE = 1.4  # a map's cells on a slide, larger for the room


def _for_slide(spec: dict[str, object], slide: bool) -> dict[str, object]:
    """``spec`` as a slide shows it (teacher mode): its words and cells larger; unchanged off a slide."""
    if not slide:
        return spec
    sized = {**spec, "config": _WORD_SIZES}
    for side in ("width", "height"):
        sized[side] = round(cast(int, spec[side]) * _SLIDE_CELL_SCALE)
    return scale_fonts(sized, PRESENTATION_FONT_SCALE)


def _where(box: st.delta_generator.DeltaGenerator, placed: Placed[object]) -> None:
    """Where the checkpoint's own forward ran, and why on the CPU where the run's device ran out of memory."""
    failed = placed.out_of_memory
    if failed is not None:
        size = {name: md_escape(str(value), limit=200) for name, value in failed.size.items()}
        box.warning(t("pretrained.out_of_memory", device=failed.device, **size))
    box.caption(t("pretrained.ran_on", device=placed.device))


def _source(config: AttentionConfig) -> PretrainedSource:
    return cast(PretrainedSource, runner.cached_source(config.weight_spec))


def render_head_finder(run: AttentionRun, slide: bool = False) -> None:
    """Pick a query and a key token; every head of every layer, as a layer x head map and a ranked list.
    For a causal checkpoint, the pattern search follows (:func:`render_head_patterns`). ``slide``: a presentation's
    slide (teacher mode), whose maps have larger words and cells."""
    if run.source_kind != PRETRAINED:
        return
    config = run.config
    source = _source(config)
    causal = source.causal
    placed = runner.cached_attention_maps(config.weight_spec, source.input_of(config), str(run.device.device))
    tokens, maps = placed.value
    box = st.container(border=True)
    heading(box, t("finder.title"))
    what = "finder.what_causal" if causal else "finder.what_image" if source.modality == IMAGE else "finder.what"
    box.markdown(t(what, checkpoint=md_escape(config.pretrained_name)))
    _where(box, placed)
    _load_pair(tokens, source.modality == IMAGE)
    labels = [f"{i}:{token}" for i, token in enumerate(tokens)]
    left, right = box.columns(2)
    options = list(range(len(tokens)))
    query = left.selectbox(t("finder.query"), options, key="finder_query", format_func=labels.__getitem__)
    key = right.selectbox(t("finder.key"), options, key="finder_key", format_func=labels.__getitem__)
    write_link({"finder_query": str(query), "finder_key": str(key)})
    table = head_weights(maps, query, key)  # (layers, H)
    title = t("finder.chart", looking=labels[query], looked_at=labels[key])
    chart = _for_slide(finder_chart(*table.shape, title), slide)
    box.vega_lite_chart(finder_frame(table), chart, theme=None, width="content")
    ranked = rank_heads(maps, query, key)[:_TOP]
    entries = " · ".join(
        t("finder.entry", layer=head.layer, head=head.head, weight=f"{head.weight:.2f}") for head in ranked
    )
    box.markdown(f"{t('finder.top')} {entries}")
    box.caption(t("finder.uniform", count=len(tokens), uniform=f"{1 / len(tokens):.2f}"))
    row = box.container(horizontal=True, gap="small")
    for number, head in enumerate(ranked[:_BUTTONS]):
        row.button(
            t("finder.show", layer=head.layer, head=head.head),
            key=f"finder_show_{number}",
            on_click=_show_head,
            args=(head.layer, head.head),
        )
    if causal:
        render_head_patterns(run, slide)


# ---------------------------------------------------------------- the pattern search (causal checkpoints)
#: Each score: its message key part, and the head label it stands for.
_PATTERNS = (("previous", "previous token"), ("induction", "induction"))
_PATTERN_CHART_WIDTH = 300  # px of cells: two maps side by side, legends included, in the page's column


def _repeat_text(text: str) -> None:
    st.session_state["tokens"] = f"{text} {text}"


def render_head_patterns(run: AttentionRun, slide: bool = False) -> None:
    """Every head of every layer scored as a previous-token head (on the text) and as an induction head
    (on a repeated random sequence): two layer x head maps, the strongest heads with buttons that show them."""
    config = run.config
    placed = runner.cached_head_patterns(config.weight_spec, config.tokens, str(run.device.device))
    patterns = placed.value
    box = st.container(border=True)
    heading(box, t("patterns.title"))
    box.markdown(t("patterns.what", checkpoint=md_escape(config.pretrained_name), half=patterns.half))
    _where(box, placed)
    for (kind, label), table, column in zip(
        _PATTERNS, (patterns.previous, patterns.induction), box.columns(2), strict=True
    ):
        chart = finder_chart(*table.shape, t(f"patterns.{kind}_chart"), t("patterns.score"), _PATTERN_CHART_WIDTH)
        chart = _for_slide(chart, slide)
        column.vega_lite_chart(finder_frame(table), chart, theme=None, width="content")
        ranked = rank_table(table)[:_BUTTONS]  # (layer, head, score), the highest first
        entries = " · ".join(
            t("finder.entry", layer=head.layer, head=head.head, weight=f"{head.weight:.2f}") for head in ranked
        )
        column.markdown(f"{t('patterns.top', label=t(f'label.{label}'))} {entries}")
        row = column.container(horizontal=True, gap="small")
        for number, head in enumerate(ranked):
            row.button(
                t("finder.show", layer=head.layer, head=head.head),
                key=f"pattern_{kind}_{number}",
                on_click=_show_head,
                args=(head.layer, head.head),
            )
    uniform = {"previous": f"{patterns.uniform_previous:.2f}", "induction": f"{patterns.uniform_induction:.2f}"}
    box.caption(t("patterns.uniform", **uniform))
    box.caption(t("patterns.published"))
    box.button(
        t("patterns.repeat"),
        key="pattern_repeat",
        on_click=_repeat_text,
        args=(config.tokens,),
        help=t("patterns.repeat_help"),
    )


def generates(config: AttentionConfig) -> bool:
    """Whether ``config``'s weights are a checkpoint that generates (a causal language model with its head); ``False``
    for other weights and where the checkpoint cannot be made here."""
    if config.weights != PRETRAINED:
        return False
    try:
        return bool(getattr(runner.cached_source(config.weight_spec), "generates", False))
    except (SourceUnavailableError, ValueError):
        return False
