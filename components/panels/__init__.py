"""The playground's panels, one module each: the heads' weights at a glance (``glance``), the run's notes and the
model slide (``model``), the four pipeline steps, what the heads look at on an image (``patches``), a checkpoint's
head finder and pattern search (``head_finder``, ``head_patterns``), a causal checkpoint's generation with a KV cache
(``generation``), the padded batch, the summary, the live check, the check against the checkpoint
(``checkpoint_check``) and the export; for trained weights the training box (``training_box``: the task, its
model, the training) and the training timeline (``timeline``).

A panel's ``render(parts, ...)`` draws what no control changes at once and hands everything else to ``parts``
(:class:`components.panels.parts.ValueParts`), which the page fills from the run's results: the main page
through the values' fragment (:mod:`components.live_controls`), a teacher's slide at once. Where each is drawn, on
the page and on the slides, is its entry in :data:`components.page_sections.SECTIONS`. ARCHITECTURE.md ("How to add
a panel") says how to add one.
"""

from components.panels import (
    checkpoint_check,
    export,
    generation,
    glance,
    head_finder,
    head_patterns,
    live_check,
    model,
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
    "checkpoint_check",
    "export",
    "generation",
    "glance",
    "head_finder",
    "head_patterns",
    "live_check",
    "model",
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
