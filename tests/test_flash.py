"""Lab 13's engine: tiled attention (FlashAttention's online softmax, tile by tile) against independent formulas.

The reference is written here from the definition, softmax(QKᵀ/√d)V with masked_fill, in float64; the running max
and sum are recomputed from the scores column by column; skipped tiles are counted cell by cell in Python.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest
import torch
from streamlit.testing.v1 import AppTest
from torch.nn import functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.profiler import ProfilerActivity, profile

from components.i18n import t
from components.labs import flash as flash_lab
from components.labs.measure import Measured
from mha.experiments.flash import count_skipped, flash_inputs, tile_ranges, tiled_attention, tiled_run
from mha.experiments.flash_cost import BACKENDS, measure_memory, sdpa_backends

F64_ATOL = 1e-12


def reference(q, k, v, mask=None):
    """softmax(QKᵀ/√d)V, masked cells -inf; a row with nothing to attend gives zeros."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, L, L)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)  # an all -inf row: 0/0 -> 0
    return weights @ v  # (B, H, L, d)


def random_qkv(length, batch=2, heads=3, d=5, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(3, batch, heads, length, d, generator=generator, dtype=torch.float64)


def causal(length):
    return torch.ones(length, length, dtype=torch.bool).tril().view(1, 1, length, length)


@pytest.mark.parametrize("is_causal", [False, True])
def test_the_labs_run_is_the_engines_scores_tiles_and_difference(is_causal):
    """Lab 13's numbers come from mha.experiments.flash: the scores q kᵀ/√d (NaN where blocked), every tile of
    the loops, the tiles whose cells are all blocked, and the tiled output's difference from softmax attention."""
    tokens = ["the", "cat", "sat", "on", "the", "mat", "today"]
    run = tiled_run(tokens, 8, 3, 2, is_causal, 5)
    q, k, _ = flash_inputs(tokens, 8, 5)  # (1, 1, L, d) each
    expected = torch.einsum("id,jd->ij", q[0, 0].double(), k[0, 0].double()) / math.sqrt(8)  # (L, L), float64
    rows, cols = torch.meshgrid(torch.arange(7), torch.arange(7), indexing="ij")
    blocked = (cols > rows) if is_causal else torch.zeros(7, 7, dtype=torch.bool)
    assert torch.equal(run.scores.isnan(), blocked)
    torch.testing.assert_close(run.scores[~blocked].double(), expected[~blocked], rtol=0, atol=1e-5)
    assert len(run.steps) == math.ceil(7 / 3) * math.ceil(7 / 2)
    # a tile is skipped when every cell is blocked: its first column beyond its last row, causally
    skipped = sum(c0 > r1 - 1 for r0, r1 in tile_ranges(7, 3) for c0, _ in tile_ranges(7, 2)) if is_causal else 0
    assert run.skipped == skipped and sum(step.skipped for step in run.steps) == skipped
    assert run.difference < 1e-5  # float32 tiles against float32 softmax attention: rounding only


def test_the_labs_page_computes_no_scores_of_its_own():
    """The page body draws what mha.experiments.flash computed: it imports neither torch nor the attention core."""
    source = Path(flash_lab.__file__).read_text(encoding="utf-8")
    assert not re.search(r"^(import torch|from torch|from mha\.functional|from mha\.masks)", source, re.MULTILINE)


SIZES = [(12, 4, 3), (12, 4, 4), (13, 5, 3), (7, 7, 7), (7, 16, 2), (10, 1, 10), (9, 2, 1)]


@pytest.mark.parametrize(("length", "block_q", "block_k"), SIZES, ids=[f"L{n}-q{a}-k{b}" for n, a, b in SIZES])
@pytest.mark.parametrize("masked", [False, True], ids=["no-mask", "causal"])
def test_tiled_equals_softmax_attention_in_float64(length, block_q, block_k, masked):
    q, k, v = random_qkv(length)
    mask = causal(length) if masked else None
    out, steps = tiled_attention(q, k, v, block_q, block_k, mask)
    assert out.shape == q.shape and out.dtype == torch.float64
    torch.testing.assert_close(out, reference(q, k, v, mask), rtol=0, atol=F64_ATOL)
    assert len(steps) == math.ceil(length / block_q) * math.ceil(length / block_k)


def test_a_row_whose_first_tile_is_all_masked_has_no_nan():
    length, block_q, block_k = 8, 4, 3
    q, k, v = random_qkv(length, batch=1, heads=1)
    mask = causal(length).clone()
    mask[..., 1, :block_k] = False  # row 1 sees nothing in tile 0 (rows 0, 2, 3 do: the tile is read)
    mask[..., 2, :] = False  # row 2 sees nothing at all
    out, steps = tiled_attention(q, k, v, block_q, block_k, mask)
    assert not out.isnan().any()
    torch.testing.assert_close(out, reference(q, k, v, mask), rtol=0, atol=F64_ATOL)
    first = next(s for s in steps if s.query_block == 0 and s.tile == 0)
    assert not first.skipped
    assert first.m[0, 0, 1] == float("-inf") and first.l[0, 0, 1] == 0  # m stays -inf, l 0
    assert not any(s.m.isnan().any() or s.l.isnan().any() or s.O.isnan().any() for s in steps)
    assert (out[0, 0, 2] == 0).all()  # a row with nothing to attend: zeros, as masked_softmax gives


@pytest.mark.parametrize(("length", "block_q", "block_k"), SIZES, ids=[f"L{n}-q{a}-k{b}" for n, a, b in SIZES])
@pytest.mark.parametrize("masked", [False, True], ids=["no-mask", "causal"])
def test_m_and_l_after_each_tile_are_the_running_max_and_sum_of_the_scores_seen(length, block_q, block_k, masked):
    q, k, v = random_qkv(length, seed=1)
    mask = causal(length) if masked else None
    _, steps = tiled_attention(q, k, v, block_q, block_k, mask)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, L, L)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    for step in steps:
        (r0, r1), (_, c1) = step.rows, step.columns
        seen = scores[:, :, r0:r1, :c1]  # every column up to the end of this tile
        running_max = seen.amax(dim=-1)  # (B, H, Br)
        safe = running_max.masked_fill(running_max == float("-inf"), 0.0)
        running_sum = torch.exp(seen - safe.unsqueeze(-1)).sum(dim=-1)
        torch.testing.assert_close(step.m, running_max, rtol=0, atol=F64_ATOL)
        torch.testing.assert_close(step.l, running_sum, rtol=1e-12, atol=F64_ATOL)
        torch.testing.assert_close(step.O, torch.exp(seen - safe.unsqueeze(-1)) @ v[:, :, :c1], rtol=1e-12,
                                   atol=F64_ATOL)  # fmt: skip


def test_the_rescale_factor_is_exp_of_the_drop_from_the_old_max():
    q, k, v = random_qkv(11, seed=2)
    _, steps = tiled_attention(q, k, v, 3, 2)
    grew = 0
    for step in (s for s in steps if s.tile > 0):
        torch.testing.assert_close(step.rescale, torch.exp(step.m_before - step.m), rtol=1e-12, atol=0)
        assert (step.rescale <= 1).all()
        grew += int((step.m > step.m_before).sum())
    assert grew > 0  # some tile did bring a larger score, and its factor is below 1


def independent_skip_count(mask, length, block_q, block_k):
    """Tiles whose every cell is False, counted cell by cell."""
    keep = mask.reshape(-1, length, length).any(dim=0).tolist()  # may-attend anywhere in the batch and heads
    count = 0
    for r0 in range(0, length, block_q):
        for c0 in range(0, length, block_k):
            cells = [
                keep[r][c] for r in range(r0, min(r0 + block_q, length)) for c in range(c0, min(c0 + block_k, length))
            ]
            count += not any(cells)
    return count


@pytest.mark.parametrize(("length", "block_q", "block_k"), SIZES, ids=[f"L{n}-q{a}-k{b}" for n, a, b in SIZES])
def test_skipped_tiles_are_exactly_the_all_masked_ones(length, block_q, block_k):
    q, k, v = random_qkv(length, batch=1, heads=1)
    mask = causal(length)
    _, steps = tiled_attention(q, k, v, block_q, block_k, mask)
    expected = independent_skip_count(mask, length, block_q, block_k)
    assert sum(s.skipped for s in steps) == expected == count_skipped(mask, length, block_q, block_k)
    for step in steps:
        if step.skipped:  # above the diagonal: its first column is past its last row
            assert step.columns[0] >= step.rows[1]
            torch.testing.assert_close(step.m, step.m_before, rtol=0, atol=0)
    _, unmasked = tiled_attention(q, k, v, block_q, block_k)
    assert not any(s.skipped for s in unmasked) and count_skipped(None, length, block_q, block_k) == 0


def test_block_ranges_cover_every_position_once_and_bad_sizes_are_refused():
    for length, block in [(12, 5), (12, 4), (3, 8)]:
        ranges = tile_ranges(length, block)
        covered = [i for start, stop in ranges for i in range(start, stop)]
        assert covered == list(range(length))
        assert all(stop - start <= block for start, stop in ranges)
    with pytest.raises(ValueError, match="block size"):
        tile_ranges(5, 0)
    q, k, v = random_qkv(4)
    with pytest.raises(ValueError, match="bool"):
        tiled_attention(q, k, v, 2, 2, torch.zeros(1, 1, 4, 4))
    with pytest.raises(ValueError, match="shape"):
        tiled_attention(q, k[..., :3, :], v, 2, 2)


def test_float32_tiled_is_within_the_pages_tolerance_of_float64_attention():
    from components.labs.flash import TOLERANCE

    q, k, v = flash_inputs(list("the cat sat on the mat"), 8)
    assert q.shape == (1, 1, len("the cat sat on the mat"), 8) and q.dtype == torch.float32
    out, _ = tiled_attention(q, k, v, 4, 3, causal(q.shape[2]))
    exact = reference(q.double(), k.double(), v.double(), causal(q.shape[2]))
    assert float((out.double() - exact).abs().max()) <= TOLERANCE


def test_the_tiled_loop_needs_far_less_memory_than_full_attention_at_length():
    rows = measure_memory([128, 512], block=32, num_heads=2, head_dim=16)
    peak = {(row.method, row.length): row.peak_bytes for row in rows}
    full_scores = 4 * 2 * 512 * 512  # the (H, L, L) float32 scores full attention must hold
    assert peak[("full", 512)] >= full_scores
    assert peak[("tiled", 512)] < full_scores / 4
    assert peak[("full", 512)] / peak[("full", 128)] > 8  # like L² (16x) rather than L (4x)


def _sdpa_kernels(profiled) -> set[str]:
    """The aten attention kernels a profile saw (``aten::_scaled_dot_product_flash_attention_for_cpu``, ...)."""
    return {event.name for event in profiled.events() if event.name.startswith("aten::_scaled_dot_product")}


def _kernels_under(backend: SDPBackend) -> set[str] | None:
    """What ``F.scaled_dot_product_attention`` runs on the CPU under torch's own ``backend``; ``None``: refused."""
    q = torch.randn(1, 2, 64, 16)
    try:
        with profile(activities=[ProfilerActivity.CPU]) as profiled, sdpa_kernel(backend):
            F.scaled_dot_product_attention(q, q, q, is_causal=True)
    except RuntimeError:
        return None
    return _sdpa_kernels(profiled)


def test_sdpa_backends_run_the_backend_they_name_as_torch_runs_it_here():
    """Each row is the backend the lab names (torch's enum: every CPU/CUDA backend, each once), runs exactly when
    torch runs that backend here, and its call ran that backend's own kernel (not the math one under another name)."""
    from components.labs.flash import _backend_name

    named = [SDPBackend.__members__[_backend_name(backend)] for backend in BACKENDS]
    every = set(SDPBackend.__members__.values()) - {SDPBackend.ERROR, SDPBackend.OVERRIDEABLE}
    assert set(named) == every and len(set(named)) == len(named)
    # pinned to the CPU: a timing, and math's difference of exactly 0 is the CPU's (test_cuda covers cuda's backends)
    with profile(activities=[ProfilerActivity.CPU]) as profiled:
        rows = sdpa_backends(length=64, num_heads=2, head_dim=16, repeats=3, device="cpu")
    seen = _sdpa_kernels(profiled)
    assert [row.backend for row in rows] == list(BACKENDS)
    math_row = rows[0]
    assert math_row.runs and math_row.median_ms > 0 and math_row.max_diff == 0
    kernels = {}
    for row, backend in zip(rows, named, strict=True):
        own = _kernels_under(backend)
        assert row.runs == (own is not None), (row.backend, row.reason)
        assert row.runs == (row.median_ms is not None) and row.runs == (row.reason == "")
        if row.runs:
            assert row.max_diff < 1e-5 and own <= seen, (row.backend, own, seen)
            kernels[row.backend] = own
    assert len({frozenset(each) for each in kernels.values()}) == len(kernels)  # each ran its own kernel


# ---------------------------------------------------------------- the page's numbers and plurals
PAGE = str(Path(__file__).resolve().parents[1] / "pages/13_flash.py")
ONE_MANY = r"\b1 (tokens|rows|columns|tiles|query blocks|backends|measurements|entries|keys)\b"


def _page_text(at: AppTest) -> str:
    boxes = [*at.markdown, *at.caption, *at.info, *at.success, *at.warning, *at.error]
    return "\n".join([b.value for b in boxes] + [m.label for m in at.metric] + [e.label for e in at.expander])


def test_counts_are_written_as_a_person_would_in_both_languages():
    """One token, a one-row block, a one-column tile: no "1 tokens", no "rows 10–10", in English or Chinese."""
    for lang in ("en", "zh"):
        at = AppTest.from_file(PAGE, default_timeout=120)
        at.query_params["lang"] = lang
        at.run()
        cases = [("hello", 4, 3, 0, 0), ("a b c d e f g h i j k", 5, 1, 2, 10), ("a b c d e f g h i j k", 4, 3, 2, 3)]
        for text, block_q, block_k, block, tile in cases:
            at.text_input(key="flash_tokens").set_value(text)
            at.slider(key="flash_block_q").set_value(block_q)
            at.slider(key="flash_block_k").set_value(block_k).run()
            if block or tile:  # a single block or tile: its slider is disabled
                at.slider(key="flash_block").set_value(block)
                at.slider(key="flash_tile").set_value(tile).run()
            assert not at.exception, at.exception
            shown = _page_text(at)
            assert not re.search(ONE_MANY, shown), (lang, text, shown)
            assert not re.search(r"\b(\d+)–\1\b", shown), (lang, text, shown)
            length = len(text.split())
            blocks_q, tiles = -(-length // min(block_q, length)), -(-length // min(block_k, length))
            tiles_word = "tile" if blocks_q * tiles == 1 else "tiles"
            if lang == "en":
                assert f"= {blocks_q * tiles} {tiles_word}." in shown
            if (block_q, block) == (5, 2):  # the last query block is row 10 alone, tile 10 is key 10 alone
                one_row = t("lab.flash.span.row", lang=lang, start=10)
                one_key = t("lab.flash.span.key", lang=lang, start=10)
                assert one_row in shown and one_key in shown, shown


def _fake_cost(refused: int):
    memory = pd.DataFrame(
        [{"method": m, "length": n, "peak_bytes": (4 if m == "full" else 1) * n * n // (1 if m == "full" else n),
          "largest_cells": n * n} for n in (512, 1024) for m in ("full", "tiled")]
    )  # fmt: skip
    backends = [
        {"backend": b, "device": "cpu", "runs": i < 4 - refused, "median_ms": 1.0 if i < 4 - refused else None,
         "max_diff": 0.0 if i < 4 - refused else None, "reason": "" if i < 4 - refused else "no kernel"}
        for i, b in enumerate(BACKENDS)
    ]  # fmt: skip
    return Measured({"memory": memory, "backends": backends}, "12:00:00", 1, ())


def test_the_refused_backends_and_the_measurements_taken_are_counted_in_words(monkeypatch):
    for lang in ("en", "zh"):
        for refused in (1, 2):
            monkeypatch.setattr(flash_lab, "cost_frames", lambda *_, r=refused: _fake_cost(r))
            at = AppTest.from_file(PAGE, default_timeout=120)
            at.query_params["lang"] = lang
            at.run()
            at.button(key="flash_measure").click().run()
            assert not at.exception, at.exception
            labels = [e.label for e in at.expander]
            title = t("lab.flash.refused_one", lang=lang) if refused == 1 else t("lab.flash.refused", lang=lang,
                                                                                  count=refused)  # fmt: skip
            assert title in labels
            shown = _page_text(at)
            assert t("lab.common.measured_at_once", lang=lang, time="12:00:00") in shown
            assert "measurement(s)" not in shown and not re.search(ONE_MANY, shown)
