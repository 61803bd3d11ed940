"""The page's generations: the process's :class:`~mha.generation_jobs.GenerationService`, generating with the page's
cached sources (one per checkpoint per process) on the run's device; where that device runs out of memory, on the CPU
(the generation says so: :attr:`~mha.generation.Generation.out_of_memory`)."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import cast

from components import runner
from mha.config import AttentionConfig
from mha.device import resolve_device
from mha.generation import Generation
from mha.generation_jobs import GenerationService
from mha.memory import on_device_or_cpu
from mha.sources.checkpoint.source import PretrainedSource

__all__ = ["generation_service"]

_SERVICE: GenerationService | None = None
_SERVICE_LOCK = threading.Lock()


def _generate(
    config: AttentionConfig, new_tokens: int, stop: threading.Event, progress: Callable[[int, int], None]
) -> Generation:
    source = cast(PretrainedSource, runner.cached_source(config.weight_spec))

    def size() -> dict[str, object]:
        return {**source.memory_size(), "tokens": new_tokens}

    placed = on_device_or_cpu(
        lambda device: source.generate(config, new_tokens, stop=stop, progress=progress, device=device),
        resolve_device(config.device).device,
        size,
        source.forget_device,
    )
    return dataclasses.replace(placed.value, out_of_memory=placed.out_of_memory)


def generation_service() -> GenerationService:
    """The process's generation service (made on first use)."""
    global _SERVICE
    with _SERVICE_LOCK:
        if _SERVICE is None:
            _SERVICE = GenerationService(_generate)
        return _SERVICE
