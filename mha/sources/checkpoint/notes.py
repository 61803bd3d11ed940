"""The notes a checkpoint's run shows: tokens its vocabulary did not know, where to go for Chinese, its family's, and
its layer's key/value heads where fewer than its query heads.

A note is a code (``notes.<code>`` on the page) with its parameters (:class:`~mha.sources.base.Note`).
What a family's reader must know (how its layer is read, that it is causal, its tokenizer, its image's
tokens) is the family's to say (:meth:`~mha.sources.families.base.Family.page_notes`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

from mha.checkpoints import chinese_checkpoint
from mha.module import MultiHeadAttention
from mha.sources.base import Note
from mha.sources.families import Family

__all__ = ["BYTE_PIECE", "UNK", "family_notes", "layer_notes", "layer_params", "rope_base_text", "token_notes"]

UNK = "[UNK]"
BYTE_PIECE = "\ufffd"  # what a byte-level BPE token that holds part of a character's bytes decodes to


def _is_han(char: str) -> bool:
    return "CJK" in unicodedata.name(char, "")


def token_notes(name: str, text: str, tokens: tuple[str, ...], listed: tuple[str, ...]) -> tuple[Note, ...]:
    """Notes for the page: tokens the vocabulary did not know ([UNK], or a byte-level BPE's pieces of a
    character's bytes), and where to go for Chinese.

    Args:
        name: the checkpoint's name on the page.
        text: the learner's text; tokens: the checkpoint's tokens for it.
        listed: the names on the server's list (another one that reads Chinese is suggested).
    """
    unknown = sum(token == UNK for token in tokens)
    pieces = sum(BYTE_PIECE in token for token in tokens)
    notes = []
    if unknown:
        notes.append(Note("unk_tokens", {"checkpoint": name, "count": unknown, "total": len(tokens)}))
    if pieces:
        notes.append(Note("byte_pieces", {"checkpoint": name, "count": pieces, "total": len(tokens)}))
    if notes and any(_is_han(char) for char in text):
        other = chinese_checkpoint(tuple(n for n in listed if n != name))
        if other is not None:
            notes.append(Note("unk_chinese", {"checkpoint": name, "suggestion": other}))
        else:
            notes.append(Note("unk_chinese_unlisted", {"checkpoint": name}))
    return tuple(notes)


def family_notes(
    family: Family, framed: bool, tokens: tuple[str, ...], params: Mapping[str, object]
) -> tuple[Note, ...]:
    """The family's notes for a run (:meth:`~mha.sources.families.base.Family.page_notes`), each with ``params``.

    Args:
        framed: the tokenizer adds tokens of its own to every text (``False`` for an image).
        tokens: the run's tokens.
        params: every note's parameters (the checkpoint's name; an image's size, patch and grid).
    """
    return tuple(Note(code, dict(params)) for code in family.page_notes(framed, tokens))


def rope_base_text(value: float) -> str:
    """A rotary base as the page writes it: ``10,000``, ``1,000,000`` (``5e+05`` style only for a fraction)."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def layer_params(name: str, model: MultiHeadAttention) -> dict[str, object]:
    """A text run's family-note parameters: the checkpoint's name and, where its layer turns q and k by rotary
    positions, the base (``rope_base``, e.g. ``10,000``)."""
    params: dict[str, object] = {"checkpoint": name}
    if model.rope_base is not None:
        params["rope_base"] = rope_base_text(model.rope_base)
    return params


def layer_notes(name: str, model: MultiHeadAttention, without_bias: tuple[str, ...] = ()) -> tuple[Note, ...]:
    """``grouped_kv`` where the layer has fewer key/value heads than query heads: how many, and which reads which;
    ``zero_bias`` where our layer holds a zero bias for projections the checkpoint has none for (``without_bias``,
    e.g. Qwen2's ``W_o``): the parameters the page counts that the checkpoint does not hold."""
    notes: tuple[Note, ...] = ()
    if model.num_kv_heads != model.num_heads:
        params = {
            "checkpoint": name,
            "heads": model.num_heads,
            "kv_heads": model.num_kv_heads,
            "group": model.kv_groups,
        }
        notes += (Note("grouped_kv", params),)
    added = [ours for ours in without_bias if getattr(model, ours).bias is not None]
    if added:
        count = sum(getattr(model, ours).bias.numel() for ours in added)
        notes += (Note("zero_bias", {"checkpoint": name, "names": ", ".join(added), "count": count}),)
    return notes
