"""Bytes the page sends to the browser per rerun, and bytes per heatmap cell (AppTest, no timing).

Every element of the page after one run of ``playground.py`` (through AppTest, at each page size of
:mod:`bench.app_rerun`) is measured as the serialized size of its protobuf, the message Streamlit
sends. Charts are split into what describes them (a Vega-Lite spec; a canvas component's JavaScript
and CSS) and their data (Arrow datasets; the component's binary payload); a heatmap's cells (its
largest dataset, or its payload) over its number of cells give the bytes per cell. The browser section reports the
websocket bytes of a rerun as received, which add a few bytes of framing per message.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pyarrow as pa

from bench.app_rerun import SIZES, open_page
from bench.table import Table

TITLE = "Bytes sent per rerun, and bytes per heatmap cell"

TARGET_BYTES_PER_CELL = 10.0  # the performance target (docs/PERFORMANCE.md)


def _leaves(node: Any) -> list[Any]:
    """The elements (not blocks) of an AppTest element tree."""
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        return [leaf for child in children.values() for leaf in _leaves(child)]
    return [node]


def _chart_kind(spec: dict) -> str:
    """A name for one of the page's charts, from the shape of its spec."""
    if "facet" in spec:
        return "all-heads grid"
    if "hconcat" in spec:
        return "head summary bars"
    if len(spec.get("layer", [])) == 2 and spec["layer"][1].get("mark", {}).get("type") == "rule":
        return "concat heatmap"
    if "layer" in spec:
        return "attention heatmap"
    return "feature heatmap"


def _rows(arrow: bytes) -> int:
    return pa.ipc.open_stream(pa.py_buffer(arrow)).read_all().num_rows


def _figure_kind(figure: Any) -> str:
    """A name for one of the page's canvas heatmaps, from its figure."""
    if figure.square and not figure.axes:
        return "all-heads grid"
    if figure.group:
        return "concat heatmap"
    if figure.col_labels is not None:
        return "attention heatmap"
    return "feature heatmap"


def page_payload(at: Any) -> tuple[Counter[str], list[tuple[str, int, int, int]]]:
    """Bytes per kind of element, and per chart ``(kind, cells, cell bytes, all bytes of the chart)``.

    Vega-Lite charts: the spec, and the Arrow datasets (the cells: the largest). Canvas heatmaps
    (components v2): the component's code (JavaScript and CSS), and the binary payload.
    """
    sizes: Counter[str] = Counter()
    charts = []
    for element in _leaves(at._tree):  # AppTest has no public walk over every element
        proto = getattr(element, "proto", None)
        if proto is None:
            continue
        if element.type == "vega_lite_chart":
            data = [d.data.data for d in proto.datasets]
            sizes["chart specs"] += len(proto.spec)
            sizes["chart data"] += sum(len(b) for b in data)
            rows, cells = max((_rows(b), b) for b in data)  # the cells: the largest dataset
            charts.append((_chart_kind(json.loads(proto.spec)), rows, len(cells), proto.ByteSize()))
        elif element.type == "bidi_component":
            code = len(proto.js_content) + len(proto.css_content) + len(proto.html_content)
            sizes["chart specs"] += code
            sizes["chart data"] += proto.ByteSize() - code
            if proto.WhichOneof("data") == "bytes":
                from components.heatmap import decode

                figure = decode(proto.bytes)
                count, rows, cols = figure.shape
                charts.append((_figure_kind(figure), count * rows * cols, len(proto.bytes), proto.ByteSize()))
        else:
            sizes[element.type] += proto.ByteSize()
    return sizes, charts


def run(quick: bool) -> list[Table]:
    """Two tables: bytes per rerun by element kind; bytes per cell by kind of chart."""
    totals, per_cell = [], []
    for size in SIZES[:1] if quick else SIZES:
        sizes, charts = page_payload(open_page(size))
        total = sum(sizes.values())
        chart_total = sum(chart[3] for chart in charts)
        cells = sum(chart[1] for chart in charts)
        others = total - sizes["chart specs"] - sizes["chart data"] - sizes["code"]
        totals.append(
            (
                size.name,
                f"{total / 1024:.1f}",
                f"{sizes['chart specs'] / 1024:.1f}",
                f"{sizes['chart data'] / 1024:.1f}",
                f"{sizes['code'] / 1024:.1f}",
                f"{others / 1024:.1f}",
                str(len(charts)),
                f"{cells:,}",
                f"{sizes['chart data'] / max(cells, 1):.1f}",
                f"{chart_total / max(cells, 1):.1f}",
                "met" if sizes["chart data"] / max(cells, 1) <= TARGET_BYTES_PER_CELL else "missed",
            )
        )
        by_kind: dict[str, list[tuple[str, int, int, int]]] = {}
        for chart in charts:
            if chart[0] != "head summary bars":  # bars, not a heatmap
                by_kind.setdefault(chart[0], []).append(chart)
        for kind, group in by_kind.items():
            kind_cells = sum(c[1] for c in group)
            per = sum(c[2] for c in group) / kind_cells
            per_cell.append((size.name, kind, str(len(group)), f"{kind_cells:,}", f"{per:.2f}"))
    notes_total = (
        "Protobuf bytes of every element after one run (AppTest), in KiB; 'chart specs': Vega-Lite specs and the "
        "canvas component's code; 'others': every widget, text and table. "
        f"'chart data / cell': every chart's Arrow datasets over their cells (target <= {TARGET_BYTES_PER_CELL:.0f}); "
        "'all chart bytes / cell' adds the specs.",
    )
    notes_cell = (
        "Each heatmap's data over its cells: the Arrow stream of a Vega-Lite chart's cells dataset, or a canvas "
        "heatmap's binary payload (float32 values, a byte per cell for the mask, a JSON header with the labels).",
    )
    return [
        Table(
            "Bytes sent per rerun (KiB)",
            (
                "page",
                "total",
                "chart specs",
                "chart data",
                "code",
                "others",
                "charts",
                "cells",
                "chart data / cell",
                "all chart bytes / cell",
                "verdict",
            ),
            tuple(totals),
            notes_total,
        ),
        Table(
            "Bytes per heatmap cell (its data / cells)",
            ("page", "chart", "charts", "cells", "bytes / cell"),
            tuple(per_cell),
            notes_cell,
        ),
    ]
