"""Headings drawn as Markdown (``# Title``, ``### Step``) rather than ``st.title``/``st.header``/``st.subheader``.

Streamlit re-renders every element of the page at each React commit of a run (a new seed makes four);
a heading element renders its Markdown anew each time (~13 ms of the browser's main thread a new seed
on the playground, docs/PERFORMANCE.md), a Markdown element only when its text changes. Both draw the
same ``<h1>``-``<h3>`` with the same anchor: screenshots of the page are the same pixel for pixel.
"""

from __future__ import annotations

from types import ModuleType

from streamlit.delta_generator import DeltaGenerator

__all__ = ["heading"]


def heading(box: DeltaGenerator | ModuleType, text: str, level: int = 3) -> None:
    """``text`` as a heading of ``level`` (1 = title, 2 = header, 3 = subheader) in ``box``.

    ``box`` is a container, or ``st`` for where ``st.*`` draws. ``text`` is the app's own words (a catalog
    message): it is Markdown, as in ``st.subheader``.
    """
    if level not in (1, 2, 3):
        raise ValueError(f"a heading level is 1, 2 or 3, got {level}")
    box.markdown(f"{'#' * level} {text}")
