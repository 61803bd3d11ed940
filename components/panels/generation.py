"""Generation with a KV cache: a causal checkpoint continues the learner's text, one query row at a time.

For the step the learner picks, the new row's query against the cached keys through step 2 (``q [1, h, 1, d_k] @
K_cacheᵀ [1, h_kv, d_k, t]``, scaled, softmax), the cache's shape and the entry the step appended, and the check of
its weights against the checkpoint's own for that step; what the cache saves against recomputing every step,
timed on this layer; where each layer's weight goes as the text grows (the first token as a sink).

A generation starts when the ``generate`` control or a link asks for one; after a change of the text (a live
control) the panel asks with a button. It runs in the background (:mod:`components.generating`, the panel's
controller: it starts, joins and stops the jobs and keeps the session's part): while it runs, a fragment that looks
again every :data:`POLL_S` seconds shows its progress and a Stop button, and the page reruns when it ends. The
``generate`` control is drawn outside the fragments (a change runs the page); what depends on the text is a part
(:class:`~components.panels.parts.ValueParts`), and the step view is a fragment of its own: moving its slider redraws
only it. A stopped generation is shown as far as it went: its text, steps, cost and sinks. Every token is labelled by
one rule (:func:`shown_token`): a blank token as ␣, a control character as its symbol.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components import check_yourself, frames, generating, vega
from components.generating import GENERATE_KEY, link_asks_to_generate, new_tokens
from components.headings import heading
from components.i18n import t
from components.panels.parts import Results, ValueParts
from components.safe_text import markdown_rows, md_escape
from components.today_charts import sinks_chart, step_weights_chart
from components.units import format_bytes
from components.url_params import to_query_params
from components.url_state import write_link
from mha.config import PRETRAINED, AttentionConfig
from mha.pipeline import AttentionRun
from mha.sources.checkpoint.check import CHECKPOINT_TOLERANCE
from mha.sources.checkpoint.generation import GENERATE_MAX, SINK_THRESHOLD, Generation, sink_layers, sink_shares
from mha.sources.checkpoint.generation_service import GenerationJob
from mha.tokens import shown_token

__all__ = [
    "GENERATE_KEY",
    "POLL_S",
    "STEP_KEY",
    "cannot_generate",
    "link_asks_to_generate",
    "render",
    "shown_token",
]

STEP_KEY = "gen_step"  # the step slider
POLL_S = 0.5


def cannot_generate(config: AttentionConfig, run: AttentionRun | None, generates: bool) -> str | None:
    """Why ``generate`` > 0 does nothing on this page (a translated line), or ``None`` where it can or is 0."""
    count = new_tokens()
    if count == 0 or (config.weights == PRETRAINED and generates):
        return None
    why = "encoder" if config.weights == PRETRAINED else config.weights
    return t("gen.cannot", count=count, why=t(f"gen.cannot.{why}"))


def render(parts: ValueParts, run: AttentionRun, generates: bool) -> None:
    """The generation panel of a checkpoint that generates (``generates``); nothing on any other page."""
    if run.source_kind != PRETRAINED or not generates:
        return
    box = st.container(border=True)
    heading(box, t("gen.title"))
    box.markdown(t("gen.what"))
    count = box.number_input(
        t("gen.control"),
        min_value=0,
        max_value=GENERATE_MAX,
        step=1,
        key=GENERATE_KEY,
        help=t("gen.control_help", high=GENERATE_MAX),
        on_change=generating.ask,
    )
    write_link(to_query_params({GENERATE_KEY: count}))
    job = generating.running(run.config, int(count))
    if not count:
        box.caption(t("gen.hint"))
        return
    if job is not None:
        with box:
            _watch(job)
        return
    parts.add(box, _summary)
    parts.add_fragment(box, _steps)
    check_yourself.render_generation(parts, box, lambda config: generating.shown(config, new_tokens()))


@st.fragment(run_every=POLL_S)
def _watch(job: GenerationJob) -> None:
    """The generation in progress, looked at again every POLL_S seconds; the whole page reruns when it ends."""
    if job.finished.is_set():
        st.rerun()
    if job.state == "queued":
        st.info(t("gen.queued", running=generating.generation_service().max_running))
    else:
        total = job.key.new_tokens
        st.progress(min(1.0, job.done / total), text=t("gen.running", done=job.done, total=total))
    st.button(t("gen.stop"), key="gen_stop", on_click=generating.stop, args=(job,))


def _summary(results: Results) -> None:
    """The text and what the checkpoint wrote, the cache's cost against recomputing, and the sinks; or, for a
    generation not made (a live change of the text, a failure, a busy server), why, and a button that makes it."""
    config, count = results.config, new_tokens()
    generation = generating.shown(config, count)
    if generation is None:
        failure = generating.failure(config, count)
        if failure is not None:
            st.error(t("gen.failed", message=md_escape(failure, limit=200)))
        elif generating.busy(config, count):
            st.warning(t("gen.busy", waiting=generating.generation_service().max_waiting))
        else:
            st.info(t("gen.new_text"))
        if st.button(t("gen.start", count=count), key="gen_start", type="primary"):
            generating.start(config, count)
            st.rerun(scope="app")
        return
    _text(generation)
    _cost(config, generation)
    _sinks(generation)


def _text(generation: Generation) -> None:
    prompt = " · ".join(md_escape(shown_token(token)) for token in generation.prompt_tokens)
    written = " · ".join(f"**{md_escape(shown_token(token))}**" for token in generation.new_tokens)
    st.markdown(f"{t('gen.text')} {prompt} · {written}")
    failed = generation.out_of_memory
    if failed is not None:
        size = {name: md_escape(str(value), limit=200) for name, value in failed.size.items()}
        st.warning(t("gen.out_of_memory", device=failed.device, **size))
    st.caption(t("gen.ran_on", device=generation.device))
    if generation.stopped:
        count = len(generation.steps)
        st.warning(t("gen.stopped_after", count=count, requested=generation.requested, last=count - 1))
    if generation.ended_at_eos:
        st.info(t("gen.eos", count=len(generation.new_tokens)))


def _cost(config: AttentionConfig, generation: Generation) -> None:
    st.markdown(f"**{t('gen.cost_title')}**")
    size = generation.cache_size
    st.markdown(
        t(
            "gen.cost",
            layers=size.layers,
            kv=size.kv_heads,
            d_k=size.d_k,
            numbers=f"{size.numbers_per_token:,}",
            itemsize=size.dtype.itemsize,
            dtype=str(size.dtype).removeprefix("torch."),
            bytes=format_bytes(size.bytes_per_token),
            total=format_bytes(size.bytes_for(generation.length)),
            t=generation.length,
        )
    )
    header = [t(f"gen.cost.{name}") for name in ("t", "cached", "recompute", "ratio", "bytes")]
    rows = [
        [f"{s.length:,}", f"{s.cached_ms:.2f}", f"{s.recompute_ms:.2f}", f"{s.ratio:.1f}×", format_bytes(s.cache_bytes)]
        for s in generating.cost_times(config, generation)
    ]
    st.markdown(markdown_rows(header, rows))
    st.caption(t("gen.cost_note", repeats=generating.COST_REPEATS))


def _sinks(generation: Generation) -> None:
    st.markdown(f"**{t('gen.sinks_title')}**")
    shares, uniform = sink_shares(generation)
    st.markdown(t("gen.sinks_what", uniform=f"{uniform:.3f}", times=f"{SINK_THRESHOLD:g}"))
    labels = {name: t(f"gen.chart.{name}") for name in ("layer", "share")}
    vega.draw(st.container(), sinks_chart([float(share) for share in shares], uniform, labels))
    sinks = sink_layers(generation)
    times = f"{SINK_THRESHOLD:g}"
    if sinks:
        st.markdown(t("gen.sinks", layers=", ".join(map(str, sinks)), times=times))
    elif SINK_THRESHOLD * uniform >= 1:  # a share is a mean of weights, at most 1: none can pass this
        st.caption(
            t("gen.no_sinks_short", times=times, uniform=f"{uniform:.3f}", limit=f"{SINK_THRESHOLD * uniform:.3f}")
        )
    else:
        st.caption(t("gen.no_sinks", times=times))


@st.fragment
def _steps(results: Results) -> None:
    """The step slider and the picked step's row against the cache (a fragment: the slider redraws only this)."""
    generation = generating.shown(results.config, new_tokens())  # a finished generation, or a stopped one's steps
    if generation is None or not generation.steps:
        st.empty()
        return
    steps = generation.steps
    tokens = (*generation.prompt_tokens, *generation.new_tokens)
    if st.session_state.get(STEP_KEY, 0) >= len(steps):
        st.session_state[STEP_KEY] = len(steps) - 1
    index = st.select_slider(
        t("gen.step"),
        options=range(len(steps)),
        key=STEP_KEY,
        format_func=lambda i: _step_name(generation, tokens, i),
    )
    step = steps[index]
    q_shape, cache_shape = step.q_shape, step.cache_shape
    rows, length = q_shape[2], cache_shape[2]
    appended = ", ".join(str(p) for p in range(length - rows, length))
    rope = t("gen.after_rope") if results.run.model.rope_base is not None else ""
    kv, heads = cache_shape[1], q_shape[1]
    shared = t("gen.kv_repeated", kv=kv, group=heads // kv) if kv < heads else t("gen.kv_own")
    st.markdown(
        t(
            "gen.shapes",
            q=list(q_shape),
            rope=rope,
            kv=kv,
            shared=shared,
            d_k=cache_shape[3],
            t=length,
            h=heads,
            rows=rows,
            cache=list(cache_shape),
            appended=appended,
        )
    )
    weights = step.weights.numpy()  # (H, t)
    labels = frames.token_labels([shown_token(token) for token in tokens[:length]])
    texts = {name: t(f"gen.chart.{name}") for name in ("head", "key", "weight")}
    frame = pd.DataFrame(
        [(h, k, float(weights[h, k])) for h in range(weights.shape[0]) for k in range(length)],
        columns=["head", "key", "weight"],
    )
    st.caption(t("gen.chart", t=length, n=rows))
    vega.draw(st.container(), step_weights_chart(frame, labels, length - rows, texts))
    verdict = st.success if step.max_abs_weights <= CHECKPOINT_TOLERANCE else st.error
    name = "gen.check_pass" if step.max_abs_weights <= CHECKPOINT_TOLERANCE else "gen.check_fail"
    verdict(t(name, layer=generation.layer, diff=f"{step.max_abs_weights:.2e}", tol=f"{CHECKPOINT_TOLERANCE:.0e}"))


def _step_name(generation: Generation, tokens: tuple[str, ...], index: int) -> str:
    step = generation.steps[index]
    token = shown_token(step.token)
    if index == 0:
        return t("gen.step_prefill", length=len(generation.prompt_tokens), token=token)
    reads = shown_token(tokens[step.position])
    return t("gen.step_one", index=index, reads=reads, position=step.position, token=token)
