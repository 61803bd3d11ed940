"""The pretrained source: one layer of a real BERT-family checkpoint, run by the scratch engine.

The layer's projections are copied into the project's :class:`~mha.module.MultiHeadAttention`
(``W_q, W_k, W_v`` <- ``attention.self.query/key/value``, ``W_o`` <- ``attention.output.dense``,
weights and biases), and its input is the checkpoint's own ``hidden_states[layer]`` for the
learner's text (index 0 is the embeddings), cut by the checkpoint's tokenizer (``[CLS]``,
word pieces, ``[SEP]``). A ``[PAD]`` in the text becomes the tokenizer's pad token and is
masked in the checkpoint's forward through its ``attention_mask``, as in a padded batch.

Loading uses ``transformers`` (``AutoModel`` with ``attn_implementation="eager"``: the SDPA
default returns no attention weights), imported here on first use only: the default page never
imports it. Loaded checkpoints are kept per process, at most :data:`MAX_LOADED` at a time
(least recently used first out), and shared read-only by every session; their forwards run one
at a time per checkpoint (the comparison with the checkpoint hooks a module, which must not
see another session's forward).
"""

from __future__ import annotations

import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from mha.checkpoints import checkpoint_location, checkpoint_names, chinese_checkpoint
from mha.config import LIMITS, AttentionConfig, ConfigError, WeightSpec, check_token_count
from mha.masks import PAD_TOKENS
from mha.module import MultiHeadAttention
from mha.reference import TOLERANCE
from mha.sources import hub
from mha.sources.base import Note, SourceInputs, SourceSizes, SourceUnavailableError

__all__ = [
    "MAX_LOADED",
    "SEP",
    "SUPPORTED_TYPES",
    "Checkpoint",
    "CheckpointCheck",
    "PretrainedSource",
    "checkpoint_sizes",
    "load_checkpoint",
    "token_notes",
]

#: Model types whose layers are read here (their attention modules carry the names mapped below).
SUPPORTED_TYPES = ("bert",)
MAX_LOADED = 2  # checkpoints held in memory at once per process (bert-base: about 0.5 GB each)
SEP = "[SEP]"
UNK = "[UNK]"
#: Our projection <- the module of a BERT layer's ``attention`` block holding it.
PROJECTIONS = {"W_q": "self.query", "W_k": "self.key", "W_v": "self.value", "W_o": "output.dense"}
_LAYER_MODELS_KEPT = 4  # per checkpoint: copies of layers (per device and dtype) shared by the runs


# ---------------------------------------------------------------- sizes, from config.json alone
def _refuse_architecture(name: str, config: Mapping[str, object]) -> None:
    """Raise ``SourceUnavailableError("not_supported")`` for anything but a BERT-family encoder this page reads."""
    model_type = str(config.get("model_type", "?"))
    if model_type not in SUPPORTED_TYPES:
        raise SourceUnavailableError(
            "not_supported",
            f"{name} is a {model_type!r} model; only {', '.join(SUPPORTED_TYPES)} encoders are read here",
            name=name,
            model_type=model_type,
            supported=", ".join(SUPPORTED_TYPES),
        )
    if config.get("is_decoder") or config.get("add_cross_attention"):
        raise SourceUnavailableError(
            "not_supported",
            f"{name} is a decoder (causal self-attention or cross-attention), not an encoder",
            name=name,
            model_type=f"{model_type} decoder",
            supported=", ".join(SUPPORTED_TYPES),
        )


def _sizes(name: str, config: Mapping[str, object]) -> SourceSizes:
    """Hidden size, heads and layers from ``config.json``, refused beyond the server's limits."""
    try:
        d_model, num_heads, layers = (
            int(str(config[key])) for key in ("hidden_size", "num_attention_heads", "num_hidden_layers")
        )
    except (KeyError, TypeError, ValueError) as error:
        reason = f"config.json: {error}"
        raise SourceUnavailableError("broken", f"{name}: {reason}", name=name, reason=reason) from error
    fits = (
        LIMITS.d_model_min <= d_model <= LIMITS.d_model_max
        and 1 <= num_heads <= LIMITS.num_heads_max
        and d_model % num_heads == 0
        and 1 <= layers <= LIMITS.layers_max
    )
    if not fits:
        raise SourceUnavailableError(
            "too_big",
            f"{name}: hidden {d_model}, {num_heads} heads, {layers} layers is beyond this server's limits",
            name=name,
            d_model=d_model,
            num_heads=num_heads,
            layers=layers,
        )
    return SourceSizes(d_model, num_heads, layers)


def checkpoint_sizes(name: str) -> SourceSizes:
    """The sizes of the listed checkpoint ``name``, read from its ``config.json`` (never the network).

    Raises:
        SourceUnavailableError: not on this server (offline, not downloaded, missing), not a
            BERT-family encoder, or beyond the server's limits; the code says which.
    """
    config = hub.read_config(name, checkpoint_location(name))
    _refuse_architecture(name, config)
    return _sizes(name, config)


# ---------------------------------------------------------------- loading, bounded
@dataclass(frozen=True)
class Encoded:
    """A text cut by the checkpoint's tokenizer."""

    tokens: tuple[str, ...]
    input_ids: Tensor  # (1, L)
    attention_mask: Tensor  # (1, L): 0 at the pad tokens


class Checkpoint:
    """A loaded checkpoint: the ``transformers`` model (eval, read-only), its tokenizer and its sizes."""

    def __init__(self, name: str, model: Any, tokenizer: Any, sizes: SourceSizes) -> None:
        self.name, self.model, self.tokenizer, self.sizes = name, model, tokenizer, sizes
        self.lock = threading.Lock()  # one forward at a time (see the module docstring)
        self._layers: OrderedDict[tuple[int, str, str], MultiHeadAttention] = OrderedDict()

    def attention_block(self, layer: int) -> Any:
        """The ``attention`` block (``self.query/key/value``, ``output.dense``) of ``layer``."""
        return self.model.encoder.layer[layer].attention

    def encode(self, text: str) -> Encoded:
        """The tokenizer's tokens for ``text`` (``[CLS]`` ... ``[SEP]``), capped like the project's own.

        Raises:
            ConfigError: no token besides ``[CLS]``/``[SEP]`` (``empty``), or more than the cap (``too_many``).
        """
        encoded = self.tokenizer(text, return_tensors="pt", truncation=False, return_attention_mask=False)
        ids = encoded["input_ids"]  # (1, L)
        frame = {self.tokenizer.cls_token_id, self.tokenizer.sep_token_id}  # what the tokenizer adds to any text
        if all(int(i) in frame for i in ids[0]):
            check_token_count(0)
        check_token_count(ids.size(1))
        tokens = tuple(self.tokenizer.convert_ids_to_tokens(ids[0].tolist()))
        attention_mask = (ids != self.tokenizer.pad_token_id).long()  # (1, L): pads are masked as in a batch
        return Encoded(tokens, ids, attention_mask)

    def forward(self, encoded: Encoded, **outputs: bool) -> Any:
        """The checkpoint's own forward pass (``output_hidden_states=True`` etc. as keywords)."""
        with self.lock, torch.inference_mode():
            return self.model(input_ids=encoded.input_ids, attention_mask=encoded.attention_mask, **outputs)

    def forward_with_block_output(self, encoded: Encoded, layer: int) -> tuple[Any, Tensor]:
        """The forward pass with attentions, and what ``layer``'s ``attention.output.dense`` returned (a hook).

        Returns:
            The model's outputs and a (1, L, D) tensor: the attention block's output before
            dropout, residual and LayerNorm.
        """
        captured: list[Tensor] = []
        dense = self.attention_block(layer).output.dense
        with self.lock, torch.inference_mode():  # the hook sees this forward only: forwards run one at a time
            handle = dense.register_forward_hook(lambda _module, _inputs, out: captured.append(out))
            try:
                outputs = self.model(
                    input_ids=encoded.input_ids, attention_mask=encoded.attention_mask, output_attentions=True
                )
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
        model = copy_layer(self.attention_block(layer), self.sizes.num_heads, device, getattr(torch, dtype))
        with self.lock:
            self._layers[key] = model
            while len(self._layers) > _LAYER_MODELS_KEPT:
                self._layers.popitem(last=False)
        return model


def copy_layer(attention: Any, num_heads: int, device: torch.device, dtype: torch.dtype) -> MultiHeadAttention:
    """Our ``MultiHeadAttention`` with a BERT ``attention`` block's four projections, weights and biases.

    Args:
        attention: a BERT layer's ``attention`` (``self.query/key/value`` and ``output.dense``, ``nn.Linear``).
        num_heads: the checkpoint's head count.
    """
    sources = {ours: attention.get_submodule(theirs) for ours, theirs in PROJECTIONS.items()}
    d_model = sources["W_q"].in_features
    with torch.device("meta"):  # no random init: every parameter is overwritten below
        model = MultiHeadAttention(d_model, num_heads)
    model = model.to_empty(device="cpu")
    with torch.no_grad():
        for ours, linear in sources.items():
            getattr(model, ours).weight.copy_(linear.weight)  # (D, D)
            getattr(model, ours).bias.copy_(linear.bias)  # (D,)
    return model.to(device=device, dtype=dtype).eval().requires_grad_(False)


_LOADED: OrderedDict[tuple[str, str], Checkpoint] = OrderedDict()
_LOADED_LOCK = threading.Lock()
_LOADING: dict[tuple[str, str], threading.Lock] = {}


def _load(name: str, folder: Path, sizes: SourceSizes) -> Checkpoint:
    """Model and tokenizer from ``folder``; refused unless every layer has the four projections mapped here."""
    import transformers  # heavy (seconds): only here, never at app start

    transformers.utils.logging.disable_progress_bar()  # no "Loading weights" bars in a server's log
    try:
        model = transformers.AutoModel.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32)
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    except Exception as error:  # files that do not load (bad header, missing tensor...) in any way
        reason = str(error).splitlines()[0][:200] if str(error) else type(error).__name__
        raise SourceUnavailableError("broken", f"{name}: {reason}", name=name, reason=reason) from error
    model = model.eval().requires_grad_(False)
    try:
        for layer in model.encoder.layer:
            for theirs in PROJECTIONS.values():
                linear = layer.attention.get_submodule(theirs)
                if not isinstance(linear, torch.nn.Linear) or linear.bias is None:
                    raise AttributeError(theirs)
    except AttributeError as error:
        raise SourceUnavailableError(
            "not_supported",
            f"{name}: no attention.{error} in its layers",
            name=name,
            model_type=type(model).__name__,
            supported=", ".join(SUPPORTED_TYPES),
        ) from error
    if tokenizer.pad_token_id is None:
        raise SourceUnavailableError("broken", f"{name}: its tokenizer has no pad token", name=name, reason="[PAD]")
    return Checkpoint(name, model, tokenizer, sizes)


def load_checkpoint(name: str) -> Checkpoint:
    """The listed checkpoint ``name``, loaded once per process (at most :data:`MAX_LOADED` kept).

    Two sessions asking at once load it once. Never downloads (see :mod:`mha.sources.hub`).

    Raises:
        SourceUnavailableError: see :func:`checkpoint_sizes`; ``broken`` when its files do not load.
    """
    location = checkpoint_location(name)
    key = (name, location)
    with _LOADED_LOCK:
        if key in _LOADED:
            _LOADED.move_to_end(key)
            return _LOADED[key]
        loading = _LOADING.setdefault(key, threading.Lock())
    with loading:
        with _LOADED_LOCK:
            if key in _LOADED:
                return _LOADED[key]
        sizes = checkpoint_sizes(name)
        checkpoint = _load(name, hub.checkpoint_folder(name, location), sizes)
        with _LOADED_LOCK:
            _LOADED[key] = checkpoint
            while len(_LOADED) > MAX_LOADED:
                _LOADED.popitem(last=False)
    return checkpoint


# ---------------------------------------------------------------- notes about the tokens
def _is_han(char: str) -> bool:
    return "CJK" in unicodedata.name(char, "")


def token_notes(name: str, text: str, tokens: tuple[str, ...], listed: tuple[str, ...]) -> tuple[Note, ...]:
    """Notes for the page: how many tokens the vocabulary did not know, and where to go for Chinese."""
    unknown = sum(token == UNK for token in tokens)
    if not unknown:
        return ()
    notes = [Note("unk_tokens", {"checkpoint": name, "count": unknown, "total": len(tokens)})]
    if any(_is_han(char) for char in text):
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
    causal or window "what if", or ``[PAD]`` left unmasked): ``reason`` says which, and the
    differences are then not computed (they would be a false failure).
    """

    checkpoint: str
    layer: int
    applies: bool
    reason: str = ""  # "what_if" or "pad_unmasked" when it does not apply
    max_abs_weights: float = 0.0
    max_abs_output: float = 0.0
    tolerance: float = TOLERANCE[torch.float32]

    @property
    def passed(self) -> bool:
        """Both differences within the tolerance (of float32: the checkpoint runs in float32)."""
        return self.applies and max(self.max_abs_weights, self.max_abs_output) <= self.tolerance


class PretrainedSource:
    """One listed checkpoint; its model is loaded on demand and shared (see :func:`load_checkpoint`)."""

    kind = "pretrained"

    def __init__(self, spec: WeightSpec) -> None:
        if not spec.checkpoint:
            raise ValueError(f"a pretrained spec needs a checkpoint name, got {spec}")
        self.name = spec.checkpoint
        sizes = load_checkpoint(self.name).sizes
        self.d_model, self.num_heads, self.num_layers = sizes.d_model, sizes.num_heads, sizes.num_layers

    def _checkpoint(self) -> Checkpoint:
        return load_checkpoint(self.name)

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

    def prepare(self, config: AttentionConfig, device: torch.device) -> SourceInputs:
        """The tokenizer's tokens, ``hidden_states[layer]`` for them and the layer copied into our module.

        Raises:
            ConfigError: a layer the checkpoint does not have, or a text with no token or too many.
        """
        self._check_layer(config.layer)
        checkpoint = self._checkpoint()
        encoded = checkpoint.encode(config.tokens)
        hidden = checkpoint.forward(encoded, output_hidden_states=True).hidden_states
        x = hidden[config.layer].to(device=device, dtype=getattr(torch, config.dtype))  # (1, L, D)
        model = checkpoint.layer_model(config.layer, device, config.dtype)
        is_sep = torch.tensor([token == SEP for token in encoded.tokens], device=device)  # (L,)
        relations = {SEP: is_sep.expand(len(encoded.tokens), -1)}  # (L, L): every row's [SEP] keys
        notes = token_notes(self.name, config.tokens, encoded.tokens, checkpoint_names())
        return SourceInputs(encoded.tokens, x, model, layer=config.layer, relations=relations, notes=notes)

    def attention_maps(self, text: str) -> tuple[tuple[str, ...], Tensor]:
        """Every head's weights in every layer for ``text``, from the checkpoint's own forward.

        Returns:
            The tokens and a float32 tensor (layers, H, L, L).
        """
        checkpoint = self._checkpoint()
        encoded = checkpoint.encode(text)
        attentions = checkpoint.forward(encoded, output_attentions=True).attentions  # layers x (1, H, L, L)
        return encoded.tokens, torch.cat(attentions)  # (layers, H, L, L)

    def compare(self, config: AttentionConfig, weights: Tensor, output: Tensor, mask: Tensor | None) -> CheckpointCheck:
        """Max |Δ| of our per-head weights and output against the checkpoint's, for ``config``'s text and layer.

        The checkpoint's weights are its ``attentions[layer]``; its output is what its
        ``attention.output.dense`` returns (a forward hook), before dropout, residual and LayerNorm.

        Args:
            weights: our (1, H, L, L) softmax weights.
            output: our (1, L, D) output.
            mask: our bool keep-mask (broadcastable to (1, H, L, L)) or ``None``.
        """
        self._check_layer(config.layer)
        checkpoint = self._checkpoint()
        encoded = checkpoint.encode(config.tokens)
        length = len(encoded.tokens)
        used = encoded.attention_mask.bool().view(1, 1, 1, length).expand(1, 1, length, length)  # (1, 1, L, L)
        ours = torch.ones_like(used) if mask is None else mask.cpu().expand(1, 1, length, length)  # (1, 1, L, L)
        if not torch.equal(ours, used):
            has_pad = any(token in PAD_TOKENS for token in encoded.tokens)
            reason = "pad_unmasked" if config.mask_type == "none" and has_pad else "what_if"
            return CheckpointCheck(self.name, config.layer, applies=False, reason=reason)
        outputs, theirs_output = checkpoint.forward_with_block_output(encoded, config.layer)  # _, (1, L, D)
        theirs_weights = outputs.attentions[config.layer]  # (1, H, L, L)
        return CheckpointCheck(
            self.name,
            config.layer,
            applies=True,
            max_abs_weights=float((weights.detach().cpu().float() - theirs_weights).abs().max()),
            max_abs_output=float((output.detach().cpu().float() - theirs_output).abs().max()),
        )
