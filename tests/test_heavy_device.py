"""The heavy work on the run's device, tested without a GPU: where the device is threaded, what an out of memory does.

This machine has no accelerator, so the tests check three things a GPU host relies on:

- the device reaches the work: a trained spec names its accelerator, the training service trains on it, a checkpoint
  keeps one copy per device (spies and ``torch.device`` objects, which need no GPU);
- no helper makes a CPU tensor: the trained models' forwards run on the ``meta`` device under :class:`OneDevice`, which
  records every op whose tensors lie on two devices (an index, a mask, positions left on the CPU) and every draw from
  a generator of another device (``FakeTensorMode`` with "cuda" cannot run the engine's ops on a CPU-only build of
  PyTorch, and ``meta`` alone lets an index or a generator from the CPU through);
- an accelerator out of memory (``torch.cuda.OutOfMemoryError``, constructible on a CPU build; mps's
  ``RuntimeError``) during a training, a checkpoint's forward, the page's run or a generation: the work runs again on
  the CPU and the page says what ran out of memory where, and keeps drawing.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest
import streamlit as st
import torch
from streamlit.testing.v1 import AppTest
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

import components.generating as generating
import components.runner as runner
import mha.config as config_module
from components.i18n import t
from components.safe_text import md_escape
from mha import jobs
from mha.config import PRETRAINED, ROPE_BASE, TRAINED, AttentionConfig, WeightSpec, weight_spec_of
from mha.device import DeviceChoice
from mha.memory import CPU, OutOfMemory, is_out_of_memory, megabytes, on_device_or_cpu
from mha.sources import make_source
from mha.sources.checkpoint.generation_service import GenerationService
from mha.sources.checkpoint.source import PretrainedSource
from mha.training import service as service_module
from mha.training.loop import train
from mha.training.service import TrainingService, train_spec
from mha.training.tasks import make_task

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
ANIMAL = "The animal didn't cross the street because it was too tired"
CUDA, META = torch.device("cuda"), torch.device("meta")  # device objects: neither needs a GPU to exist


class OneDevice(TorchDispatchMode):
    """Records each op that mixes devices: tensors on two devices (a 0-d CPU scalar aside, as PyTorch allows; a move,
    ``.to``/``copy_``, is the one op meant to), or a draw from a generator on another device than its result's."""

    MOVES = frozenset({torch.ops.aten.to, torch.ops.aten._to_copy, torch.ops.aten.copy_})  # every overload

    def __init__(self) -> None:
        super().__init__()
        self.mixed: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        flat = tree_flatten((args, kwargs, out))[0]
        devices = {a.device for a in flat if isinstance(a, torch.Tensor) and not (a.dim() == 0 and a.device == CPU)}
        generator = kwargs.get("generator")
        if generator is not None:
            devices.add(generator.device)
        if len(devices) > 1 and func.overloadpacket not in self.MOVES:
            self.mixed.append(f"{func}: {sorted(map(str, devices))}")
        return out


def out_of_memory() -> torch.cuda.OutOfMemoryError:
    return torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")


# ---------------------------------------------------------------- recognising and retrying
def test_an_accelerator_out_of_memory_is_recognised_and_nothing_else():
    assert is_out_of_memory(out_of_memory())
    assert is_out_of_memory(RuntimeError("MPS backend out of memory (MPS allocated: 9.00 GB)"))
    assert not is_out_of_memory(RuntimeError("Expected all tensors to be on the same device"))
    assert not is_out_of_memory(ValueError("out of memory"))  # not a RuntimeError: not the allocator's


def test_work_that_runs_out_of_memory_on_an_accelerator_runs_again_on_the_cpu_and_says_so():
    tried, forgotten = [], []

    def work(device: torch.device) -> str:
        tried.append(device.type)
        if device.type != "cpu":
            raise out_of_memory()
        return "done"

    placed = on_device_or_cpu(work, CUDA, lambda: {"checkpoint": "gpt2"}, forgotten.append)
    assert tried == ["cuda", "cpu"] and forgotten == [CUDA]
    assert (placed.value, placed.device, placed.out_of_memory) == (
        "done",
        "cpu",
        OutOfMemory("cuda", {"checkpoint": "gpt2"}),
    )
    fine = on_device_or_cpu(lambda device: device.type, CUDA, dict)
    assert (fine.value, fine.device, fine.out_of_memory) == ("cuda", "cuda", None)


def test_the_cpus_own_out_of_memory_and_other_errors_are_raised():
    def short(device: torch.device) -> None:
        raise out_of_memory()

    with pytest.raises(torch.cuda.OutOfMemoryError):
        on_device_or_cpu(short, CPU, dict)  # nowhere left to go
    with pytest.raises(ValueError, match="bad"):
        on_device_or_cpu(lambda device: (_ for _ in ()).throw(ValueError("bad")), CUDA, dict)


# ---------------------------------------------------------------- trainings
@pytest.mark.parametrize(("resolved", "named"), [("cuda", "cuda"), ("mps", "mps"), ("cpu", None)])
def test_a_trained_spec_names_the_accelerator_it_trains_on(monkeypatch, resolved, named):
    monkeypatch.setattr(config_module, "resolve_device", lambda choice: DeviceChoice(torch.device(resolved)))
    choices = AttentionConfig(weights=TRAINED, task="previous", d_model=16, num_heads=2).__dict__
    assert weight_spec_of(choices) == WeightSpec(TRAINED, 16, 2, 0, task="previous", device=named)
    digits = AttentionConfig(weights=TRAINED, task="digits", d_model=16, num_heads=2).__dict__
    assert weight_spec_of(digits).device == named
    assert weight_spec_of(AttentionConfig(d_model=16, num_heads=2).__dict__).device is None  # random: anywhere


def _train_on_the_cpu_only(monkeypatch) -> list[torch.device]:
    """The service's ``train`` runs out of memory on any accelerator and trains 2 steps on the CPU; returns the
    devices it is asked for, in order."""
    devices = []

    def spy(*args, device, **kwargs):
        devices.append(device)
        if device.type != "cpu":
            raise out_of_memory()
        return train(*args, device=device, **{**kwargs, "max_steps": 2})

    monkeypatch.setattr(service_module, "train", spy)
    return devices


def test_the_training_service_trains_on_the_specs_device_and_on_the_cpu_after_an_out_of_memory(monkeypatch):
    devices = _train_on_the_cpu_only(monkeypatch)
    spec = WeightSpec(TRAINED, 16, 2, 0, task="previous", device="cuda")
    model, history = train_spec(spec, lambda *_: None, lambda: False)
    assert devices == [CUDA, CPU]
    assert history.device == "cpu" and next(model.parameters()).device == CPU
    assert history.out_of_memory == OutOfMemory("cuda", {"d_model": 16, "heads": 2, "layers": 1})
    devices.clear()
    _, history = train_spec(WeightSpec(TRAINED, 16, 2, 0, task="previous"), lambda *_: None, lambda: False)
    assert devices == [CPU] and history.out_of_memory is None  # no device named: the CPU, at once


def test_a_model_trained_on_the_cpu_after_an_out_of_memory_is_the_cpus_and_answers_both_specs(monkeypatch):
    """The fallen-back model names the CPU's spec (as its history names the CPU), and is kept under the spec asked
    for (its page finds it, no second out of memory) and the CPU's (a CPU page reuses it, no second training, and
    says nothing of an out of memory)."""
    devices = _train_on_the_cpu_only(monkeypatch)
    service = TrainingService()
    try:
        asked = WeightSpec(TRAINED, 16, 2, 0, task="previous", device="cuda")
        cpu = dataclasses.replace(asked, device=None)
        found = service.result(asked, timeout=120)
        assert found.spec == cpu and found.history.device == "cpu" and found.history.out_of_memory is not None
        assert service.finished(asked) is found
        on_the_cpu = service.result(cpu, timeout=120)
        assert on_the_cpu.model is found.model and on_the_cpu.spec == cpu and on_the_cpu.history.out_of_memory is None
        assert service.started == 1 and devices == [CUDA, CPU]
    finally:
        service.shutdown()


def test_a_training_begun_again_on_the_cpu_shows_its_own_curves():
    job = service_module.TrainingJob(WeightSpec(TRAINED, 16, 2, 0, task="previous", device="cuda"), 10)
    for step, loss in ((1, 3.0), (2, 2.5), (1, 3.1)):  # two steps on the device, then its first on the CPU
        job.record(step, loss, 0.1)
    assert (job.step, job.losses, job.accuracies) == (1, [3.1], [0.1])


def test_naming_the_cpu_trains_bit_for_bit_as_before():
    model, history = train("previous", 16, 2, 0, max_steps=4)
    again, named = train("previous", 16, 2, 0, max_steps=4, device="cpu")
    assert history.losses == named.losses and named.device == "cpu"
    for (name, mine), (_, theirs) in zip(model.state_dict().items(), again.state_dict().items(), strict=True):
        assert torch.equal(mine, theirs), name
    assert all(w.device == CPU for snapshot in named.snapshots for w in snapshot.weights)


@pytest.mark.parametrize(
    ("task", "kv_heads", "rope"),
    [("previous", None, None), ("previous", 1, ROPE_BASE), ("digits", None, None), ("digits", 1, ROPE_BASE)],
)
def test_a_trained_models_forward_makes_no_tensor_off_its_device(task, kv_heads, rope):
    """A CPU tensor made by a helper (positions, cos/sin, pixels' statistics) would meet the model's on ``meta``."""
    spec = make_task(task)
    model = spec.build_model(16, 2, torch.Generator().manual_seed(0), kv_heads, rope).to(META)
    ids = spec.sample(4, torch.Generator().manual_seed(1))  # drawn on the CPU, moved after
    inputs, mask = spec.inputs(ids).to(META), spec.training_mask(spec.length, META)
    with OneDevice() as watch:
        logits = model.logits(inputs, mask)  # what a training step reads
        full, weights = model(inputs, mask)  # what the recorder and the page read
    assert watch.mixed == []
    assert logits.device == full.device == META and all(w.device == META for w in weights)


def test_the_reviews_dropout_mask_is_drawn_on_the_cpu_and_moved_to_the_models_device():
    spec = make_task("reviews")
    model = spec.build_model(16, 2, torch.Generator().manual_seed(0)).to(META).train()
    model.dropout, model.dropout_generator = 0.1, torch.Generator().manual_seed(3)  # a CPU generator, as training's
    ids = spec.inputs(spec.sample(2, torch.Generator().manual_seed(1))).to(META)  # (2, L)
    with OneDevice() as watch:
        assert model.embed(ids).device == META
    assert watch.mixed == []


# ---------------------------------------------------------------- a checkpoint's copies
@pytest.fixture
def listed(tiny_gpt2, tiny_checkpoint, monkeypatch):
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", f"gpt2={tiny_gpt2},tiny={tiny_checkpoint}")
    st.cache_resource.clear()  # no run, map or source of another test (nor of this one afterwards)
    yield
    st.cache_resource.clear()


def test_a_checkpoint_keeps_one_copy_per_device_sharing_its_modules_until_it_is_forgotten(listed):
    checkpoint = make_source(WeightSpec(PRETRAINED, checkpoint="gpt2"))._checkpoint()
    assert checkpoint.models_on(CPU) == (checkpoint.model, checkpoint.language_model)  # the loaded ones: no copy
    model, language_model = checkpoint.models_on(META)
    assert model is checkpoint.family.base_model(language_model)  # one copy: the base model is the copy's own
    assert {p.device for p in language_model.parameters()} == {META}
    assert {p.device for p in checkpoint.model.parameters()} == {CPU}  # the loaded model stays where it was
    assert checkpoint.models_on(META)[1] is language_model  # made once
    checkpoint.forget_device(META)
    assert checkpoint.models_on(META)[1] is not language_model


def test_a_checkpoints_own_forwards_run_on_the_device_asked_for_with_its_inputs_moved_there(listed):
    """GPT-2's forward runs on ``meta`` (BERT's asks a value of its mask: not there); its inputs, made on the CPU by
    the tokenizer, are moved, not mixed in."""
    checkpoint = make_source(WeightSpec(PRETRAINED, checkpoint="gpt2"))._checkpoint()
    encoded = checkpoint.encode("the cat sat")
    with OneDevice() as watch:
        attentions = checkpoint.forward(encoded, META, output_attentions=True).attentions
        x = checkpoint.layer_input(encoded, 1, META)  # (1, L, D): the page's layer input
        _, block = checkpoint.forward_with_block_output(encoded, 1, META)  # the check's
    assert watch.mixed == []
    assert {a.device for a in attentions} == {x.device} == {block.device} == {META}


# ---------------------------------------------------------------- the page, after an out of memory
def open_page(params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def checkpoint_size(name: str) -> dict[str, object]:
    """The checkpoint's size in a message, as the page escapes its values."""
    parameters = make_source(WeightSpec(PRETRAINED, checkpoint=name))._checkpoint().parameters
    size = {"checkpoint": name, "parameters": f"{parameters:,}", "megabytes": megabytes(parameters)}
    return {key: md_escape(value) for key, value in size.items()}


def texts(at: AppTest, kind: str) -> list[str]:
    return [str(element.value) for element in at.get(kind)]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_head_finder_says_its_device_ran_out_of_memory_and_draws_from_the_cpu(listed, monkeypatch, lang):
    real_maps, cached = PretrainedSource.attention_maps, runner.cached_attention_maps

    def maps(self, source_input, device=CPU):
        if device.type != "cpu":
            raise out_of_memory()
        return real_maps(self, source_input, device)

    monkeypatch.setattr(PretrainedSource, "attention_maps", maps)
    monkeypatch.setattr(runner, "cached_attention_maps", lambda spec, text, device: cached(spec, text, "meta"))
    at = open_page({"weights": "pretrained", "checkpoint": "tiny", "tokens": ANIMAL, "lang": lang})
    assert not at.exception, [e.value for e in at.exception]
    message = t("pretrained.out_of_memory", lang=lang, device="meta", **checkpoint_size("tiny"))
    assert message in texts(at, "warning")
    assert t("pretrained.ran_on", lang=lang, device="cpu") in texts(at, "caption")
    assert any(text.startswith(t("finder.top", lang=lang)) for text in texts(at, "markdown"))  # still drawn


def test_the_page_runs_on_the_cpu_when_its_device_runs_out_of_memory_and_says_why(listed, monkeypatch):
    real_run = runner.run_attention

    def run_attention(config, source=None, image=None):
        if config.device != "cpu":
            raise out_of_memory()
        return real_run(config, source, image)

    monkeypatch.setattr(runner, "resolve_device", lambda choice: DeviceChoice(META))
    monkeypatch.setattr(runner, "run_attention", run_attention)
    at = open_page({"weights": "pretrained", "checkpoint": "tiny", "tokens": ANIMAL})
    assert not at.exception, [e.value for e in at.exception]
    assert t("notes.out_of_memory_checkpoint", device="meta", **checkpoint_size("tiny")) in texts(at, "info")
    assert t("controls.device_used", device="cpu", dtype="float32") in texts(at, "caption")
    assert not any("not available" in text for text in texts(at, "warning"))  # a device that ran out, not a missing one
    assert any(text.startswith(t("finder.top")) for text in texts(at, "markdown"))  # the page goes on


def test_a_generation_that_runs_out_of_memory_generates_on_the_cpu_and_says_so(listed, monkeypatch):
    real_generate = PretrainedSource.generate

    def generate(self, config, new_tokens, stop=None, progress=None, device=CPU):
        if device.type != "cpu":
            raise out_of_memory()
        return real_generate(self, config, new_tokens, stop, progress, device)

    monkeypatch.setitem(jobs._SERVICES, generating.SERVICE_NAME, GenerationService(generating.generate))
    monkeypatch.setattr(generating, "resolve_device", lambda choice: DeviceChoice(META))
    monkeypatch.setattr(PretrainedSource, "generate", generate)
    at = open_page({"weights": "pretrained", "checkpoint": "gpt2", "tokens": "the cat sat", "generate": "2"})
    deadline = time.monotonic() + 60
    while not any(m.startswith(t("gen.text")) for m in texts(at, "markdown")) and time.monotonic() < deadline:
        time.sleep(0.3)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    size = {**checkpoint_size("gpt2"), "tokens": 2}
    assert t("gen.out_of_memory", device="meta", **size) in texts(at, "warning")
    assert t("gen.ran_on", device="cpu") in texts(at, "caption")


def test_a_training_that_runs_out_of_memory_trains_on_the_cpu_and_the_page_says_where(monkeypatch):
    real_train = service_module.train

    def short(*args, device, **kwargs):
        if device.type != "cpu":
            raise out_of_memory()
        return real_train(*args, device=device, **{**kwargs, "max_steps": 3})

    monkeypatch.setattr(config_module, "resolve_device", lambda choice: DeviceChoice(META))  # specs name "meta"
    monkeypatch.setattr(service_module, "train", short)
    service = TrainingService()
    monkeypatch.setitem(jobs._SERVICES, service_module.SERVICE_NAME, service)
    st.cache_resource.clear()
    link = {"weights": "trained", "task": "previous", "d_model": "16", "num_heads": "2", "tokens": "3 1 4 1 5"}
    try:
        at = open_page(link)
        spec = WeightSpec(TRAINED, 16, 2, 0, task="previous", device="meta")
        assert service.result(spec, timeout=120).history.device == "cpu"
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        size = {"d_model": 16, "heads": 2, "layers": 1}
        assert t("training.out_of_memory", device="meta", **size) in texts(at, "warning")
        seconds = f"{service.finished(spec).history.seconds:.1f}"
        assert t("training.ran_on", device="cpu", seconds=seconds) in texts(at, "caption")
    finally:
        service.shutdown()
        st.cache_resource.clear()
