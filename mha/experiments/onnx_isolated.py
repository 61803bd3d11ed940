"""Lab 12's export, checks and timings in a child process, so that the server never loads ``onnx``/``onnxruntime``.

``torch.onnx.export(..., verbose=True)`` prints the whole graph on the process's stdout (from C++: it cannot be
redirected from Python) and warns twice (the exporter's deprecation, the tracer's notes on our shape checks);
ONNX Runtime starts threads of its own. So the work runs in a fresh Python process (``python -m
mha.experiments.onnx_isolated check|time FOLDER``): the layer's weights and input go in as ``FOLDER/input.pt``,
the result comes back as ``FOLDER/result.json`` (and the exported graph as ``FOLDER/layer.onnx``); the child's
stdout and stderr are dropped (quoted in the error if it fails). Like :mod:`mha.experiments.isolated`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch import Tensor

from mha.experiments.onnx_export import (
    CHECK_LENGTHS,
    EmptyRowCheck,
    GraphNode,
    LengthCheck,
    MaskedSelfAttention,
    ReshapeCheck,
    RuntimeTiming,
    check_lengths,
    check_masks,
    empty_row_check,
    export_onnx,
    graph_nodes,
    measure_runtimes_steady,
    onnx_session,
    wrong_reshape_check,
)
from mha.experiments.timing import Steady, Timing, steady_from_json
from mha.module import MultiHeadAttention

__all__ = ["ExportReport", "IsolatedExportError", "check_export_isolated", "main", "run_lengths", "time_isolated"]

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 300.0


class IsolatedExportError(RuntimeError):
    """The child process failed or took too long; the message quotes the end of its output."""


@dataclass(frozen=True)
class ExportReport:
    """Everything lab 12 shows about one exported layer."""

    export_length: int
    opset: int
    versions: dict[str, str]  # torch, onnx, onnxruntime
    model_bytes: int
    nodes: tuple[GraphNode, ...]
    lengths: tuple[LengthCheck, ...]  # every key allowed, at the export's length and at lengths it never saw
    causal: LengthCheck  # a causal keep-mask as the graph's second input
    empty_row: EmptyRowCheck
    reshape: ReshapeCheck


def run_lengths(export_length: int) -> tuple[int, ...]:
    """The export's length, then two of :data:`CHECK_LENGTHS` it never saw."""
    return (export_length, *[n for n in CHECK_LENGTHS if n != export_length][:2])


def _layer_file(folder: Path, layer: MultiHeadAttention, **extra: object) -> None:
    state = {name: value.detach().cpu().float() for name, value in layer.state_dict().items()}
    torch.save({"state": state, "d_model": layer.d_model, "num_heads": layer.num_heads, **extra}, folder / "input.pt")


def _run_child(task: str, folder: Path, timeout_s: float) -> dict:
    from mha.threads import THREADS_ENV, thread_cap

    env = {**os.environ, THREADS_ENV: str(thread_cap())}  # the child uses as many threads as the server does
    try:
        child = subprocess.run(
            [sys.executable, "-m", "mha.experiments.onnx_isolated", task, str(folder)],
            capture_output=True,
            text=True,
            cwd=REPO,
            env=env,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        raise IsolatedExportError(f"the export took longer than {timeout_s:.0f} s") from error
    if child.returncode != 0:
        raise IsolatedExportError(f"the export failed (exit {child.returncode}): {child.stderr[-2000:]}")
    return json.loads((folder / "result.json").read_text(encoding="utf-8"))


def check_export_isolated(
    layer: MultiHeadAttention, x: Tensor, timeout_s: float = TIMEOUT_S
) -> tuple[ExportReport, bytes]:
    """Export ``layer`` at ``x`` (1, L, D) and check the graph in ONNX Runtime, in a child process.

    Returns:
        The report and the exported model's bytes (float32, a dynamic L, inputs ``x`` and ``keep``).

    Raises:
        IsolatedExportError: the child exited with an error or ran past ``timeout_s``.
    """
    with tempfile.TemporaryDirectory(prefix="onnx-export-") as name:
        folder = Path(name)
        _layer_file(folder, layer, x=x.detach().cpu().float())
        data = _run_child("check", folder, timeout_s)
        return _report_from_json(data), (folder / "layer.onnx").read_bytes()


def time_isolated(
    layer: MultiHeadAttention, lengths: list[int], repeats: int, timeout_s: float = TIMEOUT_S
) -> Steady[list[RuntimeTiming]]:
    """:func:`mha.experiments.onnx_export.measure_runtimes_steady` in a child process (see the module docstring).

    Raises:
        IsolatedExportError: the child exited with an error or ran past ``timeout_s``.
    """
    with tempfile.TemporaryDirectory(prefix="onnx-timing-") as name:
        folder = Path(name)
        _layer_file(folder, layer, lengths=[int(n) for n in lengths], repeats=int(repeats))
        data = _run_child("time", folder, timeout_s)
    return steady_from_json(
        data, lambda row: RuntimeTiming(row["length"], Timing(**row["torch"]), Timing(**row["onnx"]))
    )


def _report_from_json(data: dict) -> ExportReport:
    return ExportReport(
        export_length=data["export_length"],
        opset=data["opset"],
        versions=dict(data["versions"]),
        model_bytes=data["model_bytes"],
        nodes=tuple(GraphNode(**node) for node in data["nodes"]),
        lengths=tuple(LengthCheck(**check) for check in data["lengths"]),
        causal=LengthCheck(**data["causal"]),
        empty_row=EmptyRowCheck(**data["empty_row"]),
        reshape=ReshapeCheck(**data["reshape"]),
    )


def _load_layer(data: dict) -> MultiHeadAttention:
    layer = MultiHeadAttention(int(data["d_model"]), int(data["num_heads"]))
    layer.load_state_dict(data["state"])
    return layer.eval().requires_grad_(False)


def _check(folder: Path, data: dict) -> dict:
    import onnx
    import onnxruntime

    layer, x = _load_layer(data), data["x"]
    length = x.size(1)
    model_bytes = export_onnx(
        MaskedSelfAttention(layer), (x, torch.ones(1, 1, length, length, dtype=torch.bool, device="cpu"))
    )
    (folder / "layer.onnx").write_bytes(model_bytes)
    session = onnx_session(model_bytes)
    report = ExportReport(
        export_length=length,
        opset=max(entry.version for entry in onnx.load_from_string(model_bytes).opset_import),
        versions={"torch": torch.__version__, "onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__},
        model_bytes=len(model_bytes),
        nodes=tuple(graph_nodes(model_bytes)),
        lengths=tuple(check_lengths(layer, session, x, run_lengths(length))),
        causal=check_masks(layer, session, CHECK_LENGTHS[1], scale=float(x.std())),
        empty_row=empty_row_check(layer, session, CHECK_LENGTHS[0]),
        reshape=wrong_reshape_check(layer, x),
    )
    return asdict(report)


def _time(data: dict) -> dict:
    layer = _load_layer(data)
    session = onnx_session(export_onnx(MaskedSelfAttention(layer), _example(layer)))
    return asdict(measure_runtimes_steady(layer, session, data["lengths"], data["repeats"]))


def _example(layer: MultiHeadAttention, length: int = 8) -> tuple[Tensor, Tensor]:
    x = torch.randn(1, length, layer.d_model, generator=torch.Generator().manual_seed(0), device="cpu")  # (1, L, D)
    return x, torch.ones(1, 1, length, length, dtype=torch.bool, device="cpu")


def main() -> None:
    """The child: ``check|time FOLDER``; reads ``FOLDER/input.pt``, writes ``FOLDER/result.json``."""
    from mha.threads import apply_thread_cap

    apply_thread_cap()
    task, folder = sys.argv[1], Path(sys.argv[2])
    if task not in ("check", "time"):
        raise SystemExit(f"usage: python -m mha.experiments.onnx_isolated check|time FOLDER, got {task!r}")
    data = torch.load(folder / "input.pt", weights_only=True)
    result = _check(folder, data) if task == "check" else _time(data)
    (folder / "result.json").write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    main()
