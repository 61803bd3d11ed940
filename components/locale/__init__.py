"""Message catalogs, one module per area; merged into ``CATALOG``. Keys must be unique."""

from __future__ import annotations

from components.locale import (
    common,
    efficient,
    export,
    flash,
    generation,
    input_checks,
    labs,
    labs_practice,
    playground,
    pretrained,
    questions,
    reviews,
    teacher,
    training,
    vision,
    weights,
)

__all__ = ["CATALOG", "LAB_CATALOGS"]

_MODULES = (
    common,
    export,
    playground,
    labs,
    labs_practice,
    teacher,
    input_checks,
    weights,
    pretrained,
    generation,
    training,
    vision,
    efficient,
    flash,
    reviews,
    questions,
)

#: The one catalog that holds each lab's words (``nav.lab.<name>`` and every ``lab.<name>.*``): labs 1 to 9 share
#: labs.py, lab 10's sit beside the images' words in vision.py, labs 11 and 12 (the learner's own layer) share
#: labs_practice.py, labs 13 and 14 have a catalog of their own.
LAB_CATALOGS = {
    **dict.fromkeys(("scaling", "heads", "reshape", "masks", "loop", "complexity", "cross", "sculpt", "encoder"), labs),
    "windows": vision,
    "attribution": labs_practice,
    "onnx": labs_practice,
    "flash": flash,
    "efficient": efficient,
}


def _merge() -> dict[str, dict[str, str]]:
    merged: dict[str, dict[str, str]] = {}
    for module in _MODULES:
        for key, entry in module.MESSAGES.items():
            if key in merged:
                raise KeyError(f"message key {key!r} is defined twice (in {module.__name__})")
            merged[key] = entry
    return merged


CATALOG = _merge()
