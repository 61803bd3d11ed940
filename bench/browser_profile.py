"""Where the browser's time goes per rerun: the renderer main thread, split as the DevTools performance panel does.

The same page sizes and changes as :mod:`bench.browser` (on the default page a new seed, another head,
the mask and d_model; a new seed at the larger sizes), each change traced with Chromium's timeline
categories (``browser.start_tracing``) and read by :func:`bench._trace.breakdown_ms`: scripting
(JavaScript, GC, event handlers -- a canvas's draw calls run here too), rendering (style and layout),
painting (paint, layerize, commit) and other (task overhead, IPC), from the key press to the main thread
settling. Tracing every timeline event slows the page a little: read the split, and take the times from
the ``browser`` section.
"""

from __future__ import annotations

import statistics

from bench._trace import GROUPS, PROFILE_CATEGORIES, breakdown_ms
from bench.app_rerun import SIZES
from bench.browser import CHANGES, launch, load_average, time_size
from bench.table import Table

TITLE = "Browser profile: renderer main thread per rerun, scripting / rendering / painting (Chromium trace), ms"


def run(quick: bool) -> list[Table]:
    """One row per page size and change: median ms per group over the traced rounds."""
    from playwright.sync_api import sync_playwright

    from tests.local_app import free_port, start_streamlit, stop_process

    default_page = (CHANGES[0], CHANGES[1]) if quick else (CHANGES[0], CHANGES[1], CHANGES[2], CHANGES[4])
    plan = [(SIZES[0], default_page)] + ([] if quick else [(size, (CHANGES[0],)) for size in SIZES[1:]])
    rounds = 2 if quick else 3
    port = free_port()
    server = start_streamlit(port)
    rows = []
    load = load_average()
    try:
        with sync_playwright() as playwright:
            browser = launch(playwright)
            for size, changes in plan:
                samples = time_size(browser, f"http://127.0.0.1:{port}", size, rounds, changes, PROFILE_CATEGORIES)
                for name, results in samples.items():
                    parts = [breakdown_ms(r["trace"], done_ms=r["redrawn"]) for r in results]
                    med = {key: statistics.median(p[key] for p in parts) for key in parts[0]}
                    cells = [f"{med[group]:.0f}" for group in GROUPS]
                    rows.append((size.name, name, f"{med['settled']:.0f}", f"{med['busy']:.0f}", *cells))
            browser.close()
    finally:
        stop_process(server)
    notes = (
        f"median of {rounds} traced rounds after one warm-up round. settled: key press -> the main thread settled "
        "(as in the browser section); busy: its task time over that span, split into the four groups (self time "
        "of each trace event; an event of no known kind counts as its parent's).",
        f"Load average (1 min) before / after: {load} / {load_average()}.",
    )
    columns = ("page", "change", "settled ms", "busy ms", *(f"{group} ms" for group in GROUPS))
    return [Table(TITLE, columns, tuple(rows), notes)]
