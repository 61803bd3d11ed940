"""The pretrained source: one layer of a real checkpoint, run by the scratch engine.

What differs between architectures is its family's (:mod:`mha.sources.families`, found by
``config.json``'s ``model_type``): where layer l's attention is, how its projections become our
``W_q, W_k, W_v, W_o`` (weights and biases), what the layer's input is for the learner's text
(BERT, Post-Norm: ``hidden_states[l]``; GPT-2, Pre-Norm: ``ln_1(hidden_states[l])``), whether the
checkpoint is causal, and which module's output is the attention block's output.

The text is cut by the checkpoint's tokenizer. What the tokenizer adds to every text (its
*frame*: ``[CLS]`` ... ``[SEP]`` for a BERT tokenizer, nothing for GPT-2's byte-level BPE) is read
from the tokenizer itself, never from the checkpoint's name; a byte-level BPE's tokens are shown
as the text they stand for (`` animal``, not ``Ganimal`` with the byte marker). A ``[PAD]`` in the
text becomes the tokenizer's pad token, where it has one, and is masked in the checkpoint's
forward through its ``attention_mask``, as in a padded batch.

A causal checkpoint (GPT-2) runs every layer under its causal mask: the source says so
(``SourceInputs.causal``) and the pipeline runs the layer under the causal mask whatever the
page's mask (the learner's padding mask still blocks ``[PAD]`` keys on top).

An image checkpoint (ViT, DeiT: its family's ``modality`` is ``"image"``) reads no text: its
tokens are ``[CLS]`` (DeiT: and ``[DIST]``) and the patches of ``config.image`` (a bundled
sample) or of an image given to :meth:`PretrainedSource.prepare_image` (an upload), made into
its input by its own image processor. Like BERT's, its attention is unmasked: a mask the learner
picks runs as a "what if", and the check against the checkpoint then says it does not apply.

Loading uses ``transformers`` (``AutoModel`` with ``attn_implementation="eager"``: the SDPA
default returns no attention weights), imported here on first use only: the default page never
imports it. Loaded checkpoints are kept per process, at most :data:`MAX_LOADED` at a time
(least recently used first out, a learner's own hub checkpoints included), and shared read-only
by every session; their forwards run one at a time per checkpoint (the comparison with the
checkpoint hooks a module, which must not see another session's forward).
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from mha.checkpoints import checkpoint_location, checkpoint_names, chinese_checkpoint
from mha.config import LIMITS, AttentionConfig, ConfigError, WeightSpec, check_token_count
from mha.head_labels import induction_relation
from mha.head_patterns import RepeatedSequence, repeated_sequence
from mha.masks import causal_mask
from mha.module import MultiHeadAttention
from mha.sources import any_checkpoint, hub
from mha.sources.base import Note, SourceInputs, SourceSizes, SourceUnavailableError
from mha.sources.families import SUPPORTED_TYPES, Family, Projection, checked_sizes, family_for
from mha.sources.families.bert import PROJECTIONS
from mha.sources.families.vit import DIST, ViTFamily, pixel_values
from mha.vision.patches import patch_grid
from mha.vision.samples import sample_image

__all__ = [
    "CHECKPOINT_TOLERANCE",
    "MAX_LOADED",
    "PROJECTIONS",
    "SEP",
    "SUPPORTED_TYPES",
    "Checkpoint",
    "CheckpointCheck",
    "ImageCheckpoint",
    "Origin",
    "PretrainedSource",
    "TextCheckpoint",
    "checkpoint_sizes",
    "load_checkpoint",
    "origin_of",
    "token_notes",
]

MAX_LOADED = 2  # checkpoints held in memory at once per process (bert-base: about 0.5 GB each)
SEP = "[SEP]"
UNK = "[UNK]"
BYTE_PIECE = "\ufffd"  # what a byte-level BPE token that holds part of a character's bytes decodes to
INDUCTION_HALF = 50  # random tokens repeated once for the induction score (TransformerLens's 50)
INDUCTION_SEED = 0
_BRACKETED = re.compile(r"\[.*\]|<.*>")  # [unused3], [CLS], <pad>: markers, not words of the text
#: Our float32 layer against the checkpoint's own float32 forward: the same sums in another order differ by
#: float32 rounding (about 1e-7 here), far below this; a wrong weight or mask differs by far more.
CHECKPOINT_TOLERANCE = 1e-5
_LAYER_MODELS_KEPT = 4  # per checkpoint: copies of layers (per device and dtype) shared by the runs


# ---------------------------------------------------------------- where the files are, and their sizes
@dataclass(frozen=True)
class Origin:
    """Where a pretrained spec's files are, and how far they are trusted."""

    name: str  # what the page calls it: a name on the server's list, or the learner's hub id
    location: str  # a hub id or a folder on the server
    learners: bool = False  # the learner's own hub id: the hub only, safetensors only, the server's cap

    @classmethod
    def listed(cls, name: str) -> Origin:
        """A name on the server's list (``KeyError`` for any other)."""
        return cls(name, checkpoint_location(name))


def origin_of(spec: WeightSpec) -> Origin:
    """Where the files of the pretrained ``spec`` are: the learner's hub id, else a name on the server's list.

    Raises:
        SourceUnavailableError: ``unlisted`` (a name off the list, never opened), ``bad_hub_id``
            or ``any_off`` (a hub id where the server allows none).
    """
    if spec.hub_id:
        any_checkpoint.check_allowed(spec.hub_id)
        return Origin(spec.hub_id, spec.hub_id, learners=True)
    name = spec.checkpoint or ""
    if name not in checkpoint_names():
        raise SourceUnavailableError("unlisted", f"{name!r} is not on this server's list", name=name)
    return Origin.listed(name)


def _as_origin(checkpoint: str | Origin) -> Origin:
    return checkpoint if isinstance(checkpoint, Origin) else Origin.listed(checkpoint)


def _files(origin: Origin) -> tuple[Path, dict[str, object]]:
    """The checkpoint's folder and its ``config.json`` (a learner's: its files checked against the server's cap)."""
    if origin.learners:
        folder = hub.hub_folder(origin.name, origin.location)
        return folder, any_checkpoint.check_snapshot(origin.name, folder)
    folder = hub.checkpoint_folder(origin.name, origin.location)
    return folder, hub.config_in(origin.name, folder)


def checkpoint_sizes(checkpoint: str | Origin) -> SourceSizes:
    """The sizes of a checkpoint (a listed name, or an :class:`Origin`), read from its ``config.json`` (never the
    network).

    Raises:
        SourceUnavailableError: not on this server (offline, not downloaded, missing), a model type
            no family reads, or beyond the server's limits; the code says which.
    """
    origin = _as_origin(checkpoint)
    _, config = _files(origin)
    return checked_sizes(origin.name, config, family_for(origin.name, config))


# ---------------------------------------------------------------- the tokenizer's frame
def _frame(tokenizer: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The ids the tokenizer adds before and after any text (BERT: ([CLS],), ([SEP],); GPT-2: (), ())."""
    framed = list(tokenizer("a")["input_ids"])
    plain = list(tokenizer("a", add_special_tokens=False)["input_ids"])
    for start in range(len(framed) - len(plain) + 1):
        if framed[start : start + len(plain)] == plain:
            return tuple(framed[:start]), tuple(framed[start + len(plain) :])
    return (), ()


def _is_byte_level(tokenizer: Any) -> bool:
    """The tokenizer is a byte-level BPE (GPT-2's): its tokens are byte strings, not the text they stand for."""
    decoder = getattr(getattr(tokenizer, "backend_tokenizer", None), "decoder", None)
    return decoder is not None and b'"ByteLevel"' in decoder.__getstate__()


# ---------------------------------------------------------------- loading, bounded
@dataclass(frozen=True)
class Encoded:
    """A text cut by the checkpoint's tokenizer, or an image made into its pixels: what its forward reads."""

    tokens: tuple[str, ...]
    inputs: Mapping[str, Tensor]  # the model's keyword inputs: input_ids and attention_mask (1, L), or pixel_values
    keys: Tensor  # (1, L) bool: the keys the checkpoint attends to (False at a [PAD] token)


class Checkpoint:
    """A loaded checkpoint: the ``transformers`` model (eval, read-only), its sizes and family; its inputs are a
    text's (:class:`TextCheckpoint`) or an image's (:class:`ImageCheckpoint`)."""

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
            dropout and the residual connection (BERT: ``attention.output.dense``, before its
            LayerNorm too; GPT-2: ``attn.c_proj``; ViT: ``attention.o_proj``).
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


class TextCheckpoint(Checkpoint):
    """A checkpoint that reads text, with its tokenizer (BERT, GPT-2)."""

    def __init__(self, name: str, model: Any, tokenizer: Any, sizes: SourceSizes, family: Family) -> None:
        super().__init__(name, model, sizes, family)
        self.tokenizer = tokenizer
        self.prefix, self.suffix = _frame(tokenizer)
        self._byte_level = _is_byte_level(tokenizer)
        self.max_positions: int | None = getattr(model.config, "max_position_embeddings", None)
        self._candidates: Tensor | None = None

    def display_tokens(self, ids: Sequence[int]) -> tuple[str, ...]:
        """The tokens of ``ids`` as the page shows them (a byte-level BPE's decoded: `` animal``)."""
        tokens = self.tokenizer.convert_ids_to_tokens(list(ids))
        if self._byte_level:
            tokens = [self.tokenizer.convert_tokens_to_string([token]) for token in tokens]
        return tuple(tokens)

    def encode(self, text: str) -> Encoded:
        """The tokenizer's tokens for ``text`` (with its frame, if any), capped like the project's own.

        Raises:
            ConfigError: no token besides the frame (``empty``), or more than the cap or the
                checkpoint's positions (``too_many``).
        """
        encoded = self.tokenizer(text, return_tensors="pt", truncation=False, return_attention_mask=False)
        ids = encoded["input_ids"]  # (1, L)
        frame = set(self.prefix + self.suffix)  # what the tokenizer adds to any text
        if not text.strip() or all(int(i) in frame for i in ids[0]):
            check_token_count(0)
        check_token_count(ids.size(1))
        if self.max_positions is not None and ids.size(1) > self.max_positions:
            raise ConfigError(
                "tokens",
                "too_many",
                f"the text has {ids.size(1)} tokens; {self.name} has {self.max_positions} positions",
                count=ids.size(1),
                high=self.max_positions,
            )
        return self.encode_ids(ids)

    def encode_ids(self, ids: Tensor) -> Encoded:
        """Token ids (1, L) as the forward reads them: the tokenizer's pad tokens masked through ``attention_mask``."""
        pad = self.tokenizer.pad_token_id
        attention_mask = torch.ones_like(ids) if pad is None else (ids != pad).long()  # (1, L): pads masked
        inputs = {"input_ids": ids, "attention_mask": attention_mask}
        return Encoded(self.display_tokens(ids[0].tolist()), inputs, attention_mask.bool())

    def probe_candidates(self) -> Tensor:
        """The ids a random probe sequence is drawn from: the vocabulary less special tokens and bracketed markers.

        Returns:
            (V',) long, ascending.
        """
        if self._candidates is None:
            special = set(self.tokenizer.all_special_ids)
            vocabulary = min(len(self.tokenizer), int(self.model.config.vocab_size))
            tokens = self.tokenizer.convert_ids_to_tokens(list(range(vocabulary)))
            kept = [i for i, token in enumerate(tokens) if i not in special and not _BRACKETED.fullmatch(token or "")]
            self._candidates = torch.tensor(kept, dtype=torch.long)
        return self._candidates

    def probe_prefix(self) -> tuple[int, ...]:
        """What a probe sequence starts with: the tokenizer's own prefix, or its BOS where the family wants one."""
        if self.prefix or not self.family.bos_first or self.tokenizer.bos_token_id is None:
            return self.prefix
        return (int(self.tokenizer.bos_token_id),)


class ImageCheckpoint(Checkpoint):
    """A checkpoint that reads images (ViT, DeiT), with its image processor.

    Raises:
        SourceUnavailableError: ``broken``, when the processor's images are not the size the model reads.
    """

    def __init__(self, name: str, model: Any, processor: Any, sizes: SourceSizes, family: ViTFamily) -> None:
        super().__init__(name, model, sizes, family)
        self.processor = processor
        self.vit = family
        self.channels = int(model.config.num_channels)
        embeddings = model.embeddings.patch_embeddings
        self.patch = int(embeddings.patch_size[0])  # square: the family refuses others
        expected = tuple(embeddings.image_size)  # (H, W): the size its position embeddings are made for
        made = tuple(pixel_values(processor, torch.zeros(1, 8, 8), self.channels).shape[-2:])  # (H', W')
        if made != expected:
            made_text, expected_text = (" × ".join(map(str, size)) for size in (made, expected))
            reason = f"its image processor makes {made_text} pixels, its model reads {expected_text}"
            raise SourceUnavailableError("broken", f"{name}: {reason}", name=name, reason=reason)

    def encode(self, image: Tensor) -> Encoded:
        """``image`` (C, H, W) in [0, 1] made into the checkpoint's pixels by its processor: ``[CLS]`` (DeiT: and
        ``[DIST]``), then the patches' labels in row-major order."""
        pixels = pixel_values(self.processor, image, self.channels)  # (1, C, H', W')
        rows, columns = patch_grid(pixels.size(-2), pixels.size(-1), self.patch)
        tokens = self.vit.tokens(self.model, rows, columns)
        return Encoded(tokens, {"pixel_values": pixels}, torch.ones(1, len(tokens), dtype=torch.bool))


def copy_layer(projections: Projection, num_heads: int, device: torch.device, dtype: torch.dtype) -> MultiHeadAttention:
    """Our ``MultiHeadAttention`` holding a family's four projections, weights and biases.

    Args:
        projections: ``W_q, W_k, W_v, W_o`` -> (weight (D, D) in ``nn.Linear``'s (out, in) layout, bias (D,)).
        num_heads: the checkpoint's head count.
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


_LOADED: OrderedDict[tuple[str, str], Checkpoint] = OrderedDict()
_LOADED_LOCK = threading.Lock()
_LOADING: dict[tuple[str, str], threading.Lock] = {}


def _load(name: str, folder: Path, sizes: SourceSizes, family: Family, safetensors_only: bool = False) -> Checkpoint:
    """Model and tokenizer (or image processor) from ``folder``; refused unless every layer has the projections its
    family maps."""
    import transformers  # heavy (seconds): only here, never at app start

    transformers.utils.logging.disable_progress_bar()  # no "Loading weights" bars in a server's log
    try:
        model, processor = family.load(folder, safetensors_only)
    except Exception as error:  # files that do not load (bad header, missing tensor...) in any way
        reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        raise SourceUnavailableError("broken", f"{name}: {reason}", name=name, reason=reason) from error
    try:
        layers = len(family.layers(model))
        for layer in range(layers):
            family.check_structure(family.attention(model, layer))
    except AttributeError as error:
        raise SourceUnavailableError(
            "not_supported",
            f"{name}: no {error} in its layers",
            name=name,
            model_type=type(model).__name__,
            supported=", ".join(SUPPORTED_TYPES),
        ) from error
    if layers != sizes.num_layers:
        reason = f"{layers} layers loaded, config.json says {sizes.num_layers}"
        raise SourceUnavailableError("broken", f"{name}: {reason}", name=name, reason=reason)
    if isinstance(family, ViTFamily):
        return ImageCheckpoint(name, model, processor, sizes, family)
    return TextCheckpoint(name, model, processor, sizes, family)


def load_checkpoint(checkpoint: str | Origin) -> Checkpoint:
    """A checkpoint (a listed name, or an :class:`Origin`), loaded once per process (at most :data:`MAX_LOADED`).

    Two sessions asking at once load it once. Never downloads (see :mod:`mha.sources.hub`).

    Raises:
        SourceUnavailableError: see :func:`checkpoint_sizes`; ``broken`` when its files do not load.
    """
    origin = _as_origin(checkpoint)
    key = (origin.name, origin.location)
    with _LOADED_LOCK:
        if key in _LOADED:
            _LOADED.move_to_end(key)
            return _LOADED[key]
        loading = _LOADING.setdefault(key, threading.Lock())
    with loading:
        with _LOADED_LOCK:
            if key in _LOADED:
                return _LOADED[key]
        folder, config = _files(origin)
        family = family_for(origin.name, config)
        sizes = checked_sizes(origin.name, config, family)
        checkpoint = _load(origin.name, folder, sizes, family, origin.learners)
        with _LOADED_LOCK:
            _LOADED[key] = checkpoint
            while len(_LOADED) > MAX_LOADED:
                _LOADED.popitem(last=False)
    return checkpoint


# ---------------------------------------------------------------- notes about the tokens
def _is_han(char: str) -> bool:
    return "CJK" in unicodedata.name(char, "")


def token_notes(name: str, text: str, tokens: tuple[str, ...], listed: tuple[str, ...]) -> tuple[Note, ...]:
    """Notes for the page: tokens the vocabulary did not know ([UNK], or a byte-level BPE's pieces of a
    character's bytes), and where to go for Chinese."""
    unknown = sum(token == UNK for token in tokens)
    pieces = sum(BYTE_PIECE in token for token in tokens)
    notes = []
    if unknown:
        notes.append(Note("unk_tokens", {"checkpoint": name, "count": unknown, "total": len(tokens)}))
    if pieces:
        notes.append(Note("byte_pieces", {"checkpoint": name, "count": pieces, "total": len(tokens)}))
    if notes and any(_is_han(char) for char in text):
        other = chinese_checkpoint(tuple(n for n in listed if n != name))
        if other is not None:
            notes.append(Note("unk_chinese", {"checkpoint": name, "suggestion": other}))
        else:
            notes.append(Note("unk_chinese_unlisted", {"checkpoint": name}))
    return tuple(notes)


# ---------------------------------------------------------------- the source
@dataclass(frozen=True)
class CheckpointCheck:
    """Our layer against the checkpoint's own forward for the same text.

    ``applies`` is ``False`` when the page's mask is not the one the checkpoint used (a
    causal or window "what if" on an encoder, any mask on an image encoder, or ``[PAD]`` left
    unmasked): ``reason`` says which, and the differences are then not computed (they would be
    a false failure).
    ``how`` names the message saying what was compared (it differs per family).
    """

    checkpoint: str
    layer: int
    applies: bool
    reason: str = ""  # "what_if", "what_if_image" or "pad_unmasked" when it does not apply
    max_abs_weights: float = 0.0
    max_abs_output: float = 0.0
    tolerance: float = CHECKPOINT_TOLERANCE
    how: str = "check.checkpoint_how"

    @property
    def passed(self) -> bool:
        """Both differences within the tolerance (:data:`CHECKPOINT_TOLERANCE`: the checkpoint runs in float32)."""
        return self.applies and max(self.max_abs_weights, self.max_abs_output) <= self.tolerance


class PretrainedSource:
    """One checkpoint (listed, or the learner's own hub id); its model is loaded on demand and shared
    (see :func:`load_checkpoint`).

    ``modality`` says what it reads: ``"text"`` (``config.tokens``) or ``"image"`` (``config.image``, a
    bundled sample, or any image given to :meth:`prepare_image`, :meth:`attention_maps` and :meth:`compare`).
    """

    kind = "pretrained"

    def __init__(self, spec: WeightSpec) -> None:
        self.origin = origin_of(spec)
        self.name = self.origin.name
        checkpoint = load_checkpoint(self.origin)
        sizes = checkpoint.sizes
        self.d_model, self.num_heads, self.num_layers = sizes.d_model, sizes.num_heads, sizes.num_layers
        self.causal = checkpoint.family.causal
        self.modality = checkpoint.family.modality

    def _checkpoint(self) -> Checkpoint:
        return load_checkpoint(self.origin)

    def _text_checkpoint(self) -> TextCheckpoint:
        checkpoint = self._checkpoint()
        if not isinstance(checkpoint, TextCheckpoint):
            raise ValueError(f"{self.name} reads images, not text")
        return checkpoint

    def _image_checkpoint(self) -> ImageCheckpoint:
        checkpoint = self._checkpoint()
        if not isinstance(checkpoint, ImageCheckpoint):
            raise ValueError(f"{self.name} reads text, not images")
        return checkpoint

    def _check_layer(self, layer: int) -> None:
        if not 0 <= layer < self.num_layers:
            high = self.num_layers - 1
            raise ConfigError(
                "layer",
                "out_of_range",
                f"{self.name} has layers 0 to {high}, got {layer}",
                value=layer,
                low=0,
                high=high,
            )

    def input_of(self, config: AttentionConfig) -> str:
        """What of ``config`` this checkpoint reads: its text, or (an image checkpoint) its bundled image's name."""
        return config.image if self.modality == "image" else config.tokens

    def _encode(self, source_input: str | Tensor) -> Encoded:
        """A text, or for an image checkpoint a bundled image's name or an image (C, H, W) in [0, 1], encoded."""
        if self.modality == "image":
            image = sample_image(source_input) if isinstance(source_input, str) else source_input
            return self._image_checkpoint().encode(image)
        if not isinstance(source_input, str):
            raise ValueError(f"{self.name} reads text, not images")
        return self._text_checkpoint().encode(source_input)

    def _notes(self, checkpoint: TextCheckpoint, config: AttentionConfig, encoded: Encoded) -> tuple[Note, ...]:
        """The token notes, then the family's (GPT-2: how its layer is read, that it is causal, its tokenizer)."""
        notes = token_notes(self.name, config.tokens, encoded.tokens, checkpoint_names())
        framed = bool(checkpoint.prefix or checkpoint.suffix)
        return notes + tuple(Note(code, {"checkpoint": self.name}) for code in checkpoint.family.page_notes(framed))

    def prepare(self, config: AttentionConfig, device: torch.device) -> SourceInputs:
        """The tokenizer's tokens (an image checkpoint: ``config.image``'s patches), the layer's input for them and
        the layer copied into our module.

        Raises:
            ConfigError: a layer the checkpoint does not have, or a text with no token or too many.
        """
        if self.modality == "image":
            return self.prepare_image(config, device, sample_image(config.image))
        self._check_layer(config.layer)
        checkpoint = self._text_checkpoint()
        encoded = checkpoint.encode(config.tokens)
        x = checkpoint.layer_input(encoded, config.layer).to(device=device, dtype=getattr(torch, config.dtype))
        model = checkpoint.layer_model(config.layer, device, config.dtype)  # (1, L, D) above
        ids = encoded.inputs["input_ids"][0].to(device)  # (L,)
        relations = {}
        sep = checkpoint.tokenizer.sep_token_id
        if checkpoint.tokenizer.sep_token == SEP and sep in checkpoint.suffix:  # the tokenizer ends every text so
            relations[SEP] = (ids == sep).expand(ids.numel(), -1)  # (L, L): every row's [SEP] keys
        if checkpoint.family.causal:
            relations["induction"] = induction_relation(ids)  # (L, L): after the earlier copy of the row's token
        return SourceInputs(
            encoded.tokens,
            x,
            model,
            layer=config.layer,
            relations=relations,
            notes=self._notes(checkpoint, config, encoded),
            causal=checkpoint.family.causal,
        )

    def prepare_image(self, config: AttentionConfig, device: torch.device, image: Tensor) -> SourceInputs:
        """An image checkpoint's run on ``image``: ``[CLS]`` (DeiT: and ``[DIST]``) and the patches, the layer's
        input for them and the layer copied into our module.

        Args:
            config: the page's config (its ``image`` is not read: ``image`` is given; ``tokens`` neither).
            image: (C, H, W) in [0, 1], grey or RGB, any size (a bundled sample, an upload): the checkpoint's own
                image processor resizes and normalises it.

        Returns:
            :class:`SourceInputs` whose ``x`` (1, L, D) is ``layernorm_before`` of the layer's input (Pre-Norm).

        Raises:
            ConfigError: a layer the checkpoint does not have.
            ValueError: the checkpoint reads text.
        """
        self._check_layer(config.layer)
        checkpoint = self._image_checkpoint()
        encoded = checkpoint.encode(image)
        x = checkpoint.layer_input(encoded, config.layer).to(device=device, dtype=getattr(torch, config.dtype))
        model = checkpoint.layer_model(config.layer, device, config.dtype)  # (1, L, D) above
        height, width = encoded.inputs["pixel_values"].shape[-2:]  # (1, C, H, W)
        params = {
            "checkpoint": self.name,
            "size": f"{height} × {width}",
            "patch": checkpoint.patch,
            "grid": f"{height // checkpoint.patch} × {width // checkpoint.patch}",
        }
        codes = (*checkpoint.family.page_notes(False), *(("deit_dist",) if DIST in encoded.tokens else ()))
        return SourceInputs(encoded.tokens, x, model, layer=config.layer, notes=tuple(Note(c, params) for c in codes))

    def attention_maps(self, source_input: str | Tensor) -> tuple[tuple[str, ...], Tensor]:
        """Every head's weights in every layer, from the checkpoint's own forward.

        Args:
            source_input: the text (a text checkpoint: see :meth:`input_of`), or for an image checkpoint a bundled
                image's name or an image (C, H, W) in [0, 1].

        Returns:
            The tokens and a float32 tensor (layers, H, L, L).
        """
        encoded = self._encode(source_input)
        attentions = self._checkpoint().forward(encoded, output_attentions=True).attentions  # layers x (1, H, L, L)
        return encoded.tokens, torch.cat(attentions)  # (layers, H, L, L)

    def induction_maps(self) -> tuple[RepeatedSequence, Tensor]:
        """Every head's weights in every layer on a repeated random sequence (seeded: the same every time).

        The sequence is :data:`INDUCTION_HALF` distinct tokens drawn from the vocabulary (special
        tokens and bracketed markers left out), twice, after the tokenizer's own prefix or the
        family's BOS and before the tokenizer's suffix (fewer tokens where the checkpoint has fewer
        positions or words).

        Returns:
            The sequence and a float32 tensor (layers, H, L, L).
        """
        checkpoint = self._text_checkpoint()
        prefix, suffix = checkpoint.probe_prefix(), checkpoint.suffix
        candidates = checkpoint.probe_candidates()
        room = min(checkpoint.max_positions or LIMITS.tokens_max, LIMITS.tokens_max) - len(prefix) - len(suffix)
        half = min(INDUCTION_HALF, candidates.numel(), room // 2)
        sequence = repeated_sequence(candidates, half, INDUCTION_SEED, prefix, suffix)
        encoded = checkpoint.encode_ids(sequence.ids.view(1, -1))  # (1, L): no pad token among the candidates
        attentions = checkpoint.forward(encoded, output_attentions=True).attentions  # layers x (1, H, L, L)
        return sequence, torch.cat(attentions)  # (layers, H, L, L)

    def compare(
        self, config: AttentionConfig, weights: Tensor, output: Tensor, mask: Tensor | None, image: Tensor | None = None
    ) -> CheckpointCheck:
        """Max |Δ| of our per-head weights and output against the checkpoint's, for ``config``'s text (an image
        checkpoint: ``config.image``, or ``image`` when given) and layer.

        The checkpoint's weights are its ``attentions[layer]``; its output is what its attention
        block's output module returns (a forward hook; BERT: ``attention.output.dense``, GPT-2:
        ``attn.c_proj``, ViT: ``attention.o_proj``), before dropout and the residual connection.

        Args:
            weights: our (1, H, L, L) softmax weights.
            output: our (1, L, D) output.
            mask: our bool keep-mask (broadcastable to (1, H, L, L)) or ``None``.
            image: (C, H, W) in [0, 1]: the image an image checkpoint's run read, when not ``config.image`` (an upload).
        """
        self._check_layer(config.layer)
        checkpoint = self._checkpoint()
        how = checkpoint.family.check_how
        encoded = self._encode(self.input_of(config) if image is None else image)
        length = len(encoded.tokens)
        keys = encoded.keys.view(1, 1, 1, length)  # (1, 1, 1, L): the checkpoint's real keys
        used = keys.expand(1, 1, length, length)  # (1, 1, L, L)
        if checkpoint.family.causal:
            used = used & causal_mask(length)  # (1, 1, L, L)
        ours = torch.ones_like(used) if mask is None else mask.cpu().expand(1, 1, length, length)  # (1, 1, L, L)
        if not torch.equal(ours, used):
            reason = "pad_unmasked" if torch.equal(ours & keys, used) else "what_if"  # only [PAD] keys differ?
            if self.modality == "image":
                reason = "what_if_image"  # every patch sees every other: any mask is a "what if"
            return CheckpointCheck(self.name, config.layer, applies=False, reason=reason, how=how)
        outputs, theirs_output = checkpoint.forward_with_block_output(encoded, config.layer)  # _, (1, L, D)
        theirs_weights = outputs.attentions[config.layer]  # (1, H, L, L)
        return CheckpointCheck(
            self.name,
            config.layer,
            applies=True,
            max_abs_weights=float((weights.detach().cpu().float() - theirs_weights).abs().max()),
            max_abs_output=float((output.detach().cpu().float() - theirs_output).abs().max()),
            how=how,
        )
