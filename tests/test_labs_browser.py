"""Every lab page in a real Chromium: it draws its charts (or, for the timing labs, its Measure button), no errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import console_errors, wait_for_app

from components.i18n import t
from components.nav import LAB_PAGES

pytestmark = pytest.mark.browser

_MARKS_DRAWN = """() => Array.from(document.querySelectorAll('.vega-embed'))
    .map(chart => chart.querySelectorAll('.mark-rect path, .mark-line path, .mark-symbol path').length)"""
TIMING_LABS = {"loop", "complexity"}


@pytest.mark.parametrize(
    ("page_file", "lab", "lang"),
    [(page, lab, ("zh", "en")[i % 2]) for i, (page, lab, _) in enumerate(LAB_PAGES)],
    ids=[Path(page).stem for page, _, _ in LAB_PAGES],
)
def test_lab_page_renders(app_url, page, page_file, lab, lang):
    url_path = Path(page_file).stem.split("_", 1)[1]  # "pages/1_scaling.py" -> "scaling"
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(f"{app_url}/{url_path}?lang={lang}")
    wait_for_app(page)
    assert page.get_by_role("heading", name=t(f"lab.{lab}.title", lang=lang)).count() == 1
    assert page.locator('[data-testid="stException"]').count() == 0
    if lab in TIMING_LABS:
        page.get_by_role("button", name=t("lab.common.measure", lang=lang)).wait_for(timeout=60_000)
    elif lab == "onnx":  # nothing drawn until the learner asks for the export
        page.get_by_role("button", name=t("lab.onnx.export", lang=lang)).wait_for(timeout=60_000)
    else:
        page.wait_for_function(f"({_MARKS_DRAWN})().some(marks => marks > 0)", timeout=60_000)
        assert all(marks > 0 for marks in page.evaluate(_MARKS_DRAWN))
    # A page under a path first probes <path>/_stcore/... (404) before the root: Streamlit's own, harmless.
    assert [error for error in console_errors(page) if "404" not in error] == []
    assert not [url for url in requested if not url.startswith(app_url)], "the page fetched from the network"
