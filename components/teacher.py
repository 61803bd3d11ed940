"""Teacher (presentation) mode: one pipeline step per slide, large type, only the controls the host shows.

URL parameters, mirrored like every control, so the host's link opens exactly the view on the wall:

    teacher  ``1`` (or true/on/yes) turns presentation mode on; ``0`` (or absent) is the normal page
    step     the slide shown: ``1``..``4`` are the four pipeline steps, ``5`` the summary and live check
    hide     a comma list of controls not drawn while presenting, e.g. ``seed,device,positional``
             (names in :data:`HIDEABLE`); their values still come from the link or the defaults

A value that cannot be used (``step=9``, ``hide=colour``) is reported as a
:class:`~components.url_params.Problem`, shown like every other link problem, and a safe
value is taken. :func:`parse_teacher_params` is pure (no Streamlit) and unit-tested.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import streamlit as st

from components import steps
from components.controls import remember_query_value
from components.i18n import t
from components.url_params import ParsedParams, Problem
from mha.pipeline import AttentionRun
from mha.reference import TorchCheck

__all__ = [
    "HIDEABLE",
    "LARGE_TYPE_CSS",
    "SLIDES",
    "STEPS",
    "URL_NAMES",
    "TeacherView",
    "initial_sidebar_state",
    "load_view",
    "parse_teacher_params",
    "render_navigation",
    "render_settings",
    "render_slide",
    "slide_label",
    "sync_url",
    "to_teacher_params",
    "use_large_type",
]

#: Controls a host may hide (widget keys, as in the URL); ``tokens`` hides the text box and its examples.
HIDEABLE = ("d_model", "num_heads", "mask_type", "window", "tokens", "seed", "positional", "device", "head")
STEPS = 4
SLIDES = STEPS + 1  # the four steps, then the summary and the live check
URL_NAMES = ("teacher", "step", "hide")

_STEP = "teacher_step"  # session key of the slide: no widget, Previous / Next set it
_WRITTEN = "_teacher_url"  # the query values this session last wrote
_ON = frozenset({"1", "true", "on", "yes"})
_OFF = frozenset({"0", "false", "off", "no"})
_INTEGER = re.compile(r"[+-]?[0-9]+")  # ASCII digits only: a plain \d would also take "３"
_MAX_DIGITS = 6  # longer is out of range: never hand int() a 5000-digit string
_NAVIGATION_KEYS = {"top": ("Left", "Right"), "bottom": (None, None)}  # keyboard shortcuts: one set per page

#: Projector type: constant CSS only (never user text), scoped to the main area.
LARGE_TYPE_CSS = """<style>
[data-testid="stMainBlockContainer"] { max-width: 100%; padding: 4.5rem 2.5rem 4rem; }
[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] p,
[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] li { font-size: 1.45rem; line-height: 1.5; }
[data-testid="stMainBlockContainer"] h3 { font-size: 2.3rem; }
[data-testid="stMainBlockContainer"] [data-testid="stCode"] code { font-size: 1.05rem; }
[data-testid="stMainBlockContainer"] [data-testid="stTable"] { font-size: 1.3rem; }
[data-testid="stMainBlockContainer"] [data-testid="stWidgetLabel"] p { font-size: 1.3rem; }
[data-testid="stMainBlockContainer"] button p { font-size: 1.35rem; }
[data-testid="stMainBlockContainer"] [class*="st-key-teacher_slide_"] p { font-size: 1.9rem; font-weight: 600; }
</style>"""


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


# ---------------------------------------------------------------- the link, as pure functions
def _parse_switch(raw: str) -> tuple[bool, Problem | None]:
    word = raw.strip().lower()
    if word in _ON | _OFF:
        return word in _ON, None
    return False, Problem("teacher", "not_boolean", {"value": raw, "used": "false"})


def _parse_step(raw: str) -> tuple[int, Problem | None]:
    text = raw.strip()
    if not _INTEGER.fullmatch(text):
        return 1, Problem("step", "not_integer", {"value": raw, "used": 1})
    if len(text.lstrip("+-")) > _MAX_DIGITS:
        used = 1 if text.startswith("-") else SLIDES
    else:
        number = int(text)
        used = min(max(number, 1), SLIDES)
        if used == number:
            return number, None
    return used, Problem("step", "out_of_range", {"value": raw, "low": 1, "high": SLIDES, "used": used})


def _parse_hide(raw: str) -> tuple[tuple[str, ...], Problem | None]:
    names = {part.strip().lower() for part in raw.split(",")} - {""}
    unknown = sorted(names - set(HIDEABLE))
    known = tuple(name for name in HIDEABLE if name in names)
    if not unknown:
        return known, None
    return known, Problem("hide", "unknown_names", {"value": ", ".join(unknown), "choices": ", ".join(HIDEABLE)})


def parse_teacher_params(params: Mapping[str, str]) -> ParsedParams:
    """Parse the presentation values present in a query string.

    Args:
        params: query parameter name -> raw string; names outside :data:`URL_NAMES` are ignored.

    Returns:
        Values for the names present (``teacher``: bool, ``step``: int in 1..SLIDES,
        ``hide``: tuple of known control keys) and one :class:`Problem` per value that was changed:
        ``not_boolean`` (teacher), ``not_integer`` / ``out_of_range`` (step), ``unknown_names`` (hide,
        ``value`` lists the unknown names; the known ones are kept).
    """
    parsers = {"teacher": _parse_switch, "step": _parse_step, "hide": _parse_hide}
    values: dict[str, object] = {}
    problems: list[Problem] = []
    for name, parse in parsers.items():
        if name in params:
            values[name], problem = parse(str(params[name]))
            if problem is not None:
                problems.append(problem)
    return ParsedParams(values, problems)


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
    switch, _ = _parse_switch(st.query_params.get("teacher", "0"))
    return "collapsed" if switch else "auto"


def load_view() -> tuple[TeacherView, list[Problem]]:
    """Apply the link's presentation values to the session (like :func:`controls.load_url_state`).

    Only values that differ from what this session last wrote are read, so Previous / Next and the
    switch are not undone by the URL they wrote. Returns the view and the link's problems.
    """
    written = st.session_state.get(_WRITTEN, {})
    incoming = {name: value for name, value in st.query_params.to_dict().items() if name in URL_NAMES}
    parsed = parse_teacher_params({name: value for name, value in incoming.items() if written.get(name) != value})
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
    written = dict(st.session_state.get(_WRITTEN, {}))
    for name, value in to_teacher_params(view).items():
        if value is None:
            st.query_params.pop(name, None)
            written.pop(name, None)
        else:
            st.query_params[name] = value
            written[name] = value
    st.session_state[_WRITTEN] = written


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
        format_func=lambda name: t(f"teacher.control.{name}"),
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
    row.button(
        t("teacher.previous"),
        key=f"teacher_previous_{position}",
        icon=":material/arrow_back:",
        disabled=view.step <= 1,
        on_click=_go_to,
        args=(view.step - 1,),
        shortcut=back_key,
    )
    row.container(key=f"teacher_slide_{position}", width="content").markdown(slide_label(view.step))
    row.button(
        t("teacher.next"),
        key=f"teacher_next_{position}",
        icon=":material/arrow_forward:",
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


def _head(num_heads: int, hidden: bool) -> int:
    """The head for steps 1 and 2: the selector, or (hidden) the link's head, kept in range and in the URL."""
    if not hidden:
        return steps.select_head(num_heads)
    if not 0 <= st.session_state.get("head", 0) < num_heads:
        st.session_state["head"] = 0
    head = int(st.session_state["head"])
    remember_query_value("head", head)
    return head


@st.fragment
def _head_slide(run: AttentionRun, step: int, head_hidden: bool) -> None:
    """Step 1 or 2 with its head selector, redrawn alone when the head changes."""
    head = _head(run.config.num_heads, head_hidden)
    render = steps.render_step_1 if step == 1 else steps.render_step_2
    render(run, head)


def render_slide(view: TeacherView, run: AttentionRun, check: TorchCheck, counted: int) -> None:
    """The current slide: one pipeline step, or the summary and the live check; then the navigation again.

    Args:
        view: the presentation view (its ``step`` picks the slide).
        run: the page's traced run.
        check: the run compared with PyTorch (slide 5).
        counted: parameters held by the model (slide 5).
    """
    if view.step in (1, 2):
        _head_slide(run, view.step, "head" in view.hidden)
    elif view.step == 3:
        steps.render_step_3(run)
    elif view.step == 4:
        steps.render_step_4(run)
    else:
        steps.render_summary(run.config.d_model, run, counted=counted)
        steps.render_live_check(check, run)
    render_navigation(view, "bottom")
