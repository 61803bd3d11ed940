"""Trained weights in a real Chromium: the page follows a training live and shows the model when it is done;
Stop ends a training. The server trains for real (a small model: a second or two on a quiet machine)."""

from __future__ import annotations

import pytest
from conftest import ARTIFACTS, console_errors
from test_browser_controls import settle, text_appears

pytestmark = pytest.mark.browser


def test_a_trained_link_trains_live_then_shows_the_steps_and_the_timeline(app_url, page):
    page.goto(f"{app_url}/?weights=trained&task=previous&d_model=16&num_heads=2&seed=3&tokens=3 1 4 1 5 9 2 6")
    page.wait_for_function(text_appears("Training: copy the previous token"), timeout=90_000)
    charts = settle(page, text_appears("Training timeline"), timeout_ms=180_000)  # no reload: the page follows
    assert len(charts) >= 8 and all(charts)
    text = page.locator('[data-testid="stMainBlockContainer"]').inner_text()
    assert "accuracy" in text and "0:3 · 1:1 · 2:4" in text
    assert page.get_by_role("heading", name="1 · Project and split into heads").count() == 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "trained-previous.png"), full_page=True)
    assert console_errors(page) == []


def test_stop_ends_a_training_and_train_starts_it_again(app_url, page):
    page.goto(f"{app_url}/?weights=trained&task=induction&d_model=128&num_heads=16&seed=5&mask_type=causal")
    page.get_by_role("button", name="Stop").click(timeout=90_000)  # a long training: its Stop button
    page.wait_for_function(text_appears("Training stopped at step"), timeout=60_000)
    assert page.get_by_role("button", name="Train").count() == 1
    page.wait_for_timeout(1500)  # stopped: nothing trains on its own
    assert page.get_by_role("button", name="Stop").count() == 0
    page.get_by_role("button", name="Train").click()
    page.get_by_role("button", name="Stop").click(timeout=60_000)
    page.wait_for_function(text_appears("Training stopped at step"), timeout=60_000)
    assert console_errors(page) == []
