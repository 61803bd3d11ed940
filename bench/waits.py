"""Where a learner waits, this tree against an earlier revision served at once (Chromium): opening a slide's link (and
one that trains), opening a review's link on the trained reviews page, and lab 13's and lab 14's Measure.

The earlier revision (``--before REV``, default :data:`DEFAULT_BEFORE`) is checked out into a temporary
``git worktree`` (:func:`bench.ab.checkout`) and served beside this working tree, both in the container's
environment (:data:`bench.room.SERVER_ENV`); one headless Chromium holds a tab per version at 1280 × 720. Each
wait is timed on one version, then at once on the other, round after round (round 0 warms up), so that the
load of a shared machine hits both alike. Every round asks for something no cache holds: a seed never drawn
(a slide), never trained (the slide that trains), a review never read, a number of timed rounds never measured.

- a link: ms from ``goto`` (navigation start) to the last chart drawn, once the run has ended and the page has
  been quiet for :data:`bench.browser.QUIET_MS` (:data:`bench.browser.PROBE_JS`'s marks);
- Measure: ms from the click to the run's end and the results drawn (:func:`bench.browser.measure`'s
  "redrawn"), and the ms until the page first said what it measures: a progress bar's text with its count
  of parts ("first news"; none where the page shows only a spinner).

``python -m bench.waits [--before REV] [--rounds N] [--markdown]``; ``python -m bench --only waits``.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from bench.table import Table, format_table

TITLE = "Where a learner waits: links and Measure, this tree against an earlier revision (Chromium), ms"
DEFAULT_BEFORE = "c7ec3d2"  # the page before the labs' Measure said what it measures
ROUNDS = 3
SCREEN = {"width": 1280, "height": 720}
REVIEW = {"weights": "trained", "task": "reviews", "d_model": "32", "num_heads": "2", "seed": "0", "lang": "zh"}
REVIEWS = ("质量很好，物流也快，下次还会再来买。", "包装破损，客服也不回复，很失望。", "房间干净，早餐一般，位置不错。",
           "书的印刷很清楚，内容也有意思。", "电池不耐用，用了两天就坏了。")  # fmt: skip
WAITS = (
    "slide link (default sizes, step 2)",
    "slide link that trains (step 1)",
    "review link (trained reviews page)",
    "lab 13: Measure",
    "lab 14: Measure",
)
# The progress bar's text once it counts what was measured ("2 of 6 parts measured", "已测完 2 / 6 部分").
PROGRESS_JS = """
(() => {
  window.__news = [];
  new MutationObserver(() => {
    const bar = document.querySelector('[data-testid="stProgress"]');
    if (bar && /\\d+ (of|\\/) \\d+/.test(bar.innerText)) window.__news.push(performance.now());
  }).observe(document, { subtree: true, childList: true, characterData: true });
})();
"""
DRAWN_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const state = app && app.getAttribute('data-test-script-state');
  const chart = document.querySelector('.attn-heatmap canvas, [data-testid="stVegaLiteChart"]');
  return state === 'notRunning' && chart !== null && window.__bench.paint > 0
    && performance.now() - window.__bench.paint > %d;
}"""


@dataclass
class Side:
    """One version: its server's URL, its tab, and what was measured on it."""

    name: str
    label: str
    base_url: str
    tab: tuple[Any, Any, Any] | None = None  # context, page, CDP session
    samples: dict[str, list[float]] = field(default_factory=dict)
    news: dict[str, list[float]] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)


def open_link(page: Any, url: str, timeout_ms: int = 240_000) -> float:
    """Open ``url``; ms from navigation start to its last chart drawn, the run over and the page quiet."""
    from bench.browser import QUIET_MS

    page.goto(url)
    page.wait_for_function(DRAWN_JS % QUIET_MS, timeout=timeout_ms, polling=100)
    return float(page.evaluate("window.__bench.paint"))


def press_measure(page: Any, cdp: Any, lab: str, i: int) -> tuple[float, float | None]:
    """Lab ``lab``'s page with ``7 + i`` timed rounds (never measured before on this server), Measure clicked: ms to
    the results drawn, and ms to the first progress report with a count (``None``: there was none)."""
    from bench.browser import Change, measure
    from tests.local_app import wait_for_app

    thumb = page.locator(f".st-key-{lab}_repeats input[type=range]")
    for _ in range(i):
        thumb.press("ArrowRight")
    page.keyboard.press("Tab")  # the slider lets go: its value reaches the script
    wait_for_app(page, timeout_ms=60_000)
    page.evaluate("window.__news = []")
    result = measure(page, cdp, Change(act=page.locator(f".st-key-{lab}_measure button").click), timeout_ms=240_000)
    news = page.evaluate("window.__news")
    start = page.evaluate("window.__bench.input")
    return result["redrawn"], (min(news) - start if news else None)


def _waits(side: Side, i: int) -> dict[str, Callable[[], tuple[float, float | None]]]:
    """Each wait of round ``i`` on ``side``: ms, and ms to the first news where it has one."""
    _, page, cdp = side.tab
    base = side.base_url
    slide = {"teacher": "1", "step": "2", "seed": str(3000 + i), "lang": "en"}
    trains = {"weights": "trained", "task": "previous_and_first", "d_model": "16", "num_heads": "2",
              "seed": str(7000 + i), "teacher": "1", "step": "1", "lang": "en"}  # fmt: skip
    review = {**REVIEW, "tokens": REVIEWS[i % len(REVIEWS)] + str(i)}

    def lab(path: str) -> Callable[[], tuple[float, float | None]]:
        def run() -> tuple[float, float | None]:
            open_link(page, f"{base}/{path}?lang=en")
            return press_measure(page, cdp, path, i)

        return run

    return {
        WAITS[0]: lambda: (open_link(page, f"{base}/?{urlencode(slide)}"), None),
        WAITS[1]: lambda: (open_link(page, f"{base}/?{urlencode(trains)}"), None),
        WAITS[2]: lambda: (open_link(page, f"{base}/?{urlencode(review)}"), None),
        WAITS[3]: lab("flash"),
        WAITS[4]: lab("efficient"),
    }


def run_rounds(sides: tuple[Side, ...], waits: tuple[str, ...], rounds: int) -> None:
    """Every wait on each version in turn, round after round (round 0 warms up and trains the reviews)."""
    for i in range(rounds + 1):
        for wait in waits:
            for side in sides:
                try:
                    ms, news = _waits(side, i)[wait]()
                except Exception as error:  # said, and left out of the table
                    side.failures[wait] = f"{type(error).__name__}: {error}".splitlines()[0][:200]
                    print(f"[bench.waits] {side.name}, round {i}: {wait!r} failed: {error!r}"[:400], file=sys.stderr)
                    continue
                if i > 0:
                    side.samples.setdefault(wait, []).append(ms)
                    if news is not None:
                        side.news.setdefault(wait, []).append(news)
        print(f"[bench.waits] round {i}/{rounds} done", file=sys.stderr)


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.0f}" if values else "n/a"


def _spread(values: list[float]) -> str:
    return f"{min(values):.0f}-{max(values):.0f}" if values else ""


def table(before: Side, now: Side, waits: tuple[str, ...], rounds: int, loads: tuple[str, str]) -> Table:
    """One row per wait: both versions' medians, spreads and first news, and the ratio of the medians."""
    rows = []
    for wait in waits:
        old, new = before.samples.get(wait, []), now.samples.get(wait, [])
        ratio = f"{statistics.median(new) / statistics.median(old):.2f}" if old and new else ""
        news = (_median(before.news.get(wait, [])), _median(now.news.get(wait, [])))
        rows.append((wait, _median(old), _spread(old), _median(new), _spread(new), ratio, *news))
    notes = [
        f"before: {before.label}; now: {now.label}. Both served at once, one headless Chromium at "
        f"{SCREEN['width']}x{SCREEN['height']}, a tab per version.",
        f"Median of {rounds} rounds after one warm-up round (which trains the reviews page's model, untimed); each "
        "wait on before, then at once on now. A link: navigation start -> last chart drawn, the run over and the "
        "page quiet. Measure: click -> the results drawn; first news: click -> the first progress report with a "
        "count of parts (n/a: a spinner only).",
        f"Load average (1 min) before / after: {loads[0]} / {loads[1]}.",
    ]
    for side in (before, now):
        notes += [f"{side.name}: {wait!r} failed at least once: {why}" for wait, why in side.failures.items()]
    columns = ("wait", "before ms", "before spread", "now ms", "now spread", "now/before", "first news before",
               "first news now")  # fmt: skip
    return Table(TITLE, columns, tuple(rows), tuple(notes))


def compare(before_rev: str = DEFAULT_BEFORE, rounds: int = ROUNDS, waits: tuple[str, ...] = WAITS) -> Table:
    """Serve ``before_rev`` and this working tree at once, time ``waits`` on both in turn; the table."""
    from playwright.sync_api import sync_playwright

    from bench.ab import _describe, _git, _server_env, checkout
    from bench.browser import PROBE_JS, launch, load_average
    from tests.local_app import REPO, free_port, start_streamlit, stop_process

    dirty = " + uncommitted changes" if _git("status", "--porcelain", "--untracked-files=no") else ""
    with checkout(before_rev) as old_tree, contextlib.ExitStack() as stack:
        sides = []
        for name, tree, label in (
            ("before", old_tree, _describe("HEAD", cwd=old_tree)),
            ("now", REPO, f"this working tree, {_describe('HEAD')}{dirty}"),
        ):
            port = free_port()
            stack.callback(stop_process, start_streamlit(port, extra_env=_server_env(), cwd=tree))
            sides.append(Side(name, label, f"http://127.0.0.1:{port}"))
        loads = [load_average()]
        with sync_playwright() as playwright:
            browser = launch(playwright)
            for side in sides:
                context = browser.new_context(viewport=SCREEN, locale="en-US")
                context.add_init_script(PROBE_JS)
                context.add_init_script(PROGRESS_JS)
                page = context.new_page()
                cdp = context.new_cdp_session(page)
                cdp.send("Performance.enable")
                side.tab = (context, page, cdp)
            try:
                run_rounds(tuple(sides), waits, rounds)
            finally:
                browser.close()
        loads.append(load_average())
    return table(sides[0], sides[1], waits, rounds, (loads[0], loads[1]))


def run(quick: bool) -> list[Table]:
    """This working tree against :data:`DEFAULT_BEFORE` (quick: one round of the slide link and lab 13)."""
    if quick:
        return [compare(DEFAULT_BEFORE, 1, (WAITS[0], WAITS[3]))]
    return [compare(DEFAULT_BEFORE, ROUNDS, WAITS)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.waits", description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=DEFAULT_BEFORE, help=f"the earlier revision (default {DEFAULT_BEFORE})")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"rounds after the warm-up (default {ROUNDS})")
    parser.add_argument("--waits", help="comma-separated words: the waits whose names hold one (slide,lab 13)")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parser.parse_args(argv)
    waits = WAITS
    if args.waits:
        words = [w.strip() for w in args.waits.split(",") if w.strip()]
        waits = tuple(w for w in WAITS if any(word in w for word in words))
        if not waits:
            parser.error(f"no wait matches {args.waits!r}; the waits: {', '.join(WAITS)}")
    print(format_table(compare(args.before, args.rounds, waits), "markdown" if args.markdown else "text"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
