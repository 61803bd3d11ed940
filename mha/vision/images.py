"""An image (C, H, W) with values in [0, 1] made into what a model reads: its channels, its size.

Shape legend: C channels (1 grey, 3 RGB), H and W pixels.

Grey is ITU-R BT.601 luma (0.299 R + 0.587 G + 0.114 B, what Pillow's ``convert("L")`` computes).
A size change first cuts the largest centred piece of the target's aspect ratio, then averages
pixels into the new grid (``F.interpolate`` with ``mode="area"``: each new pixel the mean of the
old ones it covers, as the digits' 8 × 8 levels are counts over 4 × 4 blocks) or, to grow an
image, interpolates bilinearly.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.nn import functional as F

from mha.vision.samples import DIGIT_SIZE

__all__ = ["LUMA", "as_digit", "center_crop", "resize", "to_channels"]

LUMA = (0.299, 0.587, 0.114)


def to_channels(image: Tensor, channels: int) -> Tensor:
    """(C, H, W) -> (channels, H, W): RGB to grey by :data:`LUMA`, grey to RGB by repeating it.

    Raises:
        ValueError: ``channels`` other than 1 or 3, or an image with neither.
    """
    if channels not in (1, 3) or image.size(0) not in (1, 3):
        raise ValueError(f"images have 1 or 3 channels, got an image of {image.size(0)} and asked for {channels}")
    if image.size(0) == channels:
        return image
    if channels == 1:
        weights = torch.tensor(LUMA, dtype=image.dtype, device=image.device)
        return torch.einsum("chw,c->hw", image, weights).unsqueeze(0)  # (3, H, W) · (3,) -> (1, H, W)
    return image.expand(3, -1, -1)  # (1, H, W) -> (3, H, W)


def center_crop(image: Tensor, height: int, width: int) -> Tensor:
    """The largest centred piece of ``image`` (C, H, W) with the aspect ratio ``height : width``."""
    _, h, w = image.shape
    if h * width > w * height:  # taller than the target: cut rows
        keep = max(1, round(w * height / width))
        top = (h - keep) // 2
        return image[:, top : top + keep, :]
    keep = max(1, round(h * width / height))
    left = (w - keep) // 2
    return image[:, :, left : left + keep]


def resize(image: Tensor, height: int, width: int) -> Tensor:
    """(C, H, W) -> (C, height, width): centre-cropped to the aspect ratio, then averaged down or grown."""
    cropped = center_crop(image, height, width)
    if cropped.shape[1:] == (height, width):
        return cropped
    shrinking = cropped.size(1) >= height and cropped.size(2) >= width
    mode = "area" if shrinking else "bilinear"
    extra = {} if shrinking else {"align_corners": False}
    resized = F.interpolate(cropped.unsqueeze(0), size=(height, width), mode=mode, **extra)  # (1, C, height, width)
    return resized.squeeze(0).clamp(0.0, 1.0)


def as_digit(image: Tensor) -> Tensor:
    """Any image (C, H, W) in [0, 1] made to look like the digits: (1, 8, 8), ink light on a dark ground.

    Grey, centre-cropped square, averaged down to 8 × 8; inverted when its border is brighter than
    its middle (a dark digit on white paper), then stretched so that its brightest pixel is 1.
    An image that already is one grey 8 × 8 (a bundled digit) is taken as it is.
    """
    if image.shape == (1, DIGIT_SIZE, DIGIT_SIZE):
        return image
    grey = resize(to_channels(image, 1), DIGIT_SIZE, DIGIT_SIZE)  # (1, 8, 8)
    border = torch.cat([grey[0, 0], grey[0, -1], grey[0, 1:-1, 0], grey[0, 1:-1, -1]])  # (28,)
    middle = grey[0, 1:-1, 1:-1]  # (6, 6)
    if border.mean() > middle.mean():
        grey = 1.0 - grey
    grey = grey - grey.min()
    top = grey.max()
    return grey / top if top > 0 else grey
