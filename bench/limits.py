"""The worst request the caps allow: time and peak memory of one page request at the limits.

The caps (``mha.config.LIMITS``) are 128 tokens, d_model 1024, 64 heads, 2000 characters of text,
and batch 1: the page always runs one sentence (``embed_inputs`` gives ``[1, L, d_model]``), so
no control can ask for more sequences. Each case runs in a fresh Python process, so one
case's caches and allocator pools cannot hide another's memory:

* engine: ``build_model`` + traced ``run_attention`` + the live check against
  ``nn.MultiheadAttention`` (what ``components/runner.py`` caches per config), first call;
  then the median of 7 warm calls of the traced forward alone;
* page: the whole playground script through Streamlit's ``AppTest`` (engine, frames, Altair
  charts, Arrow serialisation), first run with cold caches: the server-side cost of one
  new visitor. The browser's drawing time is not included (see the ``browser`` section).

Memory: ``psutil`` RSS after a tiny warm-up page run (every import loaded) is the baseline;
the peak is ``ru_maxrss`` (the process's high-water mark, which tracemalloc cannot see for
torch's allocations) minus that baseline. "tensors" is what torch itself holds for the case: the model's parameters
plus every distinct storage in the trace (views such as the split heads count once).
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.table import Table
from mha.config import LIMITS

TITLE = "Limits: time and peak memory of the worst request the caps allow (one process per case)"

REPO = Path(__file__).resolve().parents[1]
D_MODEL_MAX, HEADS_MAX, TOKENS_MAX = LIMITS.d_model_max, LIMITS.num_heads_max, LIMITS.tokens_max
#: (d_model, num_heads, mask_type): every mask at the widest model and most heads, and 16 heads.
CASES = (
    *((D_MODEL_MAX, HEADS_MAX, mask) for mask in ("none", "causal", "padding", "window")),
    (D_MODEL_MAX, 16, "none"),
)
QUICK_CASES = ((D_MODEL_MAX, HEADS_MAX, "none"),)
WARM_REPEATS = 7
_MB = 2**20


def worst_text(mask_type: str) -> str:
    """128 distinct tokens (the cap); for the padding mask the last 8 are ``[PAD]``."""
    if mask_type == "padding":
        return " ".join([f"w{i}" for i in range(TOKENS_MAX - 8)] + ["[PAD]"] * 8)
    return " ".join(f"w{i}" for i in range(TOKENS_MAX))


def _storage_bytes(tensors: list) -> int:
    """Bytes of the distinct storages behind ``tensors`` (a view shares its base's storage)."""
    seen: dict[int, int] = {}
    for tensor in tensors:
        storage = tensor.untyped_storage()
        seen[storage.data_ptr()] = storage.nbytes()
    return sum(seen.values())


def measure_case(d_model: int, num_heads: int, mask_type: str, with_page: bool) -> dict[str, float]:
    """Measure one case in this process (call it in a fresh one); returns seconds and MiB."""
    import psutil
    import torch
    from streamlit.testing.v1 import AppTest

    from mha.config import AttentionConfig
    from mha.pipeline import run_attention
    from mha.reference import compare_with_torch
    from mha.sources.seeded import build_model

    config = AttentionConfig(
        d_model=d_model, num_heads=num_heads, mask_type=mask_type, window=2, tokens=worst_text(mask_type), device="cpu"
    )
    page = AppTest.from_file(str(REPO / "playground.py"), default_timeout=300)
    for key, value in {"d_model": "16", "num_heads": "2", "tokens": "a b c", "device": "cpu"}.items():
        page.query_params[key] = value
    page.run()  # a tiny warm-up request: every import and Streamlit's machinery are in the baseline
    baseline = psutil.Process().memory_info().rss

    def peak_mib() -> float:
        return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - baseline) / _MB

    start = time.perf_counter()
    model = build_model(d_model, num_heads, config.seed)
    run = run_attention(config, model)
    check = compare_with_torch(model, run.x, run.x, run.x, run.mask, run.trace.output, run.trace.weights)
    engine_s = time.perf_counter() - start
    engine_peak = peak_mib()
    tensors = [*model.parameters(), run.x, *run.trace.tensors().values()]
    tensor_mib = _storage_bytes(tensors) / _MB
    warm = []
    with torch.inference_mode():
        for _ in range(WARM_REPEATS):
            begin = time.perf_counter()
            model.forward_traced(run.x, run.x, run.x, run.mask)
            warm.append(time.perf_counter() - begin)
    result = {
        "engine_s": engine_s,
        "warm_s": statistics.median(warm),
        "engine_peak_mib": engine_peak,
        "tensor_mib": tensor_mib,
        "check_passed": float(check.passed),
        "batch": float(run.x.shape[0]),
        "threads": float(torch.get_num_threads()),
    }
    if with_page:
        params = {"d_model": d_model, "num_heads": num_heads, "mask_type": mask_type, "window": 2, "device": "cpu"}
        page = AppTest.from_file(str(REPO / "playground.py"), default_timeout=300)  # a new visitor
        for key, value in {**params, "tokens": worst_text(mask_type)}.items():
            page.query_params[key] = str(value)
        begin = time.perf_counter()
        page.run()
        result["page_s"] = time.perf_counter() - begin
        result["page_peak_mib"] = peak_mib()
        result["page_ok"] = float(not page.exception and not page.error)
    return result


def _measure_in_child(d_model: int, num_heads: int, mask_type: str, with_page: bool) -> dict[str, float]:
    argument = json.dumps([d_model, num_heads, mask_type, with_page])
    done = subprocess.run(
        [sys.executable, "-m", "bench.limits", argument], cwd=REPO, capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        raise RuntimeError(f"limits case {argument} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(quick: bool) -> list[Table]:
    """One row per case: engine and page time, peak RSS over the baseline, torch's tensor bytes."""
    rows = []
    threads = 0.0
    for d_model, num_heads, mask_type in QUICK_CASES if quick else CASES:
        r = _measure_in_child(d_model, num_heads, mask_type, with_page=not quick)
        threads = r["threads"]
        rows.append(
            (
                f"{d_model} / {num_heads} / {TOKENS_MAX} / {int(r['batch'])}",
                mask_type,
                f"{r['engine_s']:.2f}",
                f"{r['warm_s'] * 1e3:.1f}",
                f"{r['tensor_mib']:.1f}",
                f"{r['engine_peak_mib']:.0f}",
                f"{r['page_s']:.2f}" if "page_s" in r else "-",
                f"{r['page_peak_mib']:.0f}" if "page_peak_mib" in r else "-",
                ("ok" if r.get("page_ok", 1.0) and r["check_passed"] else "PROBLEM"),
            )
        )
    notes = (
        "d_model / heads / tokens / batch; float32 on the CPU; seed 0; window 2; padding: the last 8 tokens are [PAD].",
        "engine s: first build_model + traced run_attention + live check (compare_with_torch); warm ms: median "
        f"of {WARM_REPEATS} traced forwards on the built model. page s: one AppTest run of playground.py, cold caches.",
        "tensors MiB: the model's parameters + every distinct storage of the trace. peak MiB: ru_maxrss minus the "
        "psutil RSS after a tiny warm-up page run, in a fresh process per case (engine, then the page).",
        f"torch.get_num_threads() = {int(threads)}; the page runs one sentence at a time (batch 1, no batch control).",
    )
    columns = ("d / h / L / B", "mask", "engine s", "warm ms", "tensors MiB", "peak MiB", "page s", "page peak MiB", "")
    return [Table(TITLE, columns, tuple(rows), notes)]


if __name__ == "__main__":
    d, h, mask, page = json.loads(sys.argv[1])
    print(json.dumps(measure_case(d, h, mask, page)))
