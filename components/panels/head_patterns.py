"""The pattern search (a causal checkpoint's page): every head of every layer scored as a previous-token head (on
the text) and as an induction head (on a repeated random sequence), two layer x head maps, the strongest heads with
buttons that show them in the four steps."""

from __future__ import annotations

import streamlit as st

from components import runner
from components.headings import heading
from components.i18n import t
from components.panels.head_finder import BUTTONS, finder_chart, finder_frame, for_slide, show_head
from components.pretrained import checkpoint_source, where_ran
from components.safe_text import md_escape
from mha.config import PRETRAINED
from mha.head_finder import rank_table
from mha.pipeline import AttentionRun

__all__ = ["render"]

#: Each score: its message key part, and the head label it stands for.
_PATTERNS = (("previous", "previous token"), ("induction", "induction"))
_CHART_WIDTH = 300  # px of cells: two maps side by side, legends included, in the page's column


def _repeat_text(text: str) -> None:
    st.session_state["tokens"] = f"{text} {text}"


def render(run: AttentionRun, slide: bool = False) -> None:
    """The two maps of scores and the strongest heads; nothing but on a causal checkpoint's page. ``slide``: a
    presentation's slide (teacher mode), whose maps have larger words and cells."""
    if run.source_kind != PRETRAINED or not checkpoint_source(run.config).causal:
        return
    config = run.config
    placed = runner.cached_head_patterns(config.weight_spec, config.tokens, str(run.device.device))
    patterns = placed.value
    box = st.container(border=True)
    heading(box, t("patterns.title"))
    box.markdown(t("patterns.what", checkpoint=md_escape(config.pretrained_name), half=patterns.half))
    where_ran(box, placed)
    for (kind, label), table, column in zip(
        _PATTERNS, (patterns.previous, patterns.induction), box.columns(2), strict=True
    ):
        chart = finder_chart(*table.shape, t(f"patterns.{kind}_chart"), t("patterns.score"), _CHART_WIDTH)
        column.vega_lite_chart(finder_frame(table), for_slide(chart, slide), theme=None, width="content")
        ranked = rank_table(table)[:BUTTONS]  # (layer, head, score), the highest first
        entries = " · ".join(
            t("finder.entry", layer=head.layer, head=head.head, weight=f"{head.weight:.2f}") for head in ranked
        )
        column.markdown(f"{t('patterns.top', label=t(f'label.{label}'))} {entries}")
        row = column.container(horizontal=True, gap="small")
        for number, head in enumerate(ranked):
            row.button(
                t("finder.show", layer=head.layer, head=head.head),
                key=f"pattern_{kind}_{number}",
                on_click=show_head,
                args=(head.layer, head.head),
            )
    uniform = {"previous": f"{patterns.uniform_previous:.2f}", "induction": f"{patterns.uniform_induction:.2f}"}
    box.caption(t("patterns.uniform", **uniform))
    box.caption(t("patterns.published"))
    box.button(
        t("patterns.repeat"),
        key="pattern_repeat",
        on_click=_repeat_text,
        args=(config.tokens,),
        help=t("patterns.repeat_help"),
    )
