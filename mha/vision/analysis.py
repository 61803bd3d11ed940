"""What a ViT's attention weights say about the image: how far each head looks, and attention rollout.

Shape legend: H heads, L = 1 + N tokens ([CLS] first, then the N = R·Q patches in row-major
order), R and Q the patch grid's rows and columns, p the patch size in pixels; ``...`` any
leading dimensions (a batch).

**Mean attention distance** (Dosovitskiy et al. 2021, "An Image is Worth 16x16 Words", Fig. 7):
for each query patch, the sum over key patches of weight × the distance between the two patches'
centres in pixels, averaged over the query patches; one number per head. [CLS] is left out as a
query (it has no place in the image) and as a key: the weight a patch gives [CLS] is dropped, not
spread over the patches (as the common reproductions of the figure do), so a head that looks
mostly at [CLS] reads as near; :attr:`AttentionDistance.cls_share` says how much weight that was.

**Attention rollout** (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers"): per
layer, the heads' mean A; the residual connection added as Â = 0.5·A + 0.5·I with each row
renormalised to sum to 1; the product from the first layer up, R = Â_L ⋯ Â_1. Row i of R says how
much of token i's final vector traces back to each input token *if* attention were all that mixed
tokens. It ignores the values, the MLPs and the LayerNorms: a picture of where attention flows,
not an explanation of the model's decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from mha.head_labels import HeadLabel, label_heads
from mha.vision.patches import grid_relations, patch_centres

__all__ = [
    "AttentionDistance",
    "ImageAnalysis",
    "analyse_image",
    "attention_rollout",
    "cls_map",
    "mean_attention_distance",
    "patch_head_labels",
    "uniform_attention_distance",
]


@dataclass(frozen=True)
class AttentionDistance:
    """Per head: how far the patches look (pixels) and how much of their weight went to [CLS] (left out).

    Shape:
        pixels (..., H) float64; cls_share (..., H) float64 in [0, 1] (0 with no [CLS]).
    """

    pixels: Tensor
    cls_share: Tensor


def mean_attention_distance(
    weights: Tensor, rows: int, columns: int, patch: int, cls_tokens: int = 1
) -> AttentionDistance:
    """Each head's mean attention distance in pixels (see the module docstring for what is left out).

    Args:
        weights: (..., H, L, L) softmax weights, L = ``cls_tokens`` + rows·columns.
        rows, columns: the patch grid.
        patch: p, a patch's side in pixels (neighbouring centres are p apart).
        cls_tokens: tokens before the patches (1 for [CLS], 0 for none).

    Returns:
        :class:`AttentionDistance`, one number per head.

    Raises:
        ValueError: L does not match the grid.
    """
    patches = rows * columns
    if weights.size(-1) != cls_tokens + patches or weights.size(-2) != cls_tokens + patches:
        raise ValueError(f"weights of shape {list(weights.shape)} do not fit {cls_tokens} + {rows}·{columns} tokens")
    queries = weights[..., cls_tokens:, :].cpu().double()  # (..., H, N, L): float64 on the CPU (mps has none)
    centres = patch_centres(rows, columns, patch)  # (N, 2) float64, on the CPU
    distance = torch.cdist(centres, centres)  # (N, N) pixels between centres
    per_query = (queries[..., cls_tokens:] * distance).sum(dim=-1)  # (..., H, N, N) * (N, N) -> (..., H, N)
    cls_share = queries[..., :cls_tokens].sum(dim=-1).mean(dim=-1)  # (..., H, N, c) -> (..., H)
    return AttentionDistance(pixels=per_query.mean(dim=-1), cls_share=cls_share)  # (..., H)


def uniform_attention_distance(rows: int, columns: int, patch: int, cls_tokens: int = 1) -> float:
    """The mean attention distance (pixels) of a head that spreads its weight evenly over every token: the
    reference a head's own is read against. Above it, a head looks further than chance; below it, a head looks
    nearer *or* gives much of its weight to [CLS], which counts as 0 pixels (:attr:`AttentionDistance.cls_share`)."""
    length = cls_tokens + rows * columns
    uniform = torch.full((1, length, length), 1.0 / length, dtype=torch.float64)  # (H=1, L, L)
    return float(mean_attention_distance(uniform, rows, columns, patch, cls_tokens).pixels[0])


def patch_head_labels(
    weights: Tensor, allowed: Tensor | None, rows: Tensor | None, grid: tuple[int, int], cls_tokens: int = 1
) -> tuple[HeadLabel, ...]:
    """Each head's label among the patch grid's relations (:func:`~mha.vision.patches.grid_relations`), not the
    sequence's: on a grid, the token before a patch is its left neighbour only inside a row.

    Args:
        weights: (H, L, L) one image's weights; allowed: the keep-mask or ``None``; rows: (L,) bool, the rows a
            loss looked at (``None``: all); grid: (R, Q); cls_tokens: tokens before the patches.
    """
    relations = grid_relations(*grid, prefix=cls_tokens)
    return label_heads(weights, allowed, relations, rows, positional=False)


def attention_rollout(weights: Sequence[Tensor]) -> Tensor:
    """R = Â_L ⋯ Â_1 with Â = rownorm(0.5·mean_heads(A) + 0.5·I), over the layers in order from the first.

    Args:
        weights: one tensor per layer, first layer first, each (..., H, L, L).

    Shape:
        (..., L, L): row i, token i's share of each input token.

    Raises:
        ValueError: no layers.
    """
    if not weights:
        raise ValueError("attention rollout needs at least one layer's weights")
    rollout: Tensor | None = None
    for layer in weights:
        mean = layer.mean(dim=-3)  # (..., H, L, L) -> (..., L, L)
        eye = torch.eye(mean.size(-1), dtype=mean.dtype, device=mean.device)  # (L, L)
        mixed = 0.5 * mean + 0.5 * eye  # (..., L, L)
        mixed = mixed / mixed.sum(dim=-1, keepdim=True)  # rows sum to 1
        rollout = mixed if rollout is None else mixed @ rollout  # (..., L, L) @ (..., L, L)
    return rollout


def cls_map(rollout: Tensor, rows: int, columns: int, cls_tokens: int = 1) -> Tensor:
    """[CLS]'s row over the patches (those after the first ``cls_tokens``) on the grid: (..., L, L) -> (..., R, Q)."""
    row = rollout[..., 0, cls_tokens:]  # (..., N)
    return row.reshape(*rollout.shape[:-2], rows, columns)  # (..., N) -> (..., R, Q)


@dataclass(frozen=True)
class ImageAnalysis:
    """What a run on an image shows beside its four steps, computed once per run (the page caches it per config).

    Shape:
        distances: (layer, :class:`AttentionDistance` over H heads) for each layer whose patch rows all carry a loss;
        rollout, last_mean, shown_mean: (L, L) float64.
    """

    layers: int  # how many layers rollout multiplies
    uniform: float  # uniform attention's mean distance (pixels): the reference line
    distances: tuple[tuple[int, AttentionDistance], ...]
    left_out: tuple[int, ...]  # layers whose patch rows no loss looked at (a model trained here: its last)
    rollout: Tensor  # R = Â_L ⋯ Â_1
    last_mean: Tensor  # the last layer's weights, mean over heads
    shown_mean: Tensor  # the shown layer's weights, mean over heads

    @property
    def cls_self_share(self) -> float:
        """What [CLS] (token 0) keeps of its own rollout row: its row carries a loss in every layer."""
        return float(self.rollout[0, 0])

    @property
    def residual_floor(self) -> float:
        """0.5^layers: what the path that stays on a token through every layer carries (Â's diagonal is >= 0.5)."""
        return 0.5**self.layers


def analyse_image(
    layer_weights: Sequence[Tensor],
    layer_rows: Sequence[Tensor | None],
    shown_weights: Tensor,
    grid: tuple[int, int],
    patch: int,
    cls_tokens: int = 1,
) -> ImageAnalysis:
    """Mean attention distance per layer and head, rollout, and the heads' means, for one image.

    Args:
        layer_weights: (1, H, L, L) per layer, first layer first.
        layer_rows: per layer, (L,) bool rows a loss looked at, or ``None`` (every row).
        shown_weights: (H, L, L) the shown layer's weights.
        grid: (R, Q) patches; patch: a patch's side in pixels; cls_tokens: tokens before the patches.
    """
    rows, columns = grid
    distances, left_out = [], []
    for layer, (weights, scored) in enumerate(zip(layer_weights, layer_rows, strict=True)):
        if scored is not None and not bool(scored[cls_tokens:].all()):
            left_out.append(layer)
            continue
        distances.append((layer, mean_attention_distance(weights[0], rows, columns, patch, cls_tokens)))  # (H,)
    layers = [weights[0].double().cpu() for weights in layer_weights]  # (H, L, L) per layer
    return ImageAnalysis(
        layers=len(layers),
        uniform=uniform_attention_distance(rows, columns, patch, cls_tokens),
        distances=tuple(distances),
        left_out=tuple(left_out),
        rollout=attention_rollout(layers),  # (L, L)
        last_mean=layers[-1].mean(dim=0),  # (H, L, L) -> (L, L)
        shown_mean=shown_weights.double().cpu().mean(dim=0),  # (H, L, L) -> (L, L)
    )
