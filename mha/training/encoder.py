"""A small Transformer encoder over character tokens around the project's own ``MultiHeadAttention``, for ``reviews``.

Shape legend: B batch, L tokens ([CLS] first, then the characters, [PAD] after a short review), D = d_model,
H heads (in ``(B, H, L, L)``), V the vocabulary, K classes.

    x_0 = token_embedding[ids] + position_embedding[0..L-1]    (B, L, D); [CLS] is a token of the vocabulary
                                                               (training: dropout of ``dropout`` on x_0)
    x_l+1 = x_l + MHA_l(LN1_l(x_l))                            Pre-Norm, the blocks of mha.training.vit
    x_l+1 = x_l+1 + MLP_l(LN2_l(x_l+1))                        Linear(D, M) -> GELU -> Linear(M, D)
    logits = readout(LN(x_last)[:, 0])                         (B, K): from [CLS] alone

No query attends to a [PAD] key: the model adds that to whatever mask it is given (a learner's sentence has no
[PAD]). With ``rope_base`` the attention layers turn q and k by position and there is no position embedding.
Parameters are drawn from a private generator on a model made on the ``meta`` device (no global RNG is touched);
so is the embeddings' dropout mask (``dropout_generator``, set by the training loop with ``dropout``).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from mha.module import MultiHeadAttention
from mha.training.vit import MLP_RATIO, POSITION_STD, ViTBlock, attention_parameters

__all__ = ["EncoderModel", "build_encoder_model", "encoder_parameters"]


class EncoderModel(nn.Module):
    """Token and position embeddings, Pre-Norm blocks, a readout from [CLS].

    Args:
        vocab_size: V, the tokens the embedding knows (``pad_id`` among them).
        length: L, the positions the position embedding knows (the longest input, [CLS] included).
        d_model, num_heads, layers: the blocks' sizes.
        classes: K, the readout's outputs.
        pad_id: the [PAD] token's id: no query attends to it.
        num_kv_heads, rope_base: every attention layer's key/value heads and RoPE base (as :class:`PatchModel`).
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
        self.blocks = nn.ModuleList(
            ViTBlock(d_model, num_heads, MLP_RATIO * d_model, num_kv_heads, rope_base) for _ in range(layers)
        )
        self.norm = nn.LayerNorm(d_model)
        self.readout = nn.Linear(d_model, classes)

    @property
    def layers(self) -> list[MultiHeadAttention]:
        """Each block's attention layer, first block first (what the page shows)."""
        return [block.attention for block in self.blocks]

    def embed(self, ids: Tensor) -> Tensor:
        """(B, L) ids -> (B, L, D): token vectors plus the positions (RoPE: the token vectors alone)."""
        x = self.token_embedding(ids)  # (B, L, D)
        if self.position_embedding is not None:  # else RoPE: the layers turn q and k by position
            x = x + self.position_embedding[:, : ids.size(1)]  # (B, L, D) + (1, L, D)
        if self.training and self.dropout > 0.0:  # inverted dropout, the mask from the private generator
            # drawn on the CPU from the private CPU generator, then moved: the same mask on every device
            keep = (torch.rand(x.shape, generator=self.dropout_generator, device="cpu") >= self.dropout).to(x.device)
            x = x * keep / (1.0 - self.dropout)
        return x

    def keep_mask(self, ids: Tensor, mask: Tensor | None) -> Tensor | None:
        """``mask`` with every [PAD] key blocked: (B, 1, 1, L) & mask, or ``mask`` itself when ``ids`` has no [PAD]."""
        pads = ids == self.pad_id  # (B, L)
        if not bool(pads.any()):
            return mask
        keep = ~pads[:, None, None, :]  # (B, 1, 1, L): True = may attend
        return keep if mask is None else keep & mask

    def layer_inputs(self, ids: Tensor, mask: Tensor | None = None) -> tuple[list[Tensor], list[Tensor]]:
        """What each attention layer reads, what the readout reads, and every layer's weights.

        Returns:
            ``(xs, weights)``: ``xs`` has ``layers + 1`` tensors (B, L, D) -- block l's LN1 output (its attention's
            input, Pre-Norm), then the final LN's output -- and ``weights`` one (B, H, L, L) per layer.
        """
        mask = self.keep_mask(ids, mask)
        x = self.embed(ids)
        xs, weights = [], []
        for block in self.blocks:
            x, normed, attn = block(x, mask)
            xs.append(normed)
            weights.append(attn)
        xs.append(self.norm(x))
        return xs, weights

    def forward(self, ids: Tensor, mask: Tensor | None = None) -> tuple[Tensor, list[Tensor]]:
        """(B, L) ids -> logits (B, 1, 1, K) (one readout, at [CLS]) and each layer's weights (B, H, L, L)."""
        xs, weights = self.layer_inputs(ids, mask)
        logits = self.readout(xs[-1][:, 0])  # (B, D) -> (B, K)
        return logits.view(logits.size(0), 1, 1, -1), weights  # (B, R=1, 1, K): the text tasks' layout

    def logits(self, ids: Tensor, mask: Tensor | None = None) -> Tensor:
        """(B, L) ids -> logits (B, 1, 1, K) as :meth:`forward` gives them, the last block computing [CLS]'s row
        only (the readout reads nothing else): what a training step runs."""
        mask = self.keep_mask(ids, mask)
        x = self.embed(ids)
        for block in self.blocks[:-1]:
            x, _, _ = block(x, mask)
        last = self.blocks[-1]
        normed = last.norm_1(x)  # (B, L, D)
        rows = None if mask is None else mask[..., :1, :]  # (.., 1, L): [CLS]'s row of the keep-mask
        out, _ = last.attention(normed[:, :1], normed, normed, rows)  # (B, 1, D): [CLS]'s row only
        cls = x[:, :1] + out  # (B, 1, D)
        cls = cls + last.mlp(last.norm_2(cls))
        logits = self.readout(self.norm(cls)[:, 0])  # (B, D) -> (B, K)
        return logits.view(logits.size(0), 1, 1, -1)  # (B, R=1, 1, K)

    def changed_logits(self, ids: Tensor, mask: Tensor | None, layer: int, change: Tensor) -> Tensor:
        """The logits at [CLS] with block ``layer``'s attention output changed by ``change``, one run per row of it.

        Shape:
            ids (L,); change (N, L, D), added to that attention's output (N copies of the sentence) -> (N, 1, K).
        """
        batch = change.size(0)
        x = self.embed(ids.view(1, -1)).expand(batch, -1, -1)  # (N, L, D)
        mask = self.keep_mask(ids.view(1, -1), mask)
        for index, block in enumerate(self.blocks):
            normed = block.norm_1(x)
            out, _ = block.attention(normed, normed, normed, mask)  # (N, L, D)
            x = x + (out + change if index == layer else out)
            x = x + block.mlp(block.norm_2(x))
        return self.readout(self.norm(x)[:, 0]).unsqueeze(1)  # (N, D) -> (N, K) -> (N, 1, K)


def encoder_parameters(
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

    Keys: ``tokens`` (V·D), ``positions`` (L·D; 0 with RoPE), ``attention`` (per layer,
    :func:`~mha.training.vit.attention_parameters`), ``block`` (per layer: attention, 2 LayerNorms, the MLP),
    ``readout`` (final LayerNorm and D·K + K), ``total``.
    """
    hidden = MLP_RATIO * d_model
    attention = attention_parameters(d_model, num_heads, num_kv_heads)
    parts = {
        "tokens": vocab_size * d_model,
        "positions": 0 if rope else length * d_model,
        "attention": attention,
        "block": attention + 2 * 2 * d_model + (d_model * hidden + hidden) + (hidden * d_model + d_model),
        "readout": 2 * d_model + d_model * classes + classes,
    }
    parts["total"] = parts["tokens"] + parts["positions"] + layers * parts["block"] + parts["readout"]
    return parts


def build_encoder_model(
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
) -> EncoderModel:
    """An :class:`EncoderModel` with parameters drawn from ``generator`` alone, in a fixed order.

    Token embeddings and positions (none with RoPE) ~ N(0, 0.02²); Linear layers ~ U(-1/√fan_in, 1/√fan_in)
    (weights and biases); LayerNorms start as the identity.
    """
    with torch.device("meta"):
        model = EncoderModel(vocab_size, length, d_model, num_heads, layers, classes, pad_id, num_kv_heads, rope_base)
    model = model.to_empty(device="cpu")
    with torch.no_grad():
        model.token_embedding.weight.normal_(0.0, POSITION_STD, generator=generator)
        if model.position_embedding is not None:
            model.position_embedding.normal_(0.0, POSITION_STD, generator=generator)
        for module in model.modules():
            if isinstance(module, nn.Linear):
                bound = 1.0 / math.sqrt(module.in_features)
                module.weight.uniform_(-bound, bound, generator=generator)
                module.bias.uniform_(-bound, bound, generator=generator)
            elif isinstance(module, nn.LayerNorm):
                module.weight.fill_(1.0)
                module.bias.zero_()
    return model
