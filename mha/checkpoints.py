"""The server's list of pretrained checkpoints a learner may pick: names only, never a user's path.

``ATTN_PLAYGROUND_CHECKPOINTS`` = ``name=location,name=location,...``, where a location
is a Hugging Face hub id (``bert-base-uncased``) or a local directory on the server.
Without it, :data:`DEFAULT_CHECKPOINTS` is used. A widget or a link only ever names an
entry of this list; anything else is refused before it is opened.
"""

from __future__ import annotations

import os
import re

__all__ = [
    "CHECKPOINTS_ENV",
    "DEFAULT_CHECKPOINTS",
    "checkpoint_location",
    "checkpoint_names",
    "chinese_checkpoint",
    "parse_checkpoints",
]

CHECKPOINTS_ENV = "ATTN_PLAYGROUND_CHECKPOINTS"
#: name -> hub id: a small English encoder first (the default), then BERT-base in English and Chinese.
DEFAULT_CHECKPOINTS: dict[str, str] = {
    "minilm": "sentence-transformers/all-MiniLM-L6-v2",
    "bert-base-uncased": "google-bert/bert-base-uncased",
    "bert-base-chinese": "google-bert/bert-base-chinese",
}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def parse_checkpoints(text: str) -> dict[str, str]:
    """``"a=org/model,b=/srv/models/b"`` -> ``{"a": "org/model", "b": "/srv/models/b"}``.

    Raises:
        ValueError: an entry without ``=``, an empty location, a name that is not 1-64 of
            ``A-Z a-z 0-9 . _ -`` (starting with a letter or digit), or a name given twice.
    """
    entries: dict[str, str] = {}
    for part in filter(None, (piece.strip() for piece in text.split(","))):
        name, sep, location = (piece.strip() for piece in part.partition("="))
        if not sep or not location or not _NAME.fullmatch(name):
            raise ValueError(f"{CHECKPOINTS_ENV}: expected name=location, got {part!r}")
        if name in entries:
            raise ValueError(f"{CHECKPOINTS_ENV}: the name {name!r} is listed twice")
        entries[name] = location
    return entries


def _listed() -> dict[str, str]:
    text = os.environ.get(CHECKPOINTS_ENV, "").strip()
    return parse_checkpoints(text) if text else dict(DEFAULT_CHECKPOINTS)


def checkpoint_names() -> tuple[str, ...]:
    """The names a learner may pick, in the server's order (the first is the default)."""
    return tuple(_listed())


def checkpoint_location(name: str) -> str:
    """The hub id or local directory behind a listed name.

    Raises:
        KeyError: ``name`` is not on the server's list (it is never used as a location itself).
    """
    return _listed()[name]


def chinese_checkpoint(names: tuple[str, ...]) -> str | None:
    """The first of ``names`` that says it is Chinese (``chinese`` in it, or ``zh`` as a dash-separated part)."""
    return next((name for name in names if "chinese" in name.lower() or "zh" in name.lower().split("-")), None)
