"""The labs' memory measurements in a child process, so that the profiler's output never reaches the server's log.

PyTorch's profiler (the memory half of a measurement) writes its own lines to the process's
stderr: ``USDT: ... profiler_start`` and ``profiler_stop`` on every use and, when it is first used
from a thread other than the one that imported torch (as in a Streamlit script thread),
``External init callback must run in same thread as registerClient``. Once torch is loaded
neither can be switched off from Python. So a measurement runs in a fresh Python process
(``python -m mha.experiments.isolated``): its name and arguments go in as JSON on stdin, and it answers
on stdout one JSON object a line: ``{"progress": {...}}`` for each part of the measurement it finished, then
``{"result": ...}``; its stderr is kept apart and dropped (quoted in the error if the child fails). The child
also runs alone, away from the server's threads.

A lab's measurement is a function of JSON-able keyword arguments that returns a JSON-able value, named in
:data:`MEASUREMENTS` (``"module:function"``, imported only in the child); :func:`run_isolated` calls it. A
function that takes a ``progress`` argument is given one: each call ``progress(**fields)`` (JSON-able values,
say the stage, how many parts are done of how many) reaches ``run_isolated``'s own ``progress`` at once.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
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


def run_isolated(
    measurement: str,
    arguments: dict,
    timeout_s: float = TIMEOUT_S,
    progress: Callable[..., None] | None = None,
):
    """Run the measurement named ``measurement`` (see :data:`MEASUREMENTS`) with ``arguments`` in a child process.

    Args:
        progress: called in this process with the keyword fields of each of the child's progress reports, as
            they come (the measurement's function decides them; one that takes no ``progress`` sends none).

    Returns:
        The function's JSON value, decoded.

    Raises:
        ValueError: an unknown measurement.
        IsolatedMeasurementError: the child exited with an error or ran past ``timeout_s``.
    """
    if measurement not in MEASUREMENTS:
        raise ValueError(f"unknown measurement {measurement!r}; choose one of {', '.join(MEASUREMENTS)}")
    request = {"measurement": measurement, "arguments": arguments}
    with tempfile.TemporaryFile(mode="w+") as errors:  # a file, not a pipe: the profiler's lines never block it
        child = subprocess.Popen(
            [sys.executable, "-m", "mha.experiments.isolated"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            cwd=REPO,
            env={**os.environ, **_QUIET_PROFILER},
        )
        timed_out = threading.Event()
        timer = threading.Timer(timeout_s, lambda: (timed_out.set(), child.kill()))
        timer.start()
        try:
            with contextlib.suppress(BrokenPipeError):  # a child that died at once: its exit status says why
                child.stdin.write(json.dumps(request))
                child.stdin.close()
            result = _read_answers(child.stdout, progress)
            returncode = child.wait()
        finally:
            timer.cancel()
            if child.poll() is None:  # a progress callback raised: the child is not left running
                child.kill()
                child.wait()
            child.stdout.close()
        errors.seek(0)
        stderr = errors.read()
    if timed_out.is_set():
        raise IsolatedMeasurementError(f"the measurement took longer than {timeout_s:.0f} s")
    if returncode != 0:
        raise IsolatedMeasurementError(f"the measurement failed (exit {returncode}): {stderr[-2000:]}")
    if result is None:
        raise IsolatedMeasurementError(f"the measurement sent no result: {stderr[-2000:]}")
    return result["result"]


def _read_answers(stdout, progress: Callable[..., None] | None) -> dict | None:
    """The child's lines: each progress report handed to ``progress``; the result line's object (``None``: none).
    A line that is not one of its answers (a library's own print) is passed over."""
    result = None
    for line in stdout:
        if not line.startswith(('{"progress": ', '{"result": ')):
            continue
        answer = json.loads(line)
        if "progress" in answer:
            if progress is not None:
                progress(**answer["progress"])
        else:
            result = answer
    return result


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
    """The child: read the measurement's name and arguments (JSON on stdin), measure, write its progress reports and
    then the result (one JSON object a line on stdout)."""
    from mha.threads import apply_thread_cap

    apply_thread_cap()
    request = json.loads(sys.stdin.read())
    module_name, function_name = MEASUREMENTS[request["measurement"]].split(":")
    function = getattr(importlib.import_module(module_name), function_name)
    arguments = request["arguments"]
    if "progress" in inspect.signature(function).parameters:
        arguments = {**arguments, "progress": _report}
    result = function(**arguments)
    print(json.dumps({"result": result}), flush=True)


def _report(**fields) -> None:
    """A progress report of the child (JSON-able ``fields``), sent to the parent at once."""
    print(json.dumps({"progress": fields}), flush=True)


if __name__ == "__main__":
    main()
