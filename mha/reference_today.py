"""The live check of a layer ``nn.MultiheadAttention`` cannot hold: grouped K/V heads or rotary positions.

``nn.MultiheadAttention`` has one K/V head per query head and no rotation. For such a layer the same
weights run through PyTorch's own pieces instead, written independently of :mod:`mha.module`:
``F.linear`` for the projections, RoPE as a multiplication of complex numbers (feature pair
(x_i, x_{i+Dh/2}) as x_i + j·x_{i+Dh/2}, turned by e^{j·m·θ_i} with ``torch.polar``; the engine uses
``rotate_half``), and ``F.scaled_dot_product_attention(..., enable_gqa=True)`` for the attention, which
repeats the K/V heads itself. Its weights come from the same call with the identity as the values
(softmax(S)·I = softmax(S)).

Shape legend: B batch, H heads, Hkv key/value heads, Lq / Lk lengths, D = d_model, Dh head size.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from mha.module import MultiHeadAttention
from mha.reference import TorchCheck, torch_check

__all__ = ["compare_with_sdpa", "rotate_as_complex", "sdpa_attention"]


def rotate_as_complex(x: Tensor, base: float) -> Tensor:
    """RoPE written as complex multiplication: pair i of position m turned by m·base^(-2i/Dh).

    Shape: (B, heads, L, Dh) -> (B, heads, L, Dh), positions 0 .. L-1; computed in float64 (complex128) on the CPU
    (Apple's mps has neither), returned on x's device in x's dtype.
    """
    half = x.size(-1) // 2
    cpu = x.detach().cpu()  # (B, heads, L, Dh)
    pairs = torch.complex(cpu[..., :half].double(), cpu[..., half:].double())  # (B, heads, L, Dh/2): x_i + j·x_{i+Dh/2}
    positions = torch.arange(x.size(-2), dtype=torch.float64, device="cpu")  # (L,)
    theta = base ** (-2.0 * torch.arange(half, dtype=torch.float64, device="cpu") / x.size(-1))  # (Dh/2,)
    turned = pairs * torch.polar(torch.ones_like(theta), positions[:, None] * theta)  # (L, Dh/2) unit turns
    return torch.cat((turned.real, turned.imag), dim=-1).to(x.device, x.dtype)  # (B, heads, L, Dh)


def sdpa_attention(
    model: MultiHeadAttention, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None
) -> tuple[Tensor, Tensor]:
    """``model``'s weights through ``F.linear``, :func:`rotate_as_complex` and ``F.scaled_dot_product_attention``.

    Returns:
        ``(output (B, Lq, D), weights (B, H, Lq, Lk))``; a query row with no key to attend to is NaN here.
    """
    batch, length_q, _ = query.shape
    length_k, d_k = key.size(1), model.d_k
    heads, kv_heads = model.num_heads, model.num_kv_heads
    q = F.linear(query, model.W_q.weight, model.W_q.bias).view(batch, length_q, heads, d_k).transpose(1, 2)
    k = F.linear(key, model.W_k.weight, model.W_k.bias).view(batch, length_k, kv_heads, d_k).transpose(1, 2)
    v = F.linear(value, model.W_v.weight, model.W_v.bias).view(batch, length_k, kv_heads, d_k).transpose(1, 2)
    # q (B, H, Lq, Dh); k, v (B, Hkv, Lk, Dh)
    if model.rope_base is not None:
        q, k = rotate_as_complex(q, model.rope_base), rotate_as_complex(k, model.rope_base)
    context = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)  # (B, H, Lq, Dh)
    identity = torch.eye(length_k, dtype=v.dtype, device=v.device).expand(batch, kv_heads, length_k, length_k)
    weights = F.scaled_dot_product_attention(q, k, identity, attn_mask=mask, enable_gqa=True)  # (B, H, Lq, Lk)
    concat = context.transpose(1, 2).reshape(batch, length_q, heads * d_k)  # (B, Lq, D)
    return F.linear(concat, model.W_o.weight, model.W_o.bias), weights


def compare_with_sdpa(
    model: MultiHeadAttention,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None,
    output: Tensor,
    weights: Tensor,
) -> TorchCheck:
    """Our ``(output, weights)`` against :func:`sdpa_attention` on the same weights and input.

    Query rows with no key they may attend to are left out (ours: zeros by design; PyTorch's: NaN).
    """
    with torch.inference_mode():
        torch_out, torch_weights = sdpa_attention(model, query, key, value, mask)
    keep_rows = ~torch.isnan(torch_out).any(dim=-1)  # (B, Lq)
    return torch_check(output, weights, torch_out, torch_weights, keep_rows)
