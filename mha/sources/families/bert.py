"""BERT-family encoders (``model_type: bert``): Post-Norm, bidirectional, ``nn.Linear`` projections.

Layer l: ``W_q, W_k, W_v`` <- ``encoder.layer[l].attention.self.query/key/value``, ``W_o`` <-
``attention.output.dense`` (weights and biases, already in ``nn.Linear``'s (out, in) layout). The
attention's input is ``hidden_states[l]`` itself (index 0 is the embeddings): the LayerNorm comes
after the residual connection (Post-Norm).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from torch import Tensor, nn

from mha.sources.families.base import Family, Projection

__all__ = ["BERT", "FAMILY", "PROJECTIONS", "BertFamily"]

#: The ``model_type`` this family reads.
BERT = "bert"
#: Our projection <- the module of a BERT layer's ``attention`` block holding it.
PROJECTIONS = {"W_q": "self.query", "W_k": "self.key", "W_v": "self.value", "W_o": "output.dense"}


class BertFamily(Family):
    """BERT and the encoders saved as ``bert`` (MiniLM, bert-base-chinese...)."""

    model_types = (BERT,)

    def refuse(self, name: str, config: Mapping[str, object]) -> str | None:
        """A BERT built as a decoder (causal self-attention or cross-attention) is not read here."""
        if config.get("is_decoder") or config.get("add_cross_attention"):
            return f"{BERT} decoder"
        return None

    def layers(self, model: Any) -> Sequence[nn.Module]:
        return model.encoder.layer

    def attention(self, model: Any, layer: int) -> nn.Module:
        return model.encoder.layer[layer].attention

    def check_structure(self, attention: nn.Module) -> None:
        for theirs in PROJECTIONS.values():
            linear = attention.get_submodule(theirs)  # AttributeError when missing
            if not isinstance(linear, nn.Linear) or linear.bias is None:
                raise AttributeError(theirs)

    def projections(self, attention: nn.Module) -> Projection:
        modules = {ours: attention.get_submodule(theirs) for ours, theirs in PROJECTIONS.items()}
        return {ours: (linear.weight, linear.bias) for ours, linear in modules.items()}  # (D, D), (D,)

    def layer_input(self, model: Any, hidden_states: Sequence[Tensor], layer: int) -> Tensor:
        return hidden_states[layer]  # (1, L, D): Post-Norm, the layer's input is the residual stream itself

    def block_output(self, model: Any, layer: int) -> nn.Module:
        return self.attention(model, layer).output.dense


FAMILY = BertFamily()
