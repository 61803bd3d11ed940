"""The labs' memory measurements in a child process, so that the profiler's output never reaches the server's log.

PyTorch's profiler (the memory half of a measurement) writes its own lines to the process's
stderr: ``USDT: ... profiler_start`` and ``profiler_stop`` on every use and, when it is first used
from a thread other than the one that imported torch (as in a Streamlit script thread),
``External init callback must run in same thread as registerClient``. Once torch is loaded
neither can be switched off from Python. So a measurement runs in a fresh Python process
(``python -m mha.experiments.isolated``): its name and arguments go in as JSON on stdin, the result
comes back as JSON on stdout, and its stderr is piped back and dropped (quoted in the error if
the child fails). The child also runs alone, away from the server's threads.

A lab's measurement is a function of JSON-able keyword arguments that returns a JSON-able value, named in
:data:`MEASUREMENTS` (``"module:function"``, imported only in the child); :func:`run_isolated` calls it.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

from mha.experiments.complexity import ComplexityRow
from mha.experiments.timing import Steady, steady_from_json

__all__ = ["MEASUREMENTS", "IsolatedMeasurementError", "main", "measure_complexity_isolated", "run_isolated"]

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 240.0
_QUIET_PROFILER = {"KINETO_LOG_LEVEL": "6"}  # above kineto's highest level: quiet at the source too
# name -> "module:function"; the function takes JSON-able keyword arguments and returns a JSON-able value
MEASUREMENTS = {
    "complexity": "mha.experiments.isolated:complexity_as_json",
    "efficient": "mha.experiments.efficient_cost:efficient_as_json",
    "flash": "mha.experiments.flash_cost:flash_cost_as_json",
}


class IsolatedMeasurementError(RuntimeError):
    """The child process failed or took too long; the message quotes the end of its stderr."""


def run_isolated(measurement: str, arguments: dict, timeout_s: float = TIMEOUT_S):
    """Run the measurement named ``measurement`` (see :data:`MEASUREMENTS`) with ``arguments`` in a child process.

    Returns:
        The function's JSON value, decoded.

    Raises:
        ValueError: an unknown measurement.
        IsolatedMeasurementError: the child exited with an error or ran past ``timeout_s``.
    """
    if measurement not in MEASUREMENTS:
        raise ValueError(f"unknown measurement {measurement!r}; choose one of {', '.join(MEASUREMENTS)}")
    request = {"measurement": measurement, "arguments": arguments}
    try:
        child = subprocess.run(
            [sys.executable, "-m", "mha.experiments.isolated"],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            cwd=REPO,
            env={**os.environ, **_QUIET_PROFILER},
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        raise IsolatedMeasurementError(f"the measurement took longer than {timeout_s:.0f} s") from error
    if child.returncode != 0:
        raise IsolatedMeasurementError(f"the measurement failed (exit {child.returncode}): {child.stderr[-2000:]}")
    return json.loads(child.stdout)


def complexity_as_json(**arguments) -> dict:
    """:func:`mha.experiments.complexity.measure_complexity_steady` as JSON (the child's side of lab 6)."""
    from mha.experiments.complexity import measure_complexity_steady

    return asdict(measure_complexity_steady(**arguments))


def measure_complexity_isolated(
    lengths: list[int],
    num_heads: int,
    head_dim: int,
    block: int,
    repeats: int,
    seed: int = 0,
    timeout_s: float = TIMEOUT_S,
) -> Steady[list[ComplexityRow]]:
    """:func:`mha.experiments.complexity.measure_complexity_steady` in a child process (see the module docstring).

    Raises:
        IsolatedMeasurementError: the child exited with an error or ran past ``timeout_s``.
    """
    arguments = {
        "lengths": [int(n) for n in lengths],
        "num_heads": int(num_heads),
        "head_dim": int(head_dim),
        "block": int(block),
        "repeats": int(repeats),
        "seed": int(seed),
    }
    data = run_isolated("complexity", arguments, timeout_s)
    return steady_from_json(data, lambda row: ComplexityRow(**row))


def main() -> None:
    """The child: read the measurement's name and arguments (JSON on stdin), measure, write the result (JSON on
    stdout)."""
    from mha.threads import apply_thread_cap

    apply_thread_cap()
    request = json.loads(sys.stdin.read())
    module_name, function_name = MEASUREMENTS[request["measurement"]].split(":")
    function = getattr(importlib.import_module(module_name), function_name)
    json.dump(function(**request["arguments"]), sys.stdout)


if __name__ == "__main__":
    main()
