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

import torch
from torch import Tensor

__all__ = ["CLS", "patch_centres", "patch_grid", "patch_tokens", "patchify"]

CLS = "[CLS]"


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
        (N, 2): (y, x) per patch in row-major order, float64.
    """
    r = torch.arange(rows, dtype=torch.float64).repeat_interleave(columns)  # (N,): 0,0,..,1,1,..
    c = torch.arange(columns, dtype=torch.float64).repeat(rows)  # (N,): 0,1,..,0,1,..
    return torch.stack([(r + 0.5) * patch, (c + 0.5) * patch], dim=1)  # (N, 2)
