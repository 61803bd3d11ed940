"""Sidebar navigation between the playground and the labs, with translated labels.

Streamlit's own page list shows file names (English only), so the app hides it
(``client.showSidebarNavigation = false``) and every page calls :func:`render_nav`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from components.i18n import t

__all__ = ["HOME_PAGE", "LAB_PAGES", "linkable", "render_lab_case_link", "render_lab_links", "render_nav"]

HOME_PAGE = "playground.py"
# (file relative to the app's root, lab name: its messages are nav.lab.<name> and lab.<name>.*, icon)
LAB_PAGES = (
    ("pages/1_scaling.py", "scaling", ":material/thermostat:"),
    ("pages/2_heads.py", "heads", ":material/view_column:"),
    ("pages/3_reshape.py", "reshape", ":material/bug_report:"),
    ("pages/4_masks.py", "masks", ":material/translate:"),
    ("pages/5_loop.py", "loop", ":material/speed:"),
    ("pages/6_complexity.py", "complexity", ":material/show_chart:"),
    ("pages/7_cross.py", "cross", ":material/compare_arrows:"),
    ("pages/8_sculpt.py", "sculpt", ":material/brush:"),
    ("pages/9_encoder.py", "encoder", ":material/layers:"),
    ("pages/10_windows.py", "windows", ":material/grid_view:"),
    ("pages/11_attribution.py", "attribution", ":material/troubleshoot:"),
    ("pages/12_onnx.py", "onnx", ":material/deployed_code:"),
    ("pages/13_flash.py", "flash", ":material/bolt:"),
    ("pages/14_efficient.py", "efficient", ":material/compress:"),
)


def linkable(page: str, running: str) -> bool:
    """Whether ``page`` (relative to the app's root) exists next to the running entry script ``running``.

    A page run on its own (``streamlit run pages/1_scaling.py``, or ``AppTest`` of one page)
    knows no other page, and ``st.page_link`` would raise for them: they are left out.
    """
    return (Path(running).parent / page).is_file()


def entry_script() -> str:
    """The script the app was started with (``playground.py``, or a lab page run on its own)."""
    ctx = get_script_run_ctx()
    return ctx.main_script_path if ctx is not None else HOME_PAGE


def render_lab_links(container: st.delta_generator.DeltaGenerator, labs: Sequence[str]) -> None:
    """One row in ``container``: "Try it in a lab:" and a link to each lab named in ``labs`` (see :data:`LAB_PAGES`).

    Labs that cannot be linked from the running entry script are left out; with none left, nothing is drawn.
    """
    running = entry_script()
    pages = {lab: (page, icon) for page, lab, icon in LAB_PAGES if linkable(page, running)}
    shown = [lab for lab in labs if lab in pages]
    if not shown:
        return
    row = container.container(horizontal=True, vertical_alignment="center", gap="small")
    row.markdown(t("steps.labs"), width="content")
    for lab in shown:
        page, icon = pages[lab]
        row.page_link(page, label=t(f"nav.lab.{lab}"), icon=icon, width="content")


def render_lab_case_link(container: st.delta_generator.DeltaGenerator, lab: str, label: str) -> None:
    """A link to lab ``lab`` (see :data:`LAB_PAGES`) labelled ``label``, which names the case to look at there.

    Streamlit's page links cannot point inside a page, so the label names the case. Nothing is drawn when the
    lab cannot be linked from the running entry script.
    """
    running = entry_script()
    for page, name, icon in LAB_PAGES:
        if name == lab and linkable(page, running):
            container.page_link(page, label=label, icon=icon)


def render_nav() -> None:
    """The sidebar's menu, folded (an expander): the playground, then every lab, labelled in the session's language.

    Folded, it leaves the sidebar's first screen to the controls. Pages that cannot be linked from the running
    entry script (see :func:`linkable`) are left out; with none left, nothing is drawn.
    """
    running = entry_script()
    labs = [(page, lab, icon) for page, lab, icon in LAB_PAGES if linkable(page, running)]
    home = linkable(HOME_PAGE, running)
    if not (home or labs):
        return
    menu = st.sidebar.expander(t("nav.menu", count=len(labs)), expanded=False, icon=":material/menu:")
    if home:
        menu.page_link(HOME_PAGE, label=t("nav.home"), icon=":material/home:")
    if labs:
        menu.caption(t("nav.labs"))
    for page, lab, icon in labs:
        menu.page_link(page, label=t(f"nav.lab.{lab}"), icon=icon)
