"""A lab's Check yourself in Chromium at a projector's 1280 × 720: lab 1's questions sit inside the window's width,
an answer typed there gets its verdict without reloading the lab, and another d_k asks another number. A screenshot
goes to ``test-artifacts/lab_questions.png``."""

from __future__ import annotations

import pytest
from conftest import ARTIFACTS, wait_for_app

from components.i18n import t

pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1280, "height": 720}


def test_lab1s_questions_at_1280x720(browser, app_url):
    context = browser.new_context(viewport=PROJECTOR, locale="en-US")
    page = context.new_page()
    page.goto(f"{app_url}/scaling?lang=en")
    wait_for_app(page)
    box = page.locator(".st-key-check_lab1_variance input")
    box.scroll_into_view_if_needed()
    prompt = t("quiz.lab1.variance", d_k=64)
    page.get_by_text(prompt).first.wait_for(timeout=30_000)
    box.fill("64")
    box.press("Enter")
    page.get_by_text("✓ Right.").first.wait_for(timeout=15_000)
    radio = page.locator(".st-key-check_lab1_sharper")
    radio.get_by_text(t("quiz.lab1.sharper.scaled")).click()  # the scaled softmax is the flatter one: wrong
    page.get_by_text("✗ Not quite.").first.wait_for(timeout=15_000)
    for key in ("check_lab1_variance", "check_lab1_multiplier", "check_lab1_sharper"):
        shown = page.locator(f".st-key-{key}").bounding_box()
        assert shown is not None and shown["x"] >= 0 and shown["x"] + shown["width"] <= PROJECTOR["width"], key
    page.locator(".st-key-check_lab1_multiplier").scroll_into_view_if_needed()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "lab_questions.png"))
    assert page.locator('[data-testid="stException"]').count() == 0
    context.close()
