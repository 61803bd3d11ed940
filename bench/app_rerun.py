"""Server-side rerun time of ``playground.py`` after a control change, through Streamlit's AppTest.

Three page sizes (the default sentence; 64 tokens x 8 heads; 128 tokens x 16 heads at d_model
1024) and three kinds of change, each timed as ``at.run()`` after setting one widget:

* new seed: a value never seen before, so nothing is cached: the model is built, the traced
  forward and the check against ``nn.MultiheadAttention`` run, every frame and chart is made;
* d_model back and forth between two sizes already seen: the engine comes from the cache,
  every frame and chart is rebuilt;
* head: the viewed head. In a browser this reruns only the fragment of steps 1-2 (see the
  browser section); AppTest always reruns the whole script, so this is an upper bound.

Each change has its own AppTest (the caches are process-wide, so they share the engine
cache), and the changes are timed in turn, round after round, so that background load on a
shared machine hits them alike.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench import time_once
from bench.table import Table

TITLE = "Server rerun of playground.py after a control change (AppTest), ms"

SCRIPT = Path(__file__).resolve().parents[1] / "playground.py"
SEED_BASE = 1000  # seeds from here up are used once each


@dataclass(frozen=True)
class PageSize:
    """One configuration of the page, opened through its URL parameters."""

    name: str
    d_model: int
    num_heads: int
    tokens: int | None  # None: the page's default sentence (11 tokens)
    target_ms: float  # the performance target for a rerun (docs/PERFORMANCE.md) after a control change

    def query(self) -> dict[str, str]:
        params = {"d_model": str(self.d_model), "num_heads": str(self.num_heads)}
        if self.tokens is not None:
            params["tokens"] = " ".join(f"w{i}" for i in range(self.tokens))
        return params


SIZES = (
    PageSize("default page (d 512, 8 heads, 11 tokens)", 512, 8, None, 40.0),
    PageSize("64 tokens x 8 heads (d 512)", 512, 8, 64, 80.0),
    PageSize("128 tokens x 16 heads (d 1024)", 1024, 16, 128, 250.0),
)
CHANGES = ("new seed (nothing cached)", "d_model back and forth (engine cached)", "head (whole script in AppTest)")


def open_page(size: PageSize):
    """An AppTest of the page at ``size``, run once."""
    from streamlit import config, logger
    from streamlit.testing.v1 import AppTest

    config.set_option("logger.level", "error")  # AppTest's "missing ScriptRunContext" chatter: new loggers
    logger.set_log_level("error")  # and the loggers that exist already

    at = AppTest.from_file(str(SCRIPT), default_timeout=120)
    for key, value in size.query().items():
        at.query_params[key] = value
    at.run()
    if at.exception:
        raise RuntimeError(f"the page failed at {size.name}: {[e.value for e in at.exception]}")
    return at


def changes(size: PageSize) -> dict[str, Callable[[int], float]]:
    """One call per kind of change: set the widget for round ``i``, then time ``at.run()``."""
    pages = {name: open_page(size) for name in CHANGES}
    other_d_model = size.d_model // 2

    from components.head_picker import HEAD_KEY

    def new_seed(i: int) -> float:
        at = pages[CHANGES[0]]
        at.number_input(key="seed").set_value(SEED_BASE + i)
        return time_once(at.run)

    def d_model(i: int) -> float:
        at = pages[CHANGES[1]]
        at.number_input(key="d_model").set_value(other_d_model if i % 2 == 0 else size.d_model)
        return time_once(at.run)

    def head(i: int) -> float:
        at = pages[CHANGES[2]]
        at.session_state[HEAD_KEY] = 1 + i % 2  # the picker is a component, which AppTest cannot click
        return time_once(at.run)

    return dict(zip(CHANGES, (new_seed, d_model, head), strict=True))


def time_changes(size: PageSize, rounds: int, warmup: int = 2) -> dict[str, list[float]]:
    """Seconds of ``at.run()`` per change, ``rounds`` times each, in turn (after ``warmup`` rounds)."""
    calls = changes(size)
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for i in range(warmup + rounds):
        for name, call in calls.items():
            seconds = call(i)
            if i >= warmup:
                samples[name].append(seconds)
    return samples


def run(quick: bool) -> list[Table]:
    """One row per page size and change: median and fastest rerun, and the target."""
    rows = []
    for size in SIZES[:2] if quick else SIZES:
        rounds = 3 if quick else (9 if size.tokens == 128 else 15)
        for name, seconds in time_changes(size, rounds).items():
            median = statistics.median(seconds) * 1e3
            target = f"<= {size.target_ms:.0f}" if name == CHANGES[0] else ""
            verdict = ("met" if median <= size.target_ms else "missed") if target else ""
            rows.append((size.name, name, f"{median:.1f}", f"{min(seconds) * 1e3:.1f}", target, verdict))
    notes = (
        f"median and fastest of {'3' if quick else '15 (9 at 128 tokens)'} rounds after 2 warm-up rounds; "
        "the three changes are timed in turn each round, each on its own AppTest.",
        "AppTest compiles the script on every run (a fresh ScriptCache, ~3 ms here); a real server caches it. "
        "The targets (docs/PERFORMANCE.md) are for a control change; the new-seed row is the strictest such change.",
    )
    columns = ("page", "change", "median ms", "fastest ms", "target ms", "verdict")
    return [Table(TITLE, columns, tuple(rows), notes)]
