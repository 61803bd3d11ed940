"""Training on the small tasks: time, steps, accuracy and head labels per task; the worst allowed training.

* Per task at the trained default (d_model 64, 2 heads), over several seeds: the median and the
  range of the wall time of ``train(...)`` (one CPU thread, as the service runs it), of the steps
  (sharpening included) and of the accuracy on the evaluation sequences (fresh ones; unscramble: the
  1,024 orders set aside before training); then, per seed, every head's label
  and share on the sample sequence, the labels the timeline's last snapshot shows.
* The worst request the caps allow (``LIMITS.train_d_model_max``, ``train_num_heads_max``,
  ``train_steps_max``, the longest unscramble sentence, and induction's two layers), trained to the
  step cap in a fresh process: wall time and peak RSS over the idle process, and what the finished
  model keeps in memory (parameters and snapshots), which the service caches up to ``CACHE_SIZE`` times.
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

TITLE = "Training: time, steps, accuracy and head labels per task; the worst allowed training"

REPO = Path(__file__).resolve().parents[1]
SENTENCE = "The animal didn't cross the street because it was too tired"
TASKS = ("previous", "previous_and_first", "previous_and_last_digit", "induction", "unscramble")
SEEDS, QUICK_SEEDS = 7, 2
_MB = 2**20


def _labels(model, history, task_name: str, text: str | None) -> list[str]:
    """``L0H1 previous token 0.98`` for every head of every layer, on the sample sequence."""
    from mha.head_labels import label_heads
    from mha.training.tasks import make_task

    task = make_task(task_name, text)
    ids = history.probe
    mask = task.training_mask(ids.numel())
    _, weights = model.layer_inputs(ids.unsqueeze(0), mask)
    out = []
    for layer, layer_weights in enumerate(weights):
        rows = task.scored_rows(ids.unsqueeze(0), layer)[0]
        for head, label in enumerate(label_heads(layer_weights[0], mask, task.relations(ids, layer), rows)):
            out.append(f"L{layer}H{head} {label.name} {label.share:.2f}")
    return out


def _per_task(seeds: int) -> tuple[Table, Table]:
    from mha.training import train

    summary, labels = [], []
    for task in TASKS:
        text = SENTENCE if task == "unscramble" else None
        times, steps, accuracies = [], [], []
        for seed in range(seeds):
            start = time.perf_counter()
            model, history = train(task, 64, 2, seed, text=text)
            times.append(time.perf_counter() - start)
            steps.append(history.steps)
            accuracies.append(100 * history.accuracy)
            labels.append(
                (
                    task,
                    seed,
                    history.steps,
                    f"{100 * history.accuracy:.1f}",
                    " · ".join(_labels(model, history, task, text)),
                )
            )
        summary.append(
            (
                task,
                f"{statistics.median(times):.2f}",
                f"{min(times):.2f}–{max(times):.2f}",
                f"{statistics.median(steps):.0f}",
                f"{min(steps)}–{max(steps)}",
                f"{statistics.median(accuracies):.1f}",
                f"{min(accuracies):.1f}",
            )
        )
    notes = (
        f"d_model 64, 2 heads, seeds 0..{seeds - 1}; unscramble on “{SENTENCE}” (11 words). Adam lr 3e-3, "
        "batch 128 (induction 64); to 99 % batch accuracy on two steps in a row, then 100 sharpening steps; the cap is "
        f"{LIMITS.train_steps_max} steps. Accuracy on 1,024 fresh sequences (unscramble: 1,024 orders set aside "
        "before training, which no step drew). One CPU thread per training.",
    )
    columns = ("task", "median s", "s range", "median steps", "steps range", "median acc %", "min acc %")
    table = Table("Training per task at d_model 64, 2 heads", columns, tuple(summary), notes)
    label_notes = ("Labels on the sample sequence (the timeline's last snapshot): layer, head, label, share.",)
    label_table = Table(
        "Head labels per task and seed", ("task", "seed", "steps", "acc %", "labels"), tuple(labels), label_notes
    )
    return table, label_table


def measure_worst(task: str, steps: int) -> dict[str, float]:
    """Train ``task`` at the caps to ``steps`` steps in this process (call it in a fresh one); seconds and MiB."""
    import psutil

    from mha.training import train

    words = " ".join(f"w{i}" for i in range(LIMITS.unscramble_words_max))
    text = words if task == "unscramble" else None
    train(task, 8, 2, 0, text=text, max_steps=2)  # warm-up: every import and allocator in the baseline
    baseline = psutil.Process().memory_info().rss
    start = time.perf_counter()
    model, history = train(
        task, LIMITS.train_d_model_max, LIMITS.train_num_heads_max, 0, text=text, max_steps=steps, target_accuracy=2.0
    )
    seconds = time.perf_counter() - start
    peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - baseline) / _MB
    kept = sum(p.numel() * p.element_size() for p in model.parameters())
    kept += sum(w.numel() * w.element_size() for snapshot in history.snapshots for w in snapshot.weights)
    length = float(history.probe.numel())
    return {"seconds": seconds, "steps": float(history.steps), "peak_mib": peak, "kept_mib": kept / _MB,
            "length": length}  # fmt: skip


def _worst_in_child(task: str, steps: int) -> dict[str, float]:
    argument = json.dumps([task, steps])
    done = subprocess.run(
        [sys.executable, "-m", "bench.training", argument], cwd=REPO, capture_output=True, text=True, timeout=1800
    )
    if done.returncode != 0:
        raise RuntimeError(f"training case {argument} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(quick: bool) -> list[Table]:
    """The per-task table, the labels per seed, and the worst allowed training."""
    per_task, labels = _per_task(QUICK_SEEDS if quick else SEEDS)
    steps = 50 if quick else LIMITS.train_steps_max
    rows = []
    for task in ("unscramble", "induction"):
        r = _worst_in_child(task, steps)
        rows.append(
            (
                f"{task} (L {int(r['length'])}{', 2 layers' if task == 'induction' else ''})",
                f"{LIMITS.train_d_model_max} / {LIMITS.train_num_heads_max}",
                f"{r['steps']:.0f}",
                f"{r['seconds']:.1f}",
                f"{1000 * r['seconds'] / r['steps']:.1f}",
                f"{r['peak_mib']:.0f}",
                f"{r['kept_mib']:.1f}",
            )
        )
    notes = (
        f"Trained to the step cap (the accuracy target set out of reach) in a fresh process; unscramble on "
        f"{LIMITS.unscramble_words_max} words (the cap). peak MiB: ru_maxrss minus the RSS after a tiny warm-up "
        "training. "
        "kept MiB: what the service caches for the model (parameters and timeline snapshots).",
        f"At most {LIMITS.train_concurrent} trainings run at once per process; the others wait in line.",
    )
    columns = ("worst request", "d / heads", "steps", "s", "ms / step", "peak MiB", "kept MiB")
    worst = Table("The worst training the caps allow", columns, tuple(rows), notes)
    return [per_task, labels, worst]


if __name__ == "__main__":
    case_task, case_steps = json.loads(sys.argv[1])
    print(json.dumps(measure_worst(case_task, case_steps)))
