"""Text -> tokens -> deterministic embeddings, with no downloads.

Tokenising is deliberately simple, so a learner can predict it:
    * whitespace separates words, in every script: ``小明 喜欢 打球`` is three tokens;
    * CJK text without spaces (Chinese, Japanese kana) is cut by the tokenizer choice
      (:data:`TOKENIZERS`): ``"characters"`` makes one token per character (``小明喜欢打球``
      is six tokens), ``"words"`` cuts it into words with jieba, the segmenter Chinese
      NLP tutorials use (``小明 / 喜欢 / 打球``);
    * punctuation is kept, one token per mark;
    * bracketed special tokens such as ``[PAD]`` or ``[CLS]`` stay whole.

Embeddings are random vectors seeded by (token, seed): the same token always gets
the same vector for a given seed, so repeated words share a row pattern.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import threading
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

import torch
from torch import Tensor

__all__ = ["TOKENIZERS", "embed_tokens", "positional_encoding", "shown_token", "token_labels", "tokenize"]

#: How CJK text without spaces is cut: one token per character, or jieba's words.
TOKENIZERS = ("characters", "words")

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# What only modifies the character before it: variation selectors, skin tones, combining marks.
_MODIFIERS = "[\ufe00-\ufe0f\U0001f3fb-\U0001f3ff\u0300-\u036f\u20d0-\u20ff]*"
_TOKEN_PATTERN = re.compile(
    rf"\[[A-Za-z_]+\]"  # special tokens: [PAD], [CLS], [SEP], [MASK]
    rf"|[{_CJK}]+"  # a run of CJK characters, cut below by the tokenizer choice
    rf"|(?:(?![{_CJK}])[\w'’\u0300-\u036f-])+"  # a word (letters, combining accents, digits, ' and -)
    rf"|\S{_MODIFIERS}(?:\u200d\S{_MODIFIERS})*"  # any other visible character or emoji sequence (ZWJ-joined)
)
_CJK_RUN = re.compile(rf"[{_CJK}]+")
_SPACED_CJK = re.compile(rf"[{_CJK}]\s+[{_CJK}]")  # words already separated by spaces: "小明 喜欢"
_SEGMENTER_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _segmenter():  # -> jieba.Tokenizer, imported on first use only
    """jieba's segmenter with its dictionary loaded (about 0.7 s, once per process)."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    segmenter = jieba.Tokenizer()
    segmenter.initialize()
    return segmenter


def _cut_cjk(run: str, mode: str, spaced: bool) -> list[str]:
    """One CJK run (no spaces inside): as typed when the text is spaced, else per character or jieba word."""
    if spaced and mode == "characters":
        return [run]
    if mode == "words":
        with _SEGMENTER_LOCK:
            return _segmenter().lcut(run, HMM=True)
    return list(run)


def tokenize(text: str, mode: str = "characters") -> list[str]:
    """Split text into tokens (see the module docstring for the rules).

    Args:
        text: the learner's text.
        mode: one of :data:`TOKENIZERS`; how CJK text without spaces is cut. With
            ``"characters"``, text that already has spaces between CJK words keeps those words.

    >>> tokenize("Thinking Machines")
    ['Thinking', 'Machines']
    >>> tokenize("小明喜欢打球，他")
    ['小', '明', '喜', '欢', '打', '球', '，', '他']
    >>> tokenize("小明 喜欢 打球")
    ['小明', '喜欢', '打球']
    """
    return list(_tokenize(text, mode))


@lru_cache(maxsize=256)
def _tokenize(text: str, mode: str) -> tuple[str, ...]:
    if mode not in TOKENIZERS:
        raise ValueError(f"tokenizer must be one of {', '.join(TOKENIZERS)}, got {mode!r}")
    spaced = _SPACED_CJK.search(text) is not None
    tokens: list[str] = []
    for piece in _TOKEN_PATTERN.findall(text):
        tokens.extend(_cut_cjk(piece, mode, spaced) if _CJK_RUN.fullmatch(piece) else (piece,))
    return tuple(tokens)


_BLANK = "␣"  # a space, shown
_EDGE_BLANKS = re.compile(r"^[^\S\x00-\x1f\x7f-\x9f]+|[^\S\x00-\x1f\x7f-\x9f]+$")  # spaces at the ends, not controls
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn"})  # characters that show nothing (or move the text around)


def _shown_character(character: str) -> str:
    """One character of a token as the panel shows it: a C0 control or DEL as its U+2400-block symbol (ESC ␛,
    newline ␊, tab ␉), any other hidden character as its escape (``\\u200b``), a space as ␣."""
    code = ord(character)
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ .. ␟
    if code == 0x7F:
        return "␡"
    if unicodedata.category(character) in _HIDDEN:
        return ascii(character)[1:-1]  # \x85, \u200b, \U000e0001
    return _BLANK if character.isspace() else character


def shown_token(token: str) -> str:
    """A token as every label shows it (the generation panel's text line, steps and chart keys; a question's words).

    The spaces a tokenizer keeps at a word's ends (GPT-2's " sat") are left off; a token of spaces alone shows
    each as ␣; control characters show as their symbols and other hidden characters as escapes, so no token is
    shown empty and no two different blank or control tokens look alike.
    """
    trimmed = _EDGE_BLANKS.sub("", token) or token
    return "".join(_shown_character(character) for character in trimmed)


def token_labels(tokens: Sequence[str]) -> list[str]:
    """Position-prefixed labels (``"3:the"``), distinct even when tokens repeat: the token axes of every chart."""
    return [f"{i}:{token}" for i, token in enumerate(tokens)]


def _token_seed(token: str, seed: int) -> int:
    """A stable 63-bit seed from (token, seed); Python's ``hash`` is salted per process, so not that."""
    digest = hashlib.blake2b(f"{seed}\x00{token}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & ((1 << 63) - 1)


def embed_tokens(tokens: Sequence[str], d_model: int, seed: int = 0, dtype: torch.dtype = torch.float32) -> Tensor:
    """One deterministic N(0, 1) vector per token.

    Args:
        tokens: the token strings, length L.
        d_model: size of each vector.
        seed: with the same seed, the same token always gets the same vector.

    Shape:
        (L, d_model), on the CPU (move it where the model is).
    """
    vectors: dict[str, Tensor] = {}
    for token in dict.fromkeys(tokens):
        generator = torch.Generator().manual_seed(_token_seed(token, seed))
        vectors[token] = torch.randn(d_model, generator=generator, dtype=torch.float64, device="cpu")  # seeded draw
    if not tokens:
        return torch.empty(0, d_model, dtype=dtype, device="cpu")
    return torch.stack([vectors[token] for token in tokens]).to(dtype)  # (L, d_model)


def positional_encoding(
    length: int, d_model: int, dtype: torch.dtype = torch.float32, device: torch.device | str = "cpu"
) -> Tensor:
    """The sinusoidal encoding of "Attention Is All You Need".

    PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(pos / 10000^(2i/d)), computed in float64 on the CPU
    (Apple's mps has no float64), then moved to ``device`` in ``dtype``.

    Shape:
        (length, d_model).
    """
    position = torch.arange(length, dtype=torch.float64, device="cpu").unsqueeze(1)  # (L, 1)
    even = torch.arange(0, d_model, 2, dtype=torch.float64, device="cpu")  # (ceil(D/2),)
    div_term = torch.exp(even * (-math.log(10000.0) / d_model))  # 1 / 10000^(2i/D), (ceil(D/2),)
    encoding = torch.zeros(length, d_model, dtype=torch.float64, device="cpu")
    encoding[:, 0::2] = torch.sin(position * div_term)  # (L, ceil(D/2))
    encoding[:, 1::2] = torch.cos(position * div_term[: d_model // 2])  # (L, floor(D/2))
    return encoding.to(device, dtype)
