"""The Vega-Lite charts of the main page (the per-head summary bars; step 1b's grouping, turns and angles), read as
data and checked against the schema."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import altair as alt
import jsonschema
import pandas as pd
import pytest
import torch

from components import charts, frames, today_charts


def _summary_spec() -> dict:
    weights = torch.softmax(torch.randn(16, 4, 4), dim=-1)  # (H, Lq, Lk)
    return charts.head_summary_chart(frames.head_summary_frame(weights), charts.ChartText(head="头"))


def test_head_summary_chart_bars_per_head():
    spec = _summary_spec()
    bars = spec["hconcat"]
    assert [bar["encoding"]["y"]["field"] for bar in bars] == ["entropy", "max_weight"]
    assert all(bar["encoding"]["x"]["field"] == "head" and bar["encoding"]["x"]["title"] == "头" for bar in bars)
    assert bars[1]["encoding"]["y"]["scale"] == {"domain": [0.0, 1.0]}  # a weight: on 0-1
    tooltip = {item["field"] for item in bars[0]["encoding"]["tooltip"]}
    assert tooltip == {"head", "entropy", "max_weight"}
    assert spec["datasets"][charts.CELLS]["head"].tolist() == list(range(16))


def test_fonts_are_projector_sized_and_fall_back_to_cjk():
    config = _summary_spec()["config"]
    assert config["font"] == "sans-serif"
    assert config["axis"]["labelFontSize"] >= 14
    assert config["axis"]["titleFontSize"] >= 14


def test_one_vega_lite_config_gives_the_page_its_type_sizes():
    """No module of components/ writes a Vega-Lite config of its own (a dict with a font and axes) but
    chart_style, whose config every Vega-Lite spec of the main page carries."""
    from components import chart_style, image_charts, training_charts

    root = Path(chart_style.__file__).parent
    writers = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            keys = {key.value for key in getattr(node, "keys", []) if isinstance(key, ast.Constant)}
            if isinstance(node, ast.Dict) and {"font", "axis"} <= keys:
                writers.add(path.relative_to(root).as_posix())
    assert writers == {"chart_style.py"}
    for module in (charts, today_charts, training_charts, image_charts):
        assert module.VEGA_CONFIG is chart_style.VEGA_CONFIG, module.__name__
    assert _summary_spec()["config"] is chart_style.VEGA_CONFIG
    sizes = chart_style.VEGA_CONFIG["axis"], chart_style.VEGA_CONFIG["header"], chart_style.VEGA_CONFIG["title"]
    assert {sizes[0]["labelFontSize"], sizes[1]["labelFontSize"], sizes[2]["fontSize"]} == {chart_style.FONT_SIZE}


def test_the_summary_is_valid_vega_lite_of_the_version_altair_ships():
    assert charts.VEGA_LITE_SCHEMA == alt.SCHEMA_URL
    validator = jsonschema.Draft7Validator(alt.vegalite.v6.schema.core.load_schema())
    spec = _summary_spec()
    rows = {name: json.loads(frame.to_json(orient="records")) for name, frame in spec["datasets"].items()}
    errors = [error.message for error in validator.iter_errors({**spec, "datasets": rows})]
    assert not errors, errors[:3]


# ---------------------------------------------------------------- today's attention (components/today_charts.py)
def _valid(spec: dict) -> list[str]:
    validator = jsonschema.Draft7Validator(alt.vegalite.v6.schema.core.load_schema())
    rows = {name: json.loads(frame.to_json(orient="records")) for name, frame in spec["datasets"].items()}
    return [error.message for error in validator.iter_errors({**spec, "datasets": rows})]


def test_the_grouping_picture_joins_each_query_head_to_the_kv_head_it_reads():
    import io

    from PIL import Image

    kv_head_of = (0, 0, 0, 1, 1, 1)  # 6 query heads, 2 K/V heads
    image = Image.open(io.BytesIO(today_charts.grouping_png(kv_head_of, scale=1))).convert("RGB")
    box, gap, rows_gap, margin = 34, 14, 56, 8  # the picture's layout, px (components/today_charts.py)
    assert image.size == (today_charts.grouping_width(6), 2 * margin + 2 * box + rows_gap)
    colours = [tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in ("#1f77b4", "#ff7f0e")]

    def centre(column: float, row: int) -> tuple[float, float]:
        return margin + column * (box + gap) + box / 2, margin + box / 2 + row * (box + rows_gap)

    def near(point: tuple[float, float], colour: tuple[int, ...]) -> bool:  # the label's white text aside
        x, y = point
        return any(image.getpixel((int(x) + dx, int(y) - box // 2 + 3)) == colour for dx in (-8, 0, 8))

    for h, g in enumerate(kv_head_of):
        assert near(centre(h, 0), colours[g])  # query head h in its group's colour
        (x0, y0), (x1, y1) = centre(h, 0), centre(3 * g + 1, 1)  # its edge ends at its K/V head's centre
        middle = (int((x0 + x1) / 2), int((y0 + y1) / 2))
        assert any(image.getpixel((middle[0] + dx, middle[1])) == colours[g] for dx in range(-2, 3))
    for g in range(2):
        assert near(centre(3 * g + 1, 1), colours[g])


def test_the_turn_chart_draws_each_pair_on_one_scale_for_both_axes():
    rows = [
        {"vector": vector, "pair": name, "token": f"{i}:t", "order": order, "stage": stage, "a": a, "b": b}
        for vector in ("q", "k")
        for name, a, b in (("pair 0", 0.5, -2.0), ("pair 4", 0.1, 0.3))
        for i in range(3)
        for order, stage in enumerate(("before RoPE", "after RoPE"))
    ]
    spec = today_charts.turn_chart(pd.DataFrame(rows))
    assert not _valid(spec)
    titles = [[panel["title"] for panel in row["hconcat"]] for row in spec["vconcat"]]
    assert titles == [["q · pair 0", "q · pair 4"], ["k · pair 0", "k · pair 4"]]
    first, second = spec["vconcat"][0]["hconcat"]
    x, y = (first["layer"][1]["encoding"][axis]["scale"]["domain"] for axis in ("x", "y"))
    assert x == y == [-2.2, 2.2]  # the largest |value| of its pair, on both axes: a turn looks like a turn
    assert second["layer"][1]["encoding"]["x"]["scale"]["domain"] == pytest.approx([-0.33, 0.33])


def test_the_angles_chart_is_valid_and_gives_each_pairs_full_turn():
    spec = today_charts.angles_chart([1.0, 0.1, 0.01])
    assert not _valid(spec)
    frame = spec["datasets"][today_charts.GROUPS]
    assert frame["wavelength"].tolist() == pytest.approx([2 * math.pi, 20 * math.pi, 200 * math.pi])


@pytest.mark.parametrize("heads", [4, 12, 32])
def test_the_step_chart_gives_each_head_a_row_and_pads_for_its_axes_and_legend(heads):
    length = 7
    frame = pd.DataFrame(
        [(h, k, 1 / length) for h in range(heads) for k in range(length)], columns=["head", "key", "weight"]
    )
    labels = [f"{k}:t" for k in range(length)]
    spec = today_charts.step_weights_chart(frame, labels, length - 1, {"head": "head", "key": "key", "weight": "w"})
    # "fit" (Streamlit's default) would squeeze axes and legend into width x height: 4 heads drew in 88 px
    assert spec["autosize"] == {"type": "pad", "contains": "padding"}
    assert spec["height"] / heads >= 18  # a readable row per head (the head labels apart)
    assert spec["width"] <= 560  # with the head axis and the legend: inside a 1280 px window's content
