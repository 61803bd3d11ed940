"""The image charts (``components/image_charts.py``) as data: valid Vega-Lite, the cells where the patches are, the
weights as given, pictures scaled by whole pixels or averaged down."""

from __future__ import annotations

import base64
import io
import json

import altair as alt
import jsonschema
import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image

from components import image_charts
from components.image_charts import ImageChartText, OverlayPanel
from mha.vision.patches import patch_tokens

GRID = (2, 3)  # 2 rows, 3 columns of patches
LABELS = patch_tokens(*GRID, cls=False)
PIXELS = torch.linspace(0, 1, 4 * 6).view(1, 4, 6)  # (C, H, W): patches of 2 × 2


def _valid(spec: dict) -> None:
    validator = jsonschema.Draft7Validator(alt.vegalite.v6.schema.core.load_schema())
    rows = {name: json.loads(frame.to_json(orient="records")) for name, frame in spec["datasets"].items()}
    errors = [error.message for error in validator.iter_errors({**spec, "datasets": rows})]
    assert not errors, errors[:3]


def test_a_small_image_is_scaled_up_by_whole_pixels_and_a_large_one_averaged_down():
    small = image_charts.image_array(PIXELS, 60)  # 6 wide: 10 screen pixels a pixel
    assert small.shape == (40, 60) and small.dtype == np.uint8
    expected = (PIXELS[0].numpy() * 255).round().astype(np.uint8)
    assert (small[::10, ::10] == expected).all() and (small[9::10, 9::10] == expected).all()
    colour = torch.rand(3, 300, 200, generator=torch.Generator().manual_seed(0))
    large = image_charts.image_array(colour, 150)
    assert large.shape == (150, 100, 3)
    block = colour[:, :2, :2].mean(dim=(1, 2))  # 300 -> 150: each shown pixel the mean of 2 × 2
    np.testing.assert_allclose(large[0, 0], (block * 255).numpy(), atol=0.51)
    uri = image_charts.image_uri(PIXELS, 60)
    assert uri.startswith("data:image/png;base64,")
    with Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))) as decoded:
        assert (np.asarray(decoded) == small).all()


def test_the_grid_chart_puts_each_label_in_its_cell():
    spec = image_charts.grid_chart("data:image/png;base64,", GRID, LABELS, side_px=240)
    _valid(spec)
    cells = spec["datasets"][image_charts.CELLS]
    assert cells[["row", "column"]].values.tolist() == [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]
    assert cells["patch"].tolist() == ["r0c0", "r0c1", "r0c2", "r1c0", "r1c1", "r1c2"]
    (view,) = spec["concat"]
    assert (view["width"], view["height"]) == (240, 160)  # cells of 80 px: the picture's aspect kept
    with pytest.raises(ValueError, match="5 labels"):
        image_charts.patch_frame(GRID, LABELS[:5])


def test_the_overlay_carries_each_panels_weights_and_frames_the_query():
    weights = np.arange(12, dtype=np.float32).reshape(2, 6) / 20
    panels = [OverlayPanel(f"head {h}", "on [CLS]: 0.10", weights[h]) for h in range(2)]
    spec = image_charts.overlay_chart("data:image/png;base64,", GRID, LABELS, panels, 4, ImageChartText(), 120, 5)
    _valid(spec)
    cells = spec["datasets"][image_charts.CELLS]
    for h in range(2):
        np.testing.assert_array_equal(cells[cells["panel"] == h]["weight"].to_numpy(), weights[h])
    assert cells[cells["query"]]["patch"].tolist() == ["r1c1", "r1c1"]  # patch 4, in both pictures
    opacity = spec["concat"][0]["layer"][1]["encoding"]["opacity"]["scale"]
    assert opacity["domain"] == [0, pytest.approx(11 / 20)]  # one scale for every panel: 0 to the largest weight
    assert [view["title"]["text"] for view in spec["concat"]] == ["head 0", "head 1"]
    none = image_charts.overlay_chart("u", GRID, LABELS, panels, None)
    assert not none["datasets"][image_charts.CELLS]["query"].any()  # [CLS] as the query: no patch framed
    with pytest.raises(ValueError, match="for 6 patches"):
        image_charts.overlay_chart("u", GRID, LABELS, [OverlayPanel("x", "", np.zeros(5))], None)


def test_the_distance_chart_has_a_dot_per_head_and_layer_and_the_uniform_line():
    frame = pd.DataFrame({"layer": [0, 0, 1, 1], "head": [0, 1, 0, 1], "pixels": [1.0, 3.0, 2.0, 4.0],
                          "cls_share": [0.1, 0.2, 0.3, 0.4]})  # fmt: skip
    spec = image_charts.distance_chart(frame, 2.5, ImageChartText(uniform="uniform"))
    _valid(spec)
    assert spec["datasets"][image_charts.UNIFORM]["pixels"].tolist() == [2.5]
    (view,) = spec["concat"]
    assert "uniform: 2.50" in view["title"]["text"]
    assert view["layer"][0]["encoding"]["y"]["scale"]["domain"] == [0, pytest.approx(4.6)]  # room above the highest
