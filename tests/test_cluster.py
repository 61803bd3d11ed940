"""Several replicas behind the sticky proxy: ``deploy/run-local-cluster REPLICAS PORT`` with HAProxy.

In a real Chromium, through the proxy on one address (so stickiness can only come from the
cookie the proxy sets):

* sessions opened one after another spread over both replicas (the proxy's ``SERVERID``
  cookie names the replica), and each page is served by its own replica all along;
* a download made on the page works through the proxy, and the same download asked of the
  other replica is refused: the file exists only in the memory of the replica that drew the page;
* a replica killed in the middle of a workshop: new sessions are served by the other one, a
  reloaded page on the dead replica comes back (from its link) on the live one, and the pages
  on the live replica keep working;
* SIGTERM stops the proxy and every replica, and the script exits 0.

Waits poll the health endpoint and the page itself; nothing relies on a fixed sleep. Every
process started is stopped even when a test fails.
"""

from __future__ import annotations

import io
import json
import re
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import psutil
import pytest
from conftest import console_errors, require_haproxy, wait_for_app
from local_cluster import REPLICA_LINE, LocalCluster
from test_browser_controls import main_text, no_errors, type_number

TOKENS = ("the", "cat", "sat", "on", "the", "mat")
D_MODEL, HEADS = 64, 4


def _get(url: str, cookie: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _replica_of(context) -> int:
    """The replica the proxy's cookie sends this browser context to (``SERVERID=r<N>``)."""
    values = [c["value"] for c in context.cookies() if c["name"] == "SERVERID"]
    assert len(values) == 1, context.cookies()
    assert re.fullmatch(r"r\d+", values[0]), values
    return int(values[0][1:])


def _link(seed: int) -> str:
    return f"/?d_model={D_MODEL}&num_heads={HEADS}&tokens={'+'.join(TOKENS)}&seed={seed}&lang=en"


def _open(browser, cluster: LocalCluster, seed: int):
    """A new browser (its own cookies) on the workshop link with ``seed``; (context, page)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US", accept_downloads=True)
    page = context.new_page()
    page.collected_console = []
    page.on("console", lambda message: page.collected_console.append(message))
    page.on("pageerror", lambda error: page.collected_console.append(error))
    page.goto(cluster.url + _link(seed))
    _wait_for_seed(page, seed)
    return context, page


def _wait_for_seed(page, seed: int) -> None:
    """The page has run for ``seed``: its seed field shows it, and the steps are drawn."""
    wait_for_app(page, timeout_ms=180_000)
    page.wait_for_function(
        "seed => { const f = document.querySelector('.st-key-seed input'); return f && f.value === String(seed); }",
        arg=seed,
        timeout=180_000,
    )
    page.wait_for_selector(".attn-heatmap canvas", timeout=180_000)  # a heatmap of the steps
    assert f"x [1, {len(TOKENS)}, {D_MODEL}]" in main_text(page)


def _download_npz(page) -> tuple[str, bytes]:
    """Click the page's .npz download; (the URL it was fetched from, its bytes)."""
    with page.expect_download(timeout=120_000) as info:
        page.get_by_role("button", name="Download tensors (.npz)").first.click()
    download = info.value
    assert download.failure() is None, download.failure()
    return download.url, Path(download.path()).read_bytes()


def _check_npz(data: bytes, seed: int) -> None:
    """The file holds this page's run: its seed, and per-head weights (1, h, L, L) whose rows sum to 1."""
    arrays = np.load(io.BytesIO(data))
    assert json.loads(str(arrays["config"]))["seed"] == seed
    weights = arrays["attend.weights"]
    assert weights.shape == (1, HEADS, len(TOKENS), len(TOKENS))
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-5)


@pytest.fixture(scope="module")
def cluster():
    require_haproxy()
    with LocalCluster(2) as running:
        yield running


@pytest.mark.browser
def test_sessions_spread_over_both_replicas(cluster, browser):
    assert sorted(cluster.replica_pids) == [1, 2]
    for number, pid in cluster.replica_pids.items():  # each line names a live server on its port
        command = " ".join(psutil.Process(pid).cmdline())
        assert "streamlit run playground.py" in command and f"--server.port {cluster.replica_ports[number]}" in command
    opened = [_open(browser, cluster, seed) for seed in (11, 12, 13, 14)]  # one after another
    try:
        replicas = [_replica_of(context) for context, _ in opened]
        assert set(replicas) == {1, 2}, replicas
        for (_, page), seed in zip(opened, (11, 12, 13, 14), strict=True):
            no_errors(page)
            type_number(page, "seed", seed + 100)  # a rerun over the page's websocket, through the proxy
            _wait_for_seed(page, seed + 100)
    finally:
        for context, _ in opened:
            context.close()


@pytest.mark.browser
def test_a_download_is_served_by_the_replica_that_drew_the_page(cluster, browser):
    opened = [_open(browser, cluster, seed) for seed in (21, 22)]
    try:
        replicas = [_replica_of(context) for context, _ in opened]
        assert sorted(replicas) == [1, 2], replicas
        for (context, page), seed, replica in zip(opened, (21, 22), replicas, strict=True):
            url, data = _download_npz(page)
            _check_npz(data, seed)
            assert _replica_of(context) == replica  # the session never moved
            status, again = _get(url, cookie=f"SERVERID=r{replica}")
            assert (status, again) == (200, data)
            other = 3 - replica  # the other replica never saw this session's file
            status, _ = _get(url, cookie=f"SERVERID=r{other}")
            assert status == 404, status
            assert console_errors(page) == []
    finally:
        for context, _ in opened:
            context.close()


@pytest.mark.browser
def test_a_replica_killed_mid_workshop(browser):
    require_haproxy()
    with LocalCluster(2) as cluster:
        first = _open(browser, cluster, 31)
        second = _open(browser, cluster, 32)
        contexts = [first[0], second[0]]
        try:
            doomed, survivor = _replica_of(first[0]), _replica_of(second[0])
            assert doomed != survivor
            victim = psutil.Process(cluster.replica_pids[doomed])
            victim.kill()
            victim.wait(timeout=30)  # gone (the cluster script reaps it)

            # a learner who arrives now is served, by the live replica
            newcomer, page = _open(browser, cluster, 33)
            contexts.append(newcomer)
            assert _replica_of(newcomer) == survivor
            no_errors(page)

            # the learner whose replica died reloads: the page comes back from its link, on the live replica
            page = first[1]
            page.reload()
            _wait_for_seed(page, 31)
            assert _replica_of(first[0]) == survivor
            assert page.locator('[data-testid="stException"]').count() == 0

            # the learner on the live replica did not notice
            type_number(second[1], "seed", 320)
            _wait_for_seed(second[1], 320)
            no_errors(second[1])
            assert cluster.process.poll() is None  # the proxy keeps serving
        finally:
            for context in contexts:
                context.close()
        assert cluster.stop() == 0


def test_sigterm_stops_the_proxy_and_every_replica():
    require_haproxy()
    with LocalCluster(2) as cluster:
        assert len(cluster.lines) >= 2 and all(REPLICA_LINE.match(line) for line in cluster.lines[:2])
        status, body = _get(cluster.url + "/_stcore/health")
        assert (status, body) == (200, b"ok")
        pids = cluster.pids()
        assert len(pids) == 3 and all(psutil.pid_exists(pid) for pid in pids)
        assert cluster.stop() == 0
        for pid in pids:
            assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, pid
        with pytest.raises(urllib.error.URLError):
            urllib.request.urlopen(cluster.url + "/_stcore/health", timeout=5)
