"""Lab 14's two bargains across L: softmax against linear attention, and a dense masked run against the
block-skipping sparse run (BigBird's pattern: one window block each side, one global block, one random block).

One head, random q, k, v of size d, float32 on the CPU; medians of the timed rounds
(:func:`mha.experiments.efficient_cost.measure_efficient_steady`) and the profiler's peak allocation, measured in a
child process (:mod:`mha.experiments.isolated`) so the profiler's log stays out of the table.

Run: ``python -m bench --only efficient [--quick] [--markdown]``.
"""

from __future__ import annotations

from bench.table import Table
from mha.experiments.efficient_cost import EfficientRow, crossover, measure_efficient_isolated

TITLE = "Linear vs softmax attention, dense masked vs block-skipping sparse, across L"

LENGTHS = (32, 64, 128, 256, 512, 1024, 2048, 4096)
QUICK_LENGTHS = (32, 64, 128, 256)
HEAD_DIM, BLOCK = 64, 64
REPEATS, QUICK_REPEATS = 7, 3
_MIB = 2**20


def _by(rows: list[EfficientRow]) -> dict[tuple[str, int], EfficientRow]:
    return {(row.method, row.length): row for row in rows}


def _where(rows: list[EfficientRow], dearer: str, cheaper: str) -> str:
    found = [crossover(rows, dearer, cheaper, column) for column in ("seconds", "peak_bytes")]
    return ", ".join(
        f"{what} from L = {length}" if length is not None else f"{what}: not by L = {max(r.length for r in rows)}"
        for what, length in zip(("time", "memory"), found, strict=True)
    )


def run(quick: bool) -> list[Table]:
    """The two tables."""
    lengths = QUICK_LENGTHS if quick else LENGTHS
    steady = measure_efficient_isolated(
        lengths, 1, HEAD_DIM, BLOCK, QUICK_REPEATS if quick else REPEATS, timeout_s=900, limit=None
    )
    rows = steady.result
    row = _by(rows)
    trust = f"{steady.attempts} measurement(s); times that broke their work's growth: " + (
        "none" if steady.trusted else "; ".join(f"{b.series} {b.size_from}->{b.size_to}" for b in steady.breaks)
    )
    linear = Table(
        title=f"Softmax vs linear attention (one head, d = {HEAD_DIM})",
        columns=("L", "softmax ms", "linear ms", "softmax / linear", "softmax MiB", "linear MiB"),
        rows=tuple(
            (
                n,
                f"{row['softmax', n].seconds * 1e3:.3f}",
                f"{row['linear', n].seconds * 1e3:.3f}",
                f"{row['softmax', n].seconds / row['linear', n].seconds:.2f}x",
                f"{row['softmax', n].peak_bytes / _MIB:.2f}",
                f"{row['linear', n].peak_bytes / _MIB:.2f}",
            )
            for n in lengths
        ),
        notes=(
            f"Linear attention costs less: {_where(rows, 'softmax', 'linear')} (measured; the multiply-adds are "
            f"equal at L = d = {HEAD_DIM}).",
            trust,
        ),
    )
    sparse = Table(
        title=f"Dense, dense masked and block-skipping sparse (BigBird pattern, block {BLOCK}, d = {HEAD_DIM})",
        columns=("L", "dense ms", "masked ms", "blocks ms", "dense MiB", "masked MiB", "blocks MiB"),
        rows=tuple(
            (
                n,
                f"{row['dense', n].seconds * 1e3:.3f}",
                f"{row['dense_masked', n].seconds * 1e3:.3f}",
                f"{row['block_sparse', n].seconds * 1e3:.3f}",
                f"{row['dense', n].peak_bytes / _MIB:.2f}",
                f"{row['dense_masked', n].peak_bytes / _MIB:.2f}",
                f"{row['block_sparse', n].peak_bytes / _MIB:.2f}",
            )
            for n in lengths
        ),
        notes=(
            "The mask saves nothing (dense and masked alike); computing only the kept blocks costs less: "
            + _where(rows, "dense_masked", "block_sparse")
            + ".",
        ),
    )
    return [linear, sparse]
