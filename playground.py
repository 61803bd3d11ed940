"""Attention Playground: every step of multi-head attention, live.

Run with ``streamlit run playground.py``. This file only wires things together:
controls -> config -> cached run -> one panel per step, the summary and the live
check. Data flows one way (DESIGN.md §1); the pieces live in ``components/``.
"""

from __future__ import annotations

import streamlit as st

from components import controls, runner, steps
from components.export import render_export
from components.i18n import t
from components.language import select_language
from components.nav import render_nav
from mha.counting import count_parameters

st.set_page_config(page_title=t("app.title"), page_icon="🔍", layout="wide")
select_language()
render_nav()

problems = controls.load_url_state()
choices = controls.render_controls()

st.title(t("app.title"))
st.markdown(t("page.intro"))
controls.show_url_problems(problems)
config = controls.build_config(choices)
controls.sync_url(choices)

if config is None:
    # Nothing can run, but the parameter count needs only d_model: keep teaching what can be shown.
    steps.render_summary(choices.d_model)
else:
    with st.spinner(t("page.computing")):
        run = runner.cached_run(config)
        check = runner.cached_check(config)
    controls.show_run_notes(run)
    steps.render_head_steps(run)
    steps.render_step_3(run)
    steps.render_step_4(run)
    model = runner.cached_model(config.d_model, config.num_heads, config.seed, str(run.device.device), config.dtype)
    steps.render_summary(config.d_model, run, counted=count_parameters(model))
    steps.render_live_check(check, run)
    with st.container(border=True):
        render_export(run)
