"""The generation panel's step slider: one step moved -> the page settled, in Chromium, on a SmolLM2-135M-sized page.

A Llama of SmolLM2-135M's sizes is built here with random weights (``bench.pretrained.LLAMA_SHAPES``, saved in
bfloat16), listed as the server's only checkpoint, and its page opened with the tutorials' sentence and
``generate=8``; once the generation has ended (untimed), the step slider is moved one step at a time, right to the
last step and back, each move timed with :mod:`bench.browser`'s probe and trace (key press -> the renderer's main
thread settled). The slider redraws only its fragment (the step's shapes, its weights chart and its check): no
weight changes. Target: 300 ms.

``python -m bench.step_slider [--rounds N] [--markdown]``; ``python -m bench --only step_slider``.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from bench.browser import Change, launch, load_average, measure, open_page
from bench.table import Table, rounds_main

TITLE = "Generation: the step slider moved -> page settled (SmolLM2-135M-sized checkpoint, Chromium), ms"

ROUNDS, QUICK_ROUNDS = 14, 3
TARGET_MS = 300.0
NEW_TOKENS = 8
SENTENCE = "The animal didn't cross the street because it was too tired"
SMOLLM2 = "SmolLM2-135M size, random"


def _build(folder: Path) -> Path:
    from bench.pretrained import BUILT, LLAMA_SHAPES

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from tiny_checkpoint import build_llama

    _, hidden, layers, heads, vocab = BUILT[SMOLLM2]
    return build_llama(folder, hidden=hidden, layers=layers, heads=heads, vocab_size=vocab, **LLAMA_SHAPES[SMOLLM2])  # type: ignore[arg-type]


def _slider(page: Any, i: int) -> Change:
    """The step slider moved by one step: right to the last step, then left to the first, ... (its handle focused
    first, as a user does): every step's row is drawn, the longest cache's too."""
    handle = page.locator(".st-key-gen_step input[type=range]")
    right = (i // (NEW_TOKENS - 1)) % 2 == 0
    return Change(act=lambda: handle.press("ArrowRight" if right else "ArrowLeft"), prepare=handle.focus)


def compare(rounds: int) -> Table:
    """Build the checkpoint, serve it, time the slider; the table."""
    from playwright.sync_api import sync_playwright

    from bench.room import SERVER_ENV
    from tests.local_app import free_port, start_streamlit, stop_process

    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="bench-slider-") as scratch:
        folder = _build(Path(scratch) / "smollm2")
        port = free_port()
        env = {**SERVER_ENV, "ATTN_PLAYGROUND_CHECKPOINTS": f"bench={folder}", "HF_HUB_OFFLINE": "1"}
        server = start_streamlit(port, extra_env=env)
        samples: list[float] = []
        try:
            query = {"weights": "pretrained", "checkpoint": "bench", "tokens": SENTENCE, "generate": NEW_TOKENS}
            with sync_playwright() as playwright:
                browser = launch(playwright)
                try:
                    context, page, cdp = open_page(browser, f"http://127.0.0.1:{port}/?{urlencode(query)}")
                    page.locator(".st-key-gen_step input[type=range]").wait_for(timeout=180_000)  # generated
                    for i in range(rounds + 1):
                        settled = measure(page, cdp, _slider(page, i), browser)["settled"]
                        if i:  # the first move warms up
                            samples.append(settled)
                    with contextlib.suppress(Exception):
                        context.close()
                finally:
                    browser.close()
        finally:
            stop_process(server)
    median = statistics.median(samples)
    row = (
        f"step slider, {NEW_TOKENS} new tokens after the tutorials' sentence",
        f"{median:.0f}",
        f"{min(samples):.0f}-{max(samples):.0f}",
        f"<= {TARGET_MS:.0f}",
        "✓" if median <= TARGET_MS else "✗",
    )
    notes = (
        "A Llama of SmolLM2-135M's sizes (576 wide, 30 layers, 9 query / 3 K/V heads) with random weights, its "
        "page's generation made first (untimed). Each move: key press -> the renderer main thread settled "
        f"(bench.browser). Median of {rounds} moves after one warm-up move.",
        f"Load average (1 min) before / after: {load_before} / {load_average()}.",
    )
    return Table(TITLE, ("change", "median ms", "spread", "target", ""), (row,), notes)


def run(quick: bool) -> list[Table]:
    """The slider's table (quick: 3 moves)."""
    return [compare(QUICK_ROUNDS if quick else ROUNDS)]


def main(argv: list[str] | None = None) -> int:
    return rounds_main("python -m bench.step_slider", __doc__.splitlines()[0], compare, ROUNDS, argv)


if __name__ == "__main__":
    sys.exit(main())
