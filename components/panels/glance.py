"""Attention at a glance: every head's softmax weights for the learner's sentence, small, on the page's first
screen (the first :data:`HEADS` heads; step 2 draws them all, with their labels, and explains them)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from components import charts, frames, vega
from components.charts import ChartText
from components.i18n import t
from components.panels.frame import blocked, chart_text, unscored
from components.panels.parts import Results, ValueParts

__all__ = ["HEADS", "glance_chart", "glance_frame", "render"]

HEADS = 8  # heads drawn at a glance, in one row
_SIZE_PX = 76  # each head's matrix: one row of eight fits a laptop's page (1280 px, the sidebar open)


def render(parts: ValueParts) -> None:
    """Keep the glance's place on the page: the heads' weights, drawn for each run by ``parts``."""
    parts.add(st, _glance)


def _glance(results: Results) -> None:
    """The first heads' (L, L) weights side by side on the fixed 0-1 scale, under one line saying what they are; a
    line pointing to step 2 where the sentence is too long to draw them small."""
    run = results.run
    num_heads, length = run.num_heads, len(run.tokens)
    shown = min(num_heads, HEADS)
    if shown * length * length > frames.CELL_BUDGET:
        st.caption(t("glance.too_long", length=length))
        return
    which = "glance.caption" if shown == num_heads else "glance.caption_some"
    st.caption(t(which, heads=num_heads, last=shown - 1))
    weights = run.trace.attend.weights[0, :shown].float().cpu().numpy()  # (h, L, L) of the first heads
    masked = blocked(run)[:shown].cpu().numpy()  # (h, L, L)
    faded = unscored(run)
    frame = glance_frame(weights, masked, None if faded is None else faded.cpu().numpy(), run.tokens)
    vega.draw(st.container(), glance_chart(frame, length, chart_text()))


def _field(name: str, kind: str, **extra: Any) -> dict[str, Any]:
    return {"field": name, "type": kind, **extra}


def glance_frame(
    weights: np.ndarray, masked: np.ndarray, faded: np.ndarray | None, tokens: tuple[str, ...] | list[str]
) -> pd.DataFrame:
    """One row per cell of every head: ``head, query, key, weight, masked, faded`` and the tokens' labels.

    Args:
        weights: (h, L, L) softmax weights.
        masked: (h, L, L) bool: cells the mask blocked.
        faded: (L,) bool: query rows no training loss looked at, or ``None``.
        tokens: the L tokens.
    """
    heads, length, _ = weights.shape
    head, query, key = np.meshgrid(np.arange(heads), np.arange(length), np.arange(length), indexing="ij")
    labels = np.array(frames.token_labels(tokens), dtype=object)
    rows = np.zeros(length, dtype=bool) if faded is None else faded.astype(bool)
    return pd.DataFrame(
        {
            "head": head.reshape(-1).astype(np.int16),
            "query": query.reshape(-1).astype(np.int16),
            "key": key.reshape(-1).astype(np.int16),
            "weight": weights.reshape(-1).astype(np.float32),
            "masked": masked.reshape(-1),
            "faded": rows[query.reshape(-1)],
            "query_token": labels[query.reshape(-1)],
            "key_token": labels[key.reshape(-1)],
        }
    )


def glance_chart(frame: pd.DataFrame, length: int, text: ChartText) -> dict[str, Any]:
    """The heads side by side, one square of (L, L) cells each, titled ``head 0``.. (Vega-Lite spec).

    Masked cells are grey, never merely white; rows no loss looked at are faded; the tooltip names the tokens.
    """
    side = charts.cell_px(length, _SIZE_PX, low=1, high=12) * length
    color = {
        "condition": {"test": "datum.masked", "value": "#bdbdbd"},
        **_field("weight", "quantitative", title=text.weight, scale=charts.weights_scale()),
    }
    return {
        "datasets": {"glance": frame},
        "data": {"name": "glance"},
        "facet": {
            "column": {
                "field": "head",
                "type": "ordinal",
                "title": None,
                "header": {"labelExpr": f"{json.dumps(text.head + ' ')} + datum.value", "labelFontWeight": "bold"},
            }
        },
        "spacing": 12,
        "spec": {
            "width": side,
            "height": side,
            "mark": {"type": "rect"},
            "encoding": {
                "x": _field("key", "ordinal", axis=None),
                "y": _field("query", "ordinal", axis=None),
                "color": color,
                "opacity": {"condition": {"test": "datum.faded", "value": 0.3}, "value": 1},
                "tooltip": [
                    _field("head", "ordinal", title=text.head),
                    _field("query_token", "nominal", title=text.query),
                    _field("key_token", "nominal", title=text.key),
                    _field("weight", "quantitative", title=text.weight, format=".4f"),
                ],
            },
        },
        "config": {"view": {"stroke": "#888"}, "legend": {"orient": "right", "gradientLength": side}},
    }
