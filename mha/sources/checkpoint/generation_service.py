"""Generations in the background (no Streamlit): the generation's use of :class:`~mha.jobs.JobService`, one thread
per generation, at most ``LIMITS.generate_concurrent`` at once per process, with progress and a Stop, as trainings
run (:mod:`mha.training.service`). The page's process has one (:func:`components.generating.generation_service`).

A generation is named by what decides it (:class:`GenerationKey`: the checkpoint, the text, the layer, the number
of new tokens, the device it runs on: an accelerator's sums are not the CPU's to the last bit). The first session
that asks starts it; a session asking for the same one meanwhile watches the same job, and a Stop from any of them
stops it for all; the finished ones are kept (:data:`KEPT`, least recently used out) for every session. A session
that asks for another generation stops the one it asked for before (:mod:`components.generating`); at most
:data:`MAX_WAITING` wait for a slot.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from mha.config import LIMITS, AttentionConfig, WeightSpec
from mha.device import resolve_device
from mha.jobs import DONE, STOPPED, Job, JobService
from mha.sources.checkpoint.generation import Generation

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


@dataclass(eq=False)
class GenerationJob(Job[GenerationKey, Generation]):
    """One generation in the background: the config it generates for and the steps done."""

    config: AttentionConfig
    done: int = 0

    def record(self, done: int, total: int) -> None:
        """The generation's progress callback: ``done`` of ``total`` steps."""
        self.done = done


#: What runs one generation: (config, new tokens, stop, progress) -> Generation.
Generator = Callable[[AttentionConfig, int, threading.Event, Callable[[int, int], None]], Generation]


class GenerationService(JobService[GenerationKey, Generation, GenerationJob]):
    """Runs generations in background threads (see the module docstring and :mod:`mha.jobs`).

    Only a generation that ran to its end (or to the checkpoint's end-of-text token) is kept for every session: a
    stopped one's steps stay with its job (the session that watched it shows them), and a failure's message is
    kept per key (:meth:`failure`) until the key is asked for again.

    Args:
        generator: what generates (the page's source; tests pass one of their own).
        max_running: generations at once (default ``LIMITS.generate_concurrent``).
        max_waiting: generations waiting for a slot at most; :meth:`request` refuses more (``None``).
    """

    def __init__(self, generator: Generator, max_running: int | None = None, max_waiting: int = MAX_WAITING) -> None:
        super().__init__(LIMITS.generate_concurrent if max_running is None else max_running, KEPT, max_waiting)
        self._generator = generator

    def request(self, key: GenerationKey, config: AttentionConfig) -> Generation | GenerationJob | None:
        """The finished generation of ``key``, or the job generating it (joined, or started for ``config``); ``None``
        when :attr:`max_waiting` generations already wait for a slot (the page says the server is busy)."""
        return self._request(key, lambda: GenerationJob(key, config))

    def _work(self, job: GenerationJob) -> Generation:
        return self._generator(job.config, job.key.new_tokens, job.stop, job.record)

    def _state_of(self, result: Generation) -> str:
        """A generation stopped midway ends its job stopped, its steps so far its result."""
        return STOPPED if result.stopped else DONE
