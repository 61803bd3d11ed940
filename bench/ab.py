"""A/B in Chromium: the page now (this working tree) against the page at an earlier revision, served at once.

The earlier revision (``--before REV``, default :data:`DEFAULT_BEFORE`) is checked out into a temporary
``git worktree`` (removed afterwards) and served by its own ``streamlit run playground.py`` on another port,
with this checkout's Python environment; this working tree is served beside it. Both servers run in the
container's environment (:data:`bench.room.SERVER_ENV`). One headless Chromium holds a tab of each version's
default page (:data:`SIZE`) and of each version's lab 1 (:data:`bench.browser.LAB_PATH`), all open for the
whole run.

Each change is timed with :mod:`bench.browser`'s probe and trace (:func:`bench.browser.measure`: key press or
click -> the renderer's main thread settled) on one version, then at once on the other: before, now, before,
now ... change after change, round after round (round 0 warms up), so that the load of a shared machine hits
both alike. The way back from trained weights needs the trained page first: each round trains a seed of its
own, untimed (:func:`bench.browser.measure_training`), then times weights -> random, then reopens the page
at its size, as the browser section does. A change that cannot be made on a version (it did not settle, or
its control is not there) is said on stderr, left out of that version's column, and named in the notes; so is a
page that does not open at all, and every uncaught error a version's pages threw (Streamlit's or the app's).

``python -m bench.ab [--before REV] [--rounds N] [--quick] [--changes seed,lab] [--markdown]``;
``python -m bench --only ab`` runs it against :data:`DEFAULT_BEFORE`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from bench.app_rerun import SIZES
from bench.browser import CHANGES as BROWSER_CHANGES
from bench.browser import (
    LAB_PATH,
    abandon_trace,
    lab_slider,
    launch,
    load_average,
    measure,
    measure_training,
    open_page,
    page_actions,
    reopen,
)
from bench.table import Table, format_table

TITLE = "A/B: control change -> page settled, this tree against an earlier revision (Chromium), ms"

#: The revision ``--before`` compares with by default.
DEFAULT_BEFORE = "7d764d2"
SIZE = SIZES[0]  # the default page: d_model 512, 8 heads, the default sentence
ROUNDS, QUICK_ROUNDS = 7, 2
TRAINED, BACK_TO_RANDOM, LAB = BROWSER_CHANGES[8], BROWSER_CHANGES[9], BROWSER_CHANGES[10]
CHANGES = (*BROWSER_CHANGES[0:1], *BROWSER_CHANGES[2:8], BACK_TO_RANDOM, LAB)  # all but the head and the training
QUICK_CHANGES = (CHANGES[0], CHANGES[3], LAB)  # the seed, d_model, the lab's slider
#: Key press or click -> main thread settled on the default page (docs/PERFORMANCE.md).
TARGETS_MS = {
    CHANGES[0]: 220.0,  # a new seed
    **dict.fromkeys(CHANGES[1:6], 300.0),  # the other live controls: mask, num_heads, d_model, example, typed
    CHANGES[6]: 450.0,  # the language: a full run, every element new
    BACK_TO_RANDOM: 450.0,  # the way back from trained weights: a full run too
    LAB: 300.0,
}
SKIP_AFTER = 2  # a change that failed this many times on a version, and never worked there, is not tried again
PAGE_TIMEOUT_MS = 20_000  # a control that is not there fails in this time, not Playwright's 30 s


@dataclass
class Side:
    """One version of the app: its server's URL and its two tabs, and what was measured on it."""

    name: str
    label: str  # the revision, as the notes name it
    base_url: str
    tabs: dict[str, tuple[Any, Any, Any]] = field(default_factory=dict)  # "page" / "lab": context, page, cdp
    actions: dict[str, Any] = field(default_factory=dict)
    samples: dict[str, list[float]] = field(default_factory=dict)
    failures: dict[str, list[str]] = field(default_factory=dict)
    page_errors: list[str] = field(default_factory=list)  # uncaught errors of its pages (Streamlit's, the app's)
    unopened: dict[str, str] = field(default_factory=dict)  # tab -> why it did not open

    @property
    def page_url(self) -> str:
        return f"{self.base_url}/?{urlencode(SIZE.query())}"

    def open(self, browser: Any) -> None:
        """Its two tabs; one that does not open is said (:attr:`unopened`) and its changes are not tried."""
        for tab, url in (("page", self.page_url), ("lab", f"{self.base_url}{LAB_PATH}")):
            try:
                self.tabs[tab] = open_page(browser, url, self.page_errors)
            except Exception as error:  # the app at this version does not draw: said in the notes
                self.unopened[tab] = f"{url} did not open: {type(error).__name__}: {error}".splitlines()[0][:300]
                print(f"[bench.ab] {self.name}: {self.unopened[tab]}", file=sys.stderr)
                continue
            self.tabs[tab][1].set_default_timeout(PAGE_TIMEOUT_MS)
        if "page" in self.tabs:
            self.actions = page_actions(self.tabs["page"][1], SIZE)

    def gave_up(self, change: str) -> bool:
        if ("lab" if change == LAB else "page") in self.unopened:
            return True
        return len(self.failures.get(change, ())) >= SKIP_AFTER and not self.samples.get(change)

    def close(self) -> None:
        for context, _, _ in self.tabs.values():
            with contextlib.suppress(Exception):  # the browser may be gone already
                context.close()


def time_change(browser: Any, side: Side, change: str, i: int) -> float:
    """One change on one version: ms from the key press or click to the main thread settled (traced)."""
    if change == LAB:
        _, page, cdp = side.tabs["lab"]
        return measure(page, cdp, lab_slider(page, i), browser)["settled"]
    _, page, cdp = side.tabs["page"]
    if change != BACK_TO_RANDOM:
        return measure(page, cdp, side.actions[change](i), browser)["settled"]
    try:  # the trained page first (a seed trained for this round, untimed), then the way back, then the page again
        measure_training(page, cdp, side.actions[TRAINED](i))
        return measure(page, cdp, side.actions[BACK_TO_RANDOM](i), browser)["settled"]
    finally:
        reopen(page, side.page_url)


def run_rounds(browser: Any, sides: tuple[Side, ...], changes: tuple[str, ...], rounds: int) -> None:
    """Every change on each version in turn, round after round (round 0 warms up); samples kept on the sides."""
    for i in range(rounds + 1):
        for change in changes:
            for side in sides:
                if side.gave_up(change):
                    continue
                try:
                    settled = time_change(browser, side, change, i)
                except Exception as error:  # a change this version cannot make: said, and left out
                    abandon_trace(browser)
                    side.failures.setdefault(change, []).append(f"{type(error).__name__}: {error}"[:300])
                    print(f"[bench.ab] {side.name}, round {i}: {change!r} failed: {error!r}"[:400], file=sys.stderr)
                    with contextlib.suppress(Exception):  # back to a known page for the next change
                        reopen(side.tabs["page"][1], side.page_url)
                    continue
                if i > 0:
                    side.samples.setdefault(change, []).append(settled)
        print(f"[bench.ab] round {i}/{rounds} done", file=sys.stderr)


def _git(*args: str, cwd: Path | None = None) -> str:
    from tests.local_app import REPO

    done = subprocess.run(["git", *args], cwd=cwd or REPO, check=True, capture_output=True, text=True)
    return done.stdout.strip()


@contextlib.contextmanager
def checkout(rev: str) -> Iterator[Path]:
    """``rev`` checked out into a temporary ``git worktree`` (detached), removed when the block ends."""
    commit = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
    parent = Path(tempfile.mkdtemp(prefix="bench-ab-"))
    path = parent / "before"
    _git("worktree", "add", "--detach", "--quiet", str(path), commit)
    try:
        yield path
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            _git("worktree", "remove", "--force", str(path))
        with contextlib.suppress(subprocess.CalledProcessError):
            _git("worktree", "prune")
        shutil.rmtree(parent, ignore_errors=True)


def _describe(rev: str, cwd: Path | None = None) -> str:
    """``abc1234 (subject...)`` of a revision."""
    return _git("log", "-1", "--format=%h (%s", rev, cwd=cwd)[:60] + "...)"


def _cells(values: list[float]) -> tuple[str, str]:
    if not values:
        return "n/a", ""
    return f"{statistics.median(values):.0f}", f"{min(values):.0f}-{max(values):.0f}"


def _verdict(values: list[float], target: float) -> str:
    return "" if not values else ("✓" if statistics.median(values) <= target else "✗")


def table(before: Side, now: Side, changes: tuple[str, ...], rounds: int, loads: tuple[str, str]) -> Table:
    """One row per change: both versions' medians and spreads, the ratio, the target and the verdicts."""
    rows = []
    for change in changes:
        old, new = before.samples.get(change, []), now.samples.get(change, [])
        ratio = f"{statistics.median(new) / statistics.median(old):.2f}" if old and new else ""
        target = TARGETS_MS[change]
        verdicts = (_verdict(new, target), _verdict(old, target))
        rows.append((change, *_cells(old), *_cells(new), ratio, f"<= {target:.0f}", *verdicts))
    notes = [
        f"before: {before.label}; now: {now.label}. Both served at once (environment "
        f"{' '.join(f'{k}={v}' for k, v in _server_env().items())}), one headless Chromium, a tab per version and page "
        f"({SIZE.name}; lab 1 at {LAB_PATH}).",
        f"Median of {rounds} rounds after one warm-up round; each change made on before, then at once on now, change "
        "after change. settled: key press / click -> the renderer main thread settled (bench.browser's probe and "
        "Chromium trace); spread: fastest-slowest round; now/before: ratio of the medians. weights -> random: after "
        "a training of a seed of its own each round (untimed), the page reopened after it.",
        f"Load average (1 min) before / after: {loads[0]} / {loads[1]} ({_cores()} cores shared by both servers and "
        "the browser).",
    ]
    for side in (before, now):
        for why in side.unopened.values():
            notes.append(f"{side.name}: not measured: {why}")
        for change, errors in side.failures.items():
            tried = "not measured" if side.gave_up(change) else f"failed {len(errors)} time(s)"
            notes.append(f"{side.name}: {change!r} {tried}: {errors[-1]}")
        for error in sorted(set(side.page_errors)):
            notes.append(f"{side.name}: page error ({side.page_errors.count(error)}x): {error[:200]}")
    columns = ("change", "before ms", "before spread", "now ms", "now spread", "now/before", "target", "now", "before")
    return Table(TITLE, columns, tuple(rows), tuple(notes))


def _server_env() -> dict[str, str]:
    from bench.room import SERVER_ENV

    return SERVER_ENV


def _cores() -> int:
    return os.cpu_count() or 0


def compare(before_rev: str = DEFAULT_BEFORE, rounds: int = ROUNDS, changes: tuple[str, ...] = CHANGES) -> Table:
    """Serve ``before_rev`` and this working tree at once, time ``changes`` on both in turn; the A/B table."""
    from playwright.sync_api import sync_playwright

    from tests.local_app import REPO, free_port, start_streamlit, stop_process

    dirty = " + uncommitted changes" if _git("status", "--porcelain", "--untracked-files=no") else ""
    now_label = f"this working tree, {_describe('HEAD')}{dirty}"
    with checkout(before_rev) as old_tree, contextlib.ExitStack() as stack:
        sides = []
        for name, tree, label in (("before", old_tree, _describe("HEAD", cwd=old_tree)), ("now", REPO, now_label)):
            port = free_port()
            server = start_streamlit(port, extra_env=_server_env(), cwd=tree)
            stack.callback(stop_process, server)
            sides.append(Side(name, label, f"http://127.0.0.1:{port}"))
        load_before = load_average()
        with sync_playwright() as playwright:
            browser = launch(playwright)
            try:
                for side in sides:
                    side.open(browser)
                run_rounds(browser, tuple(sides), changes, rounds)
            finally:
                for side in sides:
                    side.close()
                browser.close()
        load_after = load_average()
    return table(sides[0], sides[1], changes, rounds, (load_before, load_after))


def run(quick: bool) -> list[Table]:
    """This working tree against :data:`DEFAULT_BEFORE` (quick: 2 rounds of 3 changes)."""
    if quick:
        return [compare(DEFAULT_BEFORE, QUICK_ROUNDS, QUICK_CHANGES)]
    return [compare(DEFAULT_BEFORE, ROUNDS, CHANGES)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ab", description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=DEFAULT_BEFORE, help=f"the earlier revision (default {DEFAULT_BEFORE})")
    parser.add_argument("--rounds", type=int, help=f"rounds after the warm-up (default {ROUNDS}; quick {QUICK_ROUNDS})")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 2 rounds of 3 changes")
    parser.add_argument("--changes", help="comma-separated words: the changes whose names hold one (seed,lab)")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parser.parse_args(argv)
    rounds = args.rounds if args.rounds is not None else (QUICK_ROUNDS if args.quick else ROUNDS)
    changes = QUICK_CHANGES if args.quick else CHANGES
    if args.changes:
        words = [w.strip() for w in args.changes.split(",") if w.strip()]
        changes = tuple(c for c in CHANGES if any(w in c for w in words))
        if not changes:
            parser.error(f"no change matches {args.changes!r}; the changes: {', '.join(CHANGES)}")
    result = compare(args.before, rounds, changes)
    print(format_table(result, "markdown" if args.markdown else "text"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
