"""What the controls are: their keys (the live ones, the run's settings), their choices, the tutorials' example
sentences and the sizes a learner starts training from."""

from __future__ import annotations

from collections.abc import Callable

from mha.config import DOMAINS, LIMITS
from mha.device import available_devices

D_MODEL_PRESETS = (64, 128, 256, 512, 768, 1024)
#: d_model and num_heads a learner gets on switching to trained weights (each task trains in a few seconds).
TRAINED_SIZES = (64, 2)
#: (name, text): the tutorials' sentences; "padded" ends in [PAD] tokens for the padding mask.
EXAMPLES = (
    ("thinking", "Thinking Machines"),
    ("animal", "The animal didn't cross the street because it was too tired"),
    ("xiaoming", "小明喜欢打球，他放学后去了操场"),
    ("cat", "The cat sat on the mat"),
    ("padded", "The cat sat on the mat [PAD] [PAD] [PAD]"),
)
#: (kind, sentence): the reviews task's sentences to click, both kinds; none is a bundled review
#: (tests/test_reviews.py).
REVIEW_EXAMPLES = (
    ("negative", "质量太差了，很失望"),
    ("positive", "这本书写得很好，值得一读"),
    ("negative", "房间又小又脏，服务态度也不好"),
    ("positive", "酒店位置方便，服务周到，下次还来"),
)
#: The sentence the reviews task opens on (a link or a switch to it that brings no text of its own): a review it
#: was made for, never the English default.
REVIEW_DEFAULT = REVIEW_EXAMPLES[1][1]
PERSIST = "session"  # widget values survive a visit to another page

Choices = dict[str, object]  # the controls' values by config field name (may not run: see build_config)
Changed = Callable[[], None]  # called after a live control's change (components.live_controls)


def device_options() -> list[str]:
    """``auto``, ``cpu``, then every accelerator present here."""
    return ["auto", "cpu", *(name for name in available_devices() if name != "cpu")]


def nearest_divisors(d_model: int, num_heads: int, high: int = LIMITS.num_heads_max) -> tuple[int | None, int | None]:
    """The closest head counts below and above ``num_heads`` (within 1..high) that divide ``d_model``."""
    below = next((h for h in range(min(num_heads, high), 0, -1) if d_model % h == 0), None)
    above = next((h for h in range(num_heads + 1, high + 1) if d_model % h == 0), None)
    return below, above


#: The controls whose change redraws only the values (and, where it shows there, this section of the sidebar),
#: not the page. The others run the page.
LIVE_KEYS = (
    *("d_model", "num_heads", "num_kv_heads", "mask_type", "window", "block_pad", "tokenizer", "tokens", "seed"),
    *("positional", "device", "dtype", "image"),
)
#: The live controls whose change shows nowhere else in the sidebar (:func:`render_run_controls`).
RUN_KEYS = ("seed", "positional", "device", "dtype")


def options(key: str) -> tuple[str, ...]:
    """The choices of the control ``key`` (the machine's devices for ``device``)."""
    return tuple(device_options()) if key == "device" else DOMAINS[key].options()
