"""The export panel: download the trace (.npz, .pt, CSV) and copy a script that reproduces it in PyTorch.

The files are built only when a button is clicked: ``st.download_button`` takes a callable for ``data``
and runs it on demand, so an ordinary rerun costs nothing but the (short) script text.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from components.folds import folded
from components.headings import heading
from components.i18n import t
from components.panels.parts import Results, ValueParts
from mha.config import RANDOM
from mha.export import export_basename, trace_csv_zip, trace_npz, trace_pt
from mha.pipeline import AttentionRun
from mha.reproduce import reproduce_script

__all__ = ["SCRIPT_KEY", "Download", "downloads", "render"]

SCRIPT_KEY = "fold_script"  # the reproducing script's expander (drawn only while open: components.folds)


@dataclass(frozen=True)
class Download:
    """One download button: message keys, file name, MIME type and a no-argument builder of the bytes."""

    key: str
    label_key: str
    help_key: str
    file_name: str
    mime: str
    build: Callable[[], bytes]


def downloads(run: AttentionRun) -> list[Download]:
    """The downloads offered for ``run``; nothing is built until ``build()`` is called.

    File names name the configuration, e.g. ``attention_d512_h8_causal_seed0.npz``.
    """
    base = export_basename(run.config)
    return [
        Download(
            key="export_npz",
            label_key="export.npz.label",
            help_key="export.npz.help",
            file_name=f"{base}.npz",
            mime="application/octet-stream",
            build=functools.partial(trace_npz, run),
        ),
        Download(
            key="export_pt",
            label_key="export.pt.label",
            help_key="export.pt.help",
            file_name=f"{base}.pt",
            mime="application/octet-stream",
            build=functools.partial(trace_pt, run),
        ),
        Download(
            key="export_csv",
            label_key="export.csv.label",
            help_key="export.csv.help",
            file_name=f"{base}_csv.zip",
            mime="application/zip",
            build=functools.partial(trace_csv_zip, run),
        ),
    ]


def render(parts: ValueParts) -> None:
    """The export panel: the downloads and the script (the run's values: ``parts``)."""
    box = st.container(border=True)
    heading(box, t("export.title"))
    box.caption(t("export.intro"))
    parts.add(box, _downloads)


def _downloads(results: Results) -> None:
    """The downloads (built on click) and the script that reproduces the run."""
    run = results.run
    offered = downloads(run)
    for column, download in zip(st.columns(len(offered)), offered, strict=True):
        column.download_button(
            t(download.label_key),
            data=download.build,  # called on click only, on its own thread
            file_name=download.file_name,
            mime=download.mime,
            key=download.key,
            help=t(download.help_key),
            on_click="ignore",  # downloading does not rerun the page
            icon=":material/download:",
        )
    script = folded(st, t("export.code.title"), key=SCRIPT_KEY)
    if script is not None:
        script.caption(t("export.code.caption" if run.config.weights == RANDOM else "export.code.caption_pt"))
        script.code(reproduce_script(run), language="python")
