"""Labs 13 and 14 measure in a child process and say, as it goes, which part they measure: the child's progress reports
reach the parent in order, each before the part it names, and the result comes after them."""

from __future__ import annotations

import pytest

from components.i18n import t
from components.labs import efficient_cost, flash
from mha.experiments.efficient_cost import measure_efficient_isolated
from mha.experiments.isolated import IsolatedMeasurementError, run_isolated

FLASH = {"lengths": [16, 32], "block": 8, "num_heads": 1, "head_dim": 8, "causal": True, "repeats": 3}


def test_the_flash_measurement_reports_each_part_before_its_result():
    reports = []
    data = run_isolated("flash", FLASH, progress=lambda **fields: reports.append(fields))
    # the memory at each length, then the backends at the longest: three parts, told as each starts
    assert reports == [
        {"part": "memory", "length": 16, "done": 0, "total": 3},
        {"part": "memory", "length": 32, "done": 1, "total": 3},
        {"part": "backends", "length": 32, "done": 2, "total": 3},
    ]
    assert [(row["method"], row["length"]) for row in data["memory"]] == [
        ("full", 16), ("tiled", 16), ("full", 32), ("tiled", 32)
    ]  # fmt: skip
    assert [row["backend"] for row in data["backends"]] == ["math", "flash", "efficient", "cudnn"]


def test_the_efficient_measurement_reports_its_warm_up_times_and_memory_per_attempt():
    reports = []
    steady = measure_efficient_isolated([32, 64], 1, 8, 16, 3, progress=lambda **fields: reports.append(fields))
    total = 1 + 2 + 2  # the warm-up, the times at two lengths, the memory at two lengths
    timed = [(r["part"], r["length"], r["done"]) for r in reports if r["part"] != "memory"]
    # each attempt (a second one when the times broke their work's growth) counts again from 0
    assert timed == [("warmup", 32, 0), ("time", 32, 1), ("time", 64, 2)] * steady.attempts
    assert [r["attempt"] for r in reports if r["part"] != "memory"] == [a for a in range(1, steady.attempts + 1)
                                                                       for _ in range(3)]  # fmt: skip
    memory = [(r["part"], r["length"], r["done"], r["attempt"]) for r in reports if r["part"] == "memory"]
    assert memory == [("memory", 32, 3, steady.attempts), ("memory", 64, 4, steady.attempts)]
    assert reports[-1]["done"] == total - 1 and {r["total"] for r in reports} == {total}
    assert len(steady.result) == 2 * 5  # two lengths, five methods


def test_a_measurement_past_its_time_is_stopped_and_said():
    with pytest.raises(IsolatedMeasurementError, match="took longer than 0 s"):
        run_isolated("flash", FLASH, timeout_s=0.05)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_progress_is_said_with_its_count_and_what_it_measures_now(lang, monkeypatch):
    monkeypatch.setattr("components.labs.flash.t", lambda key, **kw: t(key, lang=lang, **kw))
    monkeypatch.setattr("components.labs.efficient_cost.t", lambda key, **kw: t(key, lang=lang, **kw))
    said = flash._progress_text(part="backends", length=1024, done=5, total=6)
    assert "5" in said and "6" in said and "1024" in said
    again = efficient_cost._progress_text(part="time", length=256, done=3, total=15, attempt=2)
    first = efficient_cost._progress_text(part="time", length=256, done=3, total=15, attempt=1)
    assert again.startswith(first) and "2" in again[len(first) :] and "3" in again[len(first) :]
