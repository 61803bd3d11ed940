"""One decoding step of one attention layer, with a key/value cache and without, timed on this machine.

Shape legend: D = d_model, t the context length (the new token and the t - 1 before it), Hkv key/value heads,
Dh head size.

At context length t a decoder needs the new token's output row. With a cache (:class:`~mha.kv_cache.KVCache`
holding the t - 1 earlier positions' keys and values) that is :meth:`~mha.module.MultiHeadAttention.forward_step`
with n = 1: one row projected, one query row against t keys. Without one it recomputes the layer over all t
positions under the causal mask and keeps the last row: t rows projected and a (t, t) score matrix. Both give the
same row (:func:`step_calls`); the cache costs t · 2 · Hkv · Dh numbers of memory (:class:`~mha.counting.KVCacheSize`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from mha.counting import KVCacheSize
from mha.experiments.timing import time_calls
from mha.kv_cache import KVCache
from mha.masks import causal_mask
from mha.module import MultiHeadAttention

__all__ = ["StepTime", "step_calls", "step_times"]


@dataclass(frozen=True)
class StepTime:
    """One decoding step at context length t: median milliseconds with the cache and without, and the cache's size."""

    length: int  # t
    cached_ms: float  # forward_step of the new row against t - 1 cached positions
    recompute_ms: float  # forward over all t positions under the causal mask, the last row kept
    cache_bytes: int  # this layer's cache holding t positions: t · 2 · Hkv · Dh · itemsize

    @property
    def ratio(self) -> float:
        """How many times longer the recomputation takes than the cached step."""
        return self.recompute_ms / self.cached_ms if self.cached_ms > 0 else float("inf")


def step_calls(
    model: MultiHeadAttention, length: int, seed: int = 0
) -> tuple[Callable[[], Tensor], Callable[[], Tensor]]:
    """The two ways to compute the output row of position t - 1 (t = ``length``) on random inputs, as calls.

    The cached call writes the new row's key and value at position t - 1 of a cache filled once with the t - 1
    earlier positions (each call writes over the last one, so every call does the same work).

    Returns:
        ``(cached, recompute)``, each returning the (1, D) output row of position t - 1.

    Raises:
        ValueError: ``length`` below 1.
    """
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise ValueError(f"length must be a positive integer, got length={length!r}")
    weight = model.W_q.weight  # (D, D): the layer's dtype and device
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(1, length, model.d_model, generator=generator, device="cpu").to(weight)  # (1, t, D)
    cache = KVCache.for_layer(model, length)
    mask = causal_mask(length, device=weight.device)  # (1, 1, t, t)
    with torch.inference_mode():
        if length > 1:
            model.forward_step(x[:, :-1], cache, 0)  # the t - 1 earlier positions, once

    def cached() -> Tensor:
        return model.forward_step(x[:, -1:], cache, length - 1).output[:, -1]  # (1, 1, D) -> (1, D)

    def recompute() -> Tensor:
        return model(x, x, x, mask)[0][:, -1]  # (1, t, D) -> (1, D)

    return cached, recompute


def step_times(model: MultiHeadAttention, lengths: Sequence[int], repeats: int) -> list[StepTime]:
    """Median milliseconds of one decoding step at each context length, with the cache and without.

    Args:
        model: the layer, at its own sizes, dtype and device.
        lengths: context lengths t (each at least 1).
        repeats: timed rounds per length (see :func:`mha.experiments.timing.time_calls`: 3 .. 25), the two ways
            taking turns after one warm-up call each.

    Returns:
        One :class:`StepTime` per length, in order.
    """
    rows = []
    for length in lengths:
        cached, recompute = step_calls(model, length)
        with_cache, without = time_calls([cached, recompute], repeats)
        cache = KVCacheSize(1, model.num_kv_heads, model.d_k, model.W_k.weight.dtype)  # this layer's cache
        rows.append(StepTime(length, with_cache.median_s * 1e3, without.median_s * 1e3, cache.bytes_for(length)))
    return rows
