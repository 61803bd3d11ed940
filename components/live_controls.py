"""The live controls: the sidebar's sizes, mask, text (or image) and run settings
(:data:`components.controls.LIVE_KEYS`), and the page's parts (:class:`components.panels.parts.ValueParts`) that
follow them, as two fragments.

In a full run both are drawn last, in the live controls' place in the sidebar: the controls' fragment draws the
sizes, the mask and the text (or the image); the values' fragment under it draws the run's settings
(:data:`components.controls.RUN_KEYS`: the seed, positional encoding, device, number type), writes the link and
fills the parts for the page's config. A change reruns only what it needs, in one run: a run setting is in the
values' fragment, whose own rerun follows it (a new seed changes nothing else); another size, mask or text
reruns the controls (the d_k under the heads follows it, the window's field opens) and the values, which its
callback (:func:`controls_changed`) asks for with the fragments' keys, in place of the controls' own rerun. The
page around them (headings, explanations, code, the other controls) is not sent again. Where the page cannot
follow a change that way, the callback runs the page: the change touched a control outside ``LIVE_KEYS`` (an
example that opens a checkpoint), the new values do not run (the page shows why), or the page has no parts to
fill (a teacher's slide, an error, a training to wait for) or shows more than its parts (trained weights:
another seed is another training; a checkpoint: its check and head finder follow the text). An image run with
trained weights follows a change that keeps its weights (another image, an upload, the mask): the training's
box and timeline show the weights only.
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components import controls
from components.i18n import restore_choices
from components.panels.parts import Results, ValueParts
from mha.config import RANDOM, AttentionConfig, ConfigError
from mha.pipeline import AttentionRun
from mha.vision.upload import Upload

__all__ = ["CONTROLS", "VALUES", "browser_behind", "controls_changed", "render", "values_changed"]

CONTROLS, VALUES = "live_controls", "live_values"  # the two fragments' keys
_FRAME = "_live_frame"  # session: (values, config) the page's last full run drew parts for, or None


def render(
    place: DeltaGenerator,
    hidden: frozenset[str],
    drawn: controls.Choices,
    drawn_upload: Upload | None,
    config: AttentionConfig | None,
    parts: ValueParts | None,
    run: AttentionRun | None,
) -> None:
    """The live controls and the values, in ``place`` (the sidebar's), drawn last in a full run.

    Args:
        place: the live controls' place in the sidebar.
        hidden: controls not drawn (teacher mode).
        drawn: the controls' values the page was drawn for.
        drawn_upload: the learner's image it was drawn on (:func:`components.controls.current_upload`).
        config: the config the page runs for them (``None``: they do not run).
        parts: the page's parts (``None``: nothing on the page follows the values without a full run).
        run: the full run's run, when it made one.
    """
    follows = parts is not None and not parts.empty and config is not None
    st.session_state[_FRAME] = (drawn, config) if follows else None
    with place:
        _controls(hidden)
        _values(hidden, drawn, drawn_upload, config, parts, run)


def controls_changed() -> None:
    """The callback of a live control in the controls' fragment: the controls and the values rerun, or the page
    where its parts cannot show the change (see the module's docstring)."""
    _run_page_unless_followed()
    st.rerun([CONTROLS, VALUES])


def values_changed() -> None:
    """The callback of a run setting (in the values' fragment): the fragment's own rerun follows, or the page runs
    where its parts cannot show the change."""
    _run_page_unless_followed()


def browser_behind() -> bool:
    """Whether a browser drew this session (it sent request headers). A session without one (AppTest, whose tree
    after a fragment-only run holds only what that run sent) runs the page whole on every change, so that a test
    reads the whole page; ``tests/test_live_fragments.py`` takes the fragments' path headless by answering yes."""
    return bool(st.context.headers)


def _run_page_unless_followed() -> None:
    restore_choices()  # a change made while the page ran a language switch brings the old labels back
    if not browser_behind() or _followed(controls.current_choices()) is None:
        st.rerun()  # the whole page


@st.fragment(key=CONTROLS)
def _controls(hidden: frozenset[str]) -> None:
    """The live controls but the run's settings, where the page is drawing (their place in the sidebar)."""
    restore_choices()
    controls.render_live_controls(controls_changed, hidden)


@st.fragment(key=VALUES)
def _values(
    hidden: frozenset[str],
    drawn: controls.Choices,
    drawn_upload: Upload | None,
    config: AttentionConfig | None,
    parts: ValueParts | None,
    run: AttentionRun | None,
) -> None:
    """The run's settings, the link, the page's parts filled, and where the run happened (under the controls)."""
    restore_choices()
    controls.render_run_controls(values_changed, hidden)
    choices = controls.current_choices()
    upload = controls.current_upload()
    controls.sync_url(choices)
    if choices != drawn or upload != drawn_upload:
        config = _followed(choices)
        if config is None:  # the callbacks run the page for such a change: here only for safety
            st.rerun()
        run = None
    if config is not None and parts is not None:
        results = Results(config, upload)
        parts.fill(results)
        run = results.run
    if run is not None:
        controls.show_device_used(run)


def _followed(choices: controls.Choices) -> AttentionConfig | None:
    """The config for ``choices`` when the page's parts alone can show it, else ``None`` (the page must run)."""
    frame = st.session_state.get(_FRAME)
    if frame is None:
        return None
    drawn, config = frame
    if any(choices[key] != drawn[key] for key in choices if key not in controls.LIVE_KEYS):
        return None
    try:
        followed = AttentionConfig(**choices)
    except ConfigError:  # the page says why, in a full run
        return None
    if config.weights == RANDOM or (config.trains_on_images and followed.weight_spec == config.weight_spec):
        return followed
    return None
