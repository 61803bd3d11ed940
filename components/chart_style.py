"""The look every chart shares, on the main page (``components/charts.py``, ``today_charts.py``,
``training_charts.py``, ``image_charts.py``: one Vega-Lite ``config``, :data:`VEGA_CONFIG`) and in the labs
(``components/labs/charts.py``): font, type size and colour schemes."""

from __future__ import annotations

__all__ = ["CANVAS_RENDERER", "DIVERGING_SCHEME", "FONT", "FONT_SIZE", "VEGA_CONFIG", "WEIGHTS_SCHEME"]

FONT = "sans-serif"  # CJK labels fall back to a CJK font
FONT_SIZE = 15  # large enough for a projector
WEIGHTS_SCHEME = "blues"  # attention weights, on a fixed 0-1 scale
DIVERGING_SCHEME = "redblue"  # signed numbers, symmetric around 0 (reversed: negative blue, positive red)
#: A Vega-Lite spec's ``usermeta``: Streamlit embeds it with the canvas renderer (not SVG: one element per mark).
CANVAS_RENDERER = {"embedOptions": {"renderer": "canvas"}}
#: The ``config`` of every Vega-Lite spec the main page builds: axes, headers and titles in :data:`FONT_SIZE`, legends
#: and subtitles a size or two smaller, no grid lines, no frame around a view, no ARIA elements (canvas only).
VEGA_CONFIG: dict = {
    "font": FONT,
    "axis": {"labelFontSize": FONT_SIZE, "titleFontSize": FONT_SIZE, "labelLimit": 140, "grid": False},
    "header": {"labelFontSize": FONT_SIZE, "titleFontSize": FONT_SIZE},
    "title": {"fontSize": FONT_SIZE, "subtitleFontSize": FONT_SIZE - 2, "anchor": "start"},
    "legend": {"labelFontSize": FONT_SIZE - 1, "titleFontSize": FONT_SIZE - 1},
    "view": {"strokeWidth": 0},
    "aria": False,
}
