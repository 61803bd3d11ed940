"""The room's answers in Chromium: a teacher's slide ``teacher=1&step=room`` at a projector's 1280 × 720 shows the
learners' link and, without a reload, the counts as 29 sessions (threads on the store) and one learner in a real
page answer; the learner's verdict comes back in the page. A screenshot goes to ``test-artifacts/room.png``."""

from __future__ import annotations

import threading
import urllib.parse

import pytest
from conftest import ARTIFACTS, wait_for_app
from local_app import serving

from mha.room_store import ENV, RoomStore

pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1280, "height": 720}
SMALL = {"d_model": "64", "num_heads": "4", "tokens": "the cat sat on the mat"}


def test_the_room_slide_counts_live_at_1280x720(browser, tmp_path):
    db = tmp_path / "rooms.sqlite3"
    with serving(extra_env={ENV: str(db)}) as url:
        context = browser.new_context(viewport=PROJECTOR, locale="en-US")
        teacher = context.new_page()
        teacher.goto(f"{url}/?{urllib.parse.urlencode({**SMALL, 'teacher': '1', 'step': 'room'})}")
        wait_for_app(teacher)
        code_box = teacher.locator('[data-testid="stCode"]').first
        link = code_box.inner_text().strip()
        assert "room=" in link and "teacher=" not in link
        code = urllib.parse.parse_qs(urllib.parse.urlsplit(link).query)["room"][0]
        assert code_box.bounding_box()["y"] < PROJECTOR["height"]  # the link is on the first screen
        store = RoomStore(db)
        assert store.is_open(code)

        def learner(n: int) -> None:
            store.answer(code, "1.wq_params", f"thread-{n}", n % 2 == 0)

        threads = [threading.Thread(target=learner, args=(n,)) for n in range(29)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

        page = context.new_page()
        page.set_viewport_size({"width": 1400, "height": 1000})
        assert link.startswith(f"{url}/?")
        page.goto(link)
        wait_for_app(page)
        box = page.locator(".st-key-check_1_wq_params input")
        box.fill("4,160")
        box.press("Enter")
        page.get_by_text("✓ Right.").first.wait_for(timeout=10_000)

        teacher.wait_for_function(
            "() => document.body.innerText.includes('30 answered, 16 right')", timeout=10_000
        )  # the fragment refreshes every 1.5 s: no reload
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        teacher.screenshot(path=str(ARTIFACTS / "room.png"))
        context.close()
