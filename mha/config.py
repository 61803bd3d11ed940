"""The user's choices as one frozen, validated dataclass (hashable: a cache key).

The limits below protect a shared server: a request over one is refused here,
before any tensor is made. README "Limits" gives the measured cost of the worst
allowed request.
"""

from __future__ import annotations

from dataclasses import dataclass

from mha.device import DEVICE_CHOICES
from mha.masks import MASK_TYPES

__all__ = ["LIMITS", "AttentionConfig", "ConfigError", "Limits"]


@dataclass(frozen=True)
class Limits:
    """Caps on what one request may ask for."""

    d_model_min: int = 2
    d_model_max: int = 1024
    num_heads_max: int = 64
    tokens_max: int = 128
    text_chars_max: int = 2000
    seed_max: int = 2**31 - 1


LIMITS = Limits()
DTYPES = ("float32", "float64")


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


@dataclass(frozen=True)
class AttentionConfig:
    """Everything that determines one forward pass of the playground.

    Same config -> same weights, same embeddings, same numbers.
    """

    d_model: int = 512
    num_heads: int = 8
    mask_type: str = "none"
    window: int = 2
    tokens: str = "The animal didn't cross the street because it was too tired"
    seed: int = 0
    positional: bool = True
    device: str = "auto"
    dtype: str = "float32"

    def __post_init__(self) -> None:
        self.validate()

    @property
    def d_k(self) -> int:
        """Size of one head."""
        return self.d_model // self.num_heads

    def validate(self) -> None:
        """Raise :class:`ConfigError` for the first choice that cannot be run."""
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
        if self.d_model % self.num_heads:
            raise ConfigError(
                "num_heads",
                "not_divisible",
                f"d_model={self.d_model} is not divisible by num_heads={self.num_heads}",
                d_model=self.d_model,
                num_heads=self.num_heads,
            )
        if self.mask_type not in MASK_TYPES:
            raise ConfigError(
                "mask_type",
                "unknown",
                f"mask_type must be one of {', '.join(MASK_TYPES)}, got {self.mask_type!r}",
                value=self.mask_type,
                choices=", ".join(MASK_TYPES),
            )
        if not _is_int(self.window) or not 0 <= self.window <= lim.tokens_max:
            raise ConfigError(
                "window",
                "out_of_range",
                f"window must be an integer from 0 to {lim.tokens_max}, got {self.window!r}",
                value=self.window,
                low=0,
                high=lim.tokens_max,
            )
        if not isinstance(self.tokens, str) or len(self.tokens) > lim.text_chars_max:
            raise ConfigError(
                "tokens",
                "too_long_text",
                f"the text may have at most {lim.text_chars_max} characters",
                high=lim.text_chars_max,
            )
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
