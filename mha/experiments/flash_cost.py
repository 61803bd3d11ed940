"""What tiling buys: the peak memory of full and tiled attention as L grows, and PyTorch's fused backends timed.

- :func:`measure_memory`: the peak bytes the CPU allocator held during one call of full attention
  (:func:`mha.functional.scaled_dot_product_attention`, which holds the (H, L, L) scores) and of
  :func:`mha.experiments.flash.tiled_attention` (which holds one (H, Br, Bc) tile of them), read by the profiler
  (:func:`mha.experiments.timing.peak_allocated_bytes`): the lab runs it in a child process
  (:mod:`mha.experiments.isolated`).
- :func:`sdpa_backends`: ``torch.nn.functional.scaled_dot_product_attention`` under each of
  ``torch.nn.attention.sdpa_kernel``'s CPU and CUDA backends (math, flash, efficient, cudnn; ``OVERRIDEABLE``,
  for other devices, is left out): which run on this machine
  (a backend that cannot raises ``RuntimeError``), their difference from the math backend and their median time.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import torch
from torch.nn import functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from mha.experiments.flash import tiled_attention
from mha.experiments.timing import peak_allocated_bytes, time_calls
from mha.functional import scaled_dot_product_attention
from mha.masks import causal_mask

__all__ = [
    "BACKENDS",
    "MEMORY_LENGTHS",
    "MEMORY_METHODS",
    "BackendRow",
    "MemoryRow",
    "flash_cost_as_json",
    "measure_memory",
    "sdpa_backends",
]

MEMORY_METHODS = ("full", "tiled")
MEMORY_LENGTHS = (64, 128, 256, 512, 1024)
BACKENDS = ("math", "flash", "efficient", "cudnn")
_BACKEND_OF = {
    "math": SDPBackend.MATH,
    "flash": SDPBackend.FLASH_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
}


@dataclass(frozen=True)
class MemoryRow:
    """One method at one length: the measured peak and the largest score matrix it holds at once."""

    method: str  # "full" or "tiled"
    length: int
    peak_bytes: int  # measured by the profiler
    largest_cells: int  # cells of the largest score matrix held: H·L·L (full) or H·Br·Bc (tiled)


@dataclass(frozen=True)
class BackendRow:
    """One sdpa backend on this machine: whether it ran, and if so its time and its difference from math."""

    backend: str
    device: str
    runs: bool
    median_ms: float | None
    max_diff: float | None  # max |output − the math backend's output|
    reason: str  # the first line of the RuntimeError when it does not run, else ""


def measure_memory(
    lengths: Sequence[int],
    block: int,
    num_heads: int = 4,
    head_dim: int = 32,
    causal: bool = False,
    seed: int = 0,
    starting: Callable[[int], None] | None = None,
) -> list[MemoryRow]:
    """Peak allocated bytes of full and tiled attention at each length (CPU, float32, no gradients).

    Args:
        lengths: sequence lengths L.
        block: Br = Bc of the tiled method.
        num_heads, head_dim: H and d of q, k, v (1, H, L, d).
        causal: both under a causal mask (the tiled method then skips the tiles above the diagonal).
        seed: seeds q, k, v.
        starting: called with each length before it is measured (the page's progress).
    """
    generator = torch.Generator().manual_seed(seed)
    rows = []
    for length in lengths:
        if starting is not None:
            starting(length)
        q, k, v = torch.randn(3, 1, num_heads, length, head_dim, generator=generator, device="cpu")  # 3 x (1, H, L, d)
        mask = causal_mask(length) if causal else None  # (1, 1, L, L) or None
        calls = {
            "full": lambda q=q, k=k, v=v, mask=mask: scaled_dot_product_attention(q, k, v, mask),
            "tiled": lambda q=q, k=k, v=v, mask=mask: tiled_attention(q, k, v, block, block, mask, keep_steps=False),
        }
        cells = {"full": num_heads * length * length, "tiled": num_heads * min(block, length) ** 2}
        rows += [MemoryRow(name, length, peak_allocated_bytes(call), cells[name]) for name, call in calls.items()]
    return rows


def sdpa_backends(
    length: int = 512,
    num_heads: int = 4,
    head_dim: int = 64,
    repeats: int = 5,
    device: str | None = None,
    seed: int = 0,
) -> list[BackendRow]:
    """Try ``F.scaled_dot_product_attention`` under each backend of :data:`BACKENDS`; time those that run.

    On CUDA in float16 (the fused kernels' type), on the CPU in float32.

    Args:
        length, num_heads, head_dim: L, H and d of q, k, v (1, H, L, d), causal.
        repeats: timed rounds (:func:`mha.experiments.timing.time_calls`).
        device: ``"cpu"`` or ``"cuda"``; ``None``: CUDA where it is present.
        seed: seeds q, k, v.
    """
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = torch.float16 if device == "cuda" else torch.float32
    generator = torch.Generator().manual_seed(seed)
    q, k, v = torch.randn(3, 1, num_heads, length, head_dim, generator=generator, device="cpu").to(
        device, dtype
    )  # 3 x (1,H,L,d)

    def call(backend: str):
        def attend():
            with sdpa_kernel(_BACKEND_OF[backend]):
                out = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (1, H, L, d)
            if device == "cuda":
                torch.cuda.synchronize()
            return out

        return attend

    outputs, reasons = {}, {}
    for backend in BACKENDS:
        try:
            with torch.inference_mode():
                outputs[backend] = call(backend)().float()
        except RuntimeError as error:
            reasons[backend] = (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
    running = [backend for backend in BACKENDS if backend in outputs]
    timings = dict(zip(running, time_calls([call(b) for b in running], repeats), strict=True)) if running else {}
    reference = outputs.get("math")
    return [
        BackendRow(
            backend,
            device,
            backend in outputs,
            timings[backend].median_s * 1e3 if backend in timings else None,
            float((outputs[backend] - reference).abs().max()) if backend in outputs and reference is not None else None,
            reasons.get(backend, ""),
        )
        for backend in BACKENDS
    ]


def flash_cost_as_json(
    lengths: list[int],
    block: int,
    num_heads: int,
    head_dim: int,
    causal: bool,
    repeats: int,
    seed: int = 0,
    progress: Callable[..., None] | None = None,
) -> dict:
    """Both measurements as JSON (the child's side of lab 13, :data:`mha.experiments.isolated.MEASUREMENTS`).

    ``progress(part=, length=, done=, total=)`` is told before each part starts: the memory at each length
    (``part="memory"``), then the backends (``part="backends"``, at the longest length); ``done`` parts of ``total``.
    """
    total, done = len(lengths) + 1, itertools.count()

    def starting(part: str, length: int) -> None:
        if progress is not None:
            progress(part=part, length=int(length), done=next(done), total=total)

    memory = measure_memory(lengths, block, num_heads, head_dim, causal, seed, lambda n: starting("memory", n))
    starting("backends", max(lengths))
    backends = sdpa_backends(max(lengths), num_heads, head_dim, repeats, seed=seed)
    return {"memory": [asdict(row) for row in memory], "backends": [asdict(row) for row in backends]}
