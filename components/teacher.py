"""Teacher (presentation) mode: one thing per slide, large type, only the controls the host shows.

URL parameters, mirrored like every control, so the host's link opens exactly the view on the wall:

    teacher  ``1`` (or true/on/yes) turns presentation mode on; ``0`` (or absent) is the normal page
    step     the slide shown, by its name: ``1``..``4`` the four pipeline steps, ``5`` (or ``summary``) the
             summary and live check, and where the page has them ``model`` (before step 1: trained weights'
             task, training and curves, a training's progress; a checkpoint's sizes and notes), ``patches``
             (after step 2, weights trained here on images, the digits: the patches on the image, a query's
             weights over it, attention distance, rollout), ``heads`` (after step 2, a checkpoint: the head
             finder and the pattern search) and ``timeline`` (after step 4, trained weights: the heads during training)
    hide     a comma list of controls not drawn while presenting, e.g. ``seed,device,positional``
             (names in :data:`HIDEABLE`); their values still come from the link or the defaults

The slides of a page are data: the page's sections name them (:mod:`components.page_sections`; :func:`slides_of`
a page's, from the weights' source and whether the run holds an image's attention); Previous / Next and the ← →
keys walk them in order, and each slide shows its own thing first: what is about the model is on its own slides,
never above every step. A slide the page does not have (``step=heads`` on random weights) opens the nearest one
before it, with a note that says so.

A value that cannot be used (``step=9``, ``step=intro``, ``hide=colour``) is reported as a
:class:`~components.url_params.Problem`, shown like every other link problem, and a safe
value is taken (parsing: :func:`components.url_params.parse_teacher_params`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.charts import PRESENTATION_FONT_SCALE
from components.controls import show_run_notes, show_url_problems
from components.i18n import choice_labels, t
from components.page_sections import Page, draw_slide, fit_slide, slide_names, slide_order, slide_title
from components.panels import Results, ValueParts
from components.panels.frame import SLIDE_CHART_KEY
from components.url_params import HIDEABLE, TEACHER_KEYS, Problem, parse_teacher_params
from components.url_state import changed_in_link, link_value, write_link
from mha.config import AttentionConfig
from mha.pipeline import AttentionRun

__all__ = [
    "LARGE_TYPE_CSS",
    "TeacherView",
    "initial_sidebar_state",
    "load_view",
    "place_view",
    "render_navigation",
    "render_settings",
    "render_slide",
    "slides_of",
    "sync_url",
    "to_teacher_params",
    "use_large_type",
]

_STEP = "teacher_step"  # session key of the slide: no widget, Previous / Next set it
_NAVIGATION_KEYS = {"top": ("Left", "Right"), "bottom": (None, None)}  # keyboard shortcuts: one set per page

SLIDE_CHART_MARGIN_PX = 16  # under a slide's main chart, to the window's bottom edge
#: Projector type: constant CSS only (never user text), scoped to the main area. Captions grow too (larger
#: than a normal page's body text); ``--attn-chart-font-scale`` tells charts drawn in the page how much to
#: enlarge their type (charts sent as specs get :func:`components.charts.scale_fonts`), and
#: ``--attn-chart-screen-fit`` tells a slide's main chart (drawn in the ``SLIDE_CHART_KEY`` container) to fit the
#: window's height below its top, less that margin (``heatmap.js``).
LARGE_TYPE_CSS = f"""<style>
[data-testid="stMainBlockContainer"] {{
  max-width: 100%; padding: 3.75rem 2.5rem 4rem; --attn-chart-font-scale: {PRESENTATION_FONT_SCALE};
}}
[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] li {{ font-size: 1.4rem; line-height: 1.45; }}
[data-testid="stMainBlockContainer"] [data-testid="stCaptionContainer"] p {{ font-size: 1.2rem; line-height: 1.45; }}
[data-testid="stMainBlockContainer"] h3 {{ font-size: 2.1rem; padding: 0 0 0.5rem; }}
[data-testid="stMainBlockContainer"] [data-testid="stCode"] code {{ font-size: 1.05rem; }}
[data-testid="stMainBlockContainer"] [data-testid="stTable"] {{ font-size: 1.3rem; }}
[data-testid="stMainBlockContainer"] [data-testid="stWidgetLabel"] p {{ font-size: 1.3rem; }}
[data-testid="stMainBlockContainer"] button p {{ font-size: 1.35rem; }}
[data-testid="stMainBlockContainer"] [class*="st-key-teacher_slide_"] p {{ font-size: 1.9rem; font-weight: 600; }}
[data-testid="stMainBlockContainer"] .st-key-{SLIDE_CHART_KEY} {{ --attn-chart-screen-fit: {SLIDE_CHART_MARGIN_PX}; }}
</style>"""
#: Scrolls the page to its top when the slide changes (Streamlit keeps the scroll position across reruns), and walks
#: the slides with ← and → whatever has focus: Streamlit's own shortcuts skip a focused input (a head's radio) and a
#: focused control takes the arrows for itself (the radio moves the head), so the arrows are caught on the window
#: before any of them, and Previous or Next clicked. A text field keeps its arrows (the caret), a control its Tab.
_TO_TOP_JS = """
const TYPED = new Set(['text', 'search', 'email', 'url', 'tel', 'password', 'number']);
function typedInto(node) {
  if (!node || !node.tagName) return false;
  if (node.isContentEditable || node.tagName === 'TEXTAREA') return true;
  return node.tagName === 'INPUT' && TYPED.has((node.type || 'text').toLowerCase());
}
function walk(event) {
  const step = {ArrowLeft: 'previous', ArrowRight: 'next'}[event.key];
  if (!step || event.ctrlKey || event.metaKey || event.altKey || event.shiftKey) return;
  const target = (event.composedPath && event.composedPath()[0]) || event.target;
  if (typedInto(target)) return;
  const button = document.querySelector('.st-key-teacher_' + step + '_top button');
  if (!button) return;  // not a slide
  event.preventDefault();
  event.stopImmediatePropagation();
  if (!button.disabled) button.click();
}
export default function (component) {
  if (!window.attnTeacherKeys) {
    window.attnTeacherKeys = true;
    window.addEventListener('keydown', walk, {capture: true});
  }
  const slide = component.data && component.data.slide;
  if (window.attnTeacherSlide === slide) return;
  window.attnTeacherSlide = slide;
  const boxes = document.querySelectorAll('[data-testid="stMain"], [data-testid="stAppViewContainer"]');
  for (const box of [document.scrollingElement, ...boxes]) if (box) box.scrollTop = 0;
}
"""
_to_top = st.components.v2.component("attention_playground.slide_top", js=_TO_TOP_JS)


@dataclass(frozen=True)
class TeacherView:
    """Presentation mode on or off, the slide (its name in ``slides``), the controls the host hides (in HIDEABLE
    order), and the page's slides in order (:func:`slides_of`; the steps and the summary until the page knows)."""

    on: bool = False
    step: str = "1"
    hide: tuple[str, ...] = ()
    slides: tuple[str, ...] = slide_names()

    def on_page(self, slides: tuple[str, ...]) -> TeacherView:
        """This view on a page with ``slides``: a slide the page lacks becomes the nearest one it has."""
        return replace(self, step=fit_slide(self.step, slides), slides=slides)

    @property
    def shows_model(self) -> bool:
        """Whether what is about the model (training, a checkpoint's notes) is drawn: on its slide, or off a slide."""
        return not self.on or self.step == "model"

    @property
    def hidden(self) -> frozenset[str]:
        """The controls not drawn now: the host's list while presenting, none on the normal page."""
        return frozenset(self.hide) if self.on else frozenset()


# ---------------------------------------------------------------- the link
def to_teacher_params(view: TeacherView) -> dict[str, str | None]:
    """The view as query strings; ``None`` = leave the name out of the URL.

    ``teacher`` and ``step`` are written only while presenting; ``hide`` whenever it is not
    empty, so a host can prepare the list on the normal page and then switch the mode on.
    """
    return {
        "teacher": "1" if view.on else None,
        "step": view.step if view.on else None,
        "hide": ",".join(view.hide) or None,
    }


# ---------------------------------------------------------------- the session's view
def initial_sidebar_state() -> str:
    """``"collapsed"`` when a presentation opens (more room for the slide), else Streamlit's ``"auto"``."""
    if "teacher" in st.session_state:
        return "collapsed" if st.session_state["teacher"] else "auto"
    switch = parse_teacher_params({"teacher": link_value("teacher") or "0"}).values["teacher"]
    return "collapsed" if switch else "auto"


def load_view() -> tuple[TeacherView, list[Problem]]:
    """Apply the link's presentation values to the session (like :func:`controls.load_url_state`).

    Only values that differ from what this session last wrote are read, so Previous / Next and the
    switch are not undone by the URL they wrote. Returns the view and the link's problems.
    """
    parsed = parse_teacher_params(changed_in_link(TEACHER_KEYS))
    state_keys = {"teacher": "teacher", "step": _STEP, "hide": "hide"}
    for name, value in parsed.values.items():
        st.session_state[state_keys[name]] = list(value) if name == "hide" else value
    defaults = {"teacher": False, _STEP: "1", "hide": []}
    for key, default in defaults.items():
        if key not in st.session_state:
            st.session_state[key] = default
    hide = tuple(name for name in HIDEABLE if name in st.session_state["hide"])
    view = TeacherView(bool(st.session_state["teacher"]), str(st.session_state[_STEP]), hide)
    return view, parsed.problems


def slides_of(config: AttentionConfig | None) -> tuple[str, ...]:
    """The page's slides for ``config`` (the weights actually used: a checkpoint that could not load is random
    weights); ``None`` (nothing can run) has the steps and the summary."""
    if config is None:
        return slide_names()
    # the patch panels come with a run that holds the image's attention (the digits' ViT, trained here); a
    # checkpoint's ViT shows its image through the steps and the head finder (from [CLS]) instead
    return slide_names(config.weights, image=config.trains_on_images)


def place_view(view: TeacherView, config: AttentionConfig | None) -> TeacherView:
    """The view on this page: its slides, the slide fitted to them (and kept in the session, so Next goes on
    from the slide shown)."""
    if not view.on:
        return view
    slides = slides_of(config) + (("room",) if view.step == "room" else ())  # the room: only where asked
    placed = view.on_page(slides)
    if placed.step != view.step:  # once: the session keeps the slide shown
        st.info(_slide_missing_note(view.step, placed.step))
    st.session_state[_STEP] = placed.step
    return placed


def _slide_missing_note(asked: str, shown: str) -> str:
    """Why the slide ``asked`` for is not the one shown: the page lacks it and shows ``shown`` instead, the nearest
    slide before it (:func:`~components.url_params.fit_slide`) or, when none comes before it, the page's first."""
    order = slide_order()
    before = order.index(shown) < order.index(asked)
    key = "teacher.slide_missing" if before else "teacher.slide_missing_first"
    return t(key, asked=slide_title(asked), shown=slide_title(shown))


def sync_url(view: TeacherView) -> None:
    """Write the view to the URL (and remove what does not apply), so the link reopens this view."""
    write_link(to_teacher_params(view))


# ---------------------------------------------------------------- widgets and slides
def _go_to(step: str) -> None:
    st.session_state[_STEP] = step


def _leave() -> None:
    st.session_state["teacher"] = False


def render_settings(view: TeacherView) -> None:
    """Sidebar: the presentation switch (key ``teacher``) and the controls to hide (key ``hide``)."""
    box = st.sidebar.expander(t("teacher.settings"), icon=":material/co_present:", expanded=view.on)
    box.toggle(t("teacher.toggle"), key="teacher", help=t("teacher.toggle_help"), persist_state="session")
    box.multiselect(
        t("teacher.hide"),
        HIDEABLE,
        key="hide",
        format_func=choice_labels("hide", HIDEABLE, lambda name, lang: t(f"teacher.control.{name}", lang=lang)),
        help=t("teacher.hide_help"),
        persist_state="session",
    )
    if view.hidden:
        st.sidebar.caption(t("teacher.hidden_now", names=", ".join(t(f"teacher.control.{n}") for n in view.hide)))


def use_large_type() -> None:
    """Projector-sized type for the main area (constant CSS)."""
    st.html(LARGE_TYPE_CSS)


def render_navigation(view: TeacherView, position: str = "top", place: DeltaGenerator | None = None) -> None:
    """Previous, the slide's name, Next (and, at the top, Leave); ``position`` is ``"top"`` or ``"bottom"``;
    ``place``: the container to draw in (the top's is kept before the page knows its slides)."""
    back_key, next_key = _NAVIGATION_KEYS[position]
    where = view.slides.index(view.step) if view.step in view.slides else 0
    earlier = view.slides[where - 1] if where > 0 else None
    later = view.slides[where + 1] if where + 1 < len(view.slides) else None
    row = (place or st).container(horizontal=True, vertical_alignment="center", gap="medium")
    # A button with a keyboard shortcut shows its key (an arrow) already: an arrow icon too would double it.
    row.button(
        t("teacher.previous"),
        key=f"teacher_previous_{position}",
        icon=None if back_key else ":material/arrow_back:",
        disabled=earlier is None,
        on_click=_go_to,
        args=(earlier or view.step,),
        shortcut=back_key,
    )
    row.container(key=f"teacher_slide_{position}", width="content").markdown(slide_title(view.step))
    row.button(
        t("teacher.next"),
        key=f"teacher_next_{position}",
        icon=None if next_key else ":material/arrow_forward:",
        icon_position="right",
        type="primary",
        disabled=later is None,
        on_click=_go_to,
        args=(later or view.step,),
        shortcut=next_key,
    )
    if position == "top":
        row.space("stretch")
        row.button(t("teacher.leave"), key="teacher_leave", icon=":material/close:", type="tertiary", on_click=_leave)
        with row:
            _to_top(key="teacher_to_top", data={"slide": view.step}, width="content", height="content")


def render_slide(view: TeacherView, results: Results, link_notes: Sequence[Problem] = ()) -> None:
    """The current slide -- its sections (:func:`components.page_sections.draw_slide`): a pipeline step, the summary
    and the live check, or one about the model (its sizes and notes, the patches on the image, the head finder, the
    training timeline) -- filled at once for ``results``; then what the link changed (``link_notes``: under the
    slide, never between its heading and its chart) and the navigation again. ``view``: the presentation view (its
    ``step`` picks the slide)."""
    parts = ValueParts(hide_picker="head" in view.hidden)
    draw_slide(view.step, Page(results.run, parts, slide=True, hidden=view.hidden))
    parts.fill(results)
    show_url_problems(list(link_notes))
    render_navigation(view, "bottom")


def show_notes(view: TeacherView, run: AttentionRun) -> None:
    """The run's notes (``controls.show_run_notes``): on a page with a model slide, on that slide only (a checkpoint's
    notes would fill the screen above every step); on random weights above every slide, as on the normal page."""
    if not view.on or "model" not in view.slides:
        show_run_notes(run)
