"""Expanders whose content is drawn only while they are open.

Streamlit draws a closed expander's content all the same (the browser renders it, hidden), so a
closed expander costs what an open one does. The two on the main page whose content follows the
seed (step 2's dropout row, the reproducing script) were 30-40 ms of a new seed's ~290 ms on the
project's 2-core machine, mostly the script's syntax highlighting (docs/PERFORMANCE.md). Folded here, they
are drawn only once a learner opens them: opening reruns the part of the page they are in (the
seed's fragment), and they stay open, and follow the seed, until closed.
"""

from __future__ import annotations

from streamlit.delta_generator import DeltaGenerator

__all__ = ["folded"]


def folded(parent: DeltaGenerator, label: str, key: str, icon: str | None = None) -> DeltaGenerator | None:
    """An expander labelled ``label`` in ``parent``, closed at first: itself while open, else ``None`` (its public
    ``open`` property, which Streamlit tracks for an expander with a key and ``on_change``).

    ``key`` keeps its state (open or closed) in the session; draw its content only when it is returned.
    """
    expander = parent.expander(label, icon=icon, key=key, on_change="rerun")
    return expander if expander.open else None
