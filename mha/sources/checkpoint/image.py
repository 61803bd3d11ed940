"""A checkpoint that reads images: its image processor, and an image made into its tokens and pixels.

Its tokens are the family's prefix tokens (``[CLS]``, and any other it puts before the patches:
:meth:`~mha.sources.families.base.Family.prefix_tokens`), then the patches in row-major grid order
(``r0c0``, ``r0c1``, ...). The pixels are made by the checkpoint's own image processor, as its family
says (:meth:`~mha.sources.families.base.Family.pixel_values`). Every token sees every other: an image
has no padding.

Shape legend: C = channels, H, W = pixels, L = tokens.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from mha.sources.base import SourceSizes, SourceUnavailableError
from mha.sources.checkpoint.checkpoint_model import Checkpoint, Encoded
from mha.sources.families import Family
from mha.vision.patches import patch_grid

__all__ = ["ImageCheckpoint"]


class ImageCheckpoint(Checkpoint):
    """A checkpoint that reads images (ViT, DeiT), with its image processor.

    Raises:
        SourceUnavailableError: ``broken``, when the processor's images are not the size the model reads.
    """

    def __init__(self, name: str, model: Any, processor: Any, sizes: SourceSizes, family: Family) -> None:
        super().__init__(name, model, sizes, family)
        self.processor = processor
        geometry = family.image_geometry(model)
        self.channels, self.patch = geometry.channels, geometry.patch
        expected = geometry.image_size  # (H, W): the size its position embeddings are made for
        made = tuple(self.pixels(torch.zeros(1, 8, 8, device="cpu")).shape[-2:])  # (H', W')
        if made != expected:
            made_text, expected_text = (" × ".join(map(str, size)) for size in (made, expected))
            reason = f"its image processor makes {made_text} pixels, its model reads {expected_text}"
            raise SourceUnavailableError("broken", f"{name}: {reason}", name=name, reason=reason)

    def pixels(self, image: Tensor) -> Tensor:
        """``image`` (C, H, W) in [0, 1] made into the model's input by its processor.

        Shape:
            (1, channels, H', W'): the processor's size.
        """
        return self.family.pixel_values(self.processor, image, self.channels)  # (1, channels, H', W')

    def encode(self, image: Tensor) -> Encoded:
        """``image`` (C, H, W) in [0, 1] made into the checkpoint's pixels by its processor: the family's prefix
        tokens (``[CLS]``; DeiT: and ``[DIST]``), then the patches' labels in row-major order."""
        pixels = self.pixels(image)  # (1, C, H', W')
        rows, columns = patch_grid(pixels.size(-2), pixels.size(-1), self.patch)
        tokens = self.family.image_tokens(self.model, rows, columns)
        return Encoded(
            tokens, {"pixel_values": pixels}, torch.ones(1, len(tokens), dtype=torch.bool, device=pixels.device)
        )
