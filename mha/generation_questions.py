"""Check yourself on a generation: the questions the KV cache's panel asks, built from the generation the page shows.

Every answer is read from the :class:`~mha.sources.checkpoint.generation.Generation` and the run of the checkpoint's
layer: the cache's shape after the last step is that step's traced ``cache_shape``, the key a head weighs most its
row of weights, the bytes the run's sizes (its layers, key/value heads and d_k) give in bfloat16
(:class:`~mha.counting.KVCacheSize`, the cache's one formula). Nothing is stored: another text, layer or number of
new tokens asks other numbers.
"""

from __future__ import annotations

import torch

from mha.counting import KVCacheSize
from mha.pipeline import AttentionRun
from mha.questions import CHOICE, NUMBER, SHAPE, TOKEN, Question
from mha.sources.checkpoint.generation import Generation
from mha.tokens import shown_token

__all__ = ["GEN", "generation_questions"]

GEN = "gen"  # the questions' step: keys ``check_gen_<name>``, ids ``gen.<name>``


def _n(value: int) -> str:
    return f"{value:,}"


def generation_questions(generation: Generation, run: AttentionRun) -> tuple[Question, ...]:
    """The generation panel's questions (none for a generation without a step): the cache's shape after the last step,
    the cached key the last head weighs most at that step, the whole cache's bytes in bfloat16 for the text's
    tokens, and why the past keys and values need no recomputing.

    Args:
        generation: the generation the page shows (finished, or as far as a stopped one went).
        run: the page's run of the checkpoint's layer (its layers, key/value heads and d_k size the cache).
    """
    if not generation.steps:
        return ()
    last = generation.steps[-1]
    tokens = (*generation.prompt_tokens, *generation.new_tokens)
    batch, kv, length, d_k = last.cache_shape  # (B, Hkv, t, Dh)
    head = last.weights.size(0) - 1
    row = last.weights[head]  # (t,)
    key = int(torch.argmax(row).item())
    layers = run.num_layers
    positions = len(tokens)
    size = KVCacheSize(layers, run.trace.project.num_kv_heads, run.d_k, torch.bfloat16)  # 2 · layers · Hkv · Dh
    cache = size.bytes_for(positions)
    return (
        Question(
            GEN,
            "cache_shape",
            SHAPE,
            "quiz.gen.cache_shape",
            (("step", last.index), ("position", last.position), ("token", shown_token(tokens[last.position]))),
            tuple(last.cache_shape),
            "quiz.worked.formula",
            (("text", f"(B, h_kv, t, d_k), t = {last.position} + 1 → {list((batch, kv, length, d_k))}"),),
        ),
        Question(
            GEN,
            "top_key",
            TOKEN,
            "quiz.gen.top_key",
            (("step", last.index), ("head", head), ("t", length)),
            key,
            "quiz.worked.top_key",
            (("index", key), ("token", shown_token(tokens[key])), ("weight", f"{float(row[key]):.4f}")),
            tokens=tokens[:length],
        ),
        Question(
            GEN,
            "cache_bytes",
            NUMBER,
            "quiz.gen.cache_bytes",
            (("t", positions), ("layers", layers), ("kv", kv), ("d_k", d_k)),
            cache,
            "quiz.worked.formula",
            (
                (
                    "text",
                    f"2 · layers · h_kv · d_k · 2 B · t = 2·{layers}·{kv}·{d_k}·2·{positions} = {_n(cache)}",
                ),
            ),
        ),
        Question(
            GEN,
            "why_cache",
            CHOICE,
            "quiz.gen.why_cache",
            (),
            1,
            "quiz.worked.why_cache",
            (("kv", kv),),
            choices=("quiz.gen.why_cache.weights", "quiz.gen.why_cache.causal", "quiz.gen.why_cache.stored"),
        ),
    )
