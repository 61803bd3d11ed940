"""One panel per pipeline step, the parameter summary and the live check against PyTorch.

Each step has its own render function (``render_step_1`` .. ``render_step_4``) so a
page can show them one at a time; steps 1 and 2 take the picked head (:class:`components.heatmap.Heads`
from :func:`components.head_picker.select_head`). Their charts hold every head's panels (up to
:data:`HEAD_SWITCH_CELLS`), so the browser draws another head at once, without a run on the server.
The panels only draw: they read sizes from the run's trace and never write the URL.
The heatmaps are the page's canvas component (:mod:`components.canvas`).

Given :class:`components.reseed.Places`, a panel draws only what a new seed leaves as it is (the text,
the shapes, the code) and leaves a place for each part that shows the weights' values, which the seed's
fragment fills (see :mod:`components.reseed`); without, it draws everything at once (a teacher's slide).

The code shown in each panel is read from the engine at run time (the step's lines of
``MultiHeadAttention.forward_traced`` in ``mha/module.py``, then the methods and functions it
calls, such as ``mha.functional.masked_softmax`` in step 2), so it is always the code that ran.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Sequence
from functools import cache
from typing import cast

import pandas as pd
import streamlit as st
import torch
from torch import Tensor

from components import canvas, charts, frames, heatmap, vega
from components.folds import folded
from components.headings import heading
from components.i18n import current_language, t
from components.nav import render_lab_case_link, render_lab_links
from components.reseed import Places, draw_or_keep
from components.safe_text import markdown_table, md_escape
from mha import functional
from mha.counting import projection_parameters, step_costs, total_parameters
from mha.dropout import training_dropout
from mha.module import MultiHeadAttention
from mha.pipeline import AttentionRun
from mha.reference import BatchOrderCheck, TorchCheck, to_torch_mha
from mha.row_spread import NEAR_UNIFORM_RATIO, RowSpread, near_uniform_bound, row_spread
from mha.score_scale import score_spread
from mha.strides import transposed_context

__all__ = [
    "DROPOUT_KEY",
    "HEAD_SWITCH_CELLS",
    "Slot",
    "chart_text",
    "draw_step_1_chart",
    "draw_step_2_chart",
    "forward_block",
    "heads_fit",
    "method_source",
    "render_live_check",
    "render_step_1",
    "render_step_2",
    "render_step_3",
    "render_step_4",
    "render_summary",
    "row_ranges",
    "step_code",
]

HEAD_COUNTS = (1, 2, 4, 8, 16, 32, 64)
GRID_STAGES = ("raw", "scaled", "weights")
#: The labs that take each step further (names of components.nav.LAB_PAGES).
STEP_LABS = {
    1: ("heads", "loop", "reshape"),
    2: ("scaling", "masks", "sculpt", "cross", "complexity", "attribution"),
    3: ("reshape",),
    4: ("encoder",),
}
SUMMARY_LABS = ("heads", "complexity", "onnx")
CHECK_LABS = ("masks",)
DROPOUT_P = 0.1  # the tutorials' usual attention dropout
_DROPOUT_KEYS = 8  # keys shown in the dropout table (the row's sum counts them all)
_DROPOUT_HEAD = 0  # the dropout example's head: the note says which, and stays as the browser switches heads
DROPOUT_KEY = "fold_dropout"  # the dropout example's expander (drawn only while open: components.folds)
#: Steps 1 and 2 send every head's charts (and the browser switches heads itself) up to this many cells,
#: 256 KB a run as float32, about half that as the four decimals most panels now go with: the default
#: page (11 tokens x 8 heads) is 20 k, 24 tokens x 8 heads 51 k. Beyond, the bytes cost more than the
#: instant switch saves (64 tokens x 8 heads, 0.2 M cells, 1.1 MB a run as float32: a new seed took
#: 518 -> 683 ms in the browser bench), and the charts carry the shown head only.
HEAD_SWITCH_CELLS = 65_536
Slot = st.delta_generator.DeltaGenerator  # a chart's place in a panel, drawn into again for another head


def _values(
    box: st.delta_generator.DeltaGenerator,
    places: Places | None,
    draw: Callable[[AttentionRun], None],
    run: AttentionRun,
) -> None:
    """A part of ``box`` that shows the run's values: drawn now, or kept for the seed's fragment."""
    draw_or_keep(box, places, draw, run, lambda computed: computed.run)


# ---------------------------------------------------------------- engine source shown in the panels
@cache
def method_source(func: Callable[..., object]) -> str:
    """The source of a function or method without its docstring (signature and body)."""
    source = textwrap.dedent(inspect.getsource(func))
    node = cast(ast.FunctionDef, ast.parse(source).body[0])
    lines = source.splitlines()
    body = node.body
    has_doc = isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant)
    header = lines[: body[0].lineno - 1]
    rest = lines[body[1].lineno - 1 :] if has_doc and len(body) > 1 else lines[body[0].lineno - 1 :]
    return "\n".join(header + rest)


@cache
def forward_block(step: int) -> str:
    """The lines of ``MultiHeadAttention.forward_traced`` under its ``# {step})`` comment."""
    lines = textwrap.dedent(inspect.getsource(MultiHeadAttention.forward_traced)).splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(f"# {step})"))
    end = next(
        (i for i, line in enumerate(lines[start + 1 :], start + 1) if line.strip().startswith(("# ", "return"))),
        len(lines),
    )
    return textwrap.dedent("\n".join(lines[start:end]))


def step_code(step: int) -> str:
    """What the panel of ``step`` shows: the step in the traced forward, then the methods it calls."""
    helpers: dict[int, Sequence[Callable[..., object]]] = {
        1: (MultiHeadAttention._project_qkv, MultiHeadAttention.split_heads),
        2: (functional.masked_softmax,),
        3: (MultiHeadAttention.concat_heads,),
        4: (MultiHeadAttention.project_out,),
    }
    return "\n\n".join([forward_block(step), *(method_source(func) for func in helpers[step])])


# ---------------------------------------------------------------- small helpers
def chart_text() -> charts.ChartText:
    """Chart words in the session's language."""
    return _chart_text(current_language())


@cache
def _chart_text(lang: str) -> charts.ChartText:
    """Chart words in ``lang``, looked up once per language (a page draws several charts per run)."""
    return charts.ChartText(
        query=t("chart.query", lang=lang),
        key=t("chart.key", lang=lang),
        token=t("chart.token", lang=lang),
        weight=t("chart.weight", lang=lang),
        score=t("chart.score", lang=lang),
        value=t("chart.value", lang=lang),
        head=t("chart.head", lang=lang),
        feature=t("chart.feature", lang=lang),
        masked=t("chart.masked", lang=lang),
        entropy=t("chart.entropy", lang=lang),
        max_weight=t("chart.max_weight", lang=lang),
        heads_axis=t("chart.heads_axis", lang=lang),
        unscored=t("chart.unscored", lang=lang),
        hover=t("chart.hover", lang=lang),
    )


def _shape(value: Tensor | Sequence[int]) -> str:
    """``[1, 8, 10, 64]``: a shape as the list PyTorch prints."""
    return str(list(value.shape if isinstance(value, Tensor) else value))


def _count(number: int) -> str:
    return f"{number:,}"


def _panel(step: int) -> st.delta_generator.DeltaGenerator:
    box = st.container(border=True)
    heading(box, t(f"step{step}.title"))
    return box


def _explain(box: st.delta_generator.DeltaGenerator, step: int, shapes: str, params: str, slide: bool) -> None:
    """What the step does | its shapes and parameters; below, the engine's code that does it.

    On a slide the parameters go under the explanation (the two columns come out about as tall, so the
    chart starts higher) and the code is folded under the chart by :func:`_finish`.
    """
    left, right = box.columns(2)
    if slide:
        left.markdown(f"{t(f'step{step}.what')}\n\n{params}")
        right.markdown(shapes)
        return
    left.markdown(t(f"step{step}.what"))
    right.markdown(f"{shapes}\n\n{params}")
    box.code(step_code(step), language="python")


def _finish(box: st.delta_generator.DeltaGenerator, step: int, slide: bool) -> None:
    """The step's labs; on a slide, the step's code folded (the chart comes first on a projector)."""
    render_lab_links(box, STEP_LABS[step])
    if slide:
        box.expander(t("steps.code"), icon=":material/code:").code(step_code(step), language="python")


def _draw_vega(box: st.delta_generator.DeltaGenerator, spec: charts.Spec, slide: bool = False) -> None:
    """Send a Vega-Lite chart (its type larger on a slide)."""
    if slide:
        spec = charts.scale_fonts(spec, charts.PRESENTATION_FONT_SCALE)
    vega.draw(box, spec)


#: Up to this many tokens every row gets a label of its own, at least READABLE_ROW_PX tall.
LABELLED_TOKENS = 32
READABLE_ROW_PX = 13


def _row_px(length: int, target_px: int) -> int:
    """Height of one token's row: about ``target_px`` for the matrix, never too thin to label up to 32 tokens."""
    low = READABLE_ROW_PX if length <= LABELLED_TOKENS else 3
    return min(30, max(low, target_px // length))


def _feature_height(length: int) -> int:
    """How tall a tokens x features matrix is drawn: about 300 px (rows of 3-30 px)."""
    return _row_px(length, 300) * length


def _blocked(run: AttentionRun) -> Tensor:
    """(H, Lq, Lk) bool: cells the mask blocked (their masked score is -inf)."""
    return torch.isneginf(run.trace.attend.masked_scores[0])


def _unscored(run: AttentionRun) -> Tensor | None:
    """(L,) bool: query rows no training loss looked at (drawn faded), or ``None`` when every row carries one."""
    if run.scored_rows is None or bool(run.scored_rows.all()):
        return None
    return ~run.scored_rows


# ---------------------------------------------------------------- the four steps
def heads_fit(run: AttentionRun) -> bool:
    """Whether steps 1 and 2 can send every head's charts (at most :data:`HEAD_SWITCH_CELLS` cells), so that
    the page switches heads in the browser; beyond that they send the shown head's only."""
    length = len(run.tokens)
    per_head = 3 * length * frames.feature_budget(length, run.d_k, parts=3) + 3 * length * length
    return run.num_heads * per_head <= HEAD_SWITCH_CELLS


def _heads_drawn(heads: heatmap.Heads) -> range:
    """The heads whose charts are sent: every head, or only the shown one."""
    return range(heads.count) if heads.every else range(heads.shown, heads.shown + 1)


def render_step_1(run: AttentionRun, heads: heatmap.Heads | None = None, slide: bool = False) -> Slot:
    """Step 1, project and split: Q, K, V of the picked head (tokens x d_k), shapes before and after view/transpose.

    ``heads``: the head the page shows and which heads the chart holds (see :mod:`components.head_picker`);
    ``None``: the chart's place is left for the caller to fill in this run (:func:`draw_step_1_chart`).
    ``slide``: laid out for a projector (teacher mode): code folded under the chart (whose type the
    slide's style enlarges).

    Returns:
        The chart's place (for :func:`draw_step_1_chart`).
    """
    p = run.trace.project
    batch, length, d_model = p.x_query.shape
    num_heads, d_k = run.num_heads, run.d_k
    box = _panel(1)
    token_line = (
        t("step1.tokens", count=length) + " " + " · ".join(md_escape(x) for x in frames.token_labels(run.tokens))
    )
    if not slide:  # on a slide it follows the charts: a long text would push them off the screen
        box.markdown(token_line)
    shapes = t(
        "step1.shapes",
        x=_shape(p.x_query),
        q=_shape(p.q),
        view=_shape((batch, length, num_heads, d_k)),
        heads=_shape(p.q_heads),
        view_args=f"{batch}, {length}, {num_heads}, {d_k}",
    )
    one = projection_parameters(d_model)
    params = t("step1.params", d=d_model, one=_count(one), total=_count(3 * one))
    _explain(box, 1, shapes, params, slide)
    columns = frames.feature_budget(length, d_k, parts=3)
    if columns < d_k:
        box.caption(t("steps.features_cut", shown=columns, total=d_k))
    slot = box.empty()
    if heads is not None:
        draw_step_1_chart(slot, run, heads)
    if slide:
        box.markdown(token_line)
    _finish(box, 1, slide)
    return slot


def draw_step_1_chart(slot: Slot, run: AttentionRun, heads: heatmap.Heads) -> None:
    """Q, K, V (tokens x d_k, as many features as the cell budget allows) of the heads in ``heads``, in ``slot``."""
    p = run.trace.project
    length, d_k = len(run.tokens), run.d_k
    columns = frames.feature_budget(length, d_k, parts=3)
    named = (("Q", p.q_heads), ("K", p.k_heads), ("V", p.v_heads))
    figures = [
        heatmap.feature_figure(
            [
                (t("step1.chart", name=name, head=head, length=length, d_k=d_k), tensor[0, head, :, :columns])
                for name, tensor in named
            ],
            frames.token_labels(run.tokens),
            range(columns),
            chart_text(),
            height=_feature_height(length),
        )
        for head in _heads_drawn(heads)
    ]
    canvas.draw(slot, heatmap.stack_heads(figures, heads), key="heatmap_step1")


def render_step_2(
    run: AttentionRun,
    color_scale: str = "fixed",
    heads: heatmap.Heads | None = None,
    slide: bool = False,
    places: Places | None = None,
) -> Slot:
    """Step 2, scaled dot-product: raw, scaled+masked scores and weights of the picked head large; all heads as a grid.

    Below the charts: why the scores are divided by √d_k, and dropout on the weights in training.
    ``heads``: as in :func:`render_step_1`. ``color_scale``: how the weights are coloured
    (:data:`components.heatmap.COLOR_SCALES`). ``slide``: laid out for a projector (see :func:`render_step_1`).
    ``places``: the notes and the grid are left to the seed's fragment (see the module's docstring).

    Returns:
        The chart's place (for :func:`draw_step_2_chart`).
    """
    a = run.trace.attend
    length = len(run.tokens)
    num_heads, d_k = run.num_heads, run.d_k
    box = _panel(2)
    shapes = t(
        "step2.shapes",
        q=_shape(run.trace.project.q_heads),
        kt=_shape((1, num_heads, d_k, length)),
        scores=_shape(a.raw_scores),
        weights=_shape(a.weights),
        context=_shape(a.context),
        d_k=d_k,
        scale=f"{a.scale:.4g}",
    )
    _explain(box, 2, shapes, t("step2.params"), slide)
    slot = box.empty()
    if heads is not None:
        draw_step_2_chart(slot, run, heads, color_scale)
    _values(box, places, _draw_step_2_notes, run)
    if places is None:
        with box:
            _render_grid(run, color_scale, slide)
    else:
        places.add_fragment(box.empty(), lambda computed: _render_grid(computed.run, color_scale, slide))
    _finish(box, 2, slide)
    return slot


def draw_step_2_chart(slot: Slot, run: AttentionRun, heads: heatmap.Heads, color_scale: str = "fixed") -> None:
    """Raw scores, scaled and masked scores and weights of the heads in ``heads`` side by side with token axes
    (rows without a training loss faded), in ``slot``."""
    a = run.trace.attend
    length = len(run.tokens)
    blocked = _blocked(run)
    height = _row_px(length, 280 if length <= 24 else 400) * length
    labels = frames.token_labels(run.tokens)
    figures = [
        heatmap.attention_figure(
            (
                heatmap.Stage(t("step2.raw", head=head), "scores", a.raw_scores[0, head]),
                heatmap.Stage(t("step2.scaled", head=head), "scores", a.masked_scores[0, head], blocked[head]),
                heatmap.Stage(t("step2.weights", head=head), "weights", a.weights[0, head], blocked[head]),
            ),
            labels,
            chart_text(),
            color_scale,
            height,
            faded_rows=_unscored(run),
        )
        for head in _heads_drawn(heads)
    ]
    canvas.draw(slot, heatmap.stack_heads(figures, heads), key="heatmap_step2")


def _draw_step_2_notes(run: AttentionRun) -> None:
    """Under step 2's charts: what the weights look like, why √d_k, dropout, each head's label."""
    weights = run.trace.attend.weights[0]  # (H, Lq, Lk)
    bound = near_uniform_bound(weights)
    if run.source_kind == "random" and bound is not None:
        uniform = {"ratio": NEAR_UNIFORM_RATIO, "bound": f"{bound:.3f}", "uniform": f"{1 / weights.size(-1):.3f}"}
        st.caption(t("step2.uniform_note", largest=f"{float(weights.max()):.3f}", **uniform))
    if run.mask is not None:
        st.caption(t("step2.masked_note"))
    if run.config.mask_type == "causal":  # the first tutorial's two causal masks do not fit together: lab 4 shows it
        render_lab_case_link(st, "masks", t("step2.causal_case"))
    _render_why_scale(run)
    _render_dropout(run)
    _render_head_labels(run)


def _render_why_scale(run: AttentionRun) -> None:
    """Why 1/√d_k: the scores' spread grows like √d_k and saturates the softmax; the numbers of every head."""
    p, a = run.trace.project, run.trace.attend
    spread = score_spread(p.q_heads[0], p.k_heads[0], a.raw_scores[0], a.scale)  # (H, L, Dh), (H, Lq, Lk)
    numbers = {
        "q_std": spread.q_std,
        "k_std": spread.k_std,
        "expected_raw": spread.expected_raw_std,
        "raw_std": spread.raw_std,
        "scaled_std": spread.scaled_std,
        "expected_scaled": spread.expected_scaled_std,
    }
    shown = {name: f"{value:.2f}" for name, value in numbers.items()}
    st.markdown(t("step2.why_scale", d_k=run.d_k, root=f"{run.d_k**0.5:.1f}", heads=run.num_heads, **shown))


def _render_dropout(run: AttentionRun) -> None:
    """Where ``nn.Dropout(p)`` sits (on the weights, after the softmax, training only) and one row it would change
    (head :data:`_DROPOUT_HEAD`'s, whatever head the browser shows), in an expander drawn only while open."""
    expander = folded(st, t("step2.dropout_title"), key=DROPOUT_KEY, icon=":material/grain:")
    if expander is None:
        return
    head = _DROPOUT_HEAD
    weights = run.trace.attend.weights[0, head]  # (Lq, Lk)
    attending = (weights.sum(dim=-1) > 0).nonzero()  # (rows, 1): queries with a key they may attend
    # the last such query: under a causal mask it attends the most keys
    query = int(attending[-1]) if len(attending) else weights.size(0) - 1
    row = weights[query]  # (Lk,)
    dropped = training_dropout(row, DROPOUT_P, seed=run.config.seed)  # (Lk,)
    labels = frames.token_labels(run.tokens)
    shown = min(len(labels), _DROPOUT_KEYS)
    total = t("step2.dropout_sum", count=len(labels))
    table = pd.DataFrame(
        [[f"{float(v):.3f}" for v in values[:shown]] + [f"{float(values.sum()):.3f}"] for values in (row, dropped)],
        index=[t("step2.dropout_eval"), t("step2.dropout_train", p=DROPOUT_P)],
        columns=[*(md_escape(label) for label in labels[:shown]), total],  # table headers are markdown
    )
    expander.markdown(t("step2.dropout", head=head, query=md_escape(labels[query]), p=DROPOUT_P))
    expander.markdown(markdown_table(table))


def head_label(run: AttentionRun, head: int) -> str:
    """``previous token 0.97``: what ``head`` does, read from its weights, in the session's language."""
    label = run.head_labels[head]
    return t("label.with_share", label=t(f"label.{label.name}"), share=f"{label.share:.2f}")


def _render_head_labels(run: AttentionRun) -> None:
    """One line: each head's label and the share of weight behind it (see mha.head_labels)."""
    labels = " · ".join(f"**{head}** {head_label(run, head)}" for head in range(run.num_heads))
    st.markdown(f"{t('step2.labels_title')} {labels}")
    st.caption(t("step2.labels_note"))
    if run.scored_rows is not None and not bool(run.scored_rows.all()):
        st.caption(t("step2.unscored_rows", rows=row_ranges((~run.scored_rows).nonzero().flatten().tolist())))


def row_ranges(rows: Sequence[int]) -> str:
    """``[0, 11, 12, 13]`` -> ``"0, 11–13"``: sorted row numbers with their runs shortened."""
    runs: list[list[int]] = []
    for row in sorted(rows):
        if runs and row == runs[-1][-1] + 1:
            runs[-1].append(row)
        else:
            runs.append([row])
    return ", ".join(str(run[0]) if len(run) == 1 else f"{run[0]}–{run[-1]}" for run in runs)


@st.fragment
def _render_grid(run: AttentionRun, color_scale: str, slide: bool) -> None:
    """Every head as small multiples, titled with its label (its stage chosen here: a fragment), or a per-head
    summary when the grid would be too big to send."""
    a = run.trace.attend
    num_heads, length = run.num_heads, len(run.tokens)
    text = chart_text()
    st.markdown(f"**{t('step2.grid_title', heads=num_heads)}**")
    cells = num_heads * length * length
    if cells > frames.CELL_BUDGET:
        st.info(t("step2.grid_summarised", cells=_count(cells), budget=_count(frames.CELL_BUDGET)))
        _draw_vega(st.container(), charts.head_summary_chart(frames.head_summary_frame(a.weights[0]), text), slide)
        return
    if st.session_state.get("grid_stage") not in GRID_STAGES:
        st.session_state["grid_stage"] = "weights"
    stage = st.segmented_control(
        t("step2.grid_stage"),
        GRID_STAGES,
        key="grid_stage",
        required=True,
        format_func=lambda name: t(f"step2.stage.{name}"),
    )
    tensor = {"raw": a.raw_scores, "scaled": a.masked_scores, "weights": a.weights}[stage][0]
    kind = "weights" if stage == "weights" else "scores"
    columns = 4 if num_heads <= 8 else 8
    grid = heatmap.grid_figure(
        tensor,
        None if stage == "raw" else _blocked(run),
        kind,
        frames.token_labels(run.tokens),
        text,
        color_scale,
        columns=columns,
        size_px=190 if columns == 4 else 95,
        head_titles=[f"{head}: {head_label(run, head)}" for head in range(num_heads)],
        faded_rows=_unscored(run),
    )
    canvas.draw(st.container(), grid, key="heatmap_grid")


def render_step_3(run: AttentionRun, slide: bool = False, places: Places | None = None) -> None:
    """Step 3, concat: the heads' contexts side by side into (B, L, d_model), head boundaries drawn.

    Below the chart: why the rows look alike when the weights are near uniform, and why
    ``.contiguous()`` comes before ``.view``. ``slide``: see :func:`render_step_1`. ``places``: the chart
    and its note are left to the seed's fragment (see the module's docstring).
    """
    a, c = run.trace.attend, run.trace.concat
    batch, length, d_model = c.concat.shape
    num_heads, d_k = run.num_heads, run.d_k
    box = _panel(3)
    shapes = t(
        "step3.shapes",
        context=_shape(a.context),
        moved=_shape((batch, length, num_heads, d_k)),
        concat=_shape(c.concat),
        view_args=f"{batch}, {length}, {d_model}",
    )
    _explain(box, 3, shapes, t("step3.params"), slide)
    shown = _concat_shown(run)
    if shown < d_k:
        box.caption(t("step3.features_cut", shown=shown, d_k=d_k))
    _values(box, places, _draw_step_3_values, run)
    _render_contiguous(box, run)
    _finish(box, 3, slide)


def _concat_shown(run: AttentionRun) -> int:
    """Features per head step 3's chart shows (all of d_k, or as many as the cell budget allows)."""
    length, d_model = len(run.tokens), run.d_model
    return min(frames.feature_budget(length, d_model) // run.num_heads or 1, run.d_k)


def _draw_step_3_values(run: AttentionRun) -> None:
    """Step 3's chart (the concatenated contexts) and, when the rows look alike, why."""
    c = run.trace.concat
    length, d_model = len(run.tokens), run.d_model
    shown = _concat_shown(run)
    columns = frames.concat_columns(d_model, run.num_heads, shown)
    title = t("step3.chart", length=length, d_model=d_model)
    labels = frames.token_labels(run.tokens)
    matrix = c.concat[0][:, torch.as_tensor(columns)]  # (L, H * shown)
    figure = heatmap.concat_figure(title, matrix, labels, columns, shown, chart_text(), height=_feature_height(length))
    canvas.draw(None, figure, key="heatmap_step3")
    spread = row_spread(c.concat[0])
    if spread.alike:
        largest = float(run.trace.attend.weights[0].max())
        st.markdown(
            t("step3.alike_note", largest=f"{largest:.2f}", uniform=f"{1 / length:.2f}", **_spread_text(spread))
        )


def _spread_text(spread: RowSpread) -> dict[str, str]:
    return {"spread": f"{spread.spread:.2f}", "size": f"{spread.size:.2f}"}


def _render_contiguous(box: st.delta_generator.DeltaGenerator, run: AttentionRun) -> None:
    """Why ``.contiguous()`` before ``.view``: the transposed context's strides and what ``view`` says of it."""
    moved = transposed_context(run.trace.attend.context)
    expander = box.expander(t("step3.contiguous_title"), icon=":material/memory:")
    numbers = {"shape": str(list(moved.shape)), "strides": str(moved.strides), "packed": str(moved.packed)}
    if moved.view_error is None:
        expander.markdown(t("step3.contiguous_lucky", contiguous=moved.contiguous))
    else:
        expander.markdown(t("step3.contiguous", contiguous=moved.contiguous, **numbers))
        expander.code(f"RuntimeError: {moved.view_error}", language="text", wrap_lines=True)
    expander.markdown(t("step3.contiguous_fix"))


def render_step_4(run: AttentionRun, slide: bool = False, places: Places | None = None) -> None:
    """Step 4, output projection: the output (B, L, d_model) and W_o's parameter count.

    ``slide``: see :func:`render_step_1`. ``places``: as in :func:`render_step_3`.
    """
    c, o = run.trace.concat, run.trace.out
    _, length, d_model = o.output.shape
    box = _panel(4)
    shapes = t("step4.shapes", concat=_shape(c.concat), output=_shape(o.output), x=_shape(run.x))
    params = t("step4.params", d=d_model, one=_count(projection_parameters(d_model)))
    _explain(box, 4, shapes, params, slide)
    columns = frames.feature_budget(length, d_model)
    if columns < d_model:
        box.caption(t("steps.features_cut", shown=columns, total=d_model))
    _values(box, places, _draw_step_4_values, run)
    _finish(box, 4, slide)


def _draw_step_4_values(run: AttentionRun) -> None:
    """Step 4's chart (the output) and, when step 3's rows looked alike, why they still do."""
    o = run.trace.out
    length, d_model = len(run.tokens), run.d_model
    columns = frames.feature_budget(length, d_model)
    parts = [(t("step4.chart", length=length, d_model=d_model), o.output[0, :, :columns])]
    figure = heatmap.feature_figure(
        parts, frames.token_labels(run.tokens), range(columns), chart_text(), height=_feature_height(length)
    )
    canvas.draw(None, figure, key="heatmap_step4")
    if row_spread(run.trace.concat.concat[0]).alike:
        st.markdown(t("step4.alike_note", **_spread_text(row_spread(o.output[0]))))


# ---------------------------------------------------------------- summary and live check
def render_summary(d_model: int, run: AttentionRun | None = None, counted: int | None = None) -> None:
    """Parameters per matrix and per step, the total 4d²+4d, and a table showing it does not depend on h.

    Args:
        d_model: the width D (enough for every count here).
        run: the page's run, for the per-step FLOPs; ``None`` when the config could not run.
        counted: parameters actually held by the model, shown next to the formula when given.
    """
    box = st.container(border=True)
    heading(box, t("summary.title"))
    one = projection_parameters(d_model)
    total = total_parameters(d_model)
    left, right = box.columns(2)
    per_matrix = pd.DataFrame(
        {
            t("summary.matrix"): ["W_q", "W_k", "W_v", "W_o", t("summary.total_row")],
            t("summary.weights"): [_count(d_model * d_model)] * 4 + [_count(4 * d_model * d_model)],
            t("summary.biases"): [_count(d_model)] * 4 + [_count(4 * d_model)],
            t("summary.params"): [_count(one)] * 4 + [_count(total)],
        }
    )
    left.markdown(f"**{t('summary.per_matrix')}**")
    left.table(per_matrix, hide_index=True)
    left.markdown(t("summary.total", d=d_model, total=_count(total)))
    if counted is not None:
        left.caption(t("summary.counted", counted=_count(counted), ok="✓" if counted == total else "✗"))
    if run is not None:
        costs = step_costs(d_model, run.num_heads, len(run.tokens))
        per_step = pd.DataFrame(
            {
                t("summary.step"): [t(f"step{cost.step}.title") for cost in costs],
                t("summary.params"): [_count(cost.params) for cost in costs],
                t("summary.flops"): [_count(cost.flops) for cost in costs],
            }
        )
        right.markdown(f"**{t('summary.per_step')}**")
        right.table(per_step, hide_index=True)
    chosen = {run.num_heads} if run is not None else set()  # e.g. 12 at 768: always in the table
    heads = sorted({h for h in HEAD_COUNTS if d_model % h == 0} | chosen)
    by_heads = pd.DataFrame(
        {
            "h": [str(h) for h in heads],
            "d_k": [str(d_model // h) for h in heads],
            t("summary.params"): [_count(total_parameters(d_model)) for _ in heads],
        }
    )
    right.markdown(f"**{t('summary.by_heads')}**")
    right.table(by_heads, hide_index=True)
    right.caption(t("summary.by_heads_note", d=d_model))
    render_lab_links(box, SUMMARY_LABS)


def render_live_check(
    check: TorchCheck, run: AttentionRun, order: BatchOrderCheck, places: Places | None = None
) -> None:
    """Our output and per-head weights against ``torch.nn.MultiheadAttention`` with the same weights.

    Then the tutorials' common pitfall, measured on the same input (``order``): ``nn.MultiheadAttention``
    takes [L, B, E] unless ``batch_first=True``. ``places``: the measured numbers are left to the seed's
    fragment (see the module's docstring).
    """
    box = st.container(border=True)
    heading(box, t("check.title"))
    box.markdown(t("check.what"))
    draw_or_keep(box, places, _draw_check_result, check, lambda computed: computed.check)
    if check.rows_compared < check.rows_total:
        box.caption(t("check.rows", compared=check.rows_compared, total=check.rows_total))
    if run.mask is not None:
        box.info(t("check.mask_note"))
    with box.expander(t("check.code")):
        st.code(method_source(to_torch_mha), language="python")
    box.markdown(f"**{t('check.order_title')}**")
    length = len(run.tokens)
    draw_or_keep(box, places, lambda found: _draw_batch_order(found, length), order, lambda c: c.batch_order)
    box.code(_ORDER_CODE, language="python")
    render_lab_links(box, CHECK_LABS)


def _draw_check_result(check: TorchCheck) -> None:
    """Passed or failed, with the largest differences and the tolerance."""
    numbers = {
        "out": f"{check.max_abs_output:.2e}",
        "weights": f"{check.max_abs_weights:.2e}",
        "tol": f"{check.tolerance:.0e}",
    }
    if check.passed:
        st.success(t("check.pass", **numbers))
    else:
        st.error(t("check.fail", **numbers))


_ORDER_CODE = """\
mha = nn.MultiheadAttention(d_model, num_heads)  # batch_first=False: input [L, B, E]
out, w = mha(x, x, x)  # x [B, L, E] is read as L = B, batch = L: no error, wrong numbers
out, w = mha(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1))  # [L, B, E]: right
out = out.transpose(0, 1)  # back to [B, L, E]
mha = nn.MultiheadAttention(d_model, num_heads, batch_first=True)  # or: [B, L, E] as it is"""


def _draw_batch_order(order: BatchOrderCheck, length: int) -> None:
    """``nn.MultiheadAttention``'s default [L, B, E] fed our [B, L, E]: the shapes and differences, measured."""
    numbers = {
        "x": _shape(order.input_shape),
        "out": _shape(order.wrong_output_shape),
        "weights": _shape(order.wrong_weights_shape),
        "length": length,
        "wrong": f"{order.wrong_gap:.2e}",
        "transposed": f"{order.transposed_gap:.2e}",
        "batch_first": f"{order.batch_first_gap:.2e}",
    }
    st.markdown(t("check.order", **numbers))
