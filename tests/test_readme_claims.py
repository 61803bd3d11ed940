"""README's numbers are the ranges docs/PERFORMANCE.md measured (not their best runs), and README promises
nothing that nothing checks.

The numbers are read from PERFORMANCE.md's tables and notes: when a new measurement changes them there,
README has to follow (or this test says which sentence to change).
"""

from __future__ import annotations

import re
from pathlib import Path

from components.heatmap import VALUE_DECIMALS

REPO = Path(__file__).resolve().parents[1]
README = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())  # one line: sentences wrap anywhere
PERFORMANCE = (REPO / "docs" / "PERFORMANCE.md").read_text(encoding="utf-8")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _table(header_start: str) -> list[dict[str, str]]:
    """The markdown table of PERFORMANCE.md whose header line starts with ``header_start``, as rows by column."""
    lines = PERFORMANCE.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    header = [cell.strip() for cell in lines[start].strip("|").split("|")]
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")), strict=True)))
    return rows


def _numbers(cells: list[str]) -> list[float]:
    return [float(number) for cell in cells for number in _NUMBER.findall(cell)]


def _span(values: list[float], unit: str) -> str:
    return f"{min(values):g}–{max(values):g} {unit}"


def test_training_time_is_the_whole_range_the_bench_measured():
    rows = _table("| task | median time | range |")
    assert len(rows) == 5
    every_run = _span(_numbers([row["range"] for row in rows]), "s")  # 0.9–4.3 s
    medians = _span(_numbers([row["median time"] for row in rows]), "s")
    assert f"in {every_run} at the default sizes (medians {medians} per task" in README


def test_the_worst_request_quotes_its_ranges_over_runs():
    runs = re.search(
        r"four runs gave\s+(\S+) s for the engine's first call.*?and (\S+) s for the page", PERFORMANCE, re.S
    )
    assert runs, "PERFORMANCE.md no longer gives the ranges over runs"
    engine, page = runs.groups()
    memory = _span(_numbers([row["peak RSS, page"] for row in _table("| d_model / heads / tokens / batch |")]), "MiB")
    assert f"cost {page} s of server time for the whole page over four runs" in README
    assert f"(the engine's first call alone {engine} s)" in README
    assert f"and {memory} above the idle process" in README


def test_the_tooltip_precision_is_the_charts():
    words = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
    assert f"the value to {words[VALUE_DECIMALS]} decimals on hover" in README
    assert "exact value on hover" not in README


def test_readme_promises_nothing_about_screenshots_that_nothing_checks():
    assert "never go stale" not in README
    assert "nothing checks that they still match the page, so rerun it after a visible change" in README
