"""The pretrained source's public names, where they have always been imported from.

The source itself lives in :mod:`mha.sources.checkpoint`, one job per module: where a checkpoint's
files are (``origin``), a loaded checkpoint (``loaded``, ``text``, ``image``), loading it once per
process (``loader``), the notes on its tokens (``notes``), the check against its own forward (``check``)
and :class:`PretrainedSource` (``source``). What differs between architectures is its family's
(:mod:`mha.sources.families`).
"""

from __future__ import annotations

from mha.sources.checkpoint.check import CHECKPOINT_TOLERANCE, CheckpointCheck
from mha.sources.checkpoint.image import ImageCheckpoint
from mha.sources.checkpoint.loaded import Checkpoint, Encoded, copy_layer
from mha.sources.checkpoint.loader import MAX_LOADED, load_checkpoint
from mha.sources.checkpoint.notes import token_notes
from mha.sources.checkpoint.origin import Origin, checkpoint_sizes, origin_of
from mha.sources.checkpoint.source import SEP, PretrainedSource
from mha.sources.checkpoint.text import TextCheckpoint

__all__ = [
    "CHECKPOINT_TOLERANCE",
    "MAX_LOADED",
    "SEP",
    "Checkpoint",
    "CheckpointCheck",
    "Encoded",
    "ImageCheckpoint",
    "Origin",
    "PretrainedSource",
    "TextCheckpoint",
    "checkpoint_sizes",
    "copy_layer",
    "load_checkpoint",
    "origin_of",
    "token_notes",
]
