"""Chromium traces (``browser.start_tracing``) read back: when the renderer's main thread settled, and what it did.

The page marks the user's input with ``performance.mark(INPUT_MARK)`` (see :data:`bench.browser.PROBE_JS`);
the mark is in the trace (category ``blink.user_timing``), so trace time and the input line up without
converting clocks. Two readings of the renderer's main thread (``CrRendererMain`` of the process that
holds the mark) from the mark on:

* :func:`settled_ms`: once the page is done (the run's last message handled, the last chart redrawn),
  the end of its last task of at least :data:`BUSY_TASK_US` before :data:`QUIET_GAP_US` without one
  -- the moment the page had nothing left to do for this change (top-level ``RunTask`` events:
  category ``toplevel``);
* :func:`breakdown_ms`: its busy time split the way the DevTools performance panel splits it
  (scripting, rendering = style and layout, painting, other), from the self time of every event
  (categories :data:`PROFILE_CATEGORIES`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "INPUT_MARK",
    "PROBE_MARK",
    "PROFILE_CATEGORIES",
    "SETTLE_CATEGORIES",
    "breakdown_ms",
    "main_thread_events",
    "settled_ms",
]

INPUT_MARK = "bench-input"
PROBE_MARK = "bench-probe"  # marks the bench's own checks: their tasks are not the page's work
SETTLE_CATEGORIES = ("toplevel", "blink.user_timing")
PROFILE_CATEGORIES = (
    "toplevel",
    "blink.user_timing",
    "devtools.timeline",
    "disabled-by-default-devtools.timeline",
    "v8.execute",
    "blink",
    "cc",
)
BUSY_TASK_US = 1000  # shorter tasks (a timer, a websocket ping) do not keep the page busy
QUIET_GAP_US = 50_000  # this long without a busy task, once the page is done, and it has settled
TASK_NAMES = frozenset({"RunTask", "ThreadControllerImpl::RunTask", "ThreadPool_RunTask"})
GROUPS = ("scripting", "rendering", "painting", "other")

_SCRIPTING = frozenset(
    {
        "EvaluateScript", "FunctionCall", "TimerFire", "EventDispatch", "RunMicrotasks", "FireAnimationFrame",
        "FireIdleCallback", "XHRReadyStateChange", "XHRLoad", "MajorGC", "MinorGC", "ParseHTML", "CompileScript",
        "CompileModule", "EvaluateModule", "WebSocketReceiveHandshakeResponse", "ProfileCall",
    }
)  # fmt: skip
_RENDERING = frozenset(
    {
        "UpdateLayoutTree", "Layout", "RecalculateStyles", "ScheduleStyleRecalculation", "InvalidateLayout",
        "HitTest", "PrePaint", "UpdateLayer", "UpdateLayerTree", "Layerize", "ComputeIntersections",
        "IntersectionObserverController::computeIntersections", "ParseAuthorStyleSheet", "ScrollLayer",
        "LocalFrameView::UpdateLifecyclePhases", "Document::UpdateStyleAndLayoutTree", "ResizeObserver::broadcast",
    }
)  # fmt: skip
_PAINTING = frozenset(
    {
        "Paint", "PaintImage", "CompositeLayers", "Commit", "Decode Image", "Decode LazyPixelRef", "Rasterize",
        "RasterTask", "PaintSetup", "ImageDecodeTask", "UpdateLayers", "LayerTreeHost::UpdateLayers",
        "ProxyMain::BeginMainFrame::commit", "Canvas2DLayerBridge::FlushRecording", "CanvasResourceProvider::Flush",
    }
)  # fmt: skip


def _group(name: str) -> str | None:
    """The panel group an event's own time belongs to, or ``None`` for a wrapper that lends its parent's."""
    if name in _SCRIPTING or name.lower().startswith(("v8.", "blinkgc.", "gc")):
        return "scripting"
    if name in _RENDERING:
        return "rendering"
    if name in _PAINTING:
        return "painting"
    return None


@dataclass(frozen=True)
class _Span:
    name: str
    start: float  # µs, trace clock
    end: float


def _load(trace: bytes | str | list | dict) -> list[dict]:
    data = json.loads(trace) if isinstance(trace, (bytes, str)) else trace
    return data["traceEvents"] if isinstance(data, dict) else data


def main_thread_events(trace: bytes | str | list | dict) -> tuple[float, list[_Span]]:
    """The input mark's time and the page's spans on the renderer main thread that holds it (sorted by start).

    Tasks that hold a :data:`PROBE_MARK` (the bench's own checks), and everything after the last
    such mark (the bench reading its results), are left out.
    """
    events = _load(trace)
    marks = [e for e in events if e.get("name") == INPUT_MARK and "ts" in e]
    if not marks:
        raise ValueError(f"no {INPUT_MARK!r} mark in the trace: was the input made with the probe installed?")
    mark = marks[-1]
    names = {
        (e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"
    }
    main = [key for key, name in names.items() if name == "CrRendererMain" and key[0] == mark["pid"]]
    if not main:
        raise ValueError("no CrRendererMain thread in the process that holds the input mark")
    pid, tid = main[0]
    spans: list[_Span] = []
    open_spans: list[dict] = []
    for event in sorted((e for e in events if e.get("pid") == pid and e.get("tid") == tid), key=lambda e: e["ts"]):
        phase = event.get("ph")
        if phase == "X" and "dur" in event:
            spans.append(_Span(event["name"], event["ts"], event["ts"] + event["dur"]))
        elif phase == "B":
            open_spans.append(event)
        elif phase == "E" and open_spans:
            begin = open_spans.pop()
            spans.append(_Span(begin["name"], begin["ts"], event["ts"]))
    probes = sorted(e["ts"] for e in events if e.get("name") == PROBE_MARK and e.get("pid") == pid and "ts" in e)
    if probes:
        last = probes[-1]
        ours = [s for s in spans if s.name in TASK_NAMES and any(s.start <= ts <= s.end for ts in probes)]
        spans = [s for s in spans if s.start < last and not any(o.start <= s.start and s.end <= o.end for o in ours)]
    spans.sort(key=lambda s: (s.start, -(s.end - s.start)))
    return float(mark["ts"]), spans


def _tasks(spans: Iterable[_Span], since: float) -> list[_Span]:
    return [s for s in spans if s.name in TASK_NAMES and s.end > since and s.end - s.start >= BUSY_TASK_US]


def _settled_at(spans: list[_Span], mark: float, done_ms: float) -> float:
    """Trace time at which the main thread settled: see :func:`settled_ms`."""
    tasks = sorted(_tasks(spans, mark), key=lambda s: s.start)
    settled = mark + done_ms * 1e3
    for task in tasks:
        if task.end <= settled:
            continue
        if task.start - settled >= QUIET_GAP_US:
            break
        settled = task.end
    return settled


def settled_ms(trace: bytes | str | list | dict, done_ms: float = 0.0) -> float:
    """Milliseconds from the input mark until the main thread settled.

    Settled: after ``done_ms`` (the page's own view of "done": the run's last message handled and
    the last chart redrawn, in ms after the input), the end of the last task of at least
    :data:`BUSY_TASK_US` before the thread stays free of such tasks for :data:`QUIET_GAP_US`. The
    work the change set off (rendering, painting, the garbage collection it caused) counts; a
    browser timer firing half a second later (a canvas re-committed, ~2 ms) does not.
    """
    mark, spans = main_thread_events(trace)
    return (_settled_at(spans, mark, done_ms) - mark) / 1e3


def breakdown_ms(trace: bytes | str | list | dict, done_ms: float = 0.0) -> dict[str, float]:
    """Main-thread busy time from the input mark to settled, per group (ms), plus ``busy`` and ``settled``.

    Each event's self time (its time minus its children's) goes to its group; an event of no known
    group lends its time to its nearest ancestor's group, and top-level task time of no group is "other".
    """
    mark, spans = main_thread_events(trace)
    end = _settled_at(spans, mark, done_ms)
    totals = dict.fromkeys(GROUPS, 0.0)
    stack: list[tuple[_Span, str | None, float]] = []  # span, group, time of its children

    def close(upto: float) -> None:
        while stack and stack[-1][0].end <= upto:
            span, group, children = stack.pop()
            own = max(0.0, min(span.end, end) - max(span.start, mark)) - children
            if own > 0:
                totals[group or "other"] += own
            if stack:
                parent = stack[-1]
                stack[-1] = (parent[0], parent[1], parent[2] + max(0.0, min(span.end, end) - max(span.start, mark)))

    for span in spans:
        if span.end <= mark or span.start >= end:
            continue
        close(span.start)
        inherited = stack[-1][1] if stack else None
        stack.append((span, _group(span.name) or inherited, 0.0))
    close(float("inf"))
    out = {group: value / 1e3 for group, value in totals.items()}
    out["busy"] = sum(out.values())
    out["settled"] = (end - mark) / 1e3
    return out


def top_events(trace: bytes | str | list | dict, count: int = 25) -> list[tuple[str, float]]:
    """The main thread's event names with the most self time (ms) from the input mark to settled."""
    mark, spans = main_thread_events(trace)
    end = _settled_at(spans, mark, 0.0)
    totals: dict[str, float] = {}
    stack: list[list] = []

    def clip(span: _Span) -> float:
        return max(0.0, min(span.end, end) - max(span.start, mark))

    def close(upto: float) -> None:
        while stack and stack[-1][0].end <= upto:
            span, children = stack.pop()
            totals[span.name] = totals.get(span.name, 0.0) + clip(span) - children
            if stack:
                stack[-1][1] += clip(span)

    for span in spans:
        if span.end <= mark or span.start >= end:
            continue
        close(span.start)
        stack.append([span, 0.0])
    close(float("inf"))
    return sorted(((name, ms / 1e3) for name, ms in totals.items()), key=lambda item: -item[1])[:count]
