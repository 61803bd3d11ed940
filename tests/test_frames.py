"""What the charts are made of: token labels, how many cells to send, the Vega-Lite charts' frames and their Arrow."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from components import frames


def test_token_labels_stay_distinct_when_tokens_repeat():
    labels = frames.token_labels(["the", "cat", "sat", "on", "the", "mat"])
    assert labels == ["0:the", "1:cat", "2:sat", "3:on", "4:the", "5:mat"]
    assert len(set(labels)) == len(labels)


def test_tokens_frame_maps_positions_to_labels():
    table = frames.tokens_frame(["小", "明", "小"])
    assert table["pos"].tolist() == [0, 1, 2]
    assert table["label"].tolist() == ["0:小", "1:明", "2:小"]


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


def test_attention_frame_puts_every_value_in_its_cell():
    scores = torch.arange(2 * 3 * 4, dtype=torch.float32).reshape(2, 3, 4)  # (H, Lq, Lk)
    frame = frames.attention_frame(scores)
    assert len(frame) == 24
    for row in frame.itertuples():
        assert row.value == scores[row.head, row.q, row.k].item()
    assert not frame["masked"].any()


def test_attention_frame_turns_minus_inf_into_nan_and_keeps_the_mask():
    scores = torch.tensor([[[0.5, float("-inf")], [0.25, -1.0]]])  # (1, 2, 2)
    blocked = torch.isneginf(scores)
    frame = frames.attention_frame(scores, blocked)
    assert frame["masked"].tolist() == [False, True, False, False]
    assert math.isnan(frame["value"].iloc[1])
    assert frame["value"].iloc[[0, 2, 3]].tolist() == [0.5, 0.25, -1.0]


def test_attention_frame_broadcasts_a_mask_shared_by_all_heads():
    keep = torch.ones(3, 3, dtype=torch.bool).tril()  # (Lq, Lk)
    frame = frames.attention_frame(torch.zeros(2, 3, 3), ~keep)
    per_head = frame[frame["head"] == 1]
    assert per_head["masked"].tolist() == (~keep).reshape(-1).tolist()


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


def test_arrow_tables_are_compact_and_carry_nan_as_null():
    weights = torch.softmax(torch.randn(16, 64, 64), dim=-1)  # (H, Lq, Lk)
    frame = frames.head_summary_frame(weights)
    frame.loc[3, "entropy"] = float("nan")
    table = frames.arrow_table(frame)
    assert table.schema.metadata is None  # no pandas metadata travels
    assert table.column_names == ["head", "entropy", "max_weight"]
    assert str(table.schema.field("head").type) == "int8"
    assert table.column("entropy").null_count == 1
    np.testing.assert_array_equal(table.column("max_weight").to_numpy(), frame["max_weight"].to_numpy())
