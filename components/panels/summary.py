"""The summary: parameters per matrix and per step, the total 4d²+4d (2d² + 2d·h_kv·d_k with grouped K/V heads), that
it does not depend on h, and what fewer K/V heads save: parameters and the KV cache per token."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import streamlit as st

from components.headings import heading
from components.i18n import current_language, t
from components.nav import render_lab_links
from components.panels.frame import count
from components.panels.parts import ValueParts
from components.safe_text import markdown_rows
from components.units import format_bytes
from mha.counting import kv_cache_numbers, layer_parameters, projection_parameters, step_costs
from mha.pipeline import AttentionRun

__all__ = ["SUMMARY_LABS", "render", "render_counts"]

HEAD_COUNTS = (1, 2, 4, 8, 16, 32, 64)
SUMMARY_LABS = ("heads", "complexity", "onnx")


def render(parts: ValueParts) -> None:
    """The summary's panel; its counts follow the run (``parts``)."""
    box = st.container(border=True)
    heading(box, t("summary.title"))
    parts.add(box, lambda results: _counts(results.run.d_model, results.run, results.counted))
    render_lab_links(box, SUMMARY_LABS)


def render_counts(d_model: int) -> None:
    """The summary for ``d_model`` alone, drawn now: where nothing can run, the counts still can be taught (a note
    says no layer ran, so the counts are those of the layer with one K/V head per query head, not the one asked)."""
    box = st.container(border=True)
    heading(box, t("summary.title"))
    box.caption(t("summary.nothing_ran", d=d_model))
    with box:
        _counts(d_model)
    render_lab_links(box, SUMMARY_LABS)


@dataclass(frozen=True)
class _Layer:
    """What the counts depend on: the sizes, K and V's heads, whether there are biases, the layers a cache spans."""

    d_model: int
    num_heads: int | None = None
    length: int | None = None
    num_kv_heads: int | None = None
    bias: bool = True
    layers: int = 1


def _layer_of(d_model: int, run: AttentionRun | None) -> _Layer:
    if run is None:
        return _Layer(d_model)
    model = run.model
    bias = model.W_q.bias is not None
    return _Layer(d_model, run.num_heads, len(run.tokens), model.num_kv_heads, bias, run.num_layers)


def _counts(d_model: int, run: AttentionRun | None = None, counted: int | None = None) -> None:
    """Parameters per matrix and the total, per step (with a run), per head count, and per number of K/V heads
    with the KV cache they make.

    Args:
        d_model: the width D (enough for every count here).
        run: the page's run, for the per-step FLOPs, its K/V heads and biases.
        counted: parameters actually held by the model, shown next to the formula when given.
    """
    layer = _layer_of(d_model, run)
    per_matrix, per_step, by_heads, by_kv_heads = _tables(layer, current_language())
    # As few elements as will do: a part's elements are sent again with every live change.
    left, right = st.columns(2)
    if counted is not None:
        total = layer_parameters(d_model, _kv_width(layer, layer.num_kv_heads), layer.bias)
        per_matrix += "\n\n" + t("summary.counted", counted=count(counted), ok="✓" if counted == total else "✗")
    if by_kv_heads:
        per_matrix += f"\n\n{by_kv_heads}\n\n{t('summary.kv_note', layers=layer.layers)}"
    left.markdown(per_matrix)
    right.markdown("\n\n".join([*([per_step] if per_step else []), by_heads, t("summary.by_heads_note", d=d_model)]))


def _kv_width(layer: _Layer, kv_heads: int | None) -> int:
    """h_kv·d_k, the width of K and V (d_model when every query head has its own)."""
    if layer.num_heads is None or kv_heads is None:
        return layer.d_model
    return kv_heads * (layer.d_model // layer.num_heads)


def _kind(kv_heads: int, num_heads: int) -> str:
    return "MHA" if kv_heads == num_heads else ("MQA" if kv_heads == 1 else "GQA")


@functools.lru_cache(maxsize=64)
def _tables(layer: _Layer, lang: str) -> tuple[str, str, str, str]:
    """The tables as Markdown, each under its title: per matrix (and the total), per step (with a run's heads and
    length; else ``""``), per head count, per number of K/V heads (with a run; else ``""``). The same for every
    seed: computed once per sizes."""
    d = layer.d_model
    width = _kv_width(layer, layer.num_kv_heads)
    rows = []
    for name, out in (("W_q", d), ("W_k", width), ("W_v", width), ("W_o", d)):
        rows.append(
            [name, count(d * out), count(out if layer.bias else 0), count(projection_parameters(d, layer.bias, out))]
        )
    total = layer_parameters(d, width, layer.bias)
    weights, biases = 2 * d * d + 2 * d * width, (2 * d + 2 * width) if layer.bias else 0
    rows.append([t("summary.total_row", lang=lang), count(weights), count(biases), count(total)])
    header = [t(f"summary.{name}", lang=lang) for name in ("matrix", "weights", "biases", "params")]
    per_matrix = markdown_rows(header, rows)
    if width == d and layer.bias:
        total_line = t("summary.total", lang=lang, d=d, total=count(total))
    else:
        kv_heads, d_k = width // _d_k(layer), _d_k(layer)
        formula = "summary.total_gqa" if layer.bias else "summary.total_gqa_nobias"
        total_line = t(formula, lang=lang, d=d, kv=kv_heads, d_k=d_k, biases=count(biases), total=count(total))
    per_step = ""
    if layer.num_heads is not None and layer.length is not None:
        costs = step_costs(d, layer.num_heads, layer.length, bias=layer.bias, num_kv_heads=layer.num_kv_heads)
        header = [t(f"summary.{name}", lang=lang) for name in ("step", "params", "flops")]
        rows = [[t(f"step{cost.step}.title", lang=lang), count(cost.params), count(cost.flops)] for cost in costs]
        per_step = f"**{t('summary.per_step', lang=lang)}**\n\n{markdown_rows(header, rows)}"
    chosen = {layer.num_heads} if layer.num_heads is not None else set()  # e.g. 12 at 768: always in the table
    heads = sorted({h for h in HEAD_COUNTS if d % h == 0} | chosen)
    mha_total = layer_parameters(d, bias=layer.bias)
    by_heads = markdown_rows(
        ["h", "d_k", t("summary.params", lang=lang)], ([h, d // h, count(mha_total)] for h in heads)
    )
    return (
        f"**{t('summary.per_matrix', lang=lang)}**\n\n{per_matrix}\n\n{total_line}",
        per_step,
        f"**{t('summary.by_heads', lang=lang)}**\n\n{by_heads}",
        _by_kv_heads(layer, lang),
    )


def _d_k(layer: _Layer) -> int:
    return layer.d_model // (layer.num_heads or 1)


def _by_kv_heads(layer: _Layer, lang: str) -> str:
    """Each number of K/V heads that divides h: its kind, W_k + W_v, the layer's total and the KV cache per token
    (numbers, and bytes in float32 and bfloat16), as two tables (parameters, cache); the page's own rows in bold.
    ``""`` without a run."""
    if layer.num_heads is None:
        return ""
    h, d_k = layer.num_heads, _d_k(layer)
    parameters, cache = [], []  # two narrow tables, not one wide one: each fits half a 1280 px window's content
    for kv_heads in sorted((g for g in range(1, h + 1) if h % g == 0), reverse=True):
        width = kv_heads * d_k
        numbers = kv_cache_numbers(layer.layers, kv_heads, d_k)
        name = f"{kv_heads} ({_kind(kv_heads, h)})"
        weights = count(2 * projection_parameters(layer.d_model, layer.bias, width))
        rows = (
            [name, weights, count(layer_parameters(layer.d_model, width, layer.bias))],
            [name, count(numbers), format_bytes(4 * numbers), format_bytes(2 * numbers)],
        )
        for table, row in zip((parameters, cache), rows, strict=True):
            table.append([f"**{cell}**" for cell in row] if kv_heads == layer.num_kv_heads else row)
    header = [t(f"summary.kv.{name}", lang=lang) for name in ("heads", "wkv", "total")]
    cache_header = [t(f"summary.kv.{name}", lang=lang) for name in ("heads", "numbers", "fp32", "bf16")]
    tables = f"{markdown_rows(header, parameters)}\n\n{markdown_rows(cache_header, cache)}"
    return f"**{t('summary.kv_title', lang=lang)}**\n\n{tables}"
