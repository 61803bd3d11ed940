"""The user's choices as one frozen, validated dataclass (hashable: a cache key).

The limits below protect a shared server: a request over one is refused here,
before any tensor is made. docs/PERFORMANCE.md ("Limits") gives the measured cost of the worst
allowed request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, cast

from mha.checkpoints import any_checkpoint_cap_mb, checkpoint_names, is_hub_id
from mha.device import DEVICE_CHOICES, resolve_device
from mha.masks import MASK_TYPES
from mha.tokens import TOKENIZERS, tokenize
from mha.vision.samples import DEFAULT_IMAGE, SAMPLE_NAMES

__all__ = [
    "CUT_TASKS",
    "DOMAINS",
    "DTYPES",
    "IMAGE_TASKS",
    "LIMITS",
    "PATCH_SIZES",
    "POSITIONAL",
    "PRETRAINED",
    "RANDOM",
    "ROPE_BASE",
    "TASKS",
    "TRAINED",
    "WEIGHT_SOURCES",
    "AttentionConfig",
    "ConfigError",
    "Domain",
    "Limits",
    "WeightSpec",
    "check_token_count",
    "trains_on_images",
    "weight_spec_of",
]


@dataclass(frozen=True)
class Limits:
    """Caps on what one request may ask for."""

    d_model_min: int = 2
    d_model_max: int = 1024
    num_heads_max: int = 64
    tokens_max: int = 128
    image_tokens_max: int = 198  # a checkpoint's image: [CLS], DeiT's [DIST], 14 × 14 patches (224 px / 16)
    text_chars_max: int = 2000
    hub_id_chars_max: int = 96  # owner/name on the Hugging Face hub
    seed_max: int = 2**31 - 1
    layers_max: int = 48  # layers a weight source may have (a link's ``layer`` is checked against it)
    train_d_model_max: int = 128  # training: the attention layers' width ...
    train_num_heads_max: int = 16  # ... and heads
    train_steps_max: int = 1000  # training steps, sharpening included
    train_concurrent: int = 2  # trainings running at once per process (the others wait in line)
    generate_concurrent: int = 2  # generations running at once per process (the others wait their turn)
    unscramble_words_max: int = 16  # the sentence unscramble trains on (the model sees twice as many tokens)
    image_bytes_max: int = 2 * 2**20  # an uploaded image's file, checked before it is opened ...
    image_pixels_max: int = 4096 * 4096  # ... and its width × height, checked before its pixels are decoded


LIMITS = Limits()
DTYPES = ("float32", "float64")
#: Where the weights come from (``weights``, a spec's ``kind``, a source's ``kind``): seeded random numbers, a small
#: task trained here, a real checkpoint's layer.
RANDOM, TRAINED, PRETRAINED = "random", "trained", "pretrained"
WEIGHT_SOURCES = (RANDOM, TRAINED, PRETRAINED)
#: The small tasks a model can be trained on (see ``mha.training``).
TASKS = ("previous", "previous_and_first", "previous_and_last_digit", "induction", "unscramble", "digits", "reviews")
#: Tasks that cut the learner's text to their own length (a note says so) instead of refusing a long one.
CUT_TASKS = frozenset({"reviews"})
#: Tasks whose input is an image (``config.image``), not the text: its tokens are the image's patches.
IMAGE_TASKS = frozenset({"digits"})
#: Where positions come from (``positional``): sinusoids added to the input (the 2017 paper; a trained model learns
#: its own position vectors instead), none, or q and k rotated by position inside attention (RoPE, Llama's).
POSITIONAL = ("sinusoidal", "none", "rope")
#: RoPE's base for the layers made here (Llama 2's; a checkpoint brings its own ``rope_theta``).
ROPE_BASE = 10000.0
#: Patch sizes a learner may choose for the 8 × 8 digits: 2 (4 × 4 = 16 patches) or 4 (2 × 2 = 4).
PATCH_SIZES = (2, 4)


class ConfigError(ValueError):
    """A choice that cannot be run; ``field`` names the control, ``code`` the problem.

    ``params`` holds the numbers for a translated message (see ``components/i18n.py``).
    """

    def __init__(self, field: str, code: str, message: str, **params: object) -> None:
        super().__init__(message)
        self.field = field
        self.code = code
        self.params = params


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_token_count(count: int) -> None:
    """Raise :class:`ConfigError` for a text with no tokens or more than ``LIMITS.tokens_max``."""
    if count == 0:
        raise ConfigError("tokens", "empty", "the text has no tokens; type a sentence")
    if count > LIMITS.tokens_max:
        raise ConfigError(
            "tokens",
            "too_many",
            f"the text has {count} tokens; the limit is {LIMITS.tokens_max}",
            count=count,
            high=LIMITS.tokens_max,
        )


@dataclass(frozen=True)
class WeightSpec:
    """What determines a model's weights, and nothing else: the cache key of a weight source.

    Two configs that differ only in the mask, the text or the viewed layer share a spec
    (and so one model). Fields a source does not use are ``None``.
    """

    kind: str  # one of WEIGHT_SOURCES
    d_model: int | None = None
    num_heads: int | None = None
    seed: int | None = None
    task: str | None = None
    text: str | None = None  # the sentence a task trains on (``unscramble``): its tokens joined by single spaces
    checkpoint: str | None = None
    hub_id: str | None = None  # a learner's own hub checkpoint (``owner/name``), where the server allows one
    patch: int | None = None  # the patch size an image task trains with (``digits``)
    num_kv_heads: int | None = None  # key/value heads where fewer than ``num_heads`` (GQA); None: as many
    rope_base: float | None = None  # RoPE's base where the layer rotates q and k; None: no rotation
    device: str | None = None  # the accelerator a model trained here trains on ("cuda", "mps"); None: the CPU


@dataclass(frozen=True)
class Domain:
    """The values a field of :class:`AttentionConfig` may take: a whole number in ``low..high`` (one of
    ``values`` where they are given), one of ``choices()`` (names), ``True``/``False``, or text.

    Validation (:meth:`AttentionConfig.validate`) and the link's parser (``components/url_params.py``) both read
    it, so a new control is one field here (and its widget and words).
    """

    kind: str  # "int", "choice", "bool" or "text"
    low: int = 0
    high: int = 0
    choices: Callable[[], Sequence[str]] | None = None
    values: tuple[int, ...] = ()  # the whole numbers allowed, where not every one in low..high is
    checked: bool = True  # validated with the others (False: a rule of its own checks it, e.g. the checkpoint)

    def options(self) -> tuple[str, ...]:
        """The choices of a ``choice`` field (the server's list for the checkpoint)."""
        return tuple(self.choices()) if self.choices is not None else ()


def _int(default: int | None, low: int, high: int, values: tuple[int, ...] = ()) -> Any:
    return field(default=default, metadata={"domain": Domain("int", low, high, values=values)})


def _choice(default: str, choices: Callable[[], Sequence[str]], checked: bool = True) -> Any:
    return field(default=default, metadata={"domain": Domain("choice", choices=choices, checked=checked)})


def _bool(default: bool) -> Any:
    return field(default=default, metadata={"domain": Domain("bool")})


def _text(default: str, high: int, checked: bool = True) -> Any:
    return field(default=default, metadata={"domain": Domain("text", high=high, checked=checked)})


@dataclass(frozen=True)
class AttentionConfig:
    """Everything that determines one forward pass of the playground.

    Same config -> same weights, same embeddings, same numbers. ``weights`` names the
    weight source (:data:`WEIGHT_SOURCES`); ``task`` matters for ``trained``,
    ``checkpoint`` for ``pretrained`` and ``layer`` for sources with several layers.
    ``hub_id``, when set with ``pretrained``, names a learner's own hub checkpoint and takes
    precedence over ``checkpoint``; only a server that sets ``ATTN_PLAYGROUND_ANY_CHECKPOINT_MB`` allows it.
    An image task (:data:`IMAGE_TASKS`) reads ``image`` (a bundled sample's name) cut into
    ``patch`` × ``patch`` patches instead of the text (``tokens`` and ``tokenizer`` wait unused).
    With ``pretrained``, ``d_model`` and ``num_heads`` are the learner's own values,
    kept for when they switch back; the checkpoint's sizes replace them in the run.

    Each field declares its :class:`Domain`; the fields' order is the order in which a link is read
    (``tokenizer`` before ``tokens``: the token cap counts its tokens).
    """

    weights: str = _choice(RANDOM, lambda: WEIGHT_SOURCES)
    task: str = _choice("previous_and_first", lambda: TASKS)
    checkpoint: str = _choice("", checkpoint_names, checked=False)  # checked only for pretrained weights
    hub_id: str = _text("", LIMITS.hub_id_chars_max)  # a learner's own checkpoint: see _validate_hub_id
    layer: int = _int(0, 0, LIMITS.layers_max - 1)
    d_model: int = _int(512, LIMITS.d_model_min, LIMITS.d_model_max)
    num_heads: int = _int(8, 1, LIMITS.num_heads_max)
    num_kv_heads: int = _int(None, 1, LIMITS.num_heads_max)  # None (the default): as many as num_heads
    mask_type: str = _choice("none", lambda: MASK_TYPES)
    window: int = _int(2, 0, LIMITS.tokens_max)
    block_pad: bool = _bool(False)  # also block [PAD] keys under a causal or window mask
    tokenizer: str = _choice("characters", lambda: TOKENIZERS)
    tokens: str = _text("The animal didn't cross the street because it was too tired", LIMITS.text_chars_max)
    seed: int = _int(0, 0, LIMITS.seed_max)
    positional: str = _choice("sinusoidal", lambda: POSITIONAL)
    device: str = _choice("auto", lambda: DEVICE_CHOICES)
    dtype: str = _choice("float32", lambda: DTYPES)
    patch: int = _int(2, min(PATCH_SIZES), max(PATCH_SIZES), PATCH_SIZES)
    image: str = _choice(DEFAULT_IMAGE, lambda: SAMPLE_NAMES)

    def __post_init__(self) -> None:
        if self.num_kv_heads is None:  # the tutorials' layer: one key/value head per query head
            object.__setattr__(self, "num_kv_heads", self.num_heads)
        if isinstance(self.positional, bool):  # the old on/off switch: sinusoids or nothing
            object.__setattr__(self, "positional", "sinusoidal" if self.positional else "none")
        self.validate()

    @property
    def d_k(self) -> int:
        """Size of one head."""
        return self.d_model // self.num_heads

    @property
    def pretrained_name(self) -> str:
        """The checkpoint the page names: the learner's hub id, else the server's checkpoint name."""
        return self.hub_id or self.checkpoint

    @property
    def trains_on_images(self) -> bool:
        """Whether the weights are trained here on images (an image task), so the run reads ``image``, not the text.
        A checkpoint that reads images (a ViT) is known only from its ``config.json``: the page's controls decide
        that (``components.controls.reads_image``)."""
        return trains_on_images(self.weights, self.task)

    @property
    def weight_spec(self) -> WeightSpec:
        """The part of this config that determines the weights (a source's cache key): :func:`weight_spec_of`."""
        return weight_spec_of(self.__dict__)

    def validate(self) -> None:
        """Raise :class:`ConfigError` for the first choice that cannot be run.

        Every check lives here, the token count included (with the project's tokenizer;
        a checkpoint's own tokenizer is checked by its source), so a config that
        validates can run. First each field against its :class:`Domain`, in order, then the rules
        between fields.
        """
        for name, domain in DOMAINS.items():
            if domain.checked:
                _check_domain(name, domain, getattr(self, name))
        self._validate_sizes()
        self._validate_text()
        self._validate_weights()

    def _validate_sizes(self) -> None:
        if self.weights == PRETRAINED:  # a checkpoint brings its own sizes and positions
            return
        if self.d_model % self.num_heads:
            raise ConfigError(
                "num_heads",
                "not_divisible",
                f"d_model={self.d_model} is not divisible by num_heads={self.num_heads}",
                d_model=self.d_model,
                num_heads=self.num_heads,
            )
        if self.num_heads % self.num_kv_heads:
            divisors = ", ".join(str(h) for h in range(1, self.num_heads + 1) if self.num_heads % h == 0)
            raise ConfigError(
                "num_kv_heads",
                "not_dividing",
                f"num_kv_heads={self.num_kv_heads} does not divide num_heads={self.num_heads}; "
                f"choose one of {divisors}",
                num_kv_heads=self.num_kv_heads,
                num_heads=self.num_heads,
                divisors=divisors,
            )
        if self.positional == "rope" and self.d_k % 2:
            raise ConfigError(
                "positional",
                "rope_odd",
                f"RoPE turns pairs of features, so d_k must be even, got d_k = {self.d_model} / {self.num_heads} "
                f"= {self.d_k}",
                d_model=self.d_model,
                num_heads=self.num_heads,
                d_k=self.d_k,
            )

    def _validate_text(self) -> None:
        if self.weights != PRETRAINED and not self.trains_on_images:  # a checkpoint counts its own; an image: patches
            count = len(tokenize(self.tokens, self.tokenizer))
            if self.weights == TRAINED and self.task in CUT_TASKS:  # read up to the task's length, a note says so
                count = min(count, LIMITS.tokens_max)
            check_token_count(count)

    def _validate_weights(self) -> None:
        lim = LIMITS
        if self.weights == TRAINED and (
            self.d_model > lim.train_d_model_max or self.num_heads > lim.train_num_heads_max
        ):
            raise ConfigError(
                "d_model",
                "too_big_to_train",
                f"training is limited to d_model <= {lim.train_d_model_max} and num_heads <= "
                f"{lim.train_num_heads_max}, got d_model={self.d_model}, num_heads={self.num_heads}",
                d_model=self.d_model,
                num_heads=self.num_heads,
                d_model_max=lim.train_d_model_max,
                num_heads_max=lim.train_num_heads_max,
            )
        if self.weights == TRAINED and self.task == "unscramble":
            count = len(tokenize(self.tokens, self.tokenizer))
            if not 2 <= count <= lim.unscramble_words_max:
                raise ConfigError(
                    "tokens",
                    "unscramble_length",
                    f"unscramble trains on a sentence of 2 to {lim.unscramble_words_max} tokens, got {count}",
                    count=count,
                    high=lim.unscramble_words_max,
                )
        if self.weights == PRETRAINED and self.hub_id:
            self._validate_hub_id()
        elif self.weights == PRETRAINED and self.checkpoint not in checkpoint_names():
            raise ConfigError(
                "checkpoint",
                "unknown",
                f"checkpoint must be a name from the server's list ({', '.join(checkpoint_names())}), "
                f"got {self.checkpoint!r}",
                value=self.checkpoint,
                choices=", ".join(checkpoint_names()),
            )

    def _validate_hub_id(self) -> None:
        if not is_hub_id(self.hub_id):
            raise ConfigError(
                "hub_id",
                "bad_form",
                f"hub_id must be a Hugging Face hub id such as owner/name, got {self.hub_id!r}",
                value=self.hub_id,
            )
        if any_checkpoint_cap_mb() is None:
            raise ConfigError(
                "hub_id",
                "any_off",
                f"this server does not load a learner's own checkpoint (hub_id {self.hub_id!r})",
                value=self.hub_id,
            )


#: Each field of :class:`AttentionConfig` and the values it may take, in the config's order.
DOMAINS: dict[str, Domain] = {item.name: item.metadata["domain"] for item in fields(AttentionConfig)}


def _check_domain(name: str, domain: Domain, value: object) -> None:
    """Raise :class:`ConfigError` when ``value`` is not in ``domain`` (the message names the field and the values)."""
    if domain.kind == "int" and domain.values and value not in domain.values:
        choices = ", ".join(map(str, domain.values))
        raise ConfigError(
            name, "unknown", f"{name} must be one of {choices}, got {value!r}", value=value, choices=choices
        )
    if domain.kind == "int" and not (_is_int(value) and domain.low <= cast(int, value) <= domain.high):
        raise ConfigError(
            name,
            "out_of_range",
            f"{name} must be an integer from {domain.low} to {domain.high}, got {value!r}",
            value=value,
            low=domain.low,
            high=domain.high,
        )
    if domain.kind == "choice" and value not in domain.options():
        choices = ", ".join(domain.options())
        raise ConfigError(
            name, "unknown", f"{name} must be one of {choices}, got {value!r}", value=value, choices=choices
        )
    if domain.kind == "bool" and not isinstance(value, bool):
        raise ConfigError(name, "not_boolean", f"{name} must be True or False, got {value!r}", value=value)
    if domain.kind == "text" and (not isinstance(value, str) or len(value) > domain.high):
        raise ConfigError(
            name, "too_long_text", f"the text may have at most {domain.high} characters", high=domain.high
        )


def trains_on_images(weights: object, task: object) -> bool:
    """Whether ``weights`` and ``task`` train a model on images here (an image task with trained weights)."""
    return weights == TRAINED and task in IMAGE_TASKS


def weight_spec_of(choices: Mapping[str, Any]) -> WeightSpec:
    """The part of a config's choices that determines the weights (a source's cache key): the one rule, for a
    validated :class:`AttentionConfig` and for the controls' values before they validate (the layer control asks
    the source's sizes).

    Args:
        choices: the config's fields by name (``weights``, ``d_model``, ``num_heads``, ``num_kv_heads``,
            ``positional``, ``seed``, ``task``, ``checkpoint``, ``hub_id``, ``patch``, ``tokens``, ``tokenizer``,
            ``device``: trained weights name the accelerator they train on, the CPU's name none).
    """
    weights, hub_id = choices["weights"], str(choices.get("hub_id", "")).strip()
    if weights == PRETRAINED:
        return (
            WeightSpec(PRETRAINED, hub_id=hub_id)
            if hub_id
            else WeightSpec(PRETRAINED, checkpoint=choices["checkpoint"])
        )
    sizes = (choices["d_model"], choices["num_heads"], choices["seed"])
    kv_heads = choices.get("num_kv_heads")
    today = {  # GQA and RoPE, named only where the layer has them: the tutorials' layer keeps its cache key
        "num_kv_heads": kv_heads if kv_heads not in (None, choices["num_heads"]) else None,
        "rope_base": ROPE_BASE if choices.get("positional") == "rope" else None,
    }
    task = choices["task"]
    if weights == TRAINED:  # trained on the run's device: an accelerator's model is not the CPU's to the last bit
        device = resolve_device(str(choices.get("device", "auto"))).device.type
        today["device"] = None if device == "cpu" else device  # the CPU's model keeps its cache key
    if trains_on_images(weights, task):
        return WeightSpec(TRAINED, *sizes, task=task, patch=choices["patch"], **today)
    if weights == TRAINED:
        text = " ".join(tokenize(str(choices["tokens"]), choices["tokenizer"])) if task == "unscramble" else None
        return WeightSpec(TRAINED, *sizes, task=task, text=text, **today)
    return WeightSpec(RANDOM, *sizes, **today)
