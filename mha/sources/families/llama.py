"""Llama- and Qwen2-family language models (``model_type: llama``, ``qwen2``): Pre-Norm with RMSNorm, causal,
grouped-query attention, rotary positions.

What a Llama reader must know, and what this module does about it (transformers 5's ``LlamaModel`` and
``Qwen2Model``, inside the ``*ForCausalLM`` loaded with ``AutoModelForCausalLM``):

* Layer l's attention is ``layers[l].self_attn``: ``q_proj``, ``k_proj``, ``v_proj`` and ``o_proj`` are
  ``nn.Linear`` already in our (out, in) layout, so they are ``W_q, W_k, W_v, W_o`` as they are. Llama's have no
  biases (unless ``attention_bias``): our layer is built without any. Qwen2's q, k and v have biases and its
  ``o_proj`` has none: our layer has biases, ``W_o``'s zero
  (:func:`~mha.sources.checkpoint.checkpoint_model.copy_layer`).
* Grouped-query attention: ``k_proj`` and ``v_proj`` make ``num_key_value_heads`` heads (:meth:`LlamaFamily.kv_heads`),
  and query head h reads key/value head ``h // (H / Hkv)`` (Hugging Face's ``repeat_kv``, as ours).
* Rotary positions: the model adds no position to its input; ``model.rotary_emb`` makes cos and sin from
  ``config.rope_parameters["rope_theta"]`` (transformers 5 moves a ``config.json``'s ``rope_theta`` there) and every
  layer turns each head's q and k by them, feature i paired with i + Dh/2 (``rotate_half``): our layer does the same
  from that base (:meth:`LlamaFamily.rope_base`). Only the default rotation is read: a ``rope_scaling`` /
  ``rope_parameters`` of another ``rope_type`` (Llama 3.1's ``llama3``, ``yarn``, ``linear``...) is refused.
* Pre-Norm: the attention reads ``input_layernorm`` (an RMSNorm) of the residual stream, so the layer's input is
  ``layers[l].input_layernorm(hidden_states[l])``; ``hidden_states[0]`` is the token embedding, ``hidden_states[l]``
  block l's input for l < layers (the last entry, after ``norm``, is never a layer's input).
* Causal: every layer runs under the causal mask. Qwen2's sliding-window attention (``use_sliding_window``, or
  ``layer_types`` naming ``sliding_attention``) is another mask: refused.
* The block's attention output is what ``o_proj`` returns, before the residual connection.
* Generating: it is loaded as ``LlamaForCausalLM`` / ``Qwen2ForCausalLM`` (``AutoModelForCausalLM``); the model
  read is its ``model``, and its ``lm_head`` (tied to the embedding where ``tie_word_embeddings``) gives the logits.
* A ``head_dim`` other than hidden / heads (our layer's d_k is D / H) is refused.
* Tokens: a Llama tokenizer may put a BOS first (``<s>``) or add nothing (Qwen2's has no BOS): the pretrained
  source reads what the tokenizer adds, never the checkpoint's name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from torch import Tensor, nn

from mha.sources.families.base import Family, Projection

__all__ = ["FAMILY", "LLAMA", "PROJECTIONS", "LlamaFamily", "rope_type"]

#: The ``model_type`` this family reads (``qwen2.py`` reads Qwen2 the same way).
LLAMA = "llama"
#: Our projection <- the module of a layer's ``self_attn`` holding it.
PROJECTIONS = {"W_q": "q_proj", "W_k": "k_proj", "W_v": "v_proj", "W_o": "o_proj"}
_DEFAULT_ROPE = "default"


def rope_type(config: Mapping[str, object]) -> str:
    """The rotation's type in ``config.json``: ``rope_parameters``' or (older files) ``rope_scaling``'s ``rope_type``
    (or ``type``); ``"default"`` where neither names one."""
    for key in ("rope_parameters", "rope_scaling"):
        settings = config.get(key)
        if isinstance(settings, Mapping):
            named = settings.get("rope_type", settings.get("type"))
            if named is not None and str(named) != _DEFAULT_ROPE:
                return str(named)
    return _DEFAULT_ROPE


class LlamaFamily(Family):
    """Llama and the checkpoints saved as ``llama`` (SmolLM2, TinyLlama...)."""

    model_types = (LLAMA,)
    causal = True
    bos_first = True  # where the tokenizer adds no prefix, the probe starts with its BOS (if it has one)
    check_how = "check.checkpoint_how_llama"
    generates = True  # loaded as LlamaForCausalLM / Qwen2ForCausalLM: lm_head predicts the next token
    #: The note saying how this family's layer is read.
    note = "family_llama"

    def page_notes(self, framed: bool, tokens: Sequence[str] = ()) -> tuple[str, ...]:
        """How the layer is read (projections, RMSNorm Pre-Norm, rotary positions, causal); whether the tokenizer adds
        tokens of its own."""
        return (self.note, "llama_framed" if framed else "llama_unframed")

    def refuse(self, name: str, config: Mapping[str, object]) -> str | None:
        """A ``head_dim`` other than hidden / heads, a rotation other than the default one and sliding-window
        attention are not read here."""
        model_type = str(config.get("model_type"))
        head_dim, hidden, heads = config.get("head_dim"), config.get("hidden_size"), config.get("num_attention_heads")
        sized = head_dim is not None and isinstance(hidden, int) and isinstance(heads, int) and heads > 0
        if sized and head_dim != hidden / heads:
            return f"{model_type} with head_dim {head_dim} ≠ hidden_size {hidden} / {heads} heads"
        rotation = rope_type(config)
        if rotation != _DEFAULT_ROPE:
            return f"{model_type} with rope_type {rotation!r}"
        layer_types = config.get("layer_types")
        if isinstance(layer_types, Sequence) and not isinstance(layer_types, str):
            other = sorted({str(kind) for kind in layer_types} - {"full_attention"})
            if other:
                return f"{model_type} with {', '.join(other)} layers"
        return None

    def kv_heads(self, config: Mapping[str, object]) -> int | None:
        """``num_key_value_heads`` (absent: as many as the query heads, as ``LlamaConfig`` does)."""
        value = config.get("num_key_value_heads")
        return None if value is None else int(str(value))

    def rope_base(self, model: Any) -> float | None:
        """``rope_theta`` as the loaded model's ``rotary_emb`` reads it (``config.rope_parameters``)."""
        parameters = getattr(model.config, "rope_parameters", None) or {}
        return float(parameters.get("rope_theta", getattr(model.config, "rope_theta", None)))

    def base_model(self, language_model: Any) -> Any:
        return language_model.model  # LlamaForCausalLM.model: the LlamaModel (Qwen2's likewise)

    def layers(self, model: Any) -> Sequence[nn.Module]:
        return model.layers

    def attention(self, model: Any, layer: int) -> nn.Module:
        return model.layers[layer].self_attn

    def check_structure(self, attention: nn.Module) -> None:
        linears = {theirs: getattr(attention, theirs) for theirs in PROJECTIONS.values()}  # AttributeError if missing
        for theirs, linear in linears.items():
            if not isinstance(linear, nn.Linear):
                raise AttributeError(f"{theirs} (an nn.Linear)")
        q_proj, k_proj, v_proj, o_proj = linears.values()
        if k_proj.out_features != v_proj.out_features or o_proj.in_features != q_proj.out_features:
            raise AttributeError("q_proj, k_proj, v_proj and o_proj of matching sizes")

    def projections(self, attention: nn.Module) -> Projection:
        linears = {ours: getattr(attention, theirs) for ours, theirs in PROJECTIONS.items()}
        return {ours: (linear.weight, linear.bias) for ours, linear in linears.items()}  # bias None where it has none

    def layer_input(self, model: Any, hidden_states: Sequence[Tensor], layer: int) -> Tensor:
        return model.layers[layer].input_layernorm(hidden_states[layer])  # (1, L, D): Pre-Norm, RMSNorm of the stream

    def block_output(self, model: Any, layer: int) -> nn.Module:
        return model.layers[layer].self_attn.o_proj


FAMILY = LlamaFamily()
