"""What the heads look at, for a run on an image: the patches on the image, one query's weights over the image for
every head and their mean, each head's mean attention distance per layer, and attention rollout with its caution.

Drawn only for a run whose tokens are an image's patches (``run.image``); the numbers come from
:mod:`mha.vision.analysis` and the pictures from :mod:`components.image_charts` (Vega-Lite: the image under
orange cells, a tooltip per patch). A picture is a few hundred bytes of PNG; the weights are a row per patch.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components import image_charts, vega
from components.headings import heading
from components.i18n import t
from components.image_charts import ImageChartText, OverlayPanel
from components.panels.parts import Results, ValueParts
from components.panels.step2 import head_label
from components.safe_text import md_escape
from mha.config import TRAINED
from mha.pipeline import AttentionRun
from mha.vision.analysis import ImageAnalysis
from mha.vision.samples import sample_image

__all__ = ["QUERY_KEY", "distance_frame", "render"]

QUERY_KEY = "patch_query"  # the query picker: an index into the run's tokens ([CLS] first)
_GRID_PX = 260  # the image with its grid
_ORIGINAL_PX = 160  # the image before the model's resizing (a photo, an upload)
_OVERLAY_PX = 150  # each picture of weights over the image
_COLUMNS = 5  # pictures per row


def render(parts: ValueParts) -> None:
    """The panel; its pictures, charts and numbers are ``parts``."""
    box = st.container(border=True)
    heading(box, t("patches.title"))
    box.markdown(t("patches.what"))
    parts.add(box, _image)
    box.markdown(f"**{t('patches.query_title')}**")
    parts.add_fragment(box, lambda results: _query(results.run, results.image_analysis))
    box.markdown(f"**{t('patches.distance_title')}**")
    box.markdown(t("patches.distance_what"))
    parts.add(box, _distance)
    box.markdown(f"**{t('patches.rollout_title')}**")
    box.markdown(t("patches.rollout_what"))
    parts.add(box, _rollout)
    box.caption(t("patches.rollout_caution"))


def _text(run: AttentionRun) -> ImageChartText:
    cls = "/".join(run.tokens[: run.image.image.prefix])  # the model's own [CLS] (and DeiT's [DIST])
    return ImageChartText(
        patch=t("patches.chart.patch"),
        weight=t("chart.weight"),
        layer=t("chart.layer"),
        head=t("chart.head"),
        distance=t("patches.chart.distance"),
        uniform=t("patches.chart.uniform"),
        cls_share=t("patches.chart.cls_share", cls=cls),
    )


def _uri(run: AttentionRun, side_px: int) -> str:
    """The image the model read, as a picture about ``side_px`` wide (the panel is drawn for runs on an image)."""
    return image_charts.image_uri(run.image.image.pixels, side_px)


def _image(results: Results) -> None:
    """The image as the model read it, its grid of patches labelled, and the sizes that make the tokens."""
    run = results.run
    patched = run.image.image
    channels, height, width = patched.pixels.shape
    rows, columns = patched.grid
    left, right = st.columns([1, 2])
    labels = run.tokens[patched.prefix :]
    vega.draw(left, image_charts.grid_chart(_uri(run, _GRID_PX), patched.grid, labels, _GRID_PX))
    numbers = {
        "height": height,
        "width": width,
        "channels": channels,
        "patch": patched.patch,
        "rows": rows,
        "columns": columns,
        "patches": rows * columns,
        "tokens": len(run.tokens),
        "pixels": channels * patched.patch * patched.patch,
    }
    right.markdown(t("patches.sizes", **numbers))
    original = results.upload.pixels if results.upload is not None else sample_image(results.config.image)
    if tuple(original.shape) != tuple(patched.pixels.shape):  # resized (a photo, an upload): show what it was
        right.caption(t("patches.original"))
        right.image(image_charts.image_array(original, _ORIGINAL_PX), width=_ORIGINAL_PX)
    if run.source_kind == TRAINED:
        right.caption(t("patches.digit_look"))


@st.fragment
def _query(run: AttentionRun, analysis: ImageAnalysis) -> None:
    """A query token picked here (a fragment: a pick redraws only this), its weights over the image for the mean of
    the heads and for each head, in the layer the four steps show."""
    patched = run.image.image
    prefix = patched.prefix
    length = len(run.tokens)
    if st.session_state.get(QUERY_KEY) not in range(length):
        st.session_state[QUERY_KEY] = 0
    query = st.selectbox(
        t("patches.query"),
        range(length),
        key=QUERY_KEY,
        format_func=lambda i: run.tokens[i],
        help=t("patches.query_help"),
    )
    weights = run.trace.attend.weights[0, :, query].cpu().double()  # (H, L): each head's row of the query
    mean = analysis.shown_mean[query]  # (L,): the heads' mean row
    on_cls = "patches.on_cls"
    panels = [
        OverlayPanel(t("patches.mean"), t(on_cls, weight=f"{float(mean[:prefix].sum()):.2f}"), mean[prefix:].numpy())
    ]
    for head in range(run.num_heads):
        row = weights[head]
        title = t("patches.head", head=head, label=head_label(run, head))
        panels.append(OverlayPanel(title, t(on_cls, weight=f"{float(row[:prefix].sum()):.2f}"), row[prefix:].numpy()))
    picked = None if query < prefix else query - prefix
    labels = run.tokens[prefix:]
    spec = image_charts.overlay_chart(
        _uri(run, _OVERLAY_PX), patched.grid, labels, panels, picked, _text(run), _OVERLAY_PX, _COLUMNS
    )
    vega.draw(st.container(), spec)
    numbers = {
        "query": md_escape(run.tokens[query]),
        "layer": run.layer,
        "top": f"{float(weights[:, prefix:].max()):.2f}",
    }
    st.caption(t("patches.query_caption", **numbers))
    if run.scored_rows is not None and not bool(run.scored_rows[query]):
        st.caption(t("patches.query_unscored", query=md_escape(run.tokens[query]), layer=run.layer))


def distance_frame(analysis: ImageAnalysis) -> pd.DataFrame:
    """Each head's mean attention distance (pixels) and weight on [CLS] per layer, as a long frame (``layer, head,
    pixels, cls_share``), over the layers whose patch rows all carry a loss."""
    records = []
    for layer, distance in analysis.distances:
        for head, (pixels, share) in enumerate(zip(distance.pixels.tolist(), distance.cls_share.tolist(), strict=True)):
            records.append({"layer": layer, "head": head, "pixels": pixels, "cls_share": share})
    frame = pd.DataFrame(records, columns=["layer", "head", "pixels", "cls_share"])
    return frame.astype({"layer": "int16", "head": "int16", "pixels": "float32", "cls_share": "float32"})


def _distance(results: Results) -> None:
    """The heads' distances per layer against uniform attention's, and the nearest and farthest head per layer."""
    run, analysis = results.run, results.image_analysis
    patched = run.image.image
    frame = distance_frame(analysis)
    if len(frame):
        vega.draw(st.container(), image_charts.distance_chart(frame, analysis.uniform, _text(run)))
        lines = []
        for layer, heads in frame.groupby("layer"):
            numbers = {
                "layer": int(layer),
                "low": f"{float(heads['pixels'].min()):.2f}",
                "high": f"{float(heads['pixels'].max()):.2f}",
                "near": int(heads.loc[heads["pixels"].idxmin(), "head"]),
                "far": int(heads.loc[heads["pixels"].idxmax(), "head"]),
            }
            lines.append(t("patches.distance_layer", **numbers))
        st.markdown("  \n".join(lines))
    cls = "/".join(f"`{token}`" for token in run.tokens[: patched.prefix])  # the model's own [CLS] (and [DIST])
    st.caption(t("patches.distance_uniform", uniform=f"{analysis.uniform:.2f}", patch=patched.patch, cls=cls))
    if analysis.left_out:
        st.caption(t("patches.distance_left_out", layers=", ".join(map(str, analysis.left_out))))


def _rollout(results: Results) -> None:
    """[CLS]'s row of the last layer (mean of the heads) beside attention rollout's, over the image."""
    run, analysis = results.run, results.image_analysis
    prefix = run.image.image.prefix
    last, rollout, count = analysis.last_mean, analysis.rollout, analysis.layers  # (L, L), (L, L)
    panels = [
        OverlayPanel(
            t("patches.rollout_last", layer=count - 1),
            t("patches.on_cls", weight=f"{float(last[0, :prefix].sum()):.2f}"),
            last[0, prefix:].numpy(),
        ),
        OverlayPanel(
            t("patches.rollout_all", last=count - 1),
            t("patches.on_cls", weight=f"{float(rollout[0, :prefix].sum()):.2f}"),
            rollout[0, prefix:].numpy(),
        ),
    ]
    labels = run.tokens[prefix:]
    spec = image_charts.overlay_chart(
        _uri(run, _OVERLAY_PX), run.image.image.grid, labels, panels, None, _text(run), _OVERLAY_PX, _COLUMNS
    )
    vega.draw(st.container(), spec)
    if count == 1:
        st.caption(t("patches.rollout_one_layer"))
    else:
        kept, floor = f"{analysis.cls_self_share:.3g}", f"{analysis.residual_floor:.3g}"
        st.caption(t("patches.rollout_numbers", layers=count, kept=kept, floor=floor))
