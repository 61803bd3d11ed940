"""A loaded checkpoint: its ``transformers`` model, its forward (one at a time), a layer copied into ours.

Where layer l's attention is, what its input is and which module's output is the attention block's
output is its family's (:class:`~mha.sources.families.base.Family`); this module only asks. A
checkpoint is shared read-only by every session; its forwards run one at a time (the comparison with
the checkpoint hooks a module, which must not see another session's forward). Its inputs are made by
:class:`~mha.sources.checkpoint.text.TextCheckpoint` (a tokenizer) or
:class:`~mha.sources.checkpoint.image.ImageCheckpoint` (an image processor).

Shape legend: D = d_model, L = tokens, H = heads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from mha.module import MultiHeadAttention
from mha.sources.base import SourceSizes
from mha.sources.families import Family, Projection

__all__ = ["Checkpoint", "Encoded", "copy_layer"]

_LAYER_MODELS_KEPT = 4  # per checkpoint: copies of layers (per device and dtype) shared by the runs


@dataclass(frozen=True)
class Encoded:
    """A text cut by the checkpoint's tokenizer, or an image made into its pixels: what its forward reads."""

    tokens: tuple[str, ...]
    inputs: Mapping[str, Tensor]  # the model's keyword inputs: input_ids and attention_mask (1, L), or pixel_values
    keys: Tensor  # (1, L) bool: the keys the checkpoint attends to (False at a [PAD] token)


class Checkpoint:
    """A loaded checkpoint: the ``transformers`` model (eval, read-only), its sizes and family; its inputs are a
    text's (:class:`~mha.sources.checkpoint.text.TextCheckpoint`) or an image's
    (:class:`~mha.sources.checkpoint.image.ImageCheckpoint`)."""

    def __init__(self, name: str, model: Any, sizes: SourceSizes, family: Family) -> None:
        self.name, self.model, self.sizes, self.family = name, model, sizes, family
        self.lock = threading.Lock()  # one forward at a time (see the module docstring)
        self._layers: OrderedDict[tuple[int, str, str], MultiHeadAttention] = OrderedDict()

    def attention_block(self, layer: int) -> Any:
        """The module of ``layer`` holding its four projections (BERT: ``attention``; GPT-2: ``attn``)."""
        return self.family.attention(self.model, layer)

    def forward(self, encoded: Encoded, **outputs: bool) -> Any:
        """The checkpoint's own forward pass (``output_hidden_states=True`` etc. as keywords)."""
        with self.lock, torch.inference_mode():
            return self.model(**encoded.inputs, **outputs)

    def layer_input(self, encoded: Encoded, layer: int) -> Tensor:
        """The input of ``layer``'s attention for the text or image, (1, L, D), as the checkpoint computes it."""
        hidden = self.forward(encoded, output_hidden_states=True).hidden_states  # layers + 1 x (1, L, D)
        with torch.inference_mode():
            return self.family.layer_input(self.model, hidden, layer)  # (1, L, D)

    def forward_with_block_output(self, encoded: Encoded, layer: int) -> tuple[Any, Tensor]:
        """The forward pass with attentions, and what ``layer``'s attention block returned (a forward hook).

        Returns:
            The model's outputs and a (1, L, D) tensor: the attention block's output before
            dropout and the residual connection (the family's :meth:`~mha.sources.families.base.Family.block_output`;
            BERT: ``attention.output.dense``, before its LayerNorm too; GPT-2: ``attn.c_proj``; ViT:
            ``attention.o_proj``).
        """
        captured: list[Tensor] = []
        module = self.family.block_output(self.model, layer)
        with self.lock, torch.inference_mode():  # the hook sees this forward only: forwards run one at a time
            handle = module.register_forward_hook(lambda _module, _inputs, out: captured.append(out))
            try:
                outputs = self.model(**encoded.inputs, output_attentions=True)
            finally:
                handle.remove()
        return outputs, captured[0]

    def layer_model(self, layer: int, device: torch.device, dtype: str) -> MultiHeadAttention:
        """``MultiHeadAttention`` holding copies of ``layer``'s projections, on ``device`` in ``dtype``."""
        key = (layer, str(device), dtype)
        with self.lock:
            if key in self._layers:
                self._layers.move_to_end(key)
                return self._layers[key]
        projections = self.family.projections(self.attention_block(layer))
        model = copy_layer(projections, self.sizes.num_heads, device, getattr(torch, dtype))
        with self.lock:
            self._layers[key] = model
            while len(self._layers) > _LAYER_MODELS_KEPT:
                self._layers.popitem(last=False)
        return model


def copy_layer(projections: Projection, num_heads: int, device: torch.device, dtype: torch.dtype) -> MultiHeadAttention:
    """Our ``MultiHeadAttention`` holding a family's four projections, weights and biases.

    Args:
        projections: ``W_q, W_k, W_v, W_o`` -> (weight (D, D) in ``nn.Linear``'s (out, in) layout, bias (D,)).
        num_heads: the checkpoint's head count.
        device, dtype: where and in which number type the copy lives.
    """
    d_model = projections["W_q"][0].size(1)
    with torch.device("meta"):  # no random init: every parameter is overwritten below
        model = MultiHeadAttention(d_model, num_heads)
    model = model.to_empty(device="cpu")
    with torch.no_grad():
        for ours, (weight, bias) in projections.items():
            getattr(model, ours).weight.copy_(weight)  # (D, D)
            getattr(model, ours).bias.copy_(bias)  # (D,)
    return model.to(device=device, dtype=dtype).eval().requires_grad_(False)
