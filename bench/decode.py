"""Generating with a key/value cache and without: per token time of a whole model, and of one layer's step.

Two models built here with random weights (no network; ``tests/tiny_checkpoint.build_gpt2`` and ``build_llama``,
as ``bench/pretrained.py`` builds them): one of GPT-2 small's size (768, 12 layers, 12 heads, 50,257 tokens) and
one of SmolLM2-135M's (576, 30 layers, 9 query / 3 K/V heads, RoPE base 1e5, tied embeddings), loaded as
``*ForCausalLM`` in float32 with eager attention (what the playground loads). Each greedily generates
:data:`NEW_TOKENS` tokens after a :data:`PROMPT`-token prompt of random ids, through ``generate(...,
do_sample=False)``: with Hugging Face's cache (``use_cache=True``: the prompt once, then one token per forward)
and without (``use_cache=False``: every step runs the whole sequence again). The two take turns, round after
round; the table gives the medians per generated token and their ratio.

The second table times one decoding step of the attention layer alone, at each model's layer sizes
(``mha.experiments.decode_cost.step_times``: ``forward_step`` with n = 1 against a cache of t - 1 positions, or
the layer over all t positions under the causal mask, its last row kept), and the cache's bytes at that length
for the layer and for the whole model (2 · layers · Hkv · Dh · 4 bytes per token in float32).

Run: ``PYTHONPATH=. .venv/bin/python -m bench.decode [--quick]`` (markdown), or ``python -m bench --only decode``.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from bench.table import Table, format_table
from mha.counting import KVCacheSize
from mha.experiments.decode_cost import step_times
from mha.module import MultiHeadAttention

TITLE = "Generation with a KV cache and without: per token time (whole model) and one layer's decoding step"

REPO = Path(__file__).resolve().parents[1]
PROMPT, NEW_TOKENS = 64, 32
QUICK_PROMPT, QUICK_NEW_TOKENS = 16, 8
ROUNDS, QUICK_ROUNDS = 3, 1
LAYER_REPEATS, QUICK_LAYER_REPEATS = 15, 3
LENGTHS = (64, 96, 256, 1024)
QUICK_LENGTHS = (16, 64)
SMOLLM2 = "SmolLM2-135M size, random"
#: name -> (family, hidden, layers, query heads, K/V heads, vocabulary, RoPE base or None).
MODELS = {
    "GPT-2 small size, random": ("gpt2", 768, 12, 12, 12, 50257, None),
    SMOLLM2: ("llama", 576, 30, 9, 3, 49152, 1e5),
}
_KIB = 1024


def _build(folder: Path, name: str) -> Path:
    """The model ``name`` of :data:`MODELS` with random weights, saved to ``folder``."""
    sys.path.insert(0, str(REPO / "tests"))
    from tiny_checkpoint import build_gpt2, build_llama

    from bench.pretrained import LLAMA_SHAPES

    family, hidden, layers, heads, _, vocab, _ = MODELS[name]
    if family == "gpt2":
        return build_gpt2(folder, hidden, layers, heads, vocab)
    return build_llama(folder, hidden=hidden, layers=layers, heads=heads, vocab_size=vocab, **LLAMA_SHAPES[name])  # type: ignore[arg-type]


def _per_token_ms(folder: Path, prompt: int, new_tokens: int, rounds: int) -> tuple[float, float]:
    """Median ms per generated token with the cache and without, the two taking turns, after one warm-up each."""
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32)
    model = model.eval().requires_grad_(False)
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(0, model.config.vocab_size, (1, prompt), generator=generator)  # (1, prompt)
    options = {
        "attention_mask": torch.ones_like(ids),
        "max_new_tokens": new_tokens,
        "min_new_tokens": new_tokens,  # no end-of-text token ends one early: every run makes new_tokens tokens
        "do_sample": False,
        "pad_token_id": model.config.eos_token_id,
    }
    times: dict[bool, list[float]] = {True: [], False: []}
    with torch.inference_mode():
        for use_cache in (True, False):
            model.generate(ids, use_cache=use_cache, **options)  # warm-up
        for _ in range(rounds):
            for use_cache in (True, False):
                start = time.perf_counter()
                out = model.generate(ids, use_cache=use_cache, **options)
                times[use_cache].append(time.perf_counter() - start)
                assert out.size(1) == prompt + new_tokens, out.shape
    return (statistics.median(times[True]) * 1e3 / new_tokens, statistics.median(times[False]) * 1e3 / new_tokens)


def _layer(name: str) -> MultiHeadAttention:
    """A layer of ``name``'s attention sizes (random weights: the time does not depend on them)."""
    family, hidden, _, heads, kv_heads, _, rope = MODELS[name]
    with torch.random.fork_rng():
        torch.manual_seed(0)
        layer = MultiHeadAttention(hidden, heads, bias=family == "gpt2", num_kv_heads=kv_heads, rope_base=rope)
    return layer.eval().requires_grad_(False)


def run(quick: bool) -> list[Table]:
    """Per token time of whole-model generation with and without the cache; one layer's step with and without."""
    prompt, new_tokens = (QUICK_PROMPT, QUICK_NEW_TOKENS) if quick else (PROMPT, NEW_TOKENS)
    rounds = QUICK_ROUNDS if quick else ROUNDS
    names = list(MODELS)[:1] if quick else list(MODELS)
    model_rows, loads = [], []
    with tempfile.TemporaryDirectory(prefix="bench-decode-") as scratch:
        for number, name in enumerate(names):
            folder = _build(Path(scratch) / f"model{number}", name)
            cached, recompute = _per_token_ms(folder, prompt, new_tokens, rounds)
            loads.append(os.getloadavg()[0])
            _, hidden, layers, heads, kv_heads, _, _ = MODELS[name]
            per_token = KVCacheSize(layers, kv_heads, hidden // heads, torch.float32).bytes_per_token
            model_rows.append(
                (
                    name,
                    f"{hidden} / {layers} / {heads} / {kv_heads}",
                    f"{cached:.1f}",
                    f"{recompute:.1f}",
                    f"{recompute / cached:.1f}x",
                    f"{per_token / _KIB:.0f}",
                    f"{per_token * (prompt + new_tokens) / _KIB**2:.1f}",
                )
            )
    model_notes = (
        f"Greedy generation of {new_tokens} tokens after {prompt} random prompt ids, "
        "transformers' generate(do_sample=False, min_new_tokens=max_new_tokens), float32, eager attention, "
        f"torch threads {torch.get_num_threads()}; ms per generated token = the whole generate call (prompt included) "
        f"/ {new_tokens}, median of {rounds} round(s), the two ways taking turns after one warm-up each.",
        "with cache: use_cache=True (the prompt once, then one token per forward against past_key_values); "
        "recompute: use_cache=False (each step runs the whole sequence so far). KV cache per token: "
        "2 · layers · h_kv · d_k · 4 bytes; at the end: that × (prompt + new tokens).",
        f"1-minute load average after each model: {', '.join(f'{load:.1f}' for load in loads)} "
        f"({os.cpu_count()} cores, shared).",
    )
    model_table = Table(
        f"Greedy generation, {new_tokens} tokens after {prompt}: ms per token with Hugging Face's cache and without",
        ("model", "d / layers / h / h_kv", "with cache ms", "recompute ms", "ratio", "KV cache KiB/token", "cache MiB"),
        tuple(model_rows),
        model_notes,
    )
    layer_rows = []
    lengths = QUICK_LENGTHS if quick else LENGTHS
    repeats = QUICK_LAYER_REPEATS if quick else LAYER_REPEATS
    for name in names:
        layer = _layer(name)
        layers = MODELS[name][2]
        with torch.inference_mode():
            for row in step_times(layer, lengths, repeats):
                layer_rows.append(
                    (
                        name,
                        row.length,
                        f"{row.cached_ms:.3f}",
                        f"{row.recompute_ms:.3f}",
                        f"{row.ratio:.1f}x",
                        f"{row.cache_bytes / _KIB:.0f}",
                        f"{row.cache_bytes * layers / _KIB**2:.1f}",
                    )
                )
    layer_notes = (
        "One attention layer alone (our MultiHeadAttention at the model's sizes, float32): at context length t, "
        "with cache = forward_step of the new row against a KVCache holding t - 1 positions; recompute = the layer "
        f"over all t positions under the causal mask, last row kept. Medians of {repeats} rounds, taking turns "
        "(mha.experiments.decode_cost.step_times). Cache: this layer's K and V at t positions; model: × its layers.",
    )
    layer_table = Table(
        "One layer's decoding step at context length t: forward_step with the cache vs recomputing",
        ("layer of", "t", "with cache ms", "recompute ms", "ratio", "layer cache KiB", "model cache MiB"),
        tuple(layer_rows),
        layer_notes,
    )
    return [model_table, layer_table]


if __name__ == "__main__":
    for result in run(quick="--quick" in sys.argv[1:]):
        print(format_table(result, "markdown"), end="\n\n")
