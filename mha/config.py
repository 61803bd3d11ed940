"""The user's choices as one frozen, validated dataclass (hashable: a cache key).

The limits below protect a shared server: a request over one is refused here,
before any tensor is made. docs/PERFORMANCE.md ("Limits") gives the measured cost of the worst
allowed request.
"""

from __future__ import annotations

from dataclasses import dataclass

from mha.checkpoints import checkpoint_names
from mha.device import DEVICE_CHOICES
from mha.masks import MASK_TYPES
from mha.tokens import TOKENIZERS, tokenize
from mha.vision.samples import DEFAULT_IMAGE, SAMPLE_NAMES

__all__ = [
    "DTYPES",
    "IMAGE_TASKS",
    "LIMITS",
    "PATCH_SIZES",
    "TASKS",
    "WEIGHT_SOURCES",
    "AttentionConfig",
    "ConfigError",
    "Limits",
    "WeightSpec",
    "check_token_count",
]


@dataclass(frozen=True)
class Limits:
    """Caps on what one request may ask for."""

    d_model_min: int = 2
    d_model_max: int = 1024
    num_heads_max: int = 64
    tokens_max: int = 128
    text_chars_max: int = 2000
    seed_max: int = 2**31 - 1
    layers_max: int = 48  # layers a weight source may have (a link's ``layer`` is checked against it)
    train_d_model_max: int = 128  # training: the attention layers' width ...
    train_num_heads_max: int = 16  # ... and heads
    train_steps_max: int = 1000  # training steps, sharpening included
    train_concurrent: int = 2  # trainings running at once per process (the others wait in line)
    unscramble_words_max: int = 16  # the sentence unscramble trains on (the model sees twice as many tokens)
    image_bytes_max: int = 2 * 2**20  # an uploaded image's file, checked before it is opened ...
    image_pixels_max: int = 4096 * 4096  # ... and its width × height, checked before its pixels are decoded


LIMITS = Limits()
DTYPES = ("float32", "float64")
#: Where the weights come from: seeded random numbers, a small task trained here, a real checkpoint's layer.
WEIGHT_SOURCES = ("random", "trained", "pretrained")
#: The small tasks a model can be trained on (see ``mha.training``).
TASKS = ("previous", "previous_and_first", "previous_and_last_digit", "induction", "unscramble", "digits")
#: Tasks whose input is an image (``config.image``), not the text: its tokens are the image's patches.
IMAGE_TASKS = frozenset({"digits"})
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
    patch: int | None = None  # the patch size an image task trains with (``digits``)


@dataclass(frozen=True)
class AttentionConfig:
    """Everything that determines one forward pass of the playground.

    Same config -> same weights, same embeddings, same numbers. ``weights`` names the
    weight source (:data:`WEIGHT_SOURCES`); ``task`` matters for ``trained``,
    ``checkpoint`` for ``pretrained`` and ``layer`` for sources with several layers.
    An image task (:data:`IMAGE_TASKS`) reads ``image`` (a bundled sample's name) cut into
    ``patch`` × ``patch`` patches instead of the text (``tokens`` and ``tokenizer`` wait unused).
    With ``pretrained``, ``d_model`` and ``num_heads`` are the learner's own values,
    kept for when they switch back; the checkpoint's sizes replace them in the run.
    """

    d_model: int = 512
    num_heads: int = 8
    mask_type: str = "none"
    window: int = 2
    block_pad: bool = False  # also block [PAD] keys under a causal or window mask
    tokens: str = "The animal didn't cross the street because it was too tired"
    seed: int = 0
    positional: bool = True
    device: str = "auto"
    dtype: str = "float32"
    weights: str = "random"
    task: str = "previous_and_first"
    checkpoint: str = ""
    layer: int = 0
    tokenizer: str = "characters"
    patch: int = 2
    image: str = DEFAULT_IMAGE

    def __post_init__(self) -> None:
        self.validate()

    @property
    def d_k(self) -> int:
        """Size of one head."""
        return self.d_model // self.num_heads

    @property
    def reads_image(self) -> bool:
        """Whether the run's input is ``image`` (an image task with trained weights), not the text."""
        return self.weights == "trained" and self.task in IMAGE_TASKS

    @property
    def weight_spec(self) -> WeightSpec:
        """The part of this config that determines the weights (a source's cache key)."""
        if self.weights == "pretrained":
            return WeightSpec("pretrained", checkpoint=self.checkpoint)
        if self.reads_image:
            return WeightSpec("trained", self.d_model, self.num_heads, self.seed, task=self.task, patch=self.patch)
        if self.weights == "trained":
            text = " ".join(tokenize(self.tokens, self.tokenizer)) if self.task == "unscramble" else None
            return WeightSpec("trained", self.d_model, self.num_heads, self.seed, task=self.task, text=text)
        return WeightSpec("random", self.d_model, self.num_heads, self.seed)

    def validate(self) -> None:
        """Raise :class:`ConfigError` for the first choice that cannot be run.

        Every check lives here, the token count included (with the project's tokenizer;
        a checkpoint's own tokenizer is checked by its source), so a config that
        validates can run.
        """
        self._validate_sizes()
        self._validate_mask()
        self._validate_text()
        self._validate_run()
        self._validate_weights()
        self._validate_image()

    def _validate_sizes(self) -> None:
        lim = LIMITS
        if not _is_int(self.d_model) or not lim.d_model_min <= self.d_model <= lim.d_model_max:
            raise ConfigError(
                "d_model",
                "out_of_range",
                f"d_model must be an integer from {lim.d_model_min} to {lim.d_model_max}, got {self.d_model!r}",
                value=self.d_model,
                low=lim.d_model_min,
                high=lim.d_model_max,
            )
        if not _is_int(self.num_heads) or not 1 <= self.num_heads <= lim.num_heads_max:
            raise ConfigError(
                "num_heads",
                "out_of_range",
                f"num_heads must be an integer from 1 to {lim.num_heads_max}, got {self.num_heads!r}",
                value=self.num_heads,
                low=1,
                high=lim.num_heads_max,
            )
        if self.d_model % self.num_heads and self.weights != "pretrained":  # a checkpoint brings its own sizes
            raise ConfigError(
                "num_heads",
                "not_divisible",
                f"d_model={self.d_model} is not divisible by num_heads={self.num_heads}",
                d_model=self.d_model,
                num_heads=self.num_heads,
            )

    def _validate_mask(self) -> None:
        if self.mask_type not in MASK_TYPES:
            raise ConfigError(
                "mask_type",
                "unknown",
                f"mask_type must be one of {', '.join(MASK_TYPES)}, got {self.mask_type!r}",
                value=self.mask_type,
                choices=", ".join(MASK_TYPES),
            )
        if not _is_int(self.window) or not 0 <= self.window <= LIMITS.tokens_max:
            raise ConfigError(
                "window",
                "out_of_range",
                f"window must be an integer from 0 to {LIMITS.tokens_max}, got {self.window!r}",
                value=self.window,
                low=0,
                high=LIMITS.tokens_max,
            )
        if not isinstance(self.block_pad, bool):
            raise ConfigError(
                "block_pad",
                "not_boolean",
                f"block_pad must be True or False, got {self.block_pad!r}",
                value=self.block_pad,
            )

    def _validate_text(self) -> None:
        lim = LIMITS
        if self.tokenizer not in TOKENIZERS:
            raise ConfigError(
                "tokenizer",
                "unknown",
                f"tokenizer must be one of {', '.join(TOKENIZERS)}, got {self.tokenizer!r}",
                value=self.tokenizer,
                choices=", ".join(TOKENIZERS),
            )
        if not isinstance(self.tokens, str) or len(self.tokens) > lim.text_chars_max:
            raise ConfigError(
                "tokens",
                "too_long_text",
                f"the text may have at most {lim.text_chars_max} characters",
                high=lim.text_chars_max,
            )
        if self.weights != "pretrained" and not self.reads_image:  # a checkpoint counts its own; an image has patches
            check_token_count(len(tokenize(self.tokens, self.tokenizer)))

    def _validate_run(self) -> None:
        lim = LIMITS
        if not _is_int(self.seed) or not 0 <= self.seed <= lim.seed_max:
            raise ConfigError(
                "seed",
                "out_of_range",
                f"seed must be an integer from 0 to {lim.seed_max}, got {self.seed!r}",
                value=self.seed,
                low=0,
                high=lim.seed_max,
            )
        if self.device not in DEVICE_CHOICES:
            raise ConfigError(
                "device",
                "unknown",
                f"device must be one of {', '.join(DEVICE_CHOICES)}, got {self.device!r}",
                value=self.device,
                choices=", ".join(DEVICE_CHOICES),
            )
        if self.dtype not in DTYPES:
            raise ConfigError(
                "dtype",
                "unknown",
                f"dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}",
                value=self.dtype,
                choices=", ".join(DTYPES),
            )

    def _validate_weights(self) -> None:
        lim = LIMITS
        if self.weights not in WEIGHT_SOURCES:
            raise ConfigError(
                "weights",
                "unknown",
                f"weights must be one of {', '.join(WEIGHT_SOURCES)}, got {self.weights!r}",
                value=self.weights,
                choices=", ".join(WEIGHT_SOURCES),
            )
        if self.task not in TASKS:
            raise ConfigError(
                "task",
                "unknown",
                f"task must be one of {', '.join(TASKS)}, got {self.task!r}",
                value=self.task,
                choices=", ".join(TASKS),
            )
        if not _is_int(self.layer) or not 0 <= self.layer < lim.layers_max:
            raise ConfigError(
                "layer",
                "out_of_range",
                f"layer must be an integer from 0 to {lim.layers_max - 1}, got {self.layer!r}",
                value=self.layer,
                low=0,
                high=lim.layers_max - 1,
            )
        if self.weights == "trained" and (
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
        if self.weights == "trained" and self.task == "unscramble":
            count = len(tokenize(self.tokens, self.tokenizer))
            if not 2 <= count <= lim.unscramble_words_max:
                raise ConfigError(
                    "tokens",
                    "unscramble_length",
                    f"unscramble trains on a sentence of 2 to {lim.unscramble_words_max} tokens, got {count}",
                    count=count,
                    high=lim.unscramble_words_max,
                )
        if self.weights == "pretrained" and self.checkpoint not in checkpoint_names():
            raise ConfigError(
                "checkpoint",
                "unknown",
                f"checkpoint must be a name from the server's list ({', '.join(checkpoint_names())}), "
                f"got {self.checkpoint!r}",
                value=self.checkpoint,
                choices=", ".join(checkpoint_names()),
            )

    def _validate_image(self) -> None:
        if self.patch not in PATCH_SIZES or not _is_int(self.patch):
            raise ConfigError(
                "patch",
                "unknown",
                f"patch must be one of {', '.join(map(str, PATCH_SIZES))}, got {self.patch!r}",
                value=self.patch,
                choices=", ".join(map(str, PATCH_SIZES)),
            )
        if self.image not in SAMPLE_NAMES:
            raise ConfigError(
                "image",
                "unknown",
                f"image must be a bundled sample ({', '.join(SAMPLE_NAMES)}), got {self.image!r}",
                value=self.image,
                choices=", ".join(SAMPLE_NAMES),
            )
