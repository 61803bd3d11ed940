"""Vega-Lite specs of an image's attention: the image with its patch grid, weights over the image, how far heads look.

Pure functions in the style of :mod:`components.charts` (dict specs, canvas renderer, the page's fonts); the
tests validate them against the Vega-Lite schema. The picture travels once per chart as a PNG data URI in the
dataset :data:`IMAGE` (:func:`image_uri`: a digit's 8 × 8 pixels scaled up by whole pixels, a few hundred
bytes), and every panel draws it under its cells. Frames:

    cells     row, column, patch (+ panel, weight, query)   one row per patch (and panel), row-major grid order
    distance  layer, head, pixels, cls_share              one row per head and layer
    uniform   pixels                                      the reference line

Weights over an image are drawn as the opacity of an orange cell over each patch (the image shows through
where a patch gets little), one opacity scale for every panel of a chart, from 0 to the largest weight shown
(weight spread over many patches is thin on a 0-1 scale); the tooltip gives each weight to four decimals.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import Tensor
from torch.nn import functional as F

from components.chart_style import CANVAS_RENDERER, VEGA_CONFIG
from components.charts import VEGA_LITE_SCHEMA, Spec

__all__ = [
    "CELLS",
    "DISTANCE",
    "IMAGE",
    "UNIFORM",
    "ImageChartText",
    "OverlayPanel",
    "distance_chart",
    "grid_chart",
    "image_array",
    "image_uri",
    "overlay_chart",
    "patch_frame",
]

IMAGE = "image"  # dataset: one row, the picture's data URI
CELLS = "cells"
DISTANCE = "distance"
UNIFORM = "uniform"  # dataset: uniform attention's distance, the reference line
_WEIGHT_COLOR = "#c2410c"  # the page's primary colour: weight over the image
_QUERY_COLOR = "#1d4ed8"  # the query patch's frame
_GRID_COLOR = "#f59e0b"
_OPACITY_MAX = 0.85


@dataclass(frozen=True)
class ImageChartText:
    """The words the image charts show, in the page's language."""

    patch: str = "patch"
    weight: str = "weight"
    layer: str = "layer"
    head: str = "head"
    distance: str = "mean attention distance (pixels)"
    uniform: str = "uniform attention"
    cls_share: str = "weight on [CLS] (left out)"


@dataclass(frozen=True)
class OverlayPanel:
    """One picture of :func:`overlay_chart`: its title, a second line, and a weight per patch (N,)."""

    title: str
    subtitle: str
    weights: np.ndarray


def _top(spec: Spec, datasets: dict[str, pd.DataFrame]) -> Spec:
    return {
        "$schema": VEGA_LITE_SCHEMA,
        "config": VEGA_CONFIG,
        "usermeta": CANVAS_RENDERER,
        **spec,
        "datasets": datasets,
    }


def image_array(pixels: Tensor, side_px: int) -> np.ndarray:
    """The image as 8-bit pixels about ``side_px`` on its longer side: a small image scaled up by whole pixels
    (each a sharp block: a digit stays legible), a large one averaged down (an upload shown small).

    Args:
        pixels: (C, H, W) in [0, 1], C = 1 (grey: light ink on dark, as the digits' model reads it) or 3.

    Returns:
        (h, w) uint8 for grey, (h, w, 3) for colour.
    """
    image = pixels.detach().to("cpu", torch.float32).clamp(0, 1)  # (C, H, W)
    longest = max(image.shape[-2:])
    if longest > side_px:
        size = [max(1, round(side * side_px / longest)) for side in image.shape[-2:]]
        image = F.interpolate(image.unsqueeze(0), size=size, mode="area")[0]  # (C, h, w)
    else:
        scale = side_px // longest
        image = image.repeat_interleave(scale, dim=1).repeat_interleave(scale, dim=2)  # (C, sH, sW)
    array = (image * 255).round().to(torch.uint8)
    return np.ascontiguousarray(array[0].numpy() if array.size(0) == 1 else array.permute(1, 2, 0).numpy())


def image_uri(pixels: Tensor, side_px: int) -> str:
    """The image as a PNG data URI (:func:`image_array`), to draw under a chart's cells."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(image_array(pixels, side_px)).save(buffer, "PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def patch_frame(grid: tuple[int, int], labels: Sequence[str]) -> pd.DataFrame:
    """Each patch's grid cell and label, in row-major order: columns ``row``, ``column``, ``patch``."""
    rows, columns = grid
    if len(labels) != rows * columns:
        raise ValueError(f"{len(labels)} labels for a grid of {rows} × {columns} patches")
    return pd.DataFrame(
        {
            "row": np.repeat(np.arange(rows, dtype=np.int16), columns),
            "column": np.tile(np.arange(columns, dtype=np.int16), rows),
            "patch": list(labels),
        }
    )


def _size(grid: tuple[int, int], side_px: int) -> tuple[int, int]:
    """(width, height) in px of a picture whose longer side is ``side_px``, cells square."""
    rows, columns = grid
    cell = side_px // max(rows, columns)
    return cell * columns, cell * rows


def _axes(grid: tuple[int, int]) -> dict[str, Spec]:
    """Band scales of the patch grid without padding (the cells tile the picture) and without axes."""
    rows, columns = grid
    band = {"paddingInner": 0, "paddingOuter": 0}
    return {
        "x": {"field": "column", "type": "ordinal", "axis": None, "scale": {**band, "domain": list(range(columns))}},
        "y": {"field": "row", "type": "ordinal", "axis": None, "scale": {**band, "domain": list(range(rows))}},
    }


def _picture(width: int, height: int) -> Spec:
    return {
        "data": {"name": IMAGE},
        "mark": {"type": "image", "width": width, "height": height, "align": "left", "baseline": "top"},
        "encoding": {"url": {"field": "url", "type": "nominal"}, "x": {"value": 0}, "y": {"value": 0}},
    }


def grid_chart(uri: str, grid: tuple[int, int], labels: Sequence[str], side_px: int = 240) -> Spec:
    """The image with its patch grid drawn over it and each patch's label in its cell.

    Args:
        uri: the picture (:func:`image_uri`).
        grid: (R, Q) patches.
        labels: the patches' labels (``r0c0`` ...), row-major.
        side_px: the picture's longer side.
    """
    width, height = _size(grid, side_px)
    cell = min(width // grid[1], height // grid[0])
    encoding = _axes(grid)
    layers = [
        _picture(width, height),
        {
            "data": {"name": CELLS},
            "mark": {"type": "rect", "fill": None, "stroke": _GRID_COLOR, "strokeWidth": 1.5},
            "encoding": {**encoding, "tooltip": [{"field": "patch", "type": "nominal"}]},
        },
    ]
    if cell >= 28:  # a label fits its cell: white on a black shadow, readable on light and dark pixels alike
        size = min(13, cell // 3)
        for color, shift in (("black", 1), ("white", 0)):
            mark = {"type": "text", "color": color, "fontSize": size, "fontWeight": 600, "dx": shift, "dy": shift}
            label = {**encoding, "text": {"field": "patch", "type": "nominal"}}
            layers.append({"data": {"name": CELLS}, "mark": mark, "encoding": label})
    spec = {"concat": [{"layer": layers, "width": width, "height": height}]}  # a single view's height drifts
    return _top(spec, {IMAGE: pd.DataFrame({"url": [uri]}), CELLS: patch_frame(grid, labels)})


def overlay_chart(
    uri: str,
    grid: tuple[int, int],
    labels: Sequence[str],
    panels: Sequence[OverlayPanel],
    query: int | None,
    text: ImageChartText = ImageChartText(),
    side_px: int = 150,
    columns: int = 5,
) -> Spec:
    """Pictures side by side, each with its weights over the patches and the query patch framed.

    Args:
        uri: the picture (:func:`image_uri`).
        grid: (R, Q) patches; labels: theirs, row-major.
        panels: one picture each, the weights (N,) on the patches (the tokens before them left out).
        query: the framed patch's index among the patches, or ``None`` (a query that is no patch: [CLS]).
        text: tooltip and legend words.
        side_px: each picture's longer side; columns: pictures per row.
    """
    width, height = _size(grid, side_px)
    cells = patch_frame(grid, labels)
    count = len(cells)
    frames = []
    for index, panel in enumerate(panels):
        weights = np.asarray(panel.weights, dtype=np.float32)
        if weights.shape != (count,):
            raise ValueError(f"panel {panel.title!r}: weights of shape {weights.shape} for {count} patches")
        frames.append(cells.assign(panel=np.int16(index), weight=weights))
    frame = pd.concat(frames, ignore_index=True)
    frame["query"] = np.tile(np.arange(count) == query, len(panels))
    top = float(frame["weight"].max()) if len(frame) else 1.0
    encoding = _axes(grid)
    opacity = {
        "field": "weight",
        "type": "quantitative",
        "scale": {"domain": [0, top or 1.0], "range": [0, _OPACITY_MAX]},
    }
    tooltip = [
        {"field": "patch", "type": "nominal", "title": text.patch},
        {"field": "weight", "type": "quantitative", "title": text.weight, "format": ".4f"},
    ]

    def one(index: int, panel: OverlayPanel) -> Spec:
        mine = {"filter": {"field": "panel", "equal": index}}
        return {
            "title": {"text": panel.title, "subtitle": panel.subtitle},
            "width": width,
            "height": height,
            "layer": [
                _picture(width, height),
                {
                    "data": {"name": CELLS},
                    "transform": [mine],
                    "mark": {"type": "rect", "color": _WEIGHT_COLOR},
                    "encoding": {**encoding, "opacity": {**opacity, "legend": None}, "tooltip": tooltip},
                },
                {
                    "data": {"name": CELLS},
                    "transform": [mine, {"filter": {"field": "query", "equal": True}}],
                    "mark": {"type": "rect", "fill": None, "stroke": _QUERY_COLOR, "strokeWidth": 3},
                    "encoding": encoding,
                },
            ],
        }

    spec = {"concat": [one(i, panel) for i, panel in enumerate(panels)], "columns": columns, "spacing": 14}
    return _top(spec, {IMAGE: pd.DataFrame({"url": [uri]}), CELLS: frame})


def distance_chart(frame: pd.DataFrame, uniform: float, text: ImageChartText = ImageChartText()) -> Spec:
    """Each head's mean attention distance per layer (the ViT paper's Fig. 7), with uniform attention's as a rule.

    Args:
        frame: columns ``layer``, ``head``, ``pixels``, ``cls_share`` (:data:`DISTANCE`).
        uniform: the distance of a head that weighs every token alike (the dashed line).
    """
    layers = sorted(frame["layer"].unique().tolist())
    top = max(float(frame["pixels"].max()) if len(frame) else 0.0, uniform) * 1.15
    y = {"field": "pixels", "type": "quantitative", "title": text.distance, "scale": {"domain": [0, top]}}
    dots = {
        "data": {"name": DISTANCE},
        "mark": {"type": "circle", "size": 90, "opacity": 0.85},
        "encoding": {
            "x": {"field": "layer", "type": "ordinal", "title": text.layer, "scale": {"domain": layers},
                  "axis": {"labelAngle": 0}},
            "y": y,
            "color": {"field": "head", "type": "nominal", "title": text.head},
            "xOffset": {"field": "head", "type": "nominal"},
            "tooltip": [
                {"field": "layer", "type": "ordinal", "title": text.layer},
                {"field": "head", "type": "nominal", "title": text.head},
                {"field": "pixels", "type": "quantitative", "title": text.distance, "format": ".2f"},
                {"field": "cls_share", "type": "quantitative", "title": text.cls_share, "format": ".2f"},
            ],
        },
    }  # fmt: skip
    rule = {
        "data": {"name": UNIFORM},
        "mark": {"type": "rule", "strokeDash": [5, 4], "color": "#6b7280"},
        "encoding": {"y": {"field": "pixels", "type": "quantitative"}},
    }
    view = {
        "title": {"text": f"- - -  {text.uniform}: {uniform:.2f}", "color": "#6b7280", "fontWeight": "normal"},
        "layer": [dots, rule],
        "width": 200 + 90 * len(layers),
        "height": 220,
    }
    return _top({"concat": [view]}, {DISTANCE: frame, UNIFORM: pd.DataFrame({"pixels": [uniform]})})
