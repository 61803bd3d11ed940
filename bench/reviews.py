"""The reviews task: held-out and validation accuracy, training time and steps per seed, and the bag of characters.

Each seed trains the page's default sizes for trained weights (d_model 64, 2 heads) the way the page's training
service does (``train("reviews", ...)``, one CPU thread). The held-out reviews (the test set) are what the page
reports; the validation reviews are what the recipe, the length and the depth were chosen by. The baseline is
logistic regression on the characters' counts (``mha.text.baseline``), fitted once on the same training split.
"""

from __future__ import annotations

import time

from bench.table import Table

TITLE = "Chinese reviews (a small Transformer): held-out and validation accuracy, training time, baseline"
SIZES = (64, 2)  # d_model, heads: the page's TRAINED_SIZES
SEEDS, QUICK_SEEDS = 3, 1


def run(quick: bool) -> list[Table]:
    """One row per seed, the baseline's accuracy in every row (the same split)."""
    from mha.text.baseline import bag_of_characters
    from mha.text.reviews import load_reviews
    from mha.training import train
    from mha.training.loop import evaluate
    from mha.training.tasks import make_task

    task = make_task("reviews")
    baseline = bag_of_characters(load_reviews())
    rows = []
    for seed in range(QUICK_SEEDS if quick else SEEDS):
        start = time.perf_counter()
        model, history = train("reviews", *SIZES, seed)
        seconds = time.perf_counter() - start
        validation, _ = evaluate(model, task, task.validation_sequences())
        rows.append(
            (
                seed,
                f"{100 * history.accuracy:.1f}",
                f"{100 * validation:.1f}",
                f"{seconds:.1f}",
                history.steps,
                f"{100 * baseline.held_out:.1f}",
                f"{100 * baseline.validation:.1f}",
            )
        )
    notes = (
        f"d_model {SIZES[0]}, {SIZES[1]} heads, {task.layers} Pre-Norm block(s), [CLS] + {task.length - 1} characters; "
        f"{task.recipe.steps} steps of AdamW (lr {task.recipe.learning_rate:g}, {task.recipe.warmup_steps} warm-up "
        f"steps, a cosine to 0, weight decay {task.recipe.weight_decay:g}, dropout {task.recipe.dropout:g} on the "
        f"embeddings), batches of {task.batch}; one CPU thread.",
        "Held out: 1,000 reviews no training step and no choice saw (the page's accuracy). Validation: 1,000 reviews "
        "the recipe, the length and the depth were chosen by. Baseline: a bag of characters (logistic regression on "
        "counts, L-BFGS, L2 1e-3 chosen on validation), the same training split.",
    )
    columns = ("seed", "held-out %", "validation %", "training s", "steps", "baseline held-out %",
               "baseline validation %")  # fmt: skip
    return [Table("Training the reviews per seed", columns, tuple(rows), notes)]
