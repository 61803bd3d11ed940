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

__all__ = ["CATALOG"]

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


def _merge() -> dict[str, dict[str, str]]:
    merged: dict[str, dict[str, str]] = {}
    for module in _MODULES:
        for key, entry in module.MESSAGES.items():
            if key in merged:
                raise KeyError(f"message key {key!r} is defined twice (in {module.__name__})")
            merged[key] = entry
    return merged


CATALOG = _merge()
