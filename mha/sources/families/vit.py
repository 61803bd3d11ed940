"""ViT and DeiT image encoders (``model_type: vit``, ``deit``): Pre-Norm, bidirectional, ``nn.Linear`` projections.

What a ViT reader must know, and what this module does about it:

* A checkpoint's files name layer l's attention ``encoder.layer.l.attention.attention.query/key/value`` and
  ``attention.output.dense``; transformers 5.23 renames them as it loads them (its ``ViTModel`` conversion
  mapping, which ``DeiTModel`` shares) to ``layers[l].attention.q_proj, k_proj, v_proj, o_proj``, the
  modules read here: ``W_q, W_k, W_v`` <- ``q_proj, k_proj, v_proj`` and ``W_o`` <- ``o_proj``, weights and
  biases already in ``nn.Linear``'s (out, in) layout. With ``qkv_bias: false`` Q, K and V have no bias:
  ours are zero.
* Pre-Norm: ``ViTLayer.forward`` normalises before attention (``layernorm_before``), so the layer's input
  is ``layers[l].layernorm_before(hidden_states[l])``. ``hidden_states[0]`` is the patch embeddings with
  ``[CLS]`` before them and the position embedding added; ``hidden_states[l]`` is layer l's input.
* Bidirectional and unmasked: every token sees every other (an image has no padding).
* Tokens: ``[CLS]``, then the patches in row-major grid order (the patch embedding ``Conv2d``'s output
  flattened: ``flatten(2).transpose(1, 2)``), labelled as :mod:`mha.vision.patches` labels them (``r0c0``,
  ``r0c1``, ...). ``DeiTModel`` always puts a distillation token after ``[CLS]``: ``[CLS]``, ``[DIST]``,
  then the patches; its layers are ViT's.
* The image: the checkpoint's own image processor (``preprocessor_config.json``: resize, rescale,
  normalise) makes it, with Pillow (no torchvision), from the picture as 8-bit pixels (:func:`pixel_values`).
* The block's attention output is what ``o_proj`` returns, before dropout and the residual connection.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from mha.sources.base import IMAGE
from mha.sources.families.base import Family, ImageGeometry, Projection
from mha.sources.hub import PROCESSOR_FILE
from mha.vision.images import to_channels
from mha.vision.patches import CLS

__all__ = ["DEIT", "DIST", "DIST_NOTE", "FAMILY", "PREFIX", "VIT", "ViTFamily", "grid", "pixel_values"]

#: The ``model_type`` values this family reads: ViT, and DeiT (distilled: a second token before the patches).
VIT, DEIT = "vit", "deit"
DIST = "[DIST]"
#: The tokens before the patches, per ``model_type``.
PREFIX = {VIT: (CLS,), DEIT: (CLS, DIST)}
#: The note a DeiT's run adds: what its ``[DIST]`` is.
DIST_NOTE = "deit_dist"
#: Our projection <- the module of a layer's ``attention`` holding it (transformers 5's names).
PROJECTIONS = {"W_q": "q_proj", "W_k": "k_proj", "W_v": "v_proj", "W_o": "o_proj"}
_DEFAULT_IMAGE_SIZE, _DEFAULT_PATCH_SIZE = 224, 16  # ViTConfig's defaults, for a config.json without them


def _pair(value: object) -> tuple[int, int]:
    """A size in ``config.json``: one number (a square) or ``[height, width]`` (``ValueError`` otherwise)."""
    if isinstance(value, list | tuple):
        if len(value) != 2:
            raise ValueError(f"a size of two numbers, got {value!r}")
        return int(str(value[0])), int(str(value[1]))
    return int(str(value)), int(str(value))


def grid(config: Mapping[str, object]) -> tuple[int, int]:
    """(R, Q): the rows and columns of patches of a checkpoint's image, from ``config.json``.

    Raises:
        ValueError: sizes that are not positive whole numbers, or a patch size that does not divide the image.
    """
    height, width = _pair(config.get("image_size", _DEFAULT_IMAGE_SIZE))
    patch_h, patch_w = _pair(config.get("patch_size", _DEFAULT_PATCH_SIZE))
    if min(height, width, patch_h, patch_w) < 1 or height % patch_h or width % patch_w:
        raise ValueError(f"image_size {height} × {width} in patches of {patch_h} × {patch_w}")
    return height // patch_h, width // patch_w


def pixel_values(processor: Any, image: Tensor, channels: int) -> Tensor:
    """An image made into the checkpoint's input by its own image processor.

    The picture is handed over as a Pillow image of 8-bit pixels -- what the processor is given when
    a file is opened -- so that its resizing, rescaling by 1/255 and normalising are the checkpoint's own.

    Args:
        processor: the checkpoint's image processor (``AutoImageProcessor``, Pillow backend).
        image: (C, H, W) in [0, 1], grey or RGB, any size (a bundled sample, an upload).
        channels: the channels the model reads (3: RGB; grey is repeated).

    Shape:
        (1, channels, H', W'): the processor's size.
    """
    from PIL import Image  # Pillow only where an image is handed to the processor

    pixels = (to_channels(image, channels) * 255).round().clamp(0, 255).to(torch.uint8)  # (channels, H, W)
    array = pixels.permute(1, 2, 0).numpy()  # (H, W, channels)
    picture = Image.fromarray(array[:, :, 0] if channels == 1 else array)  # mode "L" or "RGB"
    return processor(images=picture, return_tensors="pt")["pixel_values"]  # (1, channels, H', W')


class ViTFamily(Family):
    """ViT (``google/vit-base-patch16-224``, ``facebook/deit-*`` saved as ``vit``) and DeiT (distilled: ``deit``)."""

    model_types = (VIT, DEIT)
    modality = IMAGE
    input_files = (PROCESSOR_FILE,)
    check_how = "check.checkpoint_how_vit"

    def refuse(self, name: str, config: Mapping[str, object]) -> str | None:
        """A head size other than hidden / heads, images of other than 1 or 3 channels, and patches that are not
        square are not read here."""
        head_dim, heads = config.get("head_dim"), config.get("num_attention_heads")
        even = isinstance(head_dim, int) and isinstance(heads, int) and head_dim * heads == config.get("hidden_size")
        if head_dim is not None and not even:
            return f"{config.get('model_type')} with head_dim × heads ≠ hidden_size"
        if config.get("num_channels", 3) not in (1, 3):
            return f"{config.get('model_type')} of {config.get('num_channels')} channels"
        patch = config.get("patch_size", _DEFAULT_PATCH_SIZE)
        if isinstance(patch, list | tuple) and len(set(patch)) != 1:
            return f"{config.get('model_type')} with patches of {patch[0]} × {patch[-1]} pixels"
        return None

    def token_count(self, config: Mapping[str, object]) -> int | None:
        """``[CLS]`` (and DeiT's ``[DIST]``) and the patches of the checkpoint's image."""
        rows, columns = grid(config)
        return len(PREFIX[str(config.get("model_type"))]) + rows * columns

    def page_notes(self, framed: bool, tokens: Sequence[str] = ()) -> tuple[str, ...]:
        """How a ViT's layer is read, its tokens and its image; a DeiT's ``[DIST]`` where the tokens hold one."""
        return ("family_vit", *((DIST_NOTE,) if DIST in tokens else ()))

    def load(self, folder: Path, safetensors_only: bool) -> tuple[Any, Any, Any | None]:
        """The model (eager attention, float32, eval) and its image processor (Pillow's backend), from ``folder``;
        no language model (it generates nothing)."""
        import transformers  # heavy (seconds): only here, never at app start

        options: dict[str, Any] = {"attn_implementation": "eager", "dtype": torch.float32}
        if safetensors_only:
            options["use_safetensors"] = True
        model = transformers.AutoModel.from_pretrained(folder, **options)
        processor = transformers.AutoImageProcessor.from_pretrained(folder, backend="pil")
        return model.eval().requires_grad_(False), processor, None

    def prefix_tokens(self, model: Any) -> tuple[str, ...]:
        """The tokens before the patches: ``[CLS]``, and DeiT's ``[DIST]``."""
        return PREFIX[model.config.model_type]

    def image_geometry(self, model: Any) -> ImageGeometry:
        """Channels from ``config.num_channels``; patch and image size from the patch embedding (square patches:
        :meth:`refuse` turns others away)."""
        embeddings = model.embeddings.patch_embeddings
        height, width = embeddings.image_size  # the size its position embeddings are made for
        return ImageGeometry(int(model.config.num_channels), int(embeddings.patch_size[0]), (int(height), int(width)))

    def pixel_values(self, processor: Any, image: Tensor, channels: int) -> Tensor:
        """See :func:`pixel_values`."""
        return pixel_values(processor, image, channels)  # (1, channels, H', W')

    def layers(self, model: Any) -> Sequence[nn.Module]:
        return model.layers

    def attention(self, model: Any, layer: int) -> nn.Module:
        return model.layers[layer].attention

    def check_structure(self, attention: nn.Module) -> None:
        for ours, theirs in PROJECTIONS.items():
            linear = getattr(attention, theirs)  # AttributeError when missing
            square = isinstance(linear, nn.Linear) and linear.in_features == linear.out_features
            if not square or (ours == "W_o" and linear.bias is None):
                raise AttributeError(f"{theirs} (an nn.Linear of D to D{', with a bias' if ours == 'W_o' else ''})")

    def projections(self, attention: nn.Module) -> Projection:
        copied = {}
        for ours, theirs in PROJECTIONS.items():
            linear = getattr(attention, theirs)
            bias = (
                linear.bias
                if linear.bias is not None
                else torch.zeros(linear.out_features, device=linear.weight.device)
            )  # qkv_bias: false
            copied[ours] = (linear.weight, bias)  # (D, D), (D,)
        return copied

    def layer_input(self, model: Any, hidden_states: Sequence[Tensor], layer: int) -> Tensor:
        return model.layers[layer].layernorm_before(hidden_states[layer])  # (1, L, D): Pre-Norm

    def block_output(self, model: Any, layer: int) -> nn.Module:
        return model.layers[layer].attention.o_proj


FAMILY = ViTFamily()
