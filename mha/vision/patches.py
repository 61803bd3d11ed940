"""An image cut into patches: the tokens of a Vision Transformer, in row-major grid order.

Shape legend: B batch, C channels, H and W pixels, p the patch size, R = H / p rows and
Q = W / p columns of patches, N = R·Q patches.

Patch n is the grid cell (row n // Q, column n % Q), labelled ``r{row}c{column}``; a ViT puts
``[CLS]`` before them. Each patch is flattened channel first, then row by row inside the patch
(C, p, p): the order ``torch.nn.functional.unfold`` uses, and the order of a ``Conv2d(C, D, p,
stride=p)`` kernel, so a ViT's patch-embedding convolution is the linear layer
``weight.view(D, C·p·p)`` over these vectors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

__all__ = [
    "CLS",
    "GRID_RELATIONS",
    "PatchedImage",
    "grid_relations",
    "patch_centres",
    "patch_grid",
    "patch_pictures",
    "patch_tokens",
    "patchify",
]

CLS = "[CLS]"
PICTURE_PX_MAX = 8  # a patch's picture (drawn beside its label on the charts) has at most this many pixels a side


@dataclass(frozen=True)
class PatchedImage:
    """An image as a Vision Transformer read it: its pixels, the patch size, the tokens before the patches.

    Args:
        pixels: (C, H, W) in [0, 1], the image the model's patch embedding read (after its resizing).
        patch: p, a patch's side in pixels (it divides H and W).
        prefix: tokens before the patches (1: [CLS]).
    """

    pixels: Tensor
    patch: int
    prefix: int = 1

    @property
    def grid(self) -> tuple[int, int]:
        """(R, Q): the patch grid's rows and columns."""
        return patch_grid(self.pixels.size(-2), self.pixels.size(-1), self.patch)

    @property
    def tokens(self) -> int:
        """L = prefix + R·Q."""
        rows, columns = self.grid
        return self.prefix + rows * columns


def patch_grid(height: int, width: int, patch: int) -> tuple[int, int]:
    """(R, Q): rows and columns of ``patch`` × ``patch`` patches in an image of ``height`` × ``width`` pixels.

    Raises:
        ValueError: a patch size that does not divide both sides.
    """
    if patch < 1 or height % patch or width % patch:
        raise ValueError(f"patch size {patch} must divide the image's height {height} and width {width}")
    return height // patch, width // patch


def patchify(images: Tensor, patch: int) -> Tensor:
    """Cut images into non-overlapping ``patch`` × ``patch`` patches, each flattened.

    Args:
        images: (B, C, H, W); H and W multiples of ``patch``.
        patch: p, the side of a patch in pixels.

    Shape:
        (B, N, C·p·p), N = (H / p)·(W / p) in row-major grid order.

    Raises:
        ValueError: ``patch`` does not divide H and W.
    """
    batch, channels, height, width = images.shape
    rows, columns = patch_grid(height, width, patch)
    x = images.reshape(batch, channels, rows, patch, columns, patch)  # (B, C, R, p, Q, p)
    x = x.permute(0, 2, 4, 1, 3, 5)  # (B, R, Q, C, p, p)
    return x.reshape(batch, rows * columns, channels * patch * patch)  # (B, N, C·p·p)


def patch_tokens(rows: int, columns: int, cls: bool = True) -> tuple[str, ...]:
    """The tokens' names: ``[CLS]`` (when ``cls``) and then ``r0c0, r0c1, ...`` in row-major order."""
    cells = tuple(f"r{r}c{c}" for r in range(rows) for c in range(columns))
    return (CLS, *cells) if cls else cells


def patch_centres(rows: int, columns: int, patch: int) -> Tensor:
    """Where each patch's centre lies, in pixels from the image's top-left corner.

    Shape:
        (N, 2): (y, x) per patch in row-major order, float64, on the CPU.
    """
    r = torch.arange(rows, dtype=torch.float64, device="cpu").repeat_interleave(columns)  # (N,): 0,0,..,1,1,..
    c = torch.arange(columns, dtype=torch.float64, device="cpu").repeat(rows)  # (N,): 0,1,..,0,1,..
    return torch.stack([(r + 0.5) * patch, (c + 0.5) * patch], dim=1)  # (N, 2)


#: The relations of a patch grid a head may follow, in the order ties are broken (see :func:`grid_relations`).
GRID_RELATIONS = ("itself", "[CLS]", "left patch", "right patch", "patch above", "patch below", "nearby patches")


def grid_relations(rows: int, columns: int, prefix: int = 1) -> dict[str, Tensor]:
    """Where a head may look on a patch grid, as (L, L) bool key cells per query row, L = prefix + rows·columns.

    ``itself`` (every token), ``[CLS]`` (from each patch, the first token: from [CLS] it is ``itself``), the
    four neighbours in the grid (``left patch`` is the previous token only inside a row: the patch before
    ``r1c0`` in reading order, ``r0c3``, is not its neighbour), and ``nearby patches``: the 3 × 3 block
    around a patch (itself included). The tokens before the patches have no place in the grid: from them
    only ``itself`` points anywhere. Made on the CPU (:func:`mha.head_labels.label_heads` moves them to the run's
    device).
    """
    length = prefix + rows * columns
    cells = {name: torch.zeros(length, length, dtype=torch.bool, device="cpu") for name in GRID_RELATIONS}
    cells["itself"] = torch.eye(length, dtype=torch.bool, device="cpu")
    cells["[CLS]"][prefix:, 0] = True
    r = torch.arange(rows, device="cpu").repeat_interleave(columns)  # (N,): each patch's row
    c = torch.arange(columns, device="cpu").repeat(rows)  # (N,): its column
    dr = r.view(1, -1) - r.view(-1, 1)  # (N, N): key row - query row
    dc = c.view(1, -1) - c.view(-1, 1)
    patches = slice(prefix, length)
    steps = {"left patch": (0, -1), "right patch": (0, 1), "patch above": (-1, 0), "patch below": (1, 0)}
    for name, (down, right) in steps.items():
        cells[name][patches, patches] = (dr == down) & (dc == right)
    cells["nearby patches"][patches, patches] = (dr.abs() <= 1) & (dc.abs() <= 1)
    return cells


def patch_pictures(patched: PatchedImage, side_max: int = PICTURE_PX_MAX) -> np.ndarray:
    """Each token's patch as a small picture, as the model read it (a digit's light ink on dark), averaged down to at
    most ``side_max`` pixels a side (a checkpoint's 16 × 16 patches); the tokens before the patches transparent.

    Returns:
        (L, t, t, 4) uint8 RGBA, read-only.
    """
    channels, p = patched.pixels.size(0), patched.patch
    pieces = patchify(patched.pixels.unsqueeze(0).float().cpu(), p)[0]  # (N, C·p·p)
    pieces = pieces.view(-1, channels, p, p)  # (N, C·p·p) -> (N, C, p, p)
    if p > side_max:
        pieces = torch.nn.functional.adaptive_avg_pool2d(pieces, side_max)  # (N, C, t, t)
    rgb = pieces.expand(-1, 3, -1, -1) if channels == 1 else pieces  # (N, 3, t, t)
    side = rgb.size(-1)
    out = np.zeros((patched.tokens, side, side, 4), np.uint8)  # (L, t, t, 4): the prefix stays transparent
    out[patched.prefix :, ..., :3] = (rgb.permute(0, 2, 3, 1).clamp(0, 1) * 255).round().to(torch.uint8).numpy()
    out[patched.prefix :, ..., 3] = 255
    out.flags.writeable = False  # shared by every session that reads the cached run
    return out
