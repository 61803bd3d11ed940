"""Trained weights on the page (AppTest): training on a link or a click, progress and Stop, shared trainings,
the steps and the timeline afterwards, bad input, both languages.

Each test gets a fresh training service whose trainer runs real, short trainings (conftest's
``short_trainings``: what the heads learn is ``test_training.py``'s business), optionally held
at a gate so that the order of events is the test's.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import conftest
import numpy as np
import pytest
import torch
from conftest import SHORT_TRAINING_STEPS as STEPS
from conftest import ShortTrainer, headings, heatmaps, trained_spec
from streamlit.testing.v1 import AppTest
from test_languages import HAN, leftover_english, shown_texts, user_tokens

from components.i18n import t
from mha import config as config_module
from mha.config import LIMITS, WeightSpec
from mha.device import DeviceChoice
from mha.training import service as service_module

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
LINK = {"weights": "trained", "task": "previous_and_first", "d_model": "16", "num_heads": "2", "tokens": "3 1 4 1 5"}
SPEC = trained_spec(16, 2, 0, task="previous_and_first")


def open_page(params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def texts(at: AppTest) -> str:
    kinds = ("subheader", "markdown", "caption", "error", "warning", "info", "success")
    return "\n".join(str(e.value) for kind in kinds for e in at.get(kind))


def finish(spec: WeightSpec = SPEC) -> None:
    service = service_module.training_service()
    job = service.job(spec)
    assert job is None or job.finished.wait(120)
    assert service.finished(spec) is not None


def wait_started(trainer: ShortTrainer, count: int) -> None:
    """Wait until ``count`` trainings have begun (a training begins in its own thread)."""
    deadline = time.monotonic() + 30
    while len(trainer.started) < count:
        assert time.monotonic() < deadline, trainer.started
        time.sleep(0.01)


@pytest.fixture
def trainer(short_trainings: ShortTrainer) -> ShortTrainer:
    return short_trainings


def test_a_link_asking_for_trained_weights_trains_then_shows_the_steps_and_timeline(trainer):
    at = open_page(LINK)
    assert not at.exception and not at.error
    assert headings(at, 3)[0] == t("training.title", task=t("task.previous_and_first"))
    assert [b.key for b in at.button if b.key == "train_stop"] == ["train_stop"]  # training: a Stop button
    assert t("step1.title") not in texts(at)  # the steps wait for the model
    finish()
    at.run()
    assert not at.exception and not at.error
    page = texts(at)
    assert re.search(r"\*\*accuracy \d{1,3}\.\d %\*\*", page)  # the contract: accuracy 99.6 %
    assert f"Trained in {STEPS} steps" in page
    for title in ("step1.title", "step2.title", "step3.title", "step4.title", "training.timeline"):
        assert t(title) in page, title
    assert t("step2.labels_title") in page
    assert t("step2.unscored_rows", rows="0") in page  # row 0 has no target: it carries no loss
    assert "0\\:3 · 1\\:1 · 2\\:4 · 3\\:1 · 4\\:5" in page  # the learner's own sequence (md-escaped)
    assert not [b for b in at.button if b.key in ("train_stop", "train_start")]
    assert trainer.started == [SPEC]


def test_where_auto_names_an_accelerator_the_page_and_the_tests_spec_are_one_and_it_trains_there(trainer, monkeypatch):
    """With ``auto`` resolving to cuda for the specs only (``mha.config``'s resolution; the page's run and the training
    stay on the CPU), the page asks the training service for the spec ``trained_spec`` builds, and the trainer is
    handed its device: what a GPU host's suite does with the suite's device."""
    cuda, resolve = DeviceChoice(torch.device("cuda")), config_module.resolve_device
    monkeypatch.setattr(
        config_module, "resolve_device", lambda choice="auto": cuda if choice == "auto" else resolve(choice)
    )
    devices: list[str] = []
    train = conftest.train

    def on_the_cpu(*args, device: str = "cpu", **kwargs):
        devices.append(device)  # the device the trainer was handed; the training itself runs here, on the CPU
        return train(*args, **kwargs)

    monkeypatch.setattr(conftest, "train", on_the_cpu)
    spec = trained_spec(16, 2, 0, task="previous_and_first")
    assert spec.device == "cuda" and spec != SPEC
    at = open_page(LINK)
    finish(spec)
    at.run()
    assert not at.exception and not at.error
    assert trainer.started == [spec] and devices == ["cuda"]
    assert t("step1.title") in texts(at)  # the page found the model trained for the tests' spec


def test_step_2_fades_the_rows_without_a_loss_and_titles_the_heads_with_their_labels(trainer):
    open_page(LINK)
    finish()
    at = open_page(LINK)
    assert not at.exception and not at.error
    figures = heatmaps(at)
    step2 = next(f for f in figures if f.axes and f.col_labels is not None)  # one head's three stages
    (grid,) = [f for f in figures if f.square and not f.axes]
    no_loss = np.array([True, False, False, False, False])  # previous_and_first: position 0 has no target
    for figure in (step2, grid):
        np.testing.assert_array_equal(figure.faded_rows, no_loss)
        assert figure.faded_word == t("chart.unscored")
    labels = next(m.value for m in at.markdown if m.value.startswith(t("step2.labels_title")))
    for head, panel in enumerate(grid.panels):  # "0: first token 0.98", as the line of labels says it
        number, label = panel.title.split(": ", 1)
        assert number == str(head) and f"**{head}** {label}" in labels
    assert all(f.faded_rows is None for f in figures if f not in (step2, grid))  # Q, K, V and steps 3, 4: no


def test_switching_to_trained_asks_before_training_then_trains_on_its_own(trainer):
    at = open_page({"d_model": "32", "num_heads": "4", "tokens": "3 1 4 1 5"})
    at.selectbox(key="weights").set_value("trained").run()
    assert not at.exception
    assert (at.number_input(key="d_model").value, at.number_input(key="num_heads").value) == (64, 2)
    assert t("training.ask", time=t("training.ask.sequence")) in texts(at)
    assert trainer.started == []  # nothing trains until asked
    at.button(key="train_start").click().run()
    spec = trained_spec(64, 2, 0, task="previous_and_first")
    wait_started(trainer, 1)
    assert trainer.started == [spec]
    finish(spec)
    at.selectbox(key="task").set_value("previous").run()  # asked once: the next model trains without a click
    wait_started(trainer, 2)
    assert trainer.started[-1] == trained_spec(64, 2, 0, task="previous")


def test_two_sessions_opening_one_link_share_one_training(trainer):
    gate = trainer.hold(SPEC)
    first, second = open_page(LINK), open_page(LINK)
    service = service_module.training_service()
    job = service.job(SPEC)
    assert job is not None and len(job.watchers) == 2
    gate.set()
    finish()
    for at in (first, second):
        at.run()
        assert not at.exception and "**accuracy" in texts(at)
    assert trainer.started == [SPEC] and service.started == 1


def test_stop_stops_the_training_and_train_starts_it_again(trainer):
    trainer.hold(SPEC)
    at = open_page(LINK)
    wait_started(trainer, 1)
    job = service_module.training_service().job(SPEC)
    at.button(key="train_stop").click().run()
    assert not at.exception
    assert job.finished.wait(10) and job.state == "stopped"
    assert t("training.stopped", step=job.step) in texts(at)
    assert service_module.training_service().finished(SPEC) is None  # nothing kept
    at.run()  # stopped: no new training on its own
    assert len(trainer.started) == 1
    trainer.gates[SPEC].set()
    at.button(key="train_start").click().run()
    wait_started(trainer, 2)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"weights": "magic"}, "weights"),
        ({"task": "<b>sorting</b>"}, "task"),
    ],
)
def test_unknown_weights_or_task_in_a_link_are_named_and_replaced(trainer, params, field):
    at = open_page({**LINK, **params})
    assert not at.exception
    (warning,) = at.warning
    assert f"`{field}`" in warning.value or field in warning.value
    assert "<b>" not in warning.value


@pytest.mark.parametrize(
    ("params", "key"),
    [
        ({"d_model": str(LIMITS.train_d_model_max * 2)}, "error.d_model.too_big_to_train"),
        ({"num_heads": str(LIMITS.train_num_heads_max * 2), "d_model": "64"}, "error.d_model.too_big_to_train"),
        ({"task": "unscramble", "tokens": "alone"}, "error.tokens.unscramble_length"),
    ],
)
def test_requests_training_cannot_take_get_a_message_and_train_nothing(trainer, params, key):
    at = open_page({**LINK, **params})
    assert not at.exception
    (error,) = at.error
    assert error.value.split("(")[0] == t(key, **_params_of(key, params)).split("(")[0]
    assert trainer.started == []


def _params_of(key: str, params: dict[str, str]) -> dict[str, object]:
    if key == "error.tokens.unscramble_length":
        return {"count": 1, "high": LIMITS.unscramble_words_max}
    return {
        "d_model": int(params.get("d_model", 16)),
        "num_heads": int(params.get("num_heads", 2)),
        "d_model_max": LIMITS.train_d_model_max,
        "num_heads_max": LIMITS.train_num_heads_max,
    }


def test_a_sequence_the_task_cannot_read_shows_the_sample_with_a_note(trainer):
    at = open_page({**LINK, "tokens": "The animal didn't cross"})
    finish()
    at.run()
    assert not at.exception
    note = t("notes.trained_sample", low=2, high=12, example="3 1 4 1 5 9 2 6")
    assert note in [i.value for i in at.info]


def test_induction_shows_both_layers(trainer):
    spec = trained_spec(16, 2, 0, task="induction")
    at = open_page({**LINK, "task": "induction", "mask_type": "causal", "tokens": "a b c x a b c"})
    finish(spec)
    at.run()
    assert not at.exception and not at.error  # a warning says 30 steps do not reach the target: true
    assert at.number_input(key="layer").value == 0
    page = texts(at)
    assert t("training.layers") in page
    assert t("training.layer_title", layer=0) in page and t("training.layer_title", layer=1) in page
    at.number_input(key="layer").set_value(1).run()
    assert not at.exception and at.query_params["layer"] == "1"
    page = texts(at)
    assert t("step2.unscored_rows", rows="0–3") in page  # layer 1: only the repeated a b c carry a loss
    assert t("training.layer_shown", layer=1, high=1) in page


def test_unscramble_says_so_when_no_head_points(trainer):
    params = {**LINK, "task": "unscramble", "tokens": "the cat sat on the mat"}
    at = open_page(params)
    finish(trained_spec(16, 2, 0, task="unscramble", text="the cat sat on the mat"))
    at.run()
    assert not at.exception and not at.error
    labels = [line for line in texts(at).splitlines() if line.startswith(t("step2.labels_title"))]
    pointing = t("label.shuffled position") in labels[0]
    assert (t("training.no_pointer") in texts(at)) is not pointing


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_trained_page_reads_in_its_own_language(trainer, lang):
    service_module.training_service().result(SPEC)
    at = open_page({**LINK, "lang": lang, "tokens": "The animal didn't cross"})
    assert not at.exception
    shown = [(key, text) for key, text in shown_texts(at) if key != "lang" and not key.startswith("example_")]
    assert t("training.title", lang=lang, task=t("task.previous_and_first", lang=lang)) in headings(at, 3)
    tokens = user_tokens(at)
    if lang == "zh":
        leftovers = [(key, text[:80], words) for key, text in shown if (words := leftover_english(text, tokens))]
        assert not leftovers, leftovers
    else:
        chinese = [(key, text[:80]) for key, text in shown if HAN.search(text)]
        assert not chinese, chinese


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(("sentence", "evaluation"), [("the cat sat on", "held_out"), ("cat sat", "every_order")])
def test_unscramble_says_what_its_accuracy_was_measured_on(trainer, lang, sentence, evaluation):
    """4 words: 6 of the 24 orders set aside and measured on; 2 words: both orders, both trained on."""
    spec = trained_spec(16, 2, 0, task="unscramble", text=sentence)
    open_page({**LINK, "task": "unscramble", "tokens": sentence, "lang": lang})
    finish(spec)
    history = service_module.training_service().finished(spec).history
    at = open_page({**LINK, "task": "unscramble", "tokens": sentence, "lang": lang})
    assert not at.exception
    words = len(sentence.split())
    sequences = 6 if evaluation == "held_out" else 2
    assert (history.evaluation, history.sequences, history.evaluated) == (evaluation, sequences, sequences * words)
    expected = t(
        f"training.done.{evaluation}",
        lang=lang,
        steps=STEPS,
        seconds=f"{history.seconds:.1f}",
        accuracy=f"{100 * history.accuracy:.1f}",
        sequences=sequences,
        predictions=sequences * words,
        orders=24 if words == 4 else 2,
        words=words,
    )
    assert expected in [e.value for e in at.success]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_trained_link_without_sizes_gets_the_trained_sizes_with_a_note(trainer, lang):
    """``?weights=trained&task=previous_and_first`` opens as switching the widget would: 64 and 2, and says so."""
    at = open_page({"weights": "trained", "task": "previous_and_first", "lang": lang})
    assert not at.exception and not at.error
    assert (at.session_state["d_model"], at.session_state["num_heads"]) == (64, 2)
    note = t("url.trained_sizes", lang=lang, d_model=64, num_heads=2)
    assert [i.value for i in at.info].count(note) == 1
    wait_started(trainer, 1)  # a link trains, in a thread of its own
    assert trainer.started == [trained_spec(64, 2, 0, task="previous_and_first")]
    assert at.query_params["d_model"] == "64" and at.query_params["num_heads"] == "2"  # the link says so now


def test_the_trained_sizes_note_is_for_the_link_as_it_came(trainer):
    at = open_page({"weights": "trained", "task": "previous_and_first"})
    finish(trained_spec(64, 2, 0, task="previous_and_first"))
    at.run()  # the session's own link carries the sizes now: no note again
    assert not at.exception and not at.error
    assert t("url.trained_sizes", d_model=64, num_heads=2) not in [i.value for i in at.info]


@pytest.mark.parametrize(
    ("sizes", "used"), [({"num_heads": "4"}, (64, 4)), ({"d_model": "32"}, (32, 2)), ({"d_model": "512"}, (512, 2))]
)
def test_a_trained_link_keeps_the_size_it_gives(trainer, sizes, used):
    at = open_page({"weights": "trained", "task": "previous", **sizes})
    assert not at.exception
    assert (at.session_state["d_model"], at.session_state["num_heads"]) == used
    assert t("url.trained_sizes", d_model=used[0], num_heads=used[1]) in [i.value for i in at.info]
    too_big = used[0] > LIMITS.train_d_model_max  # a size the link gives is kept: over the cap, the cap's error
    cap_error = t("error.d_model.too_big_to_train", **_params_of("", {"d_model": used[0], "num_heads": used[1]}))
    assert [e.value for e in at.error] == ([cap_error] if too_big else [])


def test_a_trained_link_with_both_sizes_keeps_them_without_a_note(trainer):
    at = open_page({"weights": "trained", "task": "previous", "d_model": "512", "num_heads": "8"})
    assert (at.session_state["d_model"], at.session_state["num_heads"]) == (512, 8)
    assert not [i.value for i in at.info if "d_model = " in i.value]
    (error,) = at.error  # the link asked for more than training takes here: the existing message
    assert error.value == t("error.d_model.too_big_to_train", **_params_of("", {"d_model": 512, "num_heads": 8}))


# ---------------------------------------------------------------- what the Train box and the progress bar say
PERFORMANCE = Path(__file__).resolve().parents[1] / "docs" / "PERFORMANCE.md"


def _seconds_measured() -> dict[str, list[float]]:
    """The training seconds docs/PERFORMANCE.md measured at d_model 64 and 2 heads on a quiet machine, per kind of
    task: the text tasks' ranges, the digits' at either patch, the reviews' per seed."""
    text = PERFORMANCE.read_text(encoding="utf-8")
    names = r"previous|previous_and_first|previous_and_last_digit|induction \(2 layers\)|unscramble \(11 words\)"
    ranges = {
        "sequence": re.findall(rf"^\| (?:{names}) \| [\d.]+ s \| ([\d.]+)–([\d.]+) s", text, re.M),
        "digits": re.findall(r"^\| 64 / 2 / [24][^|]* \| [\d.]+ s \| ([\d.]+)–([\d.]+) s", text, re.M),
        "reviews": re.findall(r"^\| [0-2] \| [\d.]+ \| [\d.]+ \| ([\d.]+) \| 300 \|", text, re.M),
    }
    return {
        kind: [float(x) for row in rows for x in ((row,) if isinstance(row, str) else row)]
        for kind, rows in ranges.items()
    }


@pytest.mark.parametrize(
    ("task", "kind"),
    [("previous", "sequence"), ("induction", "sequence"), ("digits", "digits"), ("reviews", "reviews")],
)
def test_the_train_box_quotes_the_time_measured_for_its_task(task, kind):
    from components.training import spec_task

    spec = trained_spec(64, 2, 0, task=task, patch=2 if task == "digits" else None)
    assert spec_task(spec).page_words.ask == f"training.ask.{kind}"
    measured = _seconds_measured()[kind]
    assert measured, kind  # the table is still there
    low, high = re.search(r"about (\d+)(?: to (\d+))? seconds", t(f"training.ask.{kind}")).groups(default="")
    low, high = float(low), float(high or low)
    assert low - 0.5 <= min(measured) and max(measured) <= high + 0.5, (low, high, measured)  # "about", to 1 s
    assert "few seconds" not in t("training.ask", time=t(f"training.ask.{kind}"))


@pytest.mark.parametrize(("task", "steps"), [("reviews", 300), ("digits", 350), ("previous", None)])
def test_the_progress_bar_counts_the_tasks_own_schedule(task, steps):
    from components.panels.training_box import progress_bar
    from mha.training.service import Progress

    spec = trained_spec(64, 2, 0, task=task, patch=2 if task == "digits" else None)
    cap = LIMITS.train_steps_max
    for step in (150, steps or cap):
        fraction, line = progress_bar(Progress("running", 0, step, cap, (0.5,), (0.75,)), spec)
        assert fraction == pytest.approx(step / (steps or cap))
        assert line.startswith(
            f"Training: step {step} of {steps} ·" if steps else f"Training: step {step} of at most {cap} ·"
        )
    assert fraction == 1.0  # the last step of the schedule fills the bar


def test_the_batch_note_on_a_trained_page_gives_the_real_reason(trainer):
    open_page(LINK)
    finish()
    at = open_page(LINK)  # "3 1 4 1 5": five tokens, yet no batch
    assert not at.exception
    notes = [i.value for i in at.info]
    assert t("padding.unavailable_weights", why=t("padding.unavailable.trained")) in notes
    assert t("padding.unavailable") not in notes
