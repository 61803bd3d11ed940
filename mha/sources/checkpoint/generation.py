"""Greedy generation by a causal checkpoint, with the shown layer run beside it by our layer and its own cache.

Shape legend: L prompt tokens, n tokens fed in one forward, t positions a step attends to, H heads, Hkv key/value
heads, Dh head size, D = d_model, V the vocabulary.

A step of :func:`generate` is three parts, one function or class each:

1. **The checkpoint decodes one token** (:class:`CheckpointDecoder`): its language model (its ``*ForCausalLM``,
   :attr:`~mha.sources.checkpoint.checkpoint_model.Checkpoint.language_model`) reads the tokens fed, a first
   forward over the prompt (the *prefill*) filling its ``past_key_values``, every later one only the token just
   chosen, at its position, with that cache (``use_cache=True``), and takes the argmax of the last logits: greedy
   decoding, as ``lm.generate(input_ids, attention_mask, max_new_tokens=n, do_sample=False)`` does where the
   checkpoint's generation config adds no logits processor of its own (a repetition penalty...: not applied here). An
   end-of-text token (the generation config's ``eos_token_id``) ends it early, as it ends ``generate``: it is the
   last new token, and :attr:`Generation.ended_at_eos` says so.
2. **Our layer follows through its** :class:`~mha.kv_cache.KVCache` (:class:`LayerFollower`): our
   :class:`~mha.module.MultiHeadAttention` copy of the shown layer reads the layer input of the same forward (the
   family's ``layer_input`` of its hidden states) in one :meth:`~mha.module.MultiHeadAttention.forward_step`: the
   prompt's L rows at once, then one row per token.
3. **The step is recorded** (:func:`record`): our weights of the row that chose the token beside the checkpoint's own
   (``attentions[layer]``), which agree to float32 rounding, and every layer's weight on the first token (attention
   sinks, :func:`sink_layers`).

Step i is the forward that chose new token i: its query row is position L - 1 + i (the prompt's last token, then
each token fed), attending to t = L + i positions. The prompt keeps the tokenizer's prefix (a BOS, a ``[CLS]``) but
not its suffix: a GPT-2 paired with a BERT tokenizer (``gpt2-chinese``) would otherwise read a prompt ending in
``[SEP]`` and continue after the end of the text, not the text itself.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from mha.counting import KVCacheSize
from mha.kv_cache import KVCache
from mha.memory import CPU, OutOfMemory
from mha.module import MultiHeadAttention
from mha.sources.checkpoint.checkpoint_model import Encoded
from mha.sources.checkpoint.text import TextCheckpoint
from mha.trace import DecodeTrace

__all__ = [
    "GENERATE_MAX",
    "SINK_THRESHOLD",
    "CheckpointDecoder",
    "DecodeStep",
    "Decoded",
    "Generation",
    "LayerFollower",
    "check_new_tokens",
    "first_token_shares",
    "generate",
    "record",
    "sink_layers",
    "sink_shares",
]

#: The most tokens one generation may ask for (a shared server; the page clamps to it with a message).
GENERATE_MAX = 32
#: A layer is named an attention sink where its new tokens' mean weight on position 0 is this many times the
#: uniform share (mean of 1/t).
SINK_THRESHOLD = 3.0


@dataclass(frozen=True)
class DecodeStep:
    """One forward of the generation: the query row at :attr:`position` and the token it chose.

    ``q_shape`` is our layer's q in that call: (1, H, L, Dh) for the prefill (step 0), (1, H, 1, Dh) after;
    ``cache_shape`` our cache after the append, (1, Hkv, t, Dh) with t = position + 1.
    """

    index: int  # i: this step chose new token i
    position: int  # the query row's position, L - 1 + i
    token: str  # the token chosen, as the source shows tokens
    token_id: int
    q_shape: tuple[int, ...]  # (1, H, n, Dh)
    cache_shape: tuple[int, ...]  # (1, Hkv, t, Dh)
    weights: Tensor  # (H, t) our layer's weights of the row, CPU float32
    checkpoint_weights: Tensor  # (H, t) the checkpoint's own attentions[layer] of the row, CPU float32
    max_abs_weights: float  # max |ours - the checkpoint's|
    first_token_share: Tensor  # (layers,) the checkpoint's: the row's weight on position 0, mean over heads
    seconds: float  # the step's wall time: the checkpoint's forward and our layer's step

    @property
    def length(self) -> int:
        """t: the positions this row attends to."""
        return self.cache_shape[2]


@dataclass(frozen=True)
class Generation:
    """A greedy generation: the prompt, the tokens chosen and, per step, the shown layer's row of weights.

    ``stopped``: the stop event was set midway (``steps`` holds the steps so far); ``ended_at_eos``: the last new
    token is the end-of-text token, which ended it (at or before ``requested`` tokens). ``cache_size``: the sizes of the
    checkpoint's whole key/value cache per token (every layer, at the language model's dtype). ``device``: the type of
    the device it ran on (``"cuda"``, ``"mps"``, ``"cpu"``); ``out_of_memory``: the run's device ran out of memory, so
    it ran on the CPU (:mod:`mha.memory`).
    """

    checkpoint: str
    layer: int
    prompt_tokens: tuple[str, ...]
    prompt_ids: tuple[int, ...]
    new_tokens: tuple[str, ...]
    new_ids: tuple[int, ...]
    steps: tuple[DecodeStep, ...]
    requested: int
    stopped: bool
    ended_at_eos: bool
    cache_size: KVCacheSize
    device: str = "cpu"
    out_of_memory: OutOfMemory | None = None

    @property
    def length(self) -> int:
        """The text's tokens after the generation: the prompt's and the new ones."""
        return len(self.prompt_tokens) + len(self.new_tokens)

    @property
    def max_abs_weights(self) -> float:
        """The largest |Δ| of our weights against the checkpoint's over every step (0 with no step)."""
        return max((step.max_abs_weights for step in self.steps), default=0.0)


def check_new_tokens(new_tokens: int) -> None:
    """Raise ``ValueError`` naming the value unless ``new_tokens`` is a whole number in 1 .. :data:`GENERATE_MAX`."""
    if isinstance(new_tokens, bool) or not isinstance(new_tokens, int) or not 1 <= new_tokens <= GENERATE_MAX:
        raise ValueError(f"new_tokens must be a whole number from 1 to GENERATE_MAX={GENERATE_MAX}, got {new_tokens!r}")


def first_token_shares(attentions: Sequence[Tensor]) -> Tensor:
    """Per layer, the last query row's weight on position 0, mean over heads.

    Args:
        attentions: one (1, H, n, t) tensor per layer (a forward's ``attentions``).

    Returns:
        (layers,) float32 on the CPU.
    """
    return torch.stack([a[0, :, -1, 0].float().mean() for a in attentions]).cpu()  # layers x (H,) -> (layers,)


def _eos_ids(language_model: Any) -> frozenset[int]:
    """The end-of-text ids of the model's generation config (an int, a list, or none)."""
    eos = getattr(getattr(language_model, "generation_config", None), "eos_token_id", None)
    if eos is None:
        return frozenset()
    return frozenset(int(i) for i in (eos if isinstance(eos, list | tuple) else [eos]))


# ---------------------------------------------------------------- 1. the checkpoint decodes one token
@dataclass(frozen=True)
class Decoded:
    """One forward of the checkpoint's language model: n tokens fed at positions ``start .. start+n-1`` (after its
    cache of the positions before) and the token it chose after the last."""

    token_id: int  # the greedy choice after position start + n - 1
    start: int  # the position of the first token fed
    fed: int  # n
    hidden_states: tuple[Tensor, ...]  # layers + 1 x (1, n, D), on the device it ran on
    attentions: tuple[Tensor, ...]  # layers x (1, H, n, t)

    @property
    def position(self) -> int:
        """The position of the query row that chose the token: the last one fed."""
        return self.start + self.fed - 1


class CheckpointDecoder:
    """The checkpoint's language model on ``device`` decoding greedily with its own ``past_key_values``: each
    :meth:`decode` feeds tokens at the positions after those its cache holds (forwards one at a time:
    ``checkpoint.lock``)."""

    def __init__(self, checkpoint: TextCheckpoint, device: torch.device) -> None:
        self.base_model, self.language_model = checkpoint.models_on(device)
        self.eos = _eos_ids(checkpoint.language_model)
        self._lock, self._device = checkpoint.lock, device
        self._options: dict[str, Any] = {"use_cache": True, "output_attentions": True, "output_hidden_states": True}
        if "logits_to_keep" in inspect.signature(checkpoint.language_model.forward).parameters:
            self._options["logits_to_keep"] = 1  # only the last row's logits, as generate asks for them
        self._past: Any = None
        self.length = 0  # the positions its cache holds

    def decode(self, fed: Tensor) -> Decoded:
        """Feed ``fed`` (1, n) at the next n positions; the greedy choice after the last."""
        start, n = self.length, fed.size(1)
        attention_mask = torch.ones(1, start + n, dtype=torch.long, device=self._device)  # (1, t): all read
        with self._lock, torch.inference_mode():
            out = self.language_model(
                input_ids=fed, attention_mask=attention_mask, past_key_values=self._past, **self._options
            )
            token_id = int(out.logits[0, -1].argmax())  # (V,) -> the greedy choice
        self._past, self.length = out.past_key_values, start + n
        return Decoded(token_id, start, n, out.hidden_states, out.attentions)


# ---------------------------------------------------------------- 2. our layer follows through its KV cache
class LayerFollower:
    """Our copy ``model`` of the checkpoint's ``layer`` following its forwards, with its own :class:`KVCache` of
    ``max_length`` positions: each :meth:`follow` is one ``forward_step`` of the rows the checkpoint read."""

    def __init__(
        self, checkpoint: TextCheckpoint, base_model: Any, model: MultiHeadAttention, layer: int, max_length: int
    ) -> None:
        self.model, self.layer = model, layer
        self.cache = KVCache.for_layer(model, max_length)
        self._family, self._base_model = checkpoint.family, base_model

    def follow(self, decoded: Decoded) -> DecodeTrace:
        """Our layer's step over the layer inputs of ``decoded``'s forward, at its positions."""
        weight = self.model.W_q.weight  # (D, D): our layer's dtype and device
        with torch.inference_mode():
            x = self._family.layer_input(self._base_model, decoded.hidden_states, self.layer)  # (1, n, D)
            return self.model.forward_step(x.to(device=weight.device, dtype=weight.dtype), self.cache, decoded.start)


# ---------------------------------------------------------------- 3. the step recorded
def record(index: int, token: str, decoded: Decoded, trace: DecodeTrace, layer: int, seconds: float) -> DecodeStep:
    """Step ``index`` as the page keeps it: the token chosen (shown as ``token``), our layer's row that chose it beside
    the checkpoint's own ``attentions[layer]`` row and every layer's weight on position 0, on the CPU."""
    with torch.inference_mode():
        ours = trace.weights[0, :, -1].float().cpu()  # (H, t): the row that chose the token
        theirs = decoded.attentions[layer][0, :, -1].float().cpu()  # (H, t)
        shares = first_token_shares(decoded.attentions)  # (layers,)
    return DecodeStep(
        index=index,
        position=decoded.position,
        token=token,
        token_id=decoded.token_id,
        q_shape=tuple(trace.q.shape),
        cache_shape=tuple(trace.cache_keys.shape),
        weights=ours,
        checkpoint_weights=theirs,
        max_abs_weights=float((ours - theirs).abs().max()),
        first_token_share=shares,
        seconds=seconds,
    )


# ---------------------------------------------------------------- the generation
def _prompt(checkpoint: TextCheckpoint, encoded: Encoded, layer: int, new_tokens: int) -> Encoded:
    """The prompt ``generate`` reads (the tokenizer's suffix left off), or ``ValueError`` (see :func:`generate`)."""
    check_new_tokens(new_tokens)
    if checkpoint.language_model is None:
        raise ValueError(f"{checkpoint.name} has no language-model head: it cannot generate")
    layers = checkpoint.sizes.num_layers
    if not 0 <= layer < layers:
        raise ValueError(f"{checkpoint.name} has layers 0 to {layers - 1}, got layer={layer}")
    ids = encoded.inputs["input_ids"]  # (1, L)
    suffix = tuple(int(i) for i in getattr(checkpoint, "suffix", ()))  # what the tokenizer ends every text with
    if suffix and ids.size(1) > len(suffix) and tuple(int(i) for i in ids[0, -len(suffix) :]) == suffix:
        encoded = checkpoint.encode_ids(ids[:, : -len(suffix)])  # (1, L): the text's last token ends the prompt
        ids = encoded.inputs["input_ids"]
    if not bool(encoded.keys.all()):
        raise ValueError("generation reads a prompt without padding: leave [PAD] out of the text")
    length = ids.size(1)
    positions = getattr(checkpoint.language_model.config, "max_position_embeddings", None)  # GPT-2: n_positions
    if positions is not None and length + new_tokens > positions:
        raise ValueError(
            f"{length} prompt tokens and {new_tokens} new ones need {length + new_tokens} positions; "
            f"{checkpoint.name} has {positions}"
        )
    return encoded


def generate(
    checkpoint: TextCheckpoint,
    encoded: Encoded,
    layer: int,
    new_tokens: int,
    stop: threading.Event | None = None,
    progress: Callable[[int, int], None] | None = None,
    layer_model: MultiHeadAttention | None = None,
    device: torch.device = CPU,
) -> Generation:
    """Greedy generation of ``new_tokens`` tokens after ``encoded``'s text, ``layer`` followed by our layer and cache.

    Args:
        checkpoint: a loaded checkpoint that generates (its ``language_model``; GPT-2, Llama, Qwen2).
        encoded: the prompt, as :meth:`~mha.sources.checkpoint.text.TextCheckpoint.encode` makes it (with the
            tokenizer's own BOS, where it adds one), every token unmasked. Where it ends with the tokenizer's suffix
            (:attr:`~mha.sources.checkpoint.text.TextCheckpoint.suffix`, a BERT tokenizer's ``[SEP]``), that
            suffix is left off: the generation goes on from the text's last token (the prefix is kept).
        layer: the layer our copy follows.
        new_tokens: 1 .. :data:`GENERATE_MAX`.
        stop: set from another thread, it ends the generation before the next step (``stopped``).
        progress: called ``progress(done, new_tokens)`` after each step.
        layer_model: our copy of ``layer`` (``None``: the checkpoint's own float32 copy on ``device``).
        device: where the checkpoint's language model runs (its copy there,
            :meth:`~mha.sources.checkpoint.checkpoint_model.Checkpoint.models_on`); the rows kept per step are moved to
            the CPU.

    Returns:
        A :class:`Generation`: one :class:`DecodeStep` per token chosen (fewer where an end-of-text token or
        ``stop`` ended it).

    Raises:
        ValueError: ``new_tokens`` outside 1 .. GENERATE_MAX, a checkpoint that does not generate, a layer it does
            not have, a prompt with masked (padding) tokens, or more positions than the checkpoint has.
    """
    encoded = _prompt(checkpoint, encoded, layer, new_tokens)
    ids = encoded.inputs["input_ids"]  # (1, L)
    model = layer_model if layer_model is not None else checkpoint.layer_model(layer, device, "float32")
    decoder = CheckpointDecoder(checkpoint, device)
    follower = LayerFollower(checkpoint, decoder.base_model, model, layer, ids.size(1) + new_tokens)
    steps: list[DecodeStep] = []
    fed, stopped = ids.to(device), False  # (1, n): the prompt, then each token chosen
    for index in range(new_tokens):
        if stop is not None and stop.is_set():
            stopped = True
            break
        began = time.perf_counter()
        decoded = decoder.decode(fed)
        trace = follower.follow(decoded)
        seconds = time.perf_counter() - began
        steps.append(record(index, checkpoint.display_tokens([decoded.token_id])[0], decoded, trace, layer, seconds))
        fed = torch.tensor([[decoded.token_id]], dtype=ids.dtype, device=device)  # (1, 1): the next forward reads it
        if progress is not None:
            progress(index + 1, new_tokens)
        if decoded.token_id in decoder.eos:
            break
    chosen = tuple(step.token_id for step in steps)
    sizes = checkpoint.sizes
    return Generation(
        checkpoint=checkpoint.name,
        layer=layer,
        prompt_tokens=encoded.tokens,
        prompt_ids=tuple(int(i) for i in ids[0]),
        new_tokens=checkpoint.display_tokens(chosen) if chosen else (),
        new_ids=chosen,
        steps=tuple(steps),
        requested=new_tokens,
        stopped=stopped,
        ended_at_eos=bool(chosen) and chosen[-1] in decoder.eos,
        cache_size=KVCacheSize(
            sizes.num_layers,
            sizes.num_kv_heads or sizes.num_heads,
            sizes.d_model // sizes.num_heads,
            decoder.language_model.dtype,
        ),
        device=device.type,
    )


def sink_shares(generation: Generation) -> tuple[Tensor, float]:
    """Per layer, the new tokens' mean weight on position 0 over the steps, and what uniform weights would give.

    Returns:
        ``(shares, uniform)``: (layers,) the mean over steps of :attr:`DecodeStep.first_token_share`, and the mean
        over steps of 1/t (each row spreading its weight evenly over its t positions).

    Raises:
        ValueError: a generation with no step.
    """
    if not generation.steps:
        raise ValueError("a generation with no step has no attention to weigh")
    shares = torch.stack([step.first_token_share for step in generation.steps]).mean(
        dim=0
    )  # (steps, layers) -> (layers,)
    uniform = sum(1.0 / step.length for step in generation.steps) / len(generation.steps)
    return shares, uniform


def sink_layers(generation: Generation, threshold: float = SINK_THRESHOLD) -> tuple[int, ...]:
    """The layers whose new tokens put on position 0 more than ``threshold`` × the uniform share (:func:`sink_shares`):
    attention sinks (Xiao et al. 2023, "Efficient Streaming Language Models with Attention Sinks")."""
    shares, uniform = sink_shares(generation)
    return tuple(int(layer) for layer in torch.nonzero(shares > threshold * uniform).flatten())
