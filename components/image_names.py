"""The bundled images' names as a learner reads them, in the page's language (``digit-3`` -> "handwritten 3")."""

from __future__ import annotations

from components.i18n import t
from mha.vision.samples import sample_label

__all__ = ["image_name"]


def image_name(name: str, lang: str | None = None) -> str:
    """A bundled sample's name for a picker: a digit's class, or what a photo shows (in ``lang``, default the
    session's)."""
    digit = sample_label(name)
    return t("image.digit", lang=lang, digit=digit) if digit is not None else t(f"image.{name}", lang=lang)
