"""The process-wide training service: each spec trained once, shared, a few at a time, in line, stoppable.

A gated fake trainer makes the order of events explicit (it trains until the test opens its
gate); one test runs real trainings from several threads at once.
"""

from __future__ import annotations

import threading
import time

import pytest
from tolerances import assert_same_training

from mha.config import TRAINED, WeightSpec
from mha.training.loop import TrainingStoppedError, train
from mha.training.service import TrainedModel, TrainingJob, TrainingService


def spec(seed: int = 0, task: str = "previous") -> WeightSpec:
    return WeightSpec(TRAINED, 16, 2, seed, task=task)


class GatedTrainer:
    """Trains ``spec`` until its gate opens (one step every 10 ms), counting the trainings it began."""

    def __init__(self) -> None:
        self.gates: dict[WeightSpec, threading.Event] = {}
        self.started: list[WeightSpec] = []
        self.fail: set[WeightSpec] = set()

    def gate(self, key: WeightSpec) -> threading.Event:
        return self.gates.setdefault(key, threading.Event())

    def __call__(self, key, on_step, should_stop):
        self.started.append(key)
        step = 0
        while not self.gate(key).wait(0.01):
            if should_stop():
                raise TrainingStoppedError(step)
            step += 1
            on_step(step, 1.0 / step, 0.5)
        if key in self.fail:
            raise RuntimeError("out of memory")
        return ("model", key), ("history", key)


def _wait(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.fixture
def gated():
    trainer = GatedTrainer()
    service = TrainingService(max_running=1, trainer=trainer)
    yield service, trainer
    for gate in trainer.gates.values():
        gate.set()
    service.shutdown()


def test_two_sessions_asking_for_one_model_share_one_training(gated):
    service, trainer = gated
    first = service.request(spec(), "session-a")
    second = service.request(spec(), "session-b")
    assert isinstance(first, TrainingJob) and second is first
    assert first.watchers == {"session-a", "session-b"}
    _wait(lambda: service.progress(first).step >= 3)
    trainer.gate(spec()).set()
    assert first.finished.wait(5)
    assert trainer.started == [spec()] and service.started == 1
    finished = service.request(spec(), "session-c")  # a third session gets the model itself
    assert isinstance(finished, TrainedModel) and finished.model == ("model", spec())
    assert service.finished(spec()) is finished and service.job(spec()) is None


def test_trainings_wait_in_line_and_know_their_place(gated):
    service, trainer = gated
    jobs = [service.request(spec(seed), f"s{seed}") for seed in range(3)]
    _wait(lambda: service.progress(jobs[0]).state == "running")
    assert [(service.progress(j).state, service.progress(j).place) for j in jobs] == [
        ("running", 0),
        ("queued", 1),
        ("queued", 2),
    ]
    trainer.gate(spec(0)).set()
    _wait(lambda: service.progress(jobs[1]).state == "running")
    assert service.progress(jobs[2]).place == 1
    assert trainer.started == [spec(0), spec(1)]  # first come, first served; one at a time


def test_a_training_stops_when_nobody_watches_it_any_more(gated):
    service, trainer = gated
    running = service.request(spec(0), "a")
    service.request(spec(0), "b")
    queued = service.request(spec(1), "a")
    _wait(lambda: service.progress(running).step >= 2)
    service.leave(queued, "a")  # never started: out of the line at once
    assert queued.finished.is_set() and queued.state == "stopped" and service.job(spec(1)) is None
    service.leave(running, "a")  # b still watches
    time.sleep(0.05)
    assert service.progress(running).state == "running"
    service.leave(running, "b")
    assert service.job(spec(0)) is None  # being stopped: nobody joins it any more
    assert running.finished.wait(5) and running.state == "stopped"
    assert service.finished(spec(0)) is None  # a stopped training keeps nothing
    again = service.request(spec(0), "c")  # asking again trains anew
    assert again is not running
    trainer.gate(spec(0)).set()
    assert again.finished.wait(5) and again.state == "done"
    assert spec(1) not in trainer.started


def test_a_failed_training_is_reported_and_keeps_nothing(gated):
    service, trainer = gated
    trainer.fail.add(spec())
    trainer.gate(spec()).set()
    job = service.request(spec(), "a")
    assert job.finished.wait(5)
    progress = service.progress(job)
    assert (progress.state, progress.error) == ("failed", "RuntimeError: out of memory")
    assert service.finished(spec()) is None
    with pytest.raises(RuntimeError, match="failed"):
        service.result(spec())


def test_finished_models_are_kept_most_recent_first():
    service = TrainingService(cache_size=2, trainer=lambda key, on_step, stop: (key, None))
    for seed in range(3):
        service.result(spec(seed))
    assert service.finished(spec(0)) is None
    assert service.finished(spec(1)) is not None and service.finished(spec(2)) is not None
    service.result(spec(1))  # used: now the most recent
    service.result(spec(3))
    assert service.finished(spec(2)) is None and service.finished(spec(1)) is not None
    assert service.started == 4


def test_threads_asking_for_the_same_model_at_once_train_it_once():
    def short(key, on_step, should_stop):
        return train(key.task, key.d_model, key.num_heads, key.seed, max_steps=20, on_step=on_step)

    service = TrainingService(trainer=short)
    results: list[TrainedModel] = []
    start = threading.Barrier(4)

    def ask() -> None:
        start.wait()
        results.append(service.result(spec(), timeout=120))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(180)
    assert len(results) == 4 and all(result is results[0] for result in results)
    assert service.started == 1
    reference, _ = train("previous", 16, 2, 0, max_steps=20)
    assert_same_training(results[0].model, reference)  # the shared model is the training's
