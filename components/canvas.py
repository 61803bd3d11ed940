"""The canvas heatmap as a Streamlit component (components v2: inline JavaScript and CSS, no build step).

Three components: the drawing code (``heatmap.js``, read from beside this file), which
:func:`load` puts on the page once per run as a hidden element; the chart, a stub of a few
hundred bytes that waits for that code and hands it the chart's payload; and the head picker, a
stub of the same kind. So a rerun sends the code once, not once per chart, and a fragment rerun
does not send it at all: the page keeps it. :func:`draw` sends a :class:`components.heatmap.Figure`
as one binary payload; :func:`head_picker` draws the head selector of steps 1 and 2, which switches
the charts that follow the head in the browser (see ``heatmap.js``).

In AppTest a chart is an element of type ``bidi_component`` whose ``proto.component_name`` is
:data:`CHART`: ``components.heatmap.decode(element.proto.bytes)`` gives back the figure it shows.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from components.heatmap import Figure, Heads, encode

__all__ = ["CHART", "CODE", "CODE_KEY", "PICKER", "draw", "head_picker", "load"]

CHART = "attention_playground.heatmap"
CODE = "attention_playground.heatmap_code"
CODE_KEY = "heatmap_code"
PICKER = "attention_playground.head_picker"


def _compact(source: str) -> str:
    """The module without its comment lines and indentation (a quarter smaller; the code is unchanged)."""
    lines = (line.strip() for line in source.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("//"))


_CODE_JS = _compact((Path(__file__).with_name("heatmap.js")).read_text(encoding="utf-8"))
_STUB_JS = """
export default function (component) {
  if (!window.attnHeatmap) {
    let resolve;
    window.attnHeatmap = { ready: new Promise((r) => (resolve = r)), resolve };
  }
  let cleanup = null, gone = false;
  window.attnHeatmap.ready.then((code) => { if (!gone) cleanup = code.%s(component); });
  return () => { gone = true; if (cleanup) cleanup(); };
}
"""
_CHART_CSS = """
.attn-heatmap { position: relative; width: 100%; line-height: 1.3; }
.attn-heatmap canvas { display: block; }
.attn-heatmap-tip {
  display: none; position: absolute; z-index: 5; pointer-events: none; padding: 6px 9px;
  background: white; border: 1px solid #bbb; border-radius: 4px; box-shadow: 0 2px 6px rgba(0, 0, 0, 0.15);
  font-size: calc(13px * var(--attn-chart-font-scale, 1)); white-space: nowrap; color: #31333f;
}
.attn-heatmap-mark {
  display: none; position: absolute; pointer-events: none; box-sizing: content-box; border: 1px solid black;
}
.attn-heatmap-note { font-size: calc(13px * var(--attn-chart-font-scale, 1)); color: #6b7280; }
.attn-heatmap-note:empty { display: none; }
.attn-heatmap-png {
  position: absolute; top: 0; right: 0; z-index: 4; opacity: 0; transition: opacity 0.15s;
  padding: 2px 7px; border: 1px solid #d6d6d9; border-radius: 4px; background: rgba(255, 255, 255, 0.92);
  color: #31333f; font: 600 calc(11px * var(--attn-chart-font-scale, 1)) / 1.4 sans-serif; cursor: pointer;
}
.attn-heatmap:hover .attn-heatmap-png, .attn-heatmap-png:focus-visible { opacity: 1; }
.attn-heatmap-png:hover { border-color: #c2410c; color: #c2410c; }
@media (hover: none) { .attn-heatmap-png { opacity: 1; } }
"""
_PICKER_CSS = """
.attn-head-picker {
  --attn-pick-k: var(--attn-chart-font-scale, 1);
  display: flex; flex-wrap: wrap; align-items: center; gap: 4px 14px; font-size: calc(14px * var(--attn-pick-k));
}
.attn-head-picker [role="radiogroup"] { display: flex; flex-wrap: wrap; gap: 4px calc(14px * var(--attn-pick-k)); }
.attn-head-picker label { display: inline-flex; align-items: center; gap: 5px; cursor: pointer; }
.attn-head-picker input {
  accent-color: #c2410c; margin: 0; cursor: pointer;
  width: calc(16px * var(--attn-pick-k)); height: calc(16px * var(--attn-pick-k));
}
.attn-head-picker select { font: inherit; padding: 3px 8px; border: 1px solid #d6d6d9; border-radius: 6px; }
"""
_code = st.components.v2.component(
    CODE, js=_CODE_JS, css=f".st-key-{CODE_KEY} {{ display: none; }}", isolate_styles=False
)
_chart = st.components.v2.component(CHART, js=_STUB_JS % "chart", css=_CHART_CSS, isolate_styles=False)
_picker = st.components.v2.component(PICKER, js=_STUB_JS % "picker", css=_PICKER_CSS, isolate_styles=False)


def load() -> None:
    """Put the drawing code on the page (hidden). Call it once per run, outside fragments, before any chart."""
    _code(key=CODE_KEY, width="stretch", height="content")


def draw(container: st.delta_generator.DeltaGenerator | None, figure: Figure, key: str) -> None:
    """Draw ``figure`` in ``container`` (``None``: where the page is writing); ``key`` keeps the chart's place (and
    its canvas) across reruns."""
    with container if container is not None else contextlib.nullcontext():
        _chart(key=key, data=encode(figure), width="stretch", height="content")


def head_picker(key: str, label: str, heads: Heads, on_change: Callable[[], None]) -> None:
    """The head selector of steps 1 and 2: radio buttons (a drop-down beyond 16 heads) labelled ``label``.

    A pick redraws every chart that follows the head at once, in the browser (when ``heads.every``), and
    reaches the server a moment later as the component's state ``head`` (``st.session_state[key].head``),
    after which ``on_change`` runs; with ``heads.every`` false it reaches the server at once.
    """
    data = {"label": label, "count": heads.count, "shown": heads.shown, "moves": heads.moves, "every": heads.every}
    _picker(key=key, data=data, default={"head": heads.shown}, on_head_change=on_change, width="stretch")
