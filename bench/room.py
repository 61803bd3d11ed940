"""A workshop room on one server: N learners on ``playground.py``, each a simulated browser tab.

Every learner is a :class:`bench._browser_session.BrowserSession`: it speaks Streamlit's own
websocket protocol (protobuf ``BackMsg`` / ``ForwardMsg`` over ``/_stcore/stream``, widget ids
learned from the page's delta messages), not AppTest. The learners arrive over the first
:data:`RAMP_S` seconds, each opening the page from its workshop link (``index.html`` and the
assets it names, then the first run), and then change one control after another, thinking
:data:`THINK_S` seconds (uniform) before each change, until the room's time is up.

A change is followed as the browser follows it: through every run the server makes for it (a run setting: one run
of the values' fragment; a size, mask or text: a short run that ends ``FINISHED_EARLY_FOR_RERUN`` for the
callback's ``st.rerun`` of the two live fragments, then their run; where a callback runs the page, as a
checkpoint's new sentence does, a short run, then the page's) to the ``script_finished`` that ends it
(:mod:`bench._browser_session`). Then the learner checks that the change shows: the link the app wrote holds the
new value, and the values the change's last run drew follow it (the head picker's heads and head, step 1's
shapes ``Q [1, h, L, d_k]``).

A change that starts a generation goes on, as the browser's timer does, through the progress fragment's reruns
(every half second) to the page's run that shows the generated text (:meth:`BrowserSession.follow_timers`).

Measured per mix and room size: the seconds from a change (the ``rerun_script`` BackMsg sent)
to the ``script_finished`` that ends it (p50, p95, max; per group of learners where a mix has groups, as the
typers and the generators), the seconds to open the page, errors (exceptions, ``st.error``, a change that did
not end, a change the link or the values do not show, a generation asked for and not shown, a run the learner did
not ask for, a page that failed to open), websocket reconnects, and the server's CPU (busy
cores, averaged over the room's time) and resident memory (peak), read with psutil; the machine's
1-minute load average just before the room (the warm-up's included). Each room gets a fresh server,
opened once by a warm-up tab first ("open the app 10 minutes early", docs/DEPLOY.md), in the
environment the container sets (:data:`SERVER_ENV`).

The server, the learners and this process share the machine's cores: the learners' own CPU
is reported in the notes.

Mixes (:data:`MIXES`; one line each): everyone on the same link walking the same exercise
(the engine's caches hit), and everyone on their own seed and sentence (nothing is shared).
Room sizes: 10, 30 and 60 always, then larger rooms until one breaks (p95 over
:data:`TARGET_P95_S` or any error). Two setups: one server, and two replicas behind HAProxy on
the same cores (``deploy/run-local-cluster 2 PORT``; from 30 learners up).

The checkpoint mixes (:data:`CHECKPOINT_MIXES`, one server, :data:`CHECKPOINT_LEARNERS` learners) walk a
checkpoint's page; the bench builds the checkpoint their link names with random weights and lists it on the
server (:data:`CHECKPOINTS`): one of GPT-2 small's size (:func:`build_checkpoint`: 768 wide, 12 layers,
12 heads, GPT-2's vocabulary) or of SmolLM2-135M's (:func:`build_smollm2`: 576 wide, 30 layers, 9 query and
3 K/V heads, RoPE, a 49,152-token vocabulary). ``"checkpoint page"``: a layer, a head, a sentence of one's own, in
turn; ``"checkpoint, guide's sentence"``: the link's sentence, other layers and heads, as the workshop's second
session walks it (docs/WORKSHOP.md); ``"checkpoint, own sentences"`` and ``"SmolLM2, own sentences"``: every
change a new sentence of the learner's own, one per ~10 s (:data:`SENTENCE_THINK_S`); ``"checkpoint, 5 of 30
generating"``: as the first of those, but one learner in six (5 of 30) generates 16 tokens after each new
sentence (the Generate button, then the generation followed to its end); the typers' and the generators' p95
apart.

``python -m bench.room --learners 30,60 [--replicas 2] [--mix NAME]`` runs chosen rooms (a mix's own think time
unless ``--think`` says otherwise);
``--url http://127.0.0.1:8501`` runs them against a server (or a proxy) that is already up.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode

from bench._browser_session import BrowserSession, PageError, RunResult
from bench.table import Table, format_table
from components.locale.generation import MESSAGES as GENERATION_WORDS

TITLE = "Room: N learners on one server, Streamlit's websocket protocol (change -> the script_finished that ends it)"

REQUIRED_SIZES = (10, 30, 60)
LARGER_SIZES = (90, 120, 160, 200, 260, 330, 400)
QUICK_SIZES = (3,)
RAMP_S, STEADY_S = 15.0, 45.0
QUICK_RAMP_S, QUICK_STEADY_S = 1.0, 6.0
THINK_S = (2.0, 8.0)  # seconds a learner reads before the next change (uniform; mean 5 s)
QUICK_THINK_S = (1.0, 3.0)  # the quick room's: several changes per learner in its few seconds
SENTENCE_THINK_S = (8.0, 12.0)  # a new sentence of one's own about every 10 s (the sentence mixes)
RUN_TIMEOUT_S = 30.0
TARGET_P95_S = 1.0
# The server runs as the container does (Dockerfile): one PyTorch thread per operation.
SERVER_ENV = {"ATTN_PLAYGROUND_THREADS": "1"}
SEED = 12  # the room's random arrivals and think times

Step = tuple[str, object]  # (widget key, new value)

# A workshop exercise that ends where it started, so walking it again meets the same configurations.
EXERCISE: tuple[Step, ...] = (
    ("mask_type", "causal"),
    ("head_picker", {"head": 3}),
    ("num_heads", 4),
    ("mask_type", "window"),
    ("d_model", 256),
    ("seed", 1),
    ("num_heads", 8),
    ("mask_type", "none"),
    ("d_model", 512),
    ("seed", 0),
    ("head_picker", {"head": 0}),
)
WORDS = (
    *("the", "cat", "dog", "bird", "sat", "ran", "saw", "on", "under", "near", "a", "mat", "tree", "river"),
    *("because", "it", "was", "tired", "happy", "quick", "slow", "small", "big", "red", "old", "new", "bank"),
)


def same_link(learner: int) -> dict[str, str]:
    """Everyone opens the teacher's link: the default page, in English."""
    return {"lang": "en"}


def exercise_step(learner: int, step: int) -> Step:
    """Everyone walks the same exercise, in the same order (the configurations repeat: cache hits)."""
    return EXERCISE[step % len(EXERCISE)]


def own_sentence(learner: int, variant: int) -> str:
    """Learner ``learner``'s own sentence number ``variant``: 8-14 words, different for every learner."""
    rng = random.Random(learner * 7919 + variant)
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 14))) + f" l{learner}v{variant}"


def own_link(learner: int) -> dict[str, str]:
    """Each learner's own link: their own seed and sentence."""
    return {"lang": "en", "seed": str(10_000 + learner), "tokens": own_sentence(learner, 0)}


def own_step(learner: int, step: int) -> Step:
    """New seeds, new sentences, other sizes and masks: every run is a configuration nobody ran before."""
    unique = 100_000 + learner * 1_000 + step
    steps: tuple[Step, ...] = (
        ("seed", unique),
        ("tokens", own_sentence(learner, step + 1)),
        ("mask_type", ("causal", "none")[step // 4 % 2]),
        ("num_heads", (4, 8)[step // 4 % 2]),
    )
    return steps[step % len(steps)]


CHECKPOINT = "bench-gpt2"  # the name the checkpoint rooms' server lists GPT-2 small's size under
SMOLLM2_CHECKPOINT = "bench-smollm2"  # and SmolLM2-135M's size
GENERATE_TOKENS = 16  # what a generating learner asks for
GENERATE_BUTTON = "gen_start"  # the generation panel's button after a new text (components/panels/generation.py)
GENERATED = GENERATION_WORDS["gen.text"]["en"]  # how the panel's generated text starts


def checkpoint_link(learner: int) -> dict[str, str]:
    """The teacher's link to the checkpoint's page (the server lists it as :data:`CHECKPOINT`)."""
    return {"lang": "en", "weights": "pretrained", "checkpoint": CHECKPOINT}


def smollm2_link(learner: int) -> dict[str, str]:
    """The teacher's link to the SmolLM2-135M-sized checkpoint's page (listed as :data:`SMOLLM2_CHECKPOINT`)."""
    return {**checkpoint_link(learner), "checkpoint": SMOLLM2_CHECKPOINT}


def generates(learner: int) -> bool:
    """Whether learner ``learner`` generates: one in six, the first included (5 of 30; 1 of 3)."""
    return learner % 6 == 0


def generator_link(learner: int) -> dict[str, str]:
    """The checkpoint's link; a generating learner's asks for :data:`GENERATE_TOKENS` tokens (the page generates
    after the link's sentence as it opens)."""
    asks = {"generate": str(GENERATE_TOKENS)} if generates(learner) else {}
    return {**checkpoint_link(learner), **asks}


def sentence_step(learner: int, step: int) -> Step:
    """A new sentence of one's own, every change."""
    return ("tokens", own_sentence(learner, step + 1))


def generator_step(learner: int, step: int) -> Step:
    """A typer's new sentence; a generating learner's new sentence, then the panel's Generate button for it."""
    if not generates(learner):
        return sentence_step(learner, step)
    return sentence_step(learner, step // 2) if step % 2 == 0 else (GENERATE_BUTTON, True)


def learner_group(learner: int) -> str:
    """The group whose changes the generation mix reports apart."""
    return "generating" if generates(learner) else "typing"


def checkpoint_step(learner: int, step: int) -> Step:
    """Another layer, another head, then a sentence of one's own: layers repeat (cache hits), sentences do not."""
    steps: tuple[Step, ...] = (
        ("layer", 1 + step // 3 % 11),
        ("head_picker", {"head": (learner + step) % 12}),
        ("tokens", own_sentence(learner, step + 1)),
    )
    return steps[step % len(steps)]


def checkpoint_guide_step(learner: int, step: int) -> Step:
    """The guide's way through a checkpoint: everyone on the link's sentence, another layer, then another head (the
    layers' runs repeat across the room: cache hits; no sentence of one's own)."""
    steps: tuple[Step, ...] = (
        ("layer", 1 + step // 2 % 11),
        ("head_picker", {"head": (learner + step) % 12}),
    )
    return steps[step % len(steps)]


@dataclass(frozen=True)
class Mix:
    """What the room does: the link learner i opens, and learner i's change number k; the mix's own think time
    (``None``: the room's) and the group learner i's changes are reported in (``None``: one group)."""

    name: str
    link: Callable[[int], dict[str, str]]
    step: Callable[[int, int], Step]
    think_s: tuple[float, float] | None = None
    group: Callable[[int], str] | None = None


# One line per mix, e.g. trained weights: Mix("trained", lambda i: {**same_link(i), "weights": "trained"}, ...).
MIXES = (
    Mix("same link", same_link, exercise_step),
    Mix("own seed and sentence", own_link, own_step),
)
# A checkpoint's page: the server lists the checkpoint the link names (run() and main() build it, CHECKPOINTS).
CHECKPOINT_MIX = Mix("checkpoint page", checkpoint_link, checkpoint_step)
# The same page walked as the workshop guide's second session walks it: layers and heads on the link's sentence.
CHECKPOINT_GUIDE_MIX = Mix("checkpoint, guide's sentence", checkpoint_link, checkpoint_guide_step)
CHECKPOINT_MIXES = (
    CHECKPOINT_MIX,
    CHECKPOINT_GUIDE_MIX,
    Mix("checkpoint, own sentences", checkpoint_link, sentence_step, SENTENCE_THINK_S),
    Mix("SmolLM2, own sentences", smollm2_link, sentence_step, SENTENCE_THINK_S),
    Mix("checkpoint, 5 of 30 generating", generator_link, generator_step, SENTENCE_THINK_S, learner_group),
)


@dataclass
class RoomResult:
    """What one room measured."""

    learners: int
    replicas: int = 1
    change_s: list[float] = field(default_factory=list)
    group_change_s: dict[str, list[float]] = field(default_factory=dict)  # the mix's groups' changes apart
    timeline: list[tuple[float, str, float]] = field(default_factory=list)  # (at s, what, seconds)
    open_s: list[float] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)
    error_examples: dict[str, str] = field(default_factory=dict)
    reconnects: int = 0
    runs: Counter = field(default_factory=Counter)  # script runs per change -> changes
    load_before: float = 0.0  # the machine's 1-minute load average just before the room
    server_cores: float | None = None
    server_rss_peak_mib: float | None = None
    client_cores: float = 0.0
    machine_cores: float = 0.0  # every process on the machine, this room's included
    started: float = field(default_factory=time.monotonic)
    seconds: float = 0.0

    @property
    def others_cores(self) -> float:
        """CPU that neither the server nor the learners used: other jobs on a shared machine."""
        return max(0.0, self.machine_cores - self.client_cores - (self.server_cores or 0.0))

    @property
    def broken(self) -> bool:
        return bool(self.errors) or not self.change_s or _percentile(self.change_s, 95) > TARGET_P95_S


def _percentile(values: list[float], q: float) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def _record_error(result: RoomResult, text: str) -> None:
    """Count an error by its kind (the text before the first colon), keeping the first text of each kind."""
    kind = text.split(":", 1)[0]
    result.errors[kind] += 1
    result.error_examples.setdefault(kind, text)


SHAPES = re.compile(r"`Q \[1, (\d+), (\d+), (\d+)\]`")  # step 1's shapes: Q (B, h, L, d_k)
PICKER_DATA = {"count", "shown", "moves", "every"}  # the head picker's data (components/canvas.py)


def _values_drawn(run: RunResult) -> tuple[dict | None, tuple[int, int, int] | None]:
    """The head picker's data and step 1's (h, L, d_k) as the change's last run drew them (``None``: not drawn)."""
    picker = shapes = None
    for text in run.texts:
        if text.startswith("{"):
            data = json.loads(text)
            if isinstance(data, dict) and data.keys() >= PICKER_DATA:
                picker = data
        elif shapes is None and (found := SHAPES.search(text)):
            shapes = (int(found[1]), int(found[2]), int(found[3]))
    return picker, shapes


def _check_applied(tab: BrowserSession, step: Step, run: RunResult) -> str | None:
    """A change the page does not show: not in the link the app writes (it mirrors every control there; the
    Generate button: no generated text drawn), or the values the change's last run drew do not follow it (a
    change that ended before the page filled its parts).

    The values: the head picker's heads and head (every change's last run draws the picker), and step 1's shapes
    ``Q [1, h, L, d_k]`` (every change's but a head pick's, which reruns the picker's fragment alone: the charts
    already hold every head).
    """
    key, value = step
    if isinstance(value, dict):  # the head picker (a component): its state {"head": n}, the link's ``head``
        key, value = "head", value["head"]
    if key == GENERATE_BUTTON:
        if not any(text.startswith(GENERATED) for text in run.texts):
            return "not generated: after the Generate button the change's last run drew no generated text"
    elif (shown := tab.url_value(key)) != str(value):
        return f"not applied: {key}={value!r} but the URL says {shown!r}"
    picker, shapes = _values_drawn(run)
    if picker is None or (shapes is None and key != "head"):
        missing = "head picker" if picker is None else "step 1's shapes"
        return f"values not drawn: after {key}={value!r} the change's last run drew no {missing}"
    checks = {"head": (picker["shown"], value if key == "head" else picker["shown"])}
    if shapes is not None:
        heads, _, d_k = shapes
        checks["picker's heads"] = (picker["count"], heads)
        checks["num_heads"] = (heads, value if key == "num_heads" else heads)
        checks["d_model"] = (heads * d_k, value if key == "d_model" else heads * d_k)
    wrong = [f"{name} {got} (want {want})" for name, (got, want) in checks.items() if got != want]
    return f"values not applied: after {key}={value!r}: {', '.join(wrong)}" if wrong else None


async def learner(
    index: int,
    mix: Mix,
    base_url: str,
    arrive_at: float,
    end_at: float,
    result: RoomResult,
    executor,
    think_s: tuple[float, float] = THINK_S,
) -> None:
    """One learner: arrive, open the link, then think and change a control until ``end_at``."""
    rng = random.Random(SEED * 100_003 + index)
    await asyncio.sleep(max(0.0, arrive_at - time.monotonic()))
    tab = BrowserSession(base_url, urlencode(mix.link(index)), executor)
    opened = False
    step = 0
    try:
        while time.monotonic() < end_at:
            if not opened:
                try:
                    seconds, run = await tab.open(RUN_TIMEOUT_S)
                except (PageError, TimeoutError) as error:
                    _record_error(result, f"open failed: {error}")
                    await asyncio.sleep(rng.uniform(*think_s))  # and the learner reloads
                    continue
                opened = True
                result.open_s.append(seconds)
                result.timeline.append((time.monotonic() - result.started, "open", seconds))
                followed = await _follow_timers(tab, run, result, "open")  # a link's generation: watched, not timed
                _count_run_errors(followed or run, result)
                continue
            await asyncio.sleep(min(rng.uniform(*think_s), max(0.0, end_at - time.monotonic())))
            if time.monotonic() >= end_at:
                break
            change = mix.step(index, step)
            step += 1
            try:
                run = await tab.change(*change, timeout_s=RUN_TIMEOUT_S)
            except TimeoutError as error:
                _record_error(result, f"run timed out: after {change}: {error}")
                continue
            except PageError as error:
                _record_error(result, str(error))
                continue
            run = await _follow_timers(tab, run, result, change)
            if run is None:
                continue
            result.change_s.append(run.seconds)
            if mix.group is not None:
                result.group_change_s.setdefault(mix.group(index), []).append(run.seconds)
            result.runs[run.runs] += 1
            result.timeline.append((time.monotonic() - result.started, change[0], run.seconds))
            _count_run_errors(run, result)
            problem = _check_applied(tab, change, run)
            if problem:
                _record_error(result, problem)
    finally:
        result.reconnects += tab.reconnects
        if tab.unasked_runs:
            result.errors["run not asked for"] += tab.unasked_runs
            result.error_examples.setdefault(
                "run not asked for", "run not asked for: a run started after a change had ended (it ended too early)"
            )
        await tab.close()


async def _follow_timers(tab: BrowserSession, run: RunResult, result: RoomResult, what: object) -> RunResult | None:
    """``run`` (a change or the page's opening) followed through the page's fragment timers as the browser follows
    it (a generation's progress, to the page's run that shows it): the whole, its seconds from ``run``'s BackMsg
    (``None``, the error recorded: the timers still ran after :data:`RUN_TIMEOUT_S`)."""
    try:
        after = await tab.follow_timers(RUN_TIMEOUT_S)
    except TimeoutError as error:
        _record_error(result, f"run timed out: after {what}: {error}")
        return None
    if after is None:
        return run
    return RunResult(
        run.seconds + after.seconds, after.status, run.errors + after.errors, 0, run.runs + after.runs, after.texts
    )


def _count_run_errors(run: RunResult, result: RoomResult) -> None:
    for text in run.errors:
        _record_error(result, text)


def _busy(times) -> float:
    """CPU seconds the whole machine spent busy (not idle, not waiting for the disk)."""
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


async def _sample_server(pids: list[int], stop: asyncio.Event, result: RoomResult) -> None:
    """CPU (cores, averaged) and peak RSS of the server processes, all together (replicas and a proxy)."""
    import psutil

    processes = [psutil.Process(pid) for pid in pids]

    def cpu() -> float:
        return sum(sum(p.cpu_times()[:2]) for p in processes)

    def rss() -> int:
        return sum(p.memory_info().rss for p in processes)

    start_cpu, start = cpu(), time.monotonic()
    peak = rss()
    while not stop.is_set():
        peak = max(peak, rss())
        await asyncio.sleep(0.5)
    peak = max(peak, rss())
    result.server_cores = (cpu() - start_cpu) / (time.monotonic() - start)
    result.server_rss_peak_mib = peak / 2**20


async def room(
    base_url: str,
    mix: Mix,
    learners: int,
    ramp_s: float,
    steady_s: float,
    server_pids: list[int] | None = None,
    replicas: int = 1,
    think_s: tuple[float, float] = THINK_S,
) -> RoomResult:
    """Run one room against ``base_url``: ``learners`` arrive over ``ramp_s``, then ``steady_s`` more."""
    import resource

    import psutil

    result = RoomResult(learners, replicas, load_before=os.getloadavg()[0])
    rng = random.Random(SEED)
    start = result.started
    end_at = start + ramp_s + steady_s
    arrivals = sorted(start + rng.uniform(0, ramp_s) for _ in range(learners))
    stop = asyncio.Event()
    sampler = asyncio.create_task(_sample_server(server_pids, stop, result)) if server_pids else None
    own_cpu = resource.getrusage(resource.RUSAGE_SELF)
    machine = psutil.cpu_times()
    with ThreadPoolExecutor(max_workers=min(learners, 16), thread_name_prefix="room-http") as executor:
        await asyncio.gather(
            *(learner(i, mix, base_url, at, end_at, result, executor, think_s) for i, at in enumerate(arrivals))
        )
    result.seconds = time.monotonic() - start
    used = resource.getrusage(resource.RUSAGE_SELF)
    result.client_cores = (used.ru_utime + used.ru_stime - own_cpu.ru_utime - own_cpu.ru_stime) / result.seconds
    result.machine_cores = (_busy(psutil.cpu_times()) - _busy(machine)) / result.seconds
    stop.set()
    if sampler is not None:
        await sampler
    return result


def _warm_up(base_url: str, link: dict[str, str] | None = None) -> None:
    """One tab opens the room's link (default: the default page) and changes a control: imports, first forward
    (a checkpoint loaded), caches warm."""

    async def visit() -> None:
        tab = BrowserSession(base_url, urlencode(link or {"lang": "en"}))
        await tab.open(180.0)
        await tab.change("seed", 1, timeout_s=60.0)
        await tab.close()

    _run_loop(visit())


T = TypeVar("T")


def _run_loop(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coroutine)`` on a thread of its own: the caller's thread may already run an event loop (a
    test process where Playwright's synchronous API has run one)."""
    with ThreadPoolExecutor(max_workers=1) as worker:
        return worker.submit(asyncio.run, coroutine).result()


def measure_room(
    mix: Mix,
    learners: int,
    ramp_s: float,
    steady_s: float,
    env: dict[str, str] | None = None,
    replicas: int = 1,
    think_s: tuple[float, float] = THINK_S,
) -> RoomResult:
    """One room against a fresh ``streamlit run playground.py`` (environment: ``env``, else :data:`SERVER_ENV`).

    With ``replicas`` > 1, against ``deploy/run-local-cluster replicas PORT`` instead: that many
    servers behind HAProxy on this machine (CPU and RSS are then the replicas' and the proxy's).
    Every server is warmed up first by a tab of its own, on the room's own link.
    """
    from tests.local_app import free_port, start_streamlit, stop_process
    from tests.local_cluster import LocalCluster

    env = SERVER_ENV if env is None else env
    link = mix.link(0)
    if replicas > 1:
        with LocalCluster(replicas, extra_env=env) as cluster:
            for port in cluster.replica_ports.values():
                _warm_up(f"http://127.0.0.1:{port}", link)
            return _run_loop(room(cluster.url, mix, learners, ramp_s, steady_s, cluster.pids(), replicas, think_s))
    port = free_port()
    server = start_streamlit(port, extra_env=env)
    try:
        base_url = f"http://127.0.0.1:{port}"
        _warm_up(base_url, link)
        return _run_loop(room(base_url, mix, learners, ramp_s, steady_s, [server.pid], think_s=think_s))
    finally:
        stop_process(server)


def build_checkpoint(folder: Path) -> Path:
    """A GPT-2 of GPT-2 small's size with random weights in ``folder`` (the checkpoint room's): 768 wide,
    12 layers, 12 heads, GPT-2's 50,257-token embedding (``tests/tiny_checkpoint.build_gpt2``)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from tiny_checkpoint import build_gpt2

    return build_gpt2(folder, 768, 12, 12, 50257)


def build_smollm2(folder: Path) -> Path:
    """A Llama of SmolLM2-135M's sizes with random weights in ``folder`` (``tests/tiny_checkpoint.build_smollm2``:
    576 wide, 30 layers, 9 query and 3 K/V heads, RoPE, a 49,152-token vocabulary, saved in bfloat16)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from tiny_checkpoint import build_smollm2 as build

    return build(folder)


#: The checkpoints a mix's link may name, and how the bench builds each (random weights, no network).
CHECKPOINTS: dict[str, Callable[[Path], Path]] = {CHECKPOINT: build_checkpoint, SMOLLM2_CHECKPOINT: build_smollm2}


def checkpoint_env(folder: Path, name: str = CHECKPOINT) -> dict[str, str]:
    """The server's environment for a checkpoint room: :data:`SERVER_ENV`, the checkpoint in ``folder`` listed as
    ``name``, offline."""
    return {**SERVER_ENV, "ATTN_PLAYGROUND_CHECKPOINTS": f"{name}={folder}", "HF_HUB_OFFLINE": "1"}


def mix_env(mix: Mix, scratch: Path) -> dict[str, str] | None:
    """The server's environment for ``mix``: where its link names a checkpoint of :data:`CHECKPOINTS`, that
    checkpoint listed (built under ``scratch`` the first time); else ``None`` (:data:`SERVER_ENV`)."""
    name = mix.link(0).get("checkpoint")
    if name is None:
        return None
    folder = scratch / name
    if not folder.exists():
        CHECKPOINTS[name](folder)
    return checkpoint_env(folder, name)


def _row(mix: Mix, result: RoomResult) -> tuple[object, ...]:
    changes = result.change_s
    p = (lambda q: f"{_percentile(changes, q) * 1e3:.0f}") if changes else (lambda q: "-")
    errors = ", ".join(f"{kind} {count}" for kind, count in sorted(result.errors.items())) or "0"
    cores = "-" if result.server_cores is None else f"{result.server_cores:.2f}"
    rss = "-" if result.server_rss_peak_mib is None else f"{result.server_rss_peak_mib:.0f}"
    opened = f"{_percentile(result.open_s, 95):.1f}" if result.open_s else "-"
    verdict = "breaks" if result.broken else "holds"
    setup = "1 server" if result.replicas == 1 else f"{result.replicas} replicas + HAProxy"
    runs = sum(n * count for n, count in result.runs.items()) / len(changes) if changes else 0.0
    groups = "; ".join(
        f"{group} {_percentile(seconds, 95) * 1e3:.0f} ({len(seconds)})"
        for group, seconds in sorted(result.group_change_s.items())
    )
    return (
        *(
            setup,
            mix.name,
            result.learners,
            len(changes),
            f"{runs:.1f}",
            p(50),
            p(95),
            f"{max(changes) * 1e3:.0f}" if changes else "-",
            groups or "-",
        ),
        *(opened, errors, result.reconnects, cores, rss),
        *(f"{result.client_cores:.2f}", f"{result.others_cores:.2f}", f"{result.load_before:.2f}", verdict),
    )


COLUMNS = (
    "setup",
    "mix",
    "learners",
    "changes",
    "runs per change",
    "p50 ms",
    "p95 ms",
    "max ms",
    "p95 ms by group (changes)",
    "open p95 s",
    "errors",
    "reconnects",
    "server CPU cores",
    "server RSS peak MiB",
    "learners' CPU cores",
    "others' CPU cores",
    "load before",
    "verdict",
)


def _notes(
    ramp_s: float, steady_s: float, env: dict[str, str] | None = None, think_s: tuple[float, float] = THINK_S
) -> tuple[str, ...]:
    shown = " ".join(f"{k}={v}" for k, v in (SERVER_ENV if env is None else env).items()) or "none"
    return (
        f"server: streamlit run playground.py with .streamlit/config.toml; environment: {shown}.",
        "change -> the script_finished that ends it: from the rerun BackMsg sent, through every run the server "
        "made for the change (runs per change: a run that ended FINISHED_EARLY_FOR_RERUN for a callback's "
        "st.rerun of the live fragments or of the page, then theirs; a run setting, one run), to the "
        "script_finished of its last run received; then the link and the values that run drew (head picker, "
        "step 1's shapes) must show the change. Learners "
        f"arrive over {ramp_s:.0f} s and think {think_s[0]:.0f}-{think_s[1]:.0f} s (uniform) before each change, "
        f"for {ramp_s + steady_s:.0f} s in all; a fresh server per room, warmed up by one tab first.",
        "open: GET of the link and the assets index.html names, health, host-config, websocket, first run.",
        "server CPU: the server process's CPU seconds / wall seconds over the room (2 = both cores busy); "
        "learners' CPU: this process (the simulated tabs), which shares the cores with the server; "
        "others': the rest of the machine's busy CPU over the room (other jobs; near 0 on a quiet machine); "
        "load before: the machine's 1-minute load average as the room began (the server's warm-up included).",
        f"breaks: p95 over {TARGET_P95_S:.0f} s or any error; rooms above 60 are tried until one breaks.",
    )


def _error_notes(mix: Mix, result: RoomResult) -> list[str]:
    return [f"{mix.name}, {result.learners} learners: {text}" for text in result.error_examples.values()]


CHECKPOINT_LEARNERS = 30  # the checkpoint room's size (one server)


def run(quick: bool) -> list[Table]:
    """One row per setup (one server; two replicas behind HAProxy on the same cores), mix and room size; then
    the checkpoint rooms (one server, :data:`CHECKPOINT_LEARNERS` learners, one room per checkpoint mix, each mix
    with its own think time where it has one)."""
    ramp_s, steady_s = (QUICK_RAMP_S, QUICK_STEADY_S) if quick else (RAMP_S, STEADY_S)
    think_s = QUICK_THINK_S if quick else THINK_S
    rows, errors = [], []
    for replicas in (1, 2):
        for mix in MIXES:
            sizes = (*REQUIRED_SIZES, *LARGER_SIZES) if replicas == 1 else (*REQUIRED_SIZES[1:], *LARGER_SIZES)
            for learners in QUICK_SIZES if quick else sizes:
                result = measure_room(mix, learners, ramp_s, steady_s, replicas=replicas, think_s=think_s)
                rows.append(_row(mix, result))
                errors += _error_notes(mix, result)
                if learners not in REQUIRED_SIZES and result.broken:
                    break
    if not quick:
        with tempfile.TemporaryDirectory(prefix="bench-room-checkpoint-") as scratch:
            for mix in CHECKPOINT_MIXES:
                env = mix_env(mix, Path(scratch))
                result = measure_room(mix, CHECKPOINT_LEARNERS, ramp_s, steady_s, env, think_s=mix.think_s or think_s)
                rows.append(_row(mix, result))
                errors += _error_notes(mix, result)
    notes = _notes(ramp_s, steady_s, think_s=think_s)
    if not quick:
        notes += (_own_think_note(),)
    return [Table(TITLE, COLUMNS, tuple(rows), (*notes, *errors))]


def _own_think_note() -> str:
    own = [f'"{mix.name}" {mix.think_s[0]:g}-{mix.think_s[1]:g} s' for mix in CHECKPOINT_MIXES if mix.think_s]
    return "mixes that think a time of their own before each change: " + "; ".join(own) + "."


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.room``: one room per size against a running server or proxy."""
    parser = argparse.ArgumentParser(prog="python -m bench.room", description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running server or proxy (default: start a fresh server per room)")
    parser.add_argument("--learners", default="30", help="room sizes, comma-separated")
    parser.add_argument("--mix", default=MIXES[0].name, choices=[m.name for m in (*MIXES, *CHECKPOINT_MIXES)])
    parser.add_argument(
        "--replicas", type=int, default=1, help="servers behind deploy/run-local-cluster's HAProxy (or at --url)"
    )
    parser.add_argument("--ramp", type=float, default=RAMP_S, help="seconds over which the learners arrive")
    parser.add_argument("--seconds", type=float, default=STEADY_S, help="seconds after the last arrival")
    parser.add_argument(
        "--think",
        help=f"seconds a learner thinks before a change: LOW,HIGH (default: the mix's own, else "
        f"{THINK_S[0]:g},{THINK_S[1]:g})",
    )
    parser.add_argument(
        "--server-pid", type=int, action="append", help="with --url: a server process (or proxy) to read CPU and RSS of"
    )
    parser.add_argument(
        "--env", action="append", default=[], help="KEY=VALUE for the server started (repeat; default: SERVER_ENV)"
    )
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--timeline", help="write every open and change (at, what, seconds) to this JSON file")
    args = parser.parse_args(argv)
    mix = next(m for m in (*MIXES, *CHECKPOINT_MIXES) if m.name == args.mix)
    if args.think:
        low, high = (float(x) for x in args.think.split(","))
        think_s = (low, high)
    else:
        think_s = mix.think_s or THINK_S
    env = dict(item.split("=", 1) for item in args.env) if args.env else None
    rows, errors, timelines = [], [], {}
    with tempfile.TemporaryDirectory(prefix="bench-room-checkpoint-") as scratch:
        if not args.url and (listed := mix_env(mix, Path(scratch))) is not None:  # the checkpoint, built here
            env = {**listed, **(env or {})}
        for learners in (int(n) for n in args.learners.split(",")):
            if args.url:
                result = _run_loop(
                    room(args.url, mix, learners, args.ramp, args.seconds, args.server_pid, args.replicas, think_s)
                )
            else:
                result = measure_room(mix, learners, args.ramp, args.seconds, env, args.replicas, think_s)
            rows.append(_row(mix, result))
            errors += _error_notes(mix, result)
            timelines[learners] = result.timeline
            print(format_table(Table(TITLE, COLUMNS, (rows[-1],)), "text"), flush=True)
    notes = _notes(args.ramp, args.seconds, env, think_s)
    notes = notes if not args.url else notes[1:]
    table = Table(TITLE, COLUMNS, tuple(rows), (*notes, *errors))
    print(format_table(table, "markdown" if args.markdown else "text"))
    if args.timeline:
        Path(args.timeline).write_text(json.dumps({"mix": mix.name, "rooms": timelines}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
