"""The playground's panels, one module each: the four pipeline steps, what the heads look at on an image
(``patches``), a causal checkpoint's generation with a KV cache (``generation``), the padded batch, the summary, the
live check and the export; for trained weights the training box (``training_box``: the task, its model, the
training) and the training timeline (``timeline``).

A panel's ``render(parts, ...)`` draws what no control changes at once and hands everything else to ``parts``
(:class:`components.panels.parts.ValueParts`), which the page fills from the run's results: the main page
through the values' fragment (:mod:`components.live_controls`), a teacher's slide at once. The training box and
the timeline draw a training's own numbers at once (with trained weights a live control's change runs the whole
page: another seed or size is another training). ARCHITECTURE.md ("How to add a panel") says how to add one.
"""

from components.panels import (
    export,
    generation,
    live_check,
    padding,
    patches,
    step1,
    step2,
    step3,
    step4,
    summary,
    timeline,
    training_box,
)
from components.panels.parts import Results, ValueParts

__all__ = [
    "Results",
    "ValueParts",
    "export",
    "generation",
    "live_check",
    "padding",
    "patches",
    "step1",
    "step2",
    "step3",
    "step4",
    "summary",
    "timeline",
    "training_box",
]
