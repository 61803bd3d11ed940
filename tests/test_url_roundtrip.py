"""The link round trip: every control read from the URL, written back when it changes, and restored elsewhere.

For every control (the contract's widget keys, ``lang``, and teacher mode's ``teacher``, ``hide``,
``step``) a link sets it before the first run, changing it updates ``at.query_params``, and the
link one session ends with opens the same page in a fresh session: same widget values, same
text (token line, shapes, counts), same chart data, same link.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import HeadPicker, headings, heatmaps, trained_spec
from streamlit.testing.v1 import AppTest
from tolerances import assert_same_charts, assert_same_texts

from components.i18n import t
from components.safe_text import md_escape
from components.url_params import URL_KEYS

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
BASE = {"d_model": "48", "num_heads": "4", "tokens": "the cat sat on the mat"}  # d_k = 12, L = 6


def open_page(params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=30)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


_KINDS = ("number_input", "selectbox", "text_area", "toggle", "radio", "multiselect", "button_group")


def widget(at: AppTest, key: str):
    """The widget with this key, whatever its kind (``head``: the head picker)."""
    if key == "head":
        return HeadPicker(at)
    (found,) = [w for kind in _KINDS for w in at.get(kind) if w.key == key]
    return found


def page_texts(at: AppTest) -> list[str]:
    """Every markdown-like text of the page, in order."""
    kinds = ("title", "header", "subheader", "markdown", "caption", "code", "error", "warning", "info", "success")
    return [str(e.value) for kind in kinds for e in at.get(kind)]


# (key, value in the link, the widget's value it gives, a new widget value, how the link then reads it)
CONTEXT = {
    "window": {"mask_type": "window"},  # the window width can be changed only with the window mask
    "block_pad": {"mask_type": "causal"},  # [PAD] keys are blocked on top of causal or window
    "checkpoint": {"weights": "pretrained"},  # a checkpoint is chosen only with pretrained weights
    "task": {"weights": "trained"},  # a task only with trained weights
    "layer": {"weights": "pretrained", "checkpoint": "tiny"},  # a layer, only where there are several
    "patch": {"weights": "trained", "task": "digits"},  # an image's controls, only where the run reads an image
    "image": {"weights": "trained", "task": "digits"},
}
CONTROLS = [
    ("d_model", "96", 96, 144, "144"),
    ("num_heads", "6", 6, 3, "3"),
    ("mask_type", "window", "window", "causal", "causal"),
    ("window", "1", 1, 3, "3"),
    ("block_pad", "true", True, False, "false"),
    ("tokens", "a b c", "a b c", "小明喜欢打球", "小明喜欢打球"),
    ("seed", "7", 7, 11, "11"),
    ("positional", "none", "none", "rope", "rope"),  # an old link's "false": tests/test_today_page.py
    ("num_kv_heads", "2", 2, 1, "1"),
    ("device", "cpu", "cpu", "auto", "auto"),
    ("dtype", "float64", "float64", "float32", "float32"),
    ("tokenizer", "words", "words", "characters", "characters"),
    ("weights", "random", "random", "pretrained", "pretrained"),
    ("checkpoint", "tiny2", "tiny2", "tiny", "tiny"),
    ("task", "induction", "induction", "previous", "previous"),
    ("layer", "1", 1, 0, "0"),
    ("patch", "4", 4, 2, "2"),
    ("image", "digit-7", "digit-7", "photo-temple", "photo-temple"),
    ("head", "2", 2, 3, "3"),
    ("color_scale", "stretch", "stretch", "fixed", "fixed"),
    ("hide", "seed,device", ["seed", "device"], ["head"], "head"),
    ("teacher", "1", True, False, None),  # None: leaving presentation mode takes the name out of the link
]


# Every control of the link is covered (``hub_id``, a control only where the server allows one: tests below).
# ``generate``, a control only on a causal checkpoint's page: tests/test_generation_page.py.
AWAITING_SOURCES: set[str] = {"hub_id", "generate"}


@pytest.fixture(autouse=True)
def _tiny_on_the_list(listed_tiny):
    """The server lists the tiny checkpoint (``tiny`` and ``tiny2``, two layers) for every test here."""


def test_every_url_control_is_covered():
    assert {key for key, *_ in CONTROLS} >= set(URL_KEYS) - AWAITING_SOURCES


@pytest.mark.parametrize(("key", "raw", "value", "new", "written"), CONTROLS, ids=[c[0] for c in CONTROLS])
@pytest.mark.usefixtures("short_trainings")  # a link asking for trained weights trains: briefly, here
def test_a_link_sets_the_control_and_changing_it_updates_the_link(key, raw, value, new, written):
    at = open_page({**BASE, **CONTEXT.get(key, {}), key: raw})
    assert not at.exception and not at.warning, [w.value for w in at.warning]
    assert widget(at, key).value == value
    assert at.query_params[key] == raw
    widget(at, key).set_value(new).run()
    assert not at.exception
    assert widget(at, key).value == new
    assert at.query_params.get(key) == written
    assert at.query_params["d_model"] == ("144" if key == "d_model" else BASE["d_model"])  # the rest is kept


def test_hub_id_from_the_link_to_its_field_and_back_where_the_server_allows_one(monkeypatch):
    """``hub_id`` is a control only where ``ATTN_PLAYGROUND_ANY_CHECKPOINT_MB`` is set; the hub is offline here, so the
    page says it cannot load it and goes on with random weights, and the field and the link keep the id."""
    monkeypatch.setenv("ATTN_PLAYGROUND_ANY_CHECKPOINT_MB", "50")
    at = open_page({**BASE, "weights": "pretrained", "hub_id": "owner/model"})
    assert not at.exception
    field = [w for w in at.text_input if w.key == "hub_id"]
    assert [w.value for w in field] == ["owner/model"]
    assert at.query_params["hub_id"] == "owner/model"
    field[0].set_value("other/model").run()
    assert at.query_params["hub_id"] == "other/model"
    field = [w for w in at.text_input if w.key == "hub_id"]
    field[0].set_value("").run()
    assert "hub_id" not in at.query_params  # no checkpoint of one's own: the name leaves the link


@pytest.mark.parametrize(
    ("setting", "raw", "code"), [(None, "owner/model", "hub_id_off"), ("50", "../x", "hub_id_form")]
)
def test_a_hub_id_the_server_cannot_take_is_left_out_of_the_link_with_a_warning(monkeypatch, setting, raw, code):
    if setting is None:
        monkeypatch.delenv("ATTN_PLAYGROUND_ANY_CHECKPOINT_MB", raising=False)
    else:
        monkeypatch.setenv("ATTN_PLAYGROUND_ANY_CHECKPOINT_MB", setting)
    at = open_page({**BASE, "weights": "pretrained", "hub_id": raw})
    assert not at.exception
    assert t(f"url.{code}", name="hub_id", value=md_escape(raw, limit=40)) in [w.value for w in at.warning]
    assert "hub_id" not in at.query_params
    assert not [w for w in at.text_input if w.key == "hub_id"] or setting is not None


def test_lang_from_the_link_and_the_selector_to_the_link():
    at = open_page({**BASE, "lang": "zh"})
    assert widget(at, "lang").value == "zh"
    assert headings(at, 1) == [t("app.title", lang="zh")]
    english = open_page(BASE)
    assert english.query_params["lang"] == "en"
    english.selectbox(key="lang").set_value("zh").run()
    assert english.query_params["lang"] == "zh"
    assert headings(english, 1) == [t("app.title", lang="zh")]


def test_step_from_the_link_and_next_to_the_link():
    at = open_page({**BASE, "teacher": "1", "step": "3"})
    assert [h for h in headings(at, 3) if h.startswith(("1 ·", "2 ·", "3 ·", "4 ·"))] == [t("step3.title")]
    at.button(key="teacher_next_top").click().run()
    assert at.query_params["step"] == "4"
    assert t("step4.title") in headings(at, 3)


def _same_page(first: AppTest, second: AppTest) -> None:
    assert not second.exception
    assert dict(second.query_params) == dict(first.query_params)
    assert_same_texts(page_texts(second), page_texts(first))  # title, token line, shapes, counts, notes
    charts = heatmaps(first)
    assert charts
    assert_same_charts(heatmaps(second), charts)  # masked cells are -inf in both
    drawn = [key for key in URL_KEYS if any(w.key == key for kind in _KINDS for w in first.get(kind))]
    assert drawn
    for key in drawn:
        assert widget(second, key).value == widget(first, key).value, key


def test_a_link_written_by_one_session_opens_the_same_page_in_another():
    first = open_page(BASE)
    first.number_input(key="d_model").set_value(96).run()
    first.number_input(key="num_heads").set_value(6).run()
    first.selectbox(key="mask_type").set_value("window").run()
    first.number_input(key="window").set_value(1).run()
    first.text_area(key="tokens").set_value("Thinking Machines think").run()
    first.number_input(key="seed").set_value(3).run()
    first.radio(key="positional").set_value("none").run()
    first.selectbox(key="device").set_value("cpu").run()
    HeadPicker(first).set_value(5).run()
    first.multiselect(key="hide").set_value(["seed"]).run()
    first.selectbox(key="lang").set_value("zh").run()  # last: AppTest cannot send a Chinese page's widgets back
    assert not first.exception and not first.error
    link = dict(first.query_params)
    assert link | {"tokens": "Thinking Machines think"} == link
    assert (link["d_model"], link["num_heads"], link["head"], link["lang"], link["hide"]) == (
        "96",
        "6",
        "5",
        "zh",
        "seed",
    )
    assert "[1, 6, 3, 16]" in "\n".join(page_texts(first))  # (B, h, L, d_k) for 3 tokens, 6 heads of 16
    second = open_page(link)
    _same_page(first, second)
    assert widget(second, "head").value == 5


def test_a_presentation_link_opens_the_same_slide_in_another_session():
    first = open_page({**BASE, "head": "1"})
    first.toggle(key="teacher").set_value(True).run()
    first.multiselect(key="hide").set_value(["seed", "device", "head"]).run()
    first.button(key="teacher_next_top").click().run()
    first.number_input(key="num_heads").set_value(2).run()
    assert not first.exception and not first.error
    link = dict(first.query_params)
    assert (link["teacher"], link["step"], link["hide"], link["head"]) == ("1", "2", "seed,device,head", "1")
    second = open_page(link)
    _same_page(first, second)
    assert [h for h in headings(second, 3) if h.startswith("2 ·")] == [t("step2.title")]
    assert not [w for w in second.number_input if w.key == "seed"]


def test_a_trained_link_opens_the_same_trained_page_in_another_session(short_trainings):
    from mha.training.service import training_service

    first = open_page({**BASE, "tokens": "a b c x a b c"})
    first.selectbox(key="weights").set_value("trained").run()  # 64 and 2: sizes that train in seconds
    first.button(key="train_start").click().run()
    first.selectbox(key="task").set_value("induction").run()  # trains on its own now, with the causal mask
    job = training_service().job(trained_spec(64, 2, 0, task="induction"))
    assert job is None or job.finished.wait(120)
    first.run()
    first.number_input(key="layer").set_value(1).run()
    assert not first.exception and not first.error
    link = dict(first.query_params)
    assert (link["weights"], link["task"], link["layer"], link["mask_type"]) == ("trained", "induction", "1", "causal")
    second = open_page(link)
    _same_page(first, second)


def test_an_image_link_opens_the_same_image_page_in_another_session(short_trainings):
    from mha.training.service import training_service

    first = open_page({**BASE, "weights": "trained", "task": "digits", "d_model": "16", "num_heads": "2"})
    first.radio(key="patch").set_value(4).run()  # another model: it trains on its own (the link asked for one)
    job = training_service().job(trained_spec(16, 2, 0, task="digits", patch=4))
    assert job is None or job.finished.wait(120)
    first.run()
    first.selectbox(key="image").set_value("digit-5").run()
    first.number_input(key="layer").set_value(1).run()
    assert not first.exception and not first.error
    link = dict(first.query_params)
    assert (link["task"], link["patch"], link["image"], link["layer"]) == ("digits", "4", "digit-5", "1")
    second = open_page(link)
    _same_page(first, second)
    assert "a handwritten 5" in "\n".join(page_texts(second))
