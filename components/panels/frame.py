"""What every step panel is built of: its bordered box and heading, what it does beside its shapes and
parameters, the engine's code, the labs that take it further; and the small helpers the panels share."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from functools import cache

import numpy as np
import streamlit as st
import torch
from streamlit.delta_generator import DeltaGenerator
from torch import Tensor

from components import charts
from components.headings import heading
from components.i18n import current_language, t
from components.nav import render_lab_links
from components.panels.parts import Results, ValueParts
from components.panels.source_code import step_code
from mha.pipeline import AttentionRun

__all__ = [
    "SLIDE_CHART_KEY",
    "Facts",
    "Words",
    "blocked",
    "chart_text",
    "count",
    "explain",
    "feature_height",
    "finish",
    "panel",
    "row_px",
    "shape",
    "slide_chart",
    "thumbnails",
    "unscored",
]

#: The labs that take each step further (names of components.nav.LAB_PAGES).
STEP_LABS = {
    1: ("heads", "loop", "reshape"),
    2: ("scaling", "masks", "sculpt", "cross", "complexity", "attribution", "flash", "efficient"),
    3: ("reshape",),
    4: ("encoder",),
}
#: Up to this many tokens every row gets a label of its own, at least READABLE_ROW_PX tall.
LABELLED_TOKENS = 32
READABLE_ROW_PX = 13
SLIDE_CHART_KEY = "slide_chart"  # the container of a slide's main chart (its style fits the chart to the screen)

Facts = Callable[[Results], tuple[str, str]]  # a step's shapes and its parameters, as Markdown
Words = Callable[[Results], str]  # a step's words that quote its layer, as Markdown


def panel(step: int) -> DeltaGenerator:
    """The bordered box of pipeline step ``step`` with its heading."""
    box = st.container(border=True)
    heading(box, t(f"step{step}.title"))
    return box


def explain(
    box: DeltaGenerator, step: int, facts: Facts, parts: ValueParts, slide: bool, what: Words | None = None
) -> None:
    """What the step does | its shapes and parameters (parts: they follow the sizes); below, the engine's code.

    ``what``: the words of what the step does where they quote the layer (its formula, with or without biases): a
    part; else ``step{step}.what``, drawn at once. On a slide the parameters go under the explanation (the two
    columns come out about as tall, so the chart starts higher) and the code is folded under the chart by
    :func:`finish`.
    """
    left, right = box.columns(2)
    if what is None:
        left.markdown(t(f"step{step}.what"))
    else:
        parts.add(left, lambda results: st.markdown(what(results)))
    if slide:
        parts.add(left, lambda results: st.markdown(facts(results)[1]))
        parts.add(right, lambda results: st.markdown(facts(results)[0]))
        return
    parts.add(right, lambda results: st.markdown("\n\n".join(facts(results))))
    box.code(step_code(step), language="python")


def slide_chart(box: DeltaGenerator) -> DeltaGenerator:
    """The place of a slide's main chart, right under its heading: the slide's style (``SLIDE_CHART_KEY``, see
    :data:`components.teacher.LARGE_TYPE_CSS`) fits the chart drawn there into the window's height."""
    return box.container(key=SLIDE_CHART_KEY)


def finish(box: DeltaGenerator, step: int, slide: bool) -> None:
    """The step's labs; on a slide, the step's code folded (the chart comes first on a projector)."""
    render_lab_links(box, STEP_LABS[step])
    if slide:
        box.expander(t("steps.code"), icon=":material/code:").code(step_code(step), language="python")


def shape(value: Tensor | Sequence[int]) -> str:
    """``[1, 8, 10, 64]``: a shape as the list PyTorch prints."""
    return str(list(value.shape if isinstance(value, Tensor) else value))


def count(number: int) -> str:
    """``262,656``: a count with thousands separators."""
    return f"{number:,}"


def chart_text() -> charts.ChartText:
    """Chart words in the session's language."""
    return _chart_text(current_language())


@cache
def _chart_text(lang: str) -> charts.ChartText:
    """Chart words in ``lang``, looked up once per language (a page draws several charts per run)."""
    words = (item.name for item in dataclasses.fields(charts.ChartText))
    return charts.ChartText(**{word: t(f"chart.{word}", lang=lang) for word in words})


def row_px(length: int, target_px: int) -> int:
    """Height of one token's row: about ``target_px`` for the matrix, never too thin to label up to 32 tokens."""
    low = READABLE_ROW_PX if length <= LABELLED_TOKENS else 3
    return min(30, max(low, target_px // length))


def feature_height(length: int) -> int:
    """How tall a tokens x features matrix is drawn: about 300 px (rows of 3-30 px)."""
    return row_px(length, 300) * length


def thumbnails(run: AttentionRun) -> np.ndarray | None:
    """(L, h, w, 4) RGBA: each token's patch of the run's image (``run.patch_pictures``), for the charts' labels;
    ``None`` for text, or where the tokens are too many for a label each (:data:`LABELLED_TOKENS`)."""
    if run.patch_pictures is None or len(run.tokens) > LABELLED_TOKENS:
        return None
    return run.patch_pictures


def blocked(run: AttentionRun) -> Tensor:
    """(H, Lq, Lk) bool: cells the mask blocked (their masked score is -inf)."""
    return torch.isneginf(run.trace.attend.masked_scores[0])


def unscored(run: AttentionRun) -> Tensor | None:
    """(L,) bool: query rows no training loss looked at (drawn faded), or ``None`` when every row carries one."""
    if run.scored_rows is None or bool(run.scored_rows.all()):
        return None
    return ~run.scored_rows
