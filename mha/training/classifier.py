"""The Pre-Norm classifier around the project's own ``MultiHeadAttention``: blocks and a readout from [CLS].

Shape legend: B batch, L tokens ([CLS] first), D = d_model, H heads (in ``(B, H, L, L)``), K classes, N changes.

    x_0 = embed(inputs)                                        (B, L, D): the subclass's embedding
    x_l+1 = x_l + MHA_l(LN1_l(x_l))                            Pre-Norm, as ViT
    x_l+1 = x_l+1 + MLP_l(LN2_l(x_l+1))                        Linear(D, M) -> GELU -> Linear(M, D)
    logits = readout(LN(x_last)[:, 0])                         (B, K): from [CLS] alone

Two tasks' models are this one with their own embedding: the digits' patches
(:mod:`mha.training.digits_model`) and the reviews' characters (:mod:`mha.training.reviews_model`, which also keeps
every query off a [PAD] key: :meth:`PreNormClassifier.keep_mask`). ``num_kv_heads`` and ``rope_base`` go to every
block's attention (grouped key/value heads; q and k turned by position).

Parameters are drawn from a private generator on a model made on the ``meta`` device (no global RNG is touched),
in a fixed order: the subclass's embedding draws (:meth:`PreNormClassifier.draw_embedding`), then every
``nn.Linear`` in module order ~ U(-1/√fan_in, 1/√fan_in) (weights, then biases), every LayerNorm the identity.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

import torch
from torch import Tensor, nn

from mha.module import MultiHeadAttention

__all__ = [
    "MLP_RATIO",
    "POSITION_STD",
    "PreNormBlock",
    "PreNormClassifier",
    "attention_parameters",
    "build_classifier",
    "classifier_parameters",
]

MLP_RATIO = 2  # the MLP's hidden width, in units of D
POSITION_STD = 0.02  # learned vectors ([CLS], positions, the reviews' tokens) start ~ N(0, 0.02²), as ViT's


def attention_parameters(d_model: int, num_heads: int, num_kv_heads: int | None = None) -> int:
    """One ``MultiHeadAttention``'s parameters with biases: W_q and W_o D² + D each, W_k and W_v D·Hkv·Dh + Hkv·Dh
    each (4·D² + 4·D when Hkv = H)."""
    kv_width = (num_heads if num_kv_heads is None else num_kv_heads) * (d_model // num_heads)  # Hkv·Dh
    return 2 * (d_model * d_model + d_model) + 2 * (d_model * kv_width + kv_width)


class PreNormBlock(nn.Module):
    """``x + MHA(LN(x))``, then ``x + MLP(LN(x))``."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        hidden: int,
        num_kv_heads: int | None = None,
        rope_base: float | None = None,
    ) -> None:
        super().__init__()
        self.norm_1 = nn.LayerNorm(d_model)
        self.attention = MultiHeadAttention(d_model, num_heads, num_kv_heads=num_kv_heads, rope_base=rope_base)
        self.norm_2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, hidden), nn.GELU(), nn.Linear(hidden, d_model))

    def forward(self, x: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
        """(B, L, D) -> (the block's output, its attention's input LN1(x), its weights (B, H, L, L))."""
        normed = self.norm_1(x)
        out, weights = self.attention(normed, normed, normed, mask)  # (B, L, D), (B, H, L, L)
        x = x + out
        return x + self.mlp(self.norm_2(x)), normed, weights


class PreNormClassifier(nn.Module):
    """Pre-Norm blocks over a subclass's embedding, a final LayerNorm and a linear readout from [CLS].

    A subclass registers its embedding first, then calls :meth:`add_blocks`, and defines :meth:`embed` (its inputs
    -> (B, L, D), [CLS] first) and :meth:`draw_embedding`; it may block keys in :meth:`keep_mask`.
    """

    blocks: nn.ModuleList
    norm: nn.LayerNorm
    readout: nn.Linear

    def add_blocks(
        self,
        d_model: int,
        num_heads: int,
        layers: int,
        classes: int,
        num_kv_heads: int | None = None,
        rope_base: float | None = None,
    ) -> None:
        """Register ``layers`` Pre-Norm blocks, the final LayerNorm and the readout (D -> ``classes``)."""
        self.blocks = nn.ModuleList(
            PreNormBlock(d_model, num_heads, MLP_RATIO * d_model, num_kv_heads, rope_base) for _ in range(layers)
        )
        self.norm = nn.LayerNorm(d_model)
        self.readout = nn.Linear(d_model, classes)

    @property
    def layers(self) -> list[MultiHeadAttention]:
        """Each block's attention layer, first block first (what the page shows, as ``TaskModel.layers``)."""
        return [block.attention for block in self.blocks]

    def embed(self, inputs: Tensor) -> Tensor:
        """The subclass's inputs -> (B, L, D), [CLS] first."""
        raise NotImplementedError

    def draw_embedding(self, generator: torch.Generator) -> None:
        """Draw the embedding's parameters that are not an ``nn.Linear`` from ``generator`` (the first draws)."""
        raise NotImplementedError

    def keep_mask(self, inputs: Tensor, mask: Tensor | None) -> Tensor | None:
        """The keep-mask every block runs with on ``inputs``: here ``mask`` itself."""
        return mask

    def init_parameters(self, generator: torch.Generator) -> None:
        """Draw every parameter from ``generator`` in the fixed order of the module docstring."""
        with torch.no_grad():
            self.draw_embedding(generator)
            for module in self.modules():
                if isinstance(module, nn.Linear):
                    bound = 1.0 / math.sqrt(module.in_features)
                    module.weight.uniform_(-bound, bound, generator=generator)
                    module.bias.uniform_(-bound, bound, generator=generator)
                elif isinstance(module, nn.LayerNorm):
                    module.weight.fill_(1.0)
                    module.bias.zero_()

    def layer_inputs(self, inputs: Tensor, mask: Tensor | None = None) -> tuple[list[Tensor], list[Tensor]]:
        """What each attention layer reads, what the readout reads, and every layer's weights.

        Returns:
            ``(xs, weights)``: ``xs`` has ``layers + 1`` tensors (B, L, D) -- block l's LN1 output (its
            attention's input, Pre-Norm), then the final LN's output -- and ``weights`` one (B, H, L, L) per layer.
        """
        mask = self.keep_mask(inputs, mask)
        x = self.embed(inputs)
        xs, weights = [], []
        for block in self.blocks:
            x, normed, attn = block(x, mask)
            xs.append(normed)
            weights.append(attn)
        xs.append(self.norm(x))
        return xs, weights

    def forward(self, inputs: Tensor, mask: Tensor | None = None) -> tuple[Tensor, list[Tensor]]:
        """Inputs -> logits (B, 1, 1, K) (one readout, at [CLS]) and each layer's weights (B, H, L, L)."""
        xs, weights = self.layer_inputs(inputs, mask)
        logits = self.readout(xs[-1][:, 0])  # (B, D) -> (B, K)
        return logits.view(logits.size(0), 1, 1, -1), weights  # (B, R=1, 1, K): the text tasks' layout

    def probabilities(self, readout_input: Tensor) -> Tensor:
        """The classes' probabilities from what the readout reads (``layer_inputs``' last): (B, L, D) -> (B, K)."""
        return self.readout(readout_input[:, 0]).softmax(dim=-1)  # [CLS]'s (B, D) -> (B, K)

    def logits(self, inputs: Tensor, mask: Tensor | None = None) -> Tensor:
        """Inputs -> logits (B, 1, 1, K), as :meth:`forward` gives them, computing only what reaches them.

        The readout reads [CLS] alone, so the last block's other rows reach nothing: that block attends from
        [CLS] only (a query of length 1 over every key, ``MultiHeadAttention`` takes query and key of different
        lengths) and runs its MLP on [CLS] only. Fewer multiplications, the same logits (a training step's). With
        RoPE as well: the layer turns a query of length 1 by position 0, which is [CLS]'s.
        """
        mask = self.keep_mask(inputs, mask)
        x = self.embed(inputs)
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

    def changed_logits(self, inputs: Tensor, mask: Tensor | None, layer: int, change: Tensor, query: int) -> Tensor:
        """The logits at [CLS] with block ``layer``'s attention output changed by ``change``, one run per row of it.

        The answer is read at [CLS] whatever ``query`` (the row the change is about).

        Shape:
            inputs: one input (a batch of 1); change (N, L, D), added to that attention's output (N copies of the
            input) -> (N, 1, K).
        """
        batch = change.size(0)
        x = self.embed(inputs).expand(batch, -1, -1)  # (N, L, D)
        mask = self.keep_mask(inputs, mask)
        for index, block in enumerate(self.blocks):
            normed = block.norm_1(x)
            out, _ = block.attention(normed, normed, normed, mask)  # (N, L, D)
            x = x + (out + change if index == layer else out)
            x = x + block.mlp(block.norm_2(x))
        return self.readout(self.norm(x)[:, 0]).unsqueeze(1)  # (N, D) -> (N, K) -> (N, 1, K)


Classifier = TypeVar("Classifier", bound=PreNormClassifier)


def build_classifier(make: Callable[[], Classifier], generator: torch.Generator) -> Classifier:
    """``make()`` on the ``meta`` device, then its parameters drawn from ``generator`` alone, on the CPU."""
    with torch.device("meta"):
        model = make()
    model = model.to_empty(device="cpu")
    model.init_parameters(generator)
    return model


def classifier_parameters(
    embedding: dict[str, int],
    d_model: int,
    num_heads: int,
    layers: int,
    classes: int,
    num_kv_heads: int | None = None,
) -> dict[str, int]:
    """A classifier's parameters by part, counted by formula (the tests check them against ``numel``).

    Args:
        embedding: the subclass's embedding's parts, by name (they come first and count once).

    Returns:
        The embedding's parts, ``attention`` (per layer, :func:`attention_parameters`), ``block`` (per layer:
        attention, 2 LayerNorms, the MLP), ``readout`` (final LayerNorm and D·K + K) and ``total``.
    """
    hidden = MLP_RATIO * d_model
    attention = attention_parameters(d_model, num_heads, num_kv_heads)
    parts = {
        **embedding,
        "attention": attention,
        "block": attention + 2 * 2 * d_model + (d_model * hidden + hidden) + (hidden * d_model + d_model),
        "readout": 2 * d_model + d_model * classes + classes,
    }
    parts["total"] = sum(embedding.values()) + layers * parts["block"] + parts["readout"]
    return parts
