"""Shared fixtures: a real `streamlit run playground.py` on loopback and a Playwright page in Chromium.

The suite's device: ``ATTN_PLAYGROUND_TEST_DEVICE=cuda|mps|cpu`` runs every run whose device is ``auto`` (the
pages through AppTest, the browser tests' server, the engine, checkpoint, training, generation and lab tests) on
that device (``mha.device.resolve_device`` reads it); unset, ``auto`` picks as in the app. A device that is not
available here stops the session before any test (a usage error naming it). The ``device`` fixture is that device.

Tests that need a tool of the machine (Chromium and Playwright for the browser tests, HAProxy for the
local cluster) skip with a reason where it is missing, except in CI (``CI=true``, which ``.ci/run`` sets),
where a missing tool is a failure: CI installs them (scripts/setup-tests.sh).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pandas as pd
import pytest
import streamlit as st
import torch
from local_app import ARTIFACTS as ARTIFACTS  # re-exported: the tests import these from conftest
from local_app import CHROMIUM_ARGS, chromium_path, serving
from local_app import REPO as REPO
from local_app import wait_for_app as wait_for_app
from network_guard import install as guard_the_network

from mha import jobs
from mha.config import TRAINED, WeightSpec, weight_spec_of
from mha.device import TEST_DEVICE_ENV, available_devices, resolve_device
from mha.training import service as service_module
from mha.training.loop import TrainingStoppedError, train
from mha.training.service import TrainingService

# No test touches the network: the Hugging Face hub is offline with an empty cache of its own, and the
# server's checkpoint list is the default one unless a test lists its own (see ``tiny_checkpoint``).
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="attn-playground-hf-")
os.environ.pop("HF_HUB_CACHE", None)
os.environ.pop("ATTN_PLAYGROUND_CHECKPOINTS", None)
os.environ.pop("ATTN_PLAYGROUND_ANY_CHECKPOINT_MB", None)  # learners name no checkpoint of their own unless a test says
guard_the_network()  # and in this process a socket may connect to this machine only (tests/network_guard.py)
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


SUITE_DEVICES = ("cuda", "mps", "cpu")


def pytest_configure(config: pytest.Config) -> None:
    """Stop the session when ``ATTN_PLAYGROUND_TEST_DEVICE`` names a device that is unknown or not available here:
    a suite asked to run on a GPU must never pass on the CPU instead."""
    wanted = os.environ.get(TEST_DEVICE_ENV, "").strip()
    if not wanted:
        return
    if wanted not in SUITE_DEVICES:
        pytest.exit(f"{TEST_DEVICE_ENV}={wanted!r}: choose one of {', '.join(SUITE_DEVICES)}", returncode=4)
    if wanted not in available_devices():
        pytest.exit(
            f"{TEST_DEVICE_ENV}={wanted}: {wanted} is not available on this machine "
            f"(available: {', '.join(available_devices())}); unset it or choose one of those",
            returncode=4,
        )


def pytest_report_header(config: pytest.Config) -> str:
    """The suite's device in pytest's header, and where it comes from."""
    wanted = os.environ.get(TEST_DEVICE_ENV, "").strip()
    origin = f"{TEST_DEVICE_ENV}={wanted}" if wanted else f"auto; set {TEST_DEVICE_ENV} to choose"
    return f"attention playground test device: {resolve_device('auto').device} ({origin})"


@pytest.fixture(scope="session")
def device() -> torch.device:
    """The suite's device: what ``device="auto"`` resolves to in this session (``ATTN_PLAYGROUND_TEST_DEVICE``)."""
    return resolve_device("auto").device


def missing_tool(reason: str) -> NoReturn:
    """Skip the test for a tool this machine lacks; in CI fail instead: the tests that need it must run there."""
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: the tests that need it must run; scripts/setup-tests.sh installs it)")
    pytest.skip(reason)


def require_haproxy() -> str:
    """The ``haproxy`` executable (the local cluster's proxy, deploy/run-local-cluster)."""
    haproxy = shutil.which("haproxy")
    if haproxy is None:
        missing_tool("haproxy is not installed (apt-get install haproxy)")
    return haproxy


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    """Base URL of a `streamlit run playground.py` started for this test session."""
    with serving() as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    """A headless Chromium driven by Playwright (Debian's /usr/bin/chromium)."""
    executable = chromium_path()
    if executable is None:
        missing_tool("no Chromium at /usr/bin/chromium (apt-get install chromium chromium-driver fonts-noto-cjk)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing_tool("the playwright package is not installed (pip install -r requirements-dev.txt)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    """A fresh page (1400x1000, en-US); ``page.collected_console`` collects console messages and page errors."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
    new_page = context.new_page()
    messages: list = []
    new_page.on("console", lambda message: messages.append(message))
    new_page.on("pageerror", lambda error: messages.append(error))
    new_page.collected_console = messages
    yield new_page
    context.close()


def console_errors(page) -> list[str]:
    """Console errors and uncaught page errors seen so far, as text."""
    errors = []
    for message in page.collected_console:
        if isinstance(message, Exception):
            errors.append(f"pageerror: {message}")
        elif message.type == "error":
            errors.append(message.text)
    return errors


class HeadPicker:
    """The head picker of an AppTest page (a component AppTest cannot click).

    ``value`` is the head the server gives the picker; ``set_value`` does on the server what the picker's
    message does once the browser has drawn the head (``components.head_picker``): the next run keeps it.
    """

    def __init__(self, at) -> None:
        from components.canvas import PICKER

        (self.element,) = [e for e in at.get("bidi_component") if e.proto.component_name == PICKER]
        self.at = at

    @property
    def data(self) -> dict:
        """What the picker was sent: ``label``, ``count``, ``shown``, ``moves``, ``every``."""
        import json

        return json.loads(self.element.proto.json)

    @property
    def value(self) -> int:
        return self.data["shown"]

    def set_value(self, head: int):
        self.at.session_state["head"] = head
        return self.at


def headings(at, level: int) -> list[str]:
    """The texts of the playground's headings of ``level`` (1 = the title, 3 = the steps' and panels'), in
    page order: they are Markdown elements (``components/headings.py``)."""
    prefix = "#" * level + " "
    return [element.value.removeprefix(prefix) for element in at.markdown if element.value.startswith(prefix)]


def markdown_frame(table: str) -> pd.DataFrame:
    """A Markdown table (``components.safe_text.markdown_table``) read back, cells as text; where its first header
    cell is empty, that column is the index."""
    header, rule, *rows = [re.split(r"(?<!\\)\|", line.strip())[1:-1] for line in table.strip().splitlines()]
    assert [cell.strip() for cell in rule] == ["---"] * len(header), table
    columns = [cell.strip() for cell in header]
    cells = [[cell.strip() for cell in row] for row in rows]
    if columns[0]:
        return pd.DataFrame(cells, columns=columns)
    return pd.DataFrame([row[1:] for row in cells], index=[row[0] for row in cells], columns=columns[1:])


def markdown_tables(at) -> list[pd.DataFrame]:
    """Every Markdown table of an AppTest page (the panels draw their tables so, some under a title), read back."""
    tables = []
    for element in at.markdown:
        run: list[str] = []  # the lines of one table: an element may hold several, each a run of "|" lines
        for line in [*str(element.value).splitlines(), ""]:
            if line.lstrip().startswith("|"):
                run.append(line)
            elif run:
                tables.append(markdown_frame("\n".join(run)))
                run = []
    return tables


def heatmaps(at, payload: bool = False) -> list:
    """Every canvas heatmap of an AppTest page but the heads at a glance above the steps (:func:`glance_heatmap`),
    decoded: what each chart shows (``components.heatmap.Figure``).

    A chart that follows the picked head shows the server's head (``Figure.head_figure``); with
    ``payload`` the figures come as sent, every head's panels included.
    """
    from components.heatmap import decode
    from components.panels import glance

    figures = [decode(e.proto.bytes) for e in _canvas_charts(at) if not e.proto.id.endswith(f"-{glance.KEY}")]
    return figures if payload else [figure.head_figure() for figure in figures]


def glance_heatmap(at):
    """The heads at a glance above the steps (``components.panels.glance``), decoded; ``None`` where none is drawn."""
    from components.heatmap import decode
    from components.panels import glance

    found = [decode(e.proto.bytes) for e in _canvas_charts(at) if e.proto.id.endswith(f"-{glance.KEY}")]
    assert len(found) <= 1, f"{len(found)} glances on one page"
    return found[0] if found else None


def _canvas_charts(at) -> list:
    from components.canvas import CHART

    return [e for e in at.get("bidi_component") if e.proto.component_name == CHART]


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory) -> Path:
    """A tiny BERT (2 layers, 4 heads, hidden 32) and its tokenizer saved to a folder, built once per session."""
    from tiny_checkpoint import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("checkpoints") / "tiny")


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory) -> Path:
    """A tiny GPT-2 (3 layers, 4 heads, hidden 32) with a byte-level BPE trained here, built once per session."""
    from tiny_checkpoint import build_tiny_gpt2

    return build_tiny_gpt2(tmp_path_factory.mktemp("checkpoints") / "gpt2")


@pytest.fixture(scope="session")
def chinese_gpt2(tmp_path_factory) -> Path:
    """A tiny GPT-2 with a BERT tokenizer, as ``uer/gpt2-chinese-cluecorpussmall`` pairs them."""
    from tiny_checkpoint import build_gpt2

    return build_gpt2(tmp_path_factory.mktemp("checkpoints") / "gpt2-chinese", bert_tokenizer=True, seed=1)


@pytest.fixture(scope="session")
def induction_gpt2(tmp_path_factory) -> Path:
    """A 2-layer GPT-2 whose weights make head 0.0 a previous-token head and head 1.0 an induction head."""
    from tiny_checkpoint import build_induction_gpt2

    return build_induction_gpt2(tmp_path_factory.mktemp("checkpoints") / "planted")


@pytest.fixture(scope="session")
def tiny_vit(tmp_path_factory) -> Path:
    """A tiny ViT (32 × 32 pixels in 8 × 8 patches, 2 layers, 4 heads, hidden 32) and its image processor."""
    from tiny_checkpoint import build_tiny_vit

    return build_tiny_vit(tmp_path_factory.mktemp("checkpoints") / "vit")


@pytest.fixture(scope="session")
def tiny_deit(tmp_path_factory) -> Path:
    """A tiny DeiT ([CLS], [DIST], 16 patches) whose processor resizes to 40 × 40 and crops the centre 32 × 32."""
    from tiny_checkpoint import build_vit

    return build_vit(tmp_path_factory.mktemp("checkpoints") / "deit", deit=True, seed=1)


@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory) -> Path:
    """A tiny Llama (hidden 32, 4 query heads, 2 key/value heads, 2 layers, rope_theta 10,000) with a BOS-adding
    tokenizer trained here, saved as ``LlamaForCausalLM``."""
    from tiny_checkpoint import build_tiny_llama

    return build_tiny_llama(tmp_path_factory.mktemp("checkpoints") / "llama")


@pytest.fixture(scope="session")
def tiny_qwen2(tmp_path_factory) -> Path:
    """A tiny Qwen2 (as the Llama; q, k, v biases, rope_theta 1,000,000) with a byte-level tokenizer that adds no
    token, saved as ``Qwen2ForCausalLM``."""
    from tiny_checkpoint import build_tiny_qwen2

    return build_tiny_qwen2(tmp_path_factory.mktemp("checkpoints") / "qwen2")


@pytest.fixture
def listed_llama(tiny_llama, tiny_qwen2, tiny_checkpoint, monkeypatch) -> Path:
    """The server's list for a test: ``tiny_llama``, ``tiny_qwen2`` and ``tiny`` (the BERT)."""
    listed = f"tiny_llama={tiny_llama},tiny_qwen2={tiny_qwen2},tiny={tiny_checkpoint}"
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", listed)
    return tiny_llama


@pytest.fixture
def listed_vit(tiny_vit, tiny_deit, tiny_checkpoint, monkeypatch) -> Path:
    """The server's list for a test: ``tinyvit``, ``tinydeit`` (the image encoders) and ``tiny`` (the BERT)."""
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", f"tinyvit={tiny_vit},tinydeit={tiny_deit},tiny={tiny_checkpoint}")
    return tiny_vit


@pytest.fixture
def listed_gpt2(tiny_gpt2, chinese_gpt2, induction_gpt2, tiny_checkpoint, monkeypatch) -> Path:
    """The server's list for a test: ``gpt2``, ``gpt2-chinese``, ``planted`` (the GPT-2s) and ``tiny`` (the BERT)."""
    listed = f"gpt2={tiny_gpt2},gpt2-chinese={chinese_gpt2},planted={induction_gpt2},tiny={tiny_checkpoint}"
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", listed)
    return tiny_gpt2


@pytest.fixture
def listed_tiny(tiny_checkpoint, monkeypatch) -> Path:
    """The server's list for a test: ``tiny``, ``tiny2`` (the same folder), ``offline`` (a hub id not cached)."""
    listed = f"tiny={tiny_checkpoint},tiny2={tiny_checkpoint},offline=org/not-cached"
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", listed)
    return tiny_checkpoint


# ---------------------------------------------------------------- trained weights on the page
SHORT_TRAINING_STEPS = 30


def trained_spec(d_model: int, num_heads: int, seed: int = 0, **fields) -> WeightSpec:
    """The trained-weights spec a page of this suite makes for these fields (``task``, ``text``, ``patch``,
    ``num_kv_heads``, ``rope_base``): with the device the page's own rule (``mha.config.weight_spec_of``, the device
    left to ``auto``) names, the suite's accelerator or none for the CPU, so the test and the page ask the training
    service for one model."""
    page = weight_spec_of(
        {"weights": TRAINED, "d_model": d_model, "num_heads": num_heads, "seed": seed, "task": "previous"}
    )
    return dataclasses.replace(WeightSpec(TRAINED, d_model, num_heads, seed, **fields), device=page.device)


class ShortTrainer:
    """Real trainings of SHORT_TRAINING_STEPS steps on the spec's device (its accelerator; none: the CPU); a spec whose
    gate is closed waits (and can be stopped) first."""

    def __init__(self) -> None:
        self.gates: dict[WeightSpec, threading.Event] = {}
        self.started: list[WeightSpec] = []

    def hold(self, spec: WeightSpec) -> threading.Event:
        return self.gates.setdefault(spec, threading.Event())

    def __call__(self, spec, on_step, should_stop):
        self.started.append(spec)
        gate = self.gates.get(spec)
        while gate is not None and not gate.wait(0.01):
            if should_stop():
                raise TrainingStoppedError(0)
        return train(spec.task, spec.d_model, spec.num_heads, spec.seed, text=spec.text, patch=spec.patch or 2,
                     num_kv_heads=spec.num_kv_heads, rope_base=spec.rope_base, max_steps=SHORT_TRAINING_STEPS,
                     on_step=on_step, should_stop=should_stop, device=spec.device or "cpu")  # fmt: skip


@pytest.fixture
def short_trainings(monkeypatch):
    """A fresh training service (and empty page caches) whose trainings are short; all stopped afterwards."""
    short = ShortTrainer()
    service = TrainingService(trainer=short)
    monkeypatch.setitem(jobs._SERVICES, service_module.SERVICE_NAME, service)
    st.cache_resource.clear()
    yield short
    for gate in short.gates.values():
        gate.set()
    service.shutdown()
