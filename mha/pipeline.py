"""From a config to a traced forward pass: weight source -> tokens, input, model -> mask -> trace.

This is the one entry point the pages use. The config is valid by construction
(``AttentionConfig`` validates itself, the token count included); the source decides
the tokens, the input of the shown layer and its weights; the engine does the rest,
the same four steps whatever the weights' origin.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from mha.config import AttentionConfig
from mha.device import DeviceChoice, resolve_device
from mha.head_labels import HeadLabel, label_heads
from mha.masks import build_mask
from mha.module import MultiHeadAttention
from mha.sources import Note, WeightSource, make_source
from mha.sources.base import ImageAttention, ImageSource, SourceInputs
from mha.trace import AttentionTrace
from mha.vision.analysis import patch_head_labels
from mha.vision.patches import patch_pictures

__all__ = ["AttentionRun", "causal_config", "run_attention"]


@dataclass(frozen=True)
class AttentionRun:
    """One forward pass of the playground: what went in, where it ran, the model it ran, what came out.

    Cached and shared between sessions: every field is immutable (tuples, frozen
    records) or an inference tensor that the pages only read.
    """

    config: AttentionConfig  # the effective config: a checkpoint's sizes replace the learner's
    tokens: tuple[str, ...]
    x: Tensor  # (1, L, D)
    mask: Tensor | None  # bool keep-mask, broadcastable to (1, H, L, L)
    device: DeviceChoice
    trace: AttentionTrace
    model: MultiHeadAttention  # the layer that ran, read-only: the live check, counts and export read it
    source_kind: str  # one of mha.config.WEIGHT_SOURCES
    layer: int  # the layer shown, 0 .. num_layers - 1
    num_layers: int
    head_labels: tuple[HeadLabel, ...]  # one per head, from its weights
    scored_rows: Tensor | None  # (L,) bool: rows a training loss looked at (None: all)
    notes: tuple[Note, ...]
    image: ImageAttention | None = None  # a run on an image: the image and every layer's weights on it
    patch_pictures: np.ndarray | None = None  # (L, t, t, 4) uint8 RGBA, each token's patch (a run on an image)

    @property
    def num_heads(self) -> int:
        """H, read from the trace's shapes."""
        return self.trace.project.q_heads.size(1)

    @property
    def d_model(self) -> int:
        """D, read from the trace's shapes."""
        return self.trace.project.q.size(-1)

    @property
    def d_k(self) -> int:
        """Dh = D / H, read from the trace's shapes."""
        return self.trace.project.q_heads.size(-1)


def causal_config(config: AttentionConfig) -> AttentionConfig:
    """The config a causal model's layer runs with: the causal mask, whatever ``config``'s mask.

    The learner's padding mask (or ``block_pad``) still blocks [PAD] keys, on top of the causal
    mask (``block_pad``); a window is dropped. The run's config says so, so that everything read
    from it (the export's name, the reproducing script's mask) is the mask that ran.
    """
    block_pad = config.block_pad or config.mask_type == "padding"
    return dataclasses.replace(config, mask_type="causal", block_pad=block_pad)


def run_attention(
    config: AttentionConfig, source: WeightSource | None = None, image: Tensor | None = None
) -> AttentionRun:
    """Ask the weight source for tokens, input and model, build the mask and run a traced forward.

    A causal source's layer (GPT-2) runs under the causal mask whatever ``config.mask_type``
    (:func:`causal_config`); the run's ``config`` is the one that ran. An image's heads are labelled by
    the patch grid's relations (:func:`mha.vision.analysis.patch_head_labels`).

    Args:
        config: validated choices.
        source: the source for ``config.weight_spec`` (pass a cached one); made here when ``None``.
        image: (C, H, W) in [0, 1], an image to read instead of ``config.image`` (a learner's upload), for a
            source that reads images (:class:`~mha.sources.base.ImageSource`).

    Raises:
        ConfigError: the text or the layer does not suit the source.
        ValueError: an image for a source that reads no image.
    """
    source = make_source(config.weight_spec) if source is None else source
    device = resolve_device(config.device)
    inputs = _prepare(source, config, device.device, image)
    model = inputs.model
    effective = dataclasses.replace(
        config, d_model=source.d_model, num_heads=source.num_heads, num_kv_heads=model.num_kv_heads
    )
    if inputs.causal:
        effective = causal_config(effective)
    mask = build_mask(
        effective.mask_type, inputs.tokens, window=effective.window, device=device.device, block_pad=effective.block_pad
    )
    with torch.inference_mode():
        trace = inputs.model.forward_traced(inputs.x, inputs.x, inputs.x, mask)
    if inputs.image is None:
        labels = label_heads(trace.weights[0], mask, inputs.relations, inputs.scored_rows)
    else:
        image = inputs.image.image
        labels = patch_head_labels(trace.weights[0], mask, inputs.scored_rows, image.grid, image.prefix)
    return AttentionRun(
        config=effective,
        tokens=inputs.tokens,
        x=inputs.x,
        mask=mask,
        device=device,
        trace=trace,
        model=inputs.model,
        source_kind=source.kind,
        layer=inputs.layer,
        num_layers=source.num_layers,
        head_labels=labels,
        scored_rows=inputs.scored_rows,
        notes=inputs.notes,
        image=inputs.image,
        patch_pictures=None if inputs.image is None else patch_pictures(inputs.image.image),
    )


def _prepare(source: WeightSource, config: AttentionConfig, device: torch.device, image: Tensor | None) -> SourceInputs:
    """The source's inputs for ``config``, on ``image`` where one is given."""
    if image is None:
        return source.prepare(config, device)
    if not isinstance(source, ImageSource):
        raise ValueError(f"a {source.kind} source reads no image")
    return source.prepare_image(config, device, image)
