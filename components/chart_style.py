"""The look every chart shares, on the main page (``components/charts.py``) and in the labs
(``components/labs/charts.py``): font, type size and colour schemes."""

from __future__ import annotations

__all__ = ["CANVAS_RENDERER", "DIVERGING_SCHEME", "FONT", "FONT_SIZE", "WEIGHTS_SCHEME"]

FONT = "sans-serif"  # CJK labels fall back to a CJK font
FONT_SIZE = 15  # large enough for a projector
WEIGHTS_SCHEME = "blues"  # attention weights, on a fixed 0-1 scale
DIVERGING_SCHEME = "redblue"  # signed numbers, symmetric around 0 (reversed: negative blue, positive red)
#: A Vega-Lite spec's ``usermeta``: Streamlit embeds it with the canvas renderer (not SVG: one element per mark).
CANVAS_RENDERER = {"embedOptions": {"renderer": "canvas"}}
