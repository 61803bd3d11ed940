"""Exports of a trace: .npz round trip, CSV zip values, file names, and the export panel."""

from __future__ import annotations

import csv
import io
import json
import math
import zipfile

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from components.i18n import t
from components.panels.export import SCRIPT_KEY, downloads
from mha.config import ROPE_BASE, AttentionConfig
from mha.export import DIMENSIONS, export_basename, trace_csv_zip, trace_npz
from mha.pipeline import run_attention

SMALL = {"d_model": 8, "num_heads": 2}  # device auto: the suite's device; the files hold the values on the CPU
ODD_TEXT = 'He said "hi, there" — 小明,\\ it\'s [PAD]'
#: Pages of today's layers: grouped-query heads (fewer key/value heads: k_heads has 1 head, q_heads 2) and/or RoPE.
TODAY = [
    {"num_kv_heads": 1, "positional": "rope", "mask_type": "causal", "tokens": "the cat sat on the mat"},
    {"num_kv_heads": 1, "mask_type": "padding", "tokens": ODD_TEXT},
    {"positional": "rope", "mask_type": "none", "tokens": "小明喜欢打球", "dtype": "float64"},
]


def _run(**overrides):
    return run_attention(AttentionConfig(**(SMALL | overrides)))


def _numpy(tensor):
    return tensor.detach().cpu().numpy()


@pytest.mark.parametrize(
    "overrides",
    [
        {"mask_type": "none", "tokens": "the cat sat"},
        {"mask_type": "causal", "tokens": "the cat sat on the mat"},
        {"mask_type": "padding", "tokens": ODD_TEXT},
        {"mask_type": "window", "window": 1, "tokens": "小明喜欢打球", "dtype": "float64"},
        *TODAY,
    ],
)
def test_npz_round_trip(overrides):
    run = _run(**overrides)
    tensors = run.trace.tensors()
    with np.load(io.BytesIO(trace_npz(run)), allow_pickle=False) as data:
        weights = {f"model.{name}.{part}" for name in ("W_q", "W_k", "W_v", "W_o") for part in ("weight", "bias")}
        rope = {"model.rope_base"} if run.config.positional == "rope" else set()
        assert set(data.files) == set(tensors) | weights | {"attend.scale", "tokens", "config"} | rope
        if rope:
            assert data["model.rope_base"].dtype == np.float64 and float(data["model.rope_base"]) == ROPE_BASE
        for name, tensor in run.model.state_dict().items():  # the file holds the run's own tensors: the same bytes
            np.testing.assert_array_equal(data[f"model.{name}"], _numpy(tensor), err_msg=name)
        for name, tensor in tensors.items():
            array = data[name]
            assert array.shape == tuple(tensor.shape), name
            assert array.dtype == _numpy(tensor).dtype, name
            np.testing.assert_array_equal(array, _numpy(tensor), err_msg=name)
        assert tuple(data["tokens"].tolist()) == run.tokens
        assert float(data["attend.scale"]) == pytest.approx(1 / math.sqrt(run.config.d_k), rel=1e-15)
        assert AttentionConfig(**json.loads(str(data["config"]))) == run.config
        if run.config.mask_type == "none":
            assert "attend.mask" not in data.files
        else:
            assert data["attend.mask"].dtype == np.bool_


def test_npz_keeps_minus_infinity_of_blocked_scores():
    run = _run(mask_type="causal", tokens="one two three four")
    with np.load(io.BytesIO(trace_npz(run))) as data:
        masked = data["attend.masked_scores"]  # (1, H, L, L)
    length = len(run.tokens)
    upper = np.triu(np.ones((length, length), dtype=bool), k=1)  # j > i: blocked by the causal mask
    assert np.isneginf(masked[..., upper]).all()
    assert np.isfinite(masked[..., ~upper]).all()


def _read_long_csv(raw: bytes) -> tuple[list[str], list[list[str]]]:
    assert raw.startswith(b"\xef\xbb\xbf"), "UTF-8 byte-order mark for spreadsheets"
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8-sig"))))
    return rows[0], rows[1:]


@pytest.mark.parametrize(
    "overrides",
    [
        {"mask_type": "causal", "tokens": "the cat sat on the mat"},
        {"mask_type": "padding", "tokens": ODD_TEXT, "dtype": "float64"},
        *TODAY,
    ],
)
def test_csv_zip_values_equal_the_tensors(overrides):
    run = _run(**overrides)
    tensors = run.trace.tensors()
    with zipfile.ZipFile(io.BytesIO(trace_csv_zip(run))) as archive:
        assert set(archive.namelist()) == {f"{name}.csv" for name in tensors} | {"tokens.csv", "config.json"}
        for name, tensor in tensors.items():
            expected = _numpy(tensor)
            header, rows = _read_long_csv(archive.read(f"{name}.csv"))
            assert header == [*DIMENSIONS[name], "value"], name
            assert len(rows) == expected.size, name
            rebuilt = np.full(expected.shape, np.nan, dtype=np.float64)
            for row in rows:
                rebuilt[tuple(int(k) for k in row[:-1])] = float(row[-1])
            assert not np.isnan(rebuilt).any(), f"{name}: a cell is missing"
            # 9 significant digits read back float32 exactly, 17 float64: no tolerance needed
            np.testing.assert_array_equal(rebuilt.astype(expected.dtype), expected, err_msg=name)
        token_rows = list(csv.reader(io.StringIO(archive.read("tokens.csv").decode("utf-8-sig"))))
        config = json.loads(archive.read("config.json").decode("utf-8"))
    assert token_rows[0] == ["position", "token"]
    assert token_rows[1:] == [[str(i), token] for i, token in enumerate(run.tokens)]
    assert config.pop("scale") == pytest.approx(1 / math.sqrt(run.config.d_k), rel=1e-15)
    assert config.pop("rope_base", None) == (ROPE_BASE if run.config.positional == "rope" else None)
    assert AttentionConfig(**config) == run.config


def test_csv_mask_is_zero_one_and_masked_scores_minus_inf():
    run = _run(mask_type="padding", tokens="a b [PAD]")
    with zipfile.ZipFile(io.BytesIO(trace_csv_zip(run))) as archive:
        _, mask_rows = _read_long_csv(archive.read("attend.mask.csv"))
        _, score_rows = _read_long_csv(archive.read("attend.masked_scores.csv"))
    assert [row[-1] for row in mask_rows] == ["1", "1", "0"]  # shape (1, 1, 1, 3): the pad key is blocked
    blocked = [row for row in score_rows if row[3] == "2"]  # column j == 2, the [PAD] key
    assert blocked and all(row[-1] == "-inf" for row in blocked)


def test_every_trace_tensor_has_named_dimensions():
    seen = set()
    for overrides in ({"mask_type": "none"}, {"mask_type": "window"}, *TODAY):
        for name, tensor in _run(**overrides).trace.tensors().items():
            assert len(DIMENSIONS[name]) == tensor.dim(), name
            seen.add(name)
    # every name is met by one of the runs but step 2's queries: they are step 1's q_heads or q_rotated, named once
    assert set(DIMENSIONS) - seen == {"attend.queries"}, set(DIMENSIONS) - seen


def test_key_value_heads_keep_their_own_count_in_the_csv():
    """With one key/value head, k_heads' long form has h = 0 only, q_heads' and step 2's repeated keys h = 0 and 1."""
    run = _run(**TODAY[0])
    with zipfile.ZipFile(io.BytesIO(trace_csv_zip(run))) as archive:
        heads = {
            name: {row[1] for row in _read_long_csv(archive.read(f"{name}.csv"))[1]}
            for name in ("project.q_heads", "project.k_heads", "project.k_rotated", "project.v_heads", "attend.keys")
        }
    assert heads == {
        "project.q_heads": {"0", "1"},
        "project.k_heads": {"0"},
        "project.k_rotated": {"0"},
        "project.v_heads": {"0"},
        "attend.keys": {"0", "1"},
    }


def test_basename_names_the_configuration():
    assert export_basename(AttentionConfig(d_model=512, num_heads=8, mask_type="causal")) == (
        "attention_d512_h8_causal_seed0"
    )
    assert export_basename(AttentionConfig(d_model=64, num_heads=4, mask_type="window", window=3, seed=7)) == (
        "attention_d64_h4_window3_seed7"
    )
    assert export_basename(AttentionConfig(d_model=64, num_heads=4, positional="none")) == "attention_d64_h4_none_seed0"
    assert export_basename(AttentionConfig(d_model=64, num_heads=4, num_kv_heads=4)) == "attention_d64_h4_none_seed0"


@pytest.mark.parametrize(
    ("overrides", "name"),
    [
        ({"num_kv_heads": 2, "positional": "rope", "mask_type": "causal"}, "attention_d512_h8kv2_rope_causal_seed0"),
        ({"num_kv_heads": 1}, "attention_d512_h8kv1_none_seed0"),
        ({"positional": "rope", "mask_type": "window", "window": 3}, "attention_d512_h8_rope_window3_seed0"),
        (
            {"weights": "trained", "task": "induction", "d_model": 64, "num_kv_heads": 2, "positional": "rope"},
            "attention_trained_induction_layer0_d64_h8kv2_rope_none_seed0",
        ),
    ],
)
def test_basename_names_grouped_query_heads_and_rope(overrides, name):
    assert export_basename(AttentionConfig(**overrides)) == name


def test_downloads_are_lazy_and_build_valid_files():
    run = _run(mask_type="causal", tokens="a b c")
    npz, pt, csv_zip = downloads(run)
    assert (npz.file_name, pt.file_name, csv_zip.file_name) == (
        "attention_d8_h2_causal_seed0.npz",
        "attention_d8_h2_causal_seed0.pt",
        "attention_d8_h2_causal_seed0_csv.zip",
    )
    assert callable(npz.build) and callable(pt.build) and callable(csv_zip.build)
    with np.load(io.BytesIO(npz.build())) as data:
        np.testing.assert_array_equal(data["out.output"], _numpy(run.trace.output))  # the run's bytes
    assert torch.equal(torch.load(io.BytesIO(pt.build()), weights_only=True)["out.output"], run.trace.output.cpu())
    with zipfile.ZipFile(io.BytesIO(csv_zip.build())) as archive:
        assert archive.testzip() is None
        assert "out.output.csv" in archive.namelist()


def _export_app(lang: str) -> None:
    import streamlit as st

    from components.panels import Results, ValueParts, export
    from mha.config import AttentionConfig

    st.session_state["lang"] = lang
    parts = ValueParts()
    export.render(parts)
    parts.fill(Results(AttentionConfig(d_model=8, num_heads=2, mask_type="causal", tokens="a b c")))


@pytest.mark.parametrize(("lang", "label"), [("en", "Download tensors (.npz)"), ("zh", "下载张量（.npz）")])
def test_render_export_app(lang, label):
    at = AppTest.from_function(_export_app, args=(lang,), default_timeout=30).run()
    assert not at.exception
    buttons = at.get("download_button")
    assert [button.key for button in buttons] == ["export_npz", "export_pt", "export_csv"]
    assert buttons[0].label == label
    assert all(button.proto.deferred_file_id for button in buttons), "bytes are built on click, not on every run"
    [folded] = at.expander
    assert folded.label == ("Reproduce in PyTorch" if lang == "en" else "用 PyTorch 复现")
    assert not at.code, "the script is drawn only once its expander is opened"
    at.session_state[SCRIPT_KEY] = True  # what opening the expander in the browser sets
    at.run()
    [code] = at.code
    assert code.language == "python"
    assert "nn.MultiheadAttention" in code.value
    assert 'TOKENS = ["a", "b", "c"]' in code.value


def _trained_export_app() -> None:
    import dataclasses

    import streamlit as st

    from components.panels import Results, ValueParts, export
    from components.panels.export import SCRIPT_KEY
    from mha.config import TRAINED, AttentionConfig
    from mha.pipeline import run_attention

    run = run_attention(AttentionConfig(d_model=8, num_heads=2, tokens="a b c"))
    st.session_state[SCRIPT_KEY] = True  # the script's expander open
    as_trained = dataclasses.replace(run, config=dataclasses.replace(run.config, weights=TRAINED, task="previous"))
    results = Results(as_trained.config)
    results.__dict__["run"] = as_trained  # the run as computed (Results.run is a cached_property): no training here
    parts = ValueParts()
    export.render(parts)
    parts.fill(results)


def test_a_script_for_weights_it_cannot_make_says_it_reads_the_pt_download():
    at = AppTest.from_function(_trained_export_app, default_timeout=30).run()
    assert not at.exception
    [code] = at.code
    assert 'PT = "attention_trained_previous_layer0_d8_h2_none_seed0.pt"' in code.value and "numpy" not in code.value
    assert t("export.code.caption_pt") in [c.value for c in at.caption]
