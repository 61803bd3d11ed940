"""Weight sources: where the shown ``MultiHeadAttention``'s weights and input come from.

``make_source(config.weight_spec)`` builds the source (the expensive, shareable part);
:func:`mha.pipeline.run_attention` asks it for tokens, input and model and runs the
same traced forward whatever the origin. See :mod:`mha.sources.base`.
"""

from __future__ import annotations

from mha.config import PRETRAINED, RANDOM, TRAINED, WeightSpec
from mha.sources.base import Note, SourceInputs, SourceSizes, SourceUnavailableError, WeightSource
from mha.sources.seeded import SeededSource
from mha.training.tasks import task_layers

__all__ = [
    "Note",
    "SourceInputs",
    "SourceSizes",
    "SourceUnavailableError",
    "WeightSource",
    "make_source",
    "source_sizes",
]


def source_sizes(spec: WeightSpec) -> SourceSizes:
    """The sizes of the source for ``spec`` without making its weights.

    Raises:
        SourceUnavailableError: the source cannot be made here (the message says what to do).
    """
    if spec.kind == PRETRAINED:
        from mha.sources.checkpoint.origin import checkpoint_sizes, origin_of  # config.json only: no transformers

        return checkpoint_sizes(origin_of(spec))
    if spec.d_model is None or spec.num_heads is None:
        raise ValueError(f"a {spec.kind} spec needs d_model and num_heads, got {spec}")
    layers = task_layers(spec.task or "") if spec.kind == TRAINED else 1
    return SourceSizes(spec.d_model, spec.num_heads, layers)


def make_source(spec: WeightSpec) -> WeightSource:
    """The weight source for ``spec`` (random weights are made lazily, per device and dtype).

    A trained spec is trained first unless this process already has it (through the shared
    training service: the page waits for it there, with progress, before it asks here).

    Raises:
        ValueError: ``spec.kind`` names no source.
        SourceUnavailableError: a checkpoint that cannot be loaded here (the message says what to do).
    """
    if spec.kind == RANDOM:
        return SeededSource(spec)
    if spec.kind == PRETRAINED:
        from mha.sources.checkpoint.source import PretrainedSource  # loads transformers: only when asked for

        return PretrainedSource(spec)
    if spec.kind == TRAINED:
        from mha.sources.trained import TrainedSource  # the training machinery loads with the first trained spec

        return TrainedSource.from_spec(spec)
    raise ValueError(f"no weight source of kind {spec.kind!r}")
