"""The tutorial's deployment check, live: export our ``MultiHeadAttention`` to ONNX, compare ONNX Runtime and PyTorch.

Shape legend: B batch (1 here), H heads, L tokens, D = d_model.

The tutorial (6.3): when the layer goes to ONNX Runtime or TensorRT, check that its transposes and reshapes are
supported, that the sequence length may vary, and compare a self-made implementation's outputs with a reference
first. So: the layer is exported with ``torch.onnx.export`` (a dynamic sequence length; the bool keep-mask as a
second input), the graph's operators are listed next to the lines of ``mha/`` they were traced from, the graph
runs in ONNX Runtime (CPU) at lengths it never saw, and the differences are measured.

The exporter is PyTorch's TorchScript exporter (``dynamo=False``): it records where each node came from (with
``verbose=True`` every node's ``doc_string`` holds the Python stack it was traced at) and needs no package
beyond ``onnx``. The newer ``torch.export``-based exporter stops at our layer's masked softmax: ``if not
empty_rows.any()`` (:func:`mha.functional.masked_softmax`) branches on the data, which ``torch.export`` refuses
to guess. The tracer does not refuse: it records the branch the *example* took. With an ordinary mask at
export, a query row with no key left runs the plain softmax in the graph and gives NaN where PyTorch gives zeros
(:func:`empty_row_check` shows it); an example that has such a row records the other branch, which is right for
every mask.

``onnx`` and ``onnxruntime`` are imported inside the functions that need them: nothing else in the app loads
them. The page runs all of this in a child process (:mod:`mha.experiments.onnx_isolated`), which keeps the
exporter's printout and warnings out of the server's log.
"""

from __future__ import annotations

import io
import linecache
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor, nn

from mha.experiments.reshape import forward_view_only
from mha.experiments.timing import GrowthBreak, Steady, Timing, growth_breaks, measure_steady, time_calls
from mha.masks import causal_mask
from mha.module import MultiHeadAttention

__all__ = [
    "CHECK_LENGTHS",
    "TIMING_LENGTHS",
    "TOLERANCE",
    "EmptyRowCheck",
    "GraphNode",
    "LengthCheck",
    "MaskedSelfAttention",
    "ReshapeCheck",
    "RuntimeTiming",
    "ViewOnlySelfAttention",
    "check_lengths",
    "check_masks",
    "empty_row_check",
    "export_onnx",
    "graph_nodes",
    "measure_runtimes_steady",
    "onnx_session",
    "run_onnx",
    "wrong_reshape_check",
]

TOLERANCE = 1e-5  # max |ONNX Runtime - PyTorch| in float32, for outputs of size ~1 (scaled up for larger ones)
CHECK_LENGTHS = (3, 37, 100)  # lengths the graph is run at besides the export's (two of them; never the export's)
TIMING_LENGTHS = (16, 64, 256)
_ENGINE = Path(__file__).resolve().parents[1]  # mha/
_OWN_FOLDER = Path(__file__).resolve().parent  # mha/experiments/: the wrappers, not the layer
_FRAME = re.compile(r"^(?P<path>.+)\((?P<line>\d+)\): (?P<function>\S+)$")


class MaskedSelfAttention(nn.Module):
    """Self-attention through our layer as ONNX sees it: ``(x, keep) -> (output, weights)``.

    Shape:
        x (1, L, D), keep (1, 1, L, L) bool (True = may attend) -> output (1, L, D), weights (1, H, L, L).
    """

    def __init__(self, layer: MultiHeadAttention) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, x: Tensor, keep: Tensor) -> tuple[Tensor, Tensor]:
        return self.layer(x, x, x, keep)


class ViewOnlySelfAttention(nn.Module):
    """Lab 3's bug (heads split with ``view`` alone, :func:`mha.experiments.reshape.forward_view_only`) as a module.

    Shape:
        x (1, L, D) -> output (1, L, D), weights (1, H, L, L).
    """

    def __init__(self, layer: MultiHeadAttention) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        return forward_view_only(self.layer, x)


def export_onnx(module: nn.Module, example: tuple[Tensor, ...], dynamic: bool = True) -> bytes:
    """``torch.onnx.export`` (TorchScript exporter) of ``module`` at ``example``; the model's bytes.

    Inputs are named ``x`` (and ``keep`` when the example has a mask), outputs ``output`` and ``weights``. With
    ``dynamic`` the sequence length L is a free dimension of every input and output; without it the graph
    accepts the example's length only. ``verbose=True`` keeps each node's source stack in its ``doc_string``
    (and prints the graph to stdout: call it in a child process where that matters).
    """
    names = ["x", "keep"][: len(example)]
    axes = {"x": {1: "L"}, "keep": {2: "L", 3: "L"}, "output": {1: "L"}, "weights": {2: "L", 3: "L"}}
    buffer = io.BytesIO()
    with warnings.catch_warnings():  # the legacy exporter's deprecation note and the tracer's notes on our checks
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module.eval(),
            example,
            buffer,
            dynamo=False,
            verbose=True,
            input_names=names,
            output_names=["output", "weights"],
            dynamic_axes={name: axes[name] for name in [*names, "output", "weights"]} if dynamic else None,
        )
    return buffer.getvalue()


@dataclass(frozen=True)
class GraphNode:
    """One operator of the exported graph and the line of ``mha/`` it was traced from (``""``/0: none recorded)."""

    op: str  # ONNX operator, e.g. "Reshape"
    name: str  # the node's name in the graph, e.g. "/layer/Reshape_1"
    file: str  # e.g. "mha/module.py"
    line: int
    code: str  # that line of the source, stripped


def _source_line(doc_string: str) -> tuple[str, int, str]:
    """The innermost frame of ``doc_string`` (a traced node's Python stack, innermost first) inside ``mha/``."""
    for frame in doc_string.splitlines():
        match = _FRAME.match(frame.strip())
        if match is None:
            continue
        path = Path(match["path"]).resolve()
        if path.is_relative_to(_ENGINE) and not path.is_relative_to(_OWN_FOLDER):
            line = int(match["line"])
            return path.relative_to(_ENGINE.parent).as_posix(), line, linecache.getline(str(path), line).strip()
    return "", 0, ""


def graph_nodes(model_bytes: bytes) -> list[GraphNode]:
    """Every operator of an exported graph except ``Constant``, in graph order, with its source line."""
    import onnx

    graph = onnx.load_from_string(model_bytes).graph
    return [
        GraphNode(node.op_type, node.name, *_source_line(node.doc_string))
        for node in graph.node
        if node.op_type != "Constant"
    ]


def onnx_session(model_bytes: bytes, threads: int | None = None):  # -> onnxruntime.InferenceSession
    """An ONNX Runtime session on the CPU, with ``threads`` intra-op threads (PyTorch's count by default)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads or torch.get_num_threads()
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # no busy-waiting on a shared CPU
    options.log_severity_level = 3  # errors only
    return onnxruntime.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])


def run_onnx(session, x: Tensor, keep: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Run an exported graph in ONNX Runtime: ``(output, weights)`` as float32 tensors."""
    feeds = {"x": x.detach().cpu().float().numpy()}
    if keep is not None:
        feeds["keep"] = keep.cpu().numpy()
    output, weights = session.run(["output", "weights"], feeds)
    return torch.from_numpy(output), torch.from_numpy(weights)


def _all_keys(length: int) -> Tensor:
    return torch.ones(1, 1, length, length, dtype=torch.bool, device="cpu")  # (1, 1, L, L)


def _inputs(length: int, d_model: int, scale: float, seed: int) -> Tensor:
    """(1, L, D) standard normal numbers times ``scale``, from a private generator."""
    return torch.randn(1, length, d_model, generator=torch.Generator().manual_seed(seed + length), device="cpu") * scale


def _max_abs(a: Tensor, b: Tensor) -> float:
    """max |a - b| (NaN when either holds a NaN where the other does not: a difference that matters)."""
    return float((a.float() - b.float()).abs().max())


@dataclass(frozen=True)
class LengthCheck:
    """ONNX Runtime against PyTorch at one sequence length."""

    length: int
    seen_at_export: bool
    max_abs_output: float
    max_abs_weights: float
    output_scale: float  # max |PyTorch output|: the tolerance grows with it


def check_lengths(
    layer: MultiHeadAttention, session, x: Tensor, lengths: Sequence[int], seed: int = 0
) -> list[LengthCheck]:
    """The graph at each length (the export's own input ``x`` at its length, seeded inputs of its scale elsewhere),
    every key allowed, against the layer in PyTorch."""
    export_length, d_model = x.size(1), x.size(2)
    scale = float(x.float().std())
    checks = []
    for length in lengths:
        inputs = x.float() if length == export_length else _inputs(length, d_model, scale, seed)
        keep = _all_keys(length)
        with torch.inference_mode():
            output, weights = layer(inputs, inputs, inputs, keep)  # (1, L, D), (1, H, L, L)
        onnx_output, onnx_weights = run_onnx(session, inputs, keep)
        checks.append(
            LengthCheck(
                length,
                length == export_length,
                _max_abs(onnx_output, output),
                _max_abs(onnx_weights, weights),
                float(output.abs().max()),
            )
        )
    return checks


def check_masks(layer: MultiHeadAttention, session, length: int, scale: float = 1.0, seed: int = 0) -> LengthCheck:
    """The graph with a causal keep-mask at ``length`` against PyTorch with the same mask (the mask is an input)."""
    inputs = _inputs(length, layer.d_model, scale, seed)
    keep = causal_mask(length).view(1, 1, length, length)  # (1, 1, L, L)
    with torch.inference_mode():
        output, weights = layer(inputs, inputs, inputs, keep)
    onnx_output, onnx_weights = run_onnx(session, inputs, keep)
    return LengthCheck(
        length, False, _max_abs(onnx_output, output), _max_abs(onnx_weights, weights), float(output.abs().max())
    )


@dataclass(frozen=True)
class EmptyRowCheck:
    """A query row with no key it may attend to: PyTorch gives zero weights; what do the two exported graphs give?"""

    length: int
    row: int
    torch_row_sum: float  # the row's weights summed in PyTorch: 0
    plain_row: str  # what the graph exported with an ordinary mask gives: "nan" or "zeros" (or "other")
    plain_max_abs: float  # its max |difference| to PyTorch over the other rows' weights
    recorded_row: str  # the graph exported from an example with an empty row
    recorded_max_abs: float  # its max |difference| to PyTorch over all outputs and weights


def _row_kind(row: Tensor) -> str:
    if bool(torch.isnan(row).any()):
        return "nan"
    return "zeros" if float(row.abs().max()) == 0.0 else "other"


def empty_row_check(layer: MultiHeadAttention, plain_session, length: int, seed: int = 0) -> EmptyRowCheck:
    """Block every key of the first query (a causal mask whose row 0 is empty too), run both exports.

    ``plain_session`` is the graph exported with an ordinary (all-True) mask; the other one is exported here from
    an example that has an empty row, so that the tracer records :func:`mha.functional.masked_softmax`'s safe
    branch.
    """
    inputs = _inputs(length, layer.d_model, 1.0, seed)
    keep = causal_mask(length).view(1, 1, length, length).clone()  # (1, 1, L, L)
    row = 0
    keep[..., row, :] = False
    with torch.inference_mode():
        output, weights = layer(inputs, inputs, inputs, keep)
    _, plain_weights = run_onnx(plain_session, inputs, keep)
    recorded = onnx_session(export_onnx(MaskedSelfAttention(layer), (inputs, keep)))
    recorded_output, recorded_weights = run_onnx(recorded, inputs, keep)
    others = torch.arange(length, device="cpu") != row
    return EmptyRowCheck(
        length=length,
        row=row,
        torch_row_sum=float(weights[0, :, row].sum()),
        plain_row=_row_kind(plain_weights[0, :, row]),
        plain_max_abs=_max_abs(plain_weights[0][:, others], weights[0][:, others]),
        recorded_row=_row_kind(recorded_weights[0, :, row]),
        recorded_max_abs=max(_max_abs(recorded_output, output), _max_abs(recorded_weights, weights)),
    )


@dataclass(frozen=True)
class ReshapeCheck:
    """Lab 3's wrong reshape exported: both runtimes agree with each other, and both are wrong."""

    length: int
    onnx_vs_torch_wrong: float  # max |ONNX Runtime - PyTorch|, both with the bug: tiny
    wrong_vs_right: float  # max |the bug's output - the layer's|: large
    output_scale: float


def wrong_reshape_check(layer: MultiHeadAttention, x: Tensor) -> ReshapeCheck:
    """Export :class:`ViewOnlySelfAttention` at ``x`` (1, L, D) and run it in ONNX Runtime and in PyTorch."""
    x = x.float()
    session = onnx_session(export_onnx(ViewOnlySelfAttention(layer), (x,)))
    onnx_output, _ = run_onnx(session, x)
    with torch.inference_mode():
        wrong, _ = forward_view_only(layer, x)  # (1, L, D)
        right, _ = layer(x, x, x)  # (1, L, D)
    return ReshapeCheck(x.size(1), _max_abs(onnx_output, wrong), _max_abs(wrong, right), float(right.abs().max()))


@dataclass(frozen=True)
class RuntimeTiming:
    """Seconds per forward pass at one length, every key allowed: the layer in PyTorch and its graph in ONNX Runtime."""

    length: int
    torch: Timing
    onnx: Timing

    @property
    def ratio(self) -> float:
        """PyTorch's median over ONNX Runtime's (>1: ONNX Runtime is faster)."""
        return self.torch.median_s / self.onnx.median_s


def _work(d_model: int, length: int) -> float:
    """Matmul FLOPs of one self-attention call: four projections, QKᵀ and weights·V."""
    return 2 * 4 * length * d_model * d_model + 2 * 2 * length * length * d_model


def measure_runtimes_steady(
    layer: MultiHeadAttention, session, lengths: Sequence[int] = TIMING_LENGTHS, repeats: int = 5, seed: int = 0
) -> Steady[list[RuntimeTiming]]:
    """Time the layer in PyTorch (eager, inference mode) and the graph in ONNX Runtime at each length, in turns,
    medians and spreads (:func:`mha.experiments.timing.time_calls`); measured again while a series' times break
    the growth of its work."""
    calls = {}
    for length in lengths:
        x = _inputs(length, layer.d_model, 1.0, seed)
        keep = _all_keys(length)
        calls[length] = [lambda x=x, keep=keep: layer(x, x, x, keep), lambda x=x, keep=keep: run_onnx(session, x, keep)]

    def measure() -> list[RuntimeTiming]:
        return [RuntimeTiming(length, *time_calls(pair, repeats)) for length, pair in calls.items()]

    def check(rows: list[RuntimeTiming]) -> list[GrowthBreak]:
        sizes = [row.length for row in rows]
        work = [_work(layer.d_model, n) for n in sizes]
        return [
            *growth_breaks("torch", sizes, [row.torch.median_s for row in rows], work),
            *growth_breaks("onnx", sizes, [row.onnx.median_s for row in rows], work),
        ]

    return measure_steady(measure, check)
