"""What the charts are made of: token labels, how many cells to send, the per-head summary and its Arrow."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
import torch

from components import frames


def test_token_labels_stay_distinct_when_tokens_repeat():
    labels = frames.token_labels(["the", "cat", "sat", "on", "the", "mat"])
    assert labels == ["0:the", "1:cat", "2:sat", "3:on", "4:the", "5:mat"]
    assert len(set(labels)) == len(labels)


@pytest.mark.parametrize(("count", "dtype"), [(1, np.int8), (128, np.int8), (129, np.int16), (1024, np.int16)])
def test_index_dtype_is_the_smallest_that_holds_the_indices(count, dtype):
    assert frames.index_dtype(count) == dtype
    assert np.iinfo(frames.index_dtype(count)).max >= count - 1


def test_feature_budget_caps_the_cells():
    assert frames.feature_budget(rows=11, width=64, parts=3) == 64
    shown = frames.feature_budget(rows=128, width=1024, parts=3)
    assert 3 * 128 * shown <= frames.CELL_BUDGET
    assert frames.feature_budget(rows=100_000, width=8) == 1


def test_concat_columns_take_the_first_features_of_every_head():
    assert frames.concat_columns(d_model=12, num_heads=3, per_head=2).tolist() == [0, 1, 4, 5, 8, 9]
    assert frames.concat_columns(d_model=8, num_heads=2, per_head=10).tolist() == list(range(8))


def test_head_summary_entropy_and_peak():
    uniform = torch.full((1, 2, 4), 0.25)  # log2(4) = 2 bits
    one_hot = torch.tensor([[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]])  # 0 bits
    summary = frames.head_summary_frame(torch.cat([uniform, one_hot]))
    assert summary["head"].tolist() == [0, 1]
    np.testing.assert_allclose(summary["entropy"], [2.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(summary["max_weight"], [0.25, 1.0], atol=1e-6)


def test_head_summary_leaves_out_fully_masked_rows():
    weights = torch.tensor([[[0.5, 0.5], [0.0, 0.0]]])  # row 1 had no allowed key
    summary = frames.head_summary_frame(weights)
    np.testing.assert_allclose(summary["entropy"], [1.0], atol=1e-6)
    np.testing.assert_allclose(summary["max_weight"], [0.5], atol=1e-6)


def test_arrow_bytes_are_compact_and_carry_nan_as_null():
    weights = torch.softmax(torch.randn(16, 64, 64), dim=-1)  # (H, Lq, Lk)
    frame = frames.head_summary_frame(weights)
    frame.loc[3, "entropy"] = float("nan")
    sent = frames.arrow_bytes(frame)
    table = pa.ipc.open_stream(sent).read_all()
    assert table.schema.metadata is None  # no pandas metadata travels
    assert table.column_names == ["head", "entropy", "max_weight"]
    assert str(table.schema.field("head").type) == "int8"
    assert table.column("entropy").null_count == 1
    np.testing.assert_array_equal(table.column("max_weight").to_numpy(), frame["max_weight"].to_numpy())
