"""Check yourself: a step's questions as widgets, their verdicts, the progress, and the room's answers.

Each step's questions (:mod:`mha.questions`, built from the run the parts are filled with) are drawn by a fragment
of their own among the step's parts, so answering one redraws only that step's questions, and a live control
redraws them with the new run. A widget's key is ``check_<step>_<name>``; a typed answer is a text input, a
multiple choice a radio. What a learner types is read, never shown back and never stored: the verdict is the
page's own words (``✓ Right.`` or ``✗ Not quite.`` and the worked answer from the page's numbers).

Progress: the ids of the questions answered right, in the session and in the link (``checked=1.wq_params,...``).
A room (``room=CODE`` in a learner's link) receives each verdict (right or wrong, never the text) in
:class:`mha.room_store.RoomStore`; a session sends at most :data:`FLOOD_ANSWERS` in :data:`FLOOD_SECONDS` seconds,
the rest are refused before the store is touched. A teacher's slide ``step=room`` opens a room and shows its counts.

The same machinery asks elsewhere: the generation panel's questions (:func:`render_generation`, built from the
generation it shows, :mod:`mha.generation_questions`), a model trained here (the part ``trained``, a box of its own
after step 4's, above the model's timeline) and a lab's (:func:`render_lab`, from the lab's own numbers,
:mod:`mha.lab_questions`).

Predict, then see: where a step's chart holds a question's answer (:data:`PREDICTED`), a switch (off by default)
hides the chart until that question is answered.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable, Sequence
from urllib.parse import urlencode

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components import cache
from components.i18n import t
from components.panels.parts import Results, ValueParts
from components.safe_text import md_escape
from components.url_state import changed_in_link, link_value, link_values, write_link
from mha.config import AttentionConfig
from mha.generation_questions import GEN, generation_questions
from mha.pipeline import AttentionRun
from mha.questions import CHOICE, MAX_ANSWER, Message, Question, all_questions, is_right, questions_of, read_answer
from mha.room_store import RoomStore, default_path, is_code
from mha.sources.checkpoint.generation import Generation

__all__ = [
    "FLOOD_ANSWERS",
    "FLOOD_SECONDS",
    "LINK_KEY",
    "PREDICTED",
    "PREDICT_KEY",
    "ROOM_KEY",
    "allow_send",
    "chart_shown",
    "parse_checked",
    "render",
    "render_generation",
    "render_lab",
    "render_room_slide",
]

LINK_KEY = "checked"  # the link's list of question ids answered right
ROOM_KEY = "room"  # the link's room code
FLOOD_ANSWERS = 30  # a session sends at most this many answers to its room ...
FLOOD_SECONDS = 60.0  # ... in this many seconds
ROOM_REFRESH_S = 1.5  # the room slide's counts refresh at least this often
_RIGHT = "_check_right"  # session: question id -> whether its latest answer was right
_SENT = "_check_sent"  # session: question id -> the verdict last sent to the room
_SENDS = "_check_sends"  # session: times of the answers sent to the room (the flood limit's window)
_SESSION = "_check_session"  # session: a random id, hashed again by the store
_ROOM = "_check_room"  # session: (code, open) of the link's room
_TEACHER_ROOM = "_check_teacher_room"  # session: the room a teacher's slide opened
_GENERATION = "_check_generation"  # session: the generation panel's look-up of the generation it shows
_DRAWN = "_check_chart_drawn"  # session: step -> whether its chart was drawn in the last run that drew it
#: The steps whose chart holds a question's answer, and that question: the learner may answer before seeing it.
PREDICTED = {"2": "check_2_top_key"}
PREDICT_KEY = "predict_{step}"  # the per-step switch (off by default)
_QID = re.compile(r"(1|1b|2|3|4|gen|model|lab[1-9][0-9]?)\.[a-z_]{1,32}")
_MAX_LINK_IDS = 64


def parse_checked(raw: str) -> frozenset[str]:
    """The question ids of a link's ``checked`` value; anything that is not an id is dropped (at most 64 kept,
    only the first 4,000 characters looked at)."""
    ids = [part.strip() for part in raw[:4000].split(",")]
    return frozenset([qid for qid in ids if _QID.fullmatch(qid)][:_MAX_LINK_IDS])


def allow_send(times: list[float], now: float) -> bool:
    """Whether a session that sent answers at ``times`` may send one more at ``now``; if so, ``now`` joins them
    (the window of :data:`FLOOD_SECONDS` seconds is kept, older times dropped)."""
    times[:] = [moment for moment in times if now - moment < FLOOD_SECONDS]
    if len(times) >= FLOOD_ANSWERS:
        return False
    times.append(now)
    return True


@cache.shared(max_entries=4)
def _store_at(path: str) -> RoomStore:
    return RoomStore(path)


def _store() -> RoomStore:
    """The process's room store at the host's path (``ATTN_PLAYGROUND_ROOM_DB``)."""
    return _store_at(str(default_path()))


def render(parts: ValueParts, box: DeltaGenerator, *steps: str) -> None:
    """Keep a place at the end of ``box`` for the questions of ``steps`` (e.g. ``"1", "1b"``), filled with the run.

    Step 1's call comes first in a page's full run: it forgets the generation panel's look-up of the page before
    (:func:`render_generation` sets this page's again)."""
    if steps[0] == "1":
        st.session_state.pop(_GENERATION, None)
    parts.add_fragment(box, lambda results: _questions(steps, results))


def render_generation(
    parts: ValueParts, box: DeltaGenerator, shown: Callable[[AttentionConfig], Generation | None]
) -> None:
    """Keep a place at the end of ``box`` for the generation panel's questions, built from ``shown(config)``: the
    generation the panel shows for the page's config (``None``: none, and no question). The other steps' progress
    counts them too."""
    st.session_state[_GENERATION] = shown
    parts.add_fragment(box, lambda results: _questions((GEN,), results))


def render_lab(lab: str, questions: Sequence[Question]) -> None:
    """Draw a lab's questions (built from the lab's own numbers, :mod:`mha.lab_questions`) as a fragment: an
    answer redraws only them. The lab's progress counts its own questions."""
    _lab_questions(lab, tuple(questions))


def chart_shown(step: str) -> Callable[[], bool]:
    """Whether step ``step``'s chart is shown now: unless the learner predicts first and has not answered yet.
    Each answer records what it decided, so the questions' fragment knows when the chart must follow."""

    def shown() -> bool:
        now = _chart_shown_now(step)
        st.session_state.setdefault(_DRAWN, {})[step] = now
        return now

    return shown


def _chart_shown_now(step: str) -> bool:
    predicting = bool(st.session_state.get(PREDICT_KEY.format(step=step), False))
    return not predicting or bool(st.session_state.get(PREDICTED[step]))


def _predict_switch(step: str) -> None:
    """The step's "predict, then see" switch; a change that shows or hides the chart reruns the page."""
    st.toggle(t("quiz.predict"), key=PREDICT_KEY.format(step=step), help=t("quiz.predict_help"))


def _follow_chart(step: str) -> None:
    """Rerun the page where the chart's state no longer matches what it drew (only a fragment ran)."""
    drawn = st.session_state.get(_DRAWN, {}).get(step)
    if drawn is not None and drawn != _chart_shown_now(step):
        st.rerun()


def _right() -> dict[str, bool]:
    right = st.session_state.setdefault(_RIGHT, {})
    incoming = changed_in_link((LINK_KEY,))
    if LINK_KEY in incoming:  # a link opened later: its answers count as right until answered again here
        for qid in parse_checked(incoming[LINK_KEY]):
            right.setdefault(qid, True)
    return right


def _generation_questions(results: Results) -> tuple[Question, ...]:
    """The generation panel's questions for ``results`` (none where the page shows no generation)."""
    shown = st.session_state.get(_GENERATION)
    generation = None if shown is None else shown(results.config)
    return () if generation is None else generation_questions(generation, results.run)


@st.fragment
def _questions(steps: tuple[str, ...], results: Results) -> None:
    run = results.run
    asked = [q for step in steps for q in (_generation_questions(results) if step == GEN else questions_of(step, run))]
    if not asked:  # a part writes at least one element (a generation not shown yet, weights not trained here)
        st.empty()
        return
    _draw(asked, (*all_questions(run), *_generation_questions(results)), steps)


@st.fragment
def _lab_questions(lab: str, questions: tuple[Question, ...]) -> None:
    _draw(list(questions), questions, (lab,), intro="quiz.intro_lab")


def _draw(asked: list[Question], every: Sequence[Question], steps: tuple[str, ...], intro: str = "quiz.intro") -> None:
    """The questions ``asked`` in a box, their verdicts and the progress (this part's, and of ``every`` question
    the page asks); the ids answered right written to the link."""
    right = _right()
    with st.container(border=True):
        st.markdown(f"**{t('quiz.title')}** · {t(intro)}")
        if steps[0] == "1":
            _room_note()
        for step in steps:
            if step in PREDICTED:
                _predict_switch(step)
        for question in asked:
            _ask(question, right)
        st.caption(
            t(
                "quiz.progress",
                step_right=sum(right.get(q.qid, False) for q in asked),
                step_total=len(asked),
                right=sum(right.get(q.qid, False) for q in every),
                total=len(every),
            )
        )
    done = ",".join(sorted(qid for qid, ok in right.items() if ok)) or None
    write_link({LINK_KEY: done})
    for step in steps:
        if step in PREDICTED:
            _follow_chart(step)


def _words(params: tuple[tuple[str, object], ...]) -> dict[str, object]:
    """A question's parameters for its message: a token escaped (it is the learner's text), a message key
    (:class:`~mha.questions.Message`) translated."""
    return {
        name: md_escape(value) if name == "token" else t(value) if isinstance(value, Message) else value
        for name, value in params
    }


def _label(question: Question) -> str:
    return t(question.prompt, **_words(question.params))


def _ask(question: Question, right: dict[str, bool]) -> None:
    """One question's widget and, once answered, its verdict."""
    if question.kind == CHOICE:
        options = list(range(len(question.choices)))
        chosen = st.radio(
            _label(question), options, index=None, format_func=lambda i: t(question.choices[i]), key=question.key
        )
        text = None if chosen is None else str(chosen)
    else:
        # one character more than is read: Streamlit cuts a longer value there, and the reader refuses it
        text = st.text_input(_label(question), key=question.key, max_chars=MAX_ANSWER + 1)
    if not text:
        return
    reading = read_answer(question, text)
    if reading.problem == "too_long":
        st.warning(t("quiz.too_long", limit=MAX_ANSWER))
        return
    if reading.problem is not None:
        st.warning(t(f"quiz.unreadable.{reading.problem}", last=len(question.tokens) - 1))
        return
    verdict = is_right(question, reading)
    right[question.qid] = verdict
    if verdict:
        st.success(t("quiz.right"))
    else:
        st.error(t("quiz.wrong", worked=t(question.worked, **_words(question.worked_params))))
    _send(question.qid, verdict)


# ---------------------------------------------------------------- the room
def _session_id() -> str:
    return st.session_state.setdefault(_SESSION, secrets.token_hex(16))


def _room() -> tuple[str, bool] | None:
    """The link's room (its code as given, whether it is open), asked of the store once per session and code."""
    raw = link_value(ROOM_KEY)
    if raw is None:
        return None
    code = raw.strip().upper()[:16]
    known = st.session_state.get(_ROOM)
    if known is None or known[0] != code:
        known = (code, is_code(code) and _store().is_open(code))
        st.session_state[_ROOM] = known
    return known


def _room_note() -> None:
    room = _room()
    if room is None:
        return
    code, open_now = room
    if open_now:
        st.caption(t("room.joined", code=code))  # a code of the store's alphabet: letters and digits only
    else:
        st.warning(t("room.unknown", code=md_escape(code)))


def _send(qid: str, verdict: bool) -> None:
    """Send a changed verdict to the session's room, within the flood limit. A room that closed since the session
    joined it (expired) is marked closed for the session, which is told so and answers on without a room."""
    room = _room()
    sent = st.session_state.setdefault(_SENT, {})
    if room is None or not room[1] or sent.get(qid) == verdict:
        return
    if not allow_send(st.session_state.setdefault(_SENDS, []), time.monotonic()):
        st.caption(t("room.flood"))
        return
    if _store().answer(room[0], qid, _session_id(), verdict):
        sent[qid] = verdict
    else:  # the store refuses an answer only for a room that is not open
        st.session_state[_ROOM] = (room[0], False)
        st.warning(t("room.unknown", code=md_escape(room[0])))


def learners_link(base: str, params: dict[str, str], code: str) -> str:
    """The link learners open: the teacher's page (its choices) without the presentation, in room ``code``."""
    kept = {name: value for name, value in params.items() if name not in {"teacher", "step", "hide", LINK_KEY}}
    return f"{base.split('?')[0].rstrip('/')}/?{urlencode({**kept, ROOM_KEY: code})}"


def render_room_slide(run: AttentionRun) -> None:
    """The slide ``step=room``: open a room (once per session), show the learners' link and the room's counts,
    refreshed every :data:`ROOM_REFRESH_S` seconds."""
    code = st.session_state.get(_TEACHER_ROOM)
    if code is None or not _store().is_open(code):
        code = _store().open_room()
        st.session_state[_TEACHER_ROOM] = code
    st.markdown(f"## {t('room.title')} · {t('room.code', code=code)}")
    link = learners_link(st.context.url or "", link_values(), code)
    st.markdown(t("room.link"))
    st.code(link, language=None)
    st.caption(t("room.settings_note"))
    labels = {q.qid: _label(q).rstrip("?？ ") for q in all_questions(run)}  # "…?: 3 answered" reads badly
    _room_counts(code, labels.get)


@st.fragment(run_every=ROOM_REFRESH_S)
def _room_counts(code: str, label: Callable[[str], str | None]) -> None:
    counts = _store().counts(code)
    if not counts:
        st.markdown(f"### {t('room.none_yet')}")
        return
    for count in counts:
        name = label(count.question) or count.question
        st.markdown(
            "### " + t("room.counts", question=name, answered=count.answered, right=count.right),
        )
