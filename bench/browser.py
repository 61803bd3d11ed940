"""Browser time from a control change to the charts redrawn: ``streamlit run playground.py`` + Chromium.

For each page size (see :mod:`bench.app_rerun`) and each kind of change a learner makes -- a new seed,
another head, the mask, the number of heads, d_model, an example sentence, a typed sentence, the
language, the weights switched to ``trained`` (the training included) and back, a slider of a lab, and on the
image page (the digits' ViT) another sample image and another query patch --
it times, in the page itself
(``performance.now()``), from the key press or click to the last chart redrawn once the run has
finished and the page stayed quiet for :data:`QUIET_MS`. Another head is drawn in the browser, with
no run: it is timed from the click to the charts redrawn and the page quiet; the run that tells the
server a second later (the head picker's fragment) is timed on a row of its own ("head: server told").
A script added before the page's own:

* marks a chart redraw on every canvas draw call of a chart and every DOM change inside one
  (a chart that is embedded again, or SVG);
* logs the websocket: the bytes received, and the time each message arrives; the run is over when
  its ``script_finished`` message has come (decoded here with Streamlit's protobuf; the app's
  ``data-test-script-state`` attribute can skip "running" altogether when a run is quick).
  "run seen" = BackMsg sent -> script_finished handled by the page: the server's run plus any
  wait for the page's busy main thread.

"main thread" is the renderer's busy time over the same span (CDP ``Performance.getMetrics``
TaskDuration): what the page itself cost, apart from waiting for the server or the CPU.
"""

from __future__ import annotations

import base64
import contextlib
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench._trace import PROBE_MARK, SETTLE_CATEGORIES, settled_ms
from bench.app_rerun import SIZES, PageSize
from bench.table import Table
from components.controls import EXAMPLES

TITLE = "Browser: control change -> charts redrawn (Playwright, Chromium), ms"

QUIET_MS = 400
FADE_WAIT_MS = 300  # Streamlit's inputs fade their border in 0.2 s when they gain or lose the focus
POLL_MS = 50  # the quiet check runs in a timer task of its own (not in every animation frame)
VIEWPORT = {"width": 1400, "height": 1000}
CHANGES = (
    "seed (new value)",
    "head",
    "mask none <-> causal",
    "num_heads h <-> h/2",
    "d_model d <-> d/2",
    "example sentence (button)",
    "sentence typed",
    "language en <-> zh",
    "weights -> trained (training included)",
    "weights -> random",
    "lab 1: d_k slider",
)
PAGE_CHANGES = CHANGES[:10]  # on the main page, at each size (the lab's slider: on its own page, once)
QUICK_CHANGES = (CHANGES[0], CHANGES[1], CHANGES[4])
# Another head is drawn in the browser where the charts hold every head, else by a run of the picker's fragment.
HEAD_MODES = {True: "head (drawn in the browser)", False: "head (fragment rerun)"}
HEAD_LOCAL_JS = "() => document.querySelector('.attn-head-picker')?.dataset.local === 'true'"
SYNC_ROW = "head: server told (fragment rerun, ~1 s later)"
#: Key press or click -> main thread settled, per page size of SIZES: every change, and the two with targets of
#: their own (a new seed, another head); the training's time is what it is (docs/PERFORMANCE.md).
TARGETS_MS = (300.0, 600.0, None)
OWN_TARGETS_MS = {CHANGES[0]: (250.0, 600.0, 1200.0), CHANGES[1]: (80.0, None, None)}
UNTARGETED = frozenset({"weights -> trained (training included)"})

# Runs before the app's scripts (context.add_init_script): chart redraws, run state, websocket log.
PROBE_JS = """
(() => {
  const CHART = '[data-testid="stVegaLiteChart"], .stBidiComponent';
  const b = (window.__bench = {});
  b.reset = () => { b.input = b.paint = 0; b.sent = []; b.recv = []; };
  b.reset();
  const mark = () => { b.paint = performance.now(); };
  const chartCanvas = new WeakMap();
  const isChartCanvas = (canvas) => {
    if (!canvas.isConnected) return true;  // drawn before it is attached: a chart being embedded
    let known = chartCanvas.get(canvas);
    if (known === undefined) { known = canvas.closest(CHART) !== null; chartCanvas.set(canvas, known); }
    return known;
  };
  for (const name of ["fill", "fillRect", "stroke", "fillText", "drawImage", "clearRect"]) {
    const original = CanvasRenderingContext2D.prototype[name];
    CanvasRenderingContext2D.prototype[name] = function (...args) {
      if (isChartCanvas(this.canvas)) mark();
      return original.apply(this, args);
    };
  }
  const touchesChart = (node) => {
    const element = node.nodeType === 1 ? node : node.parentElement;
    return element !== null && (element.closest(CHART) !== null || element.querySelector(CHART) !== null);
  };
  new MutationObserver((records) => {
    if (records.some((r) => touchesChart(r.target) || [...r.addedNodes, ...r.removedNodes].some(touchesChart))) mark();
  }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  const input = () => { b.input = performance.now(); performance.mark("bench-input"); };
  const timed = new Set(["Enter", "ArrowLeft", "ArrowRight"]);  // a typed value, a slider's step
  document.addEventListener("keydown", (event) => { if (timed.has(event.key)) input(); }, true);
  document.addEventListener("pointerdown", input, true);
  const NativeWebSocket = window.WebSocket;
  window.WebSocket = class extends NativeWebSocket {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        const data = event.data;
        const size = data.byteLength ?? data.size ?? data.length;
        const small = data instanceof ArrayBuffer && size < 256;  // script_finished is small: keep it to decode
        b.recv.push([performance.now(), size, small ? btoa(String.fromCharCode(...new Uint8Array(data))) : null]);
      });
    }
    send(data) { b.sent.push(performance.now()); return super.send(data); }
  };
})();
"""
# Quiet: messages came after the input, and neither a message nor a chart redraw for QUIET_MS.
# Both mark themselves (PROBE_MARK): the trace reader leaves the probe's own tasks out of "settled".
QUIET_JS = f"""() => {{
  performance.mark("{PROBE_MARK}");
  const b = window.__bench, now = performance.now(), last = b.recv.length ? b.recv[b.recv.length - 1][0] : 0;
  return b.input > 0 && last > b.input && now - last > {QUIET_MS} && now - b.paint > {QUIET_MS};
}}"""
# Quiet after a change the browser draws itself: charts redrawn since the input, then nothing for QUIET_MS.
LOCAL_QUIET_JS = f"""() => {{
  performance.mark("{PROBE_MARK}");
  const b = window.__bench, now = performance.now();
  return b.input > 0 && b.paint > b.input && now - b.paint > {QUIET_MS};
}}"""
READ_JS = f"""() => {{
  performance.mark("{PROBE_MARK}");
  const b = window.__bench;
  return {{input: b.input, paint: b.paint, sent: b.sent, recv: b.recv}};
}}"""


def _script_finished_at(recv: list[list[Any]]) -> float | None:
    """Arrival time of the first ``script_finished`` ForwardMsg in the websocket log."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    for at, _, small in recv:
        if small is None:
            continue
        message = ForwardMsg()
        message.ParseFromString(base64.b64decode(small))
        if message.WhichOneof("type") == "script_finished":
            return float(at)
    return None


def _task_ms(cdp: Any) -> float:
    metrics = cdp.send("Performance.getMetrics")["metrics"]
    return 1e3 * next(m["value"] for m in metrics if m["name"] == "TaskDuration")


def _kb(log: dict[str, Any], start: float) -> float:
    """Websocket KB received since ``start``."""
    return sum(size for at, size, _ in log["recv"] if at >= start) / 1024


def _run_finished(page: Any, timeout_ms: int) -> tuple[dict[str, Any], float]:
    """Wait until a run's ``script_finished`` came after the input and the page was quiet since: the log, and when
    it finished (quiet comes first, but the run may still be going: a long step with nothing to send)."""
    deadline = time.monotonic() + timeout_ms / 1e3
    while True:
        page.wait_for_function(QUIET_JS, timeout=timeout_ms, polling=POLL_MS)
        log = page.evaluate(READ_JS)
        finished = _script_finished_at([r for r in log["recv"] if r[0] >= log["input"]])
        if finished is not None:
            return log, finished
        if time.monotonic() > deadline:
            raise TimeoutError(f"no script_finished within {timeout_ms} ms of the change")
        page.wait_for_timeout(50)


def _stop_trace(browser: Any, result: dict[str, Any]) -> None:
    """With a traced change: "settled" from the trace, and the trace itself (for the profile's split)."""
    if browser is not None:
        trace = browser.stop_tracing()
        result["settled"] = settled_ms(trace, done_ms=result["redrawn"])
        result["trace"] = trace


def abandon_trace(browser: Any) -> None:
    """Stop a trace that a failed change left recording (Chromium refuses to start a second one)."""
    with contextlib.suppress(Exception):  # no trace was recording: nothing to stop
        browser.stop_tracing()


def measure(
    page: Any,
    cdp: Any,
    change: Change,
    browser: Any = None,
    categories: tuple[str, ...] = SETTLE_CATEGORIES,
    timeout_ms: int = 60_000,
    local: bool = False,
) -> dict[str, Any]:
    """Make ``change`` and wait for the page to settle; the timings of that change (from its ``act``), in ms.

    With ``browser``, the change is traced (``categories``): "settled" is then the end of the renderer
    main thread's last task, and "trace" holds the trace for :func:`bench._trace.breakdown_ms`.
    ``local``: the page draws the change itself and runs nothing for it at once (another head); the
    run it starts later to tell the server is waited for and timed apart ("sync_*").
    """
    # Each change starts from rest: the control used last loses its focus first, and the next one is focused
    # and typed into (``prepare``) before the key press, so their borders' colour transitions (0.2 s of frames
    # each) run out before the input instead of inside the change's time.
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.wait_for_timeout(FADE_WAIT_MS)
    change.prepare()
    page.evaluate("window.__bench.reset()")
    task_before = _task_ms(cdp)
    if browser is not None:
        browser.start_tracing(page=page, categories=list(categories))
    change.act()
    if local:
        return _measure_local(page, cdp, browser, task_before, timeout_ms)
    log, finished = _run_finished(page, timeout_ms)
    start = log["input"]
    sent = [t for t in log["sent"] if t >= start]
    result: dict[str, Any] = {
        "redrawn": max(log["paint"], finished) - start,
        "server": finished - sent[0] if sent else float("nan"),
        "main_thread": _task_ms(cdp) - task_before,
        "kb": _kb(log, start),
    }
    _stop_trace(browser, result)
    return result


def _measure_local(page: Any, cdp: Any, browser: Any, task_before: float, timeout_ms: int) -> dict[str, Any]:
    """A change drawn in the browser: click -> charts redrawn and quiet; then the run that tells the server."""
    page.wait_for_function(LOCAL_QUIET_JS, timeout=timeout_ms, polling=POLL_MS)
    task_switch = _task_ms(cdp)
    log = page.evaluate(READ_JS)
    start = log["input"]
    result: dict[str, Any] = {
        "redrawn": log["paint"] - start,
        "server": float("nan"),  # no run: nothing was sent before the page was quiet
        "main_thread": task_switch - task_before,
        "kb": _kb(log, start),
    }
    _stop_trace(browser, result)
    log, finished = _run_finished(page, timeout_ms)  # the picker tells the server: one run of its fragment
    sent = [at for at in log["sent"] if at >= start]
    result["sync_after"] = sent[0] - start if sent else float("nan")
    result["sync_server"] = finished - sent[0] if sent else float("nan")
    result["sync_main_thread"] = _task_ms(cdp) - task_switch
    result["sync_kb"] = _kb(log, start)
    return result


@dataclass(frozen=True)
class Change:
    """One control change: ``act`` is timed (the key press or click); ``prepare`` is what a user does before it."""

    act: Callable[[], None]
    prepare: Callable[[], None] = lambda: None


def page_actions(page: Any, size: PageSize) -> dict[str, Callable[[int], Change]]:
    def type_into(key: str, value: int) -> Change:
        box = page.locator(f".st-key-{key} input")

        def click_and_type() -> None:  # as a user does, at a user's pace: the box's focus fade is over
            box.focus()
            page.wait_for_timeout(FADE_WAIT_MS)
            box.fill(str(value))
            page.wait_for_timeout(FADE_WAIT_MS)

        return Change(act=lambda: box.press("Enter"), prepare=click_and_type)

    def choose(key: str, index: int, before: Callable[[], None] = lambda: None) -> Change:
        return _choose(page, key, index, before)

    def new_training(i: int) -> Change:
        """Trained weights for a seed never trained before (so the training is in the time), after a click on
        Train, which the bench makes as soon as the button is there, as a learner would."""

        fresh = 5000 + 100 * SIZES.index(size) + i  # trained sizes are the same at every page size: a seed each

        def seed_first() -> None:
            seed = page.locator(".st-key-seed input")
            seed.fill(str(fresh))
            seed.press("Enter")
            page.wait_for_function(f"() => new URLSearchParams(location.search).get('seed') === '{fresh}'")
            page.wait_for_timeout(2 * QUIET_MS)

        return choose("weights", 1, before=seed_first)

    def head(i: int) -> Change:  # heads 1, 2, 1, ... (the page opens on head 0)
        return Change(act=page.locator('.st-key-head_picker [role="radiogroup"] label').nth(1 + i % 2).click)

    def typed(i: int) -> Change:
        area = page.locator(".st-key-tokens textarea")

        def click_and_type() -> None:
            area.focus()
            page.wait_for_timeout(FADE_WAIT_MS)
            area.fill(" ".join(f"w{j}" for j in range(size.tokens or 11)) + f" end{i}")
            page.wait_for_timeout(FADE_WAIT_MS)

        return Change(act=lambda: area.press("Control+Enter"), prepare=click_and_type)

    def button(key: str) -> Change:
        return Change(act=page.locator(f".st-key-{key} button").click)

    def in_link(key: str, default: str) -> str:
        """The control's value as the page's link says it now (a reopened page starts from its own state)."""
        return page.evaluate(f"() => new URLSearchParams(location.search).get('{key}')") or default

    def halve_or_restore(key: str, full: int) -> Change:
        return type_into(key, full // 2 if int(in_link(key, str(full))) == full else full)

    def other_example() -> Change:  # the cat's sentence, or the animal's where the cat's is shown
        shown = page.locator(".st-key-tokens textarea").input_value()
        return button("example_animal" if shown == dict(EXAMPLES)["cat"] else "example_cat")

    def other_choice(key: str, first: str) -> Change:  # options 0 and 1 in turn: the one not chosen now
        return choose(key, 1 if in_link(key, first) == first else 0)

    return {
        CHANGES[0]: lambda i: type_into("seed", 2000 + i),
        CHANGES[1]: head,
        CHANGES[2]: lambda i: other_choice("mask_type", "none"),  # none <-> causal
        CHANGES[3]: lambda i: halve_or_restore("num_heads", size.num_heads),
        CHANGES[4]: lambda i: halve_or_restore("d_model", size.d_model),
        CHANGES[5]: lambda i: other_example(),
        CHANGES[6]: typed,
        CHANGES[7]: lambda i: other_choice("lang", "en"),  # English <-> 中文
        CHANGES[8]: new_training,
        CHANGES[9]: lambda i: choose("weights", 0),
    }


def _choose(page: Any, key: str, index: int, before: Callable[[], None] = lambda: None) -> Change:
    """Open the selectbox ``key`` (not timed), then click its option number ``index`` (timed): by position, so that
    it reads the same in either language."""
    box = page.locator(f".st-key-{key} input[role='combobox']")

    def open_list() -> None:
        before()
        box.click()
        box.press("ArrowDown")
        page.wait_for_timeout(FADE_WAIT_MS)

    return Change(act=page.locator("[role='option']").nth(index).click, prepare=open_list)


def open_page(browser: Any, url: str, page_errors: list[str] | None = None) -> tuple[Any, Any, Any]:
    """A fresh tab with the probe on ``url``, drawn and quiet: the context, the page and its CDP session.

    ``page_errors``: the page's uncaught errors are appended to it, from the first load on.
    """
    context = browser.new_context(viewport=VIEWPORT, locale="en-US")
    context.add_init_script(PROBE_JS)
    page = context.new_page()
    if page_errors is not None:
        page.on("pageerror", lambda error: page_errors.append(str(error)))
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    reopen(page, url)
    return context, page, cdp


def reopen(page: Any, url: str) -> None:
    """Load ``url`` in ``page`` and wait until the app is drawn and quiet."""
    from tests.local_app import wait_for_app

    page.goto(url)
    wait_for_app(page, timeout_ms=120_000)
    page.wait_for_function(f"() => performance.now() - window.__bench.paint > {QUIET_MS}", timeout=120_000)


def measure_training(page: Any, cdp: Any, change: Change, timeout_ms: int = 180_000) -> dict[str, Any]:
    """Trained weights chosen, Train clicked as soon as it shows, the trained page drawn and quiet: wall time from
    the choice (the training is in it, so no trace: "settled" is the page drawn and quiet)."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.wait_for_timeout(FADE_WAIT_MS)
    change.prepare()
    page.evaluate("window.__bench.reset()")
    task_before = _task_ms(cdp)
    change.act()
    start = page.evaluate("window.__bench.input")
    page.locator(".st-key-train_start button").click(timeout=timeout_ms)
    page.wait_for_selector(".st-key-train_stop", state="detached", timeout=timeout_ms)
    page.wait_for_selector(".attn-head-picker", timeout=timeout_ms)
    log, finished = _run_finished(page, timeout_ms)
    redrawn = max(log["paint"], finished) - start
    return {"settled": redrawn, "redrawn": redrawn, "server": float("nan"), "main_thread": _task_ms(cdp) - task_before,
            "kb": _kb(log, start)}  # fmt: skip


def time_size(
    browser: Any,
    base_url: str,
    size: PageSize,
    rounds: int,
    changes: tuple[str, ...],
    categories: tuple[str, ...] = SETTLE_CATEGORIES,
) -> dict[str, list[dict[str, Any]]]:
    """Samples per change at one page size (a fresh page; the changes in turn, round after round), each traced.

    The head change is named by how the page draws it (:data:`HEAD_MODES`).
    """
    from urllib.parse import urlencode

    url = f"{base_url}/?{urlencode(size.query())}"
    context, page, cdp = open_page(browser, url)
    actions = page_actions(page, size)
    page.wait_for_selector(".attn-head-picker[data-local]", timeout=120_000)
    local = bool(page.evaluate(HEAD_LOCAL_JS))
    names = {name: HEAD_MODES[local] if name == CHANGES[1] else name for name in changes}
    samples: dict[str, list[dict[str, Any]]] = {names[name]: [] for name in changes}
    for i in range(rounds + 1):  # round 0 warms up
        for name in changes:
            try:
                if name == CHANGES[8]:
                    result = measure_training(page, cdp, actions[name](i))
                else:
                    local_change = local and name == CHANGES[1]
                    result = measure(page, cdp, actions[name](i), browser, categories, local=local_change)
            except Exception as error:  # a change that never settled: said, and left out of the table
                print(f"[bench] {size.name}, round {i}: {name!r} did not settle: {error!r}"[:400], file=sys.stderr)
                abandon_trace(browser)
                continue
            if i > 0:
                samples[names[name]].append(result)
            if name == CHANGES[9]:  # trained weights took their own sizes: the page size again for the next round
                reopen(page, url)
    context.close()
    return samples


LAB_PATH = "/scaling"  # lab 1 (why √d_k)


def lab_slider(page: Any, i: int) -> Change:
    """Lab 1's d_k slider moved by one step: left, right, left, ... (its handle focused first, as a user does)."""
    handle = page.locator(".st-key-scaling_d_k input[type=range]")

    def focus() -> None:
        handle.focus()
        page.wait_for_timeout(FADE_WAIT_MS)

    return Change(act=lambda: handle.press("ArrowRight" if i % 2 else "ArrowLeft"), prepare=focus)


def time_lab(browser: Any, base_url: str, rounds: int) -> list[dict[str, Any]]:
    """Samples of lab 1's d_k slider moved by one step (a page of its own)."""
    context, page, cdp = open_page(browser, f"{base_url}{LAB_PATH}")
    samples = []
    for i in range(rounds + 1):
        result = measure(page, cdp, lab_slider(page, i), browser)
        if i > 0:
            samples.append(result)
    context.close()
    return samples


#: The image page (a ViT trained here on the digits: 17 tokens, 4 heads, 2 layers), opened and trained untimed.
IMAGE_QUERY = {"weights": "trained", "task": "digits", "d_model": "64", "num_heads": "4", "lang": "en"}
IMAGE_PAGE = "digits (ViT, 17 tokens x 4 heads)"
IMAGE_CHANGES = ("image: another sample (a live change)", "image: query patch (the panel's picker)")


def time_image(browser: Any, base_url: str, rounds: int) -> dict[str, list[dict[str, Any]]]:
    """Samples of the image page's changes: another sample image (every value redrawn: the four steps, the patches
    panel) and another query patch in the patches panel (its fragment alone)."""
    from urllib.parse import urlencode

    context, page, cdp = open_page(browser, f"{base_url}/?{urlencode(IMAGE_QUERY)}")
    page.wait_for_selector(".st-key-patch_query", timeout=240_000)  # trained: the panel is there
    page.wait_for_function(f"() => performance.now() - window.__bench.paint > {QUIET_MS}", timeout=120_000)
    samples: dict[str, list[dict[str, Any]]] = {name: [] for name in IMAGE_CHANGES}
    for i in range(rounds + 1):  # round 0 warms up
        for name, key, options in zip(IMAGE_CHANGES, ("image", "patch_query"), ((7, 3), (6, 0)), strict=True):
            result = measure(page, cdp, _choose(page, key, options[i % 2]), browser)
            if i > 0:
                samples[name].append(result)
    context.close()
    return samples


def target_ms(size: PageSize, change: str) -> float | None:
    """The target of a page size and change, if it has one (every change but a training: docs/PERFORMANCE.md)."""
    index = SIZES.index(size)
    if change in UNTARGETED:
        return None
    if change in HEAD_MODES.values():
        return OWN_TARGETS_MS[CHANGES[1]][index]
    return OWN_TARGETS_MS.get(change, TARGETS_MS)[index]


def launch(playwright: Any) -> Any:
    """Headless Chromium with the tests' flags."""
    from tests.local_app import CHROMIUM_ARGS, chromium_path

    executable = chromium_path()
    if executable is None:
        raise RuntimeError("no Chromium at /usr/bin/chromium (apt-get install chromium): the browser section needs it")
    return playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)


def _row(page_name: str, name: str, results: list[dict[str, Any]], target: float | None) -> tuple[object, ...]:
    """One table row: the medians of a change's samples, its spread and its target."""
    med = {key: statistics.median(r[key] for r in results) for key in results[0] if key != "trace"}
    settled = [r["settled"] for r in results]
    verdict = "" if target is None else ("met" if med["settled"] <= target else "missed")
    return (
        page_name,
        name,
        f"{med['settled']:.0f}",
        f"{min(settled):.0f}-{max(settled):.0f}",
        f"{med['redrawn']:.0f}",
        f"{med['server']:.0f}",
        f"{med['main_thread']:.0f}",
        f"{med['kb']:.0f}",
        "" if target is None else f"<= {target:.0f}",
        verdict,
    )


def run(quick: bool) -> list[Table]:
    """Start the app, drive Chromium, one row per page size and change."""
    from playwright.sync_api import sync_playwright

    from tests.local_app import CHROMIUM_ARGS, free_port, start_streamlit, stop_process

    sizes = SIZES[:1] if quick else SIZES
    port = free_port()
    server = start_streamlit(port)
    base_url = f"http://127.0.0.1:{port}"
    rows = []
    load = load_average()
    try:
        with sync_playwright() as playwright:
            browser = launch(playwright)
            for size in sizes:
                # every change on the default page and at 64 x 8; the largest page: the seed, the head, d_model
                changes = QUICK_CHANGES if quick or size is SIZES[2] else PAGE_CHANGES
                rounds = 2 if quick else (5 if size is SIZES[2] else 7)
                samples = time_size(browser, base_url, size, rounds, changes)
                for name, results in samples.items():
                    rows.append(_row(size.name, name, results, target_ms(size, name)))
                    if name == HEAD_MODES[True]:
                        rows.append(_sync_row(size, results))
            lab = time_lab(browser, base_url, 2 if quick else 7)
            rows.append(_row("lab 1 (why √d_k)", CHANGES[10], lab, TARGETS_MS[0]))
            for name, results in time_image(browser, base_url, 2 if quick else 7).items():
                rows.append(_row(IMAGE_PAGE, name, results, None))
            browser.close()
    finally:
        stop_process(server)
    load_after = load_average()
    notes = (
        f"median of {'2' if quick else '7 (5 at 128 tokens)'} rounds after one warm-up round, changes in turn; "
        f"viewport {VIEWPORT['width']}x{VIEWPORT['height']}, headless Chromium {CHROMIUM_ARGS[:2]}..., one tab.",
        "settled: key press / click -> the renderer main thread settled: after the run's last message and the last "
        "chart redraw, the end of its last task (>= 1 ms) before 50 ms without one (Chromium trace, categories "
        "toplevel + user timing); spread: fastest-slowest round. redrawn: key press "
        "-> last chart redrawn after the run. run seen: BackMsg sent -> script_finished handled by the page "
        "(server time plus any wait for the busy page). main thread: renderer busy time (CDP TaskDuration). "
        "KB: websocket bytes received for the rerun. Where the charts hold every head, another head is drawn in "
        "the browser (no run) and the head picker tells the server 1 s after the last pick: its row gives when "
        "that run starts after the click, its run seen, and the page's work for it; elsewhere a pick reruns the "
        "picker's fragment at once, which draws the new head. Each change starts from rest: nothing focused, then "
        "the number box focused and typed into 0.3 s before the Enter key (the timed input), as a user would.",
        f"The server and the browser share this machine's cores, as they do on a laptop in a workshop. "
        f"Load average (1 min) before / after: {load} / {load_after}.",
    )
    columns = (
        "page", "change", "settled ms", "spread", "redrawn ms", "run seen ms", "main thread ms", "KB", "target",
        "verdict",
    )  # fmt: skip
    return [Table(TITLE, columns, tuple(rows), notes)]


def _sync_row(size: PageSize, results: list[dict[str, Any]]) -> tuple[object, ...]:
    """The run that tells the server the picked head: when it starts, the server's part, the page's work."""
    med = {key: statistics.median(r[key] for r in results) for key in ("sync_after", "sync_server", "sync_main_thread")}
    kb = statistics.median(r["sync_kb"] for r in results)
    return (
        size.name,
        SYNC_ROW,
        "",
        "",
        f"starts {med['sync_after']:.0f}",
        f"{med['sync_server']:.0f}",
        f"{med['sync_main_thread']:.0f}",
        f"{kb:.0f}",
        "",
        "",
    )


def load_average() -> str:
    """The 1-minute load average (``/proc/loadavg``), or "n/a"."""
    try:
        with open("/proc/loadavg") as file:
            return file.read().split()[0]
    except OSError:
        return "n/a"
