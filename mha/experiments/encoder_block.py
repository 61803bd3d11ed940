"""The attention layer at work inside a Transformer encoder block: residuals, LayerNorm, feed-forward.

Post-Norm (the original Transformer, BERT)::

    x = LayerNorm₁(x + Attention(x));   y = LayerNorm₂(x + FFN(x))

Pre-Norm (GPT-2 and most models since)::

    x = x + Attention(LayerNorm₁(x));   y = x + FFN(LayerNorm₂(x))

with FFN(x) = W₂ · act(W₁ x + b₁) + b₂, W₁: d_model -> d_ff, W₂: d_ff -> d_model.
The attention is this engine's :class:`mha.MultiHeadAttention`; the block matches
``torch.nn.TransformerEncoderLayer`` (dropout off) number for number when given the same weights.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from mha.counting import total_parameters
from mha.module import MultiHeadAttention
from mha.reference import to_torch_mha
from mha.sources.seeded import build_model

__all__ = [
    "ACTIVATIONS",
    "NORM_PLACEMENTS",
    "PRESETS",
    "EncoderBlock",
    "EncoderSizes",
    "EncoderStep",
    "build_encoder",
    "parameter_breakdown",
    "to_torch_encoder_layer",
]

NORM_PLACEMENTS = ("post", "pre")
ACTIVATIONS = ("relu", "gelu")


@dataclass(frozen=True)
class EncoderSizes:
    """The sizes of one encoder block."""

    d_model: int
    num_heads: int
    d_ff: int


PRESETS = {
    "small": EncoderSizes(d_model=64, num_heads=4, d_ff=256),
    "bert_base": EncoderSizes(d_model=768, num_heads=12, d_ff=3072),  # BERT-base: 12 heads, 768, 3072
}


@dataclass(frozen=True)
class EncoderStep:
    """One intermediate of the block, in order."""

    name: str  # "input", "norm1", "attention", "residual1", "norm2", "ffn_hidden", "ffn", "residual2"
    tensor: Tensor  # (B, L, D) or (B, L, d_ff) for "ffn_hidden"


class EncoderBlock(nn.Module):
    """One Transformer encoder layer built around :class:`MultiHeadAttention`.

    Args:
        sizes: d_model, num_heads, d_ff.
        norm_first: False = Post-Norm, True = Pre-Norm.
        activation: ``"relu"`` (the original, nn.TransformerEncoderLayer's default) or ``"gelu"`` (BERT).

    Shape: x (B, L, D) -> (B, L, D).
    """

    def __init__(self, sizes: EncoderSizes, norm_first: bool = False, activation: str = "relu") -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}; choose one of {', '.join(ACTIVATIONS)}")
        self.sizes = sizes
        self.norm_first = norm_first
        self.activation = activation
        self.self_attn = MultiHeadAttention(sizes.d_model, sizes.num_heads)
        self.linear1 = nn.Linear(sizes.d_model, sizes.d_ff)
        self.linear2 = nn.Linear(sizes.d_ff, sizes.d_model)
        self.norm1 = nn.LayerNorm(sizes.d_model)
        self.norm2 = nn.LayerNorm(sizes.d_model)

    def _attention(self, x: Tensor, mask: Tensor | None) -> Tensor:
        return self.self_attn(x, x, x, mask)[0]  # (B, L, D)

    def _ffn(self, x: Tensor) -> tuple[Tensor, Tensor]:
        act = F.relu if self.activation == "relu" else F.gelu
        hidden = act(self.linear1(x))  # (B, L, D) -> (B, L, d_ff)
        return hidden, self.linear2(hidden)  # (B, L, d_ff) -> (B, L, D)

    def forward_steps(self, x: Tensor, mask: Tensor | None = None) -> list[EncoderStep]:
        """Every intermediate, in the order the block computes them; the last one is the output."""
        if self.norm_first:  # Pre-Norm: normalise what goes into each sublayer, add its output to x
            normed1 = self.norm1(x)
            attended = self._attention(normed1, mask)
            residual1 = x + attended
            normed2 = self.norm2(residual1)
            hidden, fed = self._ffn(normed2)
            residual2 = residual1 + fed
            named = [("norm1", normed1), ("attention", attended), ("residual1", residual1), ("norm2", normed2)]
            named += [("ffn_hidden", hidden), ("ffn", fed), ("residual2", residual2)]
        else:  # Post-Norm: add the sublayer's output to x, then normalise the sum
            attended = self._attention(x, mask)
            residual1 = x + attended
            normed1 = self.norm1(residual1)
            hidden, fed = self._ffn(normed1)
            residual2 = normed1 + fed
            normed2 = self.norm2(residual2)
            named = [("attention", attended), ("residual1", residual1), ("norm1", normed1)]
            named += [("ffn_hidden", hidden), ("ffn", fed), ("residual2", residual2), ("norm2", normed2)]
        return [EncoderStep("input", x)] + [EncoderStep(name, tensor) for name, tensor in named]

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        """The block's output, (B, L, D)."""
        return self.forward_steps(x, mask)[-1].tensor


def parameter_breakdown(sizes: EncoderSizes) -> dict[str, int]:
    """Parameters by part, from the sizes alone: attention 4d²+4d, FFN 2·d·d_ff + d_ff + d, norms 2·2d."""
    d, d_ff = sizes.d_model, sizes.d_ff
    return {
        "attention": total_parameters(d),
        "ffn": 2 * d * d_ff + d_ff + d,
        "layer_norms": 4 * d,
    }


def build_encoder(sizes: EncoderSizes, norm_first: bool, activation: str, seed: int = 0) -> EncoderBlock:
    """An :class:`EncoderBlock` whose weights depend on ``seed`` only (private generators).

    The attention weights are :func:`mha.pipeline.build_model`'s; the FFN's are drawn like
    ``nn.Linear``'s default, U(-1/√fan_in, 1/√fan_in); LayerNorms start at weight 1, bias 0.
    """
    block = EncoderBlock(sizes, norm_first, activation)
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        block.self_attn.load_state_dict(build_model(sizes.d_model, sizes.num_heads, seed).state_dict())
        for linear in (block.linear1, block.linear2):
            bound = 1.0 / math.sqrt(linear.in_features)
            linear.weight.uniform_(-bound, bound, generator=generator)
            linear.bias.uniform_(-bound, bound, generator=generator)
    return block.eval().requires_grad_(False)


def to_torch_encoder_layer(block: EncoderBlock) -> nn.TransformerEncoderLayer:
    """``nn.TransformerEncoderLayer`` (batch_first, dropout 0) holding copies of ``block``'s weights."""
    sizes = block.sizes
    layer = nn.TransformerEncoderLayer(
        sizes.d_model,
        sizes.num_heads,
        sizes.d_ff,
        dropout=0.0,
        activation=block.activation,
        batch_first=True,
        norm_first=block.norm_first,
    )
    with torch.no_grad():
        layer.self_attn.load_state_dict(to_torch_mha(block.self_attn).state_dict())
        for name in ("linear1", "linear2", "norm1", "norm2"):
            getattr(layer, name).load_state_dict(getattr(block, name).state_dict())
    return layer.eval().requires_grad_(False)
