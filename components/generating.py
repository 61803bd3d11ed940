"""The page's generations: the process's :class:`~mha.generation_jobs.GenerationService`, generating with the page's
cached sources (one per checkpoint per process)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from components import runner
from mha.config import AttentionConfig
from mha.generation import Generation
from mha.generation_jobs import GenerationService

__all__ = ["generation_service"]

_SERVICE: GenerationService | None = None
_SERVICE_LOCK = threading.Lock()


def _generate(
    config: AttentionConfig, new_tokens: int, stop: threading.Event, progress: Callable[[int, int], None]
) -> Generation:
    source = runner.cached_source(config.weight_spec)
    return source.generate(config, new_tokens, stop=stop, progress=progress)  # type: ignore[attr-defined]


def generation_service() -> GenerationService:
    """The process's generation service (made on first use)."""
    global _SERVICE
    with _SERVICE_LOCK:
        if _SERVICE is None:
            _SERVICE = GenerationService(_generate)
        return _SERVICE
