"""Generation with a KV cache: a causal checkpoint continues the learner's text, one query row at a time.

For the step the learner picks, the new row's query against the cached keys through step 2 (``q [1, h, 1, d_k] @
K_cacheᵀ [1, h_kv, d_k, t]``, scaled, softmax), the cache's shape and the entry the step appended, and the check of
its weights against the checkpoint's own for that step; what the cache saves against recomputing every step,
timed on this layer; where each layer's weight goes as the text grows (the first token as a sink).

A generation starts when the ``generate`` control or a link asks for one; after a change of the text (a live
control) the panel asks with a button. It runs in the background (:mod:`mha.generation_jobs`): while it runs, a
fragment that looks again every :data:`POLL_S` seconds shows its progress and a Stop button, and the page reruns
when it ends. The ``generate`` control is drawn outside the fragments (a change runs the page); what depends on
the text is a part (:class:`~components.panels.parts.ValueParts`), and the step view is a fragment of its own:
moving its slider redraws only it. A stopped generation is shown as far as it went: its text, steps, cost and sinks.
Every token is labelled by one rule (:func:`shown_token`): a blank token as ␣, a control character as its symbol.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components import cache, check_yourself, frames, vega
from components.generating import generation_service
from components.headings import heading
from components.i18n import t
from components.panels.parts import Results, ValueParts
from components.safe_text import markdown_rows, md_escape
from components.today_charts import sinks_chart, step_weights_chart
from components.units import format_bytes
from components.url_params import to_query_params
from components.url_state import changed_in_link, write_link
from mha.config import PRETRAINED, AttentionConfig, WeightSpec
from mha.experiments.decode_cost import StepTime, step_times
from mha.generation import GENERATE_MAX, SINK_THRESHOLD, Generation, sink_layers, sink_shares
from mha.generation_jobs import GenerationJob, GenerationKey, key_of
from mha.pipeline import AttentionRun
from mha.sources.checkpoint.check import CHECKPOINT_TOLERANCE
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

GENERATE_KEY = "generate"  # the control, also the link's name
STEP_KEY = "gen_step"  # the step slider
POLL_S = 0.5
_ASKED = "_gen_asked"  # the control or the link asked for a generation: the next full run starts it
_MINE = "_gen_job"  # the generation this session asked for last (its steps, if it was stopped)
_SHOWN = "_gen_shown"  # (key, generation) the page showed last: kept while the process drops old ones
_BUSY = "_gen_busy"  # the key the server was too busy to start
_COST_REPEATS = 3
_LONGEST = 512  # the longest context the cost table times (GPT-2 knows 1,024 positions; the table's point shows)


def new_tokens() -> int:
    """The session's ``generate`` value (0: none)."""
    value = st.session_state.get(GENERATE_KEY, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


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
        on_change=_asked,
    )
    write_link(to_query_params({GENERATE_KEY: count}))
    asked = st.session_state.pop(_ASKED, False)  # the control or the link asked for a generation in this run
    if not count:
        box.caption(t("gen.hint"))
        return
    key, service = key_of(run.config, int(count)), generation_service()
    if _shown(key) is None:
        job = service.job(key)
        if job is None and asked:
            job = _request(key, run.config)
        if job is not None and not job.finished.is_set():
            with box:
                _watch(job)
            return
    parts.add(box, _summary)
    parts.add_fragment(box, lambda results: _steps(results.config))
    check_yourself.render_generation(parts, box, lambda config: _shown(key_of(config, new_tokens())))


def _request(key: GenerationKey, config: AttentionConfig) -> GenerationJob | None:
    """Start (or join) ``key``'s generation for this session, stopping the one it asked for before; ``None`` when the
    server is busy (the part says so)."""
    service = generation_service()
    mine = st.session_state.get(_MINE)
    if mine is not None and mine.key != key and not mine.finished.is_set():
        service.stop(mine)
    job = service.request(key, config)
    st.session_state[_MINE] = job
    if job is None:
        st.session_state[_BUSY] = key
    return job


def _shown(key: GenerationKey) -> Generation | None:
    """The generation the page shows for ``key``: the shared finished one, or the steps of the one this session
    stopped; kept in the session too (the process keeps the latest few for every session)."""
    generation = generation_service().finished(key)
    mine = st.session_state.get(_MINE)
    if generation is None and mine is not None and mine.key == key and mine.result is not None:
        generation = mine.result if mine.result.steps else None
    if generation is not None:
        st.session_state[_SHOWN] = (key, generation)
        return generation
    kept = st.session_state.get(_SHOWN)
    return kept[1] if kept is not None and kept[0] == key else None


def link_asks_to_generate() -> None:
    """A link just opened (or edited) with ``generate``: generate without a click (call before the page writes the
    link)."""
    if changed_in_link((GENERATE_KEY,)):
        _asked()


def _asked() -> None:
    st.session_state[_ASKED] = True


def _stop(job: GenerationJob) -> None:
    generation_service().stop(job)


@st.fragment(run_every=POLL_S)
def _watch(job: GenerationJob) -> None:
    """The generation in progress, looked at again every POLL_S seconds; the whole page reruns when it ends."""
    if job.finished.is_set():
        st.rerun()
    if job.state == "queued":
        st.info(t("gen.queued", running=generation_service().max_running))
    else:
        total = job.key.new_tokens
        st.progress(min(1.0, job.done / total), text=t("gen.running", done=job.done, total=total))
    st.button(t("gen.stop"), key="gen_stop", on_click=_stop, args=(job,))


def _summary(results: Results) -> None:
    """The text and what the checkpoint wrote, the cache's cost against recomputing, and the sinks; or, for a
    generation not made (a live change of the text, a failure, a busy server), why, and a button that makes it."""
    config, count = results.config, new_tokens()
    key = key_of(config, count)
    generation = _shown(key)
    if generation is None:
        failure = generation_service().failure(key)
        if failure is not None:
            st.error(t("gen.failed", message=md_escape(failure, limit=200)))
        elif st.session_state.get(_BUSY) == key:
            st.warning(t("gen.busy", waiting=generation_service().max_waiting))
        else:
            st.info(t("gen.new_text"))
        if st.button(t("gen.start", count=count), key="gen_start", type="primary"):
            st.session_state.pop(_BUSY, None)
            _request(key, config)
            st.rerun(scope="app")
        return
    _text(generation)
    _cost(results.run, generation)
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


@cache.shared(max_entries=8)
def _step_times(spec: WeightSpec, layer: int, lengths: tuple[int, ...]) -> list[StepTime]:
    """One decoding step of the checkpoint's ``layer`` at each length, with the cache and recomputing: its float32
    copy on the CPU, timed there whatever device the generation ran on (timed once per layer and lengths, in this
    process)."""
    from components import runner

    source = runner.cached_source(spec)
    return step_times(source.layer_model(layer), lengths, _COST_REPEATS)  # type: ignore[attr-defined]


def _cost(run: AttentionRun, generation: Generation) -> None:
    st.markdown(f"**{t('gen.cost_title')}**")
    model = run.model
    per_token = generation.cache_bytes_per_token
    t_end = len(generation.prompt_tokens) + len(generation.new_tokens)
    numbers = per_token // 4
    st.markdown(
        t(
            "gen.cost",
            layers=run.num_layers,
            kv=model.num_kv_heads,
            d_k=model.d_k,
            numbers=f"{numbers:,}",
            bytes=format_bytes(per_token),
            total=format_bytes(per_token * t_end),
            t=t_end,
        )
    )
    lengths = tuple(sorted({t_end, min(4 * t_end, _LONGEST), min(16 * t_end, _LONGEST)}))
    timings = _step_times(run.config.weight_spec, run.config.layer, lengths)
    header = [t(f"gen.cost.{name}") for name in ("t", "cached", "recompute", "ratio", "bytes")]
    rows = [
        [f"{s.length:,}", f"{s.cached_ms:.2f}", f"{s.recompute_ms:.2f}", f"{s.ratio:.1f}×", format_bytes(s.cache_bytes)]
        for s in timings
    ]
    st.markdown(markdown_rows(header, rows))
    st.caption(t("gen.cost_note", repeats=_COST_REPEATS))


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
def _steps(config: AttentionConfig) -> None:
    """The step slider and the picked step's row against the cache (a fragment: the slider redraws only this)."""
    generation = _shown(key_of(config, new_tokens()))  # a finished generation, or the steps of a stopped one
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
    rope = t("gen.after_rope") if _rotates(config) else ""
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


def _rotates(config: AttentionConfig) -> bool:
    """Whether the checkpoint's layer turns q and k by position (RoPE)."""
    from components import runner

    return runner.cached_run(config).model.rope_base is not None


def _step_name(generation: Generation, tokens: tuple[str, ...], index: int) -> str:
    step = generation.steps[index]
    token = shown_token(step.token)
    if index == 0:
        return t("gen.step_prefill", length=len(generation.prompt_tokens), token=token)
    reads = shown_token(tokens[step.position])
    return t("gen.step_one", index=index, reads=reads, position=step.position, token=token)
