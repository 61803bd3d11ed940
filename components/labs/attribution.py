"""Lab 11: what did the layer really use? A key's weight, the size of what it adds, and the effect of removing it."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st
import torch

from components import cache
from components.chart_style import FONT_SIZE
from components.i18n import t
from components.labs.charts import WIDTH_BUDGET_PX
from components.labs.common import lab_header, show_chart, table_height
from components.labs.session_layer import (
    Prediction,
    answer_at_cls,
    layer_run,
    session_run,
    show_layer_caption,
    trained_prediction,
)
from components.safe_text import md_escape
from mha.config import PRETRAINED, RANDOM, TRAINED, AttentionConfig
from mha.experiments.attribution import (
    ABLATIONS,
    KeyMeasures,
    ablation_deltas,
    disagreements,
    kendall_tau,
    key_measures,
    spearman,
)
from mha.pipeline import AttentionRun
from mha.tokens import token_labels

__all__ = ["head_frame", "key_frame", "measure_bars", "render"]

LAYER = -1  # the head selector's value for "all heads together"
MEASURES = ("weight", "norm", "effect")
MEASURE_COLORS = {"weight": "#2563eb", "norm": "#c2410c", "effect": "#16a34a"}


@cache.results(max_entries=32)
def _measures(config: AttentionConfig, query: int) -> KeyMeasures:
    run = layer_run(config)
    return key_measures(run.model, run.x, run.mask, query)


@cache.results(max_entries=32)
def _prediction(config: AttentionConfig, query: int, head: int, ablation: str) -> Prediction | None:
    """The trained model's answer that ``query``'s row reaches and each key's effect on it (the session layer's
    :func:`~components.labs.session_layer.trained_prediction`); ``None`` where there is none to show."""
    run = layer_run(config)
    deltas = ablation_deltas(run.model, run.x, run.mask, query, None if head == LAYER else head, ablation)
    return trained_prediction(config, query, deltas)


def _shares(values: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """Each allowed key's share of the measure's total over the allowed keys (0 where blocked)."""
    values = torch.where(allowed, values, torch.zeros_like(values))
    total = float(values.sum())
    return values / total if total > 0 else values


def key_frame(
    measures: KeyMeasures, head: int | None, ablation: str, labels: list[str], prediction: Prediction | None
) -> pd.DataFrame:
    """One row per key the query may attend to: columns ``key, weight, offer, norm, effect`` (their shares
    ``*_share``), ``rank_*`` (1 = largest) and, with a prediction, ``drop`` and ``flip``."""
    weights, norms, effects = measures.of(head, ablation)
    offer = measures.layer_value_norms if head is None else measures.value_norms[head]
    allowed = measures.allowed
    frame = pd.DataFrame(
        {
            "key": labels,
            "weight": weights.tolist(),
            "offer": offer.tolist(),
            "norm": norms.tolist(),
            "effect": effects.tolist(),
            **{
                f"{name}_share": _shares(v, allowed).tolist()
                for name, v in zip(MEASURES, (weights, norms, effects), strict=True)
            },
        }
    )
    if prediction is not None:
        frame["drop"] = prediction.largest_drop
        frame["flip"] = prediction.flips
    frame = frame[allowed.tolist()].reset_index(drop=True)
    for name in MEASURES:
        frame[f"rank_{name}"] = frame[name].rank(ascending=False, method="average")
    return frame


def head_frame(measures: KeyMeasures, labels: list[str]) -> pd.DataFrame:
    """One row per head (and the layer): Spearman's ρ of weight and norm over the allowed keys, the key with the
    most weight and the key that adds the most. Columns ``head, rho, top_weight, top_norm, top_weight_norm_rank``."""
    allowed = measures.allowed
    rows = []
    for head in [None, *range(measures.weights.size(0))]:
        weights, norms, _ = measures.of(head, "zero_value")
        weights, norms = weights[allowed], norms[allowed]
        shown = [label for label, keep in zip(labels, allowed.tolist(), strict=True) if keep]
        top_weight, top_norm = int(weights.argmax()), int(norms.argmax())
        norm_rank = int((norms > norms[top_weight]).sum()) + 1
        rows.append(
            {
                "head": LAYER if head is None else head,
                "rho": spearman(weights, norms),
                "top_weight": shown[top_weight],
                "top_norm": shown[top_norm],
                "top_weight_norm_rank": norm_rank,
            }
        )
    return pd.DataFrame(rows)


def measure_bars(frame: pd.DataFrame, names: dict[str, str], key_title: str, share_title: str) -> alt.Chart:
    """Grouped bars: for each key (in position order) each measure's share of its total, one colour per measure."""
    long = frame.melt(id_vars=["key"], value_vars=[f"{m}_share" for m in MEASURES], var_name="m", value_name="share")
    long["measure"] = [names[m.removesuffix("_share")] for m in long["m"]]
    order = [names[m] for m in MEASURES]
    color = alt.Color(
        "measure:N",
        title=None,
        sort=order,
        scale=alt.Scale(domain=order, range=[MEASURE_COLORS[m] for m in MEASURES]),
        legend=alt.Legend(orient="bottom", direction="horizontal", labelFontSize=FONT_SIZE - 1, labelLimit=320),
    )
    width = max(420, min(WIDTH_BUDGET_PX, 60 * len(frame)))
    return (
        alt.Chart(long)
        .mark_bar()
        .encode(
            x=alt.X(
                "key:N", sort=list(frame["key"]), title=key_title, axis=alt.Axis(labelAngle=-45, labelOverlap=False)
            ),
            xOffset=alt.XOffset("measure:N", sort=order),
            y=alt.Y("share:Q", title=share_title, axis=alt.Axis(format=".0%", titleAlign="left", titleX=0, titleY=-12)),
            color=color,
            tooltip=[
                alt.Tooltip("key:N", title=key_title),
                alt.Tooltip("measure:N", title=" "),
                alt.Tooltip("share:Q", title=share_title, format=".1%"),
            ],
        )
        .properties(width=width, height=280)
    )


def _measure_names(ablation: str) -> dict[str, str]:
    return {
        "weight": t("lab.attribution.measure.weight"),
        "norm": t("lab.attribution.measure.norm"),
        "effect": t(f"lab.attribution.measure.effect_{ablation}"),
    }


def _choose(config: AttentionConfig, run: AttentionRun, labels: list[str]) -> tuple[int, int, str]:
    """The query, the head (``LAYER`` for all) and the ablation, from widgets that survive a change of layer."""
    length, heads = len(run.tokens), run.num_heads
    if st.session_state.get("attribution_query") not in range(length):  # a classifier's answer is read at [CLS]
        st.session_state["attribution_query"] = 0 if answer_at_cls(config) else length - 1
    if st.session_state.get("attribution_head") not in range(-1, heads):
        st.session_state["attribution_head"] = LAYER
    left, middle, right = st.columns([2, 2, 3])
    query = left.selectbox(
        t("lab.attribution.query"), list(range(length)), key="attribution_query", format_func=lambda i: labels[i]
    )
    head = middle.selectbox(
        t("lab.attribution.head"),
        [LAYER, *range(heads)],
        key="attribution_head",
        format_func=lambda h: t("lab.attribution.all_heads") if h == LAYER else t("lab.common.head", n=h),
        help=t("lab.attribution.head_help"),
    )
    ablation = right.radio(
        t("lab.attribution.ablation"),
        ABLATIONS,
        key="attribution_ablation",
        horizontal=True,
        format_func=lambda name: t(f"lab.attribution.ablation.{name}"),
        help=t("lab.attribution.ablation_help"),
    )
    return int(query), int(head), str(ablation)


def _fmt_rho(value: float | None) -> str:
    return "—" if value is None else f"{value:+.2f}"


def _render_agreement(frame: pd.DataFrame, names: dict[str, str]) -> None:
    weight, norm, effect = (torch.tensor(frame[m].to_numpy(), device="cpu") for m in MEASURES)
    st.caption(t("lab.attribution.rho_caption", **{m: names[m] for m in MEASURES}))
    cols = st.columns(3)
    pairs = (("weight", "norm", weight, norm), ("weight", "effect", weight, effect), ("norm", "effect", norm, effect))
    for col, (a, b, x, y) in zip(cols, pairs, strict=True):
        col.metric(
            t("lab.attribution.rho", a=t(f"lab.attribution.short.{a}"), b=t(f"lab.attribution.short.{b}")),
            _fmt_rho(spearman(x, y)),
            help=t("lab.attribution.rho_help", tau=_fmt_rho(kendall_tau(x, y))),
        )
    found = disagreements(weight, norm)
    if not found:
        st.success(t("lab.attribution.same_order"))
        return
    lines = [
        t("lab.attribution.disagree_line", token=md_escape(frame["key"][i]), by_weight=a, by_norm=b)
        for i, a, b in found
    ]
    st.markdown(t("lab.attribution.disagree") + "\n" + "\n".join(f"- {line}" for line in lines))


def _render_table(frame: pd.DataFrame, names: dict[str, str], prediction: Prediction | None) -> None:
    table = pd.DataFrame(
        {
            t("lab.attribution.col.key"): frame["key"],
            names["weight"]: frame["weight"].map("{:.3f}".format),
            t("lab.attribution.col.offer"): frame["offer"].map("{:.3f}".format),
            names["norm"]: frame["norm"].map("{:.3f}".format),
            names["effect"]: frame["effect"].map("{:.3f}".format),
            t("lab.attribution.col.ranks"): [
                f"{a:g} · {b:g} · {c:g}" for a, b, c in zip(*(frame[f"rank_{m}"] for m in MEASURES), strict=True)
            ],
        }
    )
    if prediction is not None:
        drops = zip(frame["drop"], frame["flip"], strict=True)
        table[t("lab.attribution.col.drop")] = [
            f"{round(d, 3) + 0.0:+.3f}" + (" ⚑" if flip else "") for d, flip in drops
        ]
    st.dataframe(table, hide_index=True, height=table_height(len(table)))
    st.caption(t("lab.attribution.table_caption"))


def _render_heads(measures: KeyMeasures, labels: list[str]) -> None:
    frame = head_frame(measures, labels)
    table = pd.DataFrame(
        {
            t("lab.attribution.col.head"): [
                t("lab.attribution.all_heads") if h == LAYER else t("lab.common.head", n=h) for h in frame["head"]
            ],
            t("lab.attribution.col.rho"): [_fmt_rho(v) for v in frame["rho"]],
            t("lab.attribution.col.top_weight"): frame["top_weight"],
            t("lab.attribution.col.top_norm"): frame["top_norm"],
            t("lab.attribution.col.top_weight_norm_rank"): frame["top_weight_norm_rank"],
        }
    )
    st.dataframe(table, hide_index=True, height=table_height(len(table)))
    st.caption(t("lab.attribution.heads_caption") + " " + t("lab.common.heads_from_zero"))


def _render_prediction(config: AttentionConfig, run: AttentionRun, prediction: Prediction | None) -> None:
    if run.source_kind == RANDOM:
        st.info(t("lab.attribution.no_prediction_random"))
    elif run.source_kind == PRETRAINED:
        st.info(t("lab.attribution.no_prediction_checkpoint"))
    elif run.image is not None:
        st.info(t("lab.attribution.no_prediction_image"))
    elif prediction is None:
        at_cls = answer_at_cls(config)
        st.info(t("lab.attribution.no_prediction_cls" if at_cls else "lab.attribution.no_prediction_here"))
    else:

        def word(p: str) -> str:
            return t(f"training.class.{p}") if prediction.classes else md_escape(p)

        said = "; ".join(
            t("lab.attribution.predicts", output=t(f"training.output.{o}"), token=word(p), probability=q)
            for o, p, q in zip(prediction.readouts, prediction.predicted, prediction.probability, strict=True)
        )
        # a review's answer is read at [CLS], whichever query's row the keys are removed from
        st.markdown(t("lab.attribution.prediction_cls" if prediction.classes else "lab.attribution.prediction",
                      said=said, layer=run.layer))  # fmt: skip


def _render_verdict(frame: pd.DataFrame, names: dict[str, str]) -> None:
    st.subheader(t("lab.attribution.verdict_title"))
    top = frame.sort_values(["rank_weight", "key"]).iloc[0]
    st.markdown(
        t(
            "lab.attribution.verdict",
            token=md_escape(top["key"]),
            weight=top["weight_share"],
            norm_rank=top["rank_norm"],
            effect_rank=top["rank_effect"],
            count=len(frame),
            effect=names["effect"],
        )
    )


def render() -> None:
    """Draw the lab."""
    lab_header("attribution")
    session = session_run()
    if session is None:
        return
    config, run = session
    show_layer_caption(run)
    labels = token_labels(run.tokens)
    query, head, ablation = _choose(config, run, labels)
    measures = _measures(config, query)
    if int(measures.allowed.sum()) < 2:
        st.warning(t("lab.attribution.too_few_keys", token=md_escape(labels[query])))
    prediction = _prediction(config, query, head, ablation) if run.source_kind == TRAINED else None
    frame = key_frame(measures, None if head == LAYER else head, ablation, labels, prediction)
    names = _measure_names(ablation)

    st.subheader(t("lab.attribution.chart_title", token=md_escape(labels[query])))
    show_chart(measure_bars(frame, names, t("lab.common.key"), t("lab.attribution.share")))
    st.caption(t("lab.attribution.chart_caption_layer" if head == LAYER else "lab.attribution.chart_caption_head"))
    _render_agreement(frame, names)
    _render_prediction(config, run, prediction)
    _render_table(frame, names, prediction)

    st.subheader(t("lab.attribution.heads_title"))
    _render_heads(measures, labels)
    _render_verdict(frame, names)
