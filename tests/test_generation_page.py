"""The generation panel through AppTest, and the background service that runs generations.

The page's generation of the tests' tiny GPT-2 and Llama is compared with the checkpoint's own greedy ``generate``
(transformers), and its shapes with the sizes of those models; the service is driven with a generator of the
test's own (a stand-in that waits on the Stop event) to show the queue, the cap, Stop and the kept results.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import torch
from streamlit.testing.v1 import AppTest

from components.i18n import t
from components.panels.generation import shown_token
from components.safe_text import md_escape
from mha import jobs
from mha.config import AttentionConfig
from mha.counting import KVCacheSize
from mha.sources.checkpoint.generation import GENERATE_MAX, Generation
from mha.sources.checkpoint.generation_service import GenerationService, key_of

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
PROMPT = "the cat sat on the mat"


def _use(monkeypatch, service: GenerationService) -> None:
    """The page's generations run in ``service`` for this test (the process's own afterwards)."""
    import components.generating as generating

    monkeypatch.setitem(jobs._SERVICES, generating.SERVICE_NAME, service)


@pytest.fixture(autouse=True)
def _fresh_service(monkeypatch):
    """Each test its own generation service: no result or running job of another test; stopped afterwards."""
    import components.generating as generating

    service = GenerationService(generating.generate)
    _use(monkeypatch, service)
    yield
    service.shutdown()


@pytest.fixture
def listed(tiny_gpt2, tiny_llama, tiny_checkpoint, tiny_vit, monkeypatch):
    listed = f"gpt2={tiny_gpt2},llama={tiny_llama},tiny={tiny_checkpoint},tinyvit={tiny_vit}"
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", listed)
    return {"gpt2": tiny_gpt2, "llama": tiny_llama}


def open_page(**params: str) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def finished_page(**params: str) -> AppTest:
    """The page once its generation has ended (the page shows the progress meanwhile; a rerun then shows it)."""
    at = open_page(**params)
    deadline = time.monotonic() + 60
    text = t("gen.text", lang=params.get("lang", "en"))
    while not any(m.value.startswith(text) for m in at.markdown) and time.monotonic() < deadline:
        time.sleep(0.3)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _their_tokens(name: str, folder: Path, new_tokens: int) -> list[str]:
    """The checkpoint's own greedy continuation of PROMPT (transformers' ``generate``), each id shown as the page
    shows tokens (the source's ``display_tokens``: a byte-level BPE decoded, other tokenizers' pieces as they are)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from mha.config import WeightSpec
    from mha.sources import make_source

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager").eval()
    inputs = tokenizer(PROMPT, return_tensors="pt")
    with torch.inference_mode():
        ids = model.generate(**inputs, max_new_tokens=new_tokens, do_sample=False)[0, inputs["input_ids"].size(1) :]
    checkpoint = make_source(WeightSpec("pretrained", checkpoint=name))._text_checkpoint()
    return list(checkpoint.display_tokens([int(i) for i in ids]))


@pytest.mark.parametrize(("name", "layers", "heads", "kv_heads", "d_k"), [("gpt2", 3, 4, 4, 8), ("llama", 2, 4, 2, 8)])
def test_the_page_writes_what_the_checkpoint_writes_and_shows_each_step_against_the_cache(
    listed, name, layers, heads, kv_heads, d_k
):
    at = finished_page(weights="pretrained", checkpoint=name, tokens=PROMPT, generate="4")
    assert not at.error, [e.value for e in at.error]
    (line,) = [m.value for m in at.markdown if m.value.startswith(t("gen.text"))]
    written = line.split(" · ")[-4:]
    expected = _their_tokens(name, listed[name], 4)
    assert [w.strip("*") for w in written] == [md_escape(shown_token(token)) for token in expected]
    assert at.query_params["generate"] == "4"
    slider = at.select_slider(key="gen_step")
    slider.set_value(2).run()
    shapes = [m.value for m in at.markdown if m.value.startswith("- `q ")]
    (text,) = shapes
    from transformers import AutoTokenizer

    prompt_length = len(AutoTokenizer.from_pretrained(listed[name])(PROMPT)["input_ids"])  # with its BOS, if any
    t_now = prompt_length + 2  # step 2 reads new token 1 at position L + 1: the cache holds L + 2
    assert f"`q [1, {heads}, 1, {d_k}]`" in text
    assert f"`K, V [1, {kv_heads}, {t_now}, {d_k}]`" in text and text.rstrip().endswith(f": {t_now - 1}")
    assert text.splitlines()[0].endswith(t("gen.after_rope")) == (name == "llama")  # GPT-2 has no rotation
    shared = t("gen.kv_own") if kv_heads == heads else t("gen.kv_repeated", kv=kv_heads, group=heads // kv_heads)
    assert text.splitlines()[1].endswith(f"(B, h_kv, d_k, t), {shared}")  # GPT-2 repeats nothing; Llama's 2 do
    assert any(s.value.startswith("✓ This step's weights equal") for s in at.success)
    cost = [m.value for m in at.markdown if m.value.startswith(f"| {t('gen.cost.t')}")]
    assert len(cost) == 1 and len(cost[0].splitlines()) == 2 + 3  # header, rule, three lengths
    lengths = [int(line.split("|")[1].strip().replace(",", "")) for line in cost[0].splitlines()[2:]]
    assert lengths == [prompt_length + 4, 4 * (prompt_length + 4), 16 * (prompt_length + 4)]
    numbers = 2 * layers * kv_heads * d_k  # K and V of every layer's K/V heads, per token
    (price,) = [m.value for m in at.markdown if m.value.startswith("Without a cache")]
    assert f"2 · {layers} · {kv_heads} · {d_k} = {numbers:,} numbers per token × 4 bytes (float32)" in price


def test_generate_goes_from_the_link_to_its_control_and_back(listed):
    at = finished_page(weights="pretrained", checkpoint="gpt2", tokens=PROMPT, generate="2")
    assert at.number_input(key="generate").value == 2
    at.number_input(key="generate").set_value(3).run()
    assert at.query_params["generate"] == "3"


def test_a_new_text_asks_before_it_generates_again(listed):
    at = finished_page(weights="pretrained", checkpoint="gpt2", tokens=PROMPT, generate="3")
    at.text_area(key="tokens").set_value("a dog ran").run()
    assert t("gen.new_text") in [i.value for i in at.info]
    assert any(b.label == t("gen.start", count=3) for b in at.button)


@pytest.mark.parametrize(
    ("params", "why"),
    [
        ({}, "random"),
        ({"weights": "trained", "task": "previous"}, "trained"),
        ({"weights": "pretrained", "checkpoint": "tiny"}, "encoder"),
        ({"weights": "pretrained", "checkpoint": "tinyvit"}, "encoder"),
    ],
)
def test_a_page_that_cannot_generate_says_what_can(listed, params, why, short_trainings):
    at = open_page(**params, generate="5")
    assert not at.exception
    assert t("gen.cannot", count=5, why=t(f"gen.cannot.{why}")) in [w.value for w in at.warning]


def test_a_huge_generate_in_the_link_is_clamped_with_a_message(listed):
    at = open_page(weights="pretrained", checkpoint="gpt2", tokens=PROMPT, generate="1000")
    assert not at.exception
    message = t("url.out_of_range", name="generate", value="1000", low=0, high=GENERATE_MAX, used=GENERATE_MAX)
    assert message in [w.value for w in at.warning]
    assert at.number_input(key="generate").value == GENERATE_MAX


def test_a_huge_generate_on_a_random_page_leaves_the_used_value_in_the_link():
    at = open_page(tokens=PROMPT, generate="99999")
    assert not at.exception
    message = t("url.out_of_range", name="generate", value="99999", low=0, high=GENERATE_MAX, used=GENERATE_MAX)
    assert message in [w.value for w in at.warning]
    assert t("gen.cannot", count=GENERATE_MAX, why=t("gen.cannot.random")) in [w.value for w in at.warning]
    assert at.query_params["generate"] == str(GENERATE_MAX)  # the link says what the page used


def test_the_panel_only_draws_its_controller_asks_and_times():
    """The panel imports neither the page's cached engine calls nor the caches, and keeps no session key of its own:
    components.generating starts, stops and times for it."""
    import ast

    import components.panels.generation as panel

    tree = ast.parse(Path(panel.__file__).read_text(encoding="utf-8"))
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert not {"components.runner", "components.cache"} & modules and not {"runner", "cache"} & names
    texts = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    assert not [text for text in texts if text.startswith("_gen")]


# ---------------------------------------------------------------- the service
def _made(config: AttentionConfig, steps: int, stopped: bool) -> Generation:
    return Generation("c", 0, ("a",), (0,), ("x",) * steps, (0,) * steps, ("step",) * steps, 3, stopped, False,  # type: ignore[arg-type]
                      KVCacheSize(1, 1, 1))  # fmt: skip


def test_the_service_runs_at_most_its_cap_keeps_results_and_stops_on_request():
    release, started = threading.Event(), threading.Event()
    running = []

    def generator(config, new_tokens, stop, progress):
        running.append(new_tokens)
        started.set()
        for done in range(new_tokens):
            if stop.is_set():
                return _made(config, done, stopped=True)
            release.wait(5)
            progress(done + 1, new_tokens)
        return _made(config, new_tokens, stopped=False)

    service = GenerationService(generator, max_running=1, max_waiting=1)
    config = AttentionConfig()
    first, second, third = key_of(config, 2), key_of(config, 3), key_of(config, 4)
    job = service.request(first, config)
    assert job is not None and service.request(first, config) is job  # the same generation is joined
    assert started.wait(5)
    other = service.request(second, config)
    assert other is not None and other.state == "queued" and running == [2]  # one slot: the second waits
    assert service.request(third, config) is None  # one may wait at most: the server is busy
    release.set()
    assert job.finished.wait(5) and other.finished.wait(5)
    assert job.state == "done" and service.finished(first) is job.result and job.done == 2
    assert other.state == "done" and service.finished(second) is not None

    release.clear()
    started.clear()
    stopped = service.request(third, config)
    assert stopped is not None and started.wait(5)
    service.stop(stopped)
    release.set()
    assert stopped.finished.wait(5)
    assert stopped.state == "stopped" and stopped.result is not None and stopped.result.stopped
    assert service.finished(third) is None  # a stopped generation's steps stay with its job, not shared


def test_a_queued_generation_stops_at_once():
    release, started = threading.Event(), threading.Event()

    def generator(config, new_tokens, stop, progress):
        started.set()
        release.wait(5)
        return _made(config, new_tokens, stopped=False)

    service = GenerationService(generator, max_running=1)
    config = AttentionConfig()
    running = service.request(key_of(config, 2), config)
    assert running is not None and started.wait(5)
    queued = service.request(key_of(config, 3), config)
    assert queued is not None and queued.state == "queued"
    service.stop(queued)
    assert queued.finished.is_set() and queued.state == "stopped"  # without waiting for the slot
    release.set()
    assert running.finished.wait(5) and running.state == "done"


def test_a_failed_generation_is_reported_not_raised():
    def generator(config, new_tokens, stop, progress):
        raise RuntimeError("no room")

    service = GenerationService(generator)
    job = service.request(key_of(AttentionConfig(), 2), AttentionConfig())
    assert job is not None and job.finished.wait(5)
    assert job.state == "failed" and "no room" in job.error and service.finished(job.key) is None
    assert service.failure(job.key) == "RuntimeError: no room"  # kept for the page after the job is gone


def test_the_page_says_a_generation_failed_and_offers_it_again(listed, monkeypatch):

    def failing(config, new_tokens, stop, progress):
        raise RuntimeError("out of memory")

    _use(monkeypatch, GenerationService(failing))
    at = open_page(weights="pretrained", checkpoint="gpt2", tokens=PROMPT, generate="3")
    deadline = time.monotonic() + 30
    while not at.error and time.monotonic() < deadline:
        time.sleep(0.2)
        at.run()
    assert t("gen.failed", message=md_escape("RuntimeError: out of memory", limit=200)) in [e.value for e in at.error]
    assert any(b.label == t("gen.start", count=3) for b in at.button)


def test_stop_on_the_page_ends_the_generation_and_draws_the_steps_made(listed, monkeypatch):
    """The real generation of the tiny GPT-2, held after its second token until the test clicks Stop: the page draws
    those two steps (the slider, the shapes, the check), and says so."""
    import components.generating as generating

    made, requested = 2, 6
    held = threading.Event()

    def held_after_two(config, new_tokens, stop, progress):
        def step(done, total):
            progress(done, total)
            if done == made:
                held.set()
                stop.wait(60)  # until the test has clicked Stop: the generation ends before its next step

        return generating.generate(config, new_tokens, stop, step)

    _use(monkeypatch, GenerationService(held_after_two))
    at = open_page(weights="pretrained", checkpoint="gpt2", tokens=PROMPT, generate=str(requested))
    assert held.wait(60)
    (stop,) = [b for b in at.button if b.key == "gen_stop"]
    stop.click().run()
    deadline = time.monotonic() + 30
    while not at.warning and time.monotonic() < deadline:
        time.sleep(0.2)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [w.value for w in at.warning] == [t("gen.stopped_after", count=made, requested=requested, last=made - 1)]
    (line,) = [m.value for m in at.markdown if m.value.startswith(t("gen.text"))]
    expected = _their_tokens("gpt2", listed["gpt2"], made)
    assert [w.strip("*") for w in line.split(" · ")[-made:]] == [md_escape(shown_token(x)) for x in expected]
    slider = at.select_slider(key="gen_step")
    assert len(slider.options) == made  # step 0 (the prompt) and step 1: the steps made, no more
    assert slider.options[0].startswith("step 0 · the prompt") and slider.options[1].startswith("step 1 · reads")
    from transformers import AutoTokenizer

    prompt_length = len(AutoTokenizer.from_pretrained(listed["gpt2"])(PROMPT)["input_ids"])
    for index in range(made):
        slider.set_value(index).run()
        (shapes,) = [m.value for m in at.markdown if m.value.startswith("- `q ")]
        rows = prompt_length if index == 0 else 1
        assert f"`q [1, 4, {rows}, 8]`" in shapes and f"`K, V [1, 4, {prompt_length + index}, 8]`" in shapes
        assert [s.value for s in at.success if s.value.startswith("✓ This step's weights equal")]


def test_the_chinese_generation_panel(listed):
    finished_page(weights="pretrained", checkpoint="llama", tokens=PROMPT, generate="2")  # AppTest cannot rerun a
    at = open_page(
        weights="pretrained", checkpoint="llama", tokens=PROMPT, generate="2", lang="zh"
    )  # zh page's widgets
    assert not at.error and t("gen.title", lang="zh") in [m.value.removeprefix("### ") for m in at.markdown]
    (text,) = [m.value for m in at.markdown if m.value.startswith("- `q ")]
    assert "行查询" in text and "一行s" not in text and "位置s" not in text  # no English plural left in Chinese


# ---------------------------------------------------------------- labels and the sinks note
@pytest.mark.parametrize(
    ("token", "shown"),
    [
        (" sat", "sat"),  # the space a byte-level BPE keeps before a word is left off
        (" ", "␣"),
        ("  ", "␣␣"),
        ("\x1b", "␛"),  # ESC: its own symbol, not a space's
        ("\n", "␊"),
        ("\t", "␉"),
        ("a\x1bb", "a␛b"),
        ("\x7f", "␡"),
        ("\u200b", "\\u200b"),  # a zero-width space: its escape, never nothing
        ("\u202e", "\\u202e"),  # a bidi override is shown, not obeyed
    ],
)
def test_a_token_is_labelled_visibly(token, shown):
    assert shown_token(token) == shown


def _step(index: int, token: str, length: int, first_share: float = 0.5):
    """A real decoding step of a one-head layer over ``length`` cached keys, even weights, ``first_share`` on token 0
    in each of two layers."""
    from mha.sources.checkpoint.generation import DecodeStep

    even = torch.full((1, length), 1.0 / length)  # (H, t)
    shares = torch.full((2,), first_share)  # (layers,)
    return DecodeStep(index, length - 1, token, 0, (1, 1, 1, 4), (1, 1, length, 4), even, even, 0.0, shares, 0.0)


def _made_of(lengths: tuple[int, ...], tokens: tuple[str, ...], first_share: float = 0.5) -> Generation:
    steps = tuple(
        _step(i, token, length, first_share) for i, (token, length) in enumerate(zip(tokens, lengths, strict=True))
    )
    prompt = ("a",) * lengths[0]
    return Generation("c", 0, prompt, (0,) * len(prompt), tokens, (0,) * len(tokens), steps, 4, False, False,
                      KVCacheSize(2, 1, 4))  # fmt: skip


def _text_and_sinks_app(generation) -> None:  # a script of its own: no annotation from this module
    from components.panels.generation import _sinks, _text

    _text(generation)
    _sinks(generation)


def test_the_text_line_and_the_step_names_label_a_token_alike():
    from components.panels.generation import _step_name

    generation = _made_of((3, 4, 5), (" ", "\x1b", " sat"))
    at = AppTest.from_function(_text_and_sinks_app, args=(generation,), default_timeout=30).run()
    (line,) = [m.value for m in at.markdown if m.value.startswith(t("gen.text"))]
    assert line.endswith(" · **␣** · **␛** · **sat**")
    tokens = (*generation.prompt_tokens, *generation.new_tokens)
    assert _step_name(generation, tokens, 0).endswith("→ wrote “␣”")
    assert _step_name(generation, tokens, 1) == t("gen.step_one", index=1, reads="␣", position=3, token="␛")


@pytest.mark.parametrize(
    ("lengths", "short"),
    [
        ((2, 4), True),  # a row of 4 keys, yet 3 × mean(1/t) = 3 × 0.375 > 1: no share can pass it
        ((3, 3), True),  # 3 × 1/3 = 1: a share of all the weight would only reach it
        ((3, 4), False),  # 3 × mean(1/3, 1/4) = 0.875: a share could pass it; none does here
    ],
)
def test_the_short_text_note_states_the_condition_the_page_applies(lengths, short):
    generation = _made_of(lengths, ("x",) * len(lengths), first_share=0.25)
    at = AppTest.from_function(_text_and_sinks_app, args=(generation,), default_timeout=30).run()
    uniform = sum(1 / length for length in lengths) / len(lengths)
    expected = (
        t("gen.no_sinks_short", times="3", uniform=f"{uniform:.3f}", limit=f"{3 * uniform:.3f}")
        if short
        else t("gen.no_sinks", times="3")
    )
    assert [c.value for c in at.caption if c.value.startswith("No layer")] == [expected]
    if short:
        assert f"{uniform:.3f}" in expected and "t ≤" not in expected  # the mean of 1/t, not a count of keys
