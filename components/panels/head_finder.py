"""The head finder (a checkpoint's page): pick a query and a key token, and every head of every layer of the
checkpoint is shown by the weight it puts from one on the other, as a layer x head map and a ranked list, with
buttons that show a head in the four steps."""

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
from components.head_picker import move_head
from components.headings import heading
from components.i18n import t
from components.pretrained import checkpoint_source, where_ran
from components.safe_text import md_escape
from components.url_state import changed_in_link, write_link
from mha.config import PRETRAINED
from mha.head_finder import find_token, head_weights, rank_heads
from mha.pipeline import AttentionRun
from mha.sources.base import IMAGE

__all__ = ["BUTTONS", "FINDER_KEYS", "finder_chart", "finder_frame", "for_slide", "render", "show_head"]

#: The head finder's widget keys, also its URL names (a position, or in a link a token's text).
FINDER_KEYS = ("finder_query", "finder_key")
BUTTONS = 3  # of the heads listed, those with a button that shows the head in the four steps
_TOP = 5  # heads listed under the map
_ANNOTATE_CELLS = 400  # write each weight in its cell up to this many cells
#: The layer axis's title written level, above the labels (a rotated CJK title is hard to read).
_UPRIGHT_TITLE = {"titleAngle": 0, "titleAlign": "right", "titleBaseline": "bottom", "titleX": -4, "titleY": -4}
_PATCH = re.compile(r"r(\d+)c(\d+)")  # a patch's label: its row and column (mha.vision.patches)


def render(run: AttentionRun, slide: bool = False) -> None:
    """Pick a query and a key token; every head of every layer, as a layer x head map and a ranked list (nothing for
    weights other than a checkpoint's). ``slide``: a presentation's slide (teacher mode), whose map has larger words
    and cells."""
    if run.source_kind != PRETRAINED:
        return
    config = run.config
    source = checkpoint_source(config)
    placed = runner.cached_attention_maps(config.weight_spec, source.input_of(config), str(run.device.device))
    tokens, maps = placed.value
    box = st.container(border=True)
    heading(box, t("finder.title"))
    what = "finder.what_causal" if source.causal else "finder.what_image" if source.modality == IMAGE else "finder.what"
    box.markdown(t(what, checkpoint=md_escape(config.pretrained_name)))
    where_ran(box, placed)
    _load_pair(tokens, source.modality == IMAGE)
    labels = [f"{i}:{token}" for i, token in enumerate(tokens)]
    left, right = box.columns(2)
    options = list(range(len(tokens)))
    query = left.selectbox(t("finder.query"), options, key="finder_query", format_func=labels.__getitem__)
    key = right.selectbox(t("finder.key"), options, key="finder_key", format_func=labels.__getitem__)
    write_link({"finder_query": str(query), "finder_key": str(key)})
    table = head_weights(maps, query, key)  # (layers, H)
    title = t("finder.chart", looking=labels[query], looked_at=labels[key])
    chart = for_slide(finder_chart(*table.shape, title), slide)
    box.vega_lite_chart(finder_frame(table), chart, theme=None, width="content")
    ranked = rank_heads(maps, query, key)[:_TOP]
    entries = " · ".join(
        t("finder.entry", layer=head.layer, head=head.head, weight=f"{head.weight:.2f}") for head in ranked
    )
    box.markdown(f"{t('finder.top')} {entries}")
    box.caption(t("finder.uniform", count=len(tokens), uniform=f"{1 / len(tokens):.2f}"))
    row = box.container(horizontal=True, gap="small")
    for number, head in enumerate(ranked[:BUTTONS]):
        row.button(
            t("finder.show", layer=head.layer, head=head.head),
            key=f"finder_show_{number}",
            on_click=show_head,
            args=(head.layer, head.head),
        )


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


def show_head(layer: int, head: int) -> None:
    """A button's callback: show ``head`` of ``layer`` in the four steps."""
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


def for_slide(spec: dict[str, object], slide: bool) -> dict[str, object]:
    """``spec`` (:func:`finder_chart`) as a slide shows it (teacher mode): its words and cells larger; unchanged off a
    slide."""
    if not slide:
        return spec
    sized = {**spec, "config": _WORD_SIZES}
    for side in ("width", "height"):
        sized[side] = round(cast(int, spec[side]) * _SLIDE_CELL_SCALE)
    return scale_fonts(sized, PRESENTATION_FONT_SCALE)
