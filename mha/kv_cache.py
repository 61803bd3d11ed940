"""A key/value cache for one attention layer: what a decoder keeps so that each new token costs one query row.

Shape legend: B batch, Hkv key/value heads, L_max the positions the cache holds, n new positions, t filled
positions, Dh head size.

While a decoder generates, every earlier token's key and value stay the same (it is causal: no earlier row sees a
later token), so they are computed once and kept. A step then projects only the new token, appends its key and
value, and attends its single query row to every kept key: O(t) per step instead of recomputing O(t²). The cache
holds the keys after their RoPE turn (a key's angle depends only on its own position) and only the Hkv key/value
heads, before they are repeated for the query heads: grouped-query attention divides its size by H / Hkv.

:class:`KVCache` is preallocated (B, Hkv, L_max, Dh) buffers, written in place at the new positions, and
:meth:`KVCache.update` returns the filled part, as pytorch-labs' gpt-fast and torchtune keep theirs.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from mha.counting import KVCacheSize

__all__ = ["KVCache"]


class KVCache(nn.Module):
    """Preallocated keys and values of one attention layer, filled position by position.

    Args:
        batch: B.
        kv_heads: Hkv, the key/value heads the layer's W_k and W_v make.
        max_length: L_max, the most positions it holds (prompt and generated tokens together).
        d_k: Dh.
        dtype, device: those of the keys and values written.

    Shape:
        ``k``, ``v``: (B, Hkv, L_max, Dh) buffers; positions ``0 .. length-1`` are filled.
    """

    k: Tensor
    v: Tensor

    def __init__(
        self,
        batch: int,
        kv_heads: int,
        max_length: int,
        d_k: int,
        dtype: torch.dtype = torch.float32,
        device: torch.device | str | None = None,
    ) -> None:
        super().__init__()
        for name, size in (("batch", batch), ("kv_heads", kv_heads), ("max_length", max_length), ("d_k", d_k)):
            if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
                raise ValueError(f"{name} must be a positive integer, got {name}={size!r}")
        shape = (batch, kv_heads, max_length, d_k)
        self.register_buffer("k", torch.zeros(shape, dtype=dtype, device=device), persistent=False)  # (B,Hkv,Lmax,Dh)
        self.register_buffer("v", torch.zeros(shape, dtype=dtype, device=device), persistent=False)  # (B,Hkv,Lmax,Dh)
        self.length = 0  # positions 0 .. length-1 hold keys and values

    @classmethod
    def for_layer(cls, layer: nn.Module, max_length: int, batch: int = 1) -> KVCache:
        """A cache sized for ``layer`` (a :class:`~mha.module.MultiHeadAttention`: its Hkv, d_k, dtype and device)."""
        weight = layer.W_k.weight  # (Hkv·Dh, D)
        return cls(batch, layer.num_kv_heads, max_length, layer.d_k, weight.dtype, weight.device)

    @property
    def max_length(self) -> int:
        """L_max: the most positions the cache holds."""
        return self.k.size(2)

    @property
    def nbytes_per_token(self) -> int:
        """Bytes one position takes in this layer's cache: a key and a value of Hkv · Dh numbers each
        (:class:`~mha.counting.KVCacheSize` of one layer at the buffers' dtype)."""
        _, kv_heads, _, d_k = self.k.shape
        return KVCacheSize(1, kv_heads, d_k, self.k.dtype).bytes_per_token

    def update(self, start: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Write the keys and values of positions ``start .. start+n-1``; return every filled position's.

        ``start`` is at most :attr:`length` (no gap is left); a ``start`` below it writes over the later
        positions and forgets what came after them (a rewind: :attr:`length` becomes ``start + n``).

        Args:
            start: the first position written.
            k: (B, Hkv, n, Dh) the new keys (after RoPE, where the layer has it).
            v: (B, Hkv, n, Dh) the new values.

        Returns:
            ``(keys, values)``, each (B, Hkv, start+n, Dh): views of the buffers, not copies (a later rewind that
            writes over these positions changes them).

        Raises:
            ValueError: a shape that is not the buffers' (B, Hkv, ·, Dh), a ``start`` below 0 or past
                :attr:`length`, or positions past L_max.
        """
        batch, kv_heads, max_length, d_k = self.k.shape
        if k.dim() != 4 or k.shape != v.shape or (k.size(0), k.size(1), k.size(3)) != (batch, kv_heads, d_k):
            raise ValueError(
                f"k and v must both have shape [B={batch}, Hkv={kv_heads}, n, Dh={d_k}], "
                f"got {list(k.shape)} and {list(v.shape)}"
            )
        n = k.size(2)
        if not 0 <= start <= self.length:
            raise ValueError(
                f"start must lie in 0 .. length={self.length} (positions 0 .. {self.length - 1} are filled), "
                f"got start={start}"
            )
        if start + n > max_length:
            raise ValueError(
                f"writing {n} position(s) at {start} .. {start + n - 1} passes the cache's L_max={max_length}; "
                f"make the cache at least {start + n} long"
            )
        self.k[:, :, start : start + n] = k  # (B, Hkv, n, Dh) into positions start .. start+n-1
        self.v[:, :, start : start + n] = v
        self.length = start + n
        return self.k[:, :, : self.length], self.v[:, :, : self.length]  # (B, Hkv, t, Dh) each, t = start + n

    def extra_repr(self) -> str:
        batch, kv_heads, max_length, d_k = self.k.shape
        return f"batch={batch}, kv_heads={kv_heads}, max_length={max_length}, d_k={d_k}, length={self.length}"
