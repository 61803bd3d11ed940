"""The server's memory stays flat over 500 reruns of the playground (AppTest, in this process).

A warm-up pass runs every configuration once; then 500 reruns cycle through six
configurations (sizes, masks, texts in English and Chinese) with a seed that changes every
rerun, so the caches (8 models, 16 runs) keep evicting and refilling, as on a workshop
server. RSS (psutil) is sampled every 50 reruns after a ``gc.collect()``; the growth from
the end of the warm-up to the end must stay under :data:`GROWTH_BOUND_MB`. The numbers (and,
for information only, the time taken) are printed and written to ``test-artifacts/soak.txt``.

Marked ``slow`` (minutes) so that it can be picked out (``-m slow``) or left out (``-m "not slow"``)
while working; the default ``pytest`` run, and so CI, runs it. It asserts memory only, never a time.
"""

from __future__ import annotations

import gc
import time
from pathlib import Path

import psutil
import pytest
from conftest import ARTIFACTS
from streamlit.testing.v1 import AppTest

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
RERUNS = 500
SAMPLE_EVERY = 50
GROWTH_BOUND_MB = 64.0  # from the end of the warm-up to the end of the 500 reruns
SECOND_HALF_BOUND_MB = 32.0  # reruns 250..500: a leak keeps growing, noise does not
#: (d_model, num_heads, mask_type, tokens); the window stays 2 (its field is disabled unless the mask is window)
CONFIGS = (
    (64, 4, "none", "the cat sat on the mat"),
    (32, 2, "causal", "a b c d e"),
    (48, 4, "window", "x y z w v u"),
    (64, 8, "padding", "the cat [PAD] [PAD]"),
    (16, 1, "none", "小明喜欢打球"),
    (96, 3, "causal", "The animal didn't cross the street"),
)


def _set(at: AppTest, index: int) -> None:
    d_model, num_heads, mask_type, tokens = CONFIGS[index % len(CONFIGS)]
    at.number_input(key="d_model").set_value(d_model)
    at.number_input(key="num_heads").set_value(num_heads)
    at.selectbox(key="mask_type").set_value(mask_type)
    at.text_area(key="tokens").set_value(tokens)
    at.number_input(key="seed").set_value(index % 7)


def _rss_mb() -> float:
    gc.collect()
    return psutil.Process().memory_info().rss / 2**20


@pytest.mark.slow
@pytest.mark.timeout(900)  # a guard against a hang, not a speed check: a busy machine may take minutes
def test_rss_stays_flat_over_500_reruns():
    at = AppTest.from_file(SCRIPT, default_timeout=60)
    at.query_params.update({"d_model": "64", "num_heads": "4", "tokens": "the cat sat on the mat", "window": "2"})
    at.run()
    for index in range(2 * len(CONFIGS)):  # warm-up: every configuration, every code path, twice
        _set(at, index)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    baseline = _rss_mb()
    samples = [(0, baseline)]
    start = time.monotonic()
    for rerun in range(1, RERUNS + 1):
        _set(at, rerun)
        at.run()
        if at.exception or at.error:
            raise AssertionError(f"rerun {rerun}: {[e.value for e in [*at.exception, *at.error]]}")
        if rerun % SAMPLE_EVERY == 0:
            samples.append((rerun, _rss_mb()))
    elapsed = time.monotonic() - start
    growth = samples[-1][1] - baseline
    second_half = samples[-1][1] - dict(samples)[RERUNS // 2]
    lines = [
        f"soak: {RERUNS} reruns of playground.py (AppTest, in-process), {len(CONFIGS)} configurations, "
        f"seed changing every rerun; {elapsed:.1f} s ({1000 * elapsed / RERUNS:.0f} ms a rerun)",
        f"RSS after warm-up: {baseline:.1f} MB; after {RERUNS} reruns: {samples[-1][1]:.1f} MB; "
        f"growth {growth:+.1f} MB (bound {GROWTH_BOUND_MB:.0f} MB); reruns 250..500: {second_half:+.1f} MB "
        f"(bound {SECOND_HALF_BOUND_MB:.0f} MB)",
        "rerun  RSS MB",
        *(f"{rerun:5d}  {rss:7.1f}" for rerun, rss in samples),
    ]
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "soak.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    assert growth < GROWTH_BOUND_MB
    assert second_half < SECOND_HALF_BOUND_MB
