"""The one shape of background work (:mod:`mha.jobs`): what the trainings and the generations share.

A gated stand-in kind of work makes the order of events explicit: each job waits for its key's gate (or its Stop)
and returns the key doubled, fails where told, or says it stopped.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import pytest

from mha import jobs
from mha.jobs import DONE, FAILED, QUEUED, RUNNING, STOPPED, Job, JobService


class StoppedError(Exception):
    """The stand-in work's way of saying it stopped when asked."""


@dataclass(eq=False)
class GatedJob(Job[int, int]):
    gate: threading.Event = field(default_factory=threading.Event)


class Gated(JobService[int, int, GatedJob]):
    """Job k returns 2 k once its gate opens; k < 0 fails; a Stop raises :class:`StoppedError`; k = 99 returns -1, which
    :meth:`_state_of` calls stopped (a result that says it stopped midway, as a generation's does)."""

    stopped_errors = (StoppedError,)

    def __init__(self, max_running: int = 1, kept: int = 2, max_waiting: int | None = None) -> None:
        super().__init__(max_running, kept, max_waiting)

    def request(self, key: int, watcher: str | None = None) -> int | GatedJob | None:
        return self._request(key, lambda: GatedJob(key), watcher)

    def _work(self, job: GatedJob) -> int:
        while not job.gate.wait(0.01):
            if job.stop.is_set():
                raise StoppedError
        if job.key < 0:
            raise RuntimeError(f"no room for {job.key}")
        return -1 if job.key == 99 else 2 * job.key

    def _state_of(self, result: int) -> str:
        return STOPPED if result == -1 else DONE


@pytest.fixture
def service():
    made = Gated()
    yield made
    made.shutdown()


def _running(job: GatedJob) -> None:
    for _ in range(500):
        if job.state == RUNNING:
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"job {job.key} never ran")


def test_a_key_asked_twice_is_one_job_and_its_result_is_kept_for_everyone(service):
    first = service.request(1, "a")
    assert isinstance(first, GatedJob) and service.request(1, "b") is first and first.watchers == {"a", "b"}
    _running(first)
    first.gate.set()
    assert first.finished.wait(5) and first.state == DONE and first.result == 2
    assert service.request(1) == 2 and service.finished(1) == 2 and service.job(1) is None
    assert service.started == 1


def test_jobs_wait_in_line_know_their_place_and_a_full_line_refuses():
    service = Gated(max_running=1, max_waiting=2)
    try:
        running = service.request(1)
        assert isinstance(running, GatedJob)
        _running(running)  # out of the line
        second, third = service.request(2), service.request(3)
        assert isinstance(second, GatedJob) and isinstance(third, GatedJob)
        assert [service.place(job) for job in (running, second, third)] == [0, 1, 2]
        assert (second.state, third.state) == (QUEUED, QUEUED)
        assert service.request(4) is None  # two wait already
        running.gate.set()
        _running(second)
        assert service.place(third) == 1 and isinstance(service.request(4), GatedJob)  # room in line again
    finally:
        service.shutdown()


def test_stop_ends_a_queued_job_at_once_and_a_running_one_before_its_next_step(service):
    running, queued = service.request(1), service.request(2)
    assert isinstance(running, GatedJob) and isinstance(queued, GatedJob)
    _running(running)
    service.stop(queued)
    assert queued.finished.is_set() and queued.state == STOPPED and service.place(queued) == 0
    service.stop(running)
    assert service.job(1) is None  # being stopped: not joined any more
    assert running.finished.wait(5) and running.state == STOPPED and running.result is None
    assert service.finished(1) is None and service.finished(2) is None  # a stopped job keeps nothing


def test_a_job_being_stopped_is_not_joined_and_its_end_leaves_the_new_one_alone(service):
    old = service.request(1, "a")
    assert isinstance(old, GatedJob)
    _running(old)
    service.leave(old, "a")  # its last watcher: it stops
    new = service.request(1, "b")
    assert isinstance(new, GatedJob) and new is not old
    assert old.finished.wait(5) and old.state == STOPPED
    assert service.job(1) is new  # the old job's end did not drop the new one
    _running(new)
    new.gate.set()
    assert new.finished.wait(5) and service.finished(1) == 2


def test_a_watcher_leaving_stops_the_job_only_when_nobody_is_left(service):
    job = service.request(1, "a")
    assert isinstance(job, GatedJob)
    service.request(1, "b")
    _running(job)
    service.leave(job, "a")
    assert not job.stop.is_set()
    service.leave(job, "b")
    assert job.stop.is_set() and job.finished.wait(5) and job.state == STOPPED


def test_a_result_that_says_it_stopped_ends_its_job_stopped_and_is_not_shared(service):
    job = service.request(99)
    assert isinstance(job, GatedJob)
    _running(job)
    job.gate.set()
    assert job.finished.wait(5) and job.state == STOPPED and job.result == -1  # its own result stays with it
    assert service.finished(99) is None


def test_a_failure_is_reported_kept_by_key_and_forgotten_when_asked_again(service):
    job = service.request(-1)
    assert isinstance(job, GatedJob)
    _running(job)
    job.gate.set()
    assert job.finished.wait(5) and job.state == FAILED and job.error == "RuntimeError: no room for -1"
    assert service.failure(-1) == "RuntimeError: no room for -1" and service.finished(-1) is None
    again = service.request(-1)
    assert isinstance(again, GatedJob) and service.failure(-1) is None  # asked again: the old message goes
    service.stop(again)


def test_results_and_failures_are_kept_least_recently_used_out():
    service = Gated(max_running=1, kept=2)
    try:
        for key in (1, 2, -1, -2, -3):
            job = service.request(key)
            assert isinstance(job, GatedJob)
            job.gate.set()
            assert job.finished.wait(5)
        assert service.failure(-1) is None and service.failure(-2) and service.failure(-3)
        assert service.finished(1) == 2 and service.finished(2) == 4
        assert service.finished(1) == 2  # 1 used last: 2 goes first
        job = service.request(3)
        assert isinstance(job, GatedJob)
        job.gate.set()
        assert job.finished.wait(5)
        assert service.finished(2) is None and service.finished(1) == 2 and service.finished(3) == 6
    finally:
        service.shutdown()


def test_the_process_makes_each_service_once_by_name_and_stops_them_all_at_exit(monkeypatch):
    monkeypatch.setattr(jobs, "_SERVICES", {})
    made: list[Gated] = []

    def make() -> Gated:
        made.append(Gated())
        return made[-1]

    first, other = jobs.shared_service("a", make), jobs.shared_service("b", make)
    assert jobs.shared_service("a", make) is first and len(made) == 2 and other is not first
    running = [service.request(1) for service in made]
    for job in running:
        assert isinstance(job, GatedJob)
        _running(job)
    jobs.shutdown_all()
    assert all(job.finished.is_set() and job.state == STOPPED for job in running)  # type: ignore[union-attr]
    assert all(not job.thread.is_alive() for job in running)  # type: ignore[union-attr]


def test_the_trainings_and_the_generations_are_two_services_of_the_one_registry(monkeypatch):
    from components.generating import SERVICE_NAME as GENERATIONS
    from components.generating import generation_service
    from mha.training.service import SERVICE_NAME as TRAININGS
    from mha.training.service import training_service

    monkeypatch.setattr(jobs, "_SERVICES", {})
    trainings, generations = training_service(), generation_service()
    assert isinstance(trainings, JobService) and isinstance(generations, JobService)
    assert {TRAININGS: trainings, GENERATIONS: generations} == jobs._SERVICES
    assert training_service() is trainings and generation_service() is generations
