"""The reviews' small Transformer encoder: characters and [CLS] into the Pre-Norm classifier.

Shape legend: B batch, L tokens ([CLS] first, then the characters, [PAD] after a short review), D = d_model,
V the vocabulary, K classes.

    x_0 = token_embedding[ids] + position_embedding[0..L-1]    (B, L, D); [CLS] is a token of the vocabulary
                                                               (training: dropout of ``dropout`` on x_0)
    then the blocks and the readout of :mod:`mha.training.classifier`

No query attends to a [PAD] key: the model adds that to whatever mask it is given (a learner's sentence has no
[PAD]). With ``rope_base`` the attention layers turn q and k by position and there is no position embedding.
The embeddings' dropout mask is drawn from a private generator too (``dropout_generator``, set by the training
loop with ``dropout``).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from mha.training.classifier import POSITION_STD, PreNormClassifier, build_classifier, classifier_parameters

__all__ = ["ReviewsModel", "build_reviews_model", "reviews_model_parameters"]


class ReviewsModel(PreNormClassifier):
    """Token and position embeddings, then the Pre-Norm classifier's blocks and readout; [PAD] keys blocked.

    Args:
        vocab_size: V, the tokens the embedding knows (``pad_id`` among them).
        length: L, the positions the position embedding knows (the longest input, [CLS] included).
        d_model, num_heads, layers: the blocks' sizes.
        classes: K, the readout's outputs.
        pad_id: the [PAD] token's id: no query attends to it.
        num_kv_heads, rope_base: every attention layer's key/value heads and RoPE base (as the digits' model).
    """

    def __init__(
        self,
        vocab_size: int,
        length: int,
        d_model: int,
        num_heads: int,
        layers: int,
        classes: int,
        pad_id: int = 0,
        num_kv_heads: int | None = None,
        rope_base: float | None = None,
    ) -> None:
        super().__init__()
        self.pad_id = pad_id
        #: Dropout on the embeddings in training mode (the training loop sets it and its generator; 0: none).
        self.dropout = 0.0
        self.dropout_generator: torch.Generator | None = None
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = (
            nn.Parameter(torch.empty(1, length, d_model, device=self.token_embedding.weight.device))
            if rope_base is None
            else None
        )
        self.add_blocks(d_model, num_heads, layers, classes, num_kv_heads, rope_base)

    def embed(self, inputs: Tensor) -> Tensor:
        """(B, L) ids -> (B, L, D): token vectors plus the positions (RoPE: the token vectors alone)."""
        x = self.token_embedding(inputs)  # (B, L, D)
        if self.position_embedding is not None:  # else RoPE: the layers turn q and k by position
            x = x + self.position_embedding[:, : inputs.size(1)]  # (B, L, D) + (1, L, D)
        if self.training and self.dropout > 0.0:  # inverted dropout, the mask from the private generator
            # drawn on the CPU from the private CPU generator, then moved: the same mask on every device
            keep = (torch.rand(x.shape, generator=self.dropout_generator, device="cpu") >= self.dropout).to(x.device)
            x = x * keep / (1.0 - self.dropout)
        return x

    def draw_embedding(self, generator: torch.Generator) -> None:
        """The token vectors, then the positions (none with RoPE), ~ N(0, 0.02²)."""
        self.token_embedding.weight.normal_(0.0, POSITION_STD, generator=generator)
        if self.position_embedding is not None:
            self.position_embedding.normal_(0.0, POSITION_STD, generator=generator)

    def keep_mask(self, inputs: Tensor, mask: Tensor | None) -> Tensor | None:
        """``mask`` with every [PAD] key blocked: (B, 1, 1, L) & mask, or ``mask`` itself when ``inputs`` has no
        [PAD]."""
        pads = inputs == self.pad_id  # (B, L)
        if not bool(pads.any()):
            return mask
        keep = ~pads[:, None, None, :]  # (B, 1, 1, L): True = may attend
        return keep if mask is None else keep & mask


def reviews_model_parameters(
    vocab_size: int,
    length: int,
    d_model: int,
    num_heads: int,
    layers: int,
    classes: int,
    num_kv_heads: int | None = None,
    rope: bool = False,
) -> dict[str, int]:
    """The model's parameters by part, counted by formula (the tests check them against ``numel``).

    Keys: ``tokens`` (V·D), ``positions`` (L·D; 0 with RoPE), then
    :func:`~mha.training.classifier.classifier_parameters`' ``attention``, ``block``, ``readout`` and ``total``.
    """
    embedding = {"tokens": vocab_size * d_model, "positions": 0 if rope else length * d_model}
    return classifier_parameters(embedding, d_model, num_heads, layers, classes, num_kv_heads)


def build_reviews_model(
    vocab_size: int,
    length: int,
    d_model: int,
    num_heads: int,
    layers: int,
    classes: int,
    generator: torch.Generator,
    pad_id: int = 0,
    num_kv_heads: int | None = None,
    rope_base: float | None = None,
) -> ReviewsModel:
    """A :class:`ReviewsModel` with parameters drawn from ``generator`` alone, in a fixed order.

    Token embeddings and positions (none with RoPE) ~ N(0, 0.02²); Linear layers ~ U(-1/√fan_in, 1/√fan_in)
    (weights and biases); LayerNorms start as the identity.
    """
    sizes = (vocab_size, length, d_model, num_heads, layers, classes, pad_id, num_kv_heads, rope_base)
    return build_classifier(lambda: ReviewsModel(*sizes), generator)
