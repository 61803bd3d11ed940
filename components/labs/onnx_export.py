"""Lab 12: export the layer you have to ONNX, run it in ONNX Runtime, and check it against PyTorch."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components import cache
from components.i18n import t
from components.labs.common import format_bytes, lab_header, table_height
from components.labs.measure import Measured, measure_on_click, measured, repeats_slider, show_measurement_notes
from components.labs.session_layer import layer_run, session_run, show_layer_caption
from components.safe_text import md_escape
from mha.config import AttentionConfig
from mha.experiments.onnx_export import TIMING_LENGTHS, TOLERANCE, GraphNode, LengthCheck
from mha.experiments.onnx_isolated import ExportReport, IsolatedExportError, check_export_isolated, time_isolated

__all__ = ["EXPORT_CODE", "length_frame", "render", "source_frame", "timing_frame"]

_CHECKED = "onnx_checked"  # the config whose export the learner asked for

# Code shown to the learner: what the lab runs (identifiers and shape comments only: nothing to translate).
EXPORT_CODE = """layer = MaskedSelfAttention(model)              # forward(x, keep) -> model(x, x, x, keep)
torch.onnx.export(
    layer, (x, keep), "layer.onnx", dynamo=False, verbose=True,
    input_names=["x", "keep"], output_names=["output", "weights"],
    dynamic_axes={"x": {1: "L"}, "keep": {2: "L", 3: "L"},     # x (1, L, D), keep (1, 1, L, L)
                  "output": {1: "L"}, "weights": {2: "L", 3: "L"}},
)
session = onnxruntime.InferenceSession("layer.onnx", providers=["CPUExecutionProvider"])
output, weights = session.run(None, {"x": x.numpy(), "keep": keep.numpy()})"""


@cache.results(max_entries=4)
def _checked(config: AttentionConfig) -> tuple[ExportReport, bytes]:
    """The export of the run's layer and its checks (a child process; cached and shared per layer and input)."""
    run = layer_run(config)
    return check_export_isolated(run.model, run.x)


@cache.results(ttl=600, max_entries=8)
def timing_frame(config: AttentionConfig, repeats: int) -> Measured[pd.DataFrame]:
    """Both runtimes' times per length (columns ``L, runtime, ms, ms_low, ms_high``), kept only when they pass."""
    run = layer_run(config)
    steady = time_isolated(run.model, list(TIMING_LENGTHS), repeats)
    rows = [
        {"L": row.length, "runtime": name, "ms": timing.median_s * 1e3, "ms_low": timing.low_s * 1e3,
         "ms_high": timing.high_s * 1e3}
        for row in steady.result
        for name, timing in (("torch", row.torch), ("onnx", row.onnx))
    ]  # fmt: skip
    return measured(steady, pd.DataFrame(rows))


def _tolerance(scale: float) -> float:
    """:data:`TOLERANCE` for outputs of size up to 1, growing with larger ones (float32 keeps ~7 digits)."""
    return TOLERANCE * max(1.0, scale)


def length_frame(checks: tuple[LengthCheck, ...]) -> pd.DataFrame:
    """One row per length: ``L, seen, output, weights, tolerance, ok``."""
    return pd.DataFrame(
        {
            "L": [c.length for c in checks],
            "seen": [c.seen_at_export for c in checks],
            "output": [c.max_abs_output for c in checks],
            "weights": [c.max_abs_weights for c in checks],
            "tolerance": [_tolerance(c.output_scale) for c in checks],
            "ok": [max(c.max_abs_output, c.max_abs_weights) <= _tolerance(c.output_scale) for c in checks],
        }
    )


def source_frame(nodes: tuple[GraphNode, ...]) -> pd.DataFrame:
    """The graph's operators in order, consecutive ones from the same source line together: ``line, code, ops``.

    ``line`` is ``"mha/module.py:77"``, or ``""`` for operators the exporter added without a source line.
    """
    rows: list[dict[str, object]] = []
    for node in nodes:
        line = f"{node.file}:{node.line}" if node.file else ""
        if rows and rows[-1]["line"] == line:
            rows[-1]["ops"].append(node.op)
        else:
            rows.append({"line": line, "code": node.code, "ops": [node.op]})
    return pd.DataFrame([{**row, "ops": " · ".join(row["ops"])} for row in rows])


def _verdict(ok: bool) -> str:
    return "✓" if ok else "✗"


def _render_request(config: AttentionConfig) -> bool:
    """The button; whether this layer's export was asked for (then it is computed or read from the cache)."""
    if st.button(t("lab.onnx.export"), key="onnx_export", type="primary"):
        st.session_state[_CHECKED] = repr(config)
    if st.session_state.get(_CHECKED) != repr(config):
        st.info(t("lab.onnx.press_export"))
        return False
    return True


def _render_summary(report: ExportReport, model_bytes: bytes) -> None:
    ops = [node.op for node in report.nodes]
    cols = st.columns(4)
    cols[0].metric(t("lab.onnx.metric.operators"), len(ops))
    cols[1].metric(t("lab.onnx.metric.reshapes"), f"{ops.count('Reshape')} · {ops.count('Transpose')}")
    cols[2].metric(t("lab.onnx.metric.opset"), report.opset)
    cols[3].metric(t("lab.onnx.metric.size"), format_bytes(report.model_bytes))
    versions = report.versions
    st.caption(t("lab.onnx.versions", torch=versions["torch"], onnx=versions["onnx"], ort=versions["onnxruntime"]))
    st.download_button(
        t("lab.onnx.download"),
        model_bytes,
        file_name="layer.onnx",
        mime="application/octet-stream",
        key="onnx_download",
    )


def _render_lengths(report: ExportReport) -> None:
    st.subheader(t("lab.onnx.lengths_title"))
    frame = length_frame(report.lengths)
    st.dataframe(
        pd.DataFrame(
            {
                "L": frame["L"],
                t("lab.onnx.col.seen"): [t("lab.onnx.seen" if s else "lab.onnx.unseen") for s in frame["seen"]],
                t("lab.onnx.col.output"): frame["output"].map("{:.2e}".format),
                t("lab.onnx.col.weights"): frame["weights"].map("{:.2e}".format),
                t("lab.onnx.col.tolerance"): frame["tolerance"].map("{:.0e}".format),
                t("lab.onnx.col.ok"): frame["ok"].map(_verdict),
            }
        ),
        hide_index=True,
    )
    if frame["ok"].all():
        st.success(t("lab.onnx.lengths_ok", count=len(frame), export=report.export_length))
    else:
        st.error(t("lab.onnx.lengths_bad"))


def _render_graph(report: ExportReport) -> None:
    st.subheader(t("lab.onnx.graph_title"))
    frame = source_frame(report.nodes)
    st.dataframe(
        pd.DataFrame(
            {
                t("lab.onnx.col.line"): [line or t("lab.onnx.no_line") for line in frame["line"]],
                t("lab.onnx.col.code"): frame["code"],
                t("lab.onnx.col.ops"): frame["ops"],
            }
        ),
        hide_index=True,
        height=table_height(len(frame), most=25),
        column_config={t("lab.onnx.col.code"): st.column_config.TextColumn(width="large")},
    )
    st.caption(t("lab.onnx.graph_caption"))
    with st.expander(t("lab.onnx.nodes_title")):
        st.dataframe(
            pd.DataFrame(
                {
                    t("lab.onnx.col.op"): [node.op for node in report.nodes],
                    t("lab.onnx.col.node"): [node.name for node in report.nodes],
                    t("lab.onnx.col.line"): [f"{n.file}:{n.line}" if n.file else "—" for n in report.nodes],
                }
            ),
            hide_index=True,
        )


def _render_masks(report: ExportReport) -> None:
    st.subheader(t("lab.onnx.mask_title"))
    causal = report.causal
    diff = max(causal.max_abs_output, causal.max_abs_weights)
    tolerance = _tolerance(causal.output_scale)
    verdict = st.success if diff <= tolerance else st.error
    verdict(t("lab.onnx.causal", length=causal.length, diff=diff, tol=tolerance))
    empty = report.empty_row
    st.markdown(t("lab.onnx.empty_intro", row=empty.row, length=empty.length))
    said = {kind: t(f"lab.onnx.row.{kind}") for kind in ("nan", "zeros", "other")}
    if empty.plain_row == "zeros":
        st.success(t("lab.onnx.empty_plain_ok"))
    else:
        st.warning(t("lab.onnx.empty_plain", got=said[empty.plain_row], others=empty.plain_max_abs))
    st.markdown(t("lab.onnx.empty_recorded", got=said[empty.recorded_row], diff=empty.recorded_max_abs))


def _render_reshape(report: ExportReport) -> None:
    st.subheader(t("lab.onnx.reshape_title"))
    check = report.reshape
    left, right = st.columns(2)
    left.metric(t("lab.onnx.metric.same_bug"), f"{check.onnx_vs_torch_wrong:.2e}")
    right.metric(t("lab.onnx.metric.wrong_right"), f"{check.wrong_vs_right:.3g}")
    st.markdown(t("lab.onnx.reshape_text", length=check.length))


def _runtime_name(name: str) -> str:
    return t(f"lab.onnx.runtime.{name}")


def _render_timing(config: AttentionConfig) -> None:
    st.subheader(t("lab.onnx.timing_title"))
    st.caption(t("lab.onnx.timing_caption", lengths=", ".join(map(str, TIMING_LENGTHS))))
    repeats = repeats_slider(st, "onnx_repeats")
    try:
        result = measure_on_click("onnx", (repr(config), repeats), lambda: timing_frame(config, repeats))
    except IsolatedExportError as error:
        st.error(t("lab.onnx.failed", message=md_escape(str(error), limit=300)))
        return
    if result is None:
        return
    frame = result.value
    show_measurement_notes(result, repeats, _runtime_name)
    medians = frame.pivot(index="L", columns="runtime", values="ms")
    spread = frame.assign(text=[f"{a:.3f}–{b:.3f}" for a, b in zip(frame["ms_low"], frame["ms_high"], strict=True)])
    spreads = spread.pivot(index="L", columns="runtime", values="text")
    st.dataframe(
        pd.DataFrame(
            {
                "L": medians.index,
                t("lab.onnx.col.median", runtime=_runtime_name("torch")): medians["torch"].map("{:.3f}".format).values,
                t("lab.onnx.col.spread", runtime=_runtime_name("torch")): spreads["torch"].values,
                t("lab.onnx.col.median", runtime=_runtime_name("onnx")): medians["onnx"].map("{:.3f}".format).values,
                t("lab.onnx.col.spread", runtime=_runtime_name("onnx")): spreads["onnx"].values,
                t("lab.onnx.col.ratio"): [f"{r:.2f}×" for r in (medians["torch"] / medians["onnx"])],
            }
        ),
        hide_index=True,
    )
    st.caption(t("lab.onnx.ratio_caption"))


def render() -> None:
    """Draw the lab."""
    lab_header("onnx")
    session = session_run()
    if session is None:
        return
    config, run = session
    show_layer_caption(run)
    st.code(EXPORT_CODE, language="python")
    if _render_request(config):
        try:
            with st.spinner(t("lab.onnx.exporting")):
                report, model_bytes = _checked(config)
        except IsolatedExportError as error:
            st.error(t("lab.onnx.failed", message=md_escape(str(error), limit=300)))
        else:
            _render_summary(report, model_bytes)
            _render_lengths(report)
            _render_graph(report)
            _render_masks(report)
            _render_reshape(report)
    _render_timing(config)
