# fmt: off
"""The first tutorial's own code, kept as the tutorial writes it: on purpose, this is NOT the project's engine.

Source: the first tutorial, the Chinese article on 多头注意力 (multi-head attention) the playground teaches:

- section 2, its from-scratch ``MultiHeadAttention`` (``W_q, W_k, W_v, W_o``, ``view(...).transpose(1, 2)``,
  ``scores.masked_fill(mask == 0, float('-inf'))``: 1 = may attend);
- section 5, the decoder's causal mask, written as an *additive* mask (0 on and below the diagonal, -inf above).

``section5_causal_mask`` only wraps section 5's one line (the tutorial writes it inline in its decoder) so
that it can be called. Lab 4 passes the second to the first, as the tutorial invites, and shows what comes out
(:mod:`mha.experiments.tutorial_causal`). Keep this file as the tutorial writes it: no fixes, no
restyling, no shape comments, single quotes (``# fmt: off`` keeps the formatter away); section 5's line
and section 2's two mask lines are exact quotes, so compare with the article before changing any.
The lab shows lines of it on the page as they are here, and its tests check that they are the tutorial's.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

__all__ = ["MultiHeadAttention", "section5_causal_mask"]


# ---------------------------------------------------------------- section 2: the module
class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        assert d_model % num_heads == 0
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads

        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, Q, K, V, mask=None):
        batch_size = Q.size(0)

        Q = self.W_q(Q).view(batch_size, -1, self.num_heads, self.d_k).transpose(1, 2)
        K = self.W_k(K).view(batch_size, -1, self.num_heads, self.d_k).transpose(1, 2)
        V = self.W_v(V).view(batch_size, -1, self.num_heads, self.d_k).transpose(1, 2)

        scores = torch.matmul(Q, K.transpose(-2, -1)) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float('-inf'))
        attn_weights = F.softmax(scores, dim=-1)
        output = torch.matmul(attn_weights, V)

        output = output.transpose(1, 2).contiguous().view(batch_size, -1, self.d_model)
        return self.W_o(output), attn_weights


# ---------------------------------------------------------------- section 5: the decoder's causal mask
def section5_causal_mask(seq_len):
    mask = torch.triu(torch.ones(seq_len, seq_len) * float('-inf'), diagonal=1)
    return mask
