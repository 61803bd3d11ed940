"""Attention Playground: every step of multi-head attention, live.

Run with ``streamlit run playground.py``. This file only wires things together:
controls -> config -> weight source -> cached run -> one panel per step, a padded batch,
the summary and the live check. Data flows one way (ARCHITECTURE.md); the pieces live in ``components/``.
The panels keep places for what shows the weights' values; the seed's field, drawn last, fills them
(:func:`new_seed`), so that a new seed redraws only those (:mod:`components.reseed`).

With ``?teacher=1`` the same page becomes a presentation: one step per slide, large
type, the controls listed in ``hide`` not drawn (see :mod:`components.teacher`).
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from components import canvas, controls, pretrained, runner, steps, teacher, training
from components.export import render_export
from components.head_picker import picked_on_server, select_head
from components.headings import heading
from components.heatmap import Heads
from components.i18n import t
from components.padding_panel import render_padding_panel
from components.page import setup_page
from components.reseed import Computed, Places
from components.url_state import one_history_entry
from mha.config import AttentionConfig, ConfigError
from mha.counting import count_parameters
from mha.pipeline import AttentionRun
from mha.sources import SourceUnavailableError


@st.fragment
def head_picker(run: AttentionRun, drawn: Heads, charts: tuple[steps.Slot, steps.Slot], color_scale: str) -> None:
    """The head steps 1 and 2 show, and their charts, drawn here into their places in the panels (a fragment
    may fill places outside it that it filled in the last full run, and must fill them again in each rerun).

    A pick redraws the charts in the browser, and reruns this fragment a moment later to tell the server,
    which writes the head into the link and sends the charts as the full run drew them (``drawn``): the
    same bytes, which the page already holds. Where the charts are too big to hold every head, the pick
    reruns this fragment at once, and it draws them for the new head.
    """
    heads = select_head(run.num_heads, every=drawn.every)
    shown = heads if picked_on_server(heads) else drawn
    steps.draw_step_1_chart(charts[0], run, shown)
    steps.draw_step_2_chart(charts[1], run, shown, color_scale)


def show_head(computed: Computed, charts: tuple[steps.Slot, steps.Slot], color_scale: str) -> None:
    """The head picker and the charts of steps 1 and 2, for the weights computed and the session's head."""
    run = computed.run
    drawn = select_head(run.num_heads, hidden=True, every=steps.heads_fit(run))  # the head of this run
    head_picker(run, drawn, charts, color_scale)


@st.fragment
def new_seed(
    place: st.delta_generator.DeltaGenerator, choices: controls.Choices, config: AttentionConfig | None, places: Places
) -> None:
    """The seed's field, in ``place`` in the sidebar, then every part of the page kept in ``places``.

    In a full run it fills the places for the run's ``config``. Alone (only the seed changed) it fills
    them for the new seed's weights and writes the seed into the link. Where the page cannot follow a
    seed that way (trained weights: a seed is another training; a teacher's slide; nothing computed),
    a new seed runs the whole page.
    """
    seed = controls.seed_field(place, choices.weights)
    if seed != choices.seed and (not places.parts or choices.weights != "random"):
        st.rerun()
    controls.show_restored_seed(place)  # an emptied field, in this fragment's own run: its note goes under it
    if seed != choices.seed:
        choices = dataclasses.replace(choices, seed=seed)
        config = controls.build_config(choices)
        controls.sync_url(choices)
    if config is not None:
        places.fill(config)


with one_history_entry():  # the run's writes to the link: one browser history entry
    setup_page("app.title", "🔍", initial_sidebar_state=teacher.initial_sidebar_state())

    problems = controls.load_url_state()
    link_trains = training.link_asks_to_train()
    view, view_problems = teacher.load_view()
    choices, seed_place = controls.render_controls(hidden=view.hidden)
    teacher.render_settings(view)

    if view.on:
        teacher.use_large_type()
        teacher.render_navigation(view)
    else:
        heading(st, t("app.title"), level=1)
        st.markdown(t("page.intro"))
    controls.show_url_problems(problems + view_problems)
    config = pretrained.use_checkpoint(controls.build_config(choices))
    controls.sync_url(choices)
    teacher.sync_url(view)

    run = None
    places = Places()  # what shows the weights' values, drawn last (new_seed)
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
            picker = st.empty()
            color_scale = controls.select_color_scale()
            charts = steps.render_step_1(run), steps.render_step_2(run, color_scale, places=places)
            places.add_fragment(picker, lambda computed: show_head(computed, charts, color_scale), first=True)
            pretrained.render_head_finder(run)
            steps.render_step_3(run, places=places)
            steps.render_step_4(run, places=places)
            training.render_timeline(run)
            render_padding_panel(runner.cached_padding(config), run.num_heads, places=places)
            steps.render_summary(run.d_model, run, counted=counted)
            check, order = runner.cached_check(config), runner.cached_batch_order(config)
            steps.render_live_check(check, run, order, places=places)
            pretrained.render_checkpoint_check(run)
            render_export(run, places=places)
    if seed_place is not None:
        with seed_place:
            new_seed(seed_place, choices, config, places)
    elif config is not None:
        places.fill(config)
