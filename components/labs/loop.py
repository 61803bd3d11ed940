"""Lab 5: the tutorials' per-head loop against the fused layer: same numbers, measured speed."""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st
import torch

from components.i18n import t
from components.labs.charts import line_chart
from components.labs.common import lab_header, measurement_slot, show_chart
from mha.experiments.loop_vs_fused import loop_from_fused, measure_loop_vs_fused
from mha.sources.seeded import build_model

__all__ = ["render", "timing_frame"]

D_MODELS = (64, 128, 256, 512)
HEADS = (1, 2, 4, 8, 16)
LENGTHS = (16, 64, 256, 1024)
MAX_REPEATS = 5

# Code shown to the learner: shape comments only, so that nothing in it needs translating.
LOOP_CODE = """class AttentionHead(nn.Module):
    def __init__(self, d_model, d_k):
        self.W_q = nn.Linear(d_model, d_k)
        self.W_k = nn.Linear(d_model, d_k)
        self.W_v = nn.Linear(d_model, d_k)
    def forward(self, q, k, v):
        return attention(self.W_q(q), self.W_k(k), self.W_v(v))   # (B, L, d_k)

heads = nn.ModuleList([AttentionHead(d, d_k) for _ in range(h)])
out = W_o(torch.cat([head(x, x, x) for head in heads], -1))      # (B, L, h * d_k)"""

FUSED_CODE = """q, k, v = (x @ W_qkv.T).chunk(3, -1)        # (B, L, 3d) -> 3 x (B, L, d)
q = q.view(B, L, h, d_k).transpose(1, 2)     # (B, h, L, d_k); k, v alike
ctx = attention(q, k, v)                     # (B, h, L, d_k)
out = W_o(ctx.transpose(1, 2).reshape(B, L, d))"""


@st.cache_data(ttl=600, max_entries=16, show_spinner=False)
def timing_frame(d_model: int, num_heads: int, repeats: int) -> tuple[pd.DataFrame, str]:
    """Measured rows (``L, fused_ms, loop_ms, torch_ms, ratio, diff``) and the time of measurement.

    Cached for 10 minutes per setting and shared by every session: thirty laptops pressing the
    button cost one measurement.
    """
    rows = measure_loop_vs_fused(d_model, num_heads, LENGTHS, repeats)
    frame = pd.DataFrame(
        {
            "L": [row.length for row in rows],
            "fused_ms": [row.fused_s * 1e3 for row in rows],
            "loop_ms": [row.loop_s * 1e3 for row in rows],
            "torch_ms": [row.torch_s * 1e3 for row in rows],
            "ratio": [row.ratio for row in rows],
            "diff": [row.max_abs_diff for row in rows],
        }
    )
    return frame, time.strftime("%H:%M:%S")


@st.cache_data(max_entries=32, show_spinner=False)
def _equality(d_model: int, num_heads: int) -> float:
    """max |loop - fused| on a 16-token input: the two are the same function."""
    model = build_model(d_model, num_heads, 0)
    x = torch.randn(1, 16, d_model, generator=torch.Generator().manual_seed(0))  # (1, 16, D)
    with torch.inference_mode():
        return float((loop_from_fused(model)(x, x, x) - model(x, x, x)[0]).abs().max())


def render() -> None:
    """Draw the lab."""
    lab_header("loop")
    st.markdown(t("lab.loop.loop_code"))
    st.code(LOOP_CODE, language="python")
    st.markdown(t("lab.loop.fused_code"))
    st.code(FUSED_CODE, language="python")

    left, middle, right = st.columns(3)
    d_model = left.select_slider(t("lab.common.d_model"), options=D_MODELS, value=256, key="loop_d_model")
    num_heads = middle.select_slider(t("lab.common.num_heads"), options=HEADS, value=8, key="loop_heads")
    repeats = right.slider(t("lab.loop.repeats"), 1, MAX_REPEATS, 3, key="loop_repeats")
    diff = _equality(int(d_model), int(num_heads))
    st.success(t("lab.loop.same_numbers", diff=diff))

    st.subheader(t("lab.loop.timing_title"))
    st.caption(t("lab.loop.timing_caption", lengths=", ".join(map(str, LENGTHS)), repeats=repeats))
    if st.button(t("lab.loop.measure"), key="loop_measure", type="primary"):
        st.session_state["loop_measured"] = (int(d_model), int(num_heads), int(repeats))
    if st.session_state.get("loop_measured") != (int(d_model), int(num_heads), int(repeats)):
        st.info(t("lab.loop.press"))
        return
    with measurement_slot() as free:
        if not free:
            return
        with st.spinner(t("lab.loop.measuring")):
            frame, measured_at = timing_frame(int(d_model), int(num_heads), int(repeats))
    st.caption(t("lab.common.measured_at", time=measured_at))
    st.dataframe(
        pd.DataFrame(
            {
                "L": frame["L"],
                t("lab.loop.col.fused"): frame["fused_ms"].round(3),
                t("lab.loop.col.loop"): frame["loop_ms"].round(3),
                t("lab.loop.col.torch"): frame["torch_ms"].round(3),
                t("lab.loop.col.ratio"): frame["ratio"].map(lambda r: f"{r:.2f}×"),
            }
        ),
        hide_index=True,
    )
    st.markdown(t("lab.loop.summary", low=frame["ratio"].min(), high=frame["ratio"].max(), h=num_heads))
    ratio = frame.assign(series=t("lab.loop.series.ratio"), even=False)
    even = frame.assign(series=t("lab.loop.series.even"), ratio=1.0, even=True)
    show_chart(
        line_chart(
            pd.concat([ratio, even]),
            x="L",
            y="ratio",
            series="series",
            dashed="even",
            x_title=t("lab.loop.axis.length"),
            y_title=t("lab.loop.axis.ratio"),
            series_title="",
            log_x=True,
            width=520,
            title=t("lab.loop.chart_title"),
        )
    )
