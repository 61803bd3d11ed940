"""The GPU bench section (``bench/gpu.py``): it says so where no GPU is, and its tables are computed right.

Times are never asserted (ARCHITECTURE.md, Tests and benchmarks): the ratios are checked on times given to the
row builders, and a quick run pinned to the CPU (``device="cpu"``: the same code path as on a GPU, tiny sizes)
checks that every table is filled and its ratios follow its own medians.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
import torch

import bench.gpu as gpu
import mha.training
from bench.__main__ import main as bench_main
from bench.engine import BASELINE


def test_without_a_gpu_the_section_says_nothing_was_measured_and_exits_0(monkeypatch, capsys):
    monkeypatch.setattr(gpu, "available_devices", lambda: ["cpu"])
    assert bench_main(["--only", "gpu", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "no GPU here (cuda and mps unavailable): nothing measured" in out
    assert "Engine on" not in out  # nothing was measured on the CPU instead


def test_the_gpu_is_cuda_before_mps(monkeypatch):
    monkeypatch.setattr(gpu, "available_devices", lambda: ["cuda", "mps", "cpu"])
    assert gpu.accelerator() == torch.device("cuda")
    monkeypatch.setattr(gpu, "available_devices", lambda: ["mps", "cpu"])
    assert gpu.accelerator() == torch.device("mps")


def test_a_device_that_is_not_here_is_refused(monkeypatch):
    monkeypatch.setattr(gpu, "available_devices", lambda: ["cpu"])
    with pytest.raises(ValueError, match="cuda is not available here"):
        gpu.run(quick=True, device="cuda")


def test_the_engine_rows_divide_by_nn_mha_at_the_same_dtype_and_length():
    medians = {
        ("float32", 512): {"ours: forward": 0.003, BASELINE: 0.002, "F.sdpa": 0.001},
        ("bfloat16", 512): {"ours: forward": 0.004, BASELINE: 0.008},
        ("float32", 8192): None,
    }
    assert gpu.attention_rows(medians) == [
        ("float32", "512", "ours: forward", "3.000", "1.50x"),
        ("float32", "512", BASELINE, "2.000", "1.00x"),
        ("float32", "512", "F.sdpa", "1.000", "0.50x"),
        ("bfloat16", "512", "ours: forward", "4.000", "0.50x"),
        ("bfloat16", "512", BASELINE, "8.000", "1.00x"),
        ("float32", "8192", "all", "out of memory", ""),
    ]


def test_a_device_row_divides_the_device_time_by_the_cpu_time():
    row = gpu.versus_row("page", torch.device("cuda"), 0.021, 0.015, 1e-3)
    assert row == ("page", "cuda", "21", "15", "1.40x")


def test_time_call_returns_the_result_and_at_least_the_time_spent():
    seconds, result = gpu.time_call(lambda: time.sleep(0.02) or "done", torch.device("cpu"))
    assert result == "done"
    assert 0.02 <= seconds < 2.0


def test_time_in_turn_warms_up_then_takes_the_median_of_the_rounds(monkeypatch):
    calls = {"a": 0, "b": 0}
    scripted = {"a": iter([3.0, 1.0, 2.0]), "b": iter([5.0, 9.0, 7.0])}

    def fake_time_call(fn, device):
        name = fn()
        return next(scripted[name]), name

    def counted(name):
        def fn():
            calls[name] += 1
            return name

        return fn

    monkeypatch.setattr(gpu, "time_call", fake_time_call)
    cpu = torch.device("cpu")
    medians = gpu.time_in_turn({"a": (counted("a"), cpu), "b": (counted("b"), cpu)}, rounds=3)
    assert medians == {"a": 2.0, "b": 7.0}
    assert calls == {"a": gpu.WARMUP + 3, "b": gpu.WARMUP + 3}


def test_trainings_run_on_the_device_then_the_cpu_where_train_takes_a_device(monkeypatch):
    """``meta`` stands for the GPU: each side's training gets its own device, time and steps."""
    trained = []

    def fake_train(task, d_model, num_heads, seed, *, device="cpu", max_steps=None):
        trained.append((task, d_model, num_heads, device, max_steps))
        return None, SimpleNamespace(steps=5 if device == "meta" else 7)

    def fake_time_call(fn, device):
        return {"meta": 2.0, "cpu": 4.0}[device.type], fn()

    monkeypatch.setattr(mha.training, "train", fake_train)
    monkeypatch.setattr(gpu, "time_call", fake_time_call)
    table = gpu._trainings(torch.device("meta"), quick=True)
    steps = gpu.QUICK_TRAINING_STEPS
    assert trained == [
        ("digits", 64, 2, "meta", steps),
        ("digits", 64, 2, "cpu", steps),
        ("reviews", 64, 2, "meta", steps),
        ("reviews", 64, 2, "cpu", steps),
    ]
    assert table.rows == (
        ("digits", "meta", "2", "4", "0.50x", "5 / 7"),
        ("reviews", "meta", "2", "4", "0.50x", "5 / 7"),
    )


def _ratio(cell: str) -> float:
    return float(cell.removesuffix("x"))


def test_a_quick_run_pinned_to_the_cpu_fills_every_table():
    """The GPU's code path on the CPU (timings pinned there): every row is there and its ratio follows its times."""
    engine, page, trainings, generation = gpu.run(quick=True, device="cpu")

    names = set()
    for dtype in ("float32", "bfloat16"):
        for length in gpu.QUICK_LENGTHS:
            rows = {row[2]: row for row in engine.rows if row[:2] == (dtype, str(length))}
            names.add(frozenset(rows))
            assert rows[BASELINE][4] == "1.00x"
            baseline = float(rows[BASELINE][3])
            for row in rows.values():
                assert float(row[3]) > 0
                assert _ratio(row[4]) == pytest.approx(float(row[3]) / baseline, rel=0.02, abs=0.01), row
    assert names == {frozenset({"ours: forward", "ours: forward_traced", BASELINE, "nn.MHA need_weights=False",
                                "F.sdpa + same projections"})}  # fmt: skip

    for table in (page, generation):
        for _, device, on_device, on_cpu, ratio in table.rows:
            assert device == "cpu"
            assert _ratio(ratio) == pytest.approx(float(on_device) / float(on_cpu), rel=0.02, abs=0.01)
    assert len(page.rows) == 1
    assert [row[0] for row in generation.rows] == list(gpu.QUICK_MODELS)

    assert [row[0] for row in trainings.rows] == ["digits", "reviews"]
    for row in trainings.rows:
        assert row[5] == f"{gpu.QUICK_TRAINING_STEPS} / {gpu.QUICK_TRAINING_STEPS}"
