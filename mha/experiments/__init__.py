"""Pure computations behind the labs (pages/): each module answers one "why?" question with numbers.

They build on the engine (:mod:`mha.functional`, :class:`mha.MultiHeadAttention`,
:mod:`mha.masks`); none imports Streamlit. Two deliberate exceptions implement
attention differently, because the difference is the lesson:

- :mod:`mha.experiments.reshape` splits heads with ``view`` and no ``transpose`` (the classic bug);
- :mod:`mha.experiments.loop_vs_fused` runs one small module per head in a Python loop (and the second
  tutorial's full-width heads).

Both reuse the same ``W_q, W_k, W_v, W_o`` weights and :func:`mha.functional.scaled_dot_product_attention`.

Modules: ``scaling`` (√d_k), ``heads`` (head sweep), ``reshape``, ``mask_translate``,
``loop_vs_fused``, ``complexity``, ``cross`` (cross-attention), ``sculpt`` (hand-built heads),
``encoder`` (the encoder block); ``inputs`` and ``timing`` are shared helpers, ``isolated`` runs the
complexity measurement in a child process.
"""
