"""A standalone PyTorch script that rebuilds the page's computation for one run.

The script needs only ``torch`` (not this repository): a learner copies it into a
notebook and gets the same tokens, embeddings, weights, mask and output as the page
(on the CPU). With random weights it re-implements, inline and in the same order:
    * the embeddings of :func:`mha.tokens.embed_tokens` (blake2b seed per token ->
      ``torch.Generator`` -> ``randn`` in float64) and, where the page adds them, the sinusoidal
      :func:`mha.tokens.positional_encoding`;
    * the weights of :func:`mha.sources.seeded.build_model` (one private generator,
      U(-1/sqrt(D), 1/sqrt(D)) for W_q.weight, W_q.bias, W_k..., W_v..., W_o...);
With trained or pretrained weights, whose making needs more than a script, it reads the
layer's input and weights from the page's ``.pt`` download instead (``torch.load``, no NumPy).
Then, in both cases:
    * the mask of :func:`mha.masks.build_mask` (bool, ``True`` = may attend), [PAD] keys
      blocked too when the page's ``block_pad`` is on;
    * a tutorial-style ``MultiHeadAttention``, cross-checked against ``torch.nn.MultiheadAttention``.

A layer of today's models changes the last point, and only where the page's layer has it (the tutorials' layer
gets the script it always got): grouped-query heads (``NUM_KV_HEADS``: W_k and W_v of width NUM_KV_HEADS·d_k,
``repeat_kv``) and rotary positions (``ROPE_BASE``: ``rotate_half``, ``apply_rotary``; no sinusoids added to the
input). ``nn.MultiheadAttention`` has neither, so such a script checks steps 2-4 against
``torch.nn.functional.scaled_dot_product_attention(..., enable_gqa=True)`` on its own rotated q and k, and its
rotation against the same rotation written as complex multiplication.

User text only ever enters the script as Python literals made by ``repr`` (never in a
comment), so quotes, backslashes, newlines and any Unicode are safe.
"""

from __future__ import annotations

import torch

from mha.config import PRETRAINED, RANDOM
from mha.export import export_basename
from mha.masks import PAD_TOKENS
from mha.pipeline import AttentionRun

__all__ = ["reproduce_script"]

_HEADER = '''\
"""Multi-head attention from scratch: the exact computation of the Attention Playground page.

Needs only PyTorch; runs on the CPU (if the page ran on a GPU, expect differences ~1e-6).
Made with torch TORCH_VERSION. torch.Generator's random streams have been stable across releases,
but PyTorch does not promise it: another version may give slightly different numbers.
"""

import hashlib
import math

import torch
from torch import nn
'''

_EMBEDDINGS = '''
# %% 1. Token vectors, (L, D)
def token_seed(token, seed):
    """A stable 63-bit seed per (token, seed), as the playground derives it."""
    digest = hashlib.blake2b(f"{seed}\\x00{token}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & ((1 << 63) - 1)


def embed_tokens(tokens, d_model, seed):
    """One N(0, 1) vector per token: the same token always gets the same vector."""
    rows = []
    for token in tokens:
        generator = torch.Generator().manual_seed(token_seed(token, seed))
        rows.append(torch.randn(d_model, generator=generator, dtype=torch.float64))
    return torch.stack(rows).to(DTYPE)  # (L, D)
'''

_POSITIONAL = '''

def positional_encoding(length, d_model):
    """Sinusoidal positions: PE[pos, 2i] = sin(pos / 10000^(2i/D)), PE[pos, 2i+1] = cos(...)."""
    position = torch.arange(length, dtype=torch.float64).unsqueeze(1)  # (L, 1)
    even = torch.arange(0, d_model, 2, dtype=torch.float64)  # (ceil(D/2),)
    div_term = torch.exp(even * (-math.log(10000.0) / d_model))  # (ceil(D/2),)
    encoding = torch.zeros(length, d_model, dtype=torch.float64)
    encoding[:, 0::2] = torch.sin(position * div_term)  # (L, ceil(D/2))
    encoding[:, 1::2] = torch.cos(position * div_term[: d_model // 2])  # (L, floor(D/2))
    return encoding.to(DTYPE)  # (L, D)
'''

_FROM_PT = """
# %% 1. The layer's input, (1, L, D), and its weights: from the page's .pt download
# (they came from WEIGHTS_ORIGIN, which takes more than a script to make; the file keeps them)
data = torch.load(PT, weights_only=True)  # a dict of tensors by name
x = data["project.x_query"].to(DTYPE)  # (1, L, D)
"""

_MASKS = {
    "none": """
# %% 2. Mask: none, every token sees every token
mask = None
""",
    "causal": """
# %% 2. Mask: causal, True = may attend
# query i may attend key j iff j <= i (no peeking ahead)
mask = torch.ones(L, L, dtype=torch.bool).tril().view(1, 1, L, L)  # (1, 1, Lq, Lk)
""",
    "window": """
# %% 2. Mask: sliding window, True = may attend
# query i may attend key j iff |i - j| <= WINDOW
i = torch.arange(L).view(-1, 1)  # (Lq, 1)
j = torch.arange(L).view(1, -1)  # (1, Lk)
mask = ((i - j).abs() <= WINDOW).view(1, 1, L, L)  # (1, 1, Lq, Lk)
""",
    "padding": """
# %% 2. Mask: padding, True = may attend
# every query may attend every key that is not a pad token
keep = [token not in PAD_TOKENS for token in TOKENS]  # (Lk,)
mask = torch.tensor(keep, dtype=torch.bool).view(1, 1, 1, L)  # (1, 1, 1, Lk)
""",
}

_BLOCK_PAD = """
# and block every [PAD] key too (True = may attend), so no token reads the padding
pad_keep = [token not in PAD_TOKENS for token in TOKENS]  # (Lk,)
pad_keep = torch.tensor(pad_keep, dtype=torch.bool).view(1, 1, 1, L)  # (1, 1, 1, Lk)
mask = pad_keep if mask is None else mask & pad_keep  # (1, 1, Lq, Lk), or (1, 1, 1, Lk) alone
"""

_MODEL = '''

# %% 3. The layer, from scratch
class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_o.

    Shapes: B batch, H heads, Lq / Lk query / key length, D = d_model, Dh = D / H.
    """

    def __init__(self, d_model, num_heads):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, q, k, v, mask=None):
        B, Lq, _ = q.shape
        # 1) project and split into heads: (B, L, D) -> (B, L, H, Dh) -> (B, H, L, Dh)
        Q = self.W_q(q).view(B, -1, self.num_heads, self.d_k).transpose(1, 2)  # (B, H, Lq, Dh)
        K = self.W_k(k).view(B, -1, self.num_heads, self.d_k).transpose(1, 2)  # (B, H, Lk, Dh)
        V = self.W_v(v).view(B, -1, self.num_heads, self.d_k).transpose(1, 2)  # (B, H, Lk, Dh)
        # 2) scaled dot-product attention, every head at once
        scores = torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(self.d_k)  # (B, H, Lq, Lk)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))  # blocked cells: -inf
        weights = torch.softmax(scores, dim=-1)  # (B, H, Lq, Lk)
        # a row with no allowed key is all -inf: softmax gives NaN there, the page gives zeros
        weights = weights.nan_to_num(0.0)
        context = torch.matmul(weights, V)  # (B, H, Lq, Lk) @ (B, H, Lk, Dh) -> (B, H, Lq, Dh)
        # 3) concatenate the heads: (B, H, Lq, Dh) -> (B, Lq, H, Dh) -> (B, Lq, D)
        concat = context.transpose(1, 2).contiguous().view(B, Lq, self.d_model)
        # 4) project out
        return self.W_o(concat), weights  # (B, Lq, D), (B, H, Lq, Lk)
'''

_SEEDED_WEIGHTS = '''

def build_model(d_model, num_heads, seed):
    """Weights as on the page: U(-1/sqrt(D), 1/sqrt(D)) from one private generator, in order."""
    model = MultiHeadAttention(d_model, num_heads)
    generator = torch.Generator().manual_seed(seed)
    bound = 1.0 / math.sqrt(d_model)
    with torch.no_grad():
        for linear in (model.W_q, model.W_k, model.W_v, model.W_o):
            linear.weight.uniform_(-bound, bound, generator=generator)
            linear.bias.uniform_(-bound, bound, generator=generator)
    return model.to(DTYPE).eval()


model = build_model(D_MODEL, NUM_HEADS, SEED)
'''

_PT_WEIGHTS = """

model = MultiHeadAttention(D_MODEL, NUM_HEADS)
with torch.no_grad():
    for name in ("W_q", "W_k", "W_v", "W_o"):
        linear = getattr(model, name)
        linear.weight.copy_(data[f"model.{name}.weight"])  # (D, D): (out, in)
        linear.bias.copy_(data[f"model.{name}.bias"])  # (D,)
model = model.to(DTYPE).eval()
"""

_RUN_AND_CHECK = """
with torch.no_grad():
    output, weights = model(x, x, x, mask)  # self-attention: query = key = value = x
print("x        ", list(x.shape), "[B, L, d_model]")
print("weights  ", list(weights.shape), "[B, num_heads, L_q, L_k]")
print("output   ", list(output.shape), "[B, L, d_model]")

# %% 4. Cross-check with torch.nn.MultiheadAttention
reference = nn.MultiheadAttention(D_MODEL, NUM_HEADS, batch_first=True, dtype=DTYPE)
with torch.no_grad():
    # in_proj_weight stacks W_q, W_k, W_v as rows [0:D], [D:2D], [2D:3D]
    W_qkv = torch.cat([model.W_q.weight, model.W_k.weight, model.W_v.weight])  # (3D, D)
    b_qkv = torch.cat([model.W_q.bias, model.W_k.bias, model.W_v.bias])  # (3D,)
    reference.in_proj_weight.copy_(W_qkv)
    reference.in_proj_bias.copy_(b_qkv)
    reference.out_proj.weight.copy_(model.W_o.weight)
    reference.out_proj.bias.copy_(model.W_o.bias)
allowed = torch.ones(L, L, dtype=torch.bool)  # (Lq, Lk)
if mask is not None:
    allowed = mask[0, 0].expand(L, L)  # (1, Lk) or (Lq, Lk) -> (Lq, Lk)
# nn.MultiheadAttention reads a bool attn_mask the OTHER way round (True = NOT allowed),
# so ours is inverted with ~ before it goes in. The mask is the same for every head.
blocked = ~allowed  # (Lq, Lk)
with torch.no_grad():
    ref_output, ref_weights = reference(
        x, x, x, attn_mask=blocked, need_weights=True, average_attn_weights=False
    )  # (B, L, D), (B, H, Lq, Lk)
rows = allowed.any(dim=-1)  # (Lq,) rows with a key to attend; PyTorch gives NaN for the others
diff_output = (output - ref_output)[:, rows].abs().max().item() if rows.any() else 0.0
diff_weights = (weights - ref_weights)[:, :, rows].abs().max().item() if rows.any() else 0.0
print(f"max |ours - nn.MultiheadAttention|: output {diff_output:.1e}, weights {diff_weights:.1e}")
print("match" if max(diff_output, diff_weights) < 1e-4 else "MISMATCH")
"""


# A page whose layer has grouped-query heads or rotary positions (RoPE) gets the blocks below in place of _MODEL,
# _PT_WEIGHTS and _RUN_AND_CHECK (and _SEEDED_WEIGHTS with the layer's extra sizes). A line tagged [gqa] is kept only
# with grouped-query heads, [mha] only without them, [rope] only with RoPE, [norope] only without it (_keep);
# _today_parts fills in the words in capitals (LAYER_PARAMS, LAYER_ARGS, GQA_STEP, LACKS, QK_IN).
_TODAY_HELPERS = '''

# %% 3. The layer, from scratch
[rope]# Rotary positions (RoPE), as Hugging Face's Llama writes them: feature i of a head is paired with
[rope]# feature i + Dh/2 (rotate_half), not 2i with 2i+1, and pair i at position p turns by the angle
[rope]# p * theta_i, theta_i = base^(-2i/Dh).
[rope]def rotate_half(x):
[rope]    """(x1, x2) -> (-x2, x1): x1 the first Dh/2 features of each head, x2 the other Dh/2."""
[rope]    half = x.size(-1) // 2
[rope]    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)  # (..., Dh/2) twice -> (..., Dh)
[rope]
[rope]
[rope]def apply_rotary(x, base):
[rope]    """Turn every pair (x_i, x_{i+Dh/2}) of every head by its position's angle: x * cos + rotate_half(x) * sin.
[rope]
[rope]    x is (B, heads, L, Dh) at positions 0 .. L-1; the angles' cos and sin are computed in float64, then cast.
[rope]    """
[rope]    L, Dh = x.size(-2), x.size(-1)
[rope]    position = torch.arange(L, dtype=torch.float64).unsqueeze(1)  # (L, 1)
[rope]    theta = base ** (-torch.arange(0, Dh, 2, dtype=torch.float64) / Dh)  # (Dh/2,): base^(-2i/Dh)
[rope]    angles = position * theta  # (L, Dh/2)
[rope]    angles = torch.cat((angles, angles), dim=-1)  # (L, Dh): pair i's angle at i and at i + Dh/2
[rope]    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)  # (L, Dh) each
[rope]    return x * cos + rotate_half(x) * sin  # (B, heads, L, Dh) * (L, Dh) -> (B, heads, L, Dh)
[rope]
[rope]
[gqa]# Grouped-query attention: fewer key/value heads than query heads, each read by a group of query heads.
[gqa]def repeat_kv(x, groups):
[gqa]    """Each key/value head repeated for the `groups` query heads that read it (query head h reads h // groups)."""
[gqa]    B, Hkv, L, Dh = x.shape
[gqa]    return x[:, :, None].expand(B, Hkv, groups, L, Dh).reshape(B, Hkv * groups, L, Dh)  # (B, Hkv * groups, L, Dh)
[gqa]
[gqa]
class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_o, as today's models (Llama, Qwen2) compute it.

    Shapes: B batch, H heads, Lq / Lk query / key length, D = d_model, Dh = D / H.
[gqa]    Hkv key/value heads: W_k and W_v map D to Hkv * Dh; query head h reads key/value head h // (H / Hkv).
[rope]    RoPE: every head's q and k are turned by position before the scores (v is not).
    """

    def __init__(self, d_model, num_heads, LAYER_PARAMS):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
[gqa]        if num_heads % num_kv_heads:
[gqa]            raise ValueError(f"num_kv_heads={num_kv_heads} does not divide num_heads={num_heads}")
        self.d_model = d_model
        self.num_heads = num_heads
[gqa]        self.num_kv_heads = num_kv_heads
        self.d_k = d_model // num_heads
[rope]        self.rope_base = rope_base
        self.W_q = nn.Linear(d_model, d_model)
[gqa]        self.W_k = nn.Linear(d_model, num_kv_heads * self.d_k)  # D -> Hkv * Dh, narrower than W_q
[gqa]        self.W_v = nn.Linear(d_model, num_kv_heads * self.d_k)  # D -> Hkv * Dh
[mha]        self.W_k = nn.Linear(d_model, d_model)
[mha]        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def project_and_split(self, q, k, v):
        """Step 1: project, then split into heads: (B, L, heads * Dh) -> (B, L, heads, Dh) -> (B, heads, L, Dh)."""
        B = q.size(0)
        Q = self.W_q(q).view(B, -1, self.num_heads, self.d_k).transpose(1, 2)  # (B, H, Lq, Dh)
[gqa]        K = self.W_k(k).view(B, -1, self.num_kv_heads, self.d_k).transpose(1, 2)  # (B, Hkv, Lk, Dh)
[gqa]        V = self.W_v(v).view(B, -1, self.num_kv_heads, self.d_k).transpose(1, 2)  # (B, Hkv, Lk, Dh)
[mha]        K = self.W_k(k).view(B, -1, self.num_heads, self.d_k).transpose(1, 2)  # (B, H, Lk, Dh)
[mha]        V = self.W_v(v).view(B, -1, self.num_heads, self.d_k).transpose(1, 2)  # (B, H, Lk, Dh)
        return Q, K, V

    def forward(self, q, k, v, mask=None):
        B, Lq, _ = q.shape
        # 1) project and split into heads
        Q, K, V = self.project_and_split(q, k, v)
[rope]        # 1b) RoPE: turn q and k by their positions (v keeps its numbers)
[rope]        Q, K = apply_rotary(Q, self.rope_base), apply_rotary(K, self.rope_base)  # shapes kept
[gqa]        # GQA_STEP) grouped-query attention: each key/value head serves H / Hkv query heads
[gqa]        groups = self.num_heads // self.num_kv_heads
[gqa]        K, V = repeat_kv(K, groups), repeat_kv(V, groups)  # (B, Hkv, Lk, Dh) -> (B, H, Lk, Dh) each
        # 2) scaled dot-product attention, every head at once
        scores = torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(self.d_k)  # (B, H, Lq, Lk)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))  # blocked cells: -inf
        weights = torch.softmax(scores, dim=-1)  # (B, H, Lq, Lk)
        # a row with no allowed key is all -inf: softmax gives NaN there, the page gives zeros
        weights = weights.nan_to_num(0.0)
        context = torch.matmul(weights, V)  # (B, H, Lq, Lk) @ (B, H, Lk, Dh) -> (B, H, Lq, Dh)
        # 3) concatenate the heads: (B, H, Lq, Dh) -> (B, Lq, H, Dh) -> (B, Lq, D)
        concat = context.transpose(1, 2).contiguous().view(B, Lq, self.d_model)
        # 4) project out
        return self.W_o(concat), weights  # (B, Lq, D), (B, H, Lq, Lk)
'''

_PT_WEIGHTS_TODAY = """

model = MultiHeadAttention(D_MODEL, NUM_HEADS, LAYER_ARGS)
with torch.no_grad():
    for name in ("W_q", "W_k", "W_v", "W_o"):
        linear = getattr(model, name)
[gqa]        # (out, in): (D, D) for W_q and W_o, (NUM_KV_HEADS * d_k, D) for W_k and W_v
[mha]        # (out, in): (D, D)
        linear.weight.copy_(data[f"model.{name}.weight"])
        # a layer without biases (Llama's) has none in the file: a zero bias adds nothing
        linear.bias.copy_(data.get(f"model.{name}.bias", torch.zeros_like(linear.bias)))  # (out,)
model = model.to(DTYPE).eval()
"""

_RUN_AND_CHECK_TODAY = """
with torch.no_grad():
    output, weights = model(x, x, x, mask)  # self-attention: query = key = value = x
print("x        ", list(x.shape), "[B, L, d_model]")
print("weights  ", list(weights.shape), "[B, num_heads, L_q, L_k]")
print("output   ", list(output.shape), "[B, L, d_model]")

# %% 4. Cross-checks, in parts: torch.nn.MultiheadAttention has no LACKS
allowed = torch.ones(L, L, dtype=torch.bool)  # (Lq, Lk)
if mask is not None:
    allowed = mask[0, 0].expand(L, L)  # (1, Lk) or (Lq, Lk) -> (Lq, Lk)
rows = allowed.any(dim=-1)  # (Lq,) rows with a key to attend (a row without any is zeros here, not compared)
with torch.no_grad():
[gqa]    Q, K, V = model.project_and_split(x, x, x)  # (B, H, L, Dh); K and V (B, NUM_KV_HEADS, L, Dh)
[mha]    Q, K, V = model.project_and_split(x, x, x)  # (B, H, L, Dh) each
[rope]    Q_rot, K_rot = apply_rotary(Q, ROPE_BASE), apply_rotary(K, ROPE_BASE)  # the script's own rotation

# (a) steps 2 to 4 against PyTorch's own attention, torch.nn.functional.scaled_dot_product_attention, given
[rope]#     the script's rotated q and k and its v (step 1 and the rotation are its inputs: (b) checks the rotation).
[norope]#     the script's q, k and v (step 1 is its input).
#     It covers the scores, their scale, the mask, the softmax, weights @ V and the concatenation of the heads
#     (W_o is the model's own nn.Linear on both sides).
[gqa]#     K and V go in with their NUM_KV_HEADS heads: enable_gqa=True makes query head h read key/value head
[gqa]#     h // (NUM_HEADS // NUM_KV_HEADS) with PyTorch's own repeat_interleave, so repeat_kv is checked too.
#     Its bool attn_mask means what ours means (True = may attend): no inversion here.
#     It returns no weights: with the identity matrix as V, its output is the weights themselves.
sdpa = nn.functional.scaled_dot_product_attention
identity = torch.eye(L, dtype=DTYPE).expand(1, V.size(1), L, L)  # (B, heads of V, Lk, Lk)
with torch.no_grad():
[gqa]    ref_context = sdpa(QK_IN, V, attn_mask=allowed, enable_gqa=True)  # (B, H, Lq, Dh)
[gqa]    ref_weights = sdpa(QK_IN, identity, attn_mask=allowed, enable_gqa=True)  # (B, H, Lq, Lk)
[mha]    ref_context = sdpa(QK_IN, V, attn_mask=allowed)  # (B, H, Lq, Dh)
[mha]    ref_weights = sdpa(QK_IN, identity, attn_mask=allowed)  # (B, H, Lq, Lk)
    ref_output = model.W_o(ref_context.transpose(1, 2).reshape(1, L, D_MODEL))  # (B, H, Lq, Dh) -> (B, Lq, D)
differences = {
    "output": (output - ref_output)[:, rows].abs().max().item() if rows.any() else 0.0,
    "weights": (weights - ref_weights)[:, :, rows].abs().max().item() if rows.any() else 0.0,
}
out_diff, weights_diff = differences["output"], differences["weights"]
print(f"max |ours - scaled_dot_product_attention|: output {out_diff:.1e}, weights {weights_diff:.1e}")
[rope]
[rope]
[rope]# (b) the rotation, written another way: pair (x_i, x_{i+Dh/2}) as the complex number x_i + i x_{i+Dh/2},
[rope]#     turned by a multiplication with e^(i p theta_i) = cos(p theta_i) + i sin(p theta_i), all in float64,
[rope]#     theta_i written as 1 / base^(2i/Dh). A rotation that paired other features (2i with 2i+1) or turned by
[rope]#     other angles fails here.
[rope]def rotate_as_complex(x, base):
[rope]    half = x.size(-1) // 2
[rope]    pairs = torch.stack((x[..., :half], x[..., half:]), dim=-1).double()  # (B, heads, L, Dh/2, 2)
[rope]    z = torch.view_as_complex(pairs)  # (B, heads, L, Dh/2): x_i + i x_{i+Dh/2}
[rope]    p = torch.arange(x.size(-2), dtype=torch.float64).unsqueeze(1)  # (L, 1)
[rope]    theta = 1.0 / base ** (2 * torch.arange(half, dtype=torch.float64) / x.size(-1))  # (Dh/2,)
[rope]    turn = torch.polar(torch.ones(len(p), half, dtype=torch.float64), p * theta)  # (L, Dh/2): e^(i p theta)
[rope]    turned = torch.view_as_real(z * turn)  # (B, heads, L, Dh/2, 2): real and imaginary parts
[rope]    return torch.cat((turned[..., 0], turned[..., 1]), dim=-1)  # (B, heads, L, Dh): x_i's, then x_{i+Dh/2}'s
[rope]
[rope]
[rope]differences["rotated q"] = (Q_rot.double() - rotate_as_complex(Q, ROPE_BASE)).abs().max().item()
[rope]differences["rotated k"] = (K_rot.double() - rotate_as_complex(K, ROPE_BASE)).abs().max().item()
[rope]q_diff, k_diff = differences["rotated q"], differences["rotated k"]
[rope]print(f"max |apply_rotary - rotation as complex numbers|: q {q_diff:.1e}, k {k_diff:.1e}")
print("match" if max(differences.values()) < 1e-4 else "MISMATCH")
"""


def _keep(template: str, gqa: bool, rope: bool) -> str:
    """``template`` with the lines of what the layer has, their tag removed (see _TODAY_HELPERS)."""
    kept = {"[gqa]": gqa, "[mha]": not gqa, "[rope]": rope, "[norope]": not rope}
    lines = []
    for line in template.split("\n"):
        tag = next((tag for tag in kept if line.startswith(tag)), "")
        if not tag or kept[tag]:
            lines.append(line.removeprefix(tag))
    return "\n".join(lines)


def _today_parts(run: AttentionRun, seeded: bool) -> list[str]:
    """The layer, its weights and the cross-checks of a layer with grouped-query heads or RoPE."""
    gqa, rope = run.model.num_kv_heads != run.num_heads, run.model.rope_base is not None
    names = [name for name, used in (("num_kv_heads", gqa), ("rope_base", rope)) if used]
    params, args = ", ".join(names), ", ".join(name.upper() for name in names)
    lacks = " and no ".join(what for what, used in (("grouped-query heads", gqa), ("RoPE", rope)) if used)
    model = _keep(_TODAY_HELPERS, gqa, rope).replace("LAYER_PARAMS", params).replace("GQA_STEP", "1c" if rope else "1b")
    if seeded:
        weights = _SEEDED_WEIGHTS.replace("d_model, num_heads", f"d_model, num_heads, {params}")
        weights = weights.replace("D_MODEL, NUM_HEADS", f"D_MODEL, NUM_HEADS, {args}")
    else:
        weights = _keep(_PT_WEIGHTS_TODAY, gqa, rope).replace("LAYER_ARGS", args)
    check = _keep(_RUN_AND_CHECK_TODAY, gqa, rope).replace("LACKS", lacks)
    return [model, weights, check.replace("QK_IN", "Q_rot, K_rot" if rope else "Q, K")]


def _literal(text: str) -> str:
    """``repr(text)``, in double quotes when that needs no escaping.

    ``repr`` escapes quotes, backslashes, control and invisible characters (bidi
    overrides included), so the literal reads back as exactly ``text``.
    """
    literal = repr(text)
    if literal.startswith("'") and '"' not in text:  # then text has no ' either: swap the delimiters
        return f'"{literal[1:-1]}"'
    return literal


def _literal_list(items: list[str], prefix: str, width: int = 88) -> str:
    """``prefix`` + a list literal of :func:`_literal` strings: one line if it fits in ``width``, else wrapped."""
    literals = [_literal(item) for item in items]
    one_line = f"{prefix}[{', '.join(literals)}]"
    if len(one_line) <= width:
        return one_line
    lines: list[str] = []
    line = "   "
    for literal in literals:
        if len(line) + len(literal) + 2 > width and line.strip():
            lines.append(line)
            line = "   "
        line += f" {literal},"
    lines.append(line)
    return prefix + "[\n" + "\n".join(lines) + "\n]"


def _origin(run: AttentionRun) -> str:
    config = run.config
    if config.weights == PRETRAINED:
        return f"layer {config.layer} of the checkpoint {config.pretrained_name!r}"
    return f"training on the task {config.task!r} (layer {config.layer})"


def reproduce_script(run: AttentionRun) -> str:
    """The source of a script that rebuilds the page's forward pass of ``run``.

    Args:
        run: the page's run (its tokens, sizes and weights' origin).

    Returns:
        Python source; run as is, it prints the shapes and the largest difference from
        ``torch.nn.MultiheadAttention`` (a layer with grouped-query heads or RoPE: from
        ``torch.nn.functional.scaled_dot_product_attention``, and its rotation's from the same
        rotation as complex numbers), then ``match`` or ``MISMATCH``, and leaves ``x``, ``mask``,
        ``model``, ``output`` and ``weights`` defined. It imports only the standard library and ``torch``; with
        trained or pretrained weights it reads the page's ``.pt`` download (named in the
        script) with ``torch.load``.
    """
    config = run.config
    seeded = config.weights == RANDOM
    gqa, rope_base = run.model.num_kv_heads != run.num_heads, run.model.rope_base
    settings = [
        "",
        "# %% 0. The page's settings",
        f"D_MODEL = {run.d_model}",
        f"NUM_HEADS = {run.num_heads}  # d_k = D_MODEL / NUM_HEADS = {run.d_k}",
    ]
    if gqa:
        kv_heads = run.model.num_kv_heads
        settings.append(
            f"NUM_KV_HEADS = {kv_heads}  # query head h reads key/value head h // (NUM_HEADS // NUM_KV_HEADS)"
        )
    if rope_base is not None:
        settings.append(f"ROPE_BASE = {float(rope_base)!r}  # RoPE: pair i turns by position * ROPE_BASE^(-2i/d_k)")
    settings += [
        f"SEED = {config.seed}" if seeded else f"PT = {_literal(export_basename(config) + '.pt')}",
        f"DTYPE = torch.{config.dtype}",
    ]
    if config.mask_type == "window":
        settings.append(f"WINDOW = {config.window}")
    blocks_pad = config.block_pad and config.mask_type != "padding"
    if config.mask_type == "padding" or blocks_pad:
        settings.append(_literal_list(sorted(PAD_TOKENS), "PAD_TOKENS = "))
    settings.append(_literal_list(list(run.tokens), "TOKENS = "))
    settings.append("L = len(TOKENS)")
    if seeded:
        inputs = "\n\nx = embed_tokens(TOKENS, D_MODEL, SEED)  # (L, D)\n"
        if config.positional == "sinusoidal":
            inputs += "x = x + positional_encoding(L, D_MODEL)  # (L, D)\n"
        if rope_base is not None:
            inputs += "# no positions added to x: the layer turns q and k by position (RoPE)\n"
        inputs += "x = x.unsqueeze(0)  # (1, L, D): a batch of one sentence\n"
        parts = [_EMBEDDINGS, _POSITIONAL if config.positional == "sinusoidal" else "", inputs]
    else:
        parts = [_FROM_PT.replace("WEIGHTS_ORIGIN", _origin(run))]
    return "".join(
        [
            _HEADER.replace("TORCH_VERSION", torch.__version__),
            "\n".join(settings) + "\n\n",
            *parts,
            _MASKS[config.mask_type],
            _BLOCK_PAD if blocks_pad else "",
            *(
                _today_parts(run, seeded)
                if gqa or rope_base is not None
                else [_MODEL, _SEEDED_WEIGHTS if seeded else _PT_WEIGHTS, _RUN_AND_CHECK]
            ),
        ]
    )
