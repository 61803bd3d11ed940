"""The page's sections, in page order, one entry each: the main page, the slides and the link's ``step=`` all read
:data:`SECTIONS`.

A :class:`Section` draws one thing of the page (a panel, the head finder, the training timeline, ...) for a
:class:`Page`: the run, the parts its values go to (:class:`components.panels.parts.ValueParts`), whether it is on a
slide and the controls the host hides. Its :class:`Slide`, where it has one, is the slide it is drawn on in a
presentation: its name (the link's ``step=``), its title, and which pages have it (the weights' source, whether the
run holds an image's attention, or only where a link asks). Sections may share a slide (the summary and the live
check); the slides come in the order of their first sections on the page (:func:`slide_order`).

So a panel is wired in one place: its entry here. ``playground.py`` draws the page's sections in order
(:func:`draw_page`), :func:`slide_names` gives a page's slides (what ``teacher.py`` walks and the link names),
:func:`draw_slide` draws one, and :func:`slide_title` names it in the navigation.

The training box is not a section: drawn before the run (on the page and on the model slide), it decides whether
there is a run to draw (:func:`components.panels.training_box.render`, called by ``playground.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components import check_yourself, pretrained
from components.controls import select_color_scale
from components.heatmap import COLOR_SCALES
from components.i18n import t
from components.panels import (
    ValueParts,
    checkpoint_check,
    export,
    generation,
    glance,
    head_finder,
    head_patterns,
    live_check,
    model,
    padding,
    patches,
    step1,
    step2,
    step3,
    step4,
    summary,
    timeline,
)
from components.url_params import SLIDES, STEPS
from mha.config import PRETRAINED, RANDOM, TRAINED, WEIGHT_SOURCES
from mha.pipeline import AttentionRun

__all__ = [
    "SECTIONS",
    "Page",
    "Section",
    "Slide",
    "draw_page",
    "draw_slide",
    "fit_slide",
    "slide_names",
    "slide_order",
    "slide_title",
]


@dataclass(frozen=True)
class Slide:
    """A presentation's slide: ``name`` (its ``step=`` in the link), its ``title`` (a message key, formatted with the
    slide's step and :data:`STEPS`), and the pages that have it: those whose weights are in ``weights``; with
    ``image``, only where the run holds an image's attention (weights trained here on images); with ``asked``, none
    unless a link asks for it."""

    name: str
    title: str
    weights: tuple[str, ...] = WEIGHT_SOURCES
    image: bool = False
    asked: bool = False

    def on(self, weights: str, image: bool) -> bool:
        """Whether a page of ``weights`` (``image``: its run holds an image's attention) has this slide."""
        return not self.asked and weights in self.weights and (image or not self.image)


@dataclass(frozen=True)
class Page:
    """What a section draws for: the run, the parts its values go to, a slide (teacher mode) or the main page, and
    the controls the host hides while presenting."""

    run: AttentionRun
    parts: ValueParts
    slide: bool = False
    hidden: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Section:
    """One section of the page: ``draw(page)`` draws it; ``slide``: the slide it is on (``None``: the main page only);
    ``on_page``: drawn on the main page; ``last``: there, its place is kept and it is drawn after the live controls
    filled the values (what :func:`draw_page` returns draws it: the steps never wait for it)."""

    name: str
    draw: Callable[[Page], None]
    slide: Slide | None = None
    on_page: bool = True
    last: bool = False


# ---------------------------------------------------------------- how each section draws
def _slide_row() -> DeltaGenerator:
    """Above a slide's chart: the head picker (and step 2's colour scale) on one line, so the chart starts high."""
    return st.container(horizontal=True, vertical_alignment="center", gap="medium")


def _color_scale() -> str:
    """How the page colours attention weights: the link's or the learner's choice (a widget above step 1; on a
    slide beside step 2's chart), read before the control is drawn in this run."""
    scale = st.session_state.get("color_scale")
    return str(scale) if scale in COLOR_SCALES else COLOR_SCALES[0]


def _step1(page: Page) -> None:
    """Step 1, under the head picker; on the page the weights' colour scale too (step 2's and the grid's)."""
    if page.slide:
        page.parts.add_head_picker(_slide_row())
    else:
        page.parts.add_head_picker(st)
        select_color_scale()
    step1.render(page.parts, slide=page.slide)


def _step2(page: Page) -> None:
    """Step 2 in the colour scale chosen above step 1 (on a slide: beside the head picker, over the chart)."""
    if page.slide:
        row = _slide_row()
        page.parts.add_head_picker(row)
        with row:
            scale = select_color_scale(hidden="color_scale" in page.hidden, inline=True)
    else:
        scale = _color_scale()  # chosen above step 1
    step2.render(page.parts, scale, slide=page.slide)


def _model(page: Page) -> None:
    if page.slide:
        model.render_slide(page.run)
    else:
        model.render(page.parts)


def _patches(page: Page) -> None:
    if page.run.image is not None:
        patches.render(page.parts)


#: The slides of more than one section, and the model's (the training box is drawn on it too, before the run).
MODEL = Slide("model", "teacher.slide.model", weights=(TRAINED, PRETRAINED))
FINAL = Slide(str(SLIDES), "teacher.final")
HEADS = Slide("heads", "teacher.slide.heads", weights=(PRETRAINED,))

#: The page's sections, in page order.
SECTIONS: tuple[Section, ...] = (
    Section("glance", lambda page: glance.render(page.parts, _color_scale())),
    Section("model", _model, MODEL),
    Section("step1", _step1, Slide("1", "teacher.step_of")),
    Section("step2", _step2, Slide("2", "teacher.step_of")),
    Section("patches", _patches, Slide("patches", "teacher.slide.patches", image=True)),
    Section("head_finder", lambda page: head_finder.render(page.run, page.slide), HEADS, last=True),
    Section("head_patterns", lambda page: head_patterns.render(page.run, page.slide), HEADS, last=True),
    Section("generation", lambda page: generation.render(page.parts, page.run, pretrained.generates(page.run.config))),
    Section("step3", lambda page: step3.render(page.parts, slide=page.slide), Slide("3", "teacher.step_of")),
    Section("step4", lambda page: step4.render(page.parts, slide=page.slide), Slide("4", "teacher.step_of")),
    Section(
        "timeline",
        lambda page: timeline.render(page.run, slide=page.slide),
        Slide("timeline", "teacher.slide.timeline", weights=(TRAINED,)),
    ),
    Section("padding", lambda page: padding.render(page.parts)),
    Section("summary", lambda page: summary.render(page.parts), FINAL),
    Section("live_check", lambda page: live_check.render(page.parts), FINAL),
    Section("checkpoint_check", lambda page: checkpoint_check.render(page.run)),
    Section("export", lambda page: export.render(page.parts)),
    Section(
        "room",
        lambda page: check_yourself.render_room_slide(page.run),
        Slide("room", "teacher.slide.room", asked=True),
        on_page=False,
    ),
)


def _slides() -> dict[str, Slide]:
    """Every slide by name, in the order of its first section on the page."""
    slides: dict[str, Slide] = {}
    for section in SECTIONS:
        if section.slide is not None:
            slides.setdefault(section.slide.name, section.slide)
    return slides


# ---------------------------------------------------------------- the slides
def slide_order() -> tuple[str, ...]:
    """Every slide a presentation can show, in the order it shows them; each is its ``step=`` in the link: ``model``
    (trained weights: the task, the training and its curves; a checkpoint: its sizes and notes), the pipeline steps,
    ``patches`` (a run on an image), ``heads`` (a checkpoint: the head finder and, for a causal one, the pattern
    search), ``timeline`` (trained weights: the heads during training), ``5`` (the summary and the live check) and
    ``room`` (the room's answers: a page's slide only where a link asks for it, ``teacher=1&step=room``)."""
    return tuple(_slides())


def slide_names(weights: str = RANDOM, image: bool = False) -> tuple[str, ...]:
    """The slides of a page in :func:`slide_order`: those of its sections whose :class:`Slide` is ``on`` for
    ``weights`` (one of the config's weight sources) and ``image`` (whether the run holds an image's attention).

    Random weights on a text: ``1 2 3 4 5``; trained weights: ``model 1 2 3 4 timeline 5`` (an image task adds
    ``patches``); a checkpoint: ``model 1 2 heads 3 4 5``.
    """
    return tuple(name for name, slide in _slides().items() if slide.on(weights, image))


def fit_slide(name: str, slides: Sequence[str]) -> str:
    """``name`` if the page has that slide; else the nearest slide before it in :func:`slide_order` that the page has
    (a link's ``heads`` on random weights opens step 2), or, when the page has none before it, the page's first slide,
    which comes after it (``model`` on random weights opens step 1)."""
    if name in slides:
        return name
    order = list(slide_order())
    before = order[: order.index(name)] if name in order else []
    return next((slide for slide in reversed(before) if slide in slides), slides[0])


def slide_title(name: str) -> str:
    """The slide's title in the session's language: ``Step 2 / 4`` for a pipeline step, else its own."""
    return t(_slides()[name].title, step=name, steps=STEPS)


def draw_slide(name: str, page: Page) -> None:
    """Draw slide ``name``: every section on it, in page order."""
    for section in SECTIONS:
        if section.slide is not None and section.slide.name == name:
            section.draw(page)


# ---------------------------------------------------------------- the main page
def draw_page(page: Page) -> Callable[[], None]:
    """Draw the main page's sections in order; those drawn ``last`` get their place now. Returns what draws them
    there, to call once the live controls filled the values."""
    kept = []
    for section in SECTIONS:
        if not section.on_page:
            continue
        if section.last:
            kept.append((st.container(), section))
        else:
            section.draw(page)

    def draw_kept() -> None:
        for place, section in kept:
            with place:
                section.draw(page)

    return draw_kept
