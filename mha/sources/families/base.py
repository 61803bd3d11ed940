"""What a checkpoint family tells the checkpoint source: everything that differs between architectures.

A family says where layer l's attention is, how its projections become our ``W_q, W_k, W_v, W_o``,
how many key/value heads they make (:meth:`Family.kv_heads`, grouped-query attention) and whether q and k
are turned by rotary positions (:meth:`Family.rope_base`), what the layer's input is, which mask the
checkpoint uses (:attr:`Family.causal`) and which module's output is the attention block's output;
what it reads (:attr:`Family.modality`) and, for an image family, the tokens before its patches
(:meth:`Family.prefix_tokens`), its image's geometry (:meth:`Family.image_geometry`) and how an image
becomes its input (:meth:`Family.pixel_values`); and the notes the page shows with its runs
(:meth:`Family.page_notes`). The checkpoint source (:mod:`mha.sources.checkpoint`) asks only these hooks and
never names a family.

Shape legend: D = d_model, L = tokens, H = heads, C = channels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from torch import Tensor, nn

from mha.sources.base import IMAGE, TEXT
from mha.vision.patches import patch_tokens

__all__ = ["Family", "ImageGeometry", "Projection"]

#: Our projection -> (weight in ``nn.Linear``'s (out, in) layout, bias (out,) or ``None`` where it has none).
#: W_q and W_o are (D, D); W_k and W_v (Hkv·Dh, D), Hkv = :meth:`Family.kv_heads` (D, D where it is ``None``).
Projection = Mapping[str, tuple[Tensor, Tensor | None]]


@dataclass(frozen=True)
class ImageGeometry:
    """What an image model reads: its channels, its (square) patch's side and the image size (H, W) its position
    embeddings are made for, in pixels."""

    channels: int
    patch: int
    image_size: tuple[int, int]


class Family:
    """One family of checkpoints (``model_type`` values in :attr:`model_types`); subclass it per family.

    The defaults fit a text model loaded with ``AutoModel`` and ``AutoTokenizer``. A family module
    defines ``FAMILY = <subclass>()``; :mod:`mha.sources.families` finds it by ``model_type``.
    """

    #: ``config.json``'s ``model_type`` values this family reads.
    model_types: tuple[str, ...] = ()
    #: What its tokens are made from (:data:`mha.sources.base.MODALITIES`): the learner's text, or an image.
    modality: str = TEXT
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
    #: Its checkpoints generate text: loaded with their language-model head (``AutoModelForCausalLM``, once), the
    #: base model read being the one inside it (:meth:`base_model`); ``False``: ``AutoModel``, the base model alone.
    generates: bool = False

    def refuse(self, name: str, config: Mapping[str, object]) -> str | None:
        """Why a checkpoint of this family cannot be read here (``config.json`` alone), or ``None``.

        Returns:
            What to call the model in the message (``"bert decoder"``), when it is refused.
        """
        return None

    def kv_heads(self, config: Mapping[str, object]) -> int | None:
        """The key/value heads W_k and W_v make, from ``config.json``, where fewer than the query heads may share
        them (grouped-query attention); ``None``: one per query head.

        Raises:
            KeyError, TypeError, ValueError: a size not a number (``config.json`` is broken).
        """
        return None

    def rope_base(self, model: Any) -> float | None:
        """The base of the rotary positions the loaded ``model`` turns q and k by (Llama's ``rope_theta``), or
        ``None``: its q and k are not rotated."""
        return None

    def token_count(self, config: Mapping[str, object]) -> int | None:
        """The number of tokens every input has, from ``config.json`` (an image's patches), or ``None`` (a text's
        own count).

        Raises:
            KeyError, TypeError, ValueError: a size missing or not a number (``config.json`` is broken).
        """
        return None

    @property
    def reads_image(self) -> bool:
        """Its tokens are an image's patches (:attr:`modality` is ``"image"``), never the learner's text."""
        return self.modality == IMAGE

    def page_notes(self, framed: bool, tokens: Sequence[str] = ()) -> tuple[str, ...]:
        """Note codes (``notes.*``) the page shows with a run of this family.

        Args:
            framed: the tokenizer adds tokens of its own to every text (``[CLS]`` ... ``[SEP]``); ``False`` for an
                image family.
            tokens: the run's tokens (an image family's prefix tokens may call for a note).
        """
        return ()

    # ---------------------------------------------------------------- an image family's hooks
    def prefix_tokens(self, model: Any) -> tuple[str, ...]:
        """The tokens an image model puts before its patches (``[CLS]``...), read from the loaded ``model``."""
        return ()

    def image_tokens(self, model: Any, rows: int, columns: int) -> tuple[str, ...]:
        """An image's tokens: :meth:`prefix_tokens`, then the patches of an R × Q grid in row-major order
        (``r0c0``, ``r0c1``, ...)."""
        return (*self.prefix_tokens(model), *patch_tokens(rows, columns, cls=False))

    def image_geometry(self, model: Any) -> ImageGeometry:
        """The loaded image ``model``'s channels, patch side and image size (an image family only)."""
        raise NotImplementedError(f"{type(self).__name__} reads no images")

    def pixel_values(self, processor: Any, image: Tensor, channels: int) -> Tensor:
        """An image made into the model's input by the checkpoint's own image ``processor`` (an image family only).

        Args:
            image: (C, H, W) in [0, 1], grey or RGB, any size.
            channels: the channels the model reads.

        Shape:
            (1, channels, H', W'): the processor's size.
        """
        raise NotImplementedError(f"{type(self).__name__} reads no images")

    def load(self, folder: Path, safetensors_only: bool) -> tuple[Any, Any, Any | None]:
        """The ``transformers`` base model (eager attention, float32, eval), its tokenizer and, for a family that
        :attr:`generates`, the ``*ForCausalLM`` holding that base model (``None`` otherwise, or where the files hold
        no language-model head: it would be random), from ``folder``. The weights are read once.

        ``safetensors_only``: never read a pickled ``pytorch_model.bin`` (a learner's own hub id).
        Never ``trust_remote_code``.
        """
        import torch
        import transformers  # heavy (seconds): only here, never at app start

        options: dict[str, Any] = {"attn_implementation": "eager", "dtype": torch.float32}
        if safetensors_only:
            options["use_safetensors"] = True
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
        if not self.generates:
            model = transformers.AutoModel.from_pretrained(folder, **options)
            return model.eval().requires_grad_(False), tokenizer, None
        language_model, info = transformers.AutoModelForCausalLM.from_pretrained(
            folder, output_loading_info=True, **options
        )
        language_model = language_model.eval().requires_grad_(False)
        inside = f"{language_model.base_model_prefix}."  # the base model's weights are named "<prefix>.<name>"
        head_missing = any(not str(key).startswith(inside) for key in info["missing_keys"])
        return self.base_model(language_model), tokenizer, None if head_missing else language_model

    def base_model(self, language_model: Any) -> Any:
        """The base model inside this family's ``*ForCausalLM`` (a family that :attr:`generates`): the model whose
        layers are read (GPT-2: ``transformer``; Llama: ``model``)."""
        raise NotImplementedError(f"{type(self).__name__} does not generate")

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
        """The attention module's four projections as ``nn.Linear`` weights and biases (``None``: no bias)."""
        raise NotImplementedError

    def layer_input(self, model: Any, hidden_states: Sequence[Tensor], layer: int) -> Tensor:
        """The input of ``layer``'s attention, (1, L, D), from the model's ``hidden_states`` (run under no grad)."""
        raise NotImplementedError

    def block_output(self, model: Any, layer: int) -> nn.Module:
        """The module whose output is ``layer``'s attention output, before dropout and the residual connection."""
        raise NotImplementedError
