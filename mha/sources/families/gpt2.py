"""GPT-2-family language models (``model_type: gpt2``): Pre-Norm, causal, ``Conv1D`` projections.

What a GPT-2 reader must know, and what this module does about it:

* ``h[l].attn.c_attn`` is one ``Conv1D`` holding Q, K and V side by side. A ``Conv1D`` stores its
  weight ``(in, out)`` -- transposed against ``nn.Linear``'s ``(out, in)`` -- and computes
  ``x @ weight + bias``. So ``c_attn.weight`` is (D, 3D): its columns 0..D-1 make Q, D..2D-1 K,
  2D..3D-1 V. Each (D, D) block, transposed, is our ``W_q``, ``W_k``, ``W_v``; ``c_attn.bias`` (3D,)
  splits the same way. ``c_proj`` is ``W_o``, transposed too.
* Pre-Norm: the attention reads ``ln_1`` of the residual stream, so the layer's input is
  ``h[l].ln_1(hidden_states[l])``. ``hidden_states[0]`` is the token embedding plus the position
  embedding (added once, before layer 0); ``hidden_states[l]`` is block l's input for l < layers
  (the last entry, after ``ln_f``, is never a layer's input).
* Causal: every layer runs under the causal mask (and the tokenizer's padding, if it has a pad token).
* The block's attention output is what ``c_proj`` returns, before ``resid_dropout`` and the residual.
* Generating: it is loaded as ``GPT2LMHeadModel`` (``AutoModelForCausalLM``); the model read is its
  ``transformer``, and its ``lm_head`` (tied to ``wte``) gives the next token's logits.
* Tokens: GPT-2's byte-level BPE adds no [CLS] or [SEP]; a Chinese GPT-2 such as
  ``uer/gpt2-chinese-cluecorpussmall`` pairs the model with a BERT tokenizer that does (the
  pretrained source reads what the tokenizer adds, never the checkpoint's name).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from torch import Tensor, nn

from mha.sources.families.base import Family, Projection

__all__ = ["FAMILY", "GPT2", "GPT2Family"]

#: The ``model_type`` this family reads.
GPT2 = "gpt2"


class GPT2Family(Family):
    """GPT-2, DistilGPT2 and the checkpoints saved as ``gpt2`` (a Chinese GPT-2 with a BERT tokenizer...)."""

    model_types = (GPT2,)
    causal = True
    bos_first = True  # as TransformerLens feeds GPT-2: <|endoftext|> first, a position no head of the text holds
    size_keys = (("n_embd", "hidden_size"), ("n_head", "num_attention_heads"), ("n_layer", "num_hidden_layers"))
    check_how = "check.checkpoint_how_gpt2"
    generates = True  # loaded as GPT2LMHeadModel: its lm_head (tied to wte) predicts the next token

    def page_notes(self, framed: bool, tokens: Sequence[str] = ()) -> tuple[str, ...]:
        """What a GPT-2 reader must know (its layer's layout, that it is causal); whether its tokenizer adds [CLS]/[SEP]
        (a Chinese GPT-2's BERT one)."""
        return ("family_gpt2", "gpt2_framed" if framed else "gpt2_unframed")

    def refuse(self, name: str, config: Mapping[str, object]) -> str | None:
        """Variants whose attention is not ``softmax(QK^T / sqrt(d_k))``, or that cross-attend, are not read here."""
        if config.get("add_cross_attention"):
            return f"{GPT2} with cross-attention"
        if config.get("scale_attn_weights", True) is False:
            return f"{GPT2} without the 1/sqrt(d_k) scaling"
        if config.get("scale_attn_by_inverse_layer_idx"):
            return f"{GPT2} scaled by 1/(layer + 1)"
        return None

    def base_model(self, language_model: Any) -> Any:
        return language_model.transformer  # GPT2LMHeadModel.transformer: the GPT2Model

    def layers(self, model: Any) -> Sequence[nn.Module]:
        return model.h

    def attention(self, model: Any, layer: int) -> nn.Module:
        return model.h[layer].attn

    def check_structure(self, attention: nn.Module) -> None:
        for name, columns in (("c_attn", 3), ("c_proj", 1)):
            conv = getattr(attention, name)  # AttributeError when missing
            weight, bias = getattr(conv, "weight", None), getattr(conv, "bias", None)
            if weight is None or bias is None or weight.dim() != 2 or weight.size(1) != columns * weight.size(0):
                raise AttributeError(f"{name} (a Conv1D with weight (D, {columns}D) and a bias)")

    def projections(self, attention: nn.Module) -> Projection:
        c_attn, c_proj = attention.c_attn, attention.c_proj
        d_model = c_attn.weight.size(0)
        weights = c_attn.weight.split(d_model, dim=1)  # 3 x (D_in, D_out): Q, K, V side by side
        biases = c_attn.bias.split(d_model)  # 3 x (D,)
        copied = {ours: (w.T, b) for ours, w, b in zip(("W_q", "W_k", "W_v"), weights, biases, strict=True)}
        copied["W_o"] = (c_proj.weight.T, c_proj.bias)  # (D_in, D_out).T = (D_out, D_in), nn.Linear's layout
        return copied

    def layer_input(self, model: Any, hidden_states: Sequence[Tensor], layer: int) -> Tensor:
        return model.h[layer].ln_1(hidden_states[layer])  # (1, L, D): Pre-Norm, ln_1 of the residual stream

    def block_output(self, model: Any, layer: int) -> nn.Module:
        return model.h[layer].attn.c_proj


FAMILY = GPT2Family()
