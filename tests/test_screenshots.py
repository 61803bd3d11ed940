"""README's screenshots come from scripts/screenshots.py: it runs here and makes real, non-empty pictures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, chromium_path, missing_tool
from PIL import Image, ImageStat

SCRIPT = REPO / "scripts" / "screenshots.py"


def _shot_names() -> list[str]:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import screenshots
    finally:
        sys.path.remove(str(SCRIPT.parent))
    return [shot.name for shot in screenshots.SHOTS]


def test_every_shot_readme_shows_is_one_the_script_takes():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    shown = {Path(part.split(")")[0]).stem for part in readme.split("(docs/images/")[1:]}
    assert shown, "README shows no screenshot"
    assert shown <= set(_shot_names())
    for name in shown:
        assert (REPO / "docs" / "images" / f"{name}.png").is_file(), name


@pytest.mark.browser
def test_the_script_takes_pictures_of_the_page_a_panel_and_a_lab(tmp_path):
    if chromium_path() is None:
        missing_tool("Chromium is not installed")
    names = ["playground-zh", "step2-en", "lab-scaling-en"]
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path), "--only", ",".join(names)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    for name in names:
        with Image.open(tmp_path / f"{name}.png") as image:
            assert image.width >= 600 and image.height >= 400, (name, image.size)
            spread = ImageStat.Stat(image.convert("L")).stddev[0]
            assert spread > 10, f"{name} looks blank (grey-level spread {spread:.1f})"
