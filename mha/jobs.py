"""Work in the background (no Streamlit): one service per kind of work, each job named by a key and shared.

A :class:`JobService` runs one kind of work (the trainings, :mod:`mha.training.service`; the generations,
:mod:`mha.sources.checkpoint.generation_service`), one thread per job:

* what decides the work is its key; the first to ask starts it, and whoever asks for the same key meanwhile joins
  the same job;
* a finished result is kept under its key (the :attr:`~JobService.kept` most recent) for everyone who asks;
* at most :attr:`~JobService.max_running` jobs run at once, the others wait in line, first come first served, each
  knowing its place; with :attr:`~JobService.max_waiting` set, a request past that many waiting is refused;
* a job stops before its next step when asked (:meth:`~JobService.stop`: for everyone) or when the last of its
  watchers leaves (:meth:`~JobService.leave`); a job being stopped is not joined: asking again starts a new one;
* a failure is reported, never raised in the thread: its message stays with the job, and with its key until the
  key is asked for again (:meth:`~JobService.failure`).

A job's state is :data:`QUEUED`, :data:`RUNNING`, then :data:`DONE`, :data:`STOPPED` or :data:`FAILED`. The
process's services are made once each, by name (:func:`shared_service`), and all stopped at exit (torch must not be
torn down under a running thread).
"""

from __future__ import annotations

import atexit
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar, cast

__all__ = [
    "DONE",
    "FAILED",
    "QUEUED",
    "RUNNING",
    "STOPPED",
    "Job",
    "JobService",
    "shared_service",
    "shutdown_all",
]

QUEUED, RUNNING, DONE, STOPPED, FAILED = "queued", "running", "done", "stopped", "failed"

K = TypeVar("K", bound=Hashable)
R = TypeVar("R")


@dataclass(eq=False)
class Job(Generic[K, R]):
    """One job: its key, state, result (or failure's message), its watchers, and the events that stop it and say it
    ended. A kind of work adds its own progress fields after ``key``."""

    key: K
    state: str = field(default=QUEUED, kw_only=True)
    result: R | None = field(default=None, kw_only=True)
    error: str = field(default="", kw_only=True)
    watchers: set[str] = field(default_factory=set, kw_only=True)
    stop: threading.Event = field(default_factory=threading.Event, kw_only=True)
    finished: threading.Event = field(default_factory=threading.Event, kw_only=True)
    thread: threading.Thread | None = field(default=None, kw_only=True)


J = TypeVar("J", bound=Job[Any, Any])


class JobService(Generic[K, R, J]):
    """Runs one kind of work in background threads (see the module docstring).

    A kind of work subclasses it: :meth:`_work` does one job (reading its inputs from the job and reporting its
    progress there); :meth:`_state_of` and :meth:`_kept` say how a result ends its job and where it is kept.

    Args:
        max_running: jobs at once.
        kept: finished results kept (the most recent), and failures' messages.
        max_waiting: jobs waiting for a slot at most (``None``: no limit).
    """

    #: Exceptions of :meth:`_work` that mean it stopped when asked (the job ends :data:`STOPPED`, not failed).
    stopped_errors: ClassVar[tuple[type[Exception], ...]] = ()

    def __init__(self, max_running: int, kept: int, max_waiting: int | None = None) -> None:
        self.max_running = max_running
        self.kept = kept
        self.max_waiting = max_waiting
        self.started = 0  # how many jobs began running (tests: two askers, one job)
        self._lock = threading.Condition()
        self._finished: OrderedDict[K, R] = OrderedDict()
        self._failed: OrderedDict[K, str] = OrderedDict()
        self._jobs: dict[K, J] = {}  # queued or running
        self._line: list[J] = []  # queued, first come first
        self._running = 0

    # ---------------------------------------------------------------- what a kind of work says
    def _work(self, job: J) -> R:
        """Do ``job``'s work (in its thread) and return its result; raise one of :attr:`stopped_errors` where it
        stopped when asked."""
        raise NotImplementedError

    def _state_of(self, result: R) -> str:
        """How a returned result ends its job: :data:`DONE` (a kind of work whose result says it stopped early
        returns :data:`STOPPED` here)."""
        return DONE

    def _kept(self, job: J) -> dict[K, R]:
        """What a job that ended :data:`DONE` keeps for everyone: its result under its key."""
        return {} if job.result is None else {job.key: job.result}

    # ---------------------------------------------------------------- asking
    def finished(self, key: K) -> R | None:
        """The finished result for ``key``, or ``None``."""
        with self._lock:
            found = self._finished.get(key)
            if found is not None:
                self._finished.move_to_end(key)
            return found

    def failure(self, key: K) -> str | None:
        """Why the last job of ``key`` failed (``"RuntimeError: ..."``), or ``None``."""
        with self._lock:
            return self._failed.get(key)

    def job(self, key: K) -> J | None:
        """The queued or running job of ``key``, if any (one that is being stopped does not count)."""
        with self._lock:
            job = self._jobs.get(key)
            return None if job is None or job.stop.is_set() else job

    def place(self, job: J) -> int:
        """``job``'s place in line (1 = next), 0 once it runs or has ended."""
        with self._lock:
            return self._line.index(job) + 1 if job in self._line else 0

    def _request(self, key: K, new_job: Callable[[], J], watcher: str | None = None) -> R | J | None:
        """The finished result for ``key``, or its job (joined, or ``new_job()`` started in line) that ``watcher``, if
        given, now watches; ``None`` when :attr:`max_waiting` jobs already wait."""
        with self._lock:
            found = self._finished.get(key)
            if found is not None:
                self._finished.move_to_end(key)
                return found
            job = self._jobs.get(key)
            if job is None or job.stop.is_set():
                if self.max_waiting is not None and len(self._line) >= self.max_waiting:
                    return None
                self._failed.pop(key, None)
                job = new_job()
                self._jobs[key] = job
                self._line.append(job)
                job.thread = threading.Thread(target=self._run, args=(job,), name=type(self).__name__, daemon=True)
                job.thread.start()
            if watcher is not None:
                job.watchers.add(watcher)
            return job

    def stop(self, job: J) -> None:
        """Stop ``job`` for everyone: a running one before its next step, a queued one at once."""
        with self._lock:
            self._stop(job)

    def leave(self, job: J, watcher: str) -> None:
        """``watcher`` stops watching ``job``; with nobody left watching, the job stops."""
        with self._lock:
            job.watchers.discard(watcher)
            if not job.watchers and not job.finished.is_set():
                self._stop(job)

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop every job and wait for their threads."""
        with self._lock:
            jobs = list(self._jobs.values())
            for job in jobs:
                job.watchers.clear()
                self._stop(job)
        for job in jobs:
            if job.thread is not None:
                job.thread.join(timeout)

    # ---------------------------------------------------------------- the worker
    def _stop(self, job: J) -> None:
        """Ask ``job`` to stop (hold the lock); a queued one leaves the line and ends at once."""
        job.stop.set()
        if job in self._line:
            self._line.remove(job)
            self._end(job, STOPPED)

    def _run(self, job: J) -> None:
        with self._lock:
            while job.state == QUEUED and (self._line[0] is not job or self._running >= self.max_running):
                self._lock.wait()
            if job.state != QUEUED:  # left the line before its turn
                return
            self._line.remove(job)
            self._running += 1
            job.state = RUNNING
            self.started += 1
            self._lock.notify_all()
        state = FAILED
        try:
            job.result = self._work(job)
        except self.stopped_errors:
            state = STOPPED
        except Exception as error:  # reported to whoever watches, never raised in a thread
            job.error = f"{type(error).__name__}: {error}"
        else:
            state = self._state_of(job.result)
        with self._lock:
            self._running -= 1
            self._end(job, state)

    def _end(self, job: J, state: str) -> None:
        """Close ``job`` (hold the lock): its state, out of the active jobs, what it keeps kept, its watchers woken."""
        job.state = state
        if self._jobs.get(job.key) is job:
            del self._jobs[job.key]
        if state == DONE:
            for key, result in self._kept(job).items():
                self._finished[key] = result
                self._finished.move_to_end(key)
        elif state == FAILED:
            self._failed[job.key] = job.error
            self._failed.move_to_end(job.key)
        for kept in (self._finished, self._failed):
            while len(kept) > self.kept:
                kept.popitem(last=False)
        job.finished.set()
        self._lock.notify_all()


S = TypeVar("S", bound=JobService[Any, Any, Any])

_SERVICES: dict[str, JobService[Any, Any, Any]] = {}  # the process's services by name
_SERVICES_LOCK = threading.Lock()


def shared_service(name: str, make: Callable[[], S]) -> S:
    """The process's service ``name``, made by ``make`` on first use (every one is stopped at exit)."""
    with _SERVICES_LOCK:
        if name not in _SERVICES:
            _SERVICES[name] = make()
        return cast(S, _SERVICES[name])


def shutdown_all(timeout: float = 10.0) -> None:
    """Stop every job of every service of the process and wait for their threads."""
    with _SERVICES_LOCK:
        services = list(_SERVICES.values())
    for service in services:
        service.shutdown(timeout)


atexit.register(shutdown_all)
