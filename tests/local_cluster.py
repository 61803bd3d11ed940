"""``deploy/run-local-cluster`` run in the background: its replicas, its proxy, and a clean stop.

Used by the cluster tests and by the room benchmark (``python -m bench.room --replicas 2``).
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "test-artifacts"
SCRIPT = REPO / "deploy" / "run-local-cluster"
REPLICA_LINE = re.compile(r"^replica (\d+) pid (\d+) port (\d+)$")
START_TIMEOUT_S = 300.0

__all__ = ["REPLICA_LINE", "LocalCluster"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalCluster:
    """``deploy/run-local-cluster`` in the background: its replicas, its proxy, and a clean stop."""

    def __init__(self, replicas: int, extra_env: dict[str, str] | None = None) -> None:
        self.replicas = replicas
        self.extra_env = extra_env or {}
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.replica_pids: dict[int, int] = {}  # replica number -> pid
        self.replica_ports: dict[int, int] = {}
        self.proxy_pid: int | None = None
        self.lines: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()

    def __enter__(self) -> LocalCluster:
        ARTIFACTS.mkdir(exist_ok=True)
        self._log = (ARTIFACTS / f"cluster-{self.port}.log").open("w")
        self.process = subprocess.Popen(
            [str(SCRIPT), str(self.replicas), str(self.port)],
            cwd=REPO,
            env={**os.environ, **self.extra_env, "PYTHON": sys.executable},
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        try:
            self._wait_ready()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _read(self) -> None:
        for line in self.process.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                line = self._lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(f"the cluster printed no 'ready' in {START_TIMEOUT_S:.0f} s: {self.lines}") from None
            if line is None:
                raise RuntimeError(f"run-local-cluster exited with {self.process.wait()}: {self.lines}")
            self.lines.append(line)
            if match := REPLICA_LINE.match(line):
                number, pid, port = map(int, match.groups())
                self.replica_pids[number], self.replica_ports[number] = pid, port
            elif line.startswith("proxy pid "):
                self.proxy_pid = int(line.split()[2])
            elif line == f"ready {self.url}":
                return

    def pids(self) -> list[int]:
        return [*self.replica_pids.values(), *([self.proxy_pid] if self.proxy_pid else [])]

    def stop(self, timeout_s: float = 60.0) -> int:
        """SIGTERM to the script; its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=timeout_s)

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.stop()
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for pid in self.pids():  # replicas and proxy run in their own sessions: never leave one behind
            with contextlib.suppress(psutil.NoSuchProcess):
                psutil.Process(pid).kill()
        self._log.close()
