"""Training with fewer key/value heads and rotary positions: what the heads learn, per task.

Each sequence task trained at the page's trained size (d_model 64) with 2 and 4 query heads, with as many K/V
heads as query heads (MHA), half as many (GQA) and one (MQA), and with learned positions (the link's
``positional=sinusoidal``: a trained model learns its own position vectors) or RoPE (no position vectors; q and
k rotated by position in every layer). Per configuration, over the seeds: the median and lowest accuracy on the
evaluation sequences, the median steps (sharpening included) and the median wall time of ``train(...)`` (one
CPU thread, as the service runs it), the heads' difference at the end of training (mean total-variation distance
between every two heads on the sample sequences' scored rows, per layer: 0 alike, 1 apart); then every head's
label and share, as the page labels them (``mha.head_labels.label_heads`` on the sample sequence).

Run: ``PYTHONPATH=. .venv/bin/python -m bench.gqa_training [--quick]`` (markdown), or
``python -m bench --only gqa_training``.
"""

from __future__ import annotations

import statistics
import sys
import time

from bench.table import Table, format_table
from bench.training import _labels as head_labels
from mha.config import ROPE_BASE

TITLE = "Training with fewer K/V heads (GQA, MQA) and RoPE: accuracy, steps, time, head labels"

TASKS = ("previous", "previous_and_first", "previous_and_last_digit", "induction")
D_MODEL = 64
HEADS = (2, 4)
POSITIONS = (("learned", None), ("RoPE", ROPE_BASE))
SEEDS, QUICK_SEEDS = 3, 1


def kv_choices(num_heads: int) -> list[int]:
    """As many K/V heads as query heads, half as many, one (each once)."""
    return sorted({num_heads, num_heads // 2, 1}, reverse=True)


def _configs(quick: bool) -> list[tuple[str, int, int, str, float | None]]:
    """Every (task, h, h_kv, positions, RoPE base); quick: the first two tasks at 2 heads."""
    tasks, heads_choices = (TASKS[:2], HEADS[:1]) if quick else (TASKS, HEADS)
    return [
        (task, heads, kv, name, base)
        for task in tasks
        for heads in heads_choices
        for kv in kv_choices(heads)
        for name, base in POSITIONS
    ]


def run(quick: bool) -> list[Table]:
    """The table per configuration and the head labels per configuration and seed (quick: a few seconds' subset)."""
    from mha.training import train

    seeds = QUICK_SEEDS if quick else SEEDS
    summary, labels = [], []
    for task, heads, kv, positions, base in _configs(quick):
        times, steps, accuracies, differences = [], [], [], []
        for seed in range(seeds):
            start = time.perf_counter()
            model, history = train(task, D_MODEL, heads, seed, num_kv_heads=kv, rope_base=base)
            times.append(time.perf_counter() - start)
            steps.append(history.steps)
            accuracies.append(100 * history.accuracy)
            differences.append([layer[-1] for layer in history.head_difference])
            labels.append(
                (
                    task,
                    heads,
                    kv,
                    positions,
                    seed,
                    f"{100 * history.accuracy:.1f}",
                    " · ".join(head_labels(model, history, task, None)),
                )
            )
        per_layer = zip(*differences, strict=True)  # per layer, one per seed
        summary.append(
            (
                task,
                heads,
                kv,
                positions,
                f"{statistics.median(accuracies):.1f}",
                f"{min(accuracies):.1f}",
                f"{statistics.median(steps):.0f}",
                f"{statistics.median(times):.2f}",
                " / ".join(f"{statistics.median(layer):.2f}" for layer in per_layer),
            )
        )
    notes = (
        f"d_model {D_MODEL}; seeds 0..{seeds - 1}; h query heads, h_kv K/V heads (query head i reads K/V head "
        "i // (h / h_kv)). positions: learned = the trained model's own position vectors (what "
        "`positional=sinusoidal` or `none` trains), RoPE = no position vectors, q and k rotated by position (base "
        "10000). Adam lr 3e-3, to 99 % batch accuracy on two steps in a row, then the sharpening steps; the step cap "
        "as the page's. Accuracy on 1,024 fresh sequences. apart: the heads' difference at the last step (mean "
        "total-variation distance between every two heads, 0 alike, 1 apart; induction: layer 0 / layer 1). One CPU "
        "thread per training; medians over the seeds.",
    )
    columns = ("task", "h", "h_kv", "positions", "median acc %", "min acc %", "median steps", "median s", "apart")
    table = Table(f"Training with fewer K/V heads and RoPE at d_model {D_MODEL}", columns, tuple(summary), notes)
    label_notes = (
        "Labels on the sample sequence (the timeline's last snapshot), as the page gives them: layer, head, label, "
        "share.",
    )
    label_table = Table(
        "Head labels per configuration and seed",
        ("task", "h", "h_kv", "positions", "seed", "acc %", "labels"),
        tuple(labels),
        label_notes,
    )
    return [table, label_table] if quick else [table, label_table, _digits_table(seeds)]


#: The digits' ViT (patch 2): learned positions or RoPE, with as many K/V heads as query heads or one.
DIGITS_CONFIGS = (
    (2, 2, "learned", None),
    (2, 1, "learned", None),
    (2, 2, "RoPE", ROPE_BASE),
    (2, 1, "RoPE", ROPE_BASE),
)


def _digits_table(seeds: int) -> Table:
    """Held-out accuracy of the digits' ViT (its fixed 350-step schedule) per configuration, seeds 0..seeds-1."""
    from mha.training import train

    rows = []
    for heads, kv, positions, base in DIGITS_CONFIGS:
        accuracies, times = [], []
        for seed in range(seeds):
            start = time.perf_counter()
            _, history = train("digits", D_MODEL, heads, seed, num_kv_heads=kv, rope_base=base)
            times.append(time.perf_counter() - start)
            accuracies.append(100 * history.accuracy)
        rows.append(
            (
                heads,
                kv,
                positions,
                f"{statistics.median(accuracies):.1f}",
                f"{min(accuracies):.1f}–{max(accuracies):.1f}",
                f"{statistics.median(times):.1f}",
            )
        )
    notes = (
        f"The digits' ViT (d_model {D_MODEL}, patch 2: [CLS] + 16 patches, two Pre-Norm blocks, 350 steps), "
        f"seeds 0..{seeds - 1}; accuracy on the 364 held-out digits (a validation accuracy: the recipe was chosen on "
        "them). RoPE: no position vectors, q and k turned by token order ([CLS] 0, then the patches row by row).",
    )
    columns = ("h", "h_kv", "positions", "median acc %", "range %", "median s")
    return Table("The digits' ViT with fewer K/V heads and RoPE", columns, tuple(rows), notes)


if __name__ == "__main__":
    for result in run(quick="--quick" in sys.argv[1:]):
        print(format_table(result, "markdown"), end="\n\n")
