"""Teacher (presentation) mode: one pipeline step per slide, large type, only the controls the host shows.

URL parameters, mirrored like every control, so the host's link opens exactly the view on the wall:

    teacher  ``1`` (or true/on/yes) turns presentation mode on; ``0`` (or absent) is the normal page
    step     the slide shown: ``1``..``4`` are the four pipeline steps, ``5`` the summary and live check
    hide     a comma list of controls not drawn while presenting, e.g. ``seed,device,positional``
             (names in :data:`HIDEABLE`); their values still come from the link or the defaults

A value that cannot be used (``step=9``, ``hide=colour``) is reported as a
:class:`~components.url_params.Problem`, shown like every other link problem, and a safe
value is taken (parsing: :func:`components.url_params.parse_teacher_params`).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from components.charts import PRESENTATION_FONT_SCALE
from components.controls import select_color_scale
from components.i18n import choice_labels, t
from components.panels import Results, ValueParts, live_check, step1, step2, step3, step4, summary
from components.url_params import HIDEABLE, SLIDES, STEPS, TEACHER_KEYS, Problem, parse_teacher_params
from components.url_state import changed_in_link, write_link

__all__ = [
    "LARGE_TYPE_CSS",
    "TeacherView",
    "initial_sidebar_state",
    "load_view",
    "render_navigation",
    "render_settings",
    "render_slide",
    "slide_label",
    "sync_url",
    "to_teacher_params",
    "use_large_type",
]

_STEP = "teacher_step"  # session key of the slide: no widget, Previous / Next set it
_NAVIGATION_KEYS = {"top": ("Left", "Right"), "bottom": (None, None)}  # keyboard shortcuts: one set per page

#: Projector type: constant CSS only (never user text), scoped to the main area. Captions grow too (larger
#: than a normal page's body text); ``--attn-chart-font-scale`` tells charts drawn in the page how much to
#: enlarge their type (charts sent as specs get :func:`components.charts.scale_fonts`).
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
</style>"""
#: Scrolls the page to its top when the slide changes (Streamlit keeps the scroll position across reruns).
_TO_TOP_JS = """
export default function (component) {
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
    """Presentation mode on or off, the slide (1..SLIDES), and the controls the host hides (in HIDEABLE order)."""

    on: bool = False
    step: int = 1
    hide: tuple[str, ...] = ()

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
        "step": str(view.step) if view.on else None,
        "hide": ",".join(view.hide) or None,
    }


# ---------------------------------------------------------------- the session's view
def initial_sidebar_state() -> str:
    """``"collapsed"`` when a presentation opens (more room for the slide), else Streamlit's ``"auto"``."""
    if "teacher" in st.session_state:
        return "collapsed" if st.session_state["teacher"] else "auto"
    switch = parse_teacher_params({"teacher": st.query_params.get("teacher", "0")}).values["teacher"]
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
    defaults = {"teacher": False, _STEP: 1, "hide": []}
    for key, default in defaults.items():
        if key not in st.session_state:
            st.session_state[key] = default
    hide = tuple(name for name in HIDEABLE if name in st.session_state["hide"])
    view = TeacherView(bool(st.session_state["teacher"]), int(st.session_state[_STEP]), hide)
    return view, parsed.problems


def sync_url(view: TeacherView) -> None:
    """Write the view to the URL (and remove what does not apply), so the link reopens this view."""
    write_link(to_teacher_params(view))


# ---------------------------------------------------------------- widgets and slides
def _go_to(step: int) -> None:
    st.session_state[_STEP] = min(max(step, 1), SLIDES)


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


def slide_label(step: int) -> str:
    """``Step 2 / 4`` for a pipeline step; the last slide's title for the summary and live check."""
    return t("teacher.step_of", step=step, steps=STEPS) if step <= STEPS else t("teacher.final")


def render_navigation(view: TeacherView, position: str = "top") -> None:
    """Previous, the slide's number, Next (and, at the top, Leave); ``position`` is ``"top"`` or ``"bottom"``."""
    back_key, next_key = _NAVIGATION_KEYS[position]
    row = st.container(horizontal=True, vertical_alignment="center", gap="medium")
    # A button with a keyboard shortcut shows its key (an arrow) already: an arrow icon too would double it.
    row.button(
        t("teacher.previous"),
        key=f"teacher_previous_{position}",
        icon=None if back_key else ":material/arrow_back:",
        disabled=view.step <= 1,
        on_click=_go_to,
        args=(view.step - 1,),
        shortcut=back_key,
    )
    row.container(key=f"teacher_slide_{position}", width="content").markdown(slide_label(view.step))
    row.button(
        t("teacher.next"),
        key=f"teacher_next_{position}",
        icon=None if next_key else ":material/arrow_forward:",
        icon_position="right",
        type="primary",
        disabled=view.step >= SLIDES,
        on_click=_go_to,
        args=(view.step + 1,),
        shortcut=next_key,
    )
    if position == "top":
        row.space("stretch")
        row.button(t("teacher.leave"), key="teacher_leave", icon=":material/close:", type="tertiary", on_click=_leave)
        with row:
            _to_top(key="teacher_to_top", data={"slide": view.step}, width="content", height="content")


def render_slide(view: TeacherView, results: Results) -> None:
    """The current slide -- one pipeline step, or the summary and the live check -- filled at once for ``results``;
    then the navigation again. ``view``: the presentation view (its ``step`` picks the slide)."""
    parts = ValueParts(hide_picker="head" in view.hidden)
    if view.step in (1, 2):  # the head and the colour scale side by side: a slide's height is the chart's
        row = st.container(horizontal=True, vertical_alignment="center", gap="medium")
        parts.add_head_picker(row)
        if view.step == 1:
            step1.render(parts, slide=True)
        else:
            with row:
                color_scale = select_color_scale(hidden="color_scale" in view.hidden, inline=True)
            step2.render(parts, color_scale, slide=True)
    elif view.step == 3:
        step3.render(parts, slide=True)
    elif view.step == 4:
        step4.render(parts, slide=True)
    else:
        summary.render(parts)
        live_check.render(parts)
    parts.fill(results)
    render_navigation(view, "bottom")
