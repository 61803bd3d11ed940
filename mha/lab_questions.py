"""Check yourself in the labs: each lab's questions, built from the numbers the lab itself shows.

A lab hands over what it computed (lab 1's measured statistics at the chosen d_k, lab 2's sweep table, lab 3's and
lab 4's tokens and sizes) and gets :class:`~mha.questions.Question` s whose answers are read from those numbers or
from the experiment's own functions (:func:`~mha.experiments.reshape.head_sources`,
:func:`~mha.experiments.mask_translate.mask_forms`): change a control and the questions change with it. A question's
step is the lab's (``lab1`` .. ``lab4``): its widget key ``check_lab1_<name>``, its id ``lab1.<name>``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from mha.experiments.mask_translate import mask_forms
from mha.experiments.reshape import head_sources
from mha.experiments.scaling import score_scale
from mha.questions import CHOICE, NUMBER, SHAPE, TOKEN, Message, Question
from mha.tokens import shown_token

__all__ = ["heads_questions", "masks_questions", "reshape_questions", "scaling_questions"]


def _n(value: int) -> str:
    return f"{value:,}"


def scaling_questions(
    d_k: int, mode: str, temperature: float, variance_raw: float, max_weights: dict[str, float]
) -> tuple[Question, ...]:
    """Lab 1's questions at the chosen d_k and scaling.

    Args:
        d_k: the lab's d_k.
        mode: the chosen scaling (``scaled``, ``unscaled``, ``temperature``); ``temperature`` its τ.
        variance_raw: the measured Var(q·k) at ``d_k`` (the lab's metric).
        max_weights: the mean largest weight of a row at ``d_k`` for ``scaled`` and ``unscaled`` (the lab's chart).
    """
    multiplier = score_scale(mode, d_k, temperature)
    formula = {
        "scaled": f"1/√d_k = 1/√{d_k}",
        "unscaled": "1",
        "temperature": f"1/(τ·√d_k) = 1/({temperature:g}·√{d_k})",
    }[mode]
    sharper = 1 if max_weights["unscaled"] > max_weights["scaled"] else 0
    return (
        Question(
            "lab1",
            "variance",
            NUMBER,
            "quiz.lab1.variance",
            (("d_k", d_k),),
            d_k,
            "quiz.worked.lab1.variance",
            (("measured", f"{variance_raw:.1f}"), ("d_k", d_k)),
        ),
        Question(
            "lab1",
            "multiplier",
            NUMBER,
            "quiz.lab1.multiplier",
            (("mode", Message(f"lab.scaling.mode.{mode}")), ("d_k", d_k)),
            multiplier,
            "quiz.worked.formula",
            (("text", f"{formula} = {multiplier:.4g}"),),
        ),
        Question(
            "lab1",
            "sharper",
            CHOICE,
            "quiz.lab1.sharper",
            (("d_k", d_k),),
            sharper,
            "quiz.worked.lab1.sharper",
            (("scaled", f"{max_weights['scaled']:.2f}"), ("unscaled", f"{max_weights['unscaled']:.2f}")),
            choices=("quiz.lab1.sharper.scaled", "quiz.lab1.sharper.unscaled"),
        ),
    )


def heads_questions(
    d_model: int, length: int, heads: Sequence[int], params: Sequence[int], maps: Sequence[int]
) -> tuple[Question, ...]:
    """Lab 2's questions from its sweep table (one row per head count).

    Args:
        d_model: the lab's d_model; ``length`` the tokens of its text.
        heads: the head counts swept, ``params`` the parameters counted on each layer, ``maps`` the numbers in each
            layer's attention weights, in the same order.
    """
    most = len(heads) - 1  # the most heads: the question the table answers in its last row
    shown = 1 if len(heads) > 1 else 0
    return (
        Question(
            "lab2",
            "params",
            NUMBER,
            "quiz.lab2.params",
            (("d", d_model), ("h", heads[most])),
            params[most],
            "quiz.worked.lab2.params",
            (("text", f"4·d² + 4·d = 4·{d_model}² + 4·{d_model} = {_n(params[most])}"),),
        ),
        Question(
            "lab2",
            "maps",
            NUMBER,
            "quiz.lab2.maps",
            (("h", heads[-1 - shown]), ("length", length)),
            maps[-1 - shown],
            "quiz.worked.formula",
            (("text", f"h · L² = {heads[-1 - shown]} · {length}² = {_n(maps[-1 - shown])}"),),
        ),
        Question(
            "lab2",
            "d_k",
            NUMBER,
            "quiz.lab2.d_k",
            (("d", d_model), ("h", heads[most])),
            d_model // heads[most],
            "quiz.worked.formula",
            (("text", f"d_k = d_model / h = {d_model} / {heads[most]} = {d_model // heads[most]}"),),
        ),
    )


def reshape_questions(tokens: Sequence[str], d_model: int, num_heads: int) -> tuple[Question, ...]:
    """Lab 3's questions: which token fills the last head's first row when the split forgets the transpose (the
    lab's own :func:`head_sources`), and the shape of the correct split (a view and transpose done here)."""
    length = len(tokens)
    head = num_heads - 1
    token, piece = (int(v) for v in head_sources(length, num_heads, transpose=False)[head, 0])
    d_k = d_model // num_heads
    split = torch.zeros(1, length, d_model, device="cpu").view(1, length, num_heads, d_k).transpose(1, 2)
    shape = tuple(split.shape)  # (B, H, L, Dh)
    return (
        Question(
            "lab3",
            "source",
            TOKEN,
            "quiz.lab3.source",
            (("head", head),),
            token,
            "quiz.worked.lab3.source",
            (
                ("head", head),
                ("flat", head * length),
                ("h", num_heads),
                ("piece", piece),
                ("index", token),
                ("token", shown_token(tokens[token])),
            ),
            tokens=tuple(tokens),
        ),
        Question(
            "lab3",
            "shape",
            SHAPE,
            "quiz.lab3.shape",
            (("length", length), ("heads", num_heads), ("d_k", d_k)),
            shape,
            "quiz.worked.formula",
            (
                (
                    "text",
                    f"[1, {length}, {d_model}] → view → [1, {length}, {num_heads}, {d_k}] → transpose(1, 2) → "
                    f"{list(shape)}",
                ),
            ),
        ),
    )


def masks_questions(tokens: Sequence[str], keep: torch.Tensor) -> tuple[Question, ...]:
    """Lab 4's questions on the learner's edited keep-mask ((L, L) bool, True: may attend): how many keys the last
    row keeps, how many rows keep none, and what ``True`` means in ``nn.MultiheadAttention``'s boolean mask (read
    from the lab's own spellings, :func:`mask_forms`)."""
    keep = keep.to(device="cpu", dtype=torch.bool)
    length = keep.size(0)
    row = length - 1
    kept = int(keep[row].sum())
    empty = int((~keep.any(dim=-1)).sum())
    # nn.MultiheadAttention's bool attn_mask is the lab's "block" spelling: True where our keep-mask says False
    true_blocks = bool(torch.equal(mask_forms(keep)["block"], ~keep))
    return (
        Question(
            "lab4",
            "row_keys",
            NUMBER,
            "quiz.lab4.row_keys",
            (("row", row), ("token", shown_token(tokens[row]))),
            kept,
            "quiz.worked.lab4.row_keys",
            (("count", kept),),
        ),
        Question(
            "lab4",
            "empty_rows",
            NUMBER,
            "quiz.lab4.empty_rows",
            (),
            empty,
            "quiz.worked.lab4.empty_rows",
            (("count", empty),),
        ),
        Question(
            "lab4",
            "torch_true",
            CHOICE,
            "quiz.lab4.torch_true",
            (),
            1 if true_blocks else 0,
            "quiz.worked.lab4.torch_true",
            (),
            choices=("quiz.lab4.torch_true.attend", "quiz.lab4.torch_true.block"),
        ),
    )
