"""Lab 5: a loop over heads against the fused layer (same numbers, measured speed), and full-width heads."""

from __future__ import annotations

import pandas as pd
import streamlit as st
import torch

from components import cache
from components.i18n import t
from components.labs.charts import Series, Size, Titles, line_chart
from components.labs.common import lab_header, show_chart, show_verdict
from components.labs.measure import Measured, measure_on_click, measured, repeats_slider, show_measurement_notes
from mha.counting import total_parameters
from mha.experiments.loop_vs_fused import (
    VARIANTS,
    TimingRow,
    full_width_parameters,
    loop_from_fused,
    measure_loop_vs_fused_steady,
)
from mha.reference import TOLERANCE
from mha.sources.seeded import build_model

__all__ = ["params_frame", "render", "timing_frame"]

D_MODELS = (64, 128, 256, 512)
HEADS = (1, 2, 4, 8, 16)
LENGTHS = (16, 64, 256, 1024)

# Code shown to the learner: shape comments only, so that nothing in it needs translating.
LOOP_CODE = """class AttentionHead(nn.Module):
    def __init__(self, d_model, d_k):
        self.W_q = nn.Linear(d_model, d_k)
        self.W_k = nn.Linear(d_model, d_k)
        self.W_v = nn.Linear(d_model, d_k)
    def forward(self, q, k, v):
        return attention(self.W_q(q), self.W_k(k), self.W_v(v))   # (B, L, d_k)

heads = nn.ModuleList([AttentionHead(d, d_k) for _ in range(h)])
out = W_o(torch.cat([head(x, x, x) for head in heads], -1))      # (B, L, h * d_k) = (B, L, d)"""

FULL_WIDTH_CODE = """heads = nn.ModuleList([SelfAttention(embed_size) for _ in range(h)])  # W_q, W_k, W_v: (d, d) each
fc_out = nn.Linear(h * embed_size, embed_size)
out = fc_out(torch.cat([head(x, x, x) for head in heads], -1))        # (B, L, h * d) -> (B, L, d)"""

FUSED_CODE = """q, k, v = (x @ W_qkv.T).chunk(3, -1)        # (B, L, 3d) -> 3 x (B, L, d)
q = q.view(B, L, h, d_k).transpose(1, 2)     # (B, h, L, d_k); k, v alike
ctx = attention(q, k, v)                     # (B, h, L, d_k)
out = W_o(ctx.transpose(1, 2).reshape(B, L, d))"""

# One colour per variant, the same in the chart and the legend.
VARIANT_COLORS = {"fused": "#2563eb", "loop": "#c2410c", "full_width": "#7c3aed", "torch_mha": "#525252"}


def params_frame(d_model: int, num_heads: int) -> pd.DataFrame:
    """Parameters of the three layers: ``variant, params, formula`` (the fused layer and its loop share 4·d² + 4·d)."""
    fused = total_parameters(d_model)
    return pd.DataFrame(
        {
            "variant": ["fused", "loop", "full_width"],
            "params": [fused, fused, full_width_parameters(d_model, num_heads)],
            "formula": ["4·d² + 4·d", "4·d² + 4·d", "h·3·(d² + d) + h·d² + d"],
        }
    )


def _timing_rows(rows: list[TimingRow]) -> pd.DataFrame:
    """One row per (length, variant) timed: ``L, variant, ms, ms_low, ms_high`` (median, middle half)."""
    records = []
    for row in rows:
        for variant in VARIANTS:
            timing = getattr(row, variant)
            if timing is not None:
                records.append(
                    {
                        "L": row.length,
                        "variant": variant,
                        "ms": timing.median_s * 1e3,
                        "ms_low": timing.low_s * 1e3,
                        "ms_high": timing.high_s * 1e3,
                    }
                )
    return pd.DataFrame(records)


@cache.results(ttl=600, max_entries=16)
def timing_frame(d_model: int, num_heads: int, repeats: int) -> Measured[pd.DataFrame]:
    """Measured times (see :func:`_timing_rows`), re-measured while they break their expected growth.

    Cached for 10 minutes per setting and shared by every session (thirty laptops pressing the
    button cost one measurement), but only when the result met its expectation.
    """
    steady = measure_loop_vs_fused_steady(d_model, num_heads, LENGTHS, repeats)
    return measured(steady, _timing_rows(steady.result))


@cache.results(max_entries=32)
def _equality(d_model: int, num_heads: int) -> float:
    """max |loop - fused| on a 16-token input: the two are the same function."""
    model = build_model(d_model, num_heads, 0)
    x = torch.randn(1, 16, d_model, generator=torch.Generator().manual_seed(0), device="cpu")  # (1, 16, D)
    with torch.inference_mode():
        return float((loop_from_fused(model)(x, x, x) - model(x, x, x)[0]).abs().max())


def _variant_name(variant: str) -> str:
    return t(f"lab.loop.variant.{variant}")


def _render_params(d_model: int, num_heads: int) -> None:
    params = params_frame(d_model, num_heads)
    st.dataframe(
        pd.DataFrame(
            {
                t("lab.loop.col.variant"): [_variant_name(v) for v in params["variant"]],
                t("lab.loop.col.params"): params["params"].map("{:,}".format),
                t("lab.loop.col.formula"): params["formula"],
            }
        ),
        hide_index=True,
    )
    ratio = params["params"].iloc[2] / params["params"].iloc[0]
    st.caption(t("lab.loop.params_caption", h=num_heads, ratio=ratio))


def _by_length(frame: pd.DataFrame, text: pd.Series, header: str) -> pd.DataFrame:
    """One row per L, one column per variant (``header`` names it), ``text`` in the cells, "—" where not timed."""
    table = frame.assign(text=text).pivot(index="L", columns="variant", values="text")
    table = table.reindex(columns=list(VARIANTS)).fillna("—")
    table.columns = [t(header, variant=_variant_name(v)) for v in table.columns]
    return table


def _render_timing(result: Measured[pd.DataFrame], num_heads: int, repeats: int) -> None:
    frame = result.value
    show_measurement_notes(result, repeats, _variant_name)
    medians = frame.pivot(index="L", columns="variant", values="ms")
    ratios = medians["loop"] / medians["fused"]
    table = _by_length(frame, frame["ms"].map("{:.3f}".format), "lab.loop.col.median")
    table[t("lab.loop.col.ratio")] = [f"{r:.2f}×" for r in ratios]
    st.dataframe(table.reset_index(), hide_index=True)
    with st.expander(t("lab.loop.spread_title")):
        spread = [f"{low:.3f}–{high:.3f}" for low, high in zip(frame["ms_low"], frame["ms_high"], strict=True)]
        st.dataframe(
            _by_length(frame, pd.Series(spread, index=frame.index), "lab.loop.col.spread").reset_index(),
            hide_index=True,
        )
    st.markdown(t("lab.loop.summary", low=ratios.min(), high=ratios.max(), h=num_heads))
    if len(frame[frame["variant"] == "full_width"]) < len(medians):
        st.caption(t("lab.loop.full_width_skipped"))
    plotted = frame.assign(series=[_variant_name(v) for v in frame["variant"]])
    show_chart(
        line_chart(
            plotted,
            Series(x="L", y="ms", series="series", low="ms_low", high="ms_high"),
            Titles(x=t("lab.loop.axis.length"), y=t("lab.loop.axis.ms"), chart=t("lab.loop.chart_title")),
            log_x=True,
            log_y=True,
            size=Size(520, 320),
            colors={_variant_name(v): color for v, color in VARIANT_COLORS.items()},
        )
    )
    st.caption(t("lab.loop.chart_caption"))


def render() -> None:
    """Draw the lab."""
    lab_header("loop")
    st.markdown(t("lab.loop.loop_code"))
    st.code(LOOP_CODE, language="python")
    st.markdown(t("lab.loop.full_width_code"))
    st.code(FULL_WIDTH_CODE, language="python")
    st.markdown(t("lab.loop.fused_code"))
    st.code(FUSED_CODE, language="python")

    left, middle, right = st.columns(3)
    d_model = int(left.select_slider(t("lab.common.d_model"), options=D_MODELS, value=256, key="loop_d_model"))
    num_heads = int(middle.select_slider(t("lab.common.num_heads"), options=HEADS, value=8, key="loop_heads"))
    repeats = repeats_slider(right, "loop_repeats")
    show_verdict(st, t("lab.loop.equality_check"), _equality(d_model, num_heads), TOLERANCE[torch.float32])
    st.subheader(t("lab.loop.params_title"))
    _render_params(d_model, num_heads)

    st.subheader(t("lab.loop.timing_title"))
    st.caption(t("lab.loop.timing_caption", lengths=", ".join(map(str, LENGTHS))))
    result = measure_on_click("loop", (d_model, num_heads, repeats), lambda: timing_frame(d_model, num_heads, repeats))
    if result is not None:
        _render_timing(result, num_heads, repeats)
