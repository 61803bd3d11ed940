"""The Measure button of the timing labs: measure only when asked, one measurement at a time in the server,
keep (cache) only a result that met its expectation, and say how the numbers were taken."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Generic, TypeVar

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.i18n import t
from mha.experiments.timing import MAX_REPEATS, MEASURE_ATTEMPTS, MIN_REPEATS, GrowthBreak, Steady

__all__ = [
    "Measured",
    "UntrustedMeasurementError",
    "measure_on_click",
    "measured",
    "measurement_progress",
    "measurement_slot",
    "repeats_slider",
    "show_measurement_notes",
]

T = TypeVar("T")
REPEATS_SHOWN_MAX = 15  # the slider's top: more rounds than this keep a shared server busy for little gain
REPEATS_DEFAULT = 7
# One timing measurement at a time in this server process: concurrent ones would slow each
# other down (wrong numbers) and could pile up on a shared machine.
_MEASURING = threading.Lock()
MEASUREMENT_WAIT_S = 20.0


@dataclass(frozen=True)
class Measured(Generic[T]):
    """A timing lab's result as the page shows it, with when and how it was measured."""

    value: T
    measured_at: str  # HH:MM:SS, server time
    attempts: int  # measurements taken before this one was kept (or given up on)
    breaks: tuple[GrowthBreak, ...]  # left in the last measurement; empty: it met its expectation


class UntrustedMeasurementError(Exception):
    """Raised out of a cached measuring function so that a result that broke its expectation is not kept."""

    def __init__(self, result: Measured) -> None:
        super().__init__(f"{len(result.breaks)} steps broke their expected growth after {result.attempts} attempts")
        self.result = result


def measured(steady: Steady, value: T) -> Measured[T]:
    """Wrap a finished measurement for the page; raise :class:`UntrustedMeasurementError` when it is not to be kept.

    Call it last in an ``st.cache_data`` function: Streamlit caches no call that raises, so only a
    result that met its expectation is shared with other sessions.
    """
    result = Measured(value, time.strftime("%H:%M:%S"), steady.attempts, steady.breaks)
    if not steady.trusted:
        raise UntrustedMeasurementError(result)
    return result


def repeats_slider(container: DeltaGenerator, key: str) -> int:
    """How many timed rounds each time is the median of (widget ``key``)."""
    top = min(MAX_REPEATS, REPEATS_SHOWN_MAX)
    return int(container.slider(t("lab.common.repeats"), MIN_REPEATS, top, REPEATS_DEFAULT, key=key))


def measure_on_click(lab: str, settings: tuple, measure: Callable[[], Measured[T]]) -> Measured[T] | None:
    """The Measure button (key ``{lab}_measure``) of a timing lab: nothing runs until it is pressed for
    these ``settings``; then one measurement at a time in this server. ``None`` (after saying why) when
    nothing was measured. A measurement that broke its expectation is returned with a warning."""
    if st.button(t("lab.common.measure"), key=f"{lab}_measure", type="primary"):
        st.session_state[f"{lab}_measured"] = settings
    if st.session_state.get(f"{lab}_measured") != settings:
        st.info(t(f"lab.{lab}.press"))
        return None
    with measurement_slot() as free:
        if not free:
            return None
        with st.spinner(t("lab.common.measuring")):
            try:
                result = measure()
            except UntrustedMeasurementError as untrusted:
                result = untrusted.result
    return result


@contextmanager
def measurement_progress(starting: str, describe: Callable[..., str]) -> Iterator[Callable[..., None]]:
    """A progress bar for a measurement in a child process, emptied when it ends; yields the ``progress`` callback
    of :func:`mha.experiments.isolated.run_isolated`.

    The bar says ``starting`` until the child's first report (the child loads PyTorch first), then each report's
    share done (``done`` of ``total``) and ``describe(**fields)``, the report in words. Draw it inside the cached
    measuring function: a result served from the cache replays a bar that is emptied at once.
    """
    bar = st.progress(0.0, text=starting)

    def report(*, done: int, total: int, **fields) -> None:
        bar.progress(min(done / total, 1.0), text=describe(done=done, total=total, **fields))

    try:
        yield report
    finally:
        bar.empty()


def show_measurement_notes(result: Measured, repeats: int, series_names: Callable[[str], str]) -> None:
    """When and how the numbers were taken, that the machine is shared, and a warning if they broke their
    expectation (``series_names`` translates a series of the breaks)."""
    once = result.attempts == 1
    st.caption(t("lab.common.measured_at_once" if once else "lab.common.measured_at", time=result.measured_at,
                 attempts=result.attempts))  # fmt: skip
    st.caption(t("lab.common.shared_machine", repeats=repeats, attempts=MEASURE_ATTEMPTS))
    if result.breaks:
        breaks = _breaks_text(result.breaks, series_names)
        st.warning(t("lab.common.untrusted", attempts=result.attempts, breaks=breaks))


def _breaks_text(breaks: Sequence[GrowthBreak], series_names: Callable[[str], str]) -> str:
    return "; ".join(
        t(
            "lab.common.break",
            series=series_names(each.series),
            start=each.size_from,
            end=each.size_to,
            time=each.time_ratio,
            work=each.work_ratio,
        )
        for each in breaks
    )


@contextmanager
def measurement_slot() -> Iterator[bool]:
    """Hold the server-wide measurement lock; yields ``False`` (after a warning) if it stayed busy."""
    acquired = _MEASURING.acquire(timeout=MEASUREMENT_WAIT_S)
    try:
        if not acquired:
            st.warning(t("lab.common.busy"))
        yield acquired
    finally:
        if acquired:
            _MEASURING.release()
