"""Training a :class:`~mha.training.model.TaskModel` on a task: to an accuracy target, with a cap, then sharpening;
or (the digits) a fixed number of steps.

``train(task, d_model, num_heads, seed)`` (with ``num_kv_heads``, ``rope_base``: grouped key/value heads, rotary
positions) is a pure function of its arguments: the parameters, the training batches, the sample sequence and the
evaluation sequences each come from their own ``torch.Generator`` seeded from (seed, task, purpose); the global
RNG is never touched. ``device`` is where the model trains: every draw is made on the CPU, from those CPU
generators, and moved there, so an accelerator trains on the same data from the same parameters (its sums in
another order: its weights are not the CPU's to the last bit); on the CPU the weights are bit-identical run to run.

AdamW as the task's :class:`~mha.training.tasks.Recipe` says (the text tasks: lr 3e-3, no weight decay, i.e. Adam)
on batches of fresh sequences (128, or the task's own ``batch``); every step's batch accuracy is recorded. Once it
reaches the target on two steps in a row, training goes on for the recipe's ``sharpen_steps`` more steps (a plateau can
end just before it: the heads sharpen), and stops at ``max_steps`` in any case. A recipe with a fixed
schedule (the digits: 350 steps, the learning rate annealed along a cosine) takes its steps
whatever the accuracy (at most ``max_steps``; the schedule then fits in them). Each step computes only
what reaches the loss (the model's ``logits``: in the digits' last block, [CLS]'s row alone).
The accuracy reported is measured afterwards on the task's evaluation sequences
(:meth:`~mha.training.tasks.Task.evaluation_sequences`): fresh ones from their own generator, the orders
unscramble set aside before its first step (:meth:`~mha.training.tasks.Task.hold_out`), or the digits'
held-out images, none of which a training batch contains.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
from torch import Tensor
from torch.nn import functional as F

from mha.config import LIMITS
from mha.memory import CPU, OutOfMemory
from mha.training.model import Model
from mha.training.tasks import IGNORE, Recipe, Task, make_task

__all__ = [
    "BATCH_SIZE",
    "LEARNING_RATE",
    "SHARPEN_STEPS",
    "TARGET_ACCURACY",
    "Snapshot",
    "TrainingHistory",
    "TrainingStoppedError",
    "evaluate",
    "head_difference",
    "train",
]

BATCH_SIZE = 128  # sequences per evaluation batch (and per training step unless the task says otherwise)
LEARNING_RATE = Recipe().learning_rate  # the text tasks'
TARGET_ACCURACY = 0.99
SHARPEN_STEPS = Recipe().sharpen_steps  # the text tasks'
RECORD_EVERY = 5  # steps between two records of the heads (difference and snapshot)
SNAPSHOTS_MAX = 40  # snapshots kept; when more, every other one is dropped and the interval doubles
EVAL_SEQUENCES = 1024
PROBE_SEQUENCES = 16  # the sample sequence (the first) and 15 more for the heads' difference


class TrainingStoppedError(Exception):
    """Training was stopped on request before it finished (nothing is kept)."""

    def __init__(self, step: int) -> None:
        super().__init__(f"training stopped at step {step}")
        self.step = step


@dataclass(frozen=True)
class Snapshot:
    """The heads at one step: each layer's weights on the sample sequence, (H, L, L) per layer."""

    step: int
    weights: tuple[Tensor, ...]


@dataclass(frozen=True)
class TrainingHistory:
    """What happened during training, for the page's curves and timeline (read-only)."""

    task: str
    steps: int  # steps taken, sharpening included
    target_step: int | None  # the step the target was reached at (None: the cap came first)
    losses: tuple[float, ...]  # one per step, on that step's batch
    accuracies: tuple[float, ...]  # one per step, on that step's batch (before its update)
    record_steps: tuple[int, ...]  # the steps the heads' difference was recorded at
    head_difference: tuple[tuple[float, ...], ...]  # per layer, one per record step
    snapshots: tuple[Snapshot, ...]  # thinned: at most SNAPSHOTS_MAX + 1, the first and last steps included
    probe: Tensor  # (L,) ids of the sample sequence the snapshots show (digits: the sample image's index, 0-d)
    accuracy: float  # on the task's evaluation sequences
    evaluation: str  # what they are: "fresh", "held_out", "every_order" or "held_out_images" (mha.training.tasks)
    sequences: int  # how many
    evaluated: int  # predictions behind ``accuracy``
    seconds: float
    device: str = "cpu"  # the type of the device it trained on ("cuda", "mps", "cpu")
    out_of_memory: OutOfMemory | None = None  # the device asked for ran out of memory: it trained on the CPU


def _sub_seed(seed: int, task: str, purpose: str) -> int:
    """A 63-bit seed for one purpose (init, data, probe, eval) of one training run."""
    digest = hashlib.blake2b(f"{seed}\x00{task}\x00{purpose}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & ((1 << 63) - 1)


def _generator(seed: int, task: str, purpose: str) -> torch.Generator:
    return torch.Generator().manual_seed(_sub_seed(seed, task, purpose))


def _loss_and_accuracy(logits: Tensor, targets: Tensor) -> tuple[Tensor, float]:
    """Cross-entropy over the scored outputs and the share of them predicted right."""
    classes = logits.size(-1)
    loss = F.cross_entropy(logits.reshape(-1, classes), targets.reshape(-1), ignore_index=IGNORE)  # (B*R*L, C)
    scored = targets != IGNORE
    right = (logits.argmax(dim=-1) == targets) & scored  # (B, R, L)
    return loss, float(right.sum()) / max(int(scored.sum()), 1)


def head_difference(weights: Tensor, rows: Tensor) -> float:
    """Mean total-variation distance between every two heads, over the rows that count.

    TV(p, q) = ½ Σ_k |p_k − q_k|: 0 when two heads attend alike, 1 when they look at
    different keys. ``weights`` (B, H, L, L), ``rows`` (B, L) bool; 0 for one head.
    """
    heads = weights.size(1)
    if heads < 2 or not bool(rows.any()):
        return 0.0
    pairs = torch.triu_indices(heads, heads, offset=1, device=weights.device)  # (2, P)
    gaps = (weights[:, pairs[0]] - weights[:, pairs[1]]).abs().sum(dim=-1) / 2  # (B, P, L)
    return float(gaps.mean(dim=1)[rows].mean())  # mean over pairs, then over the rows that count


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """Run on one intra-op thread (per calling thread with OpenMP), then restore the caller's count.

    The tensors are small: a second thread only waits for the first, and on a busy machine
    (other sessions, other trainings) waiting threads made training several times slower.
    """
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def evaluate(model: Model, task: Task, sequences: Tensor, device: torch.device = CPU) -> tuple[float, int]:
    """The share of right predictions of ``task``'s outputs on ``sequences`` ((N, L) ids; digits and reviews: (N,)
    indices into their data, on the CPU), and how many predictions; ``model`` is on ``device``."""
    right = scored = 0
    attention_mask = task.training_mask(task.length, device)
    with torch.no_grad():
        for ids in sequences.split(BATCH_SIZE):  # (≤ BATCH_SIZE, L) (digits: (≤ BATCH_SIZE,))
            targets = task.targets(ids).to(device)
            logits, _ = model(task.inputs(ids).to(device), attention_mask)
            mask = targets != IGNORE
            right += int(((logits.argmax(dim=-1) == targets) & mask).sum())
            scored += int(mask.sum())
    return right / max(scored, 1), scored


class _Recorder:
    """The heads' difference at every record step and thinned snapshots on the sample sequence (the model and its
    inputs on the training's device, the snapshots kept on the CPU: the page draws them)."""

    def __init__(self, task: Task, probe: Tensor, device: torch.device = CPU) -> None:
        self.task, self.probe = task, probe  # (P, L) ids (digits: (P,) image indices), on the CPU
        self.inputs = task.inputs(probe).to(device)  # the model's input for the probe
        self.mask = task.training_mask(task.length, device)
        self.rows = [task.scored_rows(probe, layer).to(device) for layer in range(task.layers)]  # per layer (P, L)
        self.steps: list[int] = []
        self.difference: list[list[float]] = [[] for _ in range(task.layers)]
        self.snapshots: list[Snapshot] = []
        self.interval = RECORD_EVERY

    def record(self, model: Model, step: int) -> None:
        if self.steps and self.steps[-1] == step:
            return
        with torch.no_grad():
            _, weights = model(self.inputs, self.mask)  # per layer (P, H, L, L)
        self.steps.append(step)
        for layer, layer_weights in enumerate(weights):
            self.difference[layer].append(head_difference(layer_weights, self.rows[layer]))
        if step % self.interval == 0 or not self.snapshots:
            self.snapshots.append(Snapshot(step, tuple(w[0].to(CPU, copy=True) for w in weights)))
        if len(self.snapshots) > SNAPSHOTS_MAX:
            self.snapshots = self.snapshots[::2]
            self.interval *= 2

    def finish(self, model: Model, step: int) -> None:
        self.record(model, step)
        if self.snapshots[-1].step != step:
            with torch.no_grad():
                _, weights = model(self.inputs[:1], self.mask)
            self.snapshots.append(Snapshot(step, tuple(w[0].to(CPU, copy=True) for w in weights)))


def train(
    task: str,
    d_model: int,
    num_heads: int,
    seed: int,
    *,
    text: str | None = None,
    patch: int = 2,
    num_kv_heads: int | None = None,
    rope_base: float | None = None,
    max_steps: int | None = None,
    target_accuracy: float = TARGET_ACCURACY,
    sharpen_steps: int | None = None,
    on_step: Callable[[int, float, float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    device: torch.device | str = CPU,
) -> tuple[Model, TrainingHistory]:
    """Train a model on ``task``; the same arguments give bit-identical weights (on the CPU; an accelerator's may
    differ in the last bits, run to run).

    Args:
        task: a task name (:data:`mha.config.TASKS`).
        d_model, num_heads: the attention layers' sizes (``num_heads`` divides ``d_model``).
        seed: seeds the parameters, the training data, the sample sequence and the evaluation.
        text: ``unscramble``'s sentence, its tokens joined by single spaces.
        patch: the digits' patch size (2 or 4).
        num_kv_heads: every attention layer's key/value heads, dividing ``num_heads`` (default ``num_heads``).
        rope_base: every attention layer rotates q and k by position (RoPE) with this base, and the model has no
            learned position embedding (:mod:`mha.training.model`, :mod:`mha.training.classifier`); ``None``: learned
            positions, no rotation.
        max_steps: the cap (default ``LIMITS.train_steps_max``), sharpening included.
        target_accuracy: the batch accuracy that ends the first phase (on a fixed schedule: its step is recorded).
        sharpen_steps: steps after the target is reached (default: the task's recipe).
        on_step: called after every step with (step, loss, batch accuracy); steps count from 1.
        should_stop: polled every step; ``True`` raises :class:`TrainingStoppedError`.
        device: where the model trains (the run's device); the data is drawn on the CPU and moved there.

    Runs on one CPU thread (see :func:`_one_thread`), so the weights do not depend on the caller's thread count.

    Returns:
        ``(model, history)``: the model on ``device`` in eval mode without gradients (read-only), and its history
        (on the CPU; its ``device`` says where it trained).

    Raises:
        ValueError: an unknown task, or sizes that do not split (``num_kv_heads`` not dividing ``num_heads``, an odd
            d_k with RoPE).
        TrainingStoppedError: ``should_stop`` said so.
    """
    with _one_thread():
        spec = make_task(task, text, patch).hold_out(_generator(seed, task, "held out"))  # before any training draw
        sharpen = spec.recipe.sharpen_steps if sharpen_steps is None else sharpen_steps
        return _train(
            spec,
            d_model,
            num_heads,
            seed,
            max_steps,
            target_accuracy,
            sharpen,
            on_step,
            should_stop,
            num_kv_heads=num_kv_heads,
            rope_base=rope_base,
            device=torch.device(device),
        )


def _learning_rate(recipe: Recipe, step: int, target_step: int | None, sharpen_steps: int, steps: int) -> float:
    """The learning rate of step ``step`` (from 0): warm-up; then flat and (``anneal``) down to 0 after the target,
    or, on a fixed schedule of ``steps`` steps, down to 0 along a half cosine."""
    rate = recipe.learning_rate
    if step < recipe.warmup_steps:
        return rate * (step + 1) / recipe.warmup_steps
    if recipe.steps is not None:
        done = (step - recipe.warmup_steps) / max(steps - recipe.warmup_steps, 1)
        return rate * 0.5 * (1.0 + math.cos(math.pi * min(done, 1.0)))
    if recipe.anneal and target_step is not None:
        rate *= max(0.0, 1.0 - (step - target_step) / max(sharpen_steps, 1))
    return rate


def _goes_on(step: int, fixed: int | None, target_step: int | None, sharpen_steps: int) -> bool:
    """Whether step ``step`` (from 0) is taken: inside a fixed schedule, or not ``sharpen_steps`` past the target."""
    if fixed is not None:
        return step < fixed
    return target_step is None or step < target_step + sharpen_steps


def _train(
    spec: Task,
    d_model: int,
    num_heads: int,
    seed: int,
    max_steps: int | None,
    target_accuracy: float,
    sharpen_steps: int,
    on_step: Callable[[int, float, float], None] | None,
    should_stop: Callable[[], bool] | None,
    num_kv_heads: int | None = None,
    rope_base: float | None = None,
    device: torch.device = CPU,
) -> tuple[Model, TrainingHistory]:
    """The body of :func:`train`."""
    start = time.perf_counter()
    task = spec.name
    cap = LIMITS.train_steps_max if max_steps is None else max_steps
    model = spec.build_model(d_model, num_heads, _generator(seed, task, "init"), num_kv_heads, rope_base).to(device)
    if spec.recipe.dropout:  # the reviews' encoder: dropout on its embeddings while training, a private mask
        model.dropout, model.dropout_generator = spec.recipe.dropout, _generator(seed, task, "dropout")
    data = _generator(seed, task, "data")
    probe_generator = _generator(seed, task, "probe")
    example = spec.example(probe_generator).unsqueeze(0)  # (1, L): the sequence the page shows (digits: (1,))
    probe = torch.cat([example, spec.sample(PROBE_SEQUENCES - 1, probe_generator)])  # (P, L) (digits: (P,))
    recorder = _Recorder(spec, probe, device)
    mask = spec.training_mask(spec.length, device)
    recipe = spec.recipe
    optimizer = torch.optim.AdamW(model.parameters(), lr=recipe.learning_rate, weight_decay=recipe.weight_decay)
    losses: list[float] = []
    accuracies: list[float] = []
    target_step: int | None = None
    above = 0
    recorder.record(model, 0)
    step = 0
    fixed = None if recipe.steps is None else min(recipe.steps, cap)  # a fixed schedule fits under the cap
    with torch.enable_grad():
        while step < cap and _goes_on(step, fixed, target_step, sharpen_steps):
            if should_stop is not None and should_stop():
                raise TrainingStoppedError(step)
            for group in optimizer.param_groups:
                group["lr"] = _learning_rate(recipe, step, target_step, sharpen_steps, fixed or cap)
            ids = spec.sample(spec.batch, data)  # (B, L) (digits: (B,) image indices), drawn on the CPU
            logits = model.logits(spec.inputs(ids).to(device), mask)
            loss, accuracy = _loss_and_accuracy(logits, spec.targets(ids).to(device))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            step += 1
            losses.append(loss.item())
            accuracies.append(accuracy)
            above = above + 1 if accuracy >= target_accuracy else 0
            if target_step is None and above >= 2:
                target_step = step
            if step % RECORD_EVERY == 0:
                recorder.record(model, step)
            if on_step is not None:
                on_step(step, losses[-1], accuracy)
    model.eval().requires_grad_(False)
    recorder.finish(model, step)
    evaluation = spec.evaluation_sequences(EVAL_SEQUENCES, _generator(seed, task, "eval"))  # (N, L)
    accuracy, evaluated = evaluate(model, spec, evaluation, device)
    history = TrainingHistory(
        task=task,
        steps=step,
        target_step=target_step,
        losses=tuple(losses),
        accuracies=tuple(accuracies),
        record_steps=tuple(recorder.steps),
        head_difference=tuple(tuple(layer) for layer in recorder.difference),
        snapshots=tuple(recorder.snapshots),
        probe=probe[0].clone(),
        accuracy=accuracy,
        evaluation=spec.evaluation,
        sequences=evaluation.size(0),
        evaluated=evaluated,
        seconds=time.perf_counter() - start,
        device=device.type,
    )
    return model, history
