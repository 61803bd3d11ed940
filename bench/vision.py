"""The digits task: training time, steps and held-out accuracy per configuration, over seeds.

Each configuration (d_model, heads, patch) is trained on seeds 0..6 the way the page's training service
trains it (``train("digits", ...)``, one CPU thread): the median and the range of the wall time, of the
steps (annealing included), of the time per step, and of the accuracy on the 364 held-out digits no step
trained on: a validation accuracy (the recipe and the depth were chosen on these digits), not a test accuracy.
Then what the heads learned: each trained model's mean attention distance per head (pixels,
averaged over the held-out digits; 8 × 8 images, so a patch's neighbour is ``patch`` pixels away).
"""

from __future__ import annotations

import statistics
import time

from bench.table import Table

TITLE = "Digits (a small ViT): training time, steps and held-out accuracy per configuration"

#: (d_model, heads, patch): the issue's probe (64, 4, 2) first, then the page's sizes for trained weights (64, 2).
CONFIGS = ((64, 4, 2), (64, 2, 2), (64, 4, 4), (32, 2, 2), (128, 4, 2))
QUICK_CONFIGS = ((64, 4, 2),)
SEEDS, QUICK_SEEDS = 7, 2


def _span(values: list[float], digits: int) -> str:
    return f"{min(values):.{digits}f}–{max(values):.{digits}f}"


def _distances(model, patch: int) -> list[float]:
    """Each head's mean attention distance in pixels over the held-out digits, in the first layer."""
    import torch

    from mha.training.tasks import make_task
    from mha.vision.analysis import mean_attention_distance
    from mha.vision.samples import load_digits

    task = make_task("digits", patch=patch)
    with torch.inference_mode():
        _, weights = model.layer_inputs(task.inputs(load_digits().held_out))  # (B, H, L, L) per layer
    grid = 8 // patch
    return mean_attention_distance(weights[0], grid, grid, patch).pixels.mean(dim=0).tolist()  # (H,), the first layer


def run(quick: bool) -> list[Table]:
    """One row per configuration, and the heads' distances per configuration and seed."""
    from mha.training import train

    rows, distance_rows = [], []
    for d_model, heads, patch in QUICK_CONFIGS if quick else CONFIGS:
        times, steps, per_step, accuracies = [], [], [], []
        for seed in range(QUICK_SEEDS if quick else SEEDS):
            start = time.perf_counter()
            model, history = train("digits", d_model, heads, seed, patch=patch)
            seconds = time.perf_counter() - start
            times.append(seconds)
            steps.append(history.steps)
            per_step.append(1000 * seconds / history.steps)
            accuracies.append(100 * history.accuracy)
            distances = " · ".join(f"{value:.2f}" for value in _distances(model, patch))
            distance_rows.append((f"{d_model} / {heads} / {patch}", seed, f"{accuracies[-1]:.1f}", distances))
        rows.append(
            (
                f"{d_model} / {heads} / {patch}",
                f"{statistics.median(times):.2f}",
                _span(times, 2),
                f"{statistics.median(steps):.0f}",
                _span(steps, 0),
                f"{statistics.median(per_step):.1f}",
                f"{statistics.median(accuracies):.1f}",
                _span(accuracies, 1),
            )
        )
    notes = (
        f"Seeds 0..{(QUICK_SEEDS if quick else SEEDS) - 1} per configuration; one CPU thread per training. Two "
        "Pre-Norm blocks; 350 steps of AdamW, lr 5e-3 (20 warm-up steps, then a cosine to 0), weight decay 0.1, "
        "batches of 128 training digits; each step computes [CLS]'s row alone in the last block (the rest reaches "
        "no loss). Accuracy on the 364 held-out digits (a fixed split, the same for every seed): a validation "
        "accuracy, since the recipe and the depth were chosen on them.",
    )
    columns = ("d / heads / patch", "median s", "s range", "median steps", "steps range", "ms / step",
               "median acc %", "acc % range")  # fmt: skip
    table = Table("Training the digits per configuration", columns, tuple(rows), notes)
    distance_notes = (
        "Mean attention distance per head in pixels ([CLS] left out), over the held-out digits, in the first layer "
        "(in the last only [CLS]'s row carries a loss).",
    )
    distances = Table(
        "What the heads learned: mean attention distance per head",
        ("d / heads / patch", "seed", "acc %", "pixels per head"),
        tuple(distance_rows),
        distance_notes,
    )
    return [table, distances]
