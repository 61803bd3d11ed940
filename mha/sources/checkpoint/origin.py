"""Where a checkpoint's files are, how far they are trusted, and its sizes from ``config.json`` (never the network).

A pretrained spec names a checkpoint on the server's list (``ATTN_PLAYGROUND_CHECKPOINTS``: a hub id or a
folder on the server) or a learner's own hub id, where the server allows one (safetensors only, under the
server's cap: :mod:`mha.sources.any_checkpoint`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mha.checkpoints import checkpoint_location, checkpoint_names
from mha.config import WeightSpec
from mha.sources import any_checkpoint, hub
from mha.sources.base import SourceSizes, SourceUnavailableError
from mha.sources.families import checked_sizes, family_for

__all__ = ["Origin", "as_origin", "checkpoint_files", "checkpoint_sizes", "origin_of"]


@dataclass(frozen=True)
class Origin:
    """Where a pretrained spec's files are, and how far they are trusted."""

    name: str  # what the page calls it: a name on the server's list, or the learner's hub id
    location: str  # a hub id or a folder on the server
    learners: bool = False  # the learner's own hub id: the hub only, safetensors only, the server's cap

    @classmethod
    def listed(cls, name: str) -> Origin:
        """A name on the server's list (``KeyError`` for any other)."""
        return cls(name, checkpoint_location(name))


def origin_of(spec: WeightSpec) -> Origin:
    """Where the files of the pretrained ``spec`` are: the learner's hub id, else a name on the server's list.

    Raises:
        SourceUnavailableError: ``unlisted`` (a name off the list, never opened), ``bad_hub_id``
            or ``any_off`` (a hub id where the server allows none).
    """
    if spec.hub_id:
        any_checkpoint.check_allowed(spec.hub_id)
        return Origin(spec.hub_id, spec.hub_id, learners=True)
    name = spec.checkpoint or ""
    if name not in checkpoint_names():
        raise SourceUnavailableError("unlisted", f"{name!r} is not on this server's list", name=name)
    return Origin.listed(name)


def as_origin(checkpoint: str | Origin) -> Origin:
    """``checkpoint`` as an :class:`Origin`: a listed name (``KeyError`` for any other) or an origin as it is."""
    return checkpoint if isinstance(checkpoint, Origin) else Origin.listed(checkpoint)


def checkpoint_files(origin: Origin) -> tuple[Path, dict[str, object]]:
    """The checkpoint's folder and its ``config.json`` (a learner's: its files checked against the server's cap).

    Raises:
        SourceUnavailableError: not on this server (offline, not downloaded, missing) or over the cap.
    """
    if origin.learners:
        folder = hub.hub_folder(origin.name, origin.location)
        return folder, any_checkpoint.check_snapshot(origin.name, folder)
    folder = hub.checkpoint_folder(origin.name, origin.location)
    return folder, hub.config_in(origin.name, folder)


def checkpoint_sizes(checkpoint: str | Origin) -> SourceSizes:
    """The sizes of a checkpoint (a listed name, or an :class:`Origin`), read from its ``config.json`` (never the
    network).

    Raises:
        SourceUnavailableError: not on this server (offline, not downloaded, missing), a model type
            no family reads, or beyond the server's limits; the code says which.
    """
    origin = as_origin(checkpoint)
    _, config = checkpoint_files(origin)
    return checked_sizes(origin.name, config, family_for(origin.name, config))
