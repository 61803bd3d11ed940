"""Loading a checkpoint, once per process, at most :data:`MAX_LOADED` kept (least recently used first out).

Loaded checkpoints are shared read-only by every session, a learner's own hub checkpoints included;
two sessions asking at once load one once. Loading uses ``transformers`` (through the family's
:meth:`~mha.sources.families.base.Family.load`: ``attn_implementation="eager"``, since the SDPA
default returns no attention weights; a family that generates is loaded with its language-model head),
imported here on first use only. A checkpoint is refused unless every layer has the projections its family maps.
Never downloads (see :mod:`mha.sources.hub`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from mha.sources.base import SourceSizes, SourceUnavailableError
from mha.sources.checkpoint.checkpoint_model import Checkpoint
from mha.sources.checkpoint.image import ImageCheckpoint
from mha.sources.checkpoint.origin import Origin, as_origin, checkpoint_files
from mha.sources.checkpoint.text import TextCheckpoint
from mha.sources.families import Family, checked_sizes, family_for, supported_types

__all__ = ["MAX_LOADED", "load_checkpoint"]

MAX_LOADED = 2  # checkpoints held in memory at once per process (bert-base: about 0.5 GB each)

_LOADED: OrderedDict[tuple[str, str], Checkpoint] = OrderedDict()
_LOADED_LOCK = threading.Lock()
_LOADING: dict[tuple[str, str], threading.Lock] = {}


def _load(name: str, folder: Path, sizes: SourceSizes, family: Family, safetensors_only: bool = False) -> Checkpoint:
    """Model and tokenizer (or image processor) from ``folder``; refused unless every layer has the projections its
    family maps."""
    import transformers  # heavy (seconds): only here, never at app start

    transformers.utils.logging.disable_progress_bar()  # no "Loading weights" bars in a server's log
    try:
        model, processor, language_model = family.load(folder, safetensors_only)
    except Exception as error:  # files that do not load (bad header, missing tensor...) in any way
        reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        raise SourceUnavailableError("broken", f"{name}: {reason}", name=name, reason=reason) from error
    try:
        layers = len(family.layers(model))
        for layer in range(layers):
            family.check_structure(family.attention(model, layer))
    except AttributeError as error:
        raise SourceUnavailableError(
            "not_supported",
            f"{name}: no {error} in its layers",
            name=name,
            model_type=type(model).__name__,
            supported=", ".join(supported_types()),
        ) from error
    if layers != sizes.num_layers:
        reason = f"{layers} layers loaded, config.json says {sizes.num_layers}"
        raise SourceUnavailableError("broken", f"{name}: {reason}", name=name, reason=reason)
    for layer in range(layers):
        reason = _shape_problem(family, family.attention(model, layer), sizes)
        if reason is not None:
            reason = f"layer {layer}: {reason}"
            raise SourceUnavailableError("broken", f"{name}: {reason}", name=name, reason=reason)
    if family.reads_image:
        return ImageCheckpoint(name, model, processor, sizes, family)
    return TextCheckpoint(name, model, processor, sizes, family, language_model)


def _shape_problem(family: Family, attention: Any, sizes: SourceSizes) -> str | None:
    """What in a layer's projections differs from the shapes ``config.json``'s sizes give, or ``None``: W_q and W_o
    (D, D), W_k and W_v (Hkv·Dh, D), each bias (out,)."""
    d_model, heads = sizes.d_model, sizes.num_heads
    kv_width = (sizes.num_kv_heads or heads) * (d_model // heads)
    expected = {"W_q": d_model, "W_k": kv_width, "W_v": kv_width, "W_o": d_model}
    for ours, (weight, bias) in family.projections(attention).items():
        shape = (expected[ours], d_model)
        if tuple(weight.shape) != shape or (bias is not None and tuple(bias.shape) != shape[:1]):
            found = list(weight.shape) if bias is None else f"{list(weight.shape)} with a bias {list(bias.shape)}"
            return f"{ours} is {found}, config.json's sizes make {list(shape)}"
    return None


def load_checkpoint(checkpoint: str | Origin) -> Checkpoint:
    """A checkpoint (a listed name, or an :class:`~mha.sources.checkpoint.origin.Origin`), loaded once per process
    (at most :data:`MAX_LOADED`).

    Two sessions asking at once load it once. Never downloads (see :mod:`mha.sources.hub`).

    Raises:
        SourceUnavailableError: see :func:`~mha.sources.checkpoint.origin.checkpoint_sizes`; ``broken`` when its
            files do not load.
    """
    origin = as_origin(checkpoint)
    key = (origin.name, origin.location)
    with _LOADED_LOCK:
        if key in _LOADED:
            _LOADED.move_to_end(key)
            return _LOADED[key]
        loading = _LOADING.setdefault(key, threading.Lock())
    with loading:
        with _LOADED_LOCK:
            if key in _LOADED:
                return _LOADED[key]
        folder, config = checkpoint_files(origin)
        family = family_for(origin.name, config)
        sizes = checked_sizes(origin.name, config, family)
        checkpoint = _load(origin.name, folder, sizes, family, origin.learners)
        with _LOADED_LOCK:
            _LOADED[key] = checkpoint
            while len(_LOADED) > MAX_LOADED:
                _LOADED.popitem(last=False)
    return checkpoint
