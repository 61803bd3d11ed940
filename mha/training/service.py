"""One training service per process: every finished model shared, each trained once, a few at a time.

Sessions ask for a model by its :class:`~mha.config.WeightSpec`. A finished model is kept
(the most recent :data:`CACHE_SIZE`) and handed to every session that asks; a session
asking for a model already in training joins that training instead of starting another;
at most ``LIMITS.train_concurrent`` trainings run at once and the others wait in line,
first come first served, each knowing its place. A session may stop watching; a training
nobody watches any more stops (a script waiting in :meth:`TrainingService.result` counts
as a watcher until it has its model). Stopped and failed trainings keep nothing.

Training is a pure function of the spec (see :mod:`mha.training.loop`), so which session
triggers it, and when, does not change the weights. The spec names the accelerator it trains on (``device``; none:
the CPU), so a model trained on a GPU and one trained on the CPU are two entries, never mistaken for each other.
A training whose accelerator ran out of memory trains on the CPU (:func:`train_spec`): its model is the CPU's, so its
:class:`TrainedModel` names the CPU's spec, and it is kept under the spec asked for (the page that asked finds it, its
history saying where it ran and why, instead of running out of memory again) and under the CPU's spec (a page on the
CPU finds the same weights, its history without the out of memory).
"""

from __future__ import annotations

import atexit
import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from mha.config import LIMITS, TRAINED, WeightSpec
from mha.memory import on_device_or_cpu
from mha.training.loop import TrainingHistory, TrainingStoppedError, train
from mha.training.model import Model
from mha.training.tasks import task_layers

__all__ = [
    "CACHE_SIZE",
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


@dataclass
class TrainingJob:
    """One training of one spec; the sessions that watch it share it."""

    spec: WeightSpec
    max_steps: int
    watchers: set[str] = field(default_factory=set)
    state: str = "queued"
    step: int = 0
    losses: list[float] = field(default_factory=list)
    accuracies: list[float] = field(default_factory=list)
    error: str = ""
    result: TrainedModel | None = None
    finished: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def record(self, step: int, loss: float, accuracy: float) -> None:
        """The trainer's per-step callback. A step not after the last one is a training begun again (on the CPU, after
        its device ran out of memory): its curves begin again."""
        if step <= self.step:
            self.losses.clear()
            self.accuracies.clear()
        self.losses.append(loss)
        self.accuracies.append(accuracy)
        self.step = step


class TrainingService:
    """Trains models for specs in background threads (see the module docstring).

    Args:
        max_running: trainings at once (default ``LIMITS.train_concurrent``).
        cache_size: finished models kept.
        trainer: what trains one spec (tests pass a slow or counting one).
    """

    def __init__(self, max_running: int | None = None, cache_size: int = CACHE_SIZE, trainer: Trainer = train_spec):
        self.max_running = LIMITS.train_concurrent if max_running is None else max_running
        self.cache_size = cache_size
        self._trainer = trainer
        self._lock = threading.Condition()
        self._finished: OrderedDict[WeightSpec, TrainedModel] = OrderedDict()
        self._jobs: dict[WeightSpec, TrainingJob] = {}  # queued or running
        self._line: list[TrainingJob] = []  # queued, first come first
        self._running = 0
        self.trainings_started = 0  # how many trainings began (tests: two sessions, one training)

    # ---------------------------------------------------------------- asking
    def finished(self, spec: WeightSpec) -> TrainedModel | None:
        """The finished model for ``spec``, or ``None``."""
        with self._lock:
            found = self._finished.get(spec)
            if found is not None:
                self._finished.move_to_end(spec)
            return found

    def request(self, spec: WeightSpec, watcher: str) -> TrainingJob | TrainedModel:
        """The finished model, or the training of ``spec`` (joined or started, in line) that ``watcher`` now watches."""
        with self._lock:
            found = self._finished.get(spec)
            if found is not None:
                self._finished.move_to_end(spec)
                return found
            job = self._jobs.get(spec)
            if job is None or job.stop.is_set():  # a training being stopped is not joined: a new one starts
                job = TrainingJob(spec, LIMITS.train_steps_max)
                self._jobs[spec] = job
                self._line.append(job)
                job.thread = threading.Thread(target=self._run, args=(job,), name=f"train-{spec.task}", daemon=True)
                job.thread.start()
            job.watchers.add(watcher)
            return job

    def job(self, spec: WeightSpec) -> TrainingJob | None:
        """The queued or running training of ``spec``, if any (one that is being stopped does not count)."""
        with self._lock:
            job = self._jobs.get(spec)
            return None if job is None or job.stop.is_set() else job

    def progress(self, job: TrainingJob) -> Progress:
        """A copy of ``job``'s progress, with its place in line."""
        with self._lock:
            place = self._line.index(job) + 1 if job in self._line else 0
            return Progress(
                job.state, place, job.step, job.max_steps, tuple(job.losses), tuple(job.accuracies), job.error
            )

    def leave(self, job: TrainingJob, watcher: str) -> None:
        """``watcher`` stops watching ``job``; with nobody left watching, the training stops."""
        with self._lock:
            job.watchers.discard(watcher)
            if job.watchers or job.finished.is_set():
                return
            job.stop.set()
            if job in self._line:  # never started: leave the line at once
                self._line.remove(job)
                self._end(job, "stopped")

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

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop every training and wait for their threads (at exit: torch must not be torn down under them)."""
        with self._lock:
            jobs = list(self._jobs.values())
            for job in jobs:
                job.watchers.clear()
                job.stop.set()
                if job in self._line:
                    self._line.remove(job)
                    self._end(job, "stopped")
        for job in jobs:
            if job.thread is not None:
                job.thread.join(timeout)

    # ---------------------------------------------------------------- the worker
    def _run(self, job: TrainingJob) -> None:
        with self._lock:
            while job.state == "queued" and (self._line[0] is not job or self._running >= self.max_running):
                self._lock.wait()
            if job.state != "queued":  # left the line before its turn
                return
            self._line.remove(job)
            self._running += 1
            job.state = "running"
            self.trainings_started += 1
            self._lock.notify_all()
        try:
            model, history = self._trainer(job.spec, job.record, job.stop.is_set)
        except TrainingStoppedError:
            self._finish(job, "stopped")
        except Exception as error:  # a failed training is reported to its watchers, never raised in a thread
            job.error = f"{type(error).__name__}: {error}"
            self._finish(job, "failed")
        else:
            job.result = TrainedModel(trained_spec_of(job.spec, history), model, history)
            self._finish(job, "done")

    def _finish(self, job: TrainingJob, state: str) -> None:
        with self._lock:
            self._running -= 1
            if job.result is not None:
                kept = {job.spec: job.result}  # under the spec asked for; where it trained on the CPU instead, the
                if job.result.spec != job.spec:  # CPU's spec too, for a page on the CPU (which ran out of nothing)
                    history = dataclasses.replace(job.result.history, out_of_memory=None)
                    kept[job.result.spec] = dataclasses.replace(job.result, history=history)
                for spec, result in kept.items():
                    self._finished[spec] = result
                    self._finished.move_to_end(spec)
                while len(self._finished) > self.cache_size:
                    self._finished.popitem(last=False)
            self._end(job, state)

    def _end(self, job: TrainingJob, state: str) -> None:
        """Close ``job`` (hold the lock): its state, out of the active jobs, its watchers woken."""
        job.state = state
        if self._jobs.get(job.spec) is job:
            del self._jobs[job.spec]
        job.finished.set()
        self._lock.notify_all()


_SERVICE: TrainingService | None = None
_SERVICE_LOCK = threading.Lock()


def training_service() -> TrainingService:
    """The process's training service (made on first use)."""
    global _SERVICE
    with _SERVICE_LOCK:
        if _SERVICE is None:
            _SERVICE = TrainingService()
            atexit.register(_SERVICE.shutdown)
        return _SERVICE
