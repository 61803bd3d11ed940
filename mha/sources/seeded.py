"""The first weight source: seeded random weights and seeded token vectors (the page's default).

Weights and token vectors depend on the seed only, so a link reproduces them exactly;
they have learned nothing, which is why every head's weights are close to uniform.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from mha.config import RANDOM, AttentionConfig, WeightSpec
from mha.module import MultiHeadAttention
from mha.sources.base import SourceInputs
from mha.tokens import embed_tokens, positional_encoding, tokenize

__all__ = ["SeededSource", "build_model", "embed_inputs"]


def build_model(
    d_model: int,
    num_heads: int,
    seed: int = 0,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float32,
    num_kv_heads: int | None = None,
    rope_base: float | None = None,
) -> MultiHeadAttention:
    """A ``MultiHeadAttention`` whose weights depend on ``seed`` only (and on its sizes: ``num_kv_heads`` makes
    W_k and W_v smaller; ``rope_base`` draws nothing).

    Weights and biases are drawn like ``nn.Linear``'s default, U(-1/sqrt(D), 1/sqrt(D)),
    from a private generator: no global RNG state is touched (the server is multi-threaded).
    The layer is made on the ``meta`` device first, so ``nn.Linear``'s own initialisation
    (which draws from the global RNG) never runs.
    """
    with torch.device("meta"):
        model = MultiHeadAttention(d_model, num_heads, num_kv_heads=num_kv_heads, rope_base=rope_base)
    model = model.to_empty(device="cpu")
    generator = torch.Generator().manual_seed(seed)
    bound = 1.0 / math.sqrt(d_model)
    with torch.no_grad():
        for linear in (model.W_q, model.W_k, model.W_v, model.W_o):
            linear.weight.uniform_(-bound, bound, generator=generator)
            linear.bias.uniform_(-bound, bound, generator=generator)
    return model.to(device=device, dtype=dtype).eval().requires_grad_(False)


def embed_inputs(tokens: tuple[str, ...] | list[str], config: AttentionConfig, device: torch.device) -> Tensor:
    """Token vectors (+ sinusoidal positions when ``config.positional`` is ``sinusoidal``), shape (1, L, D).

    RoPE adds nothing here: the layer itself rotates q and k by position.
    """
    dtype = getattr(torch, config.dtype)
    x = embed_tokens(tokens, config.d_model, config.seed, dtype=dtype)  # (L, D)
    if config.positional == "sinusoidal":
        x = x + positional_encoding(len(tokens), config.d_model, dtype=dtype)  # (L, D)
    return x.unsqueeze(0).to(device)  # (1, L, D)


class SeededSource:
    """Random weights from ``spec.seed``; the models for each device and dtype are made once and kept."""

    kind = RANDOM
    num_layers = 1

    def __init__(self, spec: WeightSpec) -> None:
        if spec.d_model is None or spec.num_heads is None or spec.seed is None:
            raise ValueError(f"a random-weight spec needs d_model, num_heads and seed, got {spec}")
        self.d_model, self.num_heads, self.seed = spec.d_model, spec.num_heads, spec.seed
        self.num_kv_heads, self.rope_base = spec.num_kv_heads or spec.num_heads, spec.rope_base
        self._models: dict[tuple[str, str], MultiHeadAttention] = {}

    def model(self, device: torch.device, dtype: str) -> MultiHeadAttention:
        """The seeded layer on ``device`` in ``dtype`` (built on first use, then shared)."""
        key = (str(device), dtype)
        if key not in self._models:  # a race builds the same weights twice: harmless
            self._models[key] = build_model(
                self.d_model,
                self.num_heads,
                self.seed,
                device,
                getattr(torch, dtype),
                self.num_kv_heads,
                self.rope_base,
            )
        return self._models[key]

    def prepare(self, config: AttentionConfig, device: torch.device) -> SourceInputs:
        """The project's tokens and seeded vectors (+ positions), and the seeded layer."""
        tokens = tuple(tokenize(config.tokens, config.tokenizer))
        return SourceInputs(tokens, embed_inputs(tokens, config, device), self.model(device, config.dtype))
