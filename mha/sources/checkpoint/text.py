"""A checkpoint that reads text: its tokenizer, its frame, its tokens as the page shows them, its probe sequences.

The text is cut by the checkpoint's tokenizer. What the tokenizer adds to every text (its *frame*:
``[CLS]`` ... ``[SEP]`` for a WordPiece tokenizer, nothing for a byte-level BPE) is read from the
tokenizer itself, never from the checkpoint's name; a byte-level BPE's tokens are shown as the text
they stand for (`` animal``, not ``Ganimal`` with the byte marker). A ``[PAD]`` in the text becomes the
tokenizer's pad token, where it has one, and is masked in the checkpoint's forward through its
``attention_mask``, as in a padded batch.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from mha.config import ConfigError, check_token_count
from mha.sources.base import SourceSizes
from mha.sources.checkpoint.checkpoint_model import Checkpoint, Encoded
from mha.sources.families import Family

__all__ = ["TextCheckpoint"]

_BRACKETED = re.compile(r"\[.*\]|<.*>")  # [unused3], [CLS], <pad>: markers, not words of the text


def _frame(tokenizer: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The ids the tokenizer adds before and after any text (WordPiece: ([CLS],), ([SEP],); byte-level BPE: (), ())."""
    framed = list(tokenizer("a")["input_ids"])
    plain = list(tokenizer("a", add_special_tokens=False)["input_ids"])
    for start in range(len(framed) - len(plain) + 1):
        if framed[start : start + len(plain)] == plain:
            return tuple(framed[:start]), tuple(framed[start + len(plain) :])
    return (), ()


def _is_byte_level(tokenizer: Any) -> bool:
    """The tokenizer is a byte-level BPE (GPT-2's): its tokens are byte strings, not the text they stand for."""
    decoder = getattr(getattr(tokenizer, "backend_tokenizer", None), "decoder", None)
    return decoder is not None and b'"ByteLevel"' in decoder.__getstate__()


class TextCheckpoint(Checkpoint):
    """A checkpoint that reads text, with its tokenizer (BERT, GPT-2, Llama, Qwen2)."""

    def __init__(
        self,
        name: str,
        model: Any,
        tokenizer: Any,
        sizes: SourceSizes,
        family: Family,
        language_model: Any | None = None,
    ) -> None:
        super().__init__(name, model, sizes, family, language_model)
        self.tokenizer = tokenizer
        self.prefix, self.suffix = _frame(tokenizer)
        self._byte_level = _is_byte_level(tokenizer)
        self.max_positions: int | None = getattr(model.config, "max_position_embeddings", None)
        self._candidates: Tensor | None = None

    @property
    def framed(self) -> bool:
        """The tokenizer adds tokens of its own to every text (``[CLS]`` ... ``[SEP]``)."""
        return bool(self.prefix or self.suffix)

    def display_tokens(self, ids: Sequence[int]) -> tuple[str, ...]:
        """The tokens of ``ids`` as the page shows them (a byte-level BPE's decoded: `` animal``); an id the tokenizer
        has no token for (a model whose embedding is larger than its tokenizer's vocabulary) as ``[id 50000]``."""
        tokens = self.tokenizer.convert_ids_to_tokens(list(ids))
        if self._byte_level:
            tokens = [None if token is None else self.tokenizer.convert_tokens_to_string([token]) for token in tokens]
        return tuple(f"[id {i}]" if token is None else token for i, token in zip(ids, tokens, strict=True))

    def encode(self, text: str) -> Encoded:
        """The tokenizer's tokens for ``text`` (with its frame, if any), capped like the project's own.

        Raises:
            ConfigError: no token besides the frame (``empty``), or more than the cap or the
                checkpoint's positions (``too_many``).
        """
        encoded = self.tokenizer(text, return_tensors="pt", truncation=False, return_attention_mask=False)
        ids = encoded["input_ids"]  # (1, L)
        frame = set(self.prefix + self.suffix)  # what the tokenizer adds to any text
        if not text.strip() or all(int(i) in frame for i in ids[0]):
            check_token_count(0)
        check_token_count(ids.size(1))
        if self.max_positions is not None and ids.size(1) > self.max_positions:
            raise ConfigError(
                "tokens",
                "too_many",
                f"the text has {ids.size(1)} tokens; {self.name} has {self.max_positions} positions",
                count=ids.size(1),
                high=self.max_positions,
            )
        return self.encode_ids(ids)

    def encode_ids(self, ids: Tensor) -> Encoded:
        """Token ids (1, L) as the forward reads them: the tokenizer's pad tokens masked through ``attention_mask``."""
        pad = self.tokenizer.pad_token_id
        attention_mask = torch.ones_like(ids) if pad is None else (ids != pad).long()  # (1, L): pads masked
        inputs = {"input_ids": ids, "attention_mask": attention_mask}
        return Encoded(self.display_tokens(ids[0].tolist()), inputs, attention_mask.bool())

    def probe_candidates(self) -> Tensor:
        """The ids a random probe sequence is drawn from: the vocabulary less special tokens and bracketed markers.

        Returns:
            (V',) long, ascending.
        """
        if self._candidates is None:
            special = set(self.tokenizer.all_special_ids)
            vocabulary = min(len(self.tokenizer), int(self.model.config.vocab_size))
            tokens = self.tokenizer.convert_ids_to_tokens(list(range(vocabulary)))
            kept = [i for i, token in enumerate(tokens) if i not in special and not _BRACKETED.fullmatch(token or "")]
            self._candidates = torch.tensor(kept, dtype=torch.long, device="cpu")
        return self._candidates

    def probe_prefix(self) -> tuple[int, ...]:
        """What a probe sequence starts with: the tokenizer's own prefix, or its BOS where the family wants one."""
        if self.prefix or not self.family.bos_first or self.tokenizer.bos_token_id is None:
            return self.prefix
        return (int(self.tokenizer.bos_token_id),)
