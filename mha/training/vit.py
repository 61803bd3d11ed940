"""A small Vision Transformer around the project's own ``MultiHeadAttention``, for the ``digits`` task.

Shape legend: B batch, C channels, H and W pixels, p patch size, N = (H / p)·(W / p) patches,
L = N + 1 tokens ([CLS] first), D = d_model, H heads (in ``(B, H, L, L)``), K classes.

    patches = patchify((images - mean) / std, p)               (B, N, C·p·p)
    x_0 = [cls ; patches W_eᵀ + b_e] + positions               (B, L, D)
    x_l+1 = x_l + MHA_l(LN1_l(x_l))                            Pre-Norm, as ViT
    x_l+1 = x_l+1 + MLP_l(LN2_l(x_l+1))                        Linear(D, M) -> GELU -> Linear(M, D)
    logits = readout(LN(x_last)[:, 0])                         (B, K): from [CLS] alone

The patch embedding is one ``nn.Linear`` over each flattened patch (a ViT's ``Conv2d`` with kernel
and stride p is the same map). Parameters are drawn from a private generator on a model made on
the ``meta`` device (no global RNG is touched).

``num_kv_heads`` and ``rope_base`` go to every block's attention (grouped key/value heads; q and k rotated by
position). With RoPE the positions are the token order, [CLS] 0 and then the patches row by row (1-D: a patch's
neighbour below is ``grid`` positions on), and the learned position embedding is dropped, as in the text
tasks' model: ``x_0 = [cls ; patches W_eᵀ + b_e]``. At the page's trained sizes (d_model 64, 2 heads, patch 2,
seeds 0-2) RoPE alone gave 93.1-93.4 % on the held-out digits against 95.9-97.3 % with learned positions
(``python -m bench.gqa_training``'s digits table; docs/PERFORMANCE.md): the page's RoPE model has the rotation
only, as the text tasks' does.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from mha.module import MultiHeadAttention
from mha.vision.patches import patchify

__all__ = [
    "MLP_RATIO",
    "PatchModel",
    "ViTBlock",
    "attention_parameters",
    "build_patch_model",
    "patch_model_parameters",
]

MLP_RATIO = 2  # the MLP's hidden width, in units of D
POSITION_STD = 0.02  # [CLS] and the position embeddings start ~ N(0, 0.02²), as ViT's


def attention_parameters(d_model: int, num_heads: int, num_kv_heads: int | None = None) -> int:
    """One ``MultiHeadAttention``'s parameters with biases: W_q and W_o D² + D each, W_k and W_v D·Hkv·Dh + Hkv·Dh
    each (4·D² + 4·D when Hkv = H)."""
    kv_width = (num_heads if num_kv_heads is None else num_kv_heads) * (d_model // num_heads)  # Hkv·Dh
    return 2 * (d_model * d_model + d_model) + 2 * (d_model * kv_width + kv_width)


class ViTBlock(nn.Module):
    """``x + MHA(LN(x))``, then ``x + MLP(LN(x))``."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        hidden: int,
        num_kv_heads: int | None = None,
        rope_base: float | None = None,
    ) -> None:
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attention = MultiHeadAttention(d_model, num_heads, num_kv_heads=num_kv_heads, rope_base=rope_base)
        self.norm_2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, hidden), nn.GELU(), nn.Linear(hidden, d_model))

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
        """(B, L, D) -> (the block's output, its attention's input LN1(x), its weights (B, H, L, L))."""
        normed = self.norm_1(x)
        out, weights = self.attention(normed, normed, normed, mask)  # (B, L, D), (B, H, L, L)
        x = x + out
        return x + self.mlp(self.norm_2(x)), normed, weights


class PatchModel(nn.Module):
    """Patch embedding, [CLS], learned positions, Pre-Norm blocks, a readout from [CLS].

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
        self.blocks = nn.ModuleList(
            ViTBlock(d_model, num_heads, MLP_RATIO * d_model, num_kv_heads, rope_base) for _ in range(layers)
        )
        self.norm = nn.LayerNorm(d_model)
        self.readout = nn.Linear(d_model, classes)

    @property
    def layers(self) -> list[MultiHeadAttention]:
        """Each block's attention layer, first block first (what the page shows, as ``TaskModel.layers``)."""
        return [block.attention for block in self.blocks]

    def embed(self, images: Tensor) -> Tensor:
        """(B, C, H, W) in [0, 1] -> (B, L, D): [CLS] and the embedded patches, plus the positions (RoPE: none)."""
        standard = (images - self.pixel_mean) / self.pixel_std
        patches = self.patch_embedding(patchify(standard, self.patch))  # (B, N, C·p·p) -> (B, N, D)
        cls = self.cls_token.expand(patches.size(0), -1, -1)  # (B, 1, D)
        tokens = torch.cat([cls, patches], dim=1)  # (B, L, D)
        if self.position_embedding is None:  # RoPE: the attention layers turn q and k by token order
            return tokens
        return tokens + self.position_embedding  # (B, L, D) + (1, L, D)

    def layer_inputs(self, images: Tensor, mask: Tensor | None = None) -> tuple[list[Tensor], list[Tensor]]:
        """What each attention layer reads, what the readout reads, and every layer's weights.

        Returns:
            ``(xs, weights)``: ``xs`` has ``layers + 1`` tensors (B, L, D) -- block l's LN1 output (its
            attention's input, Pre-Norm), then the final LN's output -- and ``weights`` one (B, H, L, L) per layer.
        """
        x = self.embed(images)
        xs, weights = [], []
        for block in self.blocks:
            x, normed, attn = block(x, mask)
            xs.append(normed)
            weights.append(attn)
        xs.append(self.norm(x))
        return xs, weights

    def forward(self, images: Tensor, mask: Tensor | None = None) -> tuple[Tensor, list[Tensor]]:
        """(B, C, H, W) -> logits (B, 1, 1, K) (one readout, at [CLS]) and each layer's weights (B, H, L, L)."""
        xs, weights = self.layer_inputs(images, mask)
        logits = self.readout(xs[-1][:, 0])  # (B, D) -> (B, K)
        return logits.view(logits.size(0), 1, 1, -1), weights  # (B, R=1, 1, K): the text tasks' layout

    def logits(self, images: Tensor, mask: Tensor | None = None) -> Tensor:
        """(B, C, H, W) -> logits (B, 1, 1, K), as :meth:`forward` gives them, computing only what reaches them.

        The readout reads [CLS] alone, so the last block's other rows reach nothing: that block attends from
        [CLS] only (a query of length 1 over every key, ``MultiHeadAttention`` takes query and key of different
        lengths) and runs its MLP on [CLS] only. Fewer multiplications, the same logits (a training step's). With
        RoPE as well: the layer turns a query of length 1 by position 0, which is [CLS]'s.
        """
        x = self.embed(images)
        for block in self.blocks[:-1]:
            x, _, _ = block(x, mask)
        last = self.blocks[-1]
        normed = last.norm_1(x)  # (B, L, D)
        rows = None if mask is None else mask[..., :1, :]  # (.., 1, L): [CLS]'s row of the keep-mask
        out, _ = last.attention(normed[:, :1], normed, normed, rows)  # (B, 1, D): [CLS]'s row only
        cls = x[:, :1] + out  # (B, 1, D)
        cls = cls + last.mlp(last.norm_2(cls))
        logits = self.readout(self.norm(cls)[:, 0])  # (B, D) -> (B, K)
        return logits.view(logits.size(0), 1, 1, -1)  # (B, R=1, 1, K)


def patch_model_parameters(
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

    Keys: ``patch_embedding`` (C·p·p·D + D), ``cls`` (D), ``positions`` (L·D; 0 with RoPE), ``attention`` (per
    layer, :func:`attention_parameters`: 4·D² + 4·D with as many key/value heads as heads), ``block`` (per layer,
    attention + 2 LayerNorms + the MLP), ``readout`` (final LayerNorm and D·K + K), ``total``.
    """
    tokens = (image_size // patch) ** 2 + 1
    hidden = MLP_RATIO * d_model
    attention = attention_parameters(d_model, num_heads, num_kv_heads)
    block = attention + 2 * 2 * d_model + (d_model * hidden + hidden) + (hidden * d_model + d_model)
    parts = {
        "patch_embedding": channels * patch * patch * d_model + d_model,
        "cls": d_model,
        "positions": 0 if rope else tokens * d_model,
        "attention": attention,
        "block": block,
        "readout": 2 * d_model + d_model * classes + classes,
    }
    parts["total"] = parts["patch_embedding"] + parts["cls"] + parts["positions"] + layers * block + parts["readout"]
    return parts


def build_patch_model(
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
) -> PatchModel:
    """A :class:`PatchModel` with parameters drawn from ``generator`` alone, in a fixed order.

    Linear layers ~ U(-1/√fan_in, 1/√fan_in) (weights and biases); [CLS] and positions (none with RoPE)
    ~ N(0, 0.02²); LayerNorms start as the identity (weight 1, bias 0). Without ``num_kv_heads`` and
    ``rope_base`` these are the draws of the model before either option existed.
    """
    with torch.device("meta"):
        model = PatchModel(
            channels, image_size, patch, d_model, num_heads, layers, classes, pixels, num_kv_heads, rope_base
        )
    model = model.to_empty(device="cpu")
    with torch.no_grad():
        model.cls_token.normal_(0.0, POSITION_STD, generator=generator)
        if model.position_embedding is not None:
            model.position_embedding.normal_(0.0, POSITION_STD, generator=generator)
        for module in model.modules():
            if isinstance(module, nn.Linear):
                bound = 1.0 / math.sqrt(module.in_features)
                module.weight.uniform_(-bound, bound, generator=generator)
                module.bias.uniform_(-bound, bound, generator=generator)
            elif isinstance(module, nn.LayerNorm):
                module.weight.fill_(1.0)
                module.bias.zero_()
    return model
