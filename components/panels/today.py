"""Step 1b, what today's large models add to step 1: grouped K/V heads (GQA) and rotary positions (RoPE).

On the tutorials' layer it is one line pointing at the two controls. With fewer K/V heads: which query heads read
which K/V head, as a picture. With RoPE: one head's q pairs before and after their turn, the angle of each feature
pair, and the offset property measured with two of the learner's tokens. Everything here follows the values
(a :class:`~components.panels.parts.ValueParts` part): the two controls are live ones.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from components import frames, vega
from components.folds import folded
from components.i18n import t
from components.panels.frame import shape
from components.panels.parts import Results
from components.panels.source_code import forward_block, method_source
from components.safe_text import markdown_rows, md_escape
from components.today_charts import TodayText, angles_chart, grouping_png, grouping_width, turn_chart
from mha.config import PRETRAINED
from mha.module import MultiHeadAttention, repeat_kv
from mha.pipeline import AttentionRun
from mha.rope import apply_rotary_pos_emb, rotate, rotate_half
from mha.rope_lesson import angles_per_pair, offset_scores, turned_pairs
from mha.sources.checkpoint.notes import rope_base_text

__all__ = ["CODE_KEY", "TURNS_KEY", "draw", "offset_tokens"]

_HEAD = 0  # the head whose rotation is shown (every head turns by the same angles)
#: The expanders drawn only while open (components.folds): a Vega chart or a highlighted listing costs a redraw
#: of every live change in the browser, open or not.
CODE_KEY, TURNS_KEY = "fold_today_code", "fold_rope_turns"


def draw(results: Results) -> None:
    """The part under step 1: a pointer to the two controls, or what GQA and RoPE do on this page."""
    run = results.run
    model = run.model
    if model.is_plain:  # a checkpoint's sizes and positions are its own: no control to point at
        st.caption(t("today.hint_checkpoint" if run.source_kind == PRETRAINED else "today.hint"))
        return
    st.markdown(f"**{t('today.title')}**")
    code = folded(st, t("today.code"), key=CODE_KEY, icon=":material/code:")
    if code is not None:
        code.code(_code(model), language="python")
    if model.num_kv_heads != model.num_heads:
        _grouping(run)
    if model.rope_base is not None:
        _rope(run)


def _code(model: MultiHeadAttention) -> str:
    """Step 1b of the traced forward, then the functions it calls that this layer uses."""
    functions = [MultiHeadAttention.rotate_positions, MultiHeadAttention.share_kv_heads]
    if model.num_kv_heads != model.num_heads:
        functions.append(repeat_kv)
    if model.rope_base is not None:
        functions += [apply_rotary_pos_emb, rotate, rotate_half]
    return "\n\n".join([forward_block("1b"), *(method_source(func) for func in functions)])


def _text() -> TodayText:
    return TodayText(**{name: t(f"today.chart.{name}") for name in TodayText.__dataclass_fields__})


def _grouping(run: AttentionRun) -> None:
    model, kv_of = run.model, run.trace.project.kv_head_of
    kind = "MQA" if model.num_kv_heads == 1 else "GQA"
    st.markdown(
        t(
            f"today.gqa.{kind}",
            h=model.num_heads,
            kv=model.num_kv_heads,
            group=model.kv_groups,
            k=shape(run.trace.project.k_heads),
            expanded=shape(run.trace.attend.keys if run.trace.attend.keys is not None else ()),
        )
    )
    st.image(grouping_png(tuple(kv_of)), width=min(grouping_width(len(kv_of)), 720), caption=t("today.gqa.caption"))


def offset_tokens(tokens: tuple[str, ...]) -> tuple[int, int]:
    """The query and key tokens of the offset table: the first token and the one two places on (or the last)."""
    return 0, min(2, len(tokens) - 1)


def _rope(run: AttentionRun) -> None:
    model, p = run.model, run.trace.project
    base = float(model.rope_base or 0)
    thetas = angles_per_pair(model.d_k, base)
    st.markdown(t("today.rope.what", base=rope_base_text(base), d_k=model.d_k, pairs=model.d_k // 2))
    labels = frames.token_labels(run.tokens)
    assert p.q_rotated is not None  # a layer with RoPE keeps q after its turn (the traced forward)
    assert p.k_rotated is not None
    kv_head = p.kv_head_of[_HEAD]
    vectors = (
        ("q", p.q_heads[0, _HEAD], p.q_rotated[0, _HEAD]),  # (L, Dh) each
        ("k", p.k_heads[0, kv_head], p.k_rotated[0, kv_head]),
    )
    text = _text()
    rows = []
    pairs = sorted({0, model.d_k // 4})
    for vector, before, after in vectors:
        for pair in pairs:
            first, turned = turned_pairs(before.cpu().double(), after.cpu().double(), pair)  # (L, 2) each
            name = t("today.rope.pair", pair=pair, theta=f"{float(thetas[pair]):.3g}")
            for position, label in enumerate(labels):
                for order, (stage, values) in enumerate(((text.before, first), (text.after, turned))):
                    a, b = float(values[position, 0]), float(values[position, 1])
                    rows.append(
                        {"vector": vector, "pair": name, "token": label, "stage": stage, "order": order, "a": a, "b": b}
                    )
    _offsets(run)
    turns = folded(st, t("today.rope.turns"), key=TURNS_KEY, icon=":material/rotate_right:")
    if turns is None:
        return
    vega.draw(turns, turn_chart(pd.DataFrame(rows), text))
    turns.caption(t("today.rope.turn_caption", head=_HEAD, kv_head=kv_head, pairs=", ".join(map(str, pairs))))
    vega.draw(turns, angles_chart([float(theta) for theta in thetas], text))
    slowest = 2 * math.pi / float(thetas[-1])
    turns.caption(t("today.rope.angles_caption", fastest=f"{float(thetas[0]):g}", slowest=f"{slowest:,.0f}"))


def _offsets(run: AttentionRun) -> None:
    """The score of two of the learner's tokens at several pairs of positions, with RoPE and with added sinusoids."""
    query, key = offset_tokens(run.tokens)
    x = run.x[0]  # (L, D): the vectors this layer reads (RoPE adds no position to them; an earlier layer may have)
    scores = offset_scores(run.model, x[query], x[key], head=_HEAD)
    rows = [
        [f"({s.query_position}, {s.key_position})", f"{s.offset:+d}", f"{s.rope:.6f}", f"{s.sinusoidal:.6f}"]
        for s in scores
    ]
    header = [t(f"today.offset.{name}") for name in ("positions", "offset", "rope", "sinusoidal")]
    same = [s for s in scores if s.offset == scores[0].offset]
    rope_gap = max(s.rope for s in same) - min(s.rope for s in same)
    sinusoidal_gap = max(s.sinusoidal for s in same) - min(s.sinusoidal for s in same)
    st.markdown(
        t(
            "today.offset.what",
            query_token=md_escape(run.tokens[query], limit=20),
            key_token=md_escape(run.tokens[key], limit=20),
            head=_HEAD,
        )
    )
    st.markdown(markdown_rows(header, rows))
    st.caption(
        t(
            "today.offset.verdict",
            count=len(same),
            offset=scores[0].offset,
            rope_gap=f"{rope_gap:.1e}",
            sinusoidal_gap=f"{sinusoidal_gap:.3f}",
        )
    )
