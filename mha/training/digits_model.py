"""The digits' small Vision Transformer: patches of an image and [CLS] into the Pre-Norm classifier.

Shape legend: B batch, C channels, H and W pixels, p patch size, N = (H / p)·(W / p) patches,
L = N + 1 tokens ([CLS] first), D = d_model, K classes.

    patches = patchify((images - mean) / std, p)               (B, N, C·p·p)
    x_0 = [cls ; patches W_eᵀ + b_e] + positions               (B, L, D)
    then the blocks and the readout of :mod:`mha.training.classifier`

The patch embedding is one ``nn.Linear`` over each flattened patch (a ViT's ``Conv2d`` with kernel
and stride p is the same map).

With RoPE the positions are the token order, [CLS] 0 and then the patches row by row (1-D: a patch's
neighbour below is ``grid`` positions on), and the learned position embedding is dropped, as in the text
tasks' model: ``x_0 = [cls ; patches W_eᵀ + b_e]``. At the page's trained sizes (d_model 64, 2 heads, patch 2,
seeds 0-2) RoPE alone gave 93.1-93.4 % on the held-out digits against 95.9-97.3 % with learned positions
(``python -m bench.gqa_training``'s digits table; docs/PERFORMANCE.md): the page's RoPE model has the rotation
only, as the text tasks' does.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from mha.training.classifier import POSITION_STD, PreNormClassifier, build_classifier, classifier_parameters
from mha.vision.patches import patchify

__all__ = ["DigitsModel", "build_digits_model", "digits_model_parameters"]


class DigitsModel(PreNormClassifier):
    """Patch embedding, [CLS], learned positions, then the Pre-Norm classifier's blocks and readout.

    Args:
        channels, image_size: the images' channels and side (square images, pixels in [0, 1]).
        patch: p, the side of a patch; it divides ``image_size``.
        d_model, num_heads, layers: the blocks' sizes.
        classes: K, the readout's outputs.
        pixels: the training images' pixel mean and standard deviation; the model standardises with them.
        num_kv_heads: the attention layers' key/value heads (default ``num_heads``).
        rope_base: the attention layers rotate q and k by token order ([CLS] 0, then the patches row by row);
            the model then has no learned position embedding (``position_embedding`` is ``None``).
    """

    def __init__(
        self,
        channels: int,
        image_size: int,
        patch: int,
        d_model: int,
        num_heads: int,
        layers: int,
        classes: int,
        pixels: tuple[float, float] = (0.0, 1.0),
        num_kv_heads: int | None = None,
        rope_base: float | None = None,
    ) -> None:
        super().__init__()
        if image_size % patch:
            raise ValueError(f"patch size {patch} must divide the image size {image_size}")
        self.pixel_mean, self.pixel_std = pixels
        self.patch = patch
        self.grid = image_size // patch
        patches = self.grid * self.grid
        self.patch_embedding = nn.Linear(channels * patch * patch, d_model)
        self.cls_token = nn.Parameter(torch.empty(1, 1, d_model, device=self.patch_embedding.weight.device))
        self.position_embedding = (
            nn.Parameter(torch.empty(1, patches + 1, d_model, device=self.patch_embedding.weight.device))
            if rope_base is None
            else None
        )
        self.add_blocks(d_model, num_heads, layers, classes, num_kv_heads, rope_base)

    def embed(self, inputs: Tensor) -> Tensor:
        """(B, C, H, W) in [0, 1] -> (B, L, D): [CLS] and the embedded patches, plus the positions (RoPE: none)."""
        standard = (inputs - self.pixel_mean) / self.pixel_std
        patches = self.patch_embedding(patchify(standard, self.patch))  # (B, N, C·p·p) -> (B, N, D)
        cls = self.cls_token.expand(patches.size(0), -1, -1)  # (B, 1, D)
        tokens = torch.cat([cls, patches], dim=1)  # (B, L, D)
        if self.position_embedding is None:  # RoPE: the attention layers turn q and k by token order
            return tokens
        return tokens + self.position_embedding  # (B, L, D) + (1, L, D)

    def draw_embedding(self, generator: torch.Generator) -> None:
        """[CLS], then the positions (none with RoPE), ~ N(0, 0.02²), as ViT's (the patch embedding is a Linear)."""
        self.cls_token.normal_(0.0, POSITION_STD, generator=generator)
        if self.position_embedding is not None:
            self.position_embedding.normal_(0.0, POSITION_STD, generator=generator)


def digits_model_parameters(
    channels: int,
    image_size: int,
    patch: int,
    d_model: int,
    num_heads: int,
    layers: int,
    classes: int,
    num_kv_heads: int | None = None,
    rope: bool = False,
) -> dict[str, int]:
    """The model's parameters by part, counted by formula (the tests check them against ``numel``).

    Keys: ``patch_embedding`` (C·p·p·D + D), ``cls`` (D), ``positions`` (L·D; 0 with RoPE), then
    :func:`~mha.training.classifier.classifier_parameters`' ``attention``, ``block``, ``readout`` and ``total``.
    """
    tokens = (image_size // patch) ** 2 + 1
    embedding = {
        "patch_embedding": channels * patch * patch * d_model + d_model,
        "cls": d_model,
        "positions": 0 if rope else tokens * d_model,
    }
    return classifier_parameters(embedding, d_model, num_heads, layers, classes, num_kv_heads)


def build_digits_model(
    channels: int,
    image_size: int,
    patch: int,
    d_model: int,
    num_heads: int,
    layers: int,
    classes: int,
    generator: torch.Generator,
    pixels: tuple[float, float] = (0.0, 1.0),
    num_kv_heads: int | None = None,
    rope_base: float | None = None,
) -> DigitsModel:
    """A :class:`DigitsModel` with parameters drawn from ``generator`` alone, in a fixed order.

    [CLS] and positions (none with RoPE) ~ N(0, 0.02²); Linear layers ~ U(-1/√fan_in, 1/√fan_in) (weights and
    biases); LayerNorms start as the identity. Without ``num_kv_heads`` and ``rope_base`` these are the draws of
    the model before either option existed.
    """
    sizes = (channels, image_size, patch, d_model, num_heads, layers, classes, pixels, num_kv_heads, rope_base)
    return build_classifier(lambda: DigitsModel(*sizes), generator)
