"""Generations in the background (no Streamlit): one thread per generation, at most
``LIMITS.generate_concurrent`` at once per process, with progress and a Stop, as trainings run
(:mod:`mha.training.service`). The page's process has one (:func:`components.generating.generation_service`).

A generation is named by what decides it (:class:`GenerationKey`: the checkpoint, the text, the layer, the number
of new tokens). The first session that asks starts it; a session asking for the same one meanwhile watches the
same job; the finished ones are kept (:data:`KEPT`, least recently used out) for every session. A job left by
the session that started it runs to its end (at most ``GENERATE_MAX`` steps).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from mha.config import LIMITS, AttentionConfig, WeightSpec
from mha.generation import Generation

__all__ = ["KEPT", "GenerationJob", "GenerationKey", "GenerationService", "Generator", "key_of"]

KEPT = 16  # finished generations kept per process


@dataclass(frozen=True)
class GenerationKey:
    """What decides a generation: the checkpoint (its weight spec), the prompt, the layer shown, the new tokens."""

    spec: WeightSpec
    tokens: str
    layer: int
    new_tokens: int


def key_of(config: AttentionConfig, new_tokens: int) -> GenerationKey:
    """The key of ``config``'s generation of ``new_tokens`` tokens."""
    return GenerationKey(config.weight_spec, config.tokens, config.layer, new_tokens)


@dataclass
class GenerationJob:
    """One generation in the background: its state (``queued``, ``running``, ``done``, ``stopped``, ``failed``),
    the steps done, and its result."""

    key: GenerationKey
    state: str = "queued"
    done: int = 0
    result: Generation | None = None
    error: str = ""
    stop: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)

    def record(self, done: int, total: int) -> None:
        """The generation's progress callback: ``done`` of ``total`` steps."""
        self.done = done


#: What runs one generation: (config, new tokens, stop, progress) -> Generation.
Generator = Callable[[AttentionConfig, int, threading.Event, Callable[[int, int], None]], Generation]


class GenerationService:
    """Runs generations in background threads (see the module docstring).

    Args:
        generator: what generates (the page's source; tests pass one of their own).
        max_running: generations at once (default ``LIMITS.generate_concurrent``).
    """

    def __init__(self, generator: Generator, max_running: int | None = None) -> None:
        self._generator = generator
        self.max_running = LIMITS.generate_concurrent if max_running is None else max_running
        self._slots = threading.Semaphore(self.max_running)
        self._lock = threading.Lock()
        self._jobs: dict[GenerationKey, GenerationJob] = {}
        self._finished: OrderedDict[GenerationKey, Generation] = OrderedDict()

    def finished(self, key: GenerationKey) -> Generation | None:
        """The finished generation for ``key``, or ``None``."""
        with self._lock:
            found = self._finished.get(key)
            if found is not None:
                self._finished.move_to_end(key)
            return found

    def job(self, key: GenerationKey) -> GenerationJob | None:
        """The queued or running generation for ``key``, if any."""
        with self._lock:
            return self._jobs.get(key)

    def request(self, key: GenerationKey, config: AttentionConfig) -> GenerationJob:
        """The job generating ``key`` (joined, or started for ``config``)."""
        with self._lock:
            job = self._jobs.get(key)
            if job is None or job.stop.is_set():
                job = GenerationJob(key)
                self._jobs[key] = job
                thread = threading.Thread(target=self._run, args=(job, config), name="generate", daemon=True)
                thread.start()
            return job

    def stop(self, job: GenerationJob) -> None:
        """Stop ``job`` before its next step (its steps so far are kept)."""
        job.stop.set()

    def _run(self, job: GenerationJob, config: AttentionConfig) -> None:
        with self._slots:  # at most max_running at once: the others wait here, queued
            if job.stop.is_set():
                self._end(job, "stopped", None)
                return
            job.state = "running"
            try:
                result = self._generator(config, job.key.new_tokens, job.stop, job.record)
            except Exception as error:  # reported to the page, never raised in a thread
                job.error = f"{type(error).__name__}: {error}"
                self._end(job, "failed", None)
                return
        self._end(job, "stopped" if result.stopped else "done", result)

    def _end(self, job: GenerationJob, state: str, result: Generation | None) -> None:
        with self._lock:
            job.state, job.result = state, result
            if self._jobs.get(job.key) is job:
                del self._jobs[job.key]
            if result is not None and result.steps:
                self._finished[job.key] = result
                while len(self._finished) > KEPT:
                    self._finished.popitem(last=False)
        job.finished.set()
