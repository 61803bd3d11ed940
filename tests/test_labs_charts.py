"""The labs' chart builders, navigation table and messages, without a browser."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from components.i18n import LANGUAGES
from components.labs.charts import (
    LABELLED_TOKENS_MAX,
    READABLE_CELL,
    WIDTH_BUDGET_PX,
    Grid,
    Series,
    Titles,
    attention_panels,
    bar_chart,
    dot_chart,
    fit_cell,
    heatmap,
    line_chart,
    mask_grid,
    matrix_frame,
    source_grid,
    styled,
    weights_marking_nan,
)
from components.labs.common import format_bytes
from components.locale import CATALOG
from components.nav import HOME_PAGE, LAB_PAGES, linkable

REPO = Path(__file__).resolve().parents[1]
ROWS, COLUMNS = ["r0", "r1", "r2"], ["c0", "c1", "c2", "c3"]


def _frame() -> pd.DataFrame:
    values = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) / 24  # (P, R, C)
    return matrix_frame(values, ROWS, COLUMNS, ["A", "B"])


def test_matrix_frame_is_long_form_in_panel_row_column_order():
    frame = _frame()
    assert len(frame) == 24 and list(frame.columns) == ["panel", "row", "column", "value"]
    row = frame.iloc[1 * 12 + 2 * 4 + 3]  # panel B, row r2, column c3
    assert (row["panel"], row["row"], row["column"]) == ("B", "r2", "c3")
    assert row["value"] == pytest.approx((12 + 8 + 3) / 24)


def test_matrix_frame_names_the_mismatch():
    with pytest.raises(ValueError, match=r"need 2 panel, 3 row and 4 column labels"):
        matrix_frame(np.zeros((2, 3, 4)), ["r"], ["c"], ["p"])


def test_weights_heatmap_has_a_fixed_0_to_1_scale_and_keeps_the_label_order():
    rows, columns = ["r2", "r0", "r1"], ["c3", "c2", "c1", "c0"]
    grid = Grid(rows, columns, ["A", "B"])
    spec = styled(heatmap(_frame(), Titles(x="k", y="q", color="w"), grid)).to_dict()
    encoding = spec["spec"]["encoding"]
    assert encoding["color"]["scale"]["domain"] == [0.0, 1.0]
    assert encoding["y"]["sort"] == rows and encoding["x"]["sort"] == columns
    assert (encoding["x"]["title"], encoding["y"]["title"], encoding["color"]["title"]) == ("k", "q", "w")
    assert spec["facet"]["sort"] == ["A", "B"]
    assert spec["config"]["axis"]["labelFontSize"] >= 14


def test_diverging_heatmap_is_symmetric_around_zero():
    frame = _frame().assign(value=lambda f: f["value"] - 0.8)
    spec = heatmap(frame, Titles(), Grid(ROWS, COLUMNS), diverging=True).to_dict()
    low, high = spec["spec"]["encoding"]["color"]["scale"]["domain"]
    assert low == -high and high == pytest.approx(0.8)


def test_nan_weights_are_drawn_as_their_own_marked_cells():
    weights = np.full((2, 3, 3), 1 / 3, dtype=np.float32)  # (P, L, L)
    weights[0, 2] = np.nan  # panel A's last row is NaN
    labels = ["0:a", "1:b", "2:c"]
    spec = styled(
        weights_marking_nan(weights, labels, ["A", "B"], Titles(color="w"), "NaN here", most_per_row=2)
    ).to_dict()
    cells = pd.DataFrame(spec["datasets"][spec["data"]["name"]])
    nan_cells = cells[cells["nan"] != ""]
    assert set(zip(nan_cells["panel"], nan_cells["row"], strict=True)) == {("A", "2:c")} and len(nan_cells) == 3
    assert (nan_cells["nan"] == "NaN here").all() and (nan_cells["text"] == "NaN").all()
    assert (cells.loc[cells["nan"] == "", "text"] == "0.3333").all()  # a number's tooltip: 4 decimals
    numbers, marked, words = spec["spec"]["layer"]
    assert numbers["transform"] == [{"filter": "(datum.nan === '')"}]  # a NaN never reaches the blues scale
    assert numbers["encoding"]["color"]["scale"]["domain"] == [0.0, 1.0]
    assert marked["transform"] == words["transform"] == [{"filter": "(datum.nan !== '')"}]
    assert marked["encoding"]["fill"]["scale"]["domain"] == ["NaN here"]  # the legend's entry
    assert words["encoding"]["text"]["field"] == "text"
    assert all(layer["encoding"]["tooltip"][-1]["field"] == "text" for layer in (numbers, marked, words))


def test_fit_cell_stays_within_its_bounds_and_fits_the_budget():
    assert fit_cell(4, 1) == 28
    assert fit_cell(200, 5) == READABLE_CELL
    for cells, panels in [(8, 5), (12, 3), (12, 2), (32, 1)]:
        cell = fit_cell(cells, panels, budget=860)
        assert cell > READABLE_CELL and 110 + panels * (cells * cell + 20) <= 860
    # too many panels for readable cells: the cell stays readable; Grid.fitted then wraps to fewer a row
    assert fit_cell(16, 5) == READABLE_CELL and Grid.fitted(["r"], ["c"] * 16, ["p"] * 5, 5).per_row < 5


@pytest.mark.parametrize("tokens", [1, 5, 11, 16, 24, LABELLED_TOKENS_MAX])
@pytest.mark.parametrize("most_per_row", [1, 2, 3, 4])
def test_every_token_label_is_drawn_readable_and_the_grid_still_fits(tokens, most_per_row):
    labels = [f"{i}:word{i}" for i in range(tokens)]
    panels = [f"head {i}" for i in range(4)]  # 4 x 32 x 32 cells: under Altair's 5,000-row limit for inline data
    weights = np.full((4, tokens, tokens), 1 / tokens)
    spec = attention_panels(weights, labels, panels, Titles(), most_per_row=most_per_row).to_dict()
    per_row, cell = spec["columns"], spec["spec"]["width"] // tokens
    assert cell >= READABLE_CELL and per_row <= most_per_row
    assert 110 + per_row * (tokens * cell + 20) <= WIDTH_BUDGET_PX
    for axis in ("x", "y"):
        shown = spec["spec"]["encoding"][axis]
        assert shown["axis"]["labelOverlap"] is False  # every label drawn, none thinned out
        assert 12 <= shown["axis"]["labelFontSize"] <= cell  # readable, and no taller than its cell
        assert shown["sort"] == labels


def test_axis_titles_are_horizontal_and_not_cut():
    config = styled(line_chart(pd.DataFrame({"x": [1], "y": [1], "s": ["a"]}), Series("x", "y", "s"), Titles()))
    config = config.to_dict()["config"]
    assert config["axisY"]["titleAngle"] == 0  # a rotated Chinese title is hard to read
    assert "titleLimit" not in config["axis"]  # titles are never truncated


def test_line_chart_keeps_one_colour_per_named_series_and_draws_the_spread():
    lines = pd.DataFrame({"x": [16, 32, 16, 32], "y": [1.0, 2.0, 1.0, 4.0], "s": ["a", "a", "b", "b"],
                          "lo": [0.9, 1.8, 0.8, 3.0], "hi": [1.1, 2.5, 1.2, 5.0]})  # fmt: skip
    spec = line_chart(
        lines, Series("x", "y", "s", low="lo", high="hi"), Titles(), colors={"b": "#111111", "a": "#222222"}
    )
    lines_layer, spread_layer = spec.to_dict()["layer"]
    assert lines_layer["encoding"]["color"]["scale"] == {"domain": ["b", "a"], "range": ["#111111", "#222222"]}
    assert spread_layer["mark"]["type"] == "rule"
    assert (spread_layer["encoding"]["y"]["field"], spread_layer["encoding"]["y2"]["field"]) == ("lo", "hi")


def test_the_other_builders_produce_valid_specs():
    lines = pd.DataFrame({"x": [16, 32, 16, 32], "y": [1.0, 2.0, 1.0, 4.0], "s": ["a", "a", "b", "b"],
                          "d": [False, False, True, True]})  # fmt: skip
    line_spec = line_chart(lines, Series("x", "y", "s", dashed="d"), Titles("X", "Y"), log_x=True, log_y=True)
    line_spec = line_spec.to_dict()
    assert line_spec["encoding"]["x"]["scale"]["type"] == "log"
    assert line_spec["encoding"]["strokeDash"]["field"] == "d"
    dots = dot_chart(pd.DataFrame({"h": [1, 2], "e": [0.5, 0.6]}), "h", "e", Titles(), rule=(1.0, "uniform"))
    assert len(dots.to_dict()["layer"]) == 3
    bars = bar_chart(pd.DataFrame({"n": [3, 1], "part": ["a", "b"]}), "n", "part", Titles())
    assert bars.to_dict()["layer"][0]["encoding"]["y"]["sort"] == ["a", "b"]
    masks = _frame().assign(text="T")
    grid = mask_grid(masks, Titles(), Grid(ROWS, COLUMNS, ["A", "B"])).to_dict()
    assert grid["facet"]["sort"] == ["A", "B"] and len(grid["spec"]["layer"]) == 2
    sources = pd.DataFrame({"row": ["0"], "column": ["head 0"], "token": ["0:a"], "text": ["0:a ·0"]})
    assert source_grid(sources, Titles(), Grid(["0"], ["head 0"], cell=120), ["0:a"]).to_dict()["layer"]


@pytest.mark.parametrize(("count", "text"), [(0, "0 B"), (1023, "1023 B"), (1536, "1.5 KiB"), (3 * 2**30, "3.0 GiB")])
def test_format_bytes(count, text):
    assert format_bytes(count) == text


# ---------------------------------------------------------------- navigation and messages
def test_every_page_in_the_navigation_exists_and_has_its_messages():
    assert (REPO / HOME_PAGE).is_file()
    for page, lab, icon in LAB_PAGES:
        assert (REPO / page).is_file(), page
        assert page.isascii() and icon.startswith(":material/")
        for key in (f"nav.lab.{lab}", f"lab.{lab}.title", f"lab.{lab}.intro", f"lab.{lab}.explain"):
            assert set(CATALOG[key]) == set(LANGUAGES), key
    assert sorted(p.name for p in (REPO / "pages").glob("*.py")) == sorted(Path(p).name for p, _, _ in LAB_PAGES)


def test_linkable_is_relative_to_the_entry_script():
    assert linkable("pages/1_scaling.py", str(REPO / "playground.py"))
    assert not linkable("playground.py", str(REPO / "pages" / "1_scaling.py"))


def test_complexity_plot_joins_measured_and_estimated_pieces():
    from components.labs.complexity import plot_frame

    frame = pd.DataFrame(
        {
            "method": ["full", "full", "full", "full"],
            "L": [64, 128, 256, 512],
            "ms": [1.0, 4.0, 16.0, 64.0],
            "measured": [True, True, False, False],
        }
    )
    plotted = plot_frame(frame, "ms")
    dashed_full = plotted[(plotted["method"] == "full") & plotted["estimated"]]
    assert dashed_full["L"].tolist() == [128, 256, 512]  # starts at the last measured point
    reference = plotted[plotted["method"] == "L²"]
    assert reference["L"].tolist() == [64, 128]  # up to the last measured point, through it
    assert reference["ms"].tolist() == pytest.approx([1.0, 4.0])
