"""What a checkpoint family tells the pretrained source: where layer l's attention is, how its projections
become our ``W_q, W_k, W_v, W_o``, what the layer's input is, which mask the checkpoint uses and which
module's output is the attention block's output.

Shape legend: D = d_model, L = tokens, H = heads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from torch import Tensor, nn

__all__ = ["Family", "Projection"]

#: Our projection -> (weight (D, D) in ``nn.Linear``'s (out, in) layout, bias (D,)).
Projection = Mapping[str, tuple[Tensor, Tensor]]


class Family:
    """One family of checkpoints (``model_type`` values in :attr:`model_types`); subclass it per family.

    The defaults fit a text model loaded with ``AutoModel`` and ``AutoTokenizer``. A family module
    defines ``FAMILY = <subclass>()``; :mod:`mha.sources.families` finds it by ``model_type``.
    """

    #: ``config.json``'s ``model_type`` values this family reads.
    model_types: tuple[str, ...] = ()
    #: What its tokens are made from (:data:`mha.sources.base.MODALITIES`): the learner's text, or an image.
    modality: str = "text"
    #: The files that make its inputs, at least one of which a checkpoint must have (its tokenizer's words).
    input_files: tuple[str, ...] = ("tokenizer.json", "vocab.txt", "vocab.json")
    #: The checkpoint's attention is causal: every layer runs under the causal mask whatever the page's mask.
    causal: bool = False
    #: ``config.json`` keys of (hidden size, heads, layers), each with its aliases, the first present is read.
    size_keys: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] = (
        ("hidden_size",),
        ("num_attention_heads",),
        ("num_hidden_layers",),
    )
    #: A probe sequence (the induction score's) starts with the tokenizer's BOS when the tokenizer adds no prefix.
    bos_first: bool = False
    #: The message (``check.*``) saying what the check against the checkpoint compares with.
    check_how: str = "check.checkpoint_how"

    def refuse(self, name: str, config: Mapping[str, object]) -> str | None:
        """Why a checkpoint of this family cannot be read here (``config.json`` alone), or ``None``.

        Returns:
            What to call the model in the message (``"bert decoder"``), when it is refused.
        """
        return None

    def token_count(self, config: Mapping[str, object]) -> int | None:
        """The number of tokens every input has, from ``config.json`` (an image's patches), or ``None`` (a text's
        own count).

        Raises:
            KeyError, TypeError, ValueError: a size missing or not a number (``config.json`` is broken).
        """
        return None

    def page_notes(self, framed: bool) -> tuple[str, ...]:
        """Note codes (``notes.*``) the page shows with every run of this family.

        Args:
            framed: the tokenizer adds tokens of its own to every text (``[CLS]`` ... ``[SEP]``).
        """
        return ()

    def load(self, folder: Path, safetensors_only: bool) -> tuple[Any, Any]:
        """The ``transformers`` model (eager attention, float32, eval) and its tokenizer, from ``folder``.

        ``safetensors_only``: never read a pickled ``pytorch_model.bin`` (a learner's own hub id).
        Never ``trust_remote_code``.
        """
        import torch
        import transformers  # heavy (seconds): only here, never at app start

        options: dict[str, Any] = {"attn_implementation": "eager", "dtype": torch.float32}
        if safetensors_only:
            options["use_safetensors"] = True
        model = transformers.AutoModel.from_pretrained(folder, **options)
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
        return model.eval().requires_grad_(False), tokenizer

    def layers(self, model: Any) -> Sequence[nn.Module]:
        """The model's layers (blocks), in order."""
        raise NotImplementedError

    def attention(self, model: Any, layer: int) -> nn.Module:
        """The module of ``layer`` that holds its four projections."""
        raise NotImplementedError

    def check_structure(self, attention: nn.Module) -> None:
        """Raise ``AttributeError`` naming what an attention module lacks (a projection, a bias, a shape)."""
        raise NotImplementedError

    def projections(self, attention: nn.Module) -> Projection:
        """The attention module's four projections as ``nn.Linear`` weights and biases."""
        raise NotImplementedError

    def layer_input(self, model: Any, hidden_states: Sequence[Tensor], layer: int) -> Tensor:
        """The input of ``layer``'s attention, (1, L, D), from the model's ``hidden_states`` (run under no grad)."""
        raise NotImplementedError

    def block_output(self, model: Any, layer: int) -> nn.Module:
        """The module whose output is ``layer``'s attention output, before dropout and the residual connection."""
        raise NotImplementedError
