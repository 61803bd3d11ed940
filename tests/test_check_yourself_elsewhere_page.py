"""Check yourself beyond the four steps, on the page (AppTest, both languages): a trained model's questions beside its
timeline, the labs' questions from the labs' own numbers, the generation panel's questions from the generation it
shows; right and wrong answers, an unreadable one, and the Chinese page without English left."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from conftest import trained_spec
from streamlit.testing.v1 import AppTest
from test_languages import leftover_english, shown_texts, user_tokens

from components.i18n import t, use_language
from mha.room_store import ENV
from mha.training import service as service_module

REPO = Path(__file__).resolve().parents[1]
SCRIPT = str(REPO / "playground.py")
TRAINED = {"weights": "trained", "task": "previous_and_first", "d_model": "16", "num_heads": "2", "tokens": "3 1 4 1 5"}
PROMPT = "the cat sat on the mat"


@pytest.fixture(autouse=True)
def room_db(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "rooms.sqlite3"
    monkeypatch.setenv(ENV, str(path))
    return path


def verdicts(at: AppTest) -> list[str]:
    words = ("✓ Right", "✗ Not quite", "✓ 答对", "✗ 不对")
    return [e.value for e in [*at.success, *at.error] if e.value.startswith(words)]


def check_keys(at: AppTest, prefix: str) -> set[str]:
    return {w.key for w in [*at.text_input, *at.radio] if w.key and w.key.startswith(prefix)}


def no_english_left(at: AppTest) -> None:
    tokens = user_tokens(at)
    texts = [text for key, text in shown_texts(at) if key != "lang" and not key.startswith("example_")]
    leftovers = [(text[:90], words) for text in texts if (words := leftover_english(text, tokens))]
    assert not leftovers, leftovers


# ---------------------------------------------------------------- a trained page
def trained_page(lang: str) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=90)
    for key, value in {**TRAINED, "lang": lang}.items():
        at.query_params[key] = value
    at.run()
    service = service_module.training_service()
    spec = trained_spec(16, 2, 0, task="previous_and_first")
    job = service.job(spec)
    assert job is None or job.finished.wait(120)
    at.run()
    assert not at.exception, at.exception
    return at


def test_a_trained_page_asks_about_its_task_in_english(short_trainings):
    at = trained_page("en")
    assert {"check_model_relation_key", "check_model_relation_head", "check_model_faded"} <= check_keys(
        at, "check_model_"
    )
    label = at.text_input(key="check_model_relation_key").label
    assert "first token" in label and "row 4" in label  # 3 1 4 1 5: the last row's first token is key 0
    at.text_input(key="check_model_relation_key").input("3").run()
    (wrong,) = [v for v in verdicts(at) if v.startswith("✗")]
    assert wrong.endswith("key 0")
    at.text_input(key="check_model_relation_key").input("0").run()
    assert "✓ Right." in verdicts(at) and not [v for v in verdicts(at) if v.startswith("✗")]
    at.radio(key="check_model_faded").set_value(1).run()  # the loss never looked at row 0
    assert verdicts(at).count("✓ Right.") == 2
    assert any("in all: 2 of" in c.value for c in at.caption)
    at.text_input(key="check_model_relation_head").input("first").run()
    assert any("could not read that as a number" in w.value.lower() for w in at.warning) and not at.exception


def test_a_trained_page_asks_in_chinese_with_no_english_left(short_trainings):
    use_language("zh")  # this thread's: AppTest formats the page's translated choices here when it sends them
    try:
        at = trained_page("zh")
        assert "第一个词元" in at.text_input(key="check_model_relation_key").label
        at.text_input(key="check_model_relation_key").input("2").run()
        at.text_input(key="check_model_relation_head").input("0").run()
        at.radio(key="check_model_faded").set_value(0).run()
    finally:
        use_language(None)
    assert [v for v in verdicts(at) if v.startswith("✗ 不对")]
    no_english_left(at)


# ---------------------------------------------------------------- the labs
def open_lab(page: str, lang: str = "en") -> AppTest:
    at = AppTest.from_file(str(REPO / "pages" / page), default_timeout=60)
    at.query_params["lang"] = lang
    at.run()
    assert not at.exception, at.exception
    return at


def test_lab1_asks_from_its_own_numbers():
    at = open_lab("1_scaling.py")
    assert check_keys(at, "check_lab1_") == {"check_lab1_variance", "check_lab1_multiplier", "check_lab1_sharper"}
    at.text_input(key="check_lab1_variance").input("64").run()  # d_k = 64 by default
    at.text_input(key="check_lab1_multiplier").input("1/8").run()
    assert verdicts(at) == ["✓ Right.", "✓ Right."]
    at.select_slider(key="scaling_d_k").set_value(16).run()  # another d_k: other answers
    wrong = [v for v in verdicts(at) if v.startswith("✗")]
    assert len(wrong) == 2 and wrong[0].endswith("d_k = 16") and wrong[1].endswith("= 0.25")
    at.text_input(key="check_lab1_variance").input("sixteen").run()
    assert any("could not read that as a number" in w.value.lower() for w in at.warning) and not at.exception


def test_lab2_and_lab3_ask_from_their_own_numbers():
    from components.labs import heads
    from mha.tokens import tokenize

    length = len(tokenize(heads.DEFAULT_TEXT))
    at = open_lab("2_heads.py")
    at.text_input(key="check_lab2_params").input("16,640").run()  # 4·64² + 4·64, any h
    at.text_input(key="check_lab2_maps").input("1").run()
    assert verdicts(at)[0] == "✓ Right." and verdicts(at)[1].endswith(f"8 · {length}² = {8 * length * length:,}")
    at = open_lab("3_reshape.py")  # "I love cats and dogs too", d_model 16, 4 heads: head 3's row 0 is n = 18
    at.text_input(key="check_lab3_source").input("dogs").run()
    at.text_input(key="check_lab3_shape").input("1x4x6x4").run()
    assert verdicts(at) == ["✓ Right.", "✓ Right."]
    at.select_slider(key="reshape_heads").set_value(2).run()  # head 1's row 0 is n = 6: token 3, "and"
    assert next(v for v in verdicts(at) if v.startswith("✗")).endswith("and, token 3")


def test_lab4_asks_about_the_mask_in_both_languages():
    at = open_lab("4_masks.py")
    assert check_keys(at, "check_lab4_") == {"check_lab4_row_keys", "check_lab4_empty_rows", "check_lab4_torch_true"}
    at.radio(key="check_lab4_torch_true").set_value(0).run()
    assert any(v.startswith("✗") and "~keep" in v for v in verdicts(at))
    zh = open_lab("4_masks.py", "zh")
    use_language("zh")
    try:
        zh.radio(key="check_lab4_torch_true").set_value(1).run()
        zh.text_input(key="check_lab4_row_keys").input("99").run()
    finally:
        use_language(None)
    assert "✓ 答对了。" in verdicts(zh) and any(v.startswith("✗ 不对") for v in verdicts(zh))
    no_english_left(zh)


@pytest.mark.parametrize("page", ["1_scaling.py", "2_heads.py", "3_reshape.py"])
def test_the_labs_questions_read_in_chinese(page):
    at = open_lab(page, "zh")
    lab = "lab" + page[0]
    assert check_keys(at, f"check_{lab}_")
    use_language("zh")
    try:
        for box in [w for w in at.text_input if w.key and w.key.startswith("check_")]:
            box.input("7").run()
    finally:
        use_language(None)
    assert verdicts(at) and all(v.startswith(("✓ 答对", "✗ 不对")) for v in verdicts(at))
    no_english_left(at)


# ---------------------------------------------------------------- the generation
@pytest.fixture
def listed(tiny_gpt2, tiny_llama, tiny_checkpoint, monkeypatch):
    """The tiny checkpoints listed, and a generation service of this test's own (stopped afterwards), as
    ``tests/test_generation_page.py`` gives each of its tests."""
    import components.generating as generating
    from mha import jobs
    from mha.sources.checkpoint.generation_service import GenerationService

    service = GenerationService(generating.generate)
    monkeypatch.setitem(jobs._SERVICES, generating.SERVICE_NAME, service)
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", f"gpt2={tiny_gpt2},llama={tiny_llama},tiny={tiny_checkpoint}")
    yield {"gpt2": tiny_gpt2, "llama": tiny_llama}
    service.shutdown()


def generated_page(**params: str) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    deadline = time.monotonic() + 60
    while not check_keys(at, "check_gen_") and time.monotonic() < deadline:
        time.sleep(0.3)
        at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize(("name", "kv"), [("gpt2", 4), ("llama", 2)])
def test_the_generation_panel_asks_from_its_generation(listed, name, kv):
    from transformers import AutoTokenizer

    at = generated_page(weights="pretrained", checkpoint=name, tokens=PROMPT, generate="3")
    assert check_keys(at, "check_gen_") == {
        "check_gen_cache_shape",
        "check_gen_top_key",
        "check_gen_cache_bytes",
        "check_gen_why_cache",
    }
    prompt = len(AutoTokenizer.from_pretrained(listed[name])(PROMPT)["input_ids"])
    at.text_input(key="check_gen_cache_shape").input(f"[1, {kv}, {prompt + 2}, 8]").run()  # step 2 read L + 2
    at.radio(key="check_gen_why_cache").set_value(1).run()
    assert verdicts(at) == ["✓ Right.", "✓ Right."]
    progress = [re.search(r"of (\d+) right · in all: \d+ of (\d+)", c.value) for c in at.caption]
    parts = [(int(m[1]), int(m[2])) for m in progress if m]
    assert {total for _, total in parts} == {sum(asked for asked, _ in parts)}  # every part counts every question
    at.text_input(key="check_gen_cache_bytes").input("12").run()
    (wrong,) = [v for v in verdicts(at) if v.startswith("✗")]
    assert f"·{prompt + 3} = " in wrong  # the text's tokens: the prompt and the three written


def test_a_page_that_does_not_generate_asks_no_generation_question(listed):
    at = AppTest.from_file(SCRIPT, default_timeout=60)
    at.query_params["weights"] = "pretrained"
    at.query_params["checkpoint"] = "tiny"
    at.query_params["tokens"] = PROMPT
    at.run()
    assert not at.exception and not check_keys(at, "check_gen_")
    assert check_keys(at, "check_1_")
    assert t("quiz.title") in "".join(m.value for m in at.markdown)
