"""Check yourself on the page (AppTest, both languages): the questions as widgets keyed ``check_<step>_<name>``,
the verdicts (``✓`` / ``✗`` and the worked answer), bad and hostile input, the progress in the session and the
link, and the room: the teacher's slide, a learner's ``room=CODE``, an unknown room, the flood limit."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components import check_yourself
from components.i18n import use_language
from mha.room_store import ENV, RoomStore

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
SMALL = {"d_model": "64", "num_heads": "4", "tokens": "the cat sat on the mat"}  # 6 tokens, d_k = 16


@pytest.fixture(autouse=True)
def room_db(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "rooms.sqlite3"
    monkeypatch.setenv(ENV, str(path))
    return path


def open_page(**params: str) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=60)
    for key, value in {**SMALL, **params}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def check_keys(at: AppTest) -> set[str]:
    widgets = [*at.text_input, *at.radio]
    return {w.key for w in widgets if w.key and w.key.startswith("check_")}


def verdicts(at: AppTest) -> list[str]:
    """The questions' verdicts (the live check's own "✓ Matches PyTorch" is not one)."""
    words = ("✓ Right", "✗ Not quite", "✓ 答对", "✗ 不对")
    return [e.value for e in [*at.success, *at.error] if e.value.startswith(words)]


def test_every_step_asks_and_checks_in_english():
    at = open_page(num_kv_heads="2", positional="rope")
    keys = check_keys(at)
    for step in ("1", "1b", "2", "3", "4"):
        assert any(key.startswith(f"check_{step}_") for key in keys), step
    label = at.text_input(key="check_1_wq_params").label
    assert "W_q" in label and "parameters" in label and "weights and biases" in label  # this layer has biases
    at.text_input(key="check_1_wq_params").input("4,160").run()  # 64² + 64
    assert verdicts(at) == ["✓ Right."]
    at.text_input(key="check_1_k_shape").input("1x4x6x16").run()  # 2 K/V heads: [1, 2, 6, 16]
    wrong = [v for v in verdicts(at) if v.startswith("✗")]
    assert len(wrong) == 1 and wrong[0].endswith("[1, 2, 6, 16]")
    at.text_input(key="check_1_k_shape").input("(1, 2, 6, 16)").run()
    assert verdicts(at) == ["✓ Right.", "✓ Right."]
    at.radio(key="check_3_why_contiguous").set_value(0).run()
    assert any(v.startswith("✗") and "contiguous" in v for v in verdicts(at))


def test_a_wrong_count_ends_with_the_worked_answer_in_chinese():
    at = open_page(lang="zh")
    use_language("zh")  # this thread's: AppTest labels the page's translated choices here when it sends them
    try:
        _answer_in_chinese(at)
    finally:
        use_language(None)


def _answer_in_chinese(at: AppTest) -> None:
    assert "参数" in at.text_input(key="check_1_wq_params").label
    at.text_input(key="check_1_wq_params").input("4096").run()
    (wrong,) = [v for v in verdicts(at) if v.startswith("✗")]
    assert wrong.endswith("d² + d = 64² + 64 = 4,160") and "不对" in wrong
    at.text_input(key="check_2_scale").input("1/4").run()  # 1/√16
    assert "✓ 答对了。" in verdicts(at)


def test_bad_and_hostile_answers_keep_the_page_working():
    at = open_page()
    at.text_input(key="check_2_weights_shape").input("about eleven").run()
    assert any("could not read that as a shape like [1, 8, 11, 64]" in w.value.lower() for w in at.warning)
    at.text_input(key="check_1_wq_params").input("<b>x</b><script>alert(1)</script>").run()
    assert not at.exception
    shown = [e.value for e in [*at.markdown, *at.warning, *at.error, *at.caption, *at.success]]
    assert not any("<b>" in text or "<script>" in text for text in shown)
    at.text_input(key="check_1_layer_params").set_value("5" * 10_000).run()  # past max_chars: refused unread
    assert any("longer than 200" in w.value for w in at.warning)
    assert at.text_input(key="check_1_layer_params").max_chars == 201  # Streamlit cuts there: the reader sees 201


def test_progress_in_the_session_and_the_link():
    at = open_page()
    at.text_input(key="check_2_scale").input("0.25").run()
    assert any("in all: 1 of" in c.value for c in at.caption)
    assert at.query_params["checked"] == ["2.scale"] or at.query_params["checked"] == "2.scale"
    again = open_page(checked="2.scale,1.wq_params,bogus")
    assert any("in all: 2 of" in c.value for c in again.caption)


def test_the_room_slide_and_a_learner_answering_into_it(room_db):
    teacher = open_page(teacher="1", step="room")
    (link,) = [c.value for c in teacher.code if "room=" in c.value]
    code = link.split("room=")[1][:6]
    assert RoomStore(room_db).is_open(code)
    assert "teacher=" not in link and "d_model=64" in link
    learners = []
    for answer in ("4,160", "4160", "17"):
        learner = open_page(room=code)
        assert any(code in c.value for c in learner.caption)
        learner.text_input(key="check_1_wq_params").input(answer).run()
        learners.append(learner)
    learners[2].text_input(key="check_1_wq_params").input("4160").run()  # the latest answer counts, once
    counts = {c.question: (c.answered, c.right) for c in RoomStore(room_db).counts(code)}
    assert counts == {"1.wq_params": (3, 3)}
    teacher.run()
    assert any("3 answered, 3 right" in m.value for m in teacher.markdown)


def test_an_unknown_room_says_so_and_the_page_works(room_db):
    at = open_page(room="ZZZZZZ")
    assert any("unknown or has expired" in w.value for w in at.warning)
    at.text_input(key="check_1_wq_params").input("4160").run()
    assert "✓ Right." in verdicts(at) and not at.exception
    hostile = open_page(room="<b>" + "x" * 5000)
    assert not hostile.exception and any("unknown" in w.value for w in hostile.warning)


def test_a_flood_of_answers_is_refused_before_the_store(room_db, monkeypatch):
    code = RoomStore(room_db).open_room()
    calls: list[str] = []
    answer = RoomStore.answer

    def counted(self, *args, **kwargs):
        calls.append(args[1])
        return answer(self, *args, **kwargs)

    monkeypatch.setattr(RoomStore, "answer", counted)
    monkeypatch.setattr(check_yourself, "FLOOD_ANSWERS", 2)
    at = open_page(room=code)
    for text in ("1", "4160", "2", "3"):  # wrong, right, wrong, wrong: two sent, then refused
        at.text_input(key="check_1_wq_params").input(text).run()
    assert len(calls) == 2
    assert any("not sent to the room" in c.value for c in at.caption)


def test_predict_then_see_hides_step_2s_chart_until_answered():
    from conftest import heatmaps

    at = open_page()
    charts = len(heatmaps(at))
    assert not at.toggle(key="predict_2").value  # off by default
    at.toggle(key="predict_2").set_value(True).run()
    assert len(heatmaps(at)) == charts - 1
    assert any("hidden until you answer" in i.value for i in at.info)
    at.text_input(key="check_2_top_key").input("animal").run()  # wrong or right, an answer shows the chart
    assert len(heatmaps(at)) == charts and not any("hidden until" in i.value for i in at.info)


def test_the_chinese_verdicts_warnings_and_room_slide_have_no_english_left(room_db):
    from test_languages import leftover_english, shown_texts, user_tokens

    teacher = open_page(lang="zh", teacher="1", step="room")
    (link,) = [c.value for c in teacher.code if "room=" in c.value]
    learner = open_page(lang="zh", room=link.split("room=")[1][:6])
    use_language("zh")
    try:
        learner.text_input(key="check_1_wq_params").input("1").run()  # wrong: the worked answer
        learner.text_input(key="check_2_weights_shape").input("eleven").run()  # unreadable
        learner.text_input(key="check_2_top_key").input("zebra").run()  # no such token
        learner.text_input(key="check_2_scale").input("1/4").run()  # right
        teacher.run()
    finally:
        use_language(None)
    assert any("1 人作答" in m.value for m in teacher.markdown)  # the counts are on the slide
    for at in (learner, teacher):
        tokens = user_tokens(at)
        texts = [text for key, text in shown_texts(at) if key != "lang" and not key.startswith("example_")]
        leftovers = [(text[:90], words) for text in texts if (words := leftover_english(text, tokens))]
        assert not leftovers, leftovers
    assert len([w for w in learner.warning if "无法读成" in w.value]) == 2
    assert any("房间" in c.value for c in learner.caption)


def test_superscript_digits_are_unreadable_and_the_page_keeps_working():
    at = open_page()
    at.text_input(key="check_2_weights_shape").input("[1, 8, 11, 64²]").run()  # "²".isdigit(), but int("²") fails
    assert not at.exception
    assert any("could not read that as a shape like [1, 8, 11, 64]" in w.value.lower() for w in at.warning)
    at.text_input(key="check_2_top_key").input("²").run()
    assert not at.exception
    assert any("could not read that as a token" in w.value.lower() for w in at.warning)


def test_a_room_that_expires_during_a_session_says_so(room_db):
    import sqlite3

    code = RoomStore(room_db).open_room()
    at = open_page(room=code)
    assert any(f"You answer into room `{code}`" in c.value for c in at.caption)
    with sqlite3.connect(room_db) as db:
        db.execute("UPDATE rooms SET expires = 0 WHERE code = ?", (code,))  # it expires while the learner answers
    at.text_input(key="check_1_wq_params").input("4160").run()
    assert "✓ Right." in verdicts(at) and not at.exception
    assert any("unknown or has expired" in w.value for w in at.warning)
    at.run()
    assert not any("You answer into room" in c.value for c in at.caption)
    assert any("unknown or has expired" in w.value for w in at.warning)


def test_the_room_slide_says_whose_settings_its_counts_are_for(room_db):
    teacher = open_page(teacher="1", step="room")
    (link,) = [c.value for c in teacher.code if "room=" in c.value]
    code = link.split("room=")[1][:6]
    assert any("the learners' link" in c.value for c in teacher.caption)
    learner = open_page(room=code)
    learner.text_input(key="check_1_wq_params").input("4160").run()
    teacher.run()
    (line,) = [m.value for m in teacher.markdown if "1 answered, 1 right" in m.value]
    assert "W_q" in line and "?:" not in line
