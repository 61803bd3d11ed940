"""Lab 4's case: the first tutorial's section-5 causal mask passed to its own section-2 module.

Section 5 (the decoder) writes the causal mask as an *additive* mask, 0 on and below the diagonal and -inf
above; section 2's ``MultiHeadAttention`` blocks where ``mask == 0`` (1 = may attend). Passed one to the
other, the allowed cells are the ones blocked and the -inf cells pass untouched: every query sees only the
keys after it, never itself, and the last query, with no key after it, gets a softmax over nothing but
-inf: NaN, with no error and no warning. This engine gives such a row zero weights (its contract).

Everything here is run, nothing assumed: the tutorial's code as it writes it
(:mod:`mha.experiments.tutorial_code`, with this engine's weights copied in), this engine's causal result
(:func:`mha.masks.causal_mask`), the pattern read back from the computed weights (:func:`row_pattern`), and
the two fixes (:data:`FIX_CODE`), each checked against this engine within :data:`TOLERANCE`.
"""

from __future__ import annotations

import inspect
import linecache
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import torch
from torch import Tensor, nn

from mha.experiments import tutorial_code
from mha.experiments.inputs import token_inputs
from mha.masks import causal_mask
from mha.module import MultiHeadAttention
from mha.sources.seeded import build_model

__all__ = [
    "FIXES",
    "FIX_CODE",
    "TOLERANCE",
    "FixCheck",
    "MixedCausal",
    "RowPattern",
    "mixed_causal",
    "row_pattern",
    "section2_lines",
    "section5_line",
    "tutorial_module",
]

TOLERANCE = 1e-6  # max |Δ| (absolute, float32) allowed between a fix and this engine's causal result
FIXES = ("tril", "additive")
#: What each fix changes in the tutorial's code, as the lab shows it (and runs it): ``tril`` replaces
#: section 5's line (the module then gets the 1 = may attend mask it reads); ``additive`` keeps section 5's
#: mask and replaces section 2's ``masked_fill`` line by an addition.
FIX_CODE = {
    "tril": "mask = torch.tril(torch.ones(seq_len, seq_len))",
    "additive": "scores = scores + mask",
}


def _code_lines(func: Callable[..., object], marker: str, before: int = 0) -> str:
    """The line of ``func``'s source that holds ``marker`` (exactly one), with ``before`` lines above it, dedented."""
    lines = inspect.getsource(func).splitlines()
    found = [i for i, line in enumerate(lines) if marker in line]
    if len(found) != 1:
        raise ValueError(f"expected one line with {marker!r} in {func.__qualname__}, found {len(found)}")
    return textwrap.dedent("\n".join(lines[found[0] - before : found[0] + 1]))


def section5_line() -> str:
    """Section 5's causal-mask line, as :mod:`~mha.experiments.tutorial_code` keeps it."""
    return _code_lines(tutorial_code.section5_causal_mask, "torch.triu(")


def section2_lines() -> str:
    """Section 2's two mask lines (``if mask is not None:`` and its ``masked_fill``), as kept."""
    return _code_lines(tutorial_code.MultiHeadAttention.forward, "masked_fill(", before=1)


@cache
def _additive_module_class() -> type[nn.Module]:
    """Section 2's class with its ``masked_fill`` line replaced by :data:`FIX_CODE` ``["additive"]``, nothing else.

    Made from the kept file's own text, so that the fix is exactly that one line; its source is kept in
    :mod:`linecache` under its own name (``inspect.getsource`` and tracebacks show the fixed line).
    """
    fill_line = _code_lines(tutorial_code.MultiHeadAttention.forward, "masked_fill(")
    source = inspect.getsource(tutorial_code)
    if source.count(fill_line) != 1:
        raise ValueError(f"expected {fill_line!r} once in {tutorial_code.__name__}, found {source.count(fill_line)}")
    fixed = source.replace(fill_line, FIX_CODE["additive"])
    filename = f"<{tutorial_code.__name__} with the additive fix>"
    linecache.cache[filename] = (len(fixed), None, fixed.splitlines(keepends=True), filename)  # for tracebacks
    namespace: dict[str, object] = {"__name__": f"{tutorial_code.__name__}_additive"}
    exec(compile(fixed, filename, "exec"), namespace)
    return namespace["MultiHeadAttention"]


def tutorial_module(model: MultiHeadAttention, fill: str = "masked_fill") -> nn.Module:
    """Section 2's module holding a copy of ``model``'s weights, in eval mode.

    Args:
        model: this engine's layer; its ``W_q, W_k, W_v, W_o`` are copied (the names are the tutorial's).
        fill: ``"masked_fill"`` for the module as written, ``"additive"`` for it with :data:`FIX_CODE`'s line.
    """
    cls = tutorial_code.MultiHeadAttention if fill == "masked_fill" else _additive_module_class()
    with torch.device("meta"):  # nn.Linear's own initialisation would draw from the global RNG: skip it
        module = cls(model.d_model, model.num_heads)
    module = module.to_empty(device=model.W_q.weight.device)
    module.load_state_dict(model.state_dict())
    return module.eval().requires_grad_(False)


@dataclass(frozen=True)
class RowPattern:
    """Where each query row's weight went, read from the weights of every head (query i, key j)."""

    future_only: tuple[int, ...]  # rows with weight only on keys j > i: none on the query itself or before it
    past_only: tuple[int, ...]  # rows with weight only on keys j <= i: causal
    nan: tuple[int, ...]  # rows with a NaN weight in some head
    zero: tuple[int, ...]  # rows whose weights are all exactly 0 (this engine's fully blocked row)


def row_pattern(weights: Tensor) -> RowPattern:
    """Classify each query row of ``weights`` by where its weight is (exactly zero elsewhere, in every head).

    Shape:
        weights (H, L, L) -> one tuple of row numbers per kind; a row with weight on both sides is in none.
    """
    length = weights.shape[-1]
    past = torch.ones(length, length, dtype=torch.bool, device=weights.device).tril()  # (L, L): j <= i
    nan = torch.isnan(weights).any(dim=-1).any(dim=0)  # (L,)
    has_past = (weights.masked_fill(~past, 0.0) != 0).any(dim=-1).any(dim=0)  # (L,)
    has_future = (weights.masked_fill(past, 0.0) != 0).any(dim=-1).any(dim=0)  # (L,)

    def rows(selected: Tensor) -> tuple[int, ...]:
        return tuple(int(i) for i in torch.nonzero(selected).flatten())

    return RowPattern(
        future_only=rows(~nan & has_future & ~has_past),
        past_only=rows(~nan & has_past & ~has_future),
        nan=rows(nan),
        zero=rows(~nan & ~has_past & ~has_future),
    )


@dataclass(frozen=True)
class FixCheck:
    """One fix run through the tutorial's module, against this engine's causal result."""

    fix: str  # one of FIXES
    weights: Tensor  # (H, L, L)
    weights_diff: float  # max |Δ| vs this engine's causal weights
    output_diff: float  # max |Δ| vs this engine's causal output

    @property
    def agrees(self) -> bool:
        """Whether both differences are within :data:`TOLERANCE`."""
        return max(self.weights_diff, self.output_diff) <= TOLERANCE


@dataclass(frozen=True)
class MixedCausal:
    """The tutorial's two causal masks put together, this engine's intended result, and the two fixes."""

    mask: Tensor  # (L, L) float: section 5's additive mask, 0 on and below the diagonal, -inf above
    as_written: Tensor  # (H, L, L): section 2's weights with it, NaN rows and all
    intended: Tensor  # (H, L, L): this engine's causal weights
    same_cells: Tensor  # (H, L, L): this engine given the cells section 2 let through (mask != 0): 0, not NaN
    pattern: RowPattern  # read from as_written
    fixes: tuple[FixCheck, ...]  # in FIXES order


def _max_diff(a: Tensor, b: Tensor) -> float:
    return float((a - b).abs().max())


def mixed_causal(tokens: Sequence[str], d_model: int, num_heads: int, seed: int) -> MixedCausal:
    """Run section 5's mask through section 2's module, this engine's causal attention and the two fixes.

    Args:
        tokens: the learner's tokens (L of them); the input is the playground's own embeddings
            (:func:`mha.experiments.inputs.token_inputs`).
        d_model, num_heads, seed: the layer's sizes and the seed of its weights
            (:func:`mha.sources.seeded.build_model`), copied into the tutorial's module.

    Returns:
        A :class:`MixedCausal`; its weights are the batch's one item, (H, L, L).
    """
    length = len(tokens)
    model = build_model(d_model, num_heads, seed)
    x = token_inputs(tokens, d_model, seed)  # (1, L, D)
    written, additive = tutorial_module(model), tutorial_module(model, fill="additive")
    with torch.inference_mode():
        mask = tutorial_code.section5_causal_mask(length)  # (L, L)
        _, as_written = written(x, x, x, mask)  # (1, H, L, L)
        intended_output, intended = model(x, x, x, causal_mask(length, device=x.device))  # (1, L, D), (1, H, L, L)
        _, same_cells = model(x, x, x, mask != 0)  # (1, H, L, L)
        made: dict[str, object] = {"seq_len": length}
        exec(FIX_CODE["tril"], {"torch": torch}, made)  # the fix's code, run as the lab shows it
        # each fix: (output (1, L, D), weights (1, H, L, L))
        outputs = {"tril": written(x, x, x, made["mask"]), "additive": additive(x, x, x, mask)}
    fixes = tuple(
        FixCheck(
            fix=fix,
            weights=outputs[fix][1][0],
            weights_diff=_max_diff(outputs[fix][1], intended),
            output_diff=_max_diff(outputs[fix][0], intended_output),
        )
        for fix in FIXES
    )
    return MixedCausal(
        mask=mask,
        as_written=as_written[0],
        intended=intended[0],
        same_cells=same_cells[0],
        pattern=row_pattern(as_written[0]),
        fixes=fixes,
    )
