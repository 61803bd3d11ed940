"""On a GPU: the engine against PyTorch's attention, the page's run, the trainings and generation, against the CPU.

Runs where a GPU is present (cuda, else mps: :func:`mha.device.available_devices`); elsewhere its one table says
that nothing was measured. Four tables, each measured in one run:

* the engine (:func:`bench.engine.contenders`: our ``forward`` and ``forward_traced`` against
  ``nn.MultiheadAttention(need_weights=True, average_attn_weights=False)`` with copied weights, the same without
  weights, and ``F.scaled_dot_product_attention`` with the same projections), d_model 512, 8 heads, batch 1,
  L 512 to 8,192, in float32 and bfloat16, each time over that of ``nn.MultiheadAttention(need_weights=True)``;
* the page's whole run (``mha.pipeline.run_attention`` on the default configuration, its source made once as the
  page caches it) on the GPU against this host's CPU;
* the digits' and the reviews' trainings on the GPU against the CPU, where ``train`` takes a ``device``;
* greedy generation, ms per new token, at GPT-2 small's and SmolLM2-135M's sizes (random weights from
  transformers' configs, no download; float32, eager attention, as the playground loads a checkpoint): the
  prompt once, then one token per forward against the model's ``past_key_values``, each step's argmax read back
  as the playground's generation reads it.

Timing: on cuda, CUDA events around each call after a ``synchronize`` (:func:`time_call`); on mps and the CPU, the
wall clock between two synchronizations. Warm-up calls first, then medians over rounds, the contenders timed in
turn each round. ``--device cpu`` runs the same measurements on the CPU (with ``--quick``: tiny sizes, a smoke run).

Run: ``python -m bench --only gpu [--quick]``, or ``python -m bench.gpu [--quick] [--device cuda|mps|cpu]
[--markdown]``.
"""

from __future__ import annotations

import argparse
import copy
import functools
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

import torch

from bench.engine import BASELINE, D_MODEL, NUM_HEADS, contenders, cpu_model
from bench.table import Table, format_table
from mha.device import available_devices

TITLE = "GPU: the engine vs nn.MultiheadAttention and SDPA, the page's run, trainings and generation vs the CPU"

NO_GPU = "no GPU here (cuda and mps unavailable): nothing measured"
OUT_OF_MEMORY = "out of memory"
LENGTHS, QUICK_LENGTHS = (512, 1024, 2048, 4096, 8192), (16, 64)
DTYPES = (torch.float32, torch.bfloat16)
ROUNDS, QUICK_ROUNDS = 21, 3
WARMUP = 3
TRAININGS = (("digits", 64, 2), ("reviews", 64, 2))  # task, d_model, heads: the page's trained sizes
QUICK_TRAINING_STEPS = 3
PROMPT, NEW_TOKENS = 64, 32
QUICK_PROMPT, QUICK_NEW_TOKENS = 8, 4
GENERATION_ROUNDS, QUICK_GENERATION_ROUNDS = 3, 1
#: name -> (family, hidden, layers, query heads, K/V heads, vocabulary, RoPE base or None, intermediate size).
MODELS = {
    "GPT-2 small size, random": ("gpt2", 768, 12, 12, 12, 50257, None, 3072),
    "SmolLM2-135M size, random": ("llama", 576, 30, 9, 3, 49152, 1e5, 1536),
}
QUICK_MODELS = {
    "GPT-2 family, tiny": ("gpt2", 64, 2, 4, 4, 512, None, 256),
    "Llama family, tiny": ("llama", 48, 2, 6, 2, 512, 1e5, 96),
}
_T = TypeVar("_T")


def accelerator() -> torch.device | None:
    """The GPU here (cuda, else mps), or ``None`` where there is none."""
    best = available_devices()[0]
    return None if best == "cpu" else torch.device(best)


def synchronize(device: torch.device) -> None:
    """Wait for the work queued on ``device`` (the CPU queues none)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def time_call(fn: Callable[[], _T], device: torch.device) -> tuple[float, _T]:
    """Seconds one call of ``fn`` takes on ``device``, and what it returned.

    The queue is emptied first; on cuda the time is that between two CUDA events recorded around the call, else the
    wall clock up to a synchronization after it.
    """
    synchronize(device)
    if device.type == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        result = fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3, result  # elapsed_time is in ms
    began = time.perf_counter()
    result = fn()
    synchronize(device)
    return time.perf_counter() - began, result


def time_in_turn(calls: dict[str, tuple[Callable[[], object], torch.device]], rounds: int) -> dict[str, float]:
    """Median seconds per call of each ``(fn, device)``, after :data:`WARMUP` calls each, timed in turn per round."""
    for fn, device in calls.values():
        for _ in range(WARMUP):
            fn()
        synchronize(device)
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, (fn, device) in calls.items():
            samples[name].append(time_call(fn, device)[0])
    return {name: statistics.median(times) for name, times in samples.items()}


def _out_of_memory(error: Exception) -> bool:
    """Whether ``error`` is the device running out of memory (cuda's own error; mps raises a RuntimeError)."""
    return isinstance(error, torch.OutOfMemoryError) or "out of memory" in str(error)


def _free(device: torch.device) -> None:
    """Hand the device's cached blocks back, so that one size's tensors do not crowd the next size's."""
    synchronize(device)
    if device.type == "cuda":
        torch.cuda.empty_cache()
    elif device.type == "mps":
        torch.mps.empty_cache()


def _sides(device: torch.device) -> tuple[tuple[str, torch.device], tuple[str, torch.device]]:
    """``("device", device)`` and ``("cpu", the CPU)``: a comparison's sides (both the CPU with ``--device cpu``)."""
    return ("device", device), ("cpu", torch.device("cpu"))


def _ratio(seconds: float, reference: float) -> str:
    return f"{seconds / reference:.2f}x"


# ---------------------------------------------------------------- the engine against PyTorch's attention
def attention_rows(medians: dict[tuple[str, int], dict[str, float] | None]) -> list[tuple[str, ...]]:
    """Rows ``(dtype, L, implementation, median ms, vs MHA)`` from the medians (s) per (dtype name, L).

    ``vs MHA``: the median over that of :data:`bench.engine.BASELINE` at the same dtype and L. ``None`` medians
    (the device ran out of memory at that size) make one row saying so.
    """
    rows = []
    for (dtype, length), times in medians.items():
        if times is None:
            rows.append((dtype, str(length), "all", OUT_OF_MEMORY, ""))
            continue
        for name, seconds in times.items():
            rows.append((dtype, str(length), name, f"{seconds * 1e3:.3f}", _ratio(seconds, times[BASELINE])))
    return rows


def _attention(device: torch.device, quick: bool) -> Table:
    rounds = QUICK_ROUNDS if quick else ROUNDS
    medians: dict[tuple[str, int], dict[str, float] | None] = {}
    for dtype in DTYPES:
        for length in QUICK_LENGTHS if quick else LENGTHS:
            key = (str(dtype).removeprefix("torch."), length)
            try:
                with torch.inference_mode():
                    calls = {name: (fn, device) for name, fn in contenders(length, device, dtype).items()}
                    medians[key] = time_in_turn(calls, rounds)
            except (torch.OutOfMemoryError, RuntimeError) as error:
                if not _out_of_memory(error):
                    raise
                medians[key] = None
            calls = {}
            _free(device)
    notes = (
        f"On {_device_name(device)}: d_model {D_MODEL}, {NUM_HEADS} heads, B=1, self-attention, no mask, "
        f"torch.inference_mode; median of {rounds} rounds after {WARMUP} warm-up calls, the contenders in turn.",
        "vs MHA: median time / that of nn.MultiheadAttention(need_weights=True, average_attn_weights=False) (copied "
        "weights) at the same dtype and L. F.sdpa computes no weights: a lower bound, not a target.",
    )
    columns = ("dtype", "L", "implementation", "median ms", "vs MHA")
    return Table(f"Engine on {device.type}", columns, tuple(attention_rows(medians)), notes)


# ---------------------------------------------------------------- the page's run, the trainings
def versus_row(label: str, device: torch.device, on_device: float, on_cpu: float, unit: float) -> tuple[str, ...]:
    """``(label, device, device time, CPU time, device / CPU)``, the times (s) in ``unit`` seconds."""
    return (label, device.type, f"{on_device / unit:.3g}", f"{on_cpu / unit:.3g}", _ratio(on_device, on_cpu))


def _page_run(device: torch.device, quick: bool) -> Table:
    from mha.config import AttentionConfig
    from mha.pipeline import run_attention
    from mha.sources import make_source

    rounds = QUICK_ROUNDS if quick else ROUNDS
    calls = {}
    for side, where in _sides(device):
        config = AttentionConfig(device=where.type)
        source = make_source(config.weight_spec)  # made once, as the page caches it
        calls[side] = (lambda config=config, source=source: run_attention(config, source), where)
    medians = time_in_turn(calls, rounds)
    tokens = len(calls["cpu"][0]().tokens)
    notes = (
        f"mha.pipeline.run_attention on the default configuration (d_model 512, 8 heads, the default sentence: "
        f"L = {tokens}), its source made once as the page caches it; median ms of {rounds} rounds after {WARMUP} "
        f"warm-up runs, the two devices in turn. CPU: {cpu_model()}, torch threads {torch.get_num_threads()}.",
    )
    columns = ("run", "device", "device ms", "CPU ms", "device / CPU")
    row = versus_row("the page's run_attention, default", device, medians["device"], medians["cpu"], 1e-3)
    return Table("The page's run on the GPU against this host's CPU", columns, (row,), notes)


def _trainings(device: torch.device, quick: bool) -> Table:
    import mha.training

    train = mha.training.train
    options: dict[str, Any] = {"max_steps": QUICK_TRAINING_STEPS} if quick else {}
    rows = []
    for task, d_model, heads in TRAININGS:
        seconds, steps = {}, {}
        for side, where in _sides(device):
            seconds[side], (_, history) = time_call(
                functools.partial(train, task, d_model, heads, 0, device=where.type, **options), where
            )
            steps[side] = history.steps
        row = versus_row(task, device, seconds["device"], seconds["cpu"], 1.0)
        rows.append((*row, f"{steps['device']} / {steps['cpu']}"))
    notes = (
        f"train(task, d_model, heads, seed 0, device=...) at the page's trained sizes, "
        f"{f'{QUICK_TRAINING_STEPS} steps (quick)' if quick else 'the full recipe'}; one training per device "
        "(seconds, the whole call: data, steps, evaluation). steps: on the device / on the CPU.",
    )
    columns = ("training", "device", "device s", "CPU s", "device / CPU", "steps")
    return Table("The trainings on the GPU against this host's CPU", columns, tuple(rows), notes)


# ---------------------------------------------------------------- generation
def causal_lm(name: str, models: dict[str, tuple[Any, ...]]) -> Any:
    """``models[name]`` as a ``*ForCausalLM`` with seeded random weights (the global RNG left as it was), float32,
    eager attention, in eval mode without gradients."""
    import transformers

    family, hidden, layers, heads, kv_heads, vocab, rope, intermediate = models[name]
    if family == "gpt2":
        config = transformers.GPT2Config(
            vocab_size=vocab,
            n_positions=1024,
            n_embd=hidden,
            n_layer=layers,
            n_head=heads,
            n_inner=intermediate,
            bos_token_id=vocab - 1,  # GPT-2's end of text: its last token
            eos_token_id=vocab - 1,
        )
    else:
        config = transformers.LlamaConfig(
            vocab_size=vocab,
            hidden_size=hidden,
            intermediate_size=intermediate,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            num_key_value_heads=kv_heads,
            rope_theta=rope,
            tie_word_embeddings=True,
        )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager")
    return model.float().eval().requires_grad_(False)


def token_seconds(model: Any, device: torch.device, prompt: int, new_tokens: int, rounds: int) -> list[float]:
    """Seconds of each new token's forward (fed one token against ``past_key_values``, argmax read back), over
    ``rounds`` greedy generations after one untimed one; the prompt's forward (the prefill) is not counted."""
    ids = torch.randint(0, model.config.vocab_size, (1, prompt), generator=torch.Generator().manual_seed(0))  # (1, P)
    ids = ids.to(device)

    def step(fed: torch.Tensor, past: Any) -> tuple[int, Any]:
        out = model(input_ids=fed, past_key_values=past, use_cache=True)
        return int(out.logits[0, -1].argmax()), out.past_key_values  # (V,) -> the greedy choice

    times: list[float] = []
    with torch.inference_mode():
        for round_ in range(rounds + 1):
            token, past = step(ids, None)
            for _ in range(new_tokens):
                fed = torch.tensor([[token]], device=device)  # (1, 1)
                seconds, (token, past) = time_call(lambda fed=fed, past=past: step(fed, past), device)
                if round_:  # round 0 warms up
                    times.append(seconds)
    return times


def _generation(device: torch.device, quick: bool) -> Table:
    models = QUICK_MODELS if quick else MODELS
    prompt, new_tokens = (QUICK_PROMPT, QUICK_NEW_TOKENS) if quick else (PROMPT, NEW_TOKENS)
    rounds = QUICK_GENERATION_ROUNDS if quick else GENERATION_ROUNDS
    rows = []
    for name in models:
        model = causal_lm(name, models)
        medians = {}
        for side, where in _sides(device):
            placed = copy.deepcopy(model).to(where)
            medians[side] = statistics.median(token_seconds(placed, where, prompt, new_tokens, rounds))
            del placed
            _free(where)
        rows.append(versus_row(name, device, medians["device"], medians["cpu"], 1e-3))
    notes = (
        f"Random weights from transformers' configs, float32, eager attention; a {prompt}-token random prompt, then "
        f"{new_tokens} new tokens, each one forward of the token chosen against past_key_values and its argmax read "
        f"back; median ms per new token over {rounds} generation(s) after one warm-up (the prompt's forward not "
        f"counted). CPU: torch threads {torch.get_num_threads()}.",
    )
    columns = ("model", "device", "device ms / token", "CPU ms / token", "device / CPU")
    return Table("Generation per token on the GPU against this host's CPU", columns, tuple(rows), notes)


# ---------------------------------------------------------------- the section
def _device_name(device: torch.device) -> str:
    versions = f"torch {torch.__version__}"
    if device.type == "cuda":
        return f"{torch.cuda.get_device_name(device)} (CUDA {torch.version.cuda}, {versions})"
    if device.type == "mps":
        return f"{platform.machine()} mps ({versions})"
    return f"{cpu_model()} ({versions}, {torch.get_num_threads()} threads)"


def run(quick: bool, device: str | None = None) -> list[Table]:
    """Every table on ``device`` (``None``: the GPU here); one table saying nothing was measured where none is.

    Raises:
        ValueError: ``device`` is not available here.
    """
    if device is not None and device not in available_devices():
        raise ValueError(f"{device} is not available here (available: {', '.join(available_devices())})")
    chosen = torch.device(device) if device is not None else accelerator()
    if chosen is None:
        return [Table("GPU", ("device", "measured"), (("none", NO_GPU),))]
    return [_attention(chosen, quick), _page_run(chosen, quick), _trainings(chosen, quick), _generation(chosen, quick)]


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.gpu [--quick] [--device cuda|mps|cpu] [--markdown]``: print the tables."""
    parser = argparse.ArgumentParser(prog="python -m bench.gpu", description=TITLE)
    parser.add_argument("--quick", action="store_true", help="small sizes, few rounds")
    parser.add_argument("--device", choices=("cuda", "mps", "cpu"), help="measure here (default: the GPU here)")
    parser.add_argument("--markdown", action="store_true", help="print markdown tables")
    args = parser.parse_args(argv)
    try:
        tables = run(args.quick, args.device)
    except ValueError as error:
        parser.error(str(error))
    for table in tables:
        print(format_table(table, "markdown" if args.markdown else "text"), end="\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
