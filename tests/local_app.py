"""A local app server and Chromium's settings, without side effects on import.

Shared by the tests (``conftest.py`` re-exports these names), the benchmarks that drive a real server and
browser, and ``scripts/screenshots.py`` (which must keep the environment as it is: the checkpoint list it
shows comes from ``ATTN_PLAYGROUND_CHECKPOINTS``, which the tests' ``conftest`` clears).

The server gets this process's environment, ``ATTN_PLAYGROUND_TEST_DEVICE`` included: the browser tests' server
runs ``auto`` on the suite's device (``mha.device.resolve_device`` reads it there too).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str | None:
    """Debian's Chromium (or ``$CHROMIUM_PATH``), if present."""
    for candidate in (os.environ.get("CHROMIUM_PATH"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_streamlit(
    port: int, script: str = "playground.py", extra_env: dict[str, str] | None = None, cwd: Path = REPO
):
    """Start ``streamlit run`` on 127.0.0.1:port and wait for its health check; returns the process.

    ``cwd``: the checkout to serve (this one by default; ``bench.ab`` serves an older one beside it).
    """
    env = {**os.environ, **(extra_env or {})}
    env.pop("PYTHONPATH", None)
    command = [
        sys.executable, "-m", "streamlit", "run", script,
        "--server.port", str(port), "--server.address", "127.0.0.1",
        "--server.headless", "true", "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    ARTIFACTS.mkdir(exist_ok=True)
    log = (ARTIFACTS / f"streamlit-{port}.log").open("w")
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with {process.returncode}; see {log.name}")
        health = f"http://127.0.0.1:{port}/_stcore/health"
        with contextlib.suppress(OSError), urllib.request.urlopen(health, timeout=2) as response:
            if response.status == 200:
                return process
        time.sleep(0.3)
    process.kill()
    raise RuntimeError(f"streamlit did not answer on port {port} within 90 s; see {log.name}")


def stop_process(process: subprocess.Popen) -> None:
    """Terminate, then kill if needed."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def serving(extra_env: dict[str, str] | None = None) -> Iterator[str]:
    """``streamlit run playground.py`` on a free loopback port until the block ends; yields its base URL."""
    port = free_port()
    process = start_streamlit(port, extra_env=extra_env)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process(process)


def wait_for_app(page, timeout_ms: int = 60_000) -> None:
    """Wait until Streamlit has rendered the page and finished running the script."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout_ms)
    page.wait_for_function(
        """() => {
            const app = document.querySelector('[data-testid="stApp"]');
            const state = app && app.getAttribute('data-test-script-state');
            return state && state !== 'initial' && state !== 'running'
                && document.querySelector('[data-testid="stMainBlockContainer"] *') !== null;
        }""",
        timeout=timeout_ms,
    )
    page.wait_for_timeout(300)
