"""A loaded checkpoint: its ``transformers`` model, its forward (one at a time), a layer copied into ours.

Where layer l's attention is, what its input is and which module's output is the attention block's
output is its family's (:class:`~mha.sources.families.base.Family`); this module only asks. A
checkpoint is shared read-only by every session; its forwards run one at a time (the full forward hooks every
layer's attention block, which must not see another session's forward). The page's three readers of one text --
our layer's input, the check against the checkpoint and the head finder -- share one full forward
(:meth:`Checkpoint.full_forward`: hidden states, attentions and every block's output), kept for the last
:data:`FORWARDS_KEPT_BYTES` of them. Its forwards run on the device they
are asked for (the run's): the loaded model stays on the CPU, and each other device gets one copy of it, made on
first use (:meth:`Checkpoint.models_on`) and dropped with the checkpoint when the loader lets it go (least recently
used, :data:`~mha.sources.checkpoint.loader.MAX_LOADED`) or at once when that device ran out of memory
(:meth:`Checkpoint.forget_device`). Its inputs are made by
:class:`~mha.sources.checkpoint.text.TextCheckpoint` (a tokenizer) or
:class:`~mha.sources.checkpoint.image.ImageCheckpoint` (an image processor).

Shape legend: D = d_model, L = tokens, H = heads.
"""

from __future__ import annotations

import copy
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from mha.memory import CPU
from mha.module import MultiHeadAttention
from mha.sources.base import SourceSizes
from mha.sources.families import Family, Projection

__all__ = ["FORWARDS_KEPT_BYTES", "Checkpoint", "Encoded", "FullForward", "copy_layer", "inputs_on"]

_LAYER_MODELS_KEPT = 4  # per checkpoint: copies of layers (per device and dtype) shared by the runs
#: Per checkpoint: the bytes of full forwards kept (the last inputs, per device; the newest is always kept). GPT-2
#: small holds about 19 MB at 128 tokens (hidden states, attentions and block outputs), 0.5 MB at a room's 15: a
#: learner's next layer, a few changes later, still finds their sentence's forward.
FORWARDS_KEPT_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Encoded:
    """A text cut by the checkpoint's tokenizer, or an image made into its pixels: what its forward reads."""

    tokens: tuple[str, ...]
    inputs: Mapping[str, Tensor]  # the model's keyword inputs: input_ids and attention_mask (1, L), or pixel_values
    keys: Tensor  # (1, L) bool: the keys the checkpoint attends to (False at a [PAD] token)


@dataclass(frozen=True)
class FullForward:
    """One forward pass of the checkpoint on one input, everything the page reads of it, on the device it ran on."""

    hidden_states: tuple[Tensor, ...]  # layers + 1 x (1, L, D): the residual stream before each layer, and after
    attentions: tuple[Tensor, ...]  # layers x (1, H, L, L): every head's softmax weights
    block_outputs: tuple[Tensor, ...]  # layers x (1, L, D): each attention block's output (the family's block_output)

    @property
    def bytes(self) -> int:
        """The bytes its tensors hold."""
        tensors = (*self.hidden_states, *self.attentions, *self.block_outputs)
        return sum(tensor.numel() * tensor.element_size() for tensor in tensors)


def _input_key(encoded: Encoded, device: torch.device) -> tuple[object, ...]:
    """What identifies a forward: the device and the inputs' values (ids and mask, or pixels: hashed)."""
    values = []
    for name, value in sorted(encoded.inputs.items()):
        digest = hashlib.sha256(value.detach().cpu().contiguous().numpy().tobytes()).hexdigest()
        values.append((name, tuple(value.shape), str(value.dtype), digest))
    return (str(device), *values)


class Checkpoint:
    """A loaded checkpoint: the ``transformers`` base model (eval, read-only), its sizes and family; its inputs are a
    text's (:class:`~mha.sources.checkpoint.text.TextCheckpoint`) or an image's
    (:class:`~mha.sources.checkpoint.image.ImageCheckpoint`).

    ``language_model``: for a family that generates (GPT-2, Llama, Qwen2), the ``*ForCausalLM`` whose base model
    ``model`` is (the same modules, loaded once), with the head that predicts the next token; ``None`` otherwise.
    """

    def __init__(
        self, name: str, model: Any, sizes: SourceSizes, family: Family, language_model: Any | None = None
    ) -> None:
        self.name, self.model, self.sizes, self.family = name, model, sizes, family
        self.language_model = language_model
        self.lock = threading.Lock()  # one forward at a time (see the module docstring)
        self._layers: OrderedDict[tuple[int, str, str], MultiHeadAttention] = OrderedDict()
        self._copies: dict[str, tuple[Any, Any | None]] = {}  # device -> (model, language_model) there
        self._copies_lock = threading.Lock()
        self._forwards: OrderedDict[tuple[object, ...], FullForward] = OrderedDict()  # guarded by ``lock``
        self.full_forwards = 0  # full forwards run (not served from those kept): what the tests count

    @property
    def parameters(self) -> int:
        """The parameters of the loaded model, its language-model head included (a tied head counts once)."""
        model = self.language_model if self.language_model is not None else self.model
        return sum(p.numel() for p in model.parameters())

    def models_on(self, device: torch.device) -> tuple[Any, Any | None]:
        """The base model and the language model (``None`` where there is none) on ``device``: the loaded ones on the
        CPU, else this checkpoint's one copy there (made on first use: the language model is copied, and its base
        model is the copy's own, so the two share their modules as the loaded ones do)."""
        if device.type == "cpu":
            return self.model, self.language_model
        key = str(device)
        with self._copies_lock:
            if key not in self._copies:
                if self.language_model is None:
                    self._copies[key] = (copy.deepcopy(self.model).to(device), None)
                else:
                    language_model = copy.deepcopy(self.language_model).to(device)
                    self._copies[key] = (self.family.base_model(language_model), language_model)
            return self._copies[key]

    def forget_device(self, device: torch.device) -> None:
        """Drop the copy on ``device`` (after it ran out of memory there) and the forwards kept there; the next
        forward there copies again."""
        with self._copies_lock:
            self._copies.pop(str(device), None)
        with self.lock:
            for key in [key for key in self._forwards if key[0] == str(device)]:
                del self._forwards[key]

    @property
    def generates(self) -> bool:
        """It holds a language model (:attr:`language_model`): it can generate text."""
        return self.language_model is not None

    def attention_block(self, layer: int) -> Any:
        """The module of ``layer`` holding its four projections (BERT: ``attention``; GPT-2: ``attn``; Llama:
        ``self_attn``)."""
        return self.family.attention(self.model, layer)

    def forward(self, encoded: Encoded, device: torch.device = CPU, **outputs: bool) -> Any:
        """The checkpoint's own forward pass on ``device`` (``output_hidden_states=True`` etc. as keywords); its
        outputs are on ``device``."""
        model, _ = self.models_on(device)
        with self.lock, torch.inference_mode():
            return model(**inputs_on(encoded, device), **outputs)

    def full_forward(self, encoded: Encoded, device: torch.device = CPU) -> FullForward:
        """The forward pass on ``device`` with hidden states, attentions and every layer's attention block output (a
        forward hook per layer), made once per input and device: the last :data:`FORWARDS_KEPT_BYTES` are kept, and a
        session asking for one another session is making waits for it instead of running it again."""
        key = _input_key(encoded, device)
        model, _ = self.models_on(device)
        with self.lock, torch.inference_mode():  # the hooks see this forward only: forwards run one at a time
            if key in self._forwards:
                self._forwards.move_to_end(key)
                return self._forwards[key]
            captured: dict[int, Tensor] = {}
            handles = [
                self.family.block_output(model, layer).register_forward_hook(
                    lambda _module, _inputs, out, layer=layer: captured.__setitem__(layer, out)
                )
                for layer in range(self.sizes.num_layers)
            ]
            try:
                outputs = model(**inputs_on(encoded, device), output_attentions=True, output_hidden_states=True)
            finally:
                for handle in handles:
                    handle.remove()
            self.full_forwards += 1
            forward = FullForward(
                tuple(outputs.hidden_states),
                tuple(outputs.attentions),
                tuple(captured[layer] for layer in range(self.sizes.num_layers)),
            )
            self._forwards[key] = forward
            while len(self._forwards) > 1 and sum(kept.bytes for kept in self._forwards.values()) > FORWARDS_KEPT_BYTES:
                self._forwards.popitem(last=False)
            return forward

    def layer_input(self, encoded: Encoded, layer: int, device: torch.device = CPU) -> Tensor:
        """The input of ``layer``'s attention for the text or image, (1, L, D) on ``device``, as the checkpoint
        computes it there (from :meth:`full_forward`)."""
        hidden = self.full_forward(encoded, device).hidden_states  # layers + 1 x (1, L, D)
        with torch.inference_mode():
            return self.family.layer_input(self.models_on(device)[0], hidden, layer)  # (1, L, D)

    def forward_with_block_output(
        self, encoded: Encoded, layer: int, device: torch.device = CPU
    ) -> tuple[FullForward, Tensor]:
        """The full forward on ``device`` (:meth:`full_forward`: its ``attentions`` too) and what ``layer``'s
        attention block returned.

        Returns:
            The forward and a (1, L, D) tensor, both on ``device``: the attention block's output before
            dropout and the residual connection (the family's :meth:`~mha.sources.families.base.Family.block_output`;
            BERT: ``attention.output.dense``, before its LayerNorm too; GPT-2: ``attn.c_proj``; Llama, Qwen2:
            ``self_attn.o_proj``; ViT: ``attention.o_proj``).
        """
        forward = self.full_forward(encoded, device)
        return forward, forward.block_outputs[layer]

    def layer_model(self, layer: int, device: torch.device, dtype: str) -> MultiHeadAttention:
        """``MultiHeadAttention`` holding copies of ``layer``'s projections, on ``device`` in ``dtype``: as many
        key/value heads as the checkpoint (``sizes.num_kv_heads``) and its rotary base (the family's ``rope_base``)."""
        key = (layer, str(device), dtype)
        with self.lock:
            if key in self._layers:
                self._layers.move_to_end(key)
                return self._layers[key]
        projections = self.family.projections(self.attention_block(layer))
        model = copy_layer(
            projections,
            self.sizes.num_heads,
            device,
            getattr(torch, dtype),
            num_kv_heads=self.sizes.num_kv_heads,
            rope_base=self.family.rope_base(self.model),
        )
        with self.lock:
            self._layers[key] = model
            while len(self._layers) > _LAYER_MODELS_KEPT:
                self._layers.popitem(last=False)
        return model


def inputs_on(encoded: Encoded, device: torch.device) -> dict[str, Tensor]:
    """``encoded``'s keyword inputs (ids, mask, pixels: made on the CPU by the tokenizer or processor) on ``device``."""
    return {name: value.to(device) for name, value in encoded.inputs.items()}


def copy_layer(
    projections: Projection,
    num_heads: int,
    device: torch.device,
    dtype: torch.dtype,
    num_kv_heads: int | None = None,
    rope_base: float | None = None,
) -> MultiHeadAttention:
    """Our ``MultiHeadAttention`` holding a family's four projections, weights and biases.

    The layer has biases unless the checkpoint's four projections have none (Llama's): where only some have one
    (Qwen2's ``o_proj`` has none), ours is zero there, which adds nothing.

    Args:
        projections: ``W_q, W_k, W_v, W_o`` -> (weight in ``nn.Linear``'s (out, in) layout, bias or ``None``):
            W_q and W_o (D, D), W_k and W_v (Hkv·Dh, D).
        num_heads: the checkpoint's (query) head count H.
        device, dtype: where and in which number type the copy lives.
        num_kv_heads: its key/value heads Hkv (grouped-query attention); ``None``: H.
        rope_base: the base of its rotary positions; ``None``: q and k are not rotated.
    """
    d_model = projections["W_q"][0].size(1)
    bias = any(linear_bias is not None for _, linear_bias in projections.values())
    with torch.device("meta"):  # no random init: every parameter is overwritten below
        model = MultiHeadAttention(d_model, num_heads, bias=bias, num_kv_heads=num_kv_heads, rope_base=rope_base)
    model = model.to_empty(device="cpu")
    with torch.no_grad():
        for ours, (weight, linear_bias) in projections.items():
            linear = getattr(model, ours)
            linear.weight.copy_(weight)  # (D, D); W_k, W_v: (Hkv·Dh, D)
            if linear.bias is None:
                continue
            if linear_bias is None:
                linear.bias.zero_()  # (out,): the checkpoint has none here (Qwen2's o_proj): a zero adds nothing
            else:
                linear.bias.copy_(linear_bias)  # (out,)
    return model.to(device=device, dtype=dtype).eval().requires_grad_(False)
