"""Lab 10: attention inside windows of a patch grid, and the Swin Transformer's shifted windows.

Shape legend: B batch, R × Q the patch grid (rows × columns), N = R·Q patches in row-major
order, M the window's side (M × M patches a window), W = (R / M)·(Q / M) windows, s the shift,
D = d_model, H heads.

Swin (Liu et al. 2021, "Swin Transformer: Hierarchical Vision Transformer using Shifted
Windows") lets each patch attend only inside its window of M × M patches (W-MSA), then, in the
next block, inside windows displaced by s = M / 2 (SW-MSA) so that information crosses the
first windows' borders. Displaced windows at the image's edges are smaller; rather than pad them,
Swin rolls the grid by (−s, −s) (``torch.roll``): the grid is again cut into W windows of M × M,
but a window at the far edges now holds patches from up to four places of the image that were not
neighbours. A mask keeps them apart: the rolled grid is split into 3 × 3 regions (rows
``[0, R − M)``, ``[R − M, R − s)``, ``[R − s, R)``, columns alike) and a patch may attend to a patch
of its own region only. Rolling back by (s, s) puts every output where its patch was.

Masks follow the project's convention: bool, ``True`` = may attend.

Cost, in multiply–adds as the Swin paper counts them (its eq. 1 and 2, for an h × w grid, C = D):
global attention 4·N·D² + 2·N²·D, window attention 4·N·D² + 2·M²·N·D: quadratic against linear in N.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from mha.experiments.timing import GrowthBreak, Steady, Timing, growth_breaks, measure_steady, time_calls
from mha.module import MultiHeadAttention
from mha.sources.seeded import build_model
from mha.vision.images import resize, to_channels
from mha.vision.patches import patchify

__all__ = [
    "COST_METHODS",
    "CostRow",
    "TimingRow",
    "cost_rows",
    "cyclic_shift",
    "grid_mask",
    "image_tokens",
    "measure_windows_steady",
    "multiply_adds",
    "query_weights",
    "shift_regions",
    "shifted_window_mask",
    "window_attention",
    "window_ids",
    "window_merge",
    "window_partition",
]

COST_METHODS = ("global", "windows")


def _check_grid(rows: int, columns: int, window: int, shift: int = 0) -> None:
    if window < 1 or rows % window or columns % window:
        raise ValueError(f"window {window} must divide the grid's rows {rows} and columns {columns}")
    if not 0 <= shift < window:
        raise ValueError(f"shift {shift} must be from 0 to window - 1 = {window - 1}")


def window_ids(rows: int, columns: int, window: int) -> Tensor:
    """Which window each patch is in: windows of ``window`` × ``window`` numbered row by row.

    Shape:
        (R, Q) int64, values 0 .. W − 1.
    """
    _check_grid(rows, columns, window)
    r = torch.arange(rows, device="cpu").view(-1, 1) // window  # (R, 1)
    c = torch.arange(columns, device="cpu").view(1, -1) // window  # (1, Q)
    return r * (columns // window) + c  # (R, Q)


def cyclic_shift(grid: Tensor, shift: int, dims: tuple[int, int] = (1, 2)) -> Tensor:
    """Roll a grid up and left by ``shift`` (``torch.roll`` by (−s, −s)): patch (i, j) moves to (i − s, j − s) mod size.

    Roll back with ``cyclic_shift(grid, -shift)``.
    """
    return torch.roll(grid, shifts=(-shift, -shift), dims=dims)


def window_partition(x: Tensor, window: int) -> Tensor:
    """Cut a grid of vectors into windows, each a short sequence of M² patches in row-major order.

    Shape:
        (B, R, Q, D) -> (B·W, M², D), windows row by row, batch first.
    """
    batch, rows, columns, dim = x.shape
    _check_grid(rows, columns, window)
    x = x.reshape(batch, rows // window, window, columns // window, window, dim)  # (B, R/M, M, Q/M, M, D)
    x = x.permute(0, 1, 3, 2, 4, 5)  # (B, R/M, Q/M, M, M, D)
    return x.reshape(-1, window * window, dim)  # (B·W, M², D)


def window_merge(windows: Tensor, rows: int, columns: int, window: int) -> Tensor:
    """Put windows back on the grid: the inverse of :func:`window_partition`.

    Shape:
        (B·W, M², D) -> (B, R, Q, D).
    """
    _check_grid(rows, columns, window)
    dim = windows.size(-1)
    x = windows.reshape(-1, rows // window, columns // window, window, window, dim)  # (B, R/M, Q/M, M, M, D)
    x = x.permute(0, 1, 3, 2, 4, 5)  # (B, R/M, M, Q/M, M, D)
    return x.reshape(-1, rows, columns, dim)  # (B, R, Q, D)


def shift_regions(rows: int, columns: int, window: int, shift: int) -> Tensor:
    """The region of each place of the *rolled* grid: 3 bands of rows × 3 bands of columns.

    A band counts the edges a position is past: row i is in band 0 below R − M, band 1 from R − M,
    band 2 from R − s (where the rolled-in rows from the top lie). Region = 3·row band + column band.
    With ``shift`` 0 every place is in region 0.

    Shape:
        (R, Q) int64, values 0 .. 8.
    """
    _check_grid(rows, columns, window, shift)
    if shift == 0:
        return torch.zeros(rows, columns, dtype=torch.long, device="cpu")
    r = torch.arange(rows, device="cpu")
    c = torch.arange(columns, device="cpu")
    row_band = (r >= rows - window).long() + (r >= rows - shift).long()  # (R,)
    column_band = (c >= columns - window).long() + (c >= columns - shift).long()  # (Q,)
    return 3 * row_band.view(-1, 1) + column_band.view(1, -1)  # (R, Q)


def shifted_window_mask(rows: int, columns: int, window: int, shift: int) -> Tensor:
    """The keep-mask of every window of the rolled grid: two patches may attend when they share a region.

    Shape:
        (W, M², M²) bool, ``True`` = may attend; all ``True`` when ``shift`` is 0.
    """
    regions = shift_regions(rows, columns, window, shift)  # (R, Q)
    per_window = window_partition(regions.view(1, rows, columns, 1), window)[..., 0]  # (W, M², 1) -> (W, M²)
    return per_window.unsqueeze(2) == per_window.unsqueeze(1)  # (W, M², 1) == (W, 1, M²) -> (W, M², M²)


def grid_mask(rows: int, columns: int, window: int, shift: int) -> Tensor:
    """The same rule as one mask over the whole grid, in the patches' own (unrolled) order.

    Patch n may attend to patch m when, after the roll, both lie in the same window and the same
    region: what :func:`window_attention` computes, as a mask :class:`MultiHeadAttention` takes.

    Shape:
        (1, 1, N, N) bool, ``True`` = may attend.
    """
    windows = window_ids(rows, columns, window)  # (R, Q): the rolled grid's windows
    regions = shift_regions(rows, columns, window, shift)  # (R, Q): the rolled grid's regions
    group = windows * 9 + regions  # (R, Q): one label per (window, region) of the rolled grid
    origin = cyclic_shift(group.unsqueeze(0), -shift)[0].flatten()  # (N,): each patch's label, rolled back
    return (origin.view(-1, 1) == origin.view(1, -1)).view(1, 1, rows * columns, rows * columns)  # (1, 1, N, N)


def window_attention(
    model: MultiHeadAttention, x: Tensor, rows: int, columns: int, window: int, shift: int = 0
) -> tuple[Tensor, Tensor]:
    """Self-attention inside windows (shifted by ``shift``), computed window by window as Swin does.

    Roll by (−s, −s), cut into windows, run ``model`` on every window at once (a batch of windows)
    with :func:`shifted_window_mask`, put the windows back and roll by (s, s).

    Args:
        model: the layer (our :class:`MultiHeadAttention`).
        x: (B, N, D), the patches in row-major order.
        rows, columns: the grid (N = rows·columns).
        window, shift: M and s; M divides rows and columns, 0 <= s < M.

    Shape:
        output (B, N, D); weights (B·W, H, M², M²), the windows of the rolled grid.
    """
    batch, patches, dim = x.shape
    if patches != rows * columns:
        raise ValueError(f"x has {patches} patches; a {rows} × {columns} grid has {rows * columns}")
    grid = cyclic_shift(x.view(batch, rows, columns, dim), shift)  # (B, R, Q, D), rolled
    windows = window_partition(grid, window)  # (B·W, M², D)
    mask = shifted_window_mask(rows, columns, window, shift).to(x.device)  # (W, M², M²)
    mask = mask.repeat(batch, 1, 1).unsqueeze(1)  # (B·W, 1, M², M²): one mask per window, every head
    out, weights = model(windows, windows, windows, mask)  # (B·W, M², D), (B·W, H, M², M²)
    merged = cyclic_shift(window_merge(out, rows, columns, window), -shift)  # (B, R, Q, D), rolled back
    return merged.reshape(batch, patches, dim), weights  # (B, N, D)


def image_tokens(image: Tensor, side: int, patch: int, d_model: int, seed: int = 0) -> Tensor:
    """An image as ``side`` × ``side`` patch vectors: resized to (side·p)², cut, embedded by a seeded linear map.

    Args:
        image: (C, H, W) in [0, 1] (made RGB).
        side: patches along each side; patch: p, pixels along a patch's side.
        d_model: D, the vectors' size; seed: seeds the embedding ~ U(-1/√(3p²), 1/√(3p²)).

    Shape:
        (1, side², D): no [CLS], no positions (the windows are the point, not what a trained model sees).
    """
    pixels = resize(to_channels(image, 3), side * patch, side * patch).unsqueeze(0)  # (1, 3, side·p, side·p)
    patches = patchify(pixels, patch)  # (1, N, 3·p·p)
    generator = torch.Generator().manual_seed(seed)
    bound = 1.0 / patches.size(-1) ** 0.5
    weight = torch.empty(patches.size(-1), d_model, device="cpu").uniform_(
        -bound, bound, generator=generator
    )  # (3·p·p, D)
    return patches @ weight  # (1, N, 3·p·p) @ (3·p·p, D) -> (1, N, D)


def query_weights(model: MultiHeadAttention, x: Tensor, side: int, window: int, shift: int, query: int) -> Tensor:
    """Where patch ``query`` looks under global attention, windows, and shifted windows, every head.

    Args:
        model: the layer; x: (1, N, D) patches of a ``side`` × ``side`` grid.
        window, shift: M and s of the shifted windows (the windows use s = 0).
        query: the patch's index, row-major.

    Shape:
        (3, H, N): [global, windows, shifted windows], each head's weights over the grid's patches.
    """
    masks = (None, grid_mask(side, side, window, 0), grid_mask(side, side, window, shift))
    rows = []
    with torch.inference_mode():
        for mask in masks:
            _, weights = model(x, x, x, mask)  # (1, H, N, N)
            rows.append(weights[0, :, query])  # (H, N)
    return torch.stack(rows)  # (3, H, N)


# ---------------------------------------------------------------- cost
def multiply_adds(method: str, patches: int, d_model: int, window: int) -> int:
    """Multiply–adds of one attention layer on N patches, as the Swin paper counts them (eq. 1, 2).

    ``global``: 4·N·D² (W_q, W_k, W_v, W_o) + 2·N²·D (Q Kᵀ and weights × V);
    ``windows``: 4·N·D² + 2·M²·N·D (each patch meets the M² patches of its window).
    """
    projections = 4 * patches * d_model * d_model
    if method == "global":
        return projections + 2 * patches * patches * d_model
    if method == "windows":
        return projections + 2 * window * window * patches * d_model
    raise ValueError(f"unknown method {method!r}; choose one of {', '.join(COST_METHODS)}")


@dataclass(frozen=True)
class CostRow:
    """One image size: its patch grid and each method's multiply–adds."""

    side: int  # patches along each side of the grid
    patches: int  # N = side²
    global_madds: int
    window_madds: int


def cost_rows(sides: Sequence[int], d_model: int, window: int) -> list[CostRow]:
    """:func:`multiply_adds` of both methods for square grids of ``side`` × ``side`` patches."""
    return [
        CostRow(
            side,
            side * side,
            multiply_adds("global", side * side, d_model, window),
            multiply_adds("windows", side * side, d_model, window),
        )
        for side in sides
    ]


@dataclass(frozen=True)
class TimingRow:
    """One grid measured: global attention and shifted-window attention, seconds per call."""

    side: int
    global_time: Timing
    window_time: Timing


def _timed_rows(calls: dict[int, tuple], repeats: int) -> list[TimingRow]:
    rows = []
    for side, pair in calls.items():
        global_time, window_time = time_calls(pair, repeats)
        rows.append(TimingRow(side, global_time, window_time))
    return rows


def window_breaks(rows: Sequence[TimingRow], d_model: int, window: int) -> list[GrowthBreak]:
    """Where a method's median time grew far faster than its multiply–adds (or fell) as the grid grew."""
    sides = [row.side for row in rows]
    breaks = []
    for method, attribute in zip(COST_METHODS, ("global_time", "window_time"), strict=True):
        seconds = [getattr(row, attribute).median_s for row in rows]
        work = [multiply_adds(method, side * side, d_model, window) for side in sides]
        breaks += growth_breaks(method, sides, seconds, work)
    return breaks


def measure_windows_steady(
    sides: Sequence[int], d_model: int, num_heads: int, window: int, repeats: int = 5, seed: int = 0
) -> Steady[list[TimingRow]]:
    """Time global attention and shifted-window attention (:func:`window_attention`, s = M / 2) on grids of
    ``side`` × ``side`` random patches, measured again while the times break their growth.

    Args:
        sides: grid sides, each a multiple of ``window``.
        d_model, num_heads: the layer's sizes (seeded weights).
        window: M.
        repeats: timed rounds per call (see :func:`mha.experiments.timing.time_calls`).
        seed: seeds the weights and the patches.
    """
    model = build_model(d_model, num_heads, seed)
    generator = torch.Generator().manual_seed(seed)
    calls = {}
    for side in sides:
        x = torch.randn(1, side * side, d_model, generator=generator, device="cpu")  # (1, N, D)
        calls[side] = (
            lambda x=x: model(x, x, x),
            lambda x=x, side=side: window_attention(model, x, side, side, window, window // 2),
        )
    return measure_steady(lambda: _timed_rows(calls, repeats), lambda rows: window_breaks(rows, d_model, window))
