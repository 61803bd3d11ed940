"""Today's attention at the default page's sizes: grouped K/V heads with RoPE against the tutorials' layer.

One ``streamlit run playground.py`` of this working tree; one headless Chromium with two tabs, the default page
(:data:`bench.ab.SIZE`: d_model 512, 8 heads, the default sentence) and the same page with ``num_kv_heads=2`` and
``positional=rope``. Each live change of :data:`bench.ab.CHANGES` (a new seed, the mask, num_heads, d_model, an
example, a typed sentence) is timed on the plain tab, then at once on the GQA/RoPE tab, change after change, round
after round (round 0 warms up), with :mod:`bench.browser`'s probe and trace (key press or click -> the renderer's
main thread settled). The target: the GQA/RoPE page within 10 % of the plain one (median ratio <= 1.10).

The server's part is timed apart through AppTest: a full run of each page with a seed never seen (nothing cached),
the two pages in turn.

``python -m bench.today [--rounds N] [--markdown]``; ``python -m bench --only today``.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
from typing import Any
from urllib.parse import urlencode

from bench import time_once
from bench.ab import CHANGES as AB_CHANGES
from bench.ab import SIZE
from bench.browser import launch, load_average, measure, open_page, page_actions
from bench.table import Table, rounds_main

TITLE = "GQA + RoPE against the tutorials' layer at the default page's sizes: control change -> page settled, ms"

TODAY = {"num_kv_heads": "2", "positional": "rope"}
CHANGES = AB_CHANGES[:6]  # the live controls: seed, mask, num_heads, d_model, example, typed
ROUNDS, QUICK_ROUNDS = 7, 2
TARGET_RATIO = 1.10
SERVER_SEEDS = 20_000  # the server's part: seeds from here up, one each


def _pages(base_url: str) -> dict[str, str]:
    plain = SIZE.query()
    return {"plain": f"{base_url}/?{urlencode(plain)}", "gqa_rope": f"{base_url}/?{urlencode({**plain, **TODAY})}"}


def _browser_rounds(base_url: str, rounds: int) -> tuple[dict[str, dict[str, list[float]]], list[str]]:
    from playwright.sync_api import sync_playwright

    samples: dict[str, dict[str, list[float]]] = {name: {change: [] for change in CHANGES} for name in _pages("")}
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = launch(playwright)
        tabs: dict[str, tuple[Any, Any, Any]] = {}
        try:
            for name, url in _pages(base_url).items():
                tabs[name] = open_page(browser, url, errors)
            actions = {name: page_actions(tab[1], SIZE) for name, tab in tabs.items()}
            for i in range(rounds + 1):
                for change in CHANGES:
                    for name, (_, page, cdp) in tabs.items():
                        settled = measure(page, cdp, actions[name][change](i), browser)["settled"]
                        if i:  # round 0 warms up
                            samples[name][change].append(settled)
        finally:
            for context, _, _ in tabs.values():
                with contextlib.suppress(Exception):
                    context.close()
            browser.close()
    return samples, errors


def _server_part(rounds: int) -> dict[str, list[float]]:
    """ms of a full AppTest run of each page with a new seed (nothing cached), the pages in turn."""
    from streamlit.testing.v1 import AppTest

    from bench.app_rerun import SCRIPT

    timings: dict[str, list[float]] = {"plain": [], "gqa_rope": []}
    seed = SERVER_SEEDS
    for i in range(rounds + 1):
        for name, extra in (("plain", {}), ("gqa_rope", TODAY)):
            at = AppTest.from_file(str(SCRIPT), default_timeout=120)
            for key, value in {**SIZE.query(), **extra, "seed": str(seed)}.items():
                at.query_params[key] = value
            seed += 1
            seconds = time_once(at.run)
            if at.exception:
                raise RuntimeError(f"{name}: {at.exception[0].value}")
            if i:
                timings[name].append(1000 * seconds)
    return timings


def _row(change: str, plain: list[float], today: list[float]) -> tuple[object, ...]:
    if not plain or not today:
        return (change, "n/a", "n/a", "", "")
    ratio = statistics.median(today) / statistics.median(plain)
    verdict = "✓" if ratio <= TARGET_RATIO else "✗"
    return (change, f"{statistics.median(plain):.0f}", f"{statistics.median(today):.0f}", f"{ratio:.2f}", verdict)


def compare(rounds: int = ROUNDS) -> Table:
    """Serve this working tree, time each change on both tabs in turn, then the server's part; the table."""
    from bench.room import SERVER_ENV
    from tests.local_app import free_port, start_streamlit, stop_process

    load_before = load_average()
    port = free_port()
    server = start_streamlit(port, extra_env=SERVER_ENV)
    try:
        samples, errors = _browser_rounds(f"http://127.0.0.1:{port}", rounds)
    finally:
        stop_process(server)
    server_part = _server_part(rounds)
    rows = [_row(change, samples["plain"][change], samples["gqa_rope"][change]) for change in CHANGES]
    rows.append(_row("server: full run, new seed (AppTest)", server_part["plain"], server_part["gqa_rope"]))
    notes = [
        f"plain: {SIZE.name}; GQA + RoPE: the same with {urlencode(TODAY)} (8 query heads, 2 K/V heads, RoPE base "
        "10000). One server, one headless Chromium, a tab each; each change made on plain, then at once on GQA + RoPE.",
        f"Median of {rounds} rounds after one warm-up round. settled: key press / click -> the renderer main thread "
        f"settled (bench.browser). Target: GQA + RoPE / plain <= {TARGET_RATIO:.2f}.",
        f"Load average (1 min) before / after: {load_before} / {load_average()}.",
        *(f"page error: {error[:200]}" for error in sorted(set(errors))),
    ]
    header = ("change", "plain ms", "GQA + RoPE ms", "GQA+RoPE / plain", f"<= {TARGET_RATIO:.2f}")
    return Table(TITLE, header, tuple(rows), tuple(notes))


def run(quick: bool) -> list[Table]:
    """The comparison (quick: 2 rounds)."""
    return [compare(QUICK_ROUNDS if quick else ROUNDS)]


def main(argv: list[str] | None = None) -> int:
    return rounds_main("python -m bench.today", __doc__.splitlines()[0], compare, ROUNDS, argv)


if __name__ == "__main__":
    sys.exit(main())
