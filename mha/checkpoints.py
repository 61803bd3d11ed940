"""The server's list of pretrained checkpoints a learner may pick: names only, never a user's path.

``ATTN_PLAYGROUND_CHECKPOINTS`` = ``name=location,name=location,...``, where a location
is a Hugging Face hub id (``bert-base-uncased``) or a local directory on the server.
Without it, :data:`DEFAULT_CHECKPOINTS` is used. A widget or a link only ever names an
entry of this list; anything else is refused before it is opened.

A server may also let learners name their own hub checkpoint (``hub_id``): only where
``ATTN_PLAYGROUND_ANY_CHECKPOINT_MB=N`` is set (read at every call), a hub id of the form
``owner/name`` -- never a path or a URL -- whose safetensors weights are at most N MB
(:mod:`mha.sources.any_checkpoint` checks the repository before anything is downloaded).
"""

from __future__ import annotations

import os
import re

__all__ = [
    "ANY_CHECKPOINT_ENV",
    "CHECKPOINTS_ENV",
    "DEFAULT_CHECKPOINTS",
    "any_checkpoint_cap_mb",
    "checkpoint_location",
    "checkpoint_names",
    "chinese_checkpoint",
    "is_hub_id",
    "parse_checkpoints",
]

CHECKPOINTS_ENV = "ATTN_PLAYGROUND_CHECKPOINTS"
ANY_CHECKPOINT_ENV = "ATTN_PLAYGROUND_ANY_CHECKPOINT_MB"
#: name -> hub id: a small English encoder first (the default), BERT-base in English and Chinese, then three
#: causal language models: DistilGPT2, a Chinese GPT-2 (with a BERT tokenizer) and SmolLM2-135M (a Llama: grouped-query
#: attention, rotary positions).
DEFAULT_CHECKPOINTS: dict[str, str] = {
    "minilm": "sentence-transformers/all-MiniLM-L6-v2",
    "bert-base-uncased": "google-bert/bert-base-uncased",
    "bert-base-chinese": "google-bert/bert-base-chinese",
    "distilgpt2": "distilbert/distilgpt2",
    "gpt2-chinese": "uer/gpt2-chinese-cluecorpussmall",
    "smollm2-135m": "HuggingFaceTB/SmolLM2-135M",
}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: A hub id: owner/name, each 1-96 of ``A-Z a-z 0-9 . _ -`` starting and ending with a letter or digit.
_HUB_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
_HUB_ID = re.compile(rf"{_HUB_PART}/{_HUB_PART}")


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


def is_hub_id(text: object) -> bool:
    """Whether ``text`` has a hub id's form, ``owner/name`` (no path, URL, ``..``, ``--`` or ``.git`` end)."""
    return (
        isinstance(text, str)
        and _HUB_ID.fullmatch(text) is not None
        and ".." not in text
        and "--" not in text
        and not text.endswith(".git")
    )


def any_checkpoint_cap_mb() -> float | None:
    """The server's cap in MB on a learner's own hub checkpoint, or ``None``: learners may not name one.

    Read at every call from :data:`ANY_CHECKPOINT_ENV`; unset, empty, not a number or not above 0 is ``None``.
    """
    text = os.environ.get(ANY_CHECKPOINT_ENV, "").strip()
    try:
        cap = float(text)
    except ValueError:
        return None
    return cap if 0 < cap < float("inf") else None
