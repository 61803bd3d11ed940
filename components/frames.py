"""What the charts are made of (pure: no Streamlit): token labels, how many cells to draw, the head summary.

The heatmaps take tensors straight (:mod:`components.heatmap`); this module decides how much of
them to send (:data:`CELL_BUDGET`, :func:`feature_budget`, :func:`concat_columns`), names the
tokens (:func:`token_labels`), and makes the long-form frames of the charts that stay Vega-Lite,
sent as compact Arrow (:func:`arrow_table`):

    head summary     head, entropy, max_weight    (the main page, when the all-heads grid is too big)
    attention frame  head, q, k, value, masked    (the training views' head grids; value NaN where -inf)
    tokens frame     pos, label                   (their token labels, looked up by position)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import torch
from torch import Tensor

from mha.tokens import token_labels

__all__ = [
    "CELL_BUDGET",
    "arrow_table",
    "attention_frame",
    "concat_columns",
    "feature_budget",
    "head_summary_frame",
    "index_dtype",
    "to_numpy",
    "token_labels",
    "tokens_frame",
]

#: Cells one chart may hold: what the page sends stays small (4 bytes a cell) for slider-driven use.
CELL_BUDGET = 20_000


def index_dtype(count: int) -> np.dtype:
    """The smallest signed integer type that holds indices ``0 .. count - 1``."""
    return np.dtype(np.int8) if count <= 128 else np.dtype(np.int16)


def to_numpy(tensor: Tensor) -> np.ndarray:
    """A float32 NumPy copy of a tensor on any device."""
    return tensor.detach().to("cpu", torch.float32).numpy()


def tokens_frame(tokens: Sequence[str]) -> pd.DataFrame:
    """The lookup table of token labels: columns ``pos`` and ``label``."""
    return pd.DataFrame({"pos": np.arange(len(tokens), dtype=index_dtype(len(tokens))), "label": token_labels(tokens)})


def arrow_table(frame: pd.DataFrame) -> pa.Table:
    """The frame as the Arrow table the page sends (:mod:`components.vega`): no index, no pandas metadata,
    NaN as null.

    Built column by column from NumPy (about 0.1 ms for a small frame, a third faster than
    ``pa.Table.from_pandas``, whose metadata the browser does not need).
    """
    return pa.Table.from_arrays(
        [_arrow_column(frame[name]) for name in frame.columns], names=[str(name) for name in frame.columns]
    )


def _arrow_column(column: pd.Series) -> pa.Array:
    """Numbers straight from NumPy (NaN -> null); anything else (the token labels) through pyarrow."""
    return pa.array(column.to_numpy(), from_pandas=True) if column.dtype.kind in "biuf" else pa.array(column)


def attention_frame(scores: Tensor | np.ndarray, blocked: Tensor | np.ndarray | None = None) -> pd.DataFrame:
    """Per-head (Lq x Lk) matrices as one long frame.

    Args:
        scores: scores or weights of shape (H, Lq, Lk); ``-inf`` cells become NaN
            (Vega cannot take infinities).
        blocked: bool (H, Lq, Lk) (or broadcastable), ``True`` where the mask blocked the cell;
            ``None`` marks nothing.

    Returns:
        Columns ``head``, ``q``, ``k`` (small ints), ``value`` (float32), ``masked`` (bool), row-major.
    """
    values = to_numpy(scores) if isinstance(scores, Tensor) else np.asarray(scores, dtype=np.float32)
    heads, length_q, length_k = values.shape
    if blocked is None:
        masked = np.zeros(values.shape, dtype=bool)
    else:
        blocked_np = blocked.detach().cpu().numpy() if isinstance(blocked, Tensor) else np.asarray(blocked)
        masked = np.broadcast_to(blocked_np.astype(bool), values.shape)
    head, q, k = np.indices(values.shape)  # 3 x (H, Lq, Lk)
    flat = values.reshape(-1)
    return pd.DataFrame(
        {
            "head": head.reshape(-1).astype(index_dtype(heads)),
            "q": q.reshape(-1).astype(index_dtype(length_q)),
            "k": k.reshape(-1).astype(index_dtype(length_k)),
            "value": np.where(np.isfinite(flat), flat, np.nan).astype(np.float32),
            "masked": masked.reshape(-1),
        }
    )


def feature_budget(rows: int, width: int, parts: int = 1, budget: int = CELL_BUDGET) -> int:
    """How many of ``width`` feature columns fit ``parts`` heatmaps of ``rows`` rows in ``budget`` cells (>= 1)."""
    return max(1, min(width, budget // max(1, rows * parts)))


def concat_columns(d_model: int, num_heads: int, per_head: int) -> np.ndarray:
    """The first ``per_head`` feature indices of every head's block in a (L, d_model) concatenation."""
    d_k = d_model // num_heads
    shown = min(per_head, d_k)
    return (np.arange(num_heads)[:, None] * d_k + np.arange(shown)[None, :]).reshape(-1)  # (H * shown,)


def head_summary_frame(weights: Tensor | np.ndarray) -> pd.DataFrame:
    """Per head: mean entropy (bits) of the query rows and mean of each row's largest weight.

    Rows with no allowed key (all-zero weights) are left out of both means.

    Args:
        weights: (H, Lq, Lk) softmax weights.
    """
    w = to_numpy(weights) if isinstance(weights, Tensor) else np.asarray(weights, dtype=np.float32)
    live = w.sum(axis=-1) > 0  # (H, Lq)
    logs = np.log2(np.where(w > 0, w, 1.0))  # (H, Lq, Lk); 0·log 0 counts as 0
    entropy = -(w * logs).sum(axis=-1)  # (H, Lq)
    peak = w.max(axis=-1)  # (H, Lq)
    rows = np.maximum(live.sum(axis=-1), 1)  # (H,)
    return pd.DataFrame(
        {
            "head": np.arange(w.shape[0]).astype(index_dtype(w.shape[0])),
            "entropy": ((entropy * live).sum(axis=-1) / rows).astype(np.float32),
            "max_weight": ((peak * live).sum(axis=-1) / rows).astype(np.float32),
        }
    )
