"""Attention Playground: every step of multi-head attention, live.

Run with ``streamlit run playground.py``. This file only wires things together:
controls -> config -> cached run -> one panel per step, the summary and the live
check. Data flows one way (DESIGN.md §1); the pieces live in ``components/``.

With ``?teacher=1`` the same page becomes a presentation: one step per slide, large
type, the controls listed in ``hide`` not drawn (see :mod:`components.teacher`).
"""

from __future__ import annotations

import streamlit as st

from components import controls, runner, steps, teacher
from components.export import render_export
from components.i18n import t
from components.page import setup_page
from mha.counting import count_parameters

setup_page("app.title", "🔍", initial_sidebar_state=teacher.initial_sidebar_state())

problems = controls.load_url_state()
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
config = controls.build_config(choices)
controls.sync_url(choices)
teacher.sync_url(view)

if config is None:
    # Nothing can run, but the parameter count needs only d_model: keep teaching what can be shown.
    steps.render_summary(choices.d_model)
else:
    with st.spinner(t("page.computing")):
        run = runner.cached_run(config)
        check = runner.cached_check(config)
    controls.show_run_notes(run)
    model = runner.cached_model(config.d_model, config.num_heads, config.seed, str(run.device.device), config.dtype)
    counted = count_parameters(model)
    if view.on:
        teacher.render_slide(view, run, check, counted)
    else:
        steps.render_head_steps(run)
        steps.render_step_3(run)
        steps.render_step_4(run)
        steps.render_summary(config.d_model, run, counted=counted)
        steps.render_live_check(check, run)
        with st.container(border=True):
            render_export(run)
