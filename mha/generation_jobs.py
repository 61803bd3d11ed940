"""Generations in the background (no Streamlit): one thread per generation, at most
``LIMITS.generate_concurrent`` at once per process, with progress and a Stop, as trainings run
(:mod:`mha.training.service`). The page's process has one (:func:`components.generating.generation_service`).

A generation is named by what decides it (:class:`GenerationKey`: the checkpoint, the text, the layer, the number
of new tokens, the device it runs on: an accelerator's sums are not the CPU's to the last bit). The first session
that asks starts it; a session asking for the same one meanwhile watches the same job, and a Stop from any of them
stops it for all; the finished ones are kept (:data:`KEPT`, least recently used out) for every session. A session
that asks for another generation stops the one it asked for before (:mod:`components.panels.generation`); at
most :data:`MAX_WAITING` wait for a slot.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from mha.config import LIMITS, AttentionConfig, WeightSpec
from mha.device import resolve_device
from mha.generation import Generation

__all__ = ["KEPT", "MAX_WAITING", "GenerationJob", "GenerationKey", "GenerationService", "Generator", "key_of"]

KEPT = 16  # finished generations (and failures' messages) kept per process
MAX_WAITING = 8  # generations waiting for a slot, at most (then the page says the server is busy)


@dataclass(frozen=True)
class GenerationKey:
    """What decides a generation: the checkpoint (its weight spec), the prompt, the layer shown, the new tokens, and
    the device it runs on (``config.device`` resolved: ``"cuda"``, ``"mps"``, ``"cpu"``)."""

    spec: WeightSpec
    tokens: str
    layer: int
    new_tokens: int
    device: str = "cpu"


def key_of(config: AttentionConfig, new_tokens: int) -> GenerationKey:
    """The key of ``config``'s generation of ``new_tokens`` tokens on the run's device."""
    device = resolve_device(config.device).device.type
    return GenerationKey(config.weight_spec, config.tokens, config.layer, new_tokens, device)


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

    Only a generation that ran to its end (or to the checkpoint's end-of-text token) is kept for every session: a
    stopped one's steps stay with its job (the session that watched it shows them), and a failure's message is
    kept per key (:meth:`failure`) until the key is asked for again.

    Args:
        generator: what generates (the page's source; tests pass one of their own).
        max_running: generations at once (default ``LIMITS.generate_concurrent``).
        max_waiting: generations waiting for a slot at most; :meth:`request` refuses more (``None``).
    """

    def __init__(self, generator: Generator, max_running: int | None = None, max_waiting: int = MAX_WAITING) -> None:
        self._generator = generator
        self.max_running = LIMITS.generate_concurrent if max_running is None else max_running
        self.max_waiting = max_waiting
        self._slots = threading.Semaphore(self.max_running)
        self._lock = threading.Lock()
        self._jobs: dict[GenerationKey, GenerationJob] = {}
        self._finished: OrderedDict[GenerationKey, Generation] = OrderedDict()
        self._failed: OrderedDict[GenerationKey, str] = OrderedDict()

    def finished(self, key: GenerationKey) -> Generation | None:
        """The finished generation for ``key``, or ``None``."""
        with self._lock:
            found = self._finished.get(key)
            if found is not None:
                self._finished.move_to_end(key)
            return found

    def failure(self, key: GenerationKey) -> str | None:
        """Why the last generation of ``key`` failed (``"RuntimeError: ..."``), or ``None``."""
        with self._lock:
            return self._failed.get(key)

    def job(self, key: GenerationKey) -> GenerationJob | None:
        """The queued or running generation for ``key``, if any."""
        with self._lock:
            return self._jobs.get(key)

    def request(self, key: GenerationKey, config: AttentionConfig) -> GenerationJob | None:
        """The job generating ``key`` (joined, or started for ``config``); ``None`` when :attr:`max_waiting`
        generations already wait for a slot (the page says the server is busy)."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and not job.stop.is_set():
                return job
            waiting = sum(1 for other in self._jobs.values() if other.state == "queued")
            if waiting >= self.max_waiting:
                return None
            self._failed.pop(key, None)
            job = GenerationJob(key)
            self._jobs[key] = job
            thread = threading.Thread(target=self._run, args=(job, config), name="generate", daemon=True)
            thread.start()
            return job

    def stop(self, job: GenerationJob) -> None:
        """Stop ``job``: a running one before its next step (its steps so far stay with it), a queued one at once.
        Every session watching the job sees it stop."""
        job.stop.set()
        with self._lock:
            if job.state == "queued":
                self._close(job, "stopped", None)

    def _run(self, job: GenerationJob, config: AttentionConfig) -> None:
        with self._slots:  # at most max_running at once: the others wait here, queued
            with self._lock:
                if job.finished.is_set():  # stopped while it waited
                    return
                job.state = "running"
            try:
                result = self._generator(config, job.key.new_tokens, job.stop, job.record)
            except Exception as error:  # reported to the page, never raised in a thread
                with self._lock:
                    job.error = f"{type(error).__name__}: {error}"
                    self._failed[job.key] = job.error
                    while len(self._failed) > KEPT:
                        self._failed.popitem(last=False)
                    self._close(job, "failed", None)
                return
        with self._lock:
            self._close(job, "stopped" if result.stopped else "done", result)

    def _close(self, job: GenerationJob, state: str, result: Generation | None) -> None:
        """End ``job`` (hold the lock): its state and result, out of the active jobs, a full result kept."""
        job.state, job.result = state, result
        if self._jobs.get(job.key) is job:
            del self._jobs[job.key]
            if state == "done" and result is not None and result.steps:
                self._finished[job.key] = result
                while len(self._finished) > KEPT:
                    self._finished.popitem(last=False)
        job.finished.set()
