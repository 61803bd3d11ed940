"""Take README's screenshots of the real page: a local server, headless Chromium, PNGs in docs/images/.

Run from the repository root (the test suite runs it too, into a temporary folder):

    .venv/bin/python scripts/screenshots.py            # writes docs/images/*.png
    .venv/bin/python scripts/screenshots.py --out DIR  # somewhere else
    .venv/bin/python scripts/screenshots.py --only playground-en,lab-scaling-en

The pretrained shot needs a checkpoint named ``minilm`` on the server's list, e.g.
``ATTN_PLAYGROUND_CHECKPOINTS=minilm=/path/to/all-MiniLM-L6-v2`` (skipped without the variable).
Each shot is a link (the page's state is its URL) and what to capture: the whole viewport or
one panel, found by its heading. Needs Chromium (``/usr/bin/chromium`` or ``$CHROMIUM_PATH``)
and Playwright (requirements-dev.txt).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run as a file: make the repository importable

from tests.local_app import CHROMIUM_ARGS, chromium_path, serving, wait_for_app  # noqa: E402

ANIMAL = "The animal didn't cross the street because it was too tired"
XIAOMING = "小明喜欢打球，他放学后去了操场"


@dataclass(frozen=True)
class Shot:
    """One screenshot: file name (without .png), page path, query, viewport, and the panel to crop to."""

    name: str
    query: dict[str, str]
    path: str = "/"
    size: tuple[int, int] = (1400, 900)
    panel: str | None = None  # text of a heading: crop to the bordered panel that holds it
    full_page: bool = False
    ready_text: str | None = None  # wait until this text is on the page (a training's result, say)
    needs_env: str | None = None  # taken only where this variable is set (a checkpoint's location)


SHOTS = (
    Shot("playground-en", {"lang": "en"}),
    Shot("playground-zh", {"lang": "zh", "tokens": XIAOMING, "mask_type": "causal"}),
    Shot("step1-en", {"lang": "en"}, panel="1 · "),
    Shot("step2-en", {"lang": "en", "d_model": "64", "num_heads": "4"}, panel="2 · "),
    Shot("step3-en", {"lang": "en"}, panel="3 · "),
    Shot("step4-en", {"lang": "en"}, panel="4 · "),
    Shot(
        "step2-zh",
        {"lang": "zh", "tokens": XIAOMING, "mask_type": "causal", "d_model": "64", "num_heads": "4"},
        panel="2 · ",
    ),
    Shot(
        "trained-en",
        {"lang": "en", "weights": "trained", "task": "previous_and_first", "d_model": "64", "num_heads": "2"},
        panel="2 · ",
        ready_text="Trained in",
    ),
    Shot(
        "image-en",
        {"lang": "en", "weights": "trained", "task": "digits", "d_model": "64", "num_heads": "4"},
        panel="What the heads look at",
        ready_text="Trained in",
    ),
    Shot(
        "pretrained-en",
        {
            "lang": "en",
            "weights": "pretrained",
            "checkpoint": "minilm",
            "tokens": ANIMAL,
            "finder_query": "it",
            "finder_key": "animal",
        },
        panel="Head finder",
        needs_env="ATTN_PLAYGROUND_CHECKPOINTS",
    ),
    Shot("lab-scaling-en", {"lang": "en"}, path="/scaling"),
    Shot("lab-masks-zh", {"lang": "zh"}, path="/masks"),
    Shot(
        "teacher-en",
        {"lang": "en", "teacher": "1", "step": "2", "hide": "seed,device,positional,dtype"},
        size=(1280, 720),
    ),
    Shot(
        "teacher-zh",
        {"lang": "zh", "teacher": "1", "step": "2", "tokens": XIAOMING, "mask_type": "causal"},
        size=(1280, 720),
    ),
)


def _settled(page) -> None:
    """Wait until the script finished and every chart has drawn."""
    wait_for_app(page, timeout_ms=90_000)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1500)  # charts finish their first paint


def take(page, base_url: str, shot: Shot, out: Path) -> Path:
    """Open the shot's link, wait for the page, and save the PNG; returns its path."""
    page.set_viewport_size({"width": shot.size[0], "height": shot.size[1]})
    page.goto(f"{base_url}{shot.path}?{urlencode(shot.query)}")
    if shot.ready_text:
        page.get_by_text(shot.ready_text).first.wait_for(timeout=180_000)
    _settled(page)
    target = out / f"{shot.name}.png"
    if shot.panel is None:
        page.screenshot(path=str(target), full_page=shot.full_page)
        return target
    # The page scrolls inside Streamlit's main container, not the document, so a screenshot sees only
    # the window: make the window as tall as the page, let the charts redraw, then crop to the panel.
    height = page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": shot.size[0], "height": min(int(height) + 100, 16_000)})
    page.wait_for_timeout(2500)
    heading = page.locator("h3", has_text=shot.panel).first
    panel = heading.locator("xpath=ancestor::div[@data-testid='stVerticalBlock'][1]")
    page.screenshot(path=str(target), clip=panel.bounding_box())
    return target


def main(argv: list[str] | None = None) -> int:
    """Take every shot (or those named with ``--only``) into ``--out``; print each file and its size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images")
    parser.add_argument("--only", default="", help="comma-separated shot names")
    args = parser.parse_args(argv)
    wanted = {name for name in args.only.split(",") if name}
    shots = [shot for shot in SHOTS if not wanted or shot.name in wanted]
    for shot in [shot for shot in shots if shot.needs_env and not os.environ.get(shot.needs_env)]:
        print(f"{shot.name}: skipped, {shot.needs_env} is not set (it names the checkpoint to show)")
        shots.remove(shot)
    if wanted - {shot.name for shot in SHOTS}:
        parser.error(f"unknown shots: {', '.join(sorted(wanted - {shot.name for shot in SHOTS}))}")
    chromium = chromium_path()
    if chromium is None:
        parser.error("Chromium not found: install Debian's chromium or set CHROMIUM_PATH")
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    with serving() as base_url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            for shot in shots:
                path = take(page, base_url, shot, args.out)
                print(f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path}  {path.stat().st_size:,} bytes")
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
