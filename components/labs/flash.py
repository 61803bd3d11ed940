"""Lab 13: FlashAttention, the same numbers tile by tile: the online softmax stepped through, then its memory."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from components import cache
from components.i18n import t
from components.labs.charts import (
    PANEL_GAP_PX,
    ROW_LABELS_PX,
    WIDTH_BUDGET_PX,
    Grid,
    Series,
    Size,
    Titles,
    heatmap,
    line_chart,
    matrix_frame,
)
from components.labs.common import format_bytes, lab_header, show_chart, show_verdict, table_height, token_input
from components.labs.measure import (
    Measured,
    measure_on_click,
    measured,
    measurement_progress,
    repeats_slider,
    show_measurement_notes,
)
from components.nav import render_lab_links
from components.safe_text import md_escape
from mha.experiments import flash
from mha.experiments.flash import tile_ranges
from mha.experiments.flash_cost import MEMORY_LENGTHS
from mha.experiments.isolated import IsolatedMeasurementError, run_isolated
from mha.experiments.timing import Steady
from mha.tokens import token_labels

__all__ = ["TOLERANCE", "cost_frames", "counted", "grid_text", "render", "span", "tile_frame", "tiled_run"]

MAX_TOKENS = 32
MAX_BLOCK = 16
HEAD_DIM = 8  # one head of 8 numbers: O fits on the screen
TOLERANCE = 1e-6  # float32: tiled against full attention, a sum taken in another order
BACKEND_TOLERANCE = {"cpu": 1e-5, "cuda": 1e-2}  # the flash backend against math: float32 on a CPU, float16 on CUDA
MEMORY_BLOCKS = (32, 64, 128)
MEMORY_HEADS, MEMORY_HEAD_DIM = 4, 32
TILED_GROWTH_MAX = 2.5  # tiled memory may grow at most this much when L doubles (like L: 2x, plus overheads)
FULL_GROWTH_MIN = 3.0  # full memory grows at least this much when L doubles (like L²: 4x)
MINUS_INF = "−∞"
CELL_OPACITY = {"current": 1.0, "read": 0.85, "ahead": 0.3, "other": 0.12}


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun`` as a person writes them ("1 tile", "3 tiles"; in Chinese one form for both)."""
    return t(f"lab.flash.count.{noun}.{'one' if count == 1 else 'many'}", count=count)


def span(start: int, end: int, what: str) -> str:
    """Positions ``start`` to ``end`` (both included) of ``what`` (``rows`` or ``keys``): "rows 4–7", or "row 4"
    when they are one."""
    if start == end:
        return t({"rows": "lab.flash.span.row", "keys": "lab.flash.span.key"}[what], start=start)
    return t(f"lab.flash.span.{what}", start=start, end=end)


def _blocks_text(length: int, block: int, noun: str, unit: str) -> tuple[str, str]:
    """("3 query blocks", "of up to 4 rows"): how many blocks of ``block`` cover ``length``, and their size."""
    blocks = len(tile_ranges(length, block))
    size = counted(block, unit)
    shape = "up_to" if length % block else "each" if blocks > 1 else "one"  # uneven, several equal, or a single one
    return counted(blocks, noun), t(f"lab.flash.size.{shape}", size=size)


def grid_text(length: int, block_q: int, block_k: int) -> str:
    """The sentence under the controls: L, the query blocks and the tiles that cover it, and how many tiles."""
    blocks, rows = _blocks_text(length, block_q, "query_block", "row")
    tiles, columns = _blocks_text(length, block_k, "tile", "column")
    all_tiles = len(tile_ranges(length, block_q)) * len(tile_ranges(length, block_k))
    return t("lab.flash.grid", length=counted(length, "token"), blocks=blocks, rows=rows, tiles=tiles,
             columns=columns, all=counted(all_tiles, "tile"))  # fmt: skip


@cache.results(max_entries=32)
def tiled_run(tokens: tuple[str, ...], block_q: int, block_k: int, causal: bool, seed: int) -> dict:
    """The tiled run of the learner's tokens (one head, :func:`mha.experiments.flash.tiled_run`), its steps as plain
    arrays, and its difference from full attention."""
    run = flash.tiled_run(tokens, HEAD_DIM, block_q, block_k, causal, seed)
    return {
        "scores": run.scores.numpy(),
        "steps": [
            {
                "block": s.query_block,
                "rows": s.rows,
                "tile": s.tile,
                "columns": s.columns,
                "skipped": s.skipped,
                **{name: getattr(s, name)[0, 0].numpy() for name in ("m_before", "l_before", "m", "l", "rescale")},
                "tile_max": s.tile_max[0, 0].numpy(),
                "O": s.O[0, 0].numpy(),
            }
            for s in run.steps
        ],
        "diff": run.difference,
        "skipped": run.skipped,
        "tiles": len(run.steps),
    }


def tile_frame(
    scores: np.ndarray, labels: list[str], steps: list[dict], block: int, tile: int, masked: str, skipped: str
) -> pd.DataFrame:
    """One row per cell of the L × L scores: ``row, column, value`` (NaN where masked), ``state`` (current, read,
    ahead for query block ``block``; other for the other blocks), ``grey`` (``skipped`` in a skipped tile,
    ``masked`` for a masked cell of a read tile, "" else) and ``current`` (in the tile read at step ``tile``)."""
    length = len(labels)
    state = np.full((length, length), "other", dtype=object)
    grey = np.full((length, length), "", dtype=object)
    grey[np.isnan(scores)] = masked
    current = np.zeros((length, length), dtype=bool)
    for step in steps:
        (r0, r1), (c0, c1) = step["rows"], step["columns"]
        if step["skipped"]:
            grey[r0:r1, c0:c1] = skipped
        if step["block"] == block:
            state[r0:r1, c0:c1] = "current" if step["tile"] == tile else "read" if step["tile"] < tile else "ahead"
            current[r0:r1, c0:c1] = step["tile"] == tile
    frame = matrix_frame(scores[None], labels, labels, ["S"])
    frame["state"] = state.ravel()
    frame["opacity"] = [CELL_OPACITY[s] for s in frame["state"]]
    frame["grey"] = grey.ravel()
    frame.loc[frame["grey"] == skipped, "opacity"] = 1.0  # a skipped tile stays dark whatever the block
    frame["current"] = current.ravel()
    return frame


_LEGEND_PX = 40  # more room a colour legend takes beside a chart in a column than the budget's share leaves


def _tile_grid(labels: list[str], budget: int) -> Grid:
    """The score chart's cells, as large as ``budget`` px across allows (the scores' legend beside it)."""
    return Grid.fitted(labels, labels, ["S"], most_per_row=1, largest=20, budget=budget)


def _tile_chart(
    frame: pd.DataFrame, labels: list[str], titles: Titles, greys: tuple[str, str], grid: Grid
) -> alt.Chart:
    """The scores, the query block's tiles by state, greyed cells, and the current tile outlined (the greyed cells'
    legend under it: beside it, it would take the room of its cells)."""
    axes = {
        "x": alt.X("column:N", sort=list(labels), title=titles.x, axis=alt.Axis(labelAngle=-90, labelOverlap=False)),
        "y": alt.Y("row:N", sort=list(labels), title=titles.y, axis=alt.Axis(labelOverlap=False)),
    }
    tooltip = [alt.Tooltip("row:N", title=titles.y), alt.Tooltip("column:N", title=titles.x)]
    limit = float(np.nanmax(np.abs(frame["value"].to_numpy()))) or 1.0
    base = alt.Chart(frame).encode(**axes)
    numbers = (
        base.transform_filter(alt.datum.grey == "")
        .mark_rect()
        .encode(
            color=alt.Color(
                "value:Q",
                scale=alt.Scale(scheme="redblue", domain=[-limit, limit], reverse=True),
                title=titles.color,
            ),
            opacity=alt.Opacity("opacity:Q", scale=None, legend=None),
            tooltip=[*tooltip, alt.Tooltip("value:Q", title=titles.color, format=".4f")],
        )
    )
    greyed = (
        base.transform_filter(alt.datum.grey != "")
        .mark_rect()
        .encode(
            fill=alt.Fill(
                "grey:N",
                scale=alt.Scale(domain=list(greys), range=["#e5e5e5", "#737373"]),
                title=None,
                legend=alt.Legend(orient="bottom", direction="vertical"),
            ),
            opacity=alt.Opacity("opacity:Q", scale=None, legend=None),
            tooltip=[*tooltip, alt.Tooltip("grey:N", title=titles.color)],
        )
    )
    outline = (
        base.transform_filter(alt.datum.current)
        .mark_rect(filled=False, stroke="#111827", strokeWidth=2)
        .encode(tooltip=tooltip)
    )
    size = grid.cell * len(labels)
    return alt.layer(numbers, greyed, outline).properties(width=size, height=size)


def _number(value: float) -> str:
    return MINUS_INF if value == float("-inf") else f"{value:.4f}"


def _rows_table(step: dict, labels: list[str]) -> pd.DataFrame:
    """Per query row of the block: m and ℓ before and after the tile, the tile's row max and the rescale factor."""
    r0, r1 = step["rows"]
    return pd.DataFrame(
        {
            t("lab.flash.col.row"): labels[r0:r1],
            t("lab.flash.col.m_before"): [_number(x) for x in step["m_before"]],
            t("lab.flash.col.tile_max"): [_number(x) for x in step["tile_max"]],
            t("lab.flash.col.m"): [_number(x) for x in step["m"]],
            t("lab.flash.col.rescale"): [f"{x:.4f}" for x in step["rescale"]],
            t("lab.flash.col.l_before"): [f"{x:.4f}" for x in step["l_before"]],
            t("lab.flash.col.l"): [f"{x:.4f}" for x in step["l"]],
        }
    )


def _clamp_state(key: str, high: int) -> None:
    """Keep a slider's remembered value within its current range (the range follows the block sizes)."""
    if key in st.session_state and st.session_state[key] > high:
        st.session_state[key] = high


@st.fragment
def _stepper(run: dict, labels: list[str], block_q: int, block_k: int) -> None:
    """Pick a query block, step through its tiles: what was read, m, ℓ and O after it."""
    length = len(labels)
    blocks, tiles = tile_ranges(length, block_q), tile_ranges(length, block_k)
    _clamp_state("flash_block", len(blocks) - 1)
    _clamp_state("flash_tile", len(tiles) - 1)
    cols = st.columns(2)
    block = int(
        cols[0].slider(t("lab.flash.block_pick"), 0, max(len(blocks) - 1, 1), 0, key="flash_block",
                       disabled=len(blocks) == 1)
    )  # fmt: skip
    tile = int(
        cols[1].slider(t("lab.flash.tile_pick"), 0, max(len(tiles) - 1, 1), 0, key="flash_tile",
                       disabled=len(tiles) == 1)
    )  # fmt: skip
    block, tile = min(block, len(blocks) - 1), min(tile, len(tiles) - 1)
    step = next(s for s in run["steps"] if s["block"] == block and s["tile"] == tile)
    (r0, r1), (c0, c1) = step["rows"], step["columns"]
    where = {"block": block, "tile": tile, "rows": span(r0, r1 - 1, "rows"), "columns": span(c0, c1 - 1, "keys"),
             "tiles": len(tiles)}  # fmt: skip
    greys = (t("lab.flash.masked"), t("lab.flash.skipped"))
    titles = Titles(x=t("lab.common.key"), y=t("lab.common.query"), color=t("lab.flash.score"))
    frame = tile_frame(run["scores"], labels, run["steps"], block, tile, *greys)
    # the scores beside O (3 : 2 of the width) while the score chart's cells stay readable there; else one above
    # the other, each as wide as the content
    side, o_side = WIDTH_BUDGET_PX * 3 // 5 - _LEGEND_PX, WIDTH_BUDGET_PX * 2 // 5 - _LEGEND_PX
    grid = _tile_grid(labels, side)
    beside = ROW_LABELS_PX + grid.cell * len(labels) + PANEL_GAP_PX <= side
    left, right = st.columns([3, 2]) if beside else (st.container(), st.container())
    with left:
        show_chart(_tile_chart(frame, labels, titles, greys, grid if beside else _tile_grid(labels, WIDTH_BUDGET_PX)))
        st.caption(t("lab.flash.chart_caption"))
    with right:
        st.markdown(t("lab.flash.o_title"))
        o_labels = [f"d{i}" for i in range(HEAD_DIM)]
        o_budget = o_side if beside else WIDTH_BUDGET_PX
        o_grid = Grid.fitted(labels[r0:r1], o_labels, ["O"], most_per_row=1, largest=24, budget=o_budget)
        o_titles = Titles(x=t("lab.flash.axis.feature"), y=t("lab.common.query"), color="O")
        show_chart(heatmap(matrix_frame(step["O"][None], labels[r0:r1], o_labels, ["O"]), o_titles, o_grid,
                           diverging=True))  # fmt: skip
        if tile == len(tiles) - 1:
            st.caption(t("lab.flash.o_last"))
    # what this step read, under its charts (the charts first: they begin on a laptop's first screen)
    if step["skipped"]:
        st.info(t("lab.flash.step_skipped", **where))
    else:
        st.markdown(t("lab.flash.step_read", **where))
    if not step["skipped"]:
        earlier = [i for i in range(r1 - r0) if step["l_before"][i] > 0]
        grew = [i for i in earlier if step["rescale"][i] < 1]
        if grew:
            factor = float(min(step["rescale"][i] for i in grew))
            st.warning(t("lab.flash.rescaled", rows=md_escape(", ".join(labels[r0 + i] for i in grew)), factor=factor))
        elif earlier:
            st.success(t("lab.flash.not_rescaled"))
    st.dataframe(_rows_table(step, labels), hide_index=True, height=table_height(r1 - r0))


@cache.results(ttl=600, max_entries=8)
def cost_frames(block: int, causal: bool, repeats: int) -> Measured[dict]:
    """Memory of full and tiled attention against L and the sdpa backends, measured in a child process (a progress
    bar says which part it measures)."""
    arguments = {
        "lengths": list(MEMORY_LENGTHS),
        "block": int(block),
        "num_heads": MEMORY_HEADS,
        "head_dim": MEMORY_HEAD_DIM,
        "causal": bool(causal),
        "repeats": int(repeats),
    }
    with measurement_progress(t("lab.flash.progress.start"), _progress_text) as progress:
        data = run_isolated("flash", arguments, progress=progress)
    return measured(Steady(data, 1, ()), {"memory": pd.DataFrame(data["memory"]), "backends": data["backends"]})


def _progress_text(part: str, length: int, done: int, total: int) -> str:
    """A progress report of the measuring child in words: how many parts are done, and the one it measures now."""
    return t(f"lab.flash.progress.{part}", length=length, done=done, total=total)


def _method_name(method: str) -> str:
    return t(f"lab.flash.method.{method}")


def _backend_name(backend: str) -> str:
    return {"math": "MATH", "flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION", "cudnn": "CUDNN_ATTENTION"}[
        backend
    ]


def _memory_result(memory: pd.DataFrame) -> None:
    memory = memory.assign(MiB=memory["peak_bytes"] / 2**20, series=[_method_name(m) for m in memory["method"]])
    titles = Titles(x=t("lab.complexity.axis.length"), y=t("lab.complexity.axis.mib"), chart=t("lab.flash.memory"))
    show_chart(line_chart(memory, Series(x="length", y="MiB", series="series"), titles, log_x=True, log_y=True,
                          size=Size(420, 280)))  # fmt: skip
    st.caption(t("lab.flash.memory_caption"))
    peaks = memory.pivot(index="length", columns="method", values="peak_bytes")
    cells = memory.pivot(index="length", columns="method", values="largest_cells")
    table = pd.DataFrame(
        {
            "L": peaks.index,
            t("lab.flash.col.full_peak"): peaks["full"].map(format_bytes).to_numpy(),
            t("lab.flash.col.tiled_peak"): peaks["tiled"].map(format_bytes).to_numpy(),
            t("lab.flash.col.full_cells"): cells["full"].map("{:,}".format).to_numpy(),
            t("lab.flash.col.tiled_cells"): cells["tiled"].map("{:,}".format).to_numpy(),
        }
    )
    st.dataframe(table, hide_index=True)
    longest, before = peaks.index[-1], peaks.index[-2]
    full_growth = peaks.loc[longest, "full"] / peaks.loc[before, "full"]
    tiled_growth = peaks.loc[longest, "tiled"] / peaks.loc[before, "tiled"]
    words = {"short": before, "long": longest, "full": full_growth, "tiled": tiled_growth,
             "full_min": FULL_GROWTH_MIN, "tiled_max": TILED_GROWTH_MAX,
             "full_bytes": format_bytes(peaks.loc[longest, "full"]),
             "tiled_bytes": format_bytes(peaks.loc[longest, "tiled"])}  # fmt: skip
    as_expected = tiled_growth <= TILED_GROWTH_MAX and full_growth >= FULL_GROWTH_MIN
    (st.success if as_expected else st.warning)(
        t("lab.flash.memory_ok" if as_expected else "lab.flash.memory_bad", **words)
    )


def _backends_result(backends: list[dict]) -> None:
    st.markdown(t("lab.flash.backends_title", device=backends[0]["device"], length=MEMORY_LENGTHS[-1]))
    table = pd.DataFrame(
        {
            t("lab.flash.col.backend"): [f"SDPBackend.{_backend_name(b['backend'])}" for b in backends],
            t("lab.flash.col.runs"): [t("lab.flash.yes" if b["runs"] else "lab.flash.no") for b in backends],
            t("lab.flash.col.ms"): ["—" if b["median_ms"] is None else f"{b['median_ms']:.3f}" for b in backends],
            t("lab.flash.col.diff"): ["—" if b["max_diff"] is None else f"{b['max_diff']:.1e}" for b in backends],
        }
    )
    st.dataframe(table, hide_index=True)
    flash = next(b for b in backends if b["backend"] == "flash")
    if flash["runs"] and flash["max_diff"] is not None:
        tolerance = BACKEND_TOLERANCE.get(flash["device"], 1e-2)
        show_verdict(st, t("lab.flash.backend_check", device=flash["device"]), flash["max_diff"], tolerance)
    else:
        st.info(t("lab.flash.no_flash_backend", device=flash["device"]))
    refused = [b for b in backends if not b["runs"]]
    if refused:
        title = t("lab.flash.refused_one") if len(refused) == 1 else t("lab.flash.refused", count=len(refused))
        with st.expander(title):
            st.code("\n".join(f"{_backend_name(b['backend'])}: {b['reason']}" for b in refused), language="text")


def _measure_section(causal: bool) -> None:
    st.subheader(t("lab.flash.cost_title"))
    st.markdown(t("lab.flash.cost_intro", heads=MEMORY_HEADS, d=MEMORY_HEAD_DIM))
    cols = st.columns(2)
    block = int(cols[0].select_slider(t("lab.flash.memory_block"), MEMORY_BLOCKS, 64, key="flash_memory_block"))
    repeats = repeats_slider(cols[1], "flash_repeats")
    settings = (block, causal, repeats)
    try:
        result = measure_on_click("flash", settings, lambda: cost_frames(*settings))
    except IsolatedMeasurementError:
        st.error(t("lab.flash.failed"))
        return
    if result is None:
        return
    show_measurement_notes(result, repeats, _method_name)
    _memory_result(result.value["memory"])
    _backends_result(result.value["backends"])


def render() -> None:
    """Draw the lab."""
    lab_header("flash")
    # the text and the tile sizes in one row: the tiles' chart starts on a laptop's first screen
    text_column, *cols = st.columns([4, 2, 2, 1.3], vertical_alignment="top")
    with text_column:
        tokens = token_input(t("lab.common.text"), t("lab.flash.default_text"), "flash_tokens", MAX_TOKENS)
    block_q = int(cols[0].slider(t("lab.flash.block_q"), 1, MAX_BLOCK, 4, key="flash_block_q"))
    block_k = int(cols[1].slider(t("lab.flash.block_k"), 1, MAX_BLOCK, 3, key="flash_block_k"))
    causal = bool(cols[2].checkbox(t("lab.flash.causal"), value=True, key="flash_causal"))
    if tokens is None:
        return
    length = len(tokens)
    block_q, block_k = min(block_q, length), min(block_k, length)
    labels = token_labels(tokens)
    run = tiled_run(tuple(tokens), block_q, block_k, causal, 0)
    blocks, tiles = len(tile_ranges(length, block_q)), len(tile_ranges(length, block_k))

    st.subheader(t("lab.flash.step_title"))
    _stepper(run, labels, block_q, block_k)

    st.subheader(t("lab.flash.result_title"))
    st.caption(grid_text(length, block_q, block_k))
    if length % block_q or length % block_k:
        st.caption(t("lab.flash.uneven", last_q=counted(length - (blocks - 1) * block_q, "row"),
                     last_k=counted(length - (tiles - 1) * block_k, "column")))  # fmt: skip
    show_verdict(st, t("lab.flash.check"), run["diff"], TOLERANCE)
    cols = st.columns(3)
    cols[0].metric(t("lab.flash.metric.tile"), f"{block_q} × {block_k} = {block_q * block_k}")
    cols[1].metric(t("lab.flash.metric.full"), f"{length} × {length} = {length * length}")
    cols[2].metric(t("lab.flash.metric.skipped"), f"{run['skipped']} / {run['tiles']}")
    if causal:
        st.caption(t("lab.flash.skipped_caption", skipped=run["skipped"], all=blocks * tiles))
    else:
        st.caption(t("lab.flash.no_mask_caption", all=counted(blocks * tiles, "tile")))

    _measure_section(causal)
    render_lab_links(st, ["complexity", "masks"])
