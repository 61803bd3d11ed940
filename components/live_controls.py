"""The live controls: the sidebar's sizes, mask, text and run settings, drawn by one fragment that also fills
the page's parts (:class:`components.panels.parts.ValueParts`).

In a full run the fragment is drawn last: it draws the controls in their place in the sidebar and fills the
parts for the page's config. Alone -- a learner changed one of these controls -- it draws the controls again,
writes the link and fills the parts for the new values, so the page around them (headings, explanations,
code, the other controls) is not sent again. Where the page cannot follow a change that way, the fragment
runs the page: the change touched a control outside :data:`components.controls.LIVE_KEYS`, the new values
do not run (the page shows why), or the page has no parts to fill (a teacher's slide, an error, a training
to wait for) or more than the parts would change (trained weights: another seed is another training; a
checkpoint: its check and head finder follow the text). An image run with trained weights follows a change
that keeps the weights (another image, an upload, the mask): the training's box and timeline show the weights
only.
"""

from __future__ import annotations

import streamlit as st

from components import controls
from components.panels.parts import Results, ValueParts
from mha.config import AttentionConfig, ConfigError
from mha.pipeline import AttentionRun
from mha.vision.upload import Upload

__all__ = ["live_controls"]


@st.fragment
def live_controls(
    hidden: frozenset[str],
    drawn: controls.Choices,
    drawn_upload: Upload | None,
    config: AttentionConfig | None,
    parts: ValueParts | None,
    run: AttentionRun | None,
) -> None:
    """The live controls where the page is drawing (their place in the sidebar), then the parts filled.

    Args:
        hidden: controls not drawn (teacher mode).
        drawn: the values the page's full run drew the page for.
        drawn_upload: the learner's image it drew them on (:func:`components.controls.current_upload`).
        config: the config the page runs for them (``None``: they do not run).
        parts: the page's parts (``None``: nothing on the page follows the values without a full run).
        run: the full run's run, when it made one.
    """
    controls.render_live_controls(hidden)
    choices = controls.current_choices()
    upload = controls.current_upload()
    controls.sync_url(choices)
    if choices != drawn or upload != drawn_upload:
        config = _followed(drawn, config, parts, choices)
        if config is None:
            st.rerun()
        run = None
    if config is not None and parts is not None:
        results = Results(config, upload)
        parts.fill(results)
        run = results.run
    if run is not None:
        controls.show_device_used(run)


def _followed(
    drawn: controls.Choices, config: AttentionConfig | None, parts: ValueParts | None, choices: controls.Choices
) -> AttentionConfig | None:
    """The config for ``choices`` when the parts alone can show it, else ``None`` (the page must run)."""
    if parts is None or parts.empty or config is None:
        return None
    if any(choices[key] != drawn[key] for key in choices if key not in controls.LIVE_KEYS):
        return None
    try:
        followed = AttentionConfig(**choices)
    except ConfigError:  # the page says why, in a full run
        return None
    if config.weights == "random" or (config.reads_image and followed.weight_spec == config.weight_spec):
        return followed
    return None
