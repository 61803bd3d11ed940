"""Attention Playground: every step of multi-head attention, live.

Run with ``streamlit run playground.py``. This file only wires things together:
controls -> config -> weight source -> cached run -> the page's sections in order (:mod:`components.page_sections`:
the heads at a glance, one panel per step, a padded batch, the summary, the live check, the export, ...; a
checkpoint's head finder and pattern search in their place among them but drawn after the steps' values). Data flows
one way (ARCHITECTURE.md); the pieces live in ``components/``. Each panel draws what no control changes and leaves
its values to parts (:mod:`components.panels.parts`), which the values' fragment, drawn last, fills
(:mod:`components.live_controls`): a change of the sizes, the mask, the text or the seed redraws only those.

With ``?teacher=1`` the same page becomes a presentation: one step per slide (and, for trained weights, a
checkpoint or an image, slides of their own about the model), large type, the controls listed in ``hide`` not
drawn (see :mod:`components.teacher`).
"""

from __future__ import annotations

import streamlit as st

from components import canvas, controls, live_controls, page_sections, pretrained, runner, teacher, training
from components.headings import heading
from components.i18n import t
from components.page import setup_page
from components.panels import Results, ValueParts, generation, summary, training_box
from components.url_state import one_history_entry
from mha.config import ConfigError
from mha.sources import SourceUnavailableError

with one_history_entry():  # the run's writes to the link: one browser history entry
    setup_page("app.title", "🔍", initial_sidebar_state=teacher.initial_sidebar_state())

    problems = controls.load_url_state()
    link_trains = training.link_asks_to_train()
    generation.link_asks_to_generate()
    view, view_problems = teacher.load_view()
    live_place = controls.render_source_controls(hidden=view.hidden)
    teacher.render_settings(view)

    if view.on:
        teacher.use_large_type()
        navigation = st.container()  # the slide's navigation, drawn once the page knows its slides
    else:
        heading(st, t("app.title"), level=1)
        st.markdown(t("page.intro"))
    link_notes = problems + view_problems
    if not view.on:  # a slide shows them under its chart (teacher.render_slide), or alone while nothing is drawn
        controls.show_url_problems(link_notes)
    choices = controls.current_choices()
    upload = controls.current_upload()
    config = pretrained.use_checkpoint(controls.build_config(choices))
    view = teacher.place_view(view, config)  # the page's slides: what the weights and the input bring
    if view.on:
        teacher.render_navigation(view, place=navigation)
    teacher.sync_url(view)

    run = None
    parts = None  # the values the live controls fill (main page only)
    draw_last = None  # what draws the sections kept for after the values (a checkpoint's head finder)
    # trained weights: the task and the training (in a presentation on the model's slide only); not ready yet
    waiting = config is not None and not training_box.render(config, link_trains, shown=view.shows_model, slide=view.on)
    if config is not None and not waiting:
        try:
            with st.spinner(t("page.computing")):
                run = runner.cached_run(config, upload)
        except ConfigError as error:  # the text or the layer does not suit the weights' source
            st.error(controls.error_message(error))
        except SourceUnavailableError as error:  # a checkpoint's files went missing since it was first loaded
            st.error(controls.source_message(error))
    if config is not None and (why := generation.cannot_generate(config, run, pretrained.generates(config))):
        st.warning(why)
    if view.on and (waiting or run is None):
        controls.show_url_problems(link_notes)
    if waiting:
        pass
    elif run is None:
        # Nothing can run, but the parameter count needs only d_model: keep teaching what can be shown.
        summary.render_counts(int(choices["d_model"]))
    else:
        canvas.load()
        if view.on:
            teacher.show_notes(view, run)
            teacher.render_slide(view, Results(config, upload), link_notes)
        else:
            parts = ValueParts()
            draw_last = page_sections.draw_page(page_sections.Page(run, parts))
    live_controls.render(
        live_place, frozenset(view.hidden), choices, upload, config if run is not None else None, parts, run
    )
    if draw_last is not None:  # the steps and their values never wait for every layer's maps
        draw_last()
