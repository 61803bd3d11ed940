"""A from-scratch multi-head attention engine, written to be read next to the tutorials.

Public surface (ARCHITECTURE.md describes the whole engine and how the pages use it):

- :class:`MultiHeadAttention` -- ``W_q, W_k, W_v, W_o`` and the four pipeline steps.
- :func:`scaled_dot_product_attention` -- the attention core, ``(out, weights)``.
- :mod:`mha.masks` -- mask builders; bool masks use ``True`` = may attend.
- :class:`AttentionConfig` -- the user's choices, validated, hashable (a cache key).
"""

from mha.config import AttentionConfig, ConfigError
from mha.functional import scaled_dot_product_attention
from mha.module import MultiHeadAttention
from mha.trace import AttentionTrace

__all__ = [
    "AttentionConfig",
    "AttentionTrace",
    "ConfigError",
    "MultiHeadAttention",
    "scaled_dot_product_attention",
]
