"""Cached engine calls for the pages: the weight source per spec; the run, the live check and its lessons
per config (and, for an image run, the learner's upload: its SHA-256 is part of the key); for a pretrained
checkpoint the check against it, every layer's weights for the head finder and the pattern search's scores.

The run and the checkpoint's own forwards run on the run's device; where it is an accelerator that runs out of
memory, they run again on the CPU (:mod:`mha.memory`): the run then says so (its ``device`` is the CPU, and a note
names the size and the device that ran out), and the checkpoint's forwards come back
:class:`~mha.memory.Placed`, with where they ran.

Everything cached here is shared between sessions and never mutated: models are
read-only (``requires_grad_(False)``, eval mode) and keep no attention of their own;
a run's fields are immutable and its tensors are inference tensors the pages only read.
"""

from __future__ import annotations

import dataclasses
from typing import cast

import torch
from torch import Tensor

from components import cache
from mha.batching import PaddingCheck, page_batch
from mha.config import AttentionConfig, ConfigError, WeightSpec
from mha.device import resolve_device
from mha.head_patterns import HeadPatterns, RepeatedSequence, head_patterns, induction_scores
from mha.memory import CPU, Placed, is_out_of_memory, on_device_or_cpu, release
from mha.pipeline import AttentionRun, run_attention
from mha.reference import BatchOrderCheck, TorchCheck, batch_order_check, compare_with_torch, to_torch_mha
from mha.reference_today import compare_with_sdpa
from mha.sources import Note, SourceSizes, WeightSource, make_source, source_sizes
from mha.sources.checkpoint.check import CheckpointCheck
from mha.sources.checkpoint.source import PretrainedSource
from mha.vision.analysis import ImageAnalysis, analyse_image
from mha.vision.upload import Upload

__all__ = [
    "cached_attention_maps",
    "cached_batch_order",
    "cached_check",
    "cached_checkpoint_check",
    "cached_head_patterns",
    "cached_image_analysis",
    "cached_padding",
    "cached_run",
    "cached_sizes",
    "cached_source",
    "cached_torch_checks",
]


@cache.shared(max_entries=32)
def cached_sizes(spec: WeightSpec) -> SourceSizes:
    """The sizes of the source for ``spec`` (raises ``SourceUnavailableError`` when it cannot be made here)."""
    return source_sizes(spec)


@cache.shared(max_entries=8)
def cached_source(spec: WeightSpec) -> WeightSource:
    """The weight source for ``spec``, made once per process and shared by every session."""
    return make_source(spec)


# A cached function is keyed by its arguments as passed (``f(x)`` and ``f(x, None)`` are two entries): the two
# that take an upload are called through wrappers that always pass it; ``clear`` empties the cache behind each.
@cache.shared(max_entries=16)
def _run(config: AttentionConfig, upload: Upload | None) -> AttentionRun:
    image = None if upload is None else upload.pixels
    source = cached_source(config.weight_spec)
    device = resolve_device(config.device).device
    try:
        return run_attention(config, source, image)
    except Exception as error:  # an accelerator out of memory: the same run on the CPU, with a note saying why
        if device.type == "cpu" or not is_out_of_memory(error):
            raise
    if isinstance(source, PretrainedSource):
        source.forget_device(device)
    release(device)
    run = run_attention(dataclasses.replace(config, device="cpu"), source, image)  # its device: the CPU
    return dataclasses.replace(
        run,
        config=dataclasses.replace(run.config, device=config.device),  # what was asked; the note says what ran
        notes=(_out_of_memory_note(device, source, len(run.tokens)), *run.notes),
    )


def _out_of_memory_note(device: torch.device, source: WeightSource, tokens: int) -> Note:
    """The run's note after ``device`` ran out of memory: the checkpoint's size, or the layer's sizes and tokens."""
    if isinstance(source, PretrainedSource):
        return Note("out_of_memory_checkpoint", {"device": device.type, **source.memory_size()})
    sizes = {"d_model": source.d_model, "heads": source.num_heads, "tokens": tokens}
    return Note("out_of_memory_layer", {"device": device.type, **sizes})


def cached_run(config: AttentionConfig, upload: Upload | None = None) -> AttentionRun:
    """The traced forward pass of ``config`` (on ``upload`` instead of ``config.image``, where one is given).

    Raises:
        ConfigError: the text or the layer does not suit the source.
    """
    return _run(config, upload)


cached_run.clear = _run.clear  # type: ignore[attr-defined]


@cache.shared(max_entries=16)
def _torch_checks(config: AttentionConfig, upload: Upload | None) -> tuple[TorchCheck, BatchOrderCheck | None]:
    run = cached_run(config, upload)
    if not run.model.is_plain:  # grouped K/V heads or RoPE: a layer nn.MultiheadAttention cannot hold
        trace = run.trace
        return compare_with_sdpa(run.model, run.x, run.x, run.x, run.mask, trace.output, trace.weights), None
    torch_mha = to_torch_mha(run.model)
    check = compare_with_torch(
        run.model, run.x, run.x, run.x, run.mask, run.trace.output, run.trace.weights, torch_mha=torch_mha
    )
    return check, batch_order_check(run.model, run.x, torch_mha=torch_mha)


def cached_torch_checks(
    config: AttentionConfig, upload: Upload | None = None
) -> tuple[TorchCheck, BatchOrderCheck | None]:
    """The page's run in ``torch.nn.MultiheadAttention`` holding the model's own weights, one copy for both
    checks: the live check, and the page's input fed to it in its default [L, B, E] order and the two fixes.
    A layer with grouped K/V heads or RoPE is checked against ``F.scaled_dot_product_attention`` instead
    (:func:`mha.reference_today.compare_with_sdpa`), with no [L, B, E] pitfall (``None``)."""
    return _torch_checks(config, upload)


cached_torch_checks.clear = _torch_checks.clear  # type: ignore[attr-defined]


def cached_check(config: AttentionConfig, upload: Upload | None = None) -> TorchCheck:
    """The page's run compared with ``torch.nn.MultiheadAttention`` holding the model's own weights."""
    return cached_torch_checks(config, upload)[0]


@cache.shared(max_entries=16)
def cached_checkpoint_check(config: AttentionConfig, _run: AttentionRun) -> Placed[CheckpointCheck]:
    """A pretrained run compared with the checkpoint's own forward pass (``PretrainedSource.compare``), the forward
    on the run's device (the CPU where the run ran there), and where it ran.

    Keyed by ``config``, the run's own (``run.config``); ``_run`` is the run itself, not hashed: the page's run, not
    another of the same config. Its forward is the one the run's layer input came from (``Checkpoint.full_forward``).
    """
    run = _run
    source = cast(PretrainedSource, cached_source(config.weight_spec))
    return on_device_or_cpu(
        lambda device: source.compare(config, run.trace.weights, run.trace.output, run.mask, device=device),
        run.device.device,
        source.memory_size,
        source.forget_device,
    )


@cache.shared(max_entries=8)
def cached_attention_maps(spec: WeightSpec, text: str, device: str) -> Placed[tuple[tuple[str, ...], Tensor]]:
    """A checkpoint's tokens for ``text`` (an image checkpoint: a bundled image's name, ``PretrainedSource.input_of``)
    and every head's weights in every layer, (layers, H, L, L) on the CPU, from its forward on ``device`` (the run's:
    ``str(run.device.device)``), and where it ran."""
    source = cast(PretrainedSource, cached_source(spec))
    return on_device_or_cpu(
        lambda on: source.attention_maps(text, on), torch.device(device), source.memory_size, source.forget_device
    )


@cache.shared(max_entries=8)
def cached_induction_scores(spec: WeightSpec, device: str) -> Placed[tuple[RepeatedSequence, Tensor]]:
    """A checkpoint's repeated random sequence and every head's induction score on it, (layers, H), from its forward
    on ``device``, and where it ran."""
    source = cast(PretrainedSource, cached_source(spec))
    placed = on_device_or_cpu(source.induction_maps, torch.device(device), source.memory_size, source.forget_device)
    sequence, maps = placed.value
    return dataclasses.replace(placed, value=(sequence, induction_scores(maps, sequence)))


def cached_head_patterns(spec: WeightSpec, text: str, device: str) -> Placed[HeadPatterns]:
    """Every head's previous-token score on ``text`` and induction score (each forward pass cached, on ``device``),
    and where the two forwards ran (the CPU, and why, where either ran there after ``device`` ran out of memory)."""
    maps = cached_attention_maps(spec, text, device)
    induction = cached_induction_scores(spec, device)
    sequence, scores = induction.value
    fell_back = maps.out_of_memory or induction.out_of_memory
    where = CPU.type if fell_back is not None else maps.device
    return Placed(head_patterns(maps.value[1], sequence, scores), where, fell_back)


def cached_batch_order(config: AttentionConfig, upload: Upload | None = None) -> BatchOrderCheck | None:
    """The page's input fed to ``nn.MultiheadAttention`` in its default [L, B, E] order, and the two fixes
    (``None`` for a layer it cannot hold: grouped K/V heads or RoPE)."""
    return cached_torch_checks(config, upload)[1]


@cache.shared(max_entries=16)
def cached_padding(config: AttentionConfig) -> PaddingCheck | None:
    """The page's sentence and its first half as a padded batch (``None`` where it cannot be built)."""
    run = cached_run(config)
    try:
        return page_batch(config, cached_source(config.weight_spec), run.device.device)
    except ConfigError:  # a half sentence the source refuses: the panel says what it needs
        return None


@cache.shared(max_entries=16)
def _image_analysis(config: AttentionConfig, upload: Upload | None) -> ImageAnalysis | None:
    run = cached_run(config, upload)
    image = run.image
    if image is None:
        return None
    patched = image.image
    weights = run.trace.attend.weights[0]  # (H, L, L): the shown layer
    return analyse_image(image.layer_weights, image.layer_rows, weights, patched.grid, patched.patch, patched.prefix)


def cached_image_analysis(config: AttentionConfig, upload: Upload | None = None) -> ImageAnalysis | None:
    """Attention distance, rollout and the heads' means of a run on an image (``None`` for a run on text)."""
    return _image_analysis(config, upload)


cached_image_analysis.clear = _image_analysis.clear  # type: ignore[attr-defined]
