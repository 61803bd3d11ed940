"""The engine against PyTorch: our plain and traced forward vs ``nn.MultiheadAttention`` and SDPA.

d_model 512, 8 heads, batch 1, float32, self-attention without a mask, under
``torch.inference_mode``, at L = 16, 512, 2048. All five run the same projections (the
weights of one seeded model) and the same matmuls, so each one's FLOPs (from
:mod:`mha.counting`) over its median time, against this machine's measured float32 matmul
throughput, says how close to the hardware it gets. The contenders are timed in turn,
round after round, so that background load on a shared machine hits them alike.
"""

from __future__ import annotations

import os
import platform
import statistics
from collections.abc import Callable
from pathlib import Path

import torch
from torch import Tensor
from torch.nn import functional as F

from bench import time_once
from bench.table import Table
from mha.counting import step_costs
from mha.reference import to_torch_mha
from mha.sources.seeded import build_model

TITLE = "Engine: our forward / forward_traced vs nn.MultiheadAttention and F.scaled_dot_product_attention"

D_MODEL, NUM_HEADS = 512, 8
LENGTHS = (16, 512, 2048)
QUICK_LENGTHS = (16, 128)
BASELINE = "nn.MHA need_weights=True"


def cpu_model() -> str:
    """The CPU's name from /proc/cpuinfo (Linux), else what ``platform`` knows."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def matmul_gflops(size: int, repeats: int) -> float:
    """This machine's float32 matmul throughput: 2·n³ FLOPs of one (n, n) @ (n, n), fastest of ``repeats``.

    The fastest, not the median: a peak is what the hardware can do, and on a shared
    machine only the slow side of the timings is noise.
    """
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(size, size, generator=g), torch.randn(size, size, generator=g)
    with torch.inference_mode():
        a @ b  # warm-up
        seconds = min(time_once(lambda: a @ b) for _ in range(repeats))
    return 2 * size**3 / seconds / 1e9


def contenders(
    length: int, device: torch.device | str = "cpu", dtype: torch.dtype = torch.float32
) -> dict[str, Callable[[], object]]:
    """The five implementations, each a no-argument call on the same input and weights, on ``device`` in ``dtype``."""
    model = build_model(D_MODEL, NUM_HEADS, seed=0)
    torch_mha = to_torch_mha(model).eval().requires_grad_(False).to(device, dtype)
    model = model.to(device, dtype)
    x = torch.randn(1, length, D_MODEL, generator=torch.Generator().manual_seed(1)).to(device, dtype)  # (B, L, D)
    w_in, b_in = torch_mha.in_proj_weight, torch_mha.in_proj_bias  # (3D, D), (3D,)
    w_out, b_out = torch_mha.out_proj.weight, torch_mha.out_proj.bias
    d_head = D_MODEL // NUM_HEADS

    def heads(t: Tensor) -> Tensor:
        return t.view(1, length, NUM_HEADS, d_head).transpose(1, 2)  # (B, L, D) -> (B, H, L, Dh)

    def sdpa() -> Tensor:
        q, k, v = F.linear(x, w_in, b_in).chunk(3, dim=-1)  # (B, L, 3D) -> 3 x (B, L, D)
        context = F.scaled_dot_product_attention(heads(q), heads(k), heads(v))  # (B, H, L, Dh)
        return F.linear(context.transpose(1, 2).reshape(1, length, D_MODEL), w_out, b_out)  # (B, L, D)

    return {
        "ours: forward": lambda: model(x, x, x),
        "ours: forward_traced": lambda: model.forward_traced(x, x, x),
        BASELINE: lambda: torch_mha(x, x, x, need_weights=True, average_attn_weights=False),
        "nn.MHA need_weights=False": lambda: torch_mha(x, x, x, need_weights=False),
        "F.sdpa + same projections": sdpa,
    }


def repeats_for(length: int, quick: bool) -> int:
    """More repeats where one call is short: ~0.1 s .. 0.4 s per call at L = 2048 on 2 cores."""
    if quick:
        return 3
    return 41 if length <= 64 else 15 if length <= 512 else 7


def time_round_robin(calls: dict[str, Callable[[], object]], repeats: int, warmup: int = 2) -> dict[str, float]:
    """Median seconds per call, timing the calls in turn each round."""
    for fn in calls.values():
        for _ in range(warmup):
            fn()
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeats):
        for name, fn in calls.items():
            samples[name].append(time_once(fn))
    return {name: statistics.median(times) for name, times in samples.items()}


def run(quick: bool) -> list[Table]:
    """Time the five contenders at each length; one table with medians, ratios and % of matmul peak."""
    peak = matmul_gflops(1024 if quick else 2048, repeats=3 if quick else 9)
    rows = []
    for length in QUICK_LENGTHS if quick else LENGTHS:
        flops = sum(c.flops for c in step_costs(D_MODEL, NUM_HEADS, length))
        with torch.inference_mode():
            medians = time_round_robin(contenders(length), repeats_for(length, quick))
        baseline = medians[BASELINE]
        for name, seconds in medians.items():
            gflops = flops / seconds / 1e9
            rows.append(
                (
                    str(length),
                    name,
                    f"{seconds * 1e3:.2f}",
                    f"{seconds / baseline:.2f}x",
                    f"{gflops:.1f}",
                    f"{100 * gflops / peak:.0f}%",
                )
            )
    notes = (
        f"d_model {D_MODEL}, {NUM_HEADS} heads, B=1, float32, self-attention, no mask, torch.inference_mode; "
        f"median of {'3' if quick else '41 / 15 / 7'} rounds after 2 warm-up calls, contenders timed in turn.",
        "vs MHA: median time / median time of nn.MultiheadAttention(need_weights=True, average_attn_weights=False) "
        "at the same L. GFLOP/s: the matmul FLOPs of mha.counting.step_costs over the median time.",
        f"peak: fastest of {3 if quick else 9} float32 {1024 if quick else 2048}^3 matmuls = {peak:.1f} GFLOP/s. "
        f"Machine: {cpu_model()}, torch {torch.__version__}, torch.get_num_threads() = {torch.get_num_threads()}, "
        f"Python {platform.python_version()}, THP_MEM_ALLOC_ENABLE={os.environ.get('THP_MEM_ALLOC_ENABLE', 'unset')} "
        "(1 = PyTorch asks for huge pages for big tensors: fresh score tensors fault in far faster).",
    )
    columns = ("L", "implementation", "median ms", "vs MHA", "GFLOP/s", "% of matmul peak")
    return [Table(TITLE, columns, tuple(rows), notes)]
