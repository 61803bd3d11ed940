"""A cap on PyTorch's CPU threads, for a server shared by many sessions."""

from __future__ import annotations

import os

import torch

__all__ = ["THREADS_ENV", "apply_thread_cap", "thread_cap"]

THREADS_ENV = "ATTN_PLAYGROUND_THREADS"
# One thread unless told otherwise: the page's operations are small, and a second OpenMP worker spins
# while it waits for the next one, taking a core from the browser (on a laptop) or from other sessions.
DEFAULT_THREADS = 1


def thread_cap(environ: dict[str, str] | None = None, cores: int | None = None) -> int:
    """Threads to use: ``$ATTN_PLAYGROUND_THREADS`` if it is a positive integer (at most ``cores``), else 1."""
    environ = os.environ if environ is None else environ
    if cores is None:
        cores = os.cpu_count() or 1
    raw = environ.get(THREADS_ENV, "").strip()
    if raw.isdigit() and int(raw) > 0:
        return min(int(raw), cores)
    return DEFAULT_THREADS


def apply_thread_cap(environ: dict[str, str] | None = None) -> int:
    """Set ``torch.set_num_threads`` to :func:`thread_cap` (intra-op threads; process-wide) and return it."""
    threads = thread_cap(environ)
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return threads
