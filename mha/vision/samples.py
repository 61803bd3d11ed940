"""The bundled images, by name: scikit-learn's 8 × 8 handwritten digits and two photos. Nothing is downloaded.

The files lie in ``mha/vision/data/`` (sources, licences and attribution in its README.md):

- ``digits.csv.gz``: the 1,797 digits exactly as scikit-learn 1.9.1 ships them (the test set of
  UCI's "Optical Recognition of Handwritten Digits"): 64 pixels in 0..16, row by row, then the label;
- ``photo-temple.jpg`` and ``photo-flower.jpg``: scikit-learn's ``china.jpg`` and ``flower.jpg``,
  downsized from 640 × 427 to 336 × 224.

The digits are split once, the same way for every training seed: :data:`HELD_OUT_SHARE` of each
class is held out (never trained on; the accuracy is measured there), drawn by a fixed permutation. It is a
validation split, not a test split: the digits' recipe and depth were chosen by the accuracy on it.
The samples ``digit-0`` .. ``digit-9`` are the first held-out image of each class, so the page never
shows a digit the model trained on.
"""

from __future__ import annotations

import gzip
import hashlib
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

__all__ = [
    "DATA_DIR",
    "DEFAULT_IMAGE",
    "DIGIT_LEVELS",
    "DIGIT_PIXEL_MEAN",
    "DIGIT_PIXEL_STD",
    "DIGIT_SIZE",
    "HELD_OUT_SHARE",
    "PHOTOS",
    "SAMPLE_NAMES",
    "Digits",
    "load_digits",
    "sample_image",
    "sample_label",
]

DATA_DIR = Path(__file__).resolve().parent / "data"
DIGIT_SIZE = 8  # the digits are 8 × 8 pixels
DIGIT_LEVELS = 16  # each pixel counts the ink in a 4 × 4 block of the original 32 × 32 bitmap: 0..16
HELD_OUT_SHARE = 0.2
#: The training split's pixels (levels / 16) have this mean and standard deviation: a model standardises with them.
DIGIT_PIXEL_MEAN, DIGIT_PIXEL_STD = 0.306, 0.376
_SPLIT_SEED = "digits-held-out-v1"  # the split's own seed: the same split whatever the training seed
#: Photo sample name -> its file in DATA_DIR.
PHOTOS = {"photo-temple": "photo-temple.jpg", "photo-flower": "photo-flower.jpg"}
#: Every bundled sample, in the order a picker lists them.
SAMPLE_NAMES = (*(f"digit-{k}" for k in range(10)), *PHOTOS)
DEFAULT_IMAGE = "digit-3"


@dataclass(frozen=True)
class Digits:
    """The 1,797 digits and their fixed split (read-only: shared by every session).

    Shape:
        images (N, 8, 8) uint8 in 0..16; labels (N,) int64; train and held_out: indices into both.
    """

    images: Tensor
    labels: Tensor
    train: Tensor
    held_out: Tensor

    def sample_index(self, digit: int) -> int:
        """The index of sample ``digit-<digit>``: the first held-out image of that class."""
        return int(self.held_out[self.labels[self.held_out] == digit][0])


def _split_generator() -> torch.Generator:
    seed = int.from_bytes(hashlib.blake2b(_SPLIT_SEED.encode(), digest_size=8).digest(), "little") & ((1 << 63) - 1)
    return torch.Generator().manual_seed(seed)


def _split(labels: Tensor) -> tuple[Tensor, Tensor]:
    """Per class, ``ceil(HELD_OUT_SHARE × count)`` images held out by a fixed permutation; the rest train."""
    generator = _split_generator()
    held_out = []
    for digit in range(10):
        members = (labels == digit).nonzero().flatten()  # (n_k,)
        order = members[torch.randperm(members.numel(), generator=generator, device="cpu")]
        held_out.append(order[: math.ceil(HELD_OUT_SHARE * members.numel())])
    held = torch.cat(held_out)
    is_held = torch.zeros(labels.numel(), dtype=torch.bool, device="cpu")
    is_held[held] = True
    return (~is_held).nonzero().flatten(), held


@lru_cache(maxsize=1)
def load_digits() -> Digits:
    """The digits from ``digits.csv.gz`` (about 10 ms, once per process) and their fixed split."""
    with gzip.open(DATA_DIR / "digits.csv.gz", "rt") as file:
        table = np.loadtxt(file, delimiter=",", dtype=np.uint8)  # (N, 65): 64 pixels, then the label
    images = torch.from_numpy(table[:, :-1].copy()).view(-1, DIGIT_SIZE, DIGIT_SIZE)  # (N, 64) -> (N, 8, 8)
    labels = torch.from_numpy(table[:, -1].astype(np.int64))
    train, held_out = _split(labels)
    return Digits(images, labels, train, held_out)


@lru_cache(maxsize=len(PHOTOS))
def _photo(name: str) -> Tensor:
    from PIL import Image  # Pillow only where a JPEG is decoded

    with Image.open(DATA_DIR / PHOTOS[name]) as image:
        pixels = np.asarray(image.convert("RGB"), dtype=np.uint8)  # (H, W, 3)
    return torch.from_numpy(pixels.copy()).permute(2, 0, 1)  # (H, W, 3) -> (3, H, W)


def sample_image(name: str) -> Tensor:
    """The bundled image ``name`` (one of :data:`SAMPLE_NAMES`) as floats in [0, 1].

    Shape:
        (1, 8, 8) for a digit (its 0..16 levels / 16); (3, 224, 336) for a photo (RGB / 255).

    Raises:
        ValueError: a name that is not a bundled sample.
    """
    if name.startswith("digit-") and name in SAMPLE_NAMES:
        digits = load_digits()
        index = digits.sample_index(int(name.removeprefix("digit-")))
        return (digits.images[index].float() / DIGIT_LEVELS).unsqueeze(0)  # (8, 8) -> (1, 8, 8)
    if name in PHOTOS:
        return _photo(name).float() / 255.0  # (3, H, W)
    raise ValueError(f"no bundled image {name!r}; choose one of {', '.join(SAMPLE_NAMES)}")


def sample_label(name: str) -> int | None:
    """The class of sample ``name``: the digit for ``digit-k``, ``None`` for a photo."""
    return int(name.removeprefix("digit-")) if name.startswith("digit-") and name in SAMPLE_NAMES else None
