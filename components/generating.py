"""The page's generations: what the generation panel (:mod:`components.panels.generation`) asks, so that it only draws.

* the process's :class:`~mha.sources.checkpoint.generation_service.GenerationService`, generating with the page's
  cached sources (one per checkpoint per process) on the run's device; where that device runs out of memory, on the
  CPU (the generation says so: :attr:`~mha.sources.checkpoint.generation.Generation.out_of_memory`);
* the session's part: the ``generate`` control or a link asked for a generation (the next full run starts it), the
  generation this session asked for last (stopped when it asks for another; shown as far as it went where it was
  stopped), the generation the page showed last (kept while the process drops old ones), the key the server was too
  busy to start;
* the cost table's timings: one decoding step of the shown layer with the cache and without, timed once per layer and
  lengths in this process.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import cast

import streamlit as st

from components import cache, runner
from components.url_state import changed_in_link
from mha.config import AttentionConfig, WeightSpec
from mha.device import resolve_device
from mha.experiments.decode_cost import StepTime, step_times
from mha.jobs import shared_service
from mha.memory import on_device_or_cpu
from mha.sources.checkpoint.generation import Generation
from mha.sources.checkpoint.generation_service import GenerationJob, GenerationService, key_of
from mha.sources.checkpoint.source import PretrainedSource

__all__ = [
    "COST_REPEATS",
    "GENERATE_KEY",
    "SERVICE_NAME",
    "ask",
    "busy",
    "cost_times",
    "failure",
    "generate",
    "generation_service",
    "link_asks_to_generate",
    "new_tokens",
    "running",
    "shown",
    "start",
    "stop",
]

#: The generation service's name among the process's services (:func:`mha.jobs.shared_service`).
SERVICE_NAME = "generation"
GENERATE_KEY = "generate"  # the panel's control, also the link's name
COST_REPEATS = 3  # timed rounds per length of the cost table
_LONGEST = 512  # the longest context the cost table times (GPT-2 knows 1,024 positions; the table's point shows)
_ASKED = "_gen_asked"  # the control or the link asked for a generation: the next full run starts it
_MINE = "_gen_job"  # the generation this session asked for last (its steps, if it was stopped)
_SHOWN = "_gen_shown"  # (key, generation) the page showed last: kept while the process drops old ones
_BUSY = "_gen_busy"  # the key the server was too busy to start


def generate(
    config: AttentionConfig, new_tokens: int, stop: threading.Event, progress: Callable[[int, int], None]
) -> Generation:
    """The page's generator: ``config``'s cached source generates on the run's device, or on the CPU where that device
    runs out of memory."""
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
    return shared_service(SERVICE_NAME, lambda: GenerationService(generate))


# ---------------------------------------------------------------- the session's asks
def new_tokens() -> int:
    """The session's ``generate`` value (0: none)."""
    value = st.session_state.get(GENERATE_KEY, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def ask() -> None:
    """The control asked for a generation: the next full run starts it (the control's ``on_change``)."""
    st.session_state[_ASKED] = True


def link_asks_to_generate() -> None:
    """A link just opened (or edited) with ``generate``: generate without a click (call before the page writes the
    link)."""
    if changed_in_link((GENERATE_KEY,)):
        ask()


def running(config: AttentionConfig, count: int) -> GenerationJob | None:
    """The generation in progress that this run shows (started here where the control or a link asked for it since
    the last run), or ``None``: no generation asked for (``count`` 0), or one the page can show (:func:`shown`), or
    none to show (:func:`failure`, :func:`busy`)."""
    asked = st.session_state.pop(_ASKED, False)
    if not count or shown(config, count) is not None:
        return None
    job = generation_service().job(key_of(config, count))
    if job is None and asked:
        job = start(config, count)
    return job if job is not None and not job.finished.is_set() else None


def start(config: AttentionConfig, count: int) -> GenerationJob | None:
    """Start (or join) ``config``'s generation of ``count`` tokens for this session, stopping the one it asked for
    before; ``None`` where the server is busy (:func:`busy` then says so) or the generation is already made."""
    key, service = key_of(config, count), generation_service()
    st.session_state.pop(_BUSY, None)
    mine = st.session_state.get(_MINE)
    if mine is not None and mine.key != key and not mine.finished.is_set():
        service.stop(mine)
    found = service.request(key, config)
    job = found if isinstance(found, GenerationJob) else None
    st.session_state[_MINE] = job
    if found is None:
        st.session_state[_BUSY] = key
    return job


def stop(job: GenerationJob) -> None:
    """Stop ``job`` (for every session watching it)."""
    generation_service().stop(job)


# ---------------------------------------------------------------- what the page shows
def shown(config: AttentionConfig, count: int) -> Generation | None:
    """The generation the page shows for ``config`` and ``count`` new tokens: the shared finished one, or the steps of
    the one this session stopped; kept in the session too (the process keeps the latest few for every session)."""
    key = key_of(config, count)
    generation = generation_service().finished(key)
    mine = st.session_state.get(_MINE)
    if generation is None and mine is not None and mine.key == key and mine.result is not None:
        generation = mine.result if mine.result.steps else None
    if generation is not None:
        st.session_state[_SHOWN] = (key, generation)
        return generation
    kept = st.session_state.get(_SHOWN)
    return kept[1] if kept is not None and kept[0] == key else None


def failure(config: AttentionConfig, count: int) -> str | None:
    """Why the last generation of ``config`` and ``count`` failed (``"RuntimeError: ..."``), or ``None``."""
    return generation_service().failure(key_of(config, count))


def busy(config: AttentionConfig, count: int) -> bool:
    """Whether the server was too busy to start this generation when this session last asked."""
    return st.session_state.get(_BUSY) == key_of(config, count)


@cache.shared(max_entries=8)
def _step_times(spec: WeightSpec, layer: int, lengths: tuple[int, ...]) -> list[StepTime]:
    source = cast(PretrainedSource, runner.cached_source(spec))
    return step_times(source.layer_model(layer), lengths, COST_REPEATS)


def cost_times(config: AttentionConfig, generation: Generation) -> list[StepTime]:
    """One decoding step of ``config``'s layer, with the cache and recomputing, at the generation's length t and at
    4 t and 16 t (at most :data:`_LONGEST`): its float32 copy on the CPU, timed there whatever device the generation
    ran on (timed once per layer and lengths, in this process)."""
    t_end = generation.length
    lengths = tuple(sorted({t_end, min(4 * t_end, _LONGEST), min(16 * t_end, _LONGEST)}))
    return _step_times(config.weight_spec, config.layer, lengths)
