"""Accelerator vs CPU: the same weights and inputs give the same forward and trace on the suite's device
(``device`` fixture: cuda or mps, what ``auto`` picks or ``ATTN_PLAYGROUND_TEST_DEVICE`` names) as on the CPU.

Skipped, with the reason, where the suite runs on the CPU (this CPU-only machine, or the switch set to cpu).
Tolerance: float32 on the GPU may use TF32 or another summation order; TF32 is switched off here
and 1e-5 absolute on O(1) numbers (d_model 64) covers the different order; float64 agrees to 1e-12
(not on mps, which has no float64). The flash kernel test needs the suite to run on cuda.
"""

from __future__ import annotations

import pytest
import torch

from mha import AttentionConfig
from mha.masks import causal_mask, padding_mask, to_additive_mask
from mha.pipeline import run_attention
from mha.sources.seeded import build_model


@pytest.fixture
def accelerator(device: torch.device) -> torch.device:
    """The suite's device where it is an accelerator; the test is skipped where the suite runs on the CPU."""
    if device.type == "cpu":
        pytest.skip("the suite runs on the CPU (no GPU here, or ATTN_PLAYGROUND_TEST_DEVICE=cpu)")
    return device


TOL = {torch.float32: {"rtol": 1e-5, "atol": 1e-5}, torch.float64: {"rtol": 0.0, "atol": 1e-12}}


@pytest.fixture(autouse=True)
def _no_tf32(monkeypatch):
    monkeypatch.setattr(torch.backends.cuda.matmul, "allow_tf32", False)
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding", "additive", "empty_rows"])
def test_gpu_forward_and_trace_match_cpu(dtype, mask_kind, accelerator):
    if accelerator.type == "mps" and dtype == torch.float64:
        pytest.skip("mps has no float64")
    length = 7
    cpu_model = build_model(64, 8, seed=3, dtype=dtype)
    gpu_model = build_model(64, 8, seed=3, device=accelerator, dtype=dtype)
    x = torch.randn(2, length, 64, generator=torch.Generator().manual_seed(4)).to(dtype)
    keep = {
        "none": None,
        "causal": causal_mask(length),
        "padding": padding_mask(["a", "b", "c", "d", "e", "[PAD]", "[PAD]"]),
        "additive": causal_mask(length),
        "empty_rows": causal_mask(length).clone().index_fill_(2, torch.tensor([0, 4]), False),
    }[mask_kind]
    mask = to_additive_mask(keep, dtype) if mask_kind == "additive" else keep
    gpu_mask = None if mask is None else mask.to(accelerator)

    with torch.inference_mode():
        out_cpu, w_cpu = cpu_model(x, x, x, mask=mask)
        x_gpu = x.to(accelerator)
        out_gpu, w_gpu = gpu_model(x_gpu, x_gpu, x_gpu, mask=gpu_mask)
        trace_cpu = cpu_model.forward_traced(x, x, x, mask=mask)
        trace_gpu = gpu_model.forward_traced(x_gpu, x_gpu, x_gpu, mask=gpu_mask)

    assert out_gpu.device.type == w_gpu.device.type == accelerator.type
    torch.testing.assert_close(out_gpu.cpu(), out_cpu, **TOL[dtype])
    torch.testing.assert_close(w_gpu.cpu(), w_cpu, **TOL[dtype])
    cpu_tensors = trace_cpu.tensors()
    for name, tensor in trace_gpu.tensors().items():
        assert tensor.device.type == accelerator.type, name
        torch.testing.assert_close(tensor.cpu(), cpu_tensors[name], **TOL[dtype], msg=name)


def test_run_attention_on_the_accelerator_matches_cpu(accelerator):
    text = "小明喜欢打球，他放学后去了操场"
    on_gpu = run_attention(AttentionConfig(d_model=64, num_heads=4, mask_type="causal", tokens=text))  # auto
    on_cpu = run_attention(AttentionConfig(d_model=64, num_heads=4, mask_type="causal", tokens=text, device="cpu"))
    assert on_gpu.device.device == accelerator and on_gpu.device.fallback_reason is None
    assert on_gpu.trace.output.device.type == accelerator.type
    torch.testing.assert_close(on_gpu.trace.output.cpu(), on_cpu.trace.output, **TOL[torch.float32])
    torch.testing.assert_close(on_gpu.trace.weights.cpu(), on_cpu.trace.weights, **TOL[torch.float32])


@pytest.mark.cuda
def test_the_flash_kernel_runs_on_the_gpu_and_gives_the_tiled_loops_numbers(accelerator):
    """F.scaled_dot_product_attention under sdpa_kernel(FLASH_ATTENTION) in float16, causal, against lab 13's tiled
    loop in float64 on the CPU; and lab 13's backend list says flash runs here. float16 keeps 11 bits: 1e-2 absolute
    on outputs of size about 1 (lab 13's BACKEND_TOLERANCE for CUDA)."""
    if accelerator.type != "cuda":
        pytest.skip("the flash kernel runs on cuda only")
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.functional import scaled_dot_product_attention

    from mha.experiments.flash import tiled_attention
    from mha.experiments.flash_cost import sdpa_backends

    q, k, v = torch.randn(3, 1, 4, 200, 64, generator=torch.Generator().manual_seed(5))  # (1, H, L, d) each
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        out = scaled_dot_product_attention(*(x.cuda().half() for x in (q, k, v)), is_causal=True)  # (1, H, L, d)
    expected, _ = tiled_attention(q.double(), k.double(), v.double(), 64, 48, causal_mask(200))
    torch.testing.assert_close(out.double().cpu(), expected, rtol=0.0, atol=1e-2)
    rows = {row.backend: row for row in sdpa_backends(length=256, num_heads=2, head_dim=64, repeats=3, device="cuda")}
    assert rows["flash"].runs and rows["flash"].median_ms > 0 and rows["flash"].max_diff < 1e-2
