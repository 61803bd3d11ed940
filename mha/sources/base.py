"""What every weight source gives the engine: tokens, the shown layer's input and its ``MultiHeadAttention``.

A weight source is where a model's weights come from -- seeded random numbers, a small
task trained here, a real checkpoint. Whatever the origin, the page runs the same
:class:`~mha.module.MultiHeadAttention` through the same four steps: a source only
decides the tokens, the input of the layer shown and that layer's weights.

A source is built once per :class:`~mha.config.WeightSpec` (the expensive part: making,
training or loading the weights) and shared, read-only, by every session; its
:meth:`WeightSource.prepare` is cheap and runs once per config.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import torch
from torch import Tensor

from mha.config import AttentionConfig
from mha.module import MultiHeadAttention
from mha.vision.patches import PatchedImage

__all__ = [
    "IMAGE",
    "MODALITIES",
    "TEXT",
    "ImageAttention",
    "ImageSource",
    "Note",
    "SourceInputs",
    "SourceSizes",
    "SourceUnavailableError",
    "WeightSource",
]


class SourceUnavailableError(RuntimeError):
    """A source that cannot be made here (a checkpoint offline and not cached, not an encoder, ...).

    ``code`` and ``params`` make the page's translated message (``source.<code>``), which
    names what to do; the page goes on with random weights.
    """

    def __init__(self, code: str, message: str, **params: object) -> None:
        super().__init__(message)
        self.code = code
        self.params = params


#: What a source's tokens are made from: the learner's text, or an image (a checkpoint of the ViT family).
TEXT, IMAGE = "text", "image"
MODALITIES = (TEXT, IMAGE)


@dataclass(frozen=True)
class SourceSizes:
    """A source's sizes, known before its weights are made (the controls show them).

    ``modality`` says what the source reads (:data:`MODALITIES`): ``"image"`` for a checkpoint that reads
    images (``config.image``, or an upload) and never the text, known from ``config.json`` alone. ``causal``: a
    causal model (GPT-2), whose layer runs under its causal mask whatever the page's mask. ``num_kv_heads``: the
    key/value heads of a checkpoint with grouped-query attention (Llama's ``num_key_value_heads``); ``None``: as many
    as ``num_heads``.
    """

    d_model: int
    num_heads: int
    num_layers: int
    modality: str = TEXT
    causal: bool = False
    num_kv_heads: int | None = None


@dataclass(frozen=True)
class Note:
    """Something the page should tell the learner about a source's run: a message code and its values."""

    code: str
    params: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class ImageAttention:
    """What a run on an image (a ViT's) adds: the image its tokens are the patches of, and every layer's weights
    on it (rollout and each layer's attention distance read them, not only the shown layer's).

    Shape:
        layer_weights: (1, H, L, L) per layer, first layer first; layer_rows: per layer, (L,) bool, the query
        rows a training loss looked at (``None``: all rows; a ViT trained here reads [CLS] alone in its last).
    """

    image: PatchedImage
    layer_weights: tuple[Tensor, ...]
    layer_rows: tuple[Tensor | None, ...]


@dataclass(frozen=True)
class SourceInputs:
    """What a source hands the engine for one config.

    ``relations`` name extra patterns the heads may have learned (``"last digit"``,
    ``"[SEP]"``), each as a (L, L) bool tensor of the key cells that pattern points at
    from each query row; the positional ones (previous, next, first, itself) are known
    to every source (see :mod:`mha.head_labels`). ``scored_rows`` marks the query rows a
    training loss looked at (``None``: all rows count). ``causal``: the model is a causal one
    (GPT-2), whose layer runs under the causal mask whatever the page's mask
    (:func:`mha.pipeline.run_attention`). A run on an image (a ViT's) gives ``image``
    (:class:`ImageAttention`); its heads are then labelled by the patch grid's relations, not the sequence's.
    """

    tokens: tuple[str, ...]
    x: Tensor  # (1, L, D)   the input of the shown layer
    model: MultiHeadAttention  # the shown layer, read-only
    layer: int = 0
    relations: Mapping[str, Tensor] = field(default_factory=dict)  # name -> (L, L) bool
    scored_rows: Tensor | None = None  # (L,) bool
    notes: tuple[Note, ...] = ()
    causal: bool = False
    image: ImageAttention | None = None


class WeightSource(Protocol):
    """A model's weights and the way its inputs are made (see the module docstring)."""

    kind: str  # one of mha.config.WEIGHT_SOURCES
    d_model: int
    num_heads: int
    num_layers: int

    def prepare(self, config: AttentionConfig, device: torch.device) -> SourceInputs:
        """Tokens, the input of layer ``config.layer`` and that layer's model, on ``device`` in ``config.dtype``.

        Raises:
            ConfigError: the text or the layer does not suit this source (the message says what to change).
        """
        ...


@runtime_checkable
class ImageSource(WeightSource, Protocol):
    """A source whose model reads images (a ViT): it also runs on any image, not only ``config.image``."""

    def prepare_image(
        self, config: AttentionConfig, device: torch.device, image: Tensor, label: int | None = None
    ) -> SourceInputs:
        """As :meth:`WeightSource.prepare`, on ``image`` (C, H, W) in [0, 1] of any size (a learner's upload)
        instead of ``config.image``; ``label``: the class it shows, when known.

        Raises:
            ConfigError: the layer does not suit this source.
        """
        ...
