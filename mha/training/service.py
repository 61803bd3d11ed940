"""One training service per process (a :class:`~mha.jobs.JobService`): every finished model shared, each trained
once, a few at a time.

Sessions ask for a model by its :class:`~mha.config.WeightSpec`. A finished model is kept
(the most recent :data:`CACHE_SIZE`) and handed to every session that asks; a session
asking for a model already in training joins that training instead of starting another;
at most ``LIMITS.train_concurrent`` trainings run at once and the others wait in line,
first come first served, each knowing its place. A session may stop watching; a training
nobody watches any more stops (a script waiting in :meth:`TrainingService.result` counts
as a watcher until it has its model). Stopped and failed trainings keep no model.

Training is a pure function of the spec (see :mod:`mha.training.loop`), so which session
triggers it, and when, does not change the weights. The spec names the accelerator it trains on (``device``; none:
the CPU), so a model trained on a GPU and one trained on the CPU are two entries, never mistaken for each other.
A training whose accelerator ran out of memory trains on the CPU (:func:`train_spec`): its model is the CPU's, so its
:class:`TrainedModel` names the CPU's spec, and it is kept under the spec asked for (the page that asked finds it, its
history saying where it ran and why, instead of running out of memory again) and under the CPU's spec (a page on the
CPU finds the same weights, its history without the out of memory).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from mha.config import LIMITS, TRAINED, WeightSpec
from mha.jobs import Job, JobService, shared_service
from mha.memory import on_device_or_cpu
from mha.training.loop import TrainingHistory, TrainingStoppedError, train
from mha.training.model import Model
from mha.training.tasks import task_layers

__all__ = [
    "CACHE_SIZE",
    "SERVICE_NAME",
    "Progress",
    "TrainedModel",
    "TrainingJob",
    "TrainingService",
    "trained_spec_of",
    "training_service",
]

CACHE_SIZE = 16  # finished models kept per process (each a few MB at most, see docs/PERFORMANCE.md, "Limits")

#: ``(spec, on_step, should_stop) -> (model, history)``; the service's default trains with :func:`train`.
Trainer = Callable[[WeightSpec, Callable[[int, float, float], None], Callable[[], bool]], tuple[Model, TrainingHistory]]


@dataclass(frozen=True)
class TrainedModel:
    """A finished training: the model (read-only) and its history; ``spec`` is the spec of the weights it holds (the
    CPU's, ``device`` None, where the accelerator asked for ran out of memory: :func:`trained_spec_of`)."""

    spec: WeightSpec
    model: Model
    history: TrainingHistory


@dataclass(frozen=True)
class Progress:
    """What the page shows while it waits: a copy, safe to read while the training goes on.

    ``state``: ``queued``, ``running``, ``done``, ``stopped`` or ``failed``; ``place`` is
    the place in line (1 = next) while queued.
    """

    state: str
    place: int
    step: int
    max_steps: int
    losses: tuple[float, ...]
    accuracies: tuple[float, ...]
    error: str = ""


def train_spec(
    spec: WeightSpec, on_step: Callable[[int, float, float], None], should_stop: Callable[[], bool]
) -> tuple[Model, TrainingHistory]:
    """:func:`~mha.training.loop.train` for a trained-weights spec (its key/value heads and RoPE base included), on
    the spec's device (``spec.device``; ``None``: the CPU). Where that accelerator runs out of memory, the training
    starts again on the CPU (its steps so far are reported again) and its history says so (``out_of_memory``)."""
    if spec.kind != TRAINED or spec.task is None or spec.d_model is None or spec.num_heads is None:
        raise ValueError(f"not a trained-weights spec: {spec}")
    task, d_model, num_heads = spec.task, spec.d_model, spec.num_heads

    def on(device: torch.device) -> tuple[Model, TrainingHistory]:
        return train(
            task,
            d_model,
            num_heads,
            spec.seed or 0,
            text=spec.text,
            patch=spec.patch or 2,
            num_kv_heads=spec.num_kv_heads,
            rope_base=spec.rope_base,
            on_step=on_step,
            should_stop=should_stop,
            device=device,
        )

    def size() -> dict[str, object]:
        return {"d_model": d_model, "heads": num_heads, "layers": task_layers(task)}

    placed = on_device_or_cpu(on, torch.device(spec.device or "cpu"), size)
    model, history = placed.value
    return model, dataclasses.replace(history, out_of_memory=placed.out_of_memory)


def trained_spec_of(spec: WeightSpec, history: TrainingHistory) -> WeightSpec:
    """The spec whose weights a training of ``spec`` made: ``spec``, or the CPU's (``device`` None) where the
    accelerator it names ran out of memory and it trained on the CPU (``history.out_of_memory``)."""
    if isinstance(history, TrainingHistory) and history.out_of_memory is not None:
        return dataclasses.replace(spec, device=None)
    return spec


@dataclass(eq=False)
class TrainingJob(Job[WeightSpec, TrainedModel]):
    """One training of one spec (its key); the sessions that watch it share it."""

    max_steps: int
    step: int = 0
    losses: list[float] = field(default_factory=list)
    accuracies: list[float] = field(default_factory=list)

    @property
    def spec(self) -> WeightSpec:
        """The spec trained: the job's key."""
        return self.key

    def record(self, step: int, loss: float, accuracy: float) -> None:
        """The trainer's per-step callback. A step not after the last one is a training begun again (on the CPU, after
        its device ran out of memory): its curves begin again."""
        if step <= self.step:
            self.losses.clear()
            self.accuracies.clear()
        self.losses.append(loss)
        self.accuracies.append(accuracy)
        self.step = step


class TrainingService(JobService[WeightSpec, TrainedModel, TrainingJob]):
    """Trains models for specs in background threads (see the module docstring and :mod:`mha.jobs`).

    Args:
        max_running: trainings at once (default ``LIMITS.train_concurrent``).
        cache_size: finished models kept.
        trainer: what trains one spec (tests pass a slow or counting one).
    """

    stopped_errors = (TrainingStoppedError,)

    def __init__(self, max_running: int | None = None, cache_size: int = CACHE_SIZE, trainer: Trainer = train_spec):
        super().__init__(LIMITS.train_concurrent if max_running is None else max_running, cache_size)
        self._trainer = trainer

    def request(self, spec: WeightSpec, watcher: str) -> TrainingJob | TrainedModel:
        """The finished model, or the training of ``spec`` (joined or started, in line) that ``watcher`` now watches."""
        found = self._request(spec, lambda: TrainingJob(spec, LIMITS.train_steps_max), watcher)
        assert found is not None  # no limit on the trainings waiting
        return found

    def progress(self, job: TrainingJob) -> Progress:
        """A copy of ``job``'s progress, with its place in line."""
        with self._lock:
            return Progress(
                job.state, self.place(job), job.step, job.max_steps, tuple(job.losses), tuple(job.accuracies), job.error
            )

    def result(self, spec: WeightSpec, timeout: float | None = None) -> TrainedModel:
        """The finished model for ``spec``, training it (or waiting for its training) first.

        Raises:
            RuntimeError: the training failed or was stopped, or ``timeout`` seconds passed.
        """
        watcher = f"result-{threading.get_ident()}-{id(spec)}"
        found = self.request(spec, watcher)
        if isinstance(found, TrainedModel):
            return found
        try:
            if not found.finished.wait(timeout):
                raise RuntimeError(f"training {spec} did not finish within {timeout} s")
        finally:
            self.leave(found, watcher)
        if found.result is None:
            raise RuntimeError(f"training {spec} {found.state}: {found.error}")
        return found.result

    def _work(self, job: TrainingJob) -> TrainedModel:
        model, history = self._trainer(job.key, job.record, job.stop.is_set)
        return TrainedModel(trained_spec_of(job.key, history), model, history)

    def _kept(self, job: TrainingJob) -> dict[WeightSpec, TrainedModel]:
        """Under the spec asked for; where it trained on the CPU instead, under the CPU's spec too, for a page on the
        CPU (which ran out of nothing)."""
        result = job.result
        if result is None:
            return {}
        kept = {job.key: result}
        if result.spec != job.key:
            kept[result.spec] = dataclasses.replace(
                result, history=dataclasses.replace(result.history, out_of_memory=None)
            )
        return kept


#: The training service's name among the process's services (:func:`mha.jobs.shared_service`).
SERVICE_NAME = "training"


def training_service() -> TrainingService:
    """The process's training service (made on first use)."""
    return shared_service(SERVICE_NAME, TrainingService)
