"""Lab 10: windows and shifted windows (Swin) on an image's patch grid, next to global attention, and their cost."""

from __future__ import annotations

import base64
import io

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st
import torch

from components import cache
from components.chart_style import FONT_SIZE
from components.i18n import t
from components.image_names import image_name
from components.labs.charts import Grid, Series, Size, Titles, line_chart, mask_grid, matrix_frame
from components.labs.common import lab_header, show_chart
from components.labs.measure import Measured, measure_on_click, measured, repeats_slider, show_measurement_notes
from mha.experiments.windows import (
    COST_METHODS,
    cost_rows,
    cyclic_shift,
    grid_mask,
    image_tokens,
    measure_windows_steady,
    query_weights,
    shift_regions,
    shifted_window_mask,
    window_ids,
    window_partition,
)
from mha.sources.seeded import build_model
from mha.vision.images import resize, to_channels
from mha.vision.patches import patch_tokens
from mha.vision.samples import PHOTOS, SAMPLE_NAMES, sample_image

__all__ = ["grid_frame", "render"]

SIDE = 8  # the lab's grid: 8 × 8 patches
PATCH = 8  # pixels along a patch's side: the image is resized to 64 × 64
WINDOWS = (2, 4)
D_MODEL, NUM_HEADS = 32, 2
CELL = 32  # px: one patch on the lab's grids
COST_SIDES = (8, 16, 32, 64, 128, 256)  # the cost chart: up to 256 × 256 patches
COST_PATCH_PX = 16  # the cost chart's patches: a side of 256 patches is an image of 4096 × 4096 pixels
MEASURED_SIDES = (8, 16, 32)  # measured live: up to 1,024 patches (global attention's 1024² weights per head)
_PALETTE = "tableau20"


def _labels() -> list[str]:
    return list(patch_tokens(SIDE, SIDE, cls=False))


def grid_frame(window: int, shift: int) -> pd.DataFrame:
    """The three grids of the partition, long form: ``panel`` (windows, shifted, rolled), ``row``, ``column``
    (grid coordinates), ``group`` (the colour: a window, or a window's region) and ``text`` (what a cell prints).

    windows: each patch's window. shifted: each patch's shifted window, in the image (smaller at the edges).
    rolled: the grid after ``torch.roll`` by (−s, −s), each place printing the patch it now holds, in the colour of
    its shifted window: a rolled window of several colours holds patches the mask keeps apart.
    """
    ids = window_ids(SIDE, SIDE, window)  # (R, Q)
    groups = ids * 9 + shift_regions(SIDE, SIDE, window, shift)  # (R, Q) in the rolled grid
    in_image = torch.from_numpy(_renumbered(cyclic_shift(groups.unsqueeze(0), -shift)[0]))  # (R, Q), own places
    rolled = cyclic_shift(in_image.unsqueeze(0), shift)[0]  # (R, Q): the same groups, where the roll puts them
    origin = cyclic_shift(torch.arange(SIDE * SIDE, device="cpu").view(1, SIDE, SIDE), shift)[
        0
    ]  # (R, Q): patch at each place
    labels = _labels()
    frames = []
    for panel, colour, text in (
        ("windows", ids, [str(int(i)) for i in ids.flatten()]),
        ("shifted", in_image, [str(int(g)) for g in in_image.flatten()]),
        ("rolled", rolled, [labels[int(p)] for p in origin.flatten()]),
    ):
        frames.append(
            pd.DataFrame(
                {
                    "panel": panel,
                    "row": np.repeat(np.arange(SIDE), SIDE),
                    "column": np.tile(np.arange(SIDE), SIDE),
                    "group": colour.flatten().numpy(),
                    "text": text,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def _renumbered(groups: torch.Tensor) -> np.ndarray:
    """Group labels as 0, 1, 2 ... in reading order (the first patch's group is 0), same shape."""
    _, first, inverse = np.unique(groups.flatten().numpy(), return_index=True, return_inverse=True)
    rank = np.argsort(np.argsort(first))  # each distinct label's place in reading order
    return rank[inverse].reshape(tuple(groups.shape))


def _grid_chart(frame: pd.DataFrame, title: str, small_text: bool) -> alt.Chart:
    """One grid: a cell per patch, coloured by ``group``, printing ``text``."""
    base = alt.Chart(frame, title=title).encode(
        x=alt.X("column:O", title=None, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("row:O", title=None),
    )
    rect = base.mark_rect(stroke="white", strokeWidth=1).encode(
        color=alt.Color("group:N", scale=alt.Scale(scheme=_PALETTE), legend=None),
        tooltip=[alt.Tooltip("text:N", title=t("lab.windows.tooltip.patch"))],
    )
    text = base.mark_text(fontSize=9 if small_text else FONT_SIZE - 3, color="black").encode(text="text:N")
    return alt.layer(rect, text).properties(width=CELL * SIDE, height=CELL * SIDE)


@cache.results(max_entries=16)
def _image_uri(name: str) -> str:
    """The sample, RGB at the grid's pixel size, as a PNG data URI (the attention charts draw it underneath)."""
    from PIL import Image

    pixels = resize(to_channels(sample_image(name), 3), SIDE * PATCH, SIDE * PATCH)  # (3, 64, 64)
    array = (pixels.permute(1, 2, 0).numpy() * 255).round().astype(np.uint8)  # (64, 64, 3)
    buffer = io.BytesIO()
    Image.fromarray(array).resize((CELL * SIDE, CELL * SIDE), Image.Resampling.NEAREST).save(buffer, "PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _attention_chart(uri: str, weights: np.ndarray, query: int, title: str, top: float) -> alt.Chart:
    """The image, and over it one head's weights for patch ``query``: the more weight, the more opaque the cell
    (opacity 0.85 at ``top``, the same scale in every panel: weight spread over 64 patches looks thin)."""
    labels = _labels()
    frame = pd.DataFrame(
        {
            "row": np.repeat(np.arange(SIDE), SIDE),
            "column": np.tile(np.arange(SIDE), SIDE),
            "weight": weights.astype(np.float32),
            "patch": labels,
            "query": np.arange(SIDE * SIDE) == query,
        }
    )
    x = alt.X("column:O", title=None, axis=alt.Axis(labelAngle=0))
    y = alt.Y("row:O", title=None)
    picture = (
        alt.Chart(pd.DataFrame({"url": [uri]}))
        .mark_image(width=CELL * SIDE, height=CELL * SIDE, align="left", baseline="top")
        .encode(url="url:N", x=alt.value(0), y=alt.value(0))
    )
    cells = (
        alt.Chart(frame)
        .mark_rect(color="#c2410c", stroke="#c2410c", strokeOpacity=0.25)
        .encode(
            x=x,
            y=y,
            opacity=alt.Opacity("weight:Q", scale=alt.Scale(domain=[0, top or 1.0], range=[0, 0.85]), legend=None),
            tooltip=[
                alt.Tooltip("patch:N", title=t("lab.windows.tooltip.patch")),
                alt.Tooltip("weight:Q", title=t("lab.common.weight"), format=".4f"),
            ],
        )
    )
    marker = alt.Chart(frame[frame["query"]]).mark_rect(fill=None, stroke="#1d4ed8", strokeWidth=3).encode(x=x, y=y)
    return alt.layer(picture, cells, marker, title=title).properties(width=CELL * SIDE, height=CELL * SIDE)


@cache.results(max_entries=32)
def _query_rows(image: str, window: int, shift: int, query: int, seed: int) -> np.ndarray:
    """(3, H, N): global, windows, shifted windows (see :func:`mha.experiments.windows.query_weights`)."""
    x = image_tokens(sample_image(image), SIDE, PATCH, D_MODEL, seed)
    return query_weights(build_model(D_MODEL, NUM_HEADS, seed), x, SIDE, window, shift, query).numpy()


def _render_partition(window: int, shift: int) -> None:
    st.subheader(t("lab.windows.partition_title"))
    frame = grid_frame(window, shift)
    charts = [
        _grid_chart(frame[frame["panel"] == panel], t(f"lab.windows.panel.{panel}", s=shift), panel == "rolled")
        for panel in ("windows", "shifted", "rolled")
    ]
    show_chart(alt.hconcat(*charts, spacing=24))
    shifted = int(frame[frame["panel"] == "shifted"]["group"].nunique())
    st.caption(t("lab.windows.partition_caption", windows=(SIDE // window) ** 2, shifted=shifted, s=shift, m=window))


def _render_mask(window: int, shift: int) -> None:
    st.subheader(t("lab.windows.mask_title"))
    count = (SIDE // window) ** 2
    chosen = st.select_slider(t("lab.windows.mask_window"), list(range(count)), value=count - 1, key="windows_mask")
    keep = shifted_window_mask(SIDE, SIDE, window, shift)[int(chosen)].numpy()  # (M², M²)
    origin = cyclic_shift(
        torch.arange(SIDE * SIDE, device="cpu").view(1, SIDE, SIDE, 1), shift
    )  # (1, R, Q, 1): patch at a place
    members = window_partition(origin, window)[int(chosen), :, 0]  # (M²,): the patches in this rolled window
    labels = [_labels()[int(p)] for p in members]
    panel = t("lab.windows.mask_panel", window=int(chosen))
    frame = matrix_frame(keep[None].astype(np.float32), labels, labels, [panel])
    frame["text"] = np.where(keep, "T", "F").ravel()
    titles = Titles(x=t("lab.windows.axis.key"), y=t("lab.windows.axis.query"))
    cell = 30 if window == 2 else 26
    show_chart(mask_grid(frame, titles, Grid(labels, labels, [panel], 1, cell)))
    regions = len({int(r) for r in shift_regions(SIDE, SIDE, window, shift).flatten()[members]})
    st.caption(t("lab.windows.mask_caption", regions=regions, size=window * window, window=int(chosen)))


def _render_query(image: str, window: int, shift: int, seed: int) -> None:
    st.subheader(t("lab.windows.query_title"))
    labels = _labels()
    cols = st.columns(2)
    query_label = cols[0].select_slider(t("lab.windows.query"), labels, value="r3c3", key="windows_query")
    head = cols[1].segmented_control(
        t("lab.windows.head"),
        list(range(NUM_HEADS)),
        default=0,
        key="windows_head",
        format_func=lambda h: t("lab.common.head", n=h),
    )
    head = 0 if head is None else int(head)
    query = labels.index(query_label)
    rows = _query_rows(image, window, shift, query, seed)[:, head]  # (3, N)
    uri = _image_uri(image)
    names = ("global", "windows", "shifted")
    top = float(rows.max())
    charts = [
        _attention_chart(uri, row, query, t(f"lab.windows.view.{name}", s=shift), top)
        for name, row in zip(names, rows, strict=True)
    ]
    show_chart(alt.hconcat(*charts, spacing=24))
    seen = [int(m[0, 0, query].sum()) for m in (grid_mask(SIDE, SIDE, window, 0), grid_mask(SIDE, SIDE, window, shift))]
    st.caption(t("lab.windows.query_caption", all=SIDE * SIDE, windows=seen[0], shifted=seen[1], query=query_label))


@cache.results(ttl=600, max_entries=16)
def _timing_frame(window: int, repeats: int) -> Measured[pd.DataFrame]:
    steady = measure_windows_steady(MEASURED_SIDES, D_MODEL, NUM_HEADS, window, repeats)
    rows = steady.result
    frame = pd.DataFrame(
        {
            "patches": [row.side * row.side for row in rows],
            "global": [row.global_time.median_s * 1e3 for row in rows],
            "windows": [row.window_time.median_s * 1e3 for row in rows],
        }
    )
    return measured(steady, frame)


def _method_name(method: str) -> str:
    return t(f"lab.windows.method.{method}")


def _render_cost(window: int) -> None:
    st.subheader(t("lab.windows.cost_title"))
    rows = cost_rows(COST_SIDES, D_MODEL, window)
    long = pd.DataFrame(
        {
            "patches": [row.patches for row in rows for _ in COST_METHODS],
            "madds": [value / 1e6 for row in rows for value in (row.global_madds, row.window_madds)],
            "series": [_method_name(method) for _ in rows for method in COST_METHODS],
        }
    )
    titles = Titles(x=t("lab.windows.axis.patches"), y=t("lab.windows.axis.madds"), color="")
    fields = Series(x="patches", y="madds", series="series")
    show_chart(line_chart(long, fields, titles, log_x=True, log_y=True, size=Size(520, 300)))
    last = rows[-1]
    st.markdown(
        t(
            "lab.windows.cost_summary",
            d=D_MODEL,
            m=window,
            patches=f"{last.patches:,}",
            side=last.side,
            pixels=f"{last.side * COST_PATCH_PX:,}",
            patch=COST_PATCH_PX,
            ratio=f"{last.global_madds / last.window_madds:,.0f}",
        )
    )
    repeats = repeats_slider(st.columns(2)[0], "windows_repeats")
    result = measure_on_click("windows", (window, repeats), lambda: _timing_frame(window, repeats))
    if result is None:
        return
    show_measurement_notes(result, repeats, _method_name)
    frame = result.value
    st.dataframe(
        pd.DataFrame(
            {
                t("lab.windows.col.patches"): frame["patches"],
                t("lab.windows.col.global"): frame["global"].map(lambda v: f"{v:.3f}"),
                t("lab.windows.col.windows"): frame["windows"].map(lambda v: f"{v:.3f}"),
            }
        ),
        hide_index=True,
    )


def render() -> None:
    """Draw the lab."""
    lab_header("windows")
    cols = st.columns(4)
    images = [*PHOTOS, *(name for name in SAMPLE_NAMES if name not in PHOTOS)]
    image = cols[0].selectbox(t("lab.windows.image"), images, key="windows_image", format_func=image_name)
    window = int(cols[1].segmented_control(t("lab.windows.window"), WINDOWS, default=4, key="windows_window") or 4)
    if not 0 <= st.session_state.get("windows_shift", -1) < window:  # a new window: its half, as Swin shifts
        st.session_state["windows_shift"] = window // 2
    shift = int(cols[2].slider(t("lab.windows.shift"), 0, window - 1, key="windows_shift"))
    seed = int(cols[3].number_input(t("lab.common.seed"), 0, 9999, 0, key="windows_seed"))
    st.caption(t("lab.windows.not_the_sliding_window"))
    _render_partition(window, shift)
    _render_mask(window, shift)
    _render_query(image, window, shift, seed)
    _render_cost(window)
