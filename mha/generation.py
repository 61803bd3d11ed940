"""Greedy generation by a causal checkpoint, with the shown layer run beside it by our layer and its own cache.

Shape legend: L prompt tokens, t positions a step attends to, H heads, Hkv key/value heads, Dh head size,
D = d_model.

The checkpoint's language model (its ``*ForCausalLM``,
:attr:`~mha.sources.checkpoint.loaded.Checkpoint.language_model`) generates: a first forward over the prompt (the
*prefill*) fills its ``past_key_values``, and every later step feeds only the token just chosen, at its position,
with that cache (``use_cache=True``), and takes the argmax of the last logits: greedy decoding, as
``lm.generate(input_ids, attention_mask, max_new_tokens=n, do_sample=False)`` does where the checkpoint's generation
config adds no logits processor of its own (a repetition penalty...: not applied here). An end-of-text token (the
generation config's ``eos_token_id``) ends it early, as it ends ``generate``: it is the last new token, and
:attr:`Generation.ended_at_eos` says so.

The prompt keeps the tokenizer's prefix (a BOS, a ``[CLS]``) but not its suffix: a GPT-2 paired with a BERT
tokenizer (``gpt2-chinese``) would otherwise read a prompt ending in ``[SEP]`` and continue after the end of the
text, not the text itself.

Beside it, our :class:`~mha.module.MultiHeadAttention` copy of the shown layer keeps its own
:class:`~mha.kv_cache.KVCache`: the prompt's layer inputs fill it in one
:meth:`~mha.module.MultiHeadAttention.forward_step` (n = L), then each fed token's layer input (the family's
``layer_input`` of that step's hidden states) is one step with n = 1. Step i is the forward that chose new token i:
its query row is position L - 1 + i (the prompt's last token, then each token fed), attending to t = L + i
positions. Each step keeps our weights of that row and the checkpoint's own (``attentions[layer]``), which agree to
float32 rounding.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor

from mha.kv_cache import KVCache, cache_bytes_per_token
from mha.memory import CPU, OutOfMemory
from mha.module import MultiHeadAttention

if TYPE_CHECKING:  # the checkpoint source imports this module: its types only for the annotations
    import threading

    from mha.sources.checkpoint.checkpoint_model import Encoded
    from mha.sources.checkpoint.text import TextCheckpoint

__all__ = [
    "GENERATE_MAX",
    "SINK_THRESHOLD",
    "DecodeStep",
    "Generation",
    "check_new_tokens",
    "first_token_shares",
    "generate",
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
    token is the end-of-text token, which ended it (at or before ``requested`` tokens). ``cache_bytes_per_token``: the
    checkpoint's whole key/value cache per token in float32, 2 · layers · Hkv · Dh · 4. ``device``: the type of the
    device it ran on (``"cuda"``, ``"mps"``, ``"cpu"``); ``out_of_memory``: the run's device ran out of memory, so it
    ran on the CPU (:mod:`mha.memory`).
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
    cache_bytes_per_token: int
    device: str = "cpu"
    out_of_memory: OutOfMemory | None = None

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


def _positions(language_model: Any) -> int | None:
    """The positions the model has (``max_position_embeddings``; GPT-2's ``n_positions``), or ``None``."""
    return getattr(language_model.config, "max_position_embeddings", None)


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
            :meth:`~mha.sources.checkpoint.loaded.Checkpoint.models_on`); the rows kept per step are moved to the CPU.

    Returns:
        A :class:`Generation`: one :class:`DecodeStep` per token chosen (fewer where an end-of-text token or
        ``stop`` ended it).

    Raises:
        ValueError: ``new_tokens`` outside 1 .. GENERATE_MAX, a checkpoint that does not generate, a layer it does
            not have, a prompt with masked (padding) tokens, or more positions than the checkpoint has.
    """
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
    positions = _positions(checkpoint.language_model)
    if positions is not None and length + new_tokens > positions:
        raise ValueError(
            f"{length} prompt tokens and {new_tokens} new ones need {length + new_tokens} positions; "
            f"{checkpoint.name} has {positions}"
        )
    model = layer_model if layer_model is not None else checkpoint.layer_model(layer, device, "float32")
    base_model, language_model = checkpoint.models_on(device)
    weight = model.W_q.weight  # (D, D): our layer's dtype and device
    cache = KVCache.for_layer(model, length + new_tokens)
    options: dict[str, Any] = {"use_cache": True, "output_attentions": True, "output_hidden_states": True}
    if "logits_to_keep" in inspect.signature(checkpoint.language_model.forward).parameters:
        options["logits_to_keep"] = 1  # only the last row's logits, as generate asks for them
    eos = _eos_ids(checkpoint.language_model)
    steps: list[DecodeStep] = []
    chosen: list[int] = []
    fed, start, past = ids.to(device), 0, None  # the tokens of the next forward (1, n) at positions start .. start+n-1
    stopped = ended = False
    for index in range(new_tokens):
        if stop is not None and stop.is_set():
            stopped = True
            break
        began = time.perf_counter()
        attention_mask = torch.ones(1, start + fed.size(1), dtype=torch.long, device=device)  # (1, t): all read
        with checkpoint.lock, torch.inference_mode():  # one forward at a time (see Checkpoint)
            out = language_model(input_ids=fed, attention_mask=attention_mask, past_key_values=past, **options)
        with torch.inference_mode():
            token_id = int(out.logits[0, -1].argmax())  # (V,) -> the greedy choice
            x = checkpoint.family.layer_input(base_model, out.hidden_states, layer)  # (1, n, D)
            trace = model.forward_step(x.to(device=weight.device, dtype=weight.dtype), cache, start)
            ours = trace.weights[0, :, -1].float().cpu()  # (H, t): the row that chose the token
            theirs = out.attentions[layer][0, :, -1].float().cpu()  # (H, t)
            shares = first_token_shares(out.attentions)  # (layers,)
        seconds = time.perf_counter() - began
        steps.append(
            DecodeStep(
                index=index,
                position=start + fed.size(1) - 1,
                token=checkpoint.display_tokens([token_id])[0],
                token_id=token_id,
                q_shape=tuple(trace.q.shape),
                cache_shape=tuple(trace.cache_keys.shape),
                weights=ours,
                checkpoint_weights=theirs,
                max_abs_weights=float((ours - theirs).abs().max()),
                first_token_share=shares,
                seconds=seconds,
            )
        )
        chosen.append(token_id)
        past = out.past_key_values
        start += fed.size(1)
        fed = torch.tensor([[token_id]], dtype=ids.dtype, device=device)  # (1, 1): the next forward reads it
        if progress is not None:
            progress(index + 1, new_tokens)
        if token_id in eos:
            ended = True
            break
    sizes = checkpoint.sizes
    kv_heads = sizes.num_kv_heads or sizes.num_heads
    return Generation(
        checkpoint=checkpoint.name,
        layer=layer,
        prompt_tokens=encoded.tokens,
        prompt_ids=tuple(int(i) for i in ids[0]),
        new_tokens=checkpoint.display_tokens(chosen) if chosen else (),
        new_ids=tuple(chosen),
        steps=tuple(steps),
        requested=new_tokens,
        stopped=stopped,
        ended_at_eos=ended,
        cache_bytes_per_token=cache_bytes_per_token(layers, kv_heads, sizes.d_model // sizes.num_heads, 4),
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
