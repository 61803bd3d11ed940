"""A batch of sentences of different lengths: padded with [PAD] to one length, with and without the padding mask.

The page runs one sentence (B = 1), where nothing needs padding. A model trains on batches: the
sentences share one (B, L, D) tensor, so the shorter ones are filled up with [PAD] inputs, and a
padding mask (B, 1, 1, L) -- True = a real key, may be attended -- keeps every query away from the
[PAD] keys. :func:`check_padding` runs a layer on such a batch and on each sentence alone: with the
mask a sentence's real tokens get their outputs alone (up to float32 rounding: :data:`PADDING_TOLERANCE`);
without it they attend the padding.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from mha.config import PRETRAINED, AttentionConfig
from mha.masks import PAD_TOKENS, padding_mask
from mha.module import MultiHeadAttention
from mha.sources.base import SourceInputs, WeightSource
from mha.tokens import tokenize

__all__ = ["PAD", "PADDING_TOLERANCE", "PaddingCheck", "Sentence", "check_padding", "pad_batch", "page_batch"]

PAD = "[PAD]"
PADDING_TOLERANCE = 1e-4  # float32 sums of d_model products in another order agree to ~1e-6
_SAMPLE_FEATURES = 4


@dataclass(frozen=True)
class Sentence:
    """One sentence's tokens and its input to the layer, (1, n, D)."""

    tokens: tuple[str, ...]
    x: Tensor  # (1, n, D)


@dataclass(frozen=True)
class PaddingCheck:
    """A padded batch run through a layer, compared with each sentence run alone.

    ``gap_masked[b]`` / ``gap_unmasked[b]``: the largest |batch output - output alone| over the real
    tokens of sentence ``b``, with and without the padding mask. ``sample``: the first features of
    the shortest sentence's last real token, alone, in the batch with the mask, and without it.
    """

    tokens: tuple[tuple[str, ...], ...]  # each sentence padded to L
    lengths: tuple[int, ...]  # real tokens per sentence
    x_shape: tuple[int, ...]  # (B, L, D)
    mask: Tensor  # (B, 1, 1, L) bool keep-mask
    output_shape: tuple[int, ...]  # (B, L, D)
    gap_masked: tuple[float, ...]
    gap_unmasked: tuple[float, ...]
    sample: tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]

    @property
    def shortest(self) -> int:
        """The sentence with the fewest real tokens (the one padding changes)."""
        return min(range(len(self.lengths)), key=self.lengths.__getitem__)

    @property
    def mask_keeps_outputs(self) -> bool:
        """Whether, with the mask, the shortest sentence's outputs in the batch equal its outputs alone within
        :data:`PADDING_TOLERANCE`."""
        return self.gap_masked[self.shortest] <= PADDING_TOLERANCE

    @property
    def padding_changes_outputs(self) -> bool:
        """Whether, without the mask, the [PAD] keys move the shortest sentence's outputs beyond the tolerance."""
        return self.gap_unmasked[self.shortest] > PADDING_TOLERANCE


def _first_features(row: Tensor) -> tuple[float, ...]:
    return tuple(float(value) for value in row[:_SAMPLE_FEATURES])


def pad_batch(sentences: Sequence[Sentence], pad_x: Tensor) -> tuple[tuple[tuple[str, ...], ...], Tensor]:
    """Fill every sentence up to the longest with [PAD] and stack them.

    Args:
        sentences: the sentences, each (1, n_b, D).
        pad_x: the [PAD] token's input at every position 0 .. L-1, (1, L, D), L = the longest length.

    Returns:
        The padded token lists and the batch, (B, L, D).
    """
    length = max(len(sentence.tokens) for sentence in sentences)
    if pad_x.size(1) < length:
        raise ValueError(f"pad_x has {pad_x.size(1)} positions, the longest sentence {length}")
    tokens, rows = [], []
    for sentence in sentences:
        n = len(sentence.tokens)
        tokens.append(sentence.tokens + (PAD,) * (length - n))
        rows.append(torch.cat([sentence.x, pad_x[:, n:length]], dim=1))  # (1, n, D) + (1, L - n, D) -> (1, L, D)
    return tuple(tokens), torch.cat(rows, dim=0)  # (B, L, D)


def check_padding(model: MultiHeadAttention, sentences: Sequence[Sentence], pad_x: Tensor) -> PaddingCheck:
    """Run ``model`` (self-attention) on the padded batch with and without the padding mask, and on each sentence.

    Args:
        model: the layer.
        sentences: at least one sentence; each one's real tokens are compared.
        pad_x: the [PAD] input at every position, (1, L, D) (see :func:`pad_batch`).

    Shape:
        batch (B, L, D), mask (B, 1, 1, L), outputs (B, L, D).
    """
    tokens, x = pad_batch(sentences, pad_x)  # (B, L, D)
    mask = torch.cat([padding_mask(row, device=x.device) for row in tokens])  # B x (1, 1, 1, L) -> (B, 1, 1, L)
    with torch.inference_mode():
        masked, _ = model(x, x, x, mask)  # (B, L, D)
        unmasked, _ = model(x, x, x)  # (B, L, D)
        alone = [model(s.x, s.x, s.x)[0] for s in sentences]  # each (1, n_b, D)
    lengths = tuple(len(sentence.tokens) for sentence in sentences)
    gap_masked = tuple(float((masked[b, :n] - alone[b][0]).abs().max()) for b, n in enumerate(lengths))
    gap_unmasked = tuple(float((unmasked[b, :n] - alone[b][0]).abs().max()) for b, n in enumerate(lengths))
    short = min(range(len(lengths)), key=lengths.__getitem__)
    last = lengths[short] - 1
    sample = (
        _first_features(alone[short][0, last]),
        _first_features(masked[short, last]),
        _first_features(unmasked[short, last]),
    )
    return PaddingCheck(
        tokens=tokens,
        lengths=lengths,
        x_shape=tuple(x.shape),
        mask=mask,
        output_shape=tuple(masked.shape),
        gap_masked=gap_masked,
        gap_unmasked=gap_unmasked,
        sample=sample,
    )


def _prepare(
    source: WeightSource, config: AttentionConfig, tokens: Sequence[str], device: torch.device
) -> SourceInputs:
    return source.prepare(dataclasses.replace(config, tokens=" ".join(tokens)), device)


def page_batch(config: AttentionConfig, source: WeightSource, device: torch.device) -> PaddingCheck | None:
    """The page's sentence (without its [PAD] tokens) and its first half, as a padded batch of two.

    Each sentence's input is made by ``source`` as the page makes its own, and so is the [PAD]
    input at every position. Returns ``None`` when the sentence has fewer than two real tokens
    or the source's tokenizer does not give back the project's tokens; at once for a checkpoint,
    whose own tokenizer cuts the text (its forward is not run three times to find that out).
    """
    if source.kind == PRETRAINED:
        return None
    real = [token for token in tokenize(config.tokens, config.tokenizer) if token not in PAD_TOKENS]
    if len(real) < 2:
        return None
    long = _prepare(source, config, real, device)
    short = _prepare(source, config, real[: (len(real) + 1) // 2], device)
    pads = _prepare(source, config, [PAD] * len(real), device)
    if long.tokens != tuple(real) or pads.tokens != (PAD,) * len(real):
        return None
    sentences = [Sentence(long.tokens, long.x), Sentence(short.tokens, short.x)]
    return check_padding(long.model, sentences, pads.x)
