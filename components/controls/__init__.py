"""Sidebar controls -> plain values -> a validated config; the URL mirrors the controls.

One module per job: :mod:`~components.controls.keys` (what the controls are), :mod:`~components.controls.fields`
(the widgets they are made of), :mod:`~components.controls.sections` (the sidebar's sections and their
callbacks), :mod:`~components.controls.choices` (the session's values, its source's sizes, whether the run reads
an image), :mod:`~components.controls.uploads` (a learner's image), :mod:`~components.controls.link` (the
link), :mod:`~components.controls.color_scale`, :mod:`~components.controls.config_build` (choices -> a config,
problems translated) and :mod:`~components.controls.run_notes` (notes about a run).

The sidebar has two sections: where the weights come from (drawn by the page's full run,
:func:`render_source_controls`) and the live controls (:func:`render_live_controls`, drawn by the fragment
of :mod:`components.live_controls`), whose changes redraw only the page's values. The values are the
session's (:func:`current_choices`): one per field of :class:`~mha.config.AttentionConfig`.

Widget keys are the contract's names (``weights``, ``task``, ``checkpoint``, ``layer``,
``d_model``, ``num_heads``, ``mask_type``, ``window``, ``tokenizer``, ``tokens``, ``seed``)
plus ``block_pad``, ``positional``, ``device``, ``dtype``, ``patch`` and ``image``; each widget's value is
the plain value, translated for display with ``format_func`` only. The same names are the URL
query parameters (parsed in :mod:`components.url_params`, read and written through
:mod:`components.url_state`).

A run that reads an image (:func:`reads_image`) shows the image controls instead of the text's: a bundled
sample (``image``), the patch size where the learner chooses it (``patch``), and an upload of one's own
(:data:`UPLOAD_KEY`, not in the link: :func:`current_upload` hands it to the run, its SHA-256 its name).
"""

from components.controls.choices import current_choices, reads_image, session_sizes
from components.controls.color_scale import select_color_scale
from components.controls.config_build import build_config, error_message, source_message, weights_made_here
from components.controls.keys import (
    D_MODEL_PRESETS,
    EXAMPLES,
    LIVE_KEYS,
    RUN_KEYS,
    TRAINED_SIZES,
    Changed,
    Choices,
    device_options,
    nearest_divisors,
)
from components.controls.link import load_url_state, show_url_problems, sync_url
from components.controls.run_notes import show_device_used, show_run_notes
from components.controls.sections import render_live_controls, render_run_controls, render_source_controls
from components.controls.uploads import UPLOAD_KEY, current_upload

__all__ = [
    "D_MODEL_PRESETS",
    "EXAMPLES",
    "LIVE_KEYS",
    "RUN_KEYS",
    "TRAINED_SIZES",
    "UPLOAD_KEY",
    "Changed",
    "Choices",
    "build_config",
    "current_choices",
    "current_upload",
    "device_options",
    "error_message",
    "load_url_state",
    "nearest_divisors",
    "reads_image",
    "render_live_controls",
    "render_run_controls",
    "render_source_controls",
    "select_color_scale",
    "session_sizes",
    "show_device_used",
    "show_run_notes",
    "show_url_problems",
    "source_message",
    "sync_url",
    "weights_made_here",
]
