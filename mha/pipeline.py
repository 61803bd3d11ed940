"""From a config to a traced forward pass: seeded model, token inputs, mask, trace.

This is the one entry point the UI uses. It makes no tensor before the config has
been validated (``AttentionConfig`` validates on construction) and the token count
checked against ``LIMITS.tokens_max``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from mha.config import LIMITS, AttentionConfig, ConfigError
from mha.device import DeviceChoice, resolve_device
from mha.masks import build_mask
from mha.module import MultiHeadAttention
from mha.tokens import embed_tokens, positional_encoding, tokenize
from mha.trace import AttentionTrace

__all__ = ["AttentionRun", "build_model", "check_tokens", "embed_inputs", "run_attention"]


def build_model(
    d_model: int,
    num_heads: int,
    seed: int = 0,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float32,
) -> MultiHeadAttention:
    """A ``MultiHeadAttention`` whose weights depend on ``seed`` only.

    Weights and biases are drawn like ``nn.Linear``'s default, U(-1/sqrt(D), 1/sqrt(D)),
    from a private generator: no global RNG state is touched (the server is multi-threaded).
    The layer is made on the ``meta`` device first, so ``nn.Linear``'s own initialisation
    (which draws from the global RNG) never runs.
    """
    with torch.device("meta"):
        model = MultiHeadAttention(d_model, num_heads)
    model = model.to_empty(device="cpu")
    generator = torch.Generator().manual_seed(seed)
    bound = 1.0 / math.sqrt(d_model)
    with torch.no_grad():
        for linear in (model.W_q, model.W_k, model.W_v, model.W_o):
            linear.weight.uniform_(-bound, bound, generator=generator)
            linear.bias.uniform_(-bound, bound, generator=generator)
    return model.to(device=device, dtype=dtype).eval().requires_grad_(False)


def check_tokens(tokens: list[str]) -> None:
    """Raise :class:`ConfigError` for an empty text or one over the token cap."""
    if not tokens:
        raise ConfigError("tokens", "empty", "the text has no tokens; type a sentence")
    if len(tokens) > LIMITS.tokens_max:
        raise ConfigError(
            "tokens",
            "too_many",
            f"the text has {len(tokens)} tokens; the limit is {LIMITS.tokens_max}",
            count=len(tokens),
            high=LIMITS.tokens_max,
        )


def embed_inputs(tokens: list[str], config: AttentionConfig, device: torch.device) -> Tensor:
    """Token embeddings (+ sinusoidal positions when ``config.positional``), shape (1, L, D)."""
    dtype = getattr(torch, config.dtype)
    x = embed_tokens(tokens, config.d_model, config.seed, dtype=dtype)  # (L, D)
    if config.positional:
        x = x + positional_encoding(len(tokens), config.d_model, dtype=dtype)  # (L, D)
    return x.unsqueeze(0).to(device)  # (1, L, D)


@dataclass(frozen=True)
class AttentionRun:
    """One forward pass of the playground: what went in, where it ran, what came out."""

    config: AttentionConfig
    tokens: list[str]
    x: Tensor  # (1, L, D)
    mask: Tensor | None  # bool keep-mask, broadcastable to (1, H, L, L)
    device: DeviceChoice
    trace: AttentionTrace


def run_attention(config: AttentionConfig, model: MultiHeadAttention | None = None) -> AttentionRun:
    """Tokenise, embed, build the mask and run a traced forward (self-attention).

    Args:
        config: validated choices.
        model: a model built by :func:`build_model` for this config (pass a cached one);
            built here when ``None``.

    Raises:
        ConfigError: the text is empty or has more tokens than the cap.
    """
    tokens = tokenize(config.tokens)
    check_tokens(tokens)
    device = resolve_device(config.device)
    if model is None:
        model = build_model(config.d_model, config.num_heads, config.seed, device.device, getattr(torch, config.dtype))
    x = embed_inputs(tokens, config, device.device)
    mask = build_mask(config.mask_type, tokens, window=config.window, device=device.device)
    with torch.inference_mode():
        trace = model.forward_traced(x, x, x, mask)
    return AttentionRun(config, tokens, x, mask, device, trace)
