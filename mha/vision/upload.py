"""A learner's own image: a PNG or JPEG decoded within ``LIMITS``, or refused with a reason the page translates.

Every check that can be made before the pixels are decoded is made first, cheapest first:

1. the file's size (``LIMITS.image_bytes_max``), before anything reads it;
2. its first bytes: PNG or JPEG; a GIF, BMP, WebP, TIFF ... is named and refused, anything else
   is not an image. Pillow is then asked to open it as PNG or JPEG only;
3. its width × height from the header (``LIMITS.image_pixels_max``), before the pixels are decoded:
   a small file that claims a huge image (a "decompression bomb") is refused here, or by Pillow
   itself when it claims more than twice ``Image.MAX_IMAGE_PIXELS`` (its ``DecompressionBombError``);
4. decoding, where a damaged or truncated file, or a PNG whose text chunks inflate too far, fails.

A refusal is a :class:`~mha.config.ConfigError` on the field ``image`` whose ``code`` names the
reason (:data:`REFUSALS`); the page shows ``error.image.<code>``. A decoded image is kept at most
:data:`KEPT_SIDE_MAX` pixels on its longer side (a JPEG is decoded at a reduced scale already),
turned upright by its EXIF orientation, laid on white where it is transparent, and returned as
grey or RGB floats in [0, 1].
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from mha.config import LIMITS, ConfigError

__all__ = ["ACCEPTED_FORMATS", "KEPT_SIDE_MAX", "REFUSALS", "Upload", "decode_image", "read_upload"]

ACCEPTED_FORMATS = ("PNG", "JPEG")
KEPT_SIDE_MAX = 512  # pixels on the longer side an upload is kept at (a ViT reads 224; the digits 8)
#: The reasons an upload is refused: ``ConfigError.code`` values.
REFUSALS = ("file_too_large", "not_image", "format", "too_many_pixels", "bomb", "broken")
_SIGNATURES = (  # (first bytes, format) of image formats that are recognised and refused by name
    (b"GIF87a", "GIF"),
    (b"GIF89a", "GIF"),
    (b"BM", "BMP"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
    (b"\x00\x00\x01\x00", "ICO"),
    (b"8BPS", "PSD"),
)
_PNG = b"\x89PNG\r\n\x1a\n"
_JPEG = b"\xff\xd8\xff"
_GREY_MODES = frozenset({"1", "L", "LA", "La", "I", "I;16", "F"})


def _refuse(code: str, message: str, **params: object) -> ConfigError:
    return ConfigError("image", code, message, **params)


def _other_format(data: bytes) -> str | None:
    """The name of a known image format other than PNG and JPEG that ``data`` starts with, else ``None``."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WebP"
    if data[4:12] in (b"ftypavif", b"ftypheic", b"ftypheix", b"ftypmif1"):
        return "AVIF/HEIF"
    return next((name for signature, name in _SIGNATURES if data.startswith(signature)), None)


def _check_bytes(data: bytes) -> None:
    if len(data) > LIMITS.image_bytes_max:
        raise _refuse(
            "file_too_large",
            f"the file has {len(data):,} bytes; the limit is {LIMITS.image_bytes_max:,}",
            size=f"{len(data) / 2**20:.1f}",
            high=f"{LIMITS.image_bytes_max / 2**20:.0f}",
        )
    if data.startswith((_PNG, _JPEG)):
        return
    other = _other_format(data)
    if other is not None:
        raise _refuse("format", f"{other} images are not read; use PNG or JPEG", found=other)
    raise _refuse("not_image", "the file is not a PNG or JPEG image")


def _check_pixels(width: int, height: int) -> None:
    if width * height > LIMITS.image_pixels_max:
        raise _refuse(
            "too_many_pixels",
            f"the image is {width} × {height} = {width * height:,} pixels; the limit is {LIMITS.image_pixels_max:,}",
            width=width,
            height=height,
            high=f"{LIMITS.image_pixels_max:,}",
        )


def decode_image(data: bytes) -> Tensor:
    """A PNG or JPEG file's pixels, checked against ``LIMITS`` before they are decoded.

    Args:
        data: the uploaded file's bytes.

    Shape:
        (C, H, W) float32 in [0, 1]: C = 1 for a grey image, 3 for any other; the longer side
        at most :data:`KEPT_SIDE_MAX` (shrunk keeping the aspect ratio).

    Raises:
        ConfigError: field ``image``, ``code`` one of :data:`REFUSALS`; ``params`` hold the numbers.
    """
    from PIL import Image, ImageOps, UnidentifiedImageError  # Pillow only where an image is decoded

    _check_bytes(data)
    try:
        image = Image.open(io.BytesIO(data), formats=ACCEPTED_FORMATS)  # reads the header only
    except Image.DecompressionBombError as error:
        raise _refuse("bomb", f"the file claims an image too large to decode safely: {error}") from error
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as error:
        raise _refuse("broken", f"the file could not be read as {' or '.join(ACCEPTED_FORMATS)}: {error}") from error
    with image:
        _check_pixels(*image.size)
        try:
            if image.format == "JPEG":
                image.draft(image.mode, (KEPT_SIDE_MAX, KEPT_SIDE_MAX))  # decode at 1/2, 1/4 or 1/8 scale
            image.load()
            upright = ImageOps.exif_transpose(image)
        except Image.DecompressionBombError as error:
            raise _refuse("bomb", f"the file inflates too far to decode safely: {error}") from error
        except (OSError, SyntaxError, ValueError) as error:
            raise _refuse("broken", f"the image's pixels could not be decoded: {error}") from error
    return _to_tensor(upright)


def _to_tensor(image) -> Tensor:  # image: PIL.Image.Image
    """Grey or RGB, on white where transparent, at most KEPT_SIDE_MAX on a side -> (C, H, W) in [0, 1]."""
    from PIL import Image

    grey = image.mode in _GREY_MODES
    if "A" in image.getbands() or "transparency" in image.info:
        rgba = image.convert("RGBA")
        image = Image.alpha_composite(Image.new("RGBA", rgba.size, "white"), rgba)
    image = image.convert("L" if grey else "RGB")
    image.thumbnail((KEPT_SIDE_MAX, KEPT_SIDE_MAX), Image.Resampling.LANCZOS)  # never grows an image
    pixels = np.asarray(image, dtype=np.uint8)  # (H, W) or (H, W, 3)
    tensor = torch.from_numpy(pixels.copy()).float() / 255.0
    return tensor.unsqueeze(0) if grey else tensor.permute(2, 0, 1)  # (1, H, W) or (H, W, 3) -> (3, H, W)


@dataclass(frozen=True)
class Upload:
    """A learner's decoded image, named by its file's SHA-256: two uploads are equal (and hash alike, a cache key)
    when their files are, whatever their pixels' tensor object (left out of ``==``, ``hash`` and ``repr``)."""

    digest: str  # hex SHA-256 of the file's bytes
    pixels: Tensor = field(compare=False, repr=False)  # (C, H, W) float32 in [0, 1], as decode_image gives it


def read_upload(data: bytes) -> Upload:
    """An uploaded file decoded (:func:`decode_image`) and named by its SHA-256.

    Raises:
        ConfigError: field ``image``, ``code`` one of :data:`REFUSALS`.
    """
    pixels = decode_image(data)
    return Upload(hashlib.sha256(data).hexdigest(), pixels)
