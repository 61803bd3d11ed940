"""MultiHeadAttention from scratch: W_q, W_k, W_v, W_o and the four pipeline steps.

Shape legend: B batch, H heads, Hkv key/value heads, Lq / Lk query / key length, D = d_model, Dh = D / H.

The layer reads like the tutorials: Q, K and V come from three ``nn.Linear`` layers, as
the "multi-head attention from scratch" tutorials write it. One matmul over the stacked
``W_q, W_k, W_v`` (``nn.MultiheadAttention``'s ``in_proj_weight``) is no faster here: the
stacked copy costs more than the two calls it saves (docs/PERFORMANCE.md, "Engine"). The
attention core scales q (Lq x Dh numbers) instead of the scores (Lq x Lk), as PyTorch does.

Two options turn it into the attention of today's large models (Llama, Qwen2, Mistral), and leave the
tutorials' layer as it is when unset: ``num_kv_heads`` < ``num_heads`` makes W_k and W_v smaller and lets a
group of query heads share one key/value head (grouped-query attention; 1 is multi-query), and ``rope_base``
rotates every head's q and k by position before the scores (RoPE, :mod:`mha.rope`).

:meth:`MultiHeadAttention.forward_step` is how a decoder runs the layer while it generates: only the new rows, their
keys and values appended to a :class:`~mha.kv_cache.KVCache`, their queries against every cached key.
"""

from __future__ import annotations

from dataclasses import replace

import torch
from torch import Tensor, nn

from mha.functional import attention_stages, default_scale, scaled_dot_product_attention
from mha.kv_cache import KVCache
from mha.masks import causal_mask
from mha.rope import apply_rotary_pos_emb, check_rope, rotary_cos_sin
from mha.trace import AttendStep, AttentionTrace, ConcatStep, DecodeTrace, OutputStep, ProjectStep

__all__ = ["MultiHeadAttention", "check_sizes", "kv_head_of", "repeat_kv"]


def check_sizes(d_model: int, num_heads: int, num_kv_heads: int | None = None, rope_base: float | None = None) -> None:
    """Raise ``ValueError`` naming the numbers unless ``num_heads`` splits ``d_model`` evenly, ``num_kv_heads``
    (when given) divides ``num_heads``, and RoPE (when ``rope_base`` is given) has an even d_k to rotate."""
    if isinstance(d_model, bool) or not isinstance(d_model, int) or d_model <= 0:
        raise ValueError(f"d_model must be a positive integer, got d_model={d_model!r} (num_heads={num_heads!r})")
    if isinstance(num_heads, bool) or not isinstance(num_heads, int) or num_heads <= 0:
        raise ValueError(f"num_heads must be a positive integer, got num_heads={num_heads!r} (d_model={d_model!r})")
    if d_model % num_heads != 0:
        raise ValueError(
            f"d_model={d_model} is not divisible by num_heads={num_heads}: "
            f"each head gets d_model / num_heads = {d_model / num_heads:g} features; "
            f"choose num_heads that divides {d_model}"
        )
    if num_kv_heads is not None:
        if isinstance(num_kv_heads, bool) or not isinstance(num_kv_heads, int) or num_kv_heads <= 0:
            raise ValueError(f"num_kv_heads must be a positive integer, got num_kv_heads={num_kv_heads!r}")
        if num_heads % num_kv_heads:
            raise ValueError(
                f"num_kv_heads={num_kv_heads} does not divide num_heads={num_heads}: every key/value head serves "
                f"the same number of query heads; choose a divisor of {num_heads}"
            )
    if rope_base is not None:
        check_rope(d_model // num_heads, rope_base)


def kv_head_of(num_heads: int, num_kv_heads: int) -> tuple[int, ...]:
    """The key/value head each query head reads: ``h // (num_heads // num_kv_heads)`` for h = 0 .. H-1."""
    group = num_heads // num_kv_heads
    return tuple(h // group for h in range(num_heads))


def repeat_kv(x: Tensor, groups: int) -> Tensor:
    """Each key/value head repeated for the ``groups`` query heads that read it (Hugging Face's ``repeat_kv``).

    Shape: (B, Hkv, L, Dh) -> (B, Hkv · groups, L, Dh); ``x`` itself when ``groups`` is 1.
    """
    if groups == 1:
        return x
    batch, kv_heads, length, d_k = x.shape
    expanded = x[:, :, None].expand(batch, kv_heads, groups, length, d_k)  # (B, Hkv, G, L, Dh), no copy
    return expanded.reshape(batch, kv_heads * groups, length, d_k)  # (B, H, L, Dh): heads h·G .. h·G+G-1 share one


class MultiHeadAttention(nn.Module):
    """Multi-head attention, ``MultiHead(Q, K, V) = Concat(head_1..head_h) W_o``.

    Args:
        d_model: model width D (the size of each token vector).
        num_heads: number of heads H; must divide ``d_model``. Each head has d_k = D / H.
        bias: whether the four projections have biases.
        num_kv_heads: key/value heads Hkv, dividing H (default H: the tutorials' layer; 1: multi-query).
            Query head h reads key/value head ``h // (H // Hkv)``.
        rope_base: rotate q and k by position (RoPE) with this base (Llama 2: 10000; Llama 3: 500000); ``None``: no
            rotation.

    Shape:
        query (B, Lq, D), key and value (B, Lk, D) -> output (B, Lq, D),
        attn_weights (B, H, Lq, Lk) -- per head, never averaged.

    Parameters: ``W_q`` and ``W_o`` are ``nn.Linear(D, D)``, ``W_k`` and ``W_v`` ``nn.Linear(D, Hkv·Dh)``:
    2·D² + 2·D·Hkv·Dh weights and 2·D + 2·Hkv·Dh biases; 4·D² + 4·D with biases when Hkv = H, whatever
    the number of heads.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        bias: bool = True,
        num_kv_heads: int | None = None,
        rope_base: float | None = None,
    ) -> None:
        super().__init__()
        check_sizes(d_model, num_heads, num_kv_heads, rope_base)
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        self.rope_base = rope_base
        kv_width = self.num_kv_heads * self.d_k
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, kv_width, bias=bias)
        self.W_v = nn.Linear(d_model, kv_width, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)

    @property
    def kv_groups(self) -> int:
        """Query heads per key/value head, H / Hkv (1: the tutorials' layer)."""
        return self.num_heads // self.num_kv_heads

    @property
    def is_plain(self) -> bool:
        """The tutorials' layer: as many key/value heads as query heads, no rotation."""
        return self.num_kv_heads == self.num_heads and self.rope_base is None

    # ---------------------------------------------------------------- the four steps
    def project_and_split(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, ...]:
        """Step 1: Q = x W_qᵀ + b_q (same for K, V), then split D into H heads of Dh.

        Returns ``(q, k, v, q_heads, k_heads, v_heads)``: the projections (B, L, D), K and V (B, L, Hkv·Dh),
        and the same numbers viewed per head: q_heads (B, H, L, Dh), k_heads and v_heads (B, Hkv, L, Dh).
        """
        q, k, v = self._project_qkv(query, key, value)  # (B, Lq, D), (B, Lk, Hkv·Dh), (B, Lk, Hkv·Dh)
        return q, k, v, self.split_heads(q), self.split_kv_heads(k), self.split_kv_heads(v)

    def split_heads(self, x: Tensor) -> Tensor:
        """(B, L, D) -> (B, H, L, Dh): ``view`` cuts D into H pieces, ``transpose`` puts heads first."""
        batch, length, _ = x.shape
        return x.view(batch, length, self.num_heads, self.d_k).transpose(1, 2)  # (B, L, H, Dh) -> (B, H, L, Dh)

    def split_kv_heads(self, x: Tensor) -> Tensor:
        """K or V, (B, L, Hkv·Dh) -> (B, Hkv, L, Dh): as :meth:`split_heads`, into the key/value heads."""
        batch, length, _ = x.shape
        return x.view(batch, length, self.num_kv_heads, self.d_k).transpose(1, 2)  # (B, L, Hkv, Dh) -> (B, Hkv, L, Dh)

    def rotate_positions(self, q_heads: Tensor, k_heads: Tensor, start: int = 0) -> tuple[Tensor, Tensor]:
        """RoPE: q and k turned by their positions start .. start+L-1 (:mod:`mha.rope`); unchanged without
        ``rope_base``. ``start`` is 0 for a whole sentence, the first new position in a decoding step.

        Shape: q_heads (B, H, Lq, Dh), k_heads (B, Hkv, Lk, Dh) -> the same shapes.
        """
        if self.rope_base is None:
            return q_heads, k_heads
        length = max(q_heads.size(-2), k_heads.size(-2))
        positions = torch.arange(start, start + length, device="cpu")  # (L,): the angles are computed on the CPU
        cos, sin = rotary_cos_sin(positions, self.d_k, float(self.rope_base), q_heads.dtype, q_heads.device)  # (L, Dh)
        return apply_rotary_pos_emb(q_heads, k_heads, cos, sin)

    def share_kv_heads(self, k_heads: Tensor, v_heads: Tensor) -> tuple[Tensor, Tensor]:
        """GQA: each key/value head repeated for the query heads of its group (:func:`repeat_kv`).

        Shape: (B, Hkv, Lk, Dh) -> (B, H, Lk, Dh) each; unchanged when Hkv = H.
        """
        return repeat_kv(k_heads, self.kv_groups), repeat_kv(v_heads, self.kv_groups)

    def heads_for_attention(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Step 1 and what today's layers add to it: the q, k, v (B, H, L, Dh) that step 2 reads."""
        _, _, _, q_heads, k_heads, v_heads = self.project_and_split(query, key, value)
        q_heads, k_heads = self.rotate_positions(q_heads, k_heads)
        k_heads, v_heads = self.share_kv_heads(k_heads, v_heads)
        return q_heads, k_heads, v_heads

    def attend(
        self, q_heads: Tensor, k_heads: Tensor, v_heads: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """Step 2: scaled dot-product attention in every head at once.

        Returns ``(context (B, H, Lq, Dh), weights (B, H, Lq, Lk))``.
        """
        return scaled_dot_product_attention(q_heads, k_heads, v_heads, mask=mask, scale=default_scale(self.d_k))

    def attend_stages(
        self, q_heads: Tensor, k_heads: Tensor, v_heads: Tensor, mask: Tensor | None = None
    ) -> AttendStep:
        """Step 2 as :meth:`attend`, every stage kept (:func:`~mha.functional.attention_stages`, which a decoding
        step runs too): what the traced forward records.

        Shape: q_heads (B, H, Lq, Dh), k_heads and v_heads (B, H, Lk, Dh) -> scores and weights (B, H, Lq, Lk),
        context (B, H, Lq, Dh).
        """
        scale = default_scale(self.d_k)
        stages = attention_stages(q_heads, k_heads, v_heads, mask, scale)  # raw, scaled, masked, weights, context
        return AttendStep(scale, mask, *stages, q_heads, k_heads, v_heads)

    def concat_heads(self, context: Tensor) -> Tensor:
        """Step 3: (B, H, Lq, Dh) -> (B, Lq, D), the heads side by side."""
        batch, _, length, _ = context.shape
        return context.transpose(1, 2).contiguous().view(batch, length, self.d_model)  # (B, Lq, H, Dh) -> (B, Lq, D)

    def project_out(self, concat: Tensor) -> Tensor:
        """Step 4: output = concat W_oᵀ + b_o, (B, Lq, D) -> (B, Lq, D)."""
        return self.W_o(concat)

    # ---------------------------------------------------------------- forward passes
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Run the four steps; returns ``(output (B, Lq, D), attn_weights (B, H, Lq, Lk))``.

        ``mask``: bool keep-mask (True = may attend) or additive float mask,
        broadcastable to (B, H, Lq, Lk). Pass the same tensor as query, key and value
        for self-attention.
        """
        self._check_inputs(query, key, value)
        # 1) project and split into heads (then RoPE and GQA, where the layer has them)
        q_heads, k_heads, v_heads = self.heads_for_attention(query, key, value)  # (B, H, L, Dh) each
        # 2) scaled dot-product attention, per head
        context, weights = self.attend(q_heads, k_heads, v_heads, mask)
        # 3) concatenate the heads
        concat = self.concat_heads(context)
        # 4) project out
        return self.project_out(concat), weights

    def forward_traced(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None) -> AttentionTrace:
        """The same four steps as :meth:`forward`, keeping every intermediate.

        Step 2 keeps every stage (raw scores, scaled, masked, softmax: :meth:`attend_stages`) so that each can be
        shown; it uses the same helpers as
        :func:`mha.functional.scaled_dot_product_attention`.
        """
        self._check_inputs(query, key, value)
        # 1) project and split into heads
        q, k, v, q_heads, k_heads, v_heads = self.project_and_split(query, key, value)
        # 1b) today's layers: RoPE turns q and k by position, GQA repeats each K/V head for its group of query heads
        split = ProjectStep(query, key, value, q, k, v, q_heads, k_heads, v_heads)  # step 1 as the trace keeps it
        q_heads, k_heads = self.rotate_positions(q_heads, k_heads)  # (B, H, Lq, Dh), (B, Hkv, Lk, Dh)
        rotated = (q_heads, k_heads) if self.rope_base is not None else (None, None)
        k_heads, v_heads = self.share_kv_heads(k_heads, v_heads)  # (B, Hkv, Lk, Dh) -> (B, H, Lk, Dh) each
        # 2) scaled dot-product attention, per head, every stage kept
        attend = self.attend_stages(q_heads, k_heads, v_heads, mask)  # scores, weights (B, H, Lq, Lk)
        # 3) concatenate the heads
        concat = self.concat_heads(attend.context)
        # 4) project out
        output = self.project_out(concat)
        return AttentionTrace(
            project=replace(
                split,
                q_rotated=rotated[0],
                k_rotated=rotated[1],
                kv_head_of=kv_head_of(self.num_heads, self.num_kv_heads),  # which K/V head each query head read
            ),
            attend=attend,
            concat=ConcatStep(concat),
            out=OutputStep(output),
        )

    def forward_step(self, x_new: Tensor, cache: KVCache, start: int) -> DecodeTrace:
        """One decoding step with a key/value cache: the new rows' queries against every cached key.

        The same four steps as :meth:`forward_traced` under a causal mask, for the rows ``start .. start+n-1`` only:
        their keys and values are appended to ``cache`` (Hkv heads, keys after RoPE), and each new row attends to
        every position up to its own. Row by row it gives what :meth:`forward_traced` gives on the whole sequence
        under :func:`~mha.masks.causal_mask`. A prompt fills the cache with n = L (``start`` 0), then each generated
        token is one step with n = 1.

        Args:
            x_new: (B, n, D) the new positions' inputs (usually n = 1).
            cache: this layer's :class:`~mha.kv_cache.KVCache`, holding positions 0 .. start-1.
            start: the position of the first new row.

        Shape:
            x_new (B, n, D) -> output (B, n, D); weights (B, H, n, t), t = start + n.

        Returns:
            A :class:`~mha.trace.DecodeTrace`.
        """
        self._check_inputs(x_new, x_new, x_new)
        n = x_new.size(1)
        # 1) project and split the new rows into heads
        _, _, _, q_heads, k_heads, v_heads = self.project_and_split(x_new, x_new, x_new)  # (B,H,n,Dh), (B,Hkv,n,Dh)
        # 1b) RoPE by their true positions; the cache keeps K (turned) and V with Hkv heads; GQA repeats them
        q_heads, k_heads = self.rotate_positions(q_heads, k_heads, start)  # (B, H, n, Dh), (B, Hkv, n, Dh)
        cache_keys, cache_values = cache.update(start, k_heads, v_heads)  # (B, Hkv, t, Dh) each, t = start + n
        keys, values = self.share_kv_heads(cache_keys, cache_values)  # (B, Hkv, t, Dh) -> (B, H, t, Dh) each
        # 2) scaled dot-product attention: new row i (position start + i) may read keys 0 .. start + i
        t = cache_keys.size(2)
        # a single new row may read every cached key: nothing to block
        keep = causal_mask(n, t, device=x_new.device, start=start) if n > 1 else None  # (1, 1, n, t)
        # scores (masked) and weights (B, H, n, t), context (B, H, n, Dh)
        _, _, scores, weights, context = attention_stages(q_heads, keys, values, keep, default_scale(self.d_k))
        # 3) concatenate the heads and 4) project out
        output = self.project_out(self.concat_heads(context))  # (B, n, D)
        appended = tuple(range(start, start + n))
        return DecodeTrace(start, q_heads, cache_keys, cache_values, scores, weights, context, output, appended)

    # ---------------------------------------------------------------- helpers
    def _project_qkv(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Q = query W_qᵀ + b_q, K = key W_kᵀ + b_k, V = value W_vᵀ + b_v (K and V: (B, Lk, Hkv·Dh) with GQA)."""
        return self.W_q(query), self.W_k(key), self.W_v(value)  # (B, Lq, D), (B, Lk, D), (B, Lk, D)

    def _check_inputs(self, query: Tensor, key: Tensor, value: Tensor) -> None:
        """Name the offending shape instead of failing deep inside a matmul."""
        for name, t in (("query", query), ("key", key), ("value", value)):
            if t.dim() != 3 or t.size(-1) != self.d_model:
                raise ValueError(f"{name} must have shape [B, L, d_model={self.d_model}], got {list(t.shape)}")
        if key.shape[:2] != value.shape[:2]:
            raise ValueError(f"key and value must have the same [B, Lk], got {list(key.shape)} and {list(value.shape)}")
        if query.size(0) != key.size(0):
            raise ValueError(f"query and key must have the same batch size, got {query.size(0)} and {key.size(0)}")

    def extra_repr(self) -> str:
        extra = "" if self.num_kv_heads == self.num_heads else f", num_kv_heads={self.num_kv_heads}"
        rope = "" if self.rope_base is None else f", rope_base={self.rope_base:g}"
        return f"d_model={self.d_model}, num_heads={self.num_heads}, d_k={self.d_k}{extra}{rope}"
