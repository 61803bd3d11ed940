"""One device per run, checked on a machine without an accelerator.

The rule: every tensor a page, a lab, an export or a reproduction computes lives on the run's device (taken from an
input tensor's ``.device`` or a ``device`` argument), or is moved to the CPU on purpose where a chart or a number is
made (``.cpu()``, or an explicit ``device="cpu"`` where a CPU tensor is meant); float64 work is done on the CPU
(Apple's mps has no float64). Three checks, none needs a GPU:

- **The factory audit.** :class:`FactoryAudit` (a ``TorchFunctionMode``) records every tensor factory
  (``torch.arange``, ``zeros``, ``tensor``, ``randn``, ...) called without a device from a file of ``mha/`` or
  ``components/``: such a tensor lands on the CPU whatever the run's device, and meets the layer's cuda (or mps)
  tensors a few lines later. The engine, the page's computations (run, padded batch, checks, RoPE lesson, exports,
  reproduction), an image's analysis, three main pages and every lab page (through AppTest) run under it.
- **A static scan** of the same folders for ``torch.<factory>(...)`` calls without ``device=``, for the lines no run
  here reaches (a lab's timing child process, the ONNX export).
- **A fake accelerator.** Under ``FakeTensorMode`` an operation that mixes a tensor of another device with a CPU one
  raises, as on a GPU: the engine's paths (forward, the trace, decoding steps, masks, RoPE, the SDPA reference) and
  the lessons' float64 work run with the layer there, their outputs must stay there, and :class:`Float64OnAccelerator`
  refuses float64 made there.
"""

from __future__ import annotations

import ast
import sys
import tokenize
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

import pytest
import streamlit as st
import torch
from conftest import headings, trained_spec
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.local_script_runner import LocalScriptRunner
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from torch.overrides import TorchFunctionMode

from components.i18n import t
from mha.batching import page_batch
from mha.config import AttentionConfig
from mha.experiments.attribution import ablation_deltas, key_measures
from mha.export import trace_csv_zip, trace_npz, trace_pt
from mha.head_labels import label_heads
from mha.head_patterns import head_patterns, induction_scores
from mha.kv_cache import KVCache
from mha.masks import build_mask, causal_mask, to_additive_mask
from mha.module import MultiHeadAttention
from mha.pipeline import run_attention
from mha.reference import batch_order_check, compare_with_torch
from mha.reference_today import compare_with_sdpa, sdpa_attention
from mha.reproduce import reproduce_script
from mha.rope import apply_rotary_pos_emb, rotary_cos_sin
from mha.rope_lesson import OFFSET_PAIRS, _head_vectors, angles_per_pair, offset_scores, turned_pairs
from mha.score_scale import score_spread
from mha.sources import make_source
from mha.sources.seeded import build_model
from mha.sources.trained import TrainedSource
from mha.training.loop import train
from mha.training.service import TrainedModel, training_service
from mha.vision.analysis import analyse_image, mean_attention_distance, patch_head_labels

ROOT = Path(__file__).resolve().parents[1]
WATCHED = (ROOT / "mha", ROOT / "components")
TORCH = Path(torch.__file__).resolve().parent
THIS = Path(__file__).resolve()

#: A tutorial's own code, quoted as the tutorial writes it (lab 4 runs it on the lab's CPU inputs): not the project's.
QUOTED = frozenset({"mha/experiments/tutorial_code.py"})

#: The functions that make a tensor from nothing but sizes or data: without ``device=`` they make it on the CPU.
FACTORIES = frozenset(
    {
        torch.arange,
        torch.as_tensor,
        torch.empty,
        torch.empty_strided,
        torch.eye,
        torch.full,
        torch.linspace,
        torch.logspace,
        torch.ones,
        torch.rand,
        torch.randint,
        torch.randn,
        torch.randperm,
        torch.scalar_tensor,
        torch.tensor,
        torch.tril_indices,
        torch.triu_indices,
        torch.zeros,
    }
)


def _project_callers() -> str | None:
    """Where a factory was called from: ``file:line`` of the first frame outside torch (and outside this file) when
    it lies in ``mha/`` or ``components/``, then the project's frames that called it (a helper's callers, up to
    three); ``None`` when that first frame is not the project's (torch's own calls, a test's, a library's) or is a
    tutorial's code quoted as it is written (:data:`QUOTED`)."""
    frame = sys._getframe(2)
    if frame is not None and _in(frame, TORCH):
        return None  # torch's own call (a module's parameters made by ``nn.Linear``, then moved by the source)
    while frame is not None and Path(frame.f_code.co_filename) == THIS:
        frame = frame.f_back
    if frame is None or not any(_in(frame, folder) for folder in WATCHED) or _where(frame).split(":")[0] in QUOTED:
        return None
    chain = [_where(frame)]
    frame = frame.f_back
    while frame is not None and len(chain) < 4 and any(_in(frame, folder) for folder in WATCHED):
        chain.append(_where(frame))
        frame = frame.f_back
    return " <- ".join(chain)


def _in(frame: FrameType, folder: Path) -> bool:
    return Path(frame.f_code.co_filename).is_relative_to(folder)


def _where(frame: FrameType) -> str:
    return f"{Path(frame.f_code.co_filename).relative_to(ROOT)}:{frame.f_lineno}"


class FactoryAudit(TorchFunctionMode):
    """Records each call of a :data:`FACTORIES` function without a ``device`` (absent or ``None``) made from the
    project's files.

    ``offenders`` holds one ``"file:line torch.name"`` per call (repeats kept: a count shows a loop). The call itself
    runs unchanged.
    """

    def __init__(self) -> None:
        super().__init__()
        self.offenders: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in FACTORIES and kwargs.get("device") is None:  # device=None is the CPU too
            where = _project_callers()
            if where is not None:
                self.offenders.append(f"{where} torch.{func.__name__}")
        return func(*args, **kwargs)

    def check(self) -> None:
        """Fail naming each offender once (``file:line``), in the order first met."""
        if self.offenders:
            pytest.fail(
                "tensor factories without device= in the project's files:\n" + "\n".join(dict.fromkeys(self.offenders))
            )


@pytest.fixture
def audit() -> Iterator[FactoryAudit]:
    """Run the test's body under a :class:`FactoryAudit` and require it to have found nothing."""
    with FactoryAudit() as found:
        yield found
    found.check()


# ---------------------------------------------------------------- the audit itself
def test_the_audit_finds_a_factory_without_device_in_the_projects_files_and_nothing_else():
    """A factory without ``device=`` called from a project file is recorded with its line; one with ``device=``,
    and one called from this test file, are not."""
    source = "import torch\ndef make():\n    return torch.arange(3), torch.zeros(2, device='cpu')\n"
    fake_file = ROOT / "mha" / "_audit_probe.py"  # never written: compile() only names the frames' file
    namespace: dict = {}
    exec(compile(source, str(fake_file), "exec"), namespace)
    with FactoryAudit() as found:
        namespace["make"]()
        torch.ones(2)  # this test's own call: not the project's
    assert found.offenders == ["mha/_audit_probe.py:3 torch.arange"]


# ---------------------------------------------------------------- the engine, audited
LAYERS = {
    "mha": {"num_kv_heads": None, "rope_base": None},
    "gqa_rope": {"num_kv_heads": 2, "rope_base": 10000.0},
    "mqa_rope": {"num_kv_heads": 1, "rope_base": 500.0},
}
TOKENS = ("the", "cat", "[PAD]", "sat", "on", "[PAD]")


@pytest.mark.parametrize("layer", LAYERS)
def test_the_engines_paths_make_no_tensor_off_their_inputs_device(layer, audit):
    model = build_model(16, 4, seed=1, **LAYERS[layer])
    x = torch.randn(1, len(TOKENS), 16, generator=torch.Generator().manual_seed(2))  # (1, L, D)
    with torch.inference_mode():
        for mask_type in ("none", "causal", "window", "padding"):
            for block_pad in (False, True):
                mask = build_mask(mask_type, TOKENS, window=2, device=x.device, block_pad=block_pad)
                model(x, x, x, mask)
                model.forward_traced(x, x, x, mask)
                compare_with_sdpa(model, x, x, x, mask, *model(x, x, x, mask))
                to_additive_mask(mask if mask is not None else causal_mask(len(TOKENS), device=x.device))
        cache = KVCache.for_layer(model, max_length=len(TOKENS))
        model.forward_step(x[:, :3], cache, 0)
        for start in range(3, len(TOKENS)):
            model.forward_step(x[:, start : start + 1], cache, start)
        if model.is_plain:
            mask = causal_mask(len(TOKENS), device=x.device)
            compare_with_torch(model, x, x, x, mask, *model(x, x, x, mask))
            batch_order_check(model, x)


# ---------------------------------------------------------------- the page's computations, audited
PAGES = {
    "default": {},
    "gqa_rope_causal": {"num_kv_heads": 2, "positional": "rope", "mask_type": "causal"},
    "mqa_rope_window_pad": {"num_kv_heads": 1, "positional": "rope", "mask_type": "window", "block_pad": True},
    "no_positions_padding": {"positional": "none", "mask_type": "padding"},
    "float64_causal": {"dtype": "float64", "mask_type": "causal"},
}


@pytest.mark.parametrize("page", PAGES)
def test_a_pages_run_lesson_batch_checks_and_exports_make_no_stray_cpu_tensor(page, audit):
    config = AttentionConfig(d_model=32, num_heads=4, tokens="the cat [PAD] sat on the mat", **PAGES[page])
    source = make_source(config.weight_spec)
    run = run_attention(config, source)
    page_batch(config, source, run.device.device)
    trace = run.trace
    compare_with_sdpa(run.model, run.x, run.x, run.x, run.mask, trace.output, trace.weights)
    if run.model.is_plain:
        compare_with_torch(run.model, run.x, run.x, run.x, run.mask, trace.output, trace.weights)
        batch_order_check(run.model, run.x)
    x = run.x[0]  # (L, D)
    offset_scores(run.model, x[0], x[2], head=1)
    angles_per_pair(run.model.d_k, run.model.rope_base or 10000.0)
    project = trace.project
    if project.q_rotated is not None:
        turned_pairs(project.q_heads[0, 0].cpu().double(), project.q_rotated[0, 0].cpu().double(), 1)
    trace_npz(run), trace_pt(run), trace_csv_zip(run), reproduce_script(run)


def test_an_image_runs_analysis_and_head_labels_make_no_stray_cpu_tensor(audit):
    grid, heads = (3, 3), 2
    length = 1 + grid[0] * grid[1]  # [CLS] + the patches
    scores = torch.randn(1, heads, length, length, generator=torch.Generator().manual_seed(4))  # (1, H, L, L)
    weights = torch.softmax(scores, dim=-1)
    analyse_image((weights, weights), (None, None), weights[0], grid, 4, 1)
    patch_head_labels(weights[0], None, None, grid, 1)
    label_heads(weights[0], causal_mask(length, device=weights.device))


# ---------------------------------------------------------------- trainings, checkpoints, generation, audited
TRAININGS = {
    "previous_and_last_digit": {},
    "induction": {},
    "unscramble": {"text": "the cat sat on the mat"},
    "digits": {"patch": 2},
    "reviews": {},
}


@pytest.mark.parametrize("task", TRAININGS)
def test_a_short_training_and_its_trained_page_make_no_stray_cpu_tensor(task, audit):
    """A few steps of each kind of training (a sequence task, digits, reviews), then the trained source's run."""
    text = TRAININGS[task].get("text")
    model, history = train(task, 16, 2, 0, max_steps=3, **TRAININGS[task])
    tokens = {"tokens": text} if text else {}
    config = AttentionConfig(d_model=16, num_heads=2, weights="trained", task=task, **tokens)
    source = TrainedSource(TrainedModel(config.weight_spec, model, history))
    run_attention(config, source)


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_a_checkpoints_run_head_finder_pattern_search_and_generation_make_no_stray_cpu_tensor(
    name, tiny_gpt2, tiny_llama, monkeypatch
):
    """A tiny GPT-2 and Llama (``tests/tiny_checkpoint.py``): the page's run and live check, the head finder's maps,
    the pattern search's induction maps and scores, and four generated tokens."""
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", f"gpt2={tiny_gpt2},llama={tiny_llama}")
    config = AttentionConfig(weights="pretrained", checkpoint=name, tokens="the cat sat on the mat", mask_type="causal")
    with FactoryAudit() as found:
        source = make_source(config.weight_spec)
        run = run_attention(config, source)
        source.compare(config, run.trace.weights, run.trace.output, run.mask, device=run.device.device)
        _, maps = source.attention_maps(config.tokens, run.device.device)
        sequence, induction = source.induction_maps(run.device.device)
        head_patterns(maps, sequence, induction_scores(induction, sequence))
        source.generate(config, 4, device=run.device.device)
    found.check()


# ---------------------------------------------------------------- whole pages, audited through AppTest
def _audited_script_thread(audit: FactoryAudit) -> Callable:
    """``LocalScriptRunner._run_script_thread`` with ``audit`` entered in the script's own thread (a torch
    function mode belongs to the thread that enters it)."""
    original = LocalScriptRunner._run_script_thread

    def run(self) -> None:
        with audit:
            original(self)

    return run


def _audited_page(path: Path, params: dict[str, str]) -> AppTest:
    """Run the page at ``path`` once with ``params`` in its link, its script thread under a fresh audit, with
    Streamlit's caches emptied first (a run cached by an earlier test would hide its computations)."""
    found = FactoryAudit()
    st.cache_data.clear()
    st.cache_resource.clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(LocalScriptRunner, "_run_script_thread", _audited_script_thread(found))
        at = AppTest.from_file(str(path), default_timeout=120)
        at.query_params.update(params)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    found.check()
    return at


@pytest.mark.parametrize(
    "params",
    [
        {"d_model": "64", "num_heads": "4", "tokens": "the cat [PAD] sat on the mat", "mask_type": "padding"},
        {"num_kv_heads": "2", "positional": "rope", "mask_type": "causal"},
        {"num_kv_heads": "1", "positional": "rope", "mask_type": "window", "block_pad": "true", "dtype": "float64"},
    ],
    ids=["small_padding", "gqa_rope_causal", "mqa_rope_window_float64"],
)
def test_the_main_page_makes_no_stray_cpu_tensor(params):
    _audited_page(ROOT / "playground.py", params)


TRAINED_PAGES = {
    "sequence": {"task": "previous_and_first", "tokens": "3 1 4 1 5"},
    "digits": {"task": "digits", "patch": "2"},
    "reviews": {"task": "reviews"},
}


@pytest.mark.parametrize("page", TRAINED_PAGES)
def test_a_trained_page_makes_no_stray_cpu_tensor(page, short_trainings):
    """A trained sequence task's, the digits' and the reviews' page (steps, timeline, patches), their short training
    done first (in the service's thread, which the audit does not see: the trainings' own test above covers it)."""
    params = {"weights": "trained", "d_model": "16", "num_heads": "2", **TRAINED_PAGES[page]}
    task, patch = params["task"], int(params.get("patch", 0)) or None
    training_service().result(trained_spec(16, 2, 0, task=task, patch=patch), timeout=120)
    at = _audited_page(ROOT / "playground.py", params)
    assert t("step1.title") in headings(at, 3)  # the trained model's steps were drawn, not a training's progress


def test_a_checkpoint_page_makes_no_stray_cpu_tensor(listed_gpt2):
    """A GPT-2 page (its run, live check, head finder and pattern search as the page calls them)."""
    _audited_page(ROOT / "playground.py", {"weights": "pretrained", "checkpoint": "gpt2", "mask_type": "causal"})


@pytest.mark.parametrize("lab", sorted(path.name for path in (ROOT / "pages").glob("*.py")))
def test_every_lab_makes_no_stray_cpu_tensor(lab):
    _audited_page(ROOT / "pages" / lab, {})


# ---------------------------------------------------------------- a fake accelerator
#: The stand-in accelerator: ``FakeTensorMode`` checks every operation's devices as a GPU would (a CPU tensor other
#: than a 0-d scalar meeting an accelerator's raises), and the meta device is one that a CPU-only build of PyTorch
#: can also copy to (``.to``, ``.contiguous`` of a fake ``cuda`` tensor ask for the CUDA device guard, which such a
#: build lacks).
ACCELERATOR = "meta"


def _fake_layer(num_kv_heads: int | None = None, rope_base: float | None = None) -> MultiHeadAttention:
    """The layer made under the fake mode on the stand-in accelerator (a module's fake parameters cannot be swapped
    for others by ``.to``)."""
    with torch.device(ACCELERATOR):
        return MultiHeadAttention(16, 4, num_kv_heads=num_kv_heads, rope_base=rope_base).eval()


def _on_accelerator(*tensors: torch.Tensor) -> bool:
    return {t.device.type for t in tensors} == {ACCELERATOR}


def _without_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let a fake tensor (which holds no data) answer ``bool()`` with True, ``float()`` with 0.0 and ``int()`` with
    0; a real tensor answers as before. The engine's ``if ...any()`` before a softmax then takes its path for rows
    with nothing to attend (the same numbers where there is none), and a lesson's numbers come out as zeros."""

    def answer(original: Callable, fake_value: object) -> Callable:
        return lambda self: fake_value if isinstance(self, FakeTensor) else original(self)

    monkeypatch.setattr(torch.Tensor, "__bool__", answer(torch.Tensor.__bool__, True))
    monkeypatch.setattr(torch.Tensor, "__float__", answer(torch.Tensor.__float__, 0.0))
    monkeypatch.setattr(torch.Tensor, "__int__", answer(torch.Tensor.__int__, 0))


class Float64OnAccelerator(TorchFunctionMode):
    """Records each torch call that gives a float64 (or complex128) tensor on the stand-in accelerator, where a
    project file made the call: Apple's mps has no float64, and there such a call raises."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        outputs = result if isinstance(result, tuple | list) else (result,)
        wide = (torch.float64, torch.complex128)
        if any(isinstance(t, torch.Tensor) and t.device.type == ACCELERATOR and t.dtype in wide for t in outputs):
            where = _project_callers()
            if where is not None:
                self.calls.append(f"{where} {getattr(func, '__name__', func)}")
        return result


@pytest.mark.parametrize("layer", LAYERS)
def test_on_a_fake_accelerator_the_engine_keeps_every_tensor_on_it(layer, monkeypatch):
    """Every forward, trace, decoding step, mask and reference runs with a float32 layer on the accelerator, every
    output stays there, and no float64 tensor is made there (Apple's mps has none)."""
    _without_data(monkeypatch)
    pad_keep = build_mask("padding", TOKENS, device="cpu")  # (1, 1, 1, L): made from data, below copied over
    with FakeTensorMode() as fake, Float64OnAccelerator() as wide:
        model = _fake_layer(**LAYERS[layer])
        x = torch.randn(1, len(TOKENS), 16, device=ACCELERATOR)  # (1, L, D)
        masks = {
            "none": None,
            "causal": build_mask("causal", TOKENS, device=x.device),
            "window": build_mask("window", TOKENS, window=2, device=x.device),
            # a tensor made from Python data on the fake meta device is refused by the fake mode: copied instead
            "padding": fake.from_tensor(pad_keep).to(ACCELERATOR),
        }
        masks["window_pad"] = masks["window"] & masks["padding"]
        assert _on_accelerator(*(mask for mask in masks.values() if mask is not None))
        with torch.inference_mode():
            for mask_type, mask in masks.items():
                output, weights = model(x, x, x, mask)
                trace = model.forward_traced(x, x, x, mask)
                reference = sdpa_attention(model, x, x, x, mask)
                assert _on_accelerator(output, weights, trace.output, trace.weights, *reference), mask_type
            cache = KVCache.for_layer(model, max_length=len(TOKENS))
            step = model.forward_step(x[:, :3], cache, 0)
            step_next = model.forward_step(x[:, 3:4], cache, 3)
            assert _on_accelerator(step.output, step.weights, step_next.output, step_next.weights)
            if model.rope_base is not None:
                positions = torch.arange(len(TOKENS), device=ACCELERATOR)
                cos, sin = rotary_cos_sin(positions, model.d_k, model.rope_base)
                q, k = apply_rotary_pos_emb(trace.project.q_heads, trace.project.k_heads, cos, sin)
                assert _on_accelerator(cos, sin, q, k, trace.project.q_rotated)
    assert not wide.calls, "float64 on the accelerator:\n" + "\n".join(dict.fromkeys(wide.calls))


def test_on_a_fake_accelerator_a_cpu_tensor_meeting_the_layer_raises():
    """The fake run can fail: RoPE's angles left on the CPU meet the layer's q."""
    with FakeTensorMode(), pytest.raises(RuntimeError, match="device"):
        model = _fake_layer(num_kv_heads=2, rope_base=10000.0)
        q = torch.randn(1, 4, 6, model.d_k, device=ACCELERATOR)
        cos, sin = rotary_cos_sin(torch.arange(6, device="cpu"), model.d_k, 10000.0)  # on the positions' device
        apply_rotary_pos_emb(q, q, cos, sin)


def test_the_lessons_float64_work_takes_a_fake_accelerators_tensors_to_the_cpu(monkeypatch):
    """The offset lesson, step 2's score spread, the attribution lab's measures and an image's attention distance
    copy what they read to the CPU before their float64 work (Apple's mps has no float64): with the layer on the
    accelerator no CPU tensor meets one of its tensors, no float64 tensor is made there, and their tensors come
    back float64 on the CPU. (The head labels index by a mask, a shape a fake tensor cannot know: the audit covers
    them.)"""
    _without_data(monkeypatch)
    with FakeTensorMode(), Float64OnAccelerator() as wide:
        model = _fake_layer(num_kv_heads=2, rope_base=10000.0)
        x = torch.randn(1, 6, 16, device=ACCELERATOR)  # (1, L, D)
        mask = causal_mask(6, device=ACCELERATOR)  # (1, 1, L, L)
        scores = offset_scores(model, x[0, 0], x[0, 2], head=1)
        q, k = _head_vectors(model, x[0, :1].cpu().double(), x[0, 2:3].cpu().double(), head=1)
        trace = model.forward_traced(x, x, x, mask)
        score_spread(trace.project.q_heads[0], trace.project.k_heads[0], trace.attend.raw_scores[0], 0.25)
        measures = key_measures(model, x, mask, query=3)
        deltas = ablation_deltas(model, x, mask, 3, None, "mask")
        grid_weights = torch.softmax(torch.randn(2, 10, 10, device=ACCELERATOR), dim=-1)  # (H, 1 + 3·3, 1 + 3·3)
        distance = mean_attention_distance(grid_weights, 3, 3, 4)
    assert not wide.calls, "float64 on the accelerator:\n" + "\n".join(dict.fromkeys(wide.calls))
    assert len(scores) == len(OFFSET_PAIRS)
    produced = (q, k, measures.weights, measures.norms, deltas, distance.pixels)
    assert {(t.device.type, t.dtype) for t in produced} == {("cpu", torch.float64)}


def _factories_without_device(path: Path) -> list[int]:
    """Line numbers of ``torch.<factory>(...)`` calls in ``path`` that pass no ``device=`` keyword."""
    names = {func.__name__ for func in FACTORIES}
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names):
            continue
        named = {keyword.arg for keyword in node.keywords}
        if isinstance(node.func.value, ast.Name) and node.func.value.id == "torch" and "device" not in named:
            lines.append(node.lineno)
    return sorted(lines)


def test_every_factory_call_in_the_engine_the_labs_and_the_panels_names_its_device():
    """The static side of the audit, for the lines no run above reaches (a lab's timing child, an export to ONNX, a
    training's other tasks): every ``torch.<factory>(...)`` call written in ``mha/`` or ``components/`` passes
    ``device=``, the trainings, the weight sources, generation and the head search included."""
    missing = []
    for folder in WATCHED:
        for path in sorted(folder.rglob("*.py")):
            relative = str(path.relative_to(ROOT))
            if relative in QUOTED:
                continue
            missing += [f"{relative}:{line}" for line in _factories_without_device(path)]
    assert not missing, missing


def test_the_static_scan_finds_a_factory_without_device(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import torch\na = torch.zeros(2, device='cpu')\nb = torch.arange(\n    3,\n)\n")
    assert _factories_without_device(probe) == [3]


def _cuda_literals(path: Path) -> list[int]:
    """Line numbers of the string literals ``"cuda"`` in ``path``'s code (a docstring or comment that lists the device
    names is not code)."""
    with path.open(encoding="utf-8") as file:
        tokens = tokenize.generate_tokens(file.readline)
        return [token.start[0] for token in tokens if token.type == tokenize.STRING and token.string in CUDA_LITERALS]


CUDA_LITERALS = frozenset({'"cuda"', "'cuda'"})


def test_nothing_in_the_engine_or_the_panels_names_cuda_where_the_rule_is_the_runs_device():
    """``"cuda"`` may appear in code only where a device is chosen (``mha/device.py``) or where the code asks which
    device it is on (lab 13's measured backends, the allocator's cache freed after an out of memory)."""
    allowed = {"mha/device.py", "mha/experiments/flash_cost.py", "components/labs/flash.py", "mha/memory.py"}
    named = []
    for folder in WATCHED:
        for path in folder.rglob("*.py"):
            relative = str(path.relative_to(ROOT))
            if relative in allowed or "/locale/" in relative:
                continue
            named += [f"{relative}:{number}" for number in _cuda_literals(path)]
    assert not named, named


def test_the_cuda_scan_finds_the_literal_in_code_and_not_in_docs(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('"""Runs on ``"cuda"``."""\n# "cuda" here\ndevice = "cuda"\nother = \'cuda\'\n')
    assert _cuda_literals(probe) == [3, 4]


def test_the_audit_sees_every_factory_it_lists():
    """Each listed factory goes through the torch function mode here (so a missing record is not a missing hook)."""
    calls = {
        torch.arange: (3,),
        torch.as_tensor: ([1.0],),
        torch.empty: (2,),
        torch.empty_strided: ((2,), (1,)),
        torch.eye: (2,),
        torch.full: ((2,), 1.0),
        torch.linspace: (0, 1, 3),
        torch.logspace: (0, 1, 3),
        torch.ones: (2,),
        torch.rand: (2,),
        torch.randint: (3, (2,)),
        torch.randn: (2,),
        torch.randperm: (3,),
        torch.scalar_tensor: (1.0,),
        torch.tensor: ([1.0],),
        torch.tril_indices: (3, 3),
        torch.triu_indices: (3, 3),
        torch.zeros: (2,),
    }
    seen = []

    class Seen(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))

    with Seen():
        for func, args in calls.items():
            func(*args)
    assert set(calls) == FACTORIES
    assert set(seen) == FACTORIES
