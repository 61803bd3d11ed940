"""Attention Playground: every step of multi-head attention, live.

Run with ``streamlit run playground.py``. This file only wires things together:
controls -> config -> weight source -> cached run -> one panel per step, a padded batch,
the summary and the live check. Data flows one way (ARCHITECTURE.md); the pieces live in ``components/``.

With ``?teacher=1`` the same page becomes a presentation: one step per slide, large
type, the controls listed in ``hide`` not drawn (see :mod:`components.teacher`).
"""

from __future__ import annotations

import streamlit as st

from components import canvas, controls, pretrained, runner, steps, teacher, training
from components.export import render_export
from components.head_picker import picked_needs_rerun, select_head
from components.heatmap import Heads
from components.i18n import t
from components.padding_panel import render_padding_panel
from components.page import setup_page
from mha.config import ConfigError
from mha.counting import count_parameters
from mha.sources import SourceUnavailableError


@st.fragment
def head_picker(num_heads: int, every: bool) -> Heads:
    """The head steps 1 and 2 show. A pick redraws their charts in the browser and reruns only this fragment,
    a moment later, to tell the server (which writes it into the link); a pick the browser could not draw
    (charts too big to hold every head) reruns the page."""
    heads = select_head(num_heads, every=every)
    if picked_needs_rerun(heads):
        st.rerun()
    return heads


setup_page("app.title", "🔍", initial_sidebar_state=teacher.initial_sidebar_state())

problems = controls.load_url_state()
link_trains = training.link_asks_to_train()
view, view_problems = teacher.load_view()
choices = controls.render_controls(hidden=view.hidden)
teacher.render_settings(view)

if view.on:
    teacher.use_large_type()
    teacher.render_navigation(view)
else:
    st.title(t("app.title"))
    st.markdown(t("page.intro"))
controls.show_url_problems(problems + view_problems)
config = pretrained.use_checkpoint(controls.build_config(choices))
controls.sync_url(choices)
teacher.sync_url(view)

run = None
waiting = config is not None and not training.render_training(config, link_trains)  # trained weights, not yet
if config is not None and not waiting:
    try:
        with st.spinner(t("page.computing")):
            run = runner.cached_run(config)
    except ConfigError as error:  # the text or the layer does not suit the weights' source
        st.error(controls.error_message(error))
    except SourceUnavailableError as error:  # a checkpoint's files went missing since it was first loaded
        st.error(controls.source_message(error))
if waiting:
    pass
elif run is None:
    # Nothing can run, but the parameter count needs only d_model: keep teaching what can be shown.
    steps.render_summary(choices.d_model)
else:
    controls.show_run_notes(run)
    counted = count_parameters(run.model)
    canvas.load()
    if view.on:
        teacher.render_slide(view, run, runner.cached_check(config), runner.cached_batch_order(config), counted)
    else:
        heads = head_picker(run.num_heads, steps.heads_fit(run))
        color_scale = controls.select_color_scale()
        steps.render_step_1(run, heads)
        steps.render_step_2(run, heads, color_scale)
        pretrained.render_head_finder(run)
        steps.render_step_3(run)
        steps.render_step_4(run)
        training.render_timeline(run)
        render_padding_panel(runner.cached_padding(config), run.num_heads)
        steps.render_summary(run.d_model, run, counted=counted)
        # computed where they are shown: the panels above reach the browser before these two checks run
        steps.render_live_check(runner.cached_check(config), run, runner.cached_batch_order(config))
        pretrained.render_checkpoint_check(run)
        with st.container(border=True):
            render_export(run)
