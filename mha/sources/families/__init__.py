"""Checkpoint families, one module each, and the registry that finds one by ``config.json``'s ``model_type``.

A family says everything that differs between architectures when one layer is read (see
:class:`~mha.sources.families.base.Family`): ``bert.py`` (Post-Norm encoders), ``gpt2.py``
(Pre-Norm causal language models), ``llama.py`` and ``qwen2.py`` (Pre-Norm causal language models with
grouped-query attention and rotary positions) and ``vit.py`` (Pre-Norm image encoders: ViT and DeiT).
To add one, write ``<name>.py`` here defining ``FAMILY = <Family subclass>()``: it is found when this
package is imported (:func:`register`), and its ``model_types`` join :func:`supported_types`. Nothing
else changes: the checkpoint source (:mod:`mha.sources.checkpoint`) asks only the family's hooks.
Family modules import torch only (never ``transformers`` at module level); only this package names a
family.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping

from mha.config import LIMITS
from mha.sources.base import SourceSizes, SourceUnavailableError
from mha.sources.families.base import Family, ImageGeometry, Projection

__all__ = [
    "FAMILIES",
    "SUPPORTED_TYPES",
    "Family",
    "ImageGeometry",
    "Projection",
    "checked_sizes",
    "family_for",
    "register",
    "supported_types",
]

#: The registry: ``model_type`` -> the family that reads it.
FAMILIES: dict[str, Family] = {}


def register(family: Family) -> Family:
    """Add ``family`` to the registry under each of its ``model_types`` (a later family replaces an earlier one's
    type); return it.

    Raises:
        ValueError: a family with no ``model_types``.
    """
    if not family.model_types:
        raise ValueError(f"{type(family).__name__} names no model_type")
    FAMILIES.update(dict.fromkeys(family.model_types, family))
    return family


def _discover() -> None:
    """Register every module of this package that defines ``FAMILY`` (in name order)."""
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
        family = getattr(importlib.import_module(f"{__name__}.{module.name}"), "FAMILY", None)
        if isinstance(family, Family):
            register(family)


_discover()
#: The ``model_type`` values of this package's own families, in the order messages list them.
SUPPORTED_TYPES: tuple[str, ...] = tuple(FAMILIES)


def supported_types() -> tuple[str, ...]:
    """The ``model_type`` values read here now (this package's and any registered since), in the order messages
    list them."""
    return tuple(FAMILIES)


def _not_supported(name: str, model_type: str) -> SourceUnavailableError:
    supported = ", ".join(supported_types())
    return SourceUnavailableError(
        "not_supported",
        f"{name} is a {model_type!r} model; only {supported} models are read here",
        name=name,
        model_type=model_type,
        supported=supported,
    )


def family_for(name: str, config: Mapping[str, object]) -> Family:
    """The family that reads the checkpoint ``name`` with this ``config.json``.

    Raises:
        SourceUnavailableError: ``not_supported``, an unsupported ``model_type`` or a variant its
            family does not read (``model_type`` in the params says which).
    """
    model_type = str(config.get("model_type", "?"))
    family = FAMILIES.get(model_type)
    if family is None:
        raise _not_supported(name, model_type)
    variant = family.refuse(name, config)
    if variant is not None:
        raise _not_supported(name, variant)
    return family


def _first(config: Mapping[str, object], keys: tuple[str, ...]) -> int:
    present = next((key for key in keys if key in config), keys[0])
    return int(str(config[present]))  # KeyError, ValueError: the caller says config.json is broken


def _broken(name: str, reason: str) -> SourceUnavailableError:
    return SourceUnavailableError("broken", f"{name}: {reason}", name=name, reason=reason)


def checked_sizes(name: str, config: Mapping[str, object], family: Family) -> SourceSizes:
    """Hidden size, heads, key/value heads and layers from ``config.json`` (the family's keys), refused beyond the
    server's limits or where the heads do not divide; an image checkpoint's tokens (``[CLS]`` and its patches) too.

    Raises:
        SourceUnavailableError: ``broken`` (a size missing or not a number, a hidden size the heads do not divide,
            key/value heads that do not divide the heads), ``too_big`` or ``too_many_tokens``.
    """
    try:
        d_model, num_heads, layers = (_first(config, keys) for keys in family.size_keys)
        kv_heads = family.kv_heads(config)
        tokens = family.token_count(config)
    except (KeyError, TypeError, ValueError) as error:
        raise _broken(name, f"config.json: {error}") from error
    if num_heads >= 1 and d_model % num_heads:
        raise _broken(name, f"config.json: hidden size {d_model} is not divisible by {num_heads} heads")
    if kv_heads is not None and not (1 <= kv_heads <= num_heads and num_heads % kv_heads == 0):
        raise _broken(name, f"config.json: {kv_heads} key/value heads do not divide {num_heads} heads")
    fits = (
        LIMITS.d_model_min <= d_model <= LIMITS.d_model_max
        and 1 <= num_heads <= LIMITS.num_heads_max
        and 1 <= layers <= LIMITS.layers_max
    )
    if not fits:
        raise SourceUnavailableError(
            "too_big",
            f"{name}: hidden {d_model}, {num_heads} heads, {layers} layers is beyond this server's limits",
            name=name,
            d_model=d_model,
            num_heads=num_heads,
            layers=layers,
        )
    if tokens is not None and tokens > LIMITS.image_tokens_max:
        raise SourceUnavailableError(
            "too_many_tokens",
            f"{name}: {tokens} tokens per image is beyond this server's {LIMITS.image_tokens_max}",
            name=name,
            count=tokens,
            high=LIMITS.image_tokens_max,
        )
    return SourceSizes(d_model, num_heads, layers, family.modality, family.causal, kv_heads)
