"""Check yourself: the questions a step asks, built from one run, and the reader of a learner's answer.

Every answer is computed from the run's own trace and model when the question is built (a shape is the traced
tensor's shape, a count the parameters the layer holds, a reading of a chart the argmax of the traced weights):
nothing is stored, so the questions change with d_model, the heads, the K/V heads, the mask, the sentence and
the weights. A question carries its words as message keys with their parameters (the page translates them) and
its worked answer from the page's numbers (``d² + d = 512² + 512 = 262,656``).

The reader (:func:`read_answer`) is lenient: shapes ``[1, 8, 11, 64]``, ``1×8×11×64``, ``1x8x11x64``,
``(1,8,11,64)``; numbers ``787968``, ``787,968``, ``0.125``, ``1/8``; a token by its index or its text. It
never keeps what it read beyond the verdict.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import torch

from mha.config import LIMITS, PRETRAINED, RANDOM, TRAINED
from mha.counting import count_parameters, kv_cache_numbers
from mha.head_labels import positional_relations, shares
from mha.module import MultiHeadAttention, check_sizes
from mha.pipeline import AttentionRun
from mha.score_scale import score_spread
from mha.sources import source_sizes
from mha.sources.base import IMAGE
from mha.text.reviews import LABELS
from mha.tokens import shown_token
from mha.training.tasks import SYMBOLS, make_task
from mha.vision.samples import DIGIT_SIZE

__all__ = [
    "MAX_ANSWER",
    "STEPS",
    "Message",
    "Question",
    "Reading",
    "all_questions",
    "is_right",
    "previous_token_shares",
    "questions_of",
    "read_answer",
    "relation_shares",
]

#: The parts that ask, in page order: the steps, "model" (trained weights or a checkpoint, drawn with step 2's) and
#: "trained" (a model trained here, drawn beside its timeline; its questions are the model's: step "model" in their
#: keys, ``check_model_<name>``).
STEPS = ("1", "1b", "2", "model", "3", "4", "trained")
MAX_ANSWER = 200  # characters; a longer answer is refused unread

SHAPE, NUMBER, TOKEN, CHOICE = "shape", "number", "token", "choice"
Params = tuple[tuple[str, object], ...]


class Message(str):
    """A question's parameter that is itself a message key (a relation's name, a class): the page translates it."""

    __slots__ = ()


@dataclass(frozen=True)
class Question:
    """One question of one step.

    Attributes:
        step: the step it belongs to, one of :data:`STEPS`.
        name: its name within the step; the widget's key is ``check_<step>_<name>``.
        kind: how an answer is read: ``shape``, ``number``, ``token`` or ``choice``.
        prompt: the message key of the question; ``params`` its parameters.
        answer: the right answer (a shape tuple, a number, a token index, a choice's index).
        worked: the message key of the worked answer; ``worked_params`` its parameters.
        choices: a multiple choice's options (message keys), in order; empty otherwise.
        tokens: the tokens a ``token`` answer may name (the keys), in order; empty otherwise.
    """

    step: str
    name: str
    kind: str
    prompt: str
    params: Params
    answer: object
    worked: str
    worked_params: Params
    choices: tuple[str, ...] = ()
    tokens: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The widget's key: ``check_<step>_<name>``."""
        return f"check_{self.step}_{self.name}"

    @property
    def qid(self) -> str:
        """The question's id in a link and a room: ``<step>.<name>``."""
        return f"{self.step}.{self.name}"


@dataclass(frozen=True)
class Reading:
    """What the reader made of an answer: ``value`` (a shape tuple, a float, a token index, a choice's index) or
    ``problem`` (``too_long``, ``empty``, ``shape``, ``number``, ``token``, ``choice``)."""

    value: object = None
    problem: str | None = None


def _n(value: int) -> str:
    """``262,656``."""
    return f"{value:,}"


def _shape_text(shape: tuple[int, ...]) -> str:
    return str(list(shape))


def _linear_parameters(layer: torch.nn.Module) -> tuple[int, int, bool]:
    """(in, out, has a bias) of an ``nn.Linear``, read from its weight."""
    weight = layer.weight  # (out, in)
    return int(weight.size(1)), int(weight.size(0)), getattr(layer, "bias", None) is not None


def _projection_worked(layer: torch.nn.Module) -> str:
    """``d² + d = 512² + 512 = 262,656`` (``d·w + w`` for a projection to w ≠ d)."""
    d_in, d_out, bias = _linear_parameters(layer)
    total = count_parameters(layer)
    if d_in == d_out:
        formula, numbers = ("d² + d", f"{d_in}² + {d_in}") if bias else ("d²", f"{d_in}²")
    else:
        formula = "d·w + w" if bias else "d·w"
        numbers = f"{d_in}·{d_out} + {d_out}" if bias else f"{d_in}·{d_out}"
    return f"{formula} = {numbers} = {_n(total)}"


def _step1(run: AttentionRun) -> list[Question]:
    p = run.trace.project
    batch, length, _ = p.x_query.shape
    heads, kv, d_k = run.num_heads, p.num_kv_heads, run.d_k
    wq = run.model.W_q
    k_shape = tuple(p.k_heads.shape)  # (B, Hkv, L, Dh)
    total = count_parameters(run.model)
    parts = [count_parameters(getattr(run.model, name)) for name in ("W_q", "W_k", "W_v", "W_o")]
    return [
        Question(
            "1",
            "wq_params",
            NUMBER,
            "quiz.1.wq_params" if wq.bias is not None else "quiz.1.wq_params_no_bias",
            (("d", run.d_model),),
            count_parameters(wq),
            "quiz.worked.formula",
            (("text", _projection_worked(wq)),),
        ),
        Question(
            "1",
            "k_shape",
            SHAPE,
            "quiz.1.k_shape",
            (("args", f"{batch}, {length}, {kv}, {d_k}"), ("kv", kv), ("h", heads)),
            k_shape,
            "quiz.worked.formula",
            (("text", f"{_shape_text((batch, length, kv, d_k))} → transpose(1, 2) → {_shape_text(k_shape)}"),),
        ),
        Question(
            "1",
            "layer_params",
            NUMBER,
            "quiz.1.layer_params",
            (),
            total,
            "quiz.worked.formula",
            (("text", "W_q + W_k + W_v + W_o = " + " + ".join(_n(x) for x in parts) + f" = {_n(total)}"),),
        ),
    ]


def _step1b(run: AttentionRun) -> list[Question]:
    p = run.trace.project
    heads, kv, d_k = run.num_heads, p.num_kv_heads, run.d_k
    asked: list[Question] = []
    if kv < heads:
        h = heads - 1
        group = heads // kv
        asked.append(
            Question(
                "1b",
                "kv_head",
                NUMBER,
                "quiz.1b.kv_head",
                (("h", h), ("heads", heads), ("kv", kv)),
                p.kv_head_of[h],
                "quiz.worked.formula",
                (("text", f"h // (H / H_kv) = {h} // ({heads} / {kv}) = {h} // {group} = {p.kv_head_of[h]}"),),
            )
        )
        wk = run.model.W_k
        asked.append(
            Question(
                "1b",
                "wk_params",
                NUMBER,
                "quiz.1b.wk_params",
                (("kv", kv), ("d_k", d_k)),
                count_parameters(wk),
                "quiz.worked.formula",
                (("text", f"w = H_kv·d_k = {kv}·{d_k} = {kv * d_k}; " + _projection_worked(wk)),),
            )
        )
    if p.q_rotated is not None:
        pairs = p.q_rotated.size(-1) // 2  # (B, H, L, Dh): RoPE turns Dh/2 pairs
        asked.append(
            Question(
                "1b",
                "rope_pairs",
                NUMBER,
                "quiz.1b.rope_pairs",
                (("d_k", d_k),),
                pairs,
                "quiz.worked.formula",
                (("text", f"d_k / 2 = {d_k} / 2 = {pairs}"),),
            )
        )
        asked.append(
            Question(
                "1b",
                "rope_what",
                CHOICE,
                "quiz.1b.rope_what",
                (),
                0,
                "quiz.worked.rope_what",
                (),
                choices=("quiz.1b.rope_what.qk", "quiz.1b.rope_what.v", "quiz.1b.rope_what.x"),
            )
        )
    return asked


def _top_key(run: AttentionRun) -> tuple[int, int, int]:
    """(head, query row, key) of step 2's chart question: the last token's row in the last head, its argmax."""
    weights = run.trace.attend.weights[0]  # (H, Lq, Lk)
    head, row = run.num_heads - 1, weights.size(1) - 1
    return head, row, int(torch.argmax(weights[head, row]).item())


def _step2(run: AttentionRun) -> list[Question]:
    a = run.trace.attend
    d_k = run.d_k
    head, row, key = _top_key(run)
    weight = float(a.weights[0, head, row, key])
    tokens = run.tokens
    asked = [
        Question(
            "2",
            "scale",
            NUMBER,
            "quiz.2.scale",
            (("d_k", d_k),),
            float(a.scale),
            "quiz.worked.formula",
            (("text", f"1/√d_k = 1/√{d_k} = {a.scale:.4g}"),),
        ),
        Question(
            "2",
            "weights_shape",
            SHAPE,
            "quiz.2.weights_shape",
            (),
            tuple(a.weights.shape),
            "quiz.worked.formula",
            (("text", f"(B, H, L, L) = {_shape_text(tuple(a.weights.shape))}"),),
        ),
        Question(
            "2",
            "top_key",
            TOKEN,
            "quiz.2.top_key",
            (("row", row), ("token", shown_token(tokens[row])), ("head", head)),
            key,
            "quiz.worked.top_key",
            (("index", key), ("token", shown_token(tokens[key])), ("weight", f"{weight:.4f}")),
            tokens=tokens,
        ),
    ]
    if a.mask is not None and run.config.mask_type == "causal":
        asked.append(
            Question(
                "2",
                "why_mask",
                CHOICE,
                "quiz.2.why_mask",
                (),
                1,
                "quiz.worked.why_mask",
                (),
                choices=("quiz.2.why_mask.pad", "quiz.2.why_mask.future", "quiz.2.why_mask.self"),
            )
        )
    else:
        assert a.queries is not None and a.keys is not None  # the traced forward always fills them
        spread = score_spread(a.queries[0], a.keys[0], a.raw_scores[0], a.scale)  # (H, L, Dh), (H, Lq, Lk)
        asked.append(
            Question(
                "2",
                "why_scale",
                CHOICE,
                "quiz.2.why_scale",
                (),
                1,
                "quiz.worked.why_scale",
                (("d_k", d_k), ("raw", f"{spread.raw_std:.4g}"), ("scaled", f"{spread.scaled_std:.4g}")),
                choices=("quiz.2.why_scale.sum", "quiz.2.why_scale.spread", "quiz.2.why_scale.memory"),
            )
        )
    return asked


def _step3(run: AttentionRun) -> list[Question]:
    context = tuple(run.trace.attend.context.shape)  # (B, H, L, Dh)
    concat = tuple(run.trace.concat.concat.shape)  # (B, L, D)
    batch, heads, length, d_k = context
    return [
        Question(
            "3",
            "concat_shape",
            SHAPE,
            "quiz.3.concat_shape",
            (),
            concat,
            "quiz.worked.formula",
            (
                (
                    "text",
                    f"{_shape_text(context)} → transpose(1, 2) → {_shape_text((batch, length, heads, d_k))} "
                    f"→ view → {_shape_text(concat)}",
                ),
            ),
        ),
        Question(
            "3",
            "why_contiguous",
            CHOICE,
            "quiz.3.why_contiguous",
            (),
            2,
            "quiz.worked.why_contiguous",
            (),
            choices=("quiz.3.why_contiguous.speed", "quiz.3.why_contiguous.copy", "quiz.3.why_contiguous.view"),
        ),
    ]


def doubled_heads_parameters(run: AttentionRun) -> int | None:
    """Parameters of the same layer with twice the query heads (same d_model, K/V heads and biases), counted on a
    layer built on the meta device; ``None`` where that layer cannot exist: twice the heads past
    ``LIMITS.num_heads_max``, a d_model they do not split, or RoPE with an odd d_k to turn."""
    heads, kv = run.num_heads, run.trace.project.num_kv_heads
    model = run.model
    if 2 * heads > LIMITS.num_heads_max:
        return None
    try:
        check_sizes(run.d_model, 2 * heads, None if kv == heads else kv, model.rope_base)
    except ValueError:
        return None
    with torch.device("meta"):
        doubled = MultiHeadAttention(
            run.d_model,
            2 * heads,
            bias=model.W_q.bias is not None,
            num_kv_heads=None if kv == heads else kv,
            rope_base=model.rope_base,
        )
    return count_parameters(doubled)


def _step4(run: AttentionRun) -> list[Question]:
    wo = run.model.W_o
    output = tuple(run.trace.out.output.shape)  # (B, L, D)
    asked = [
        Question(
            "4",
            "wo_params",
            NUMBER,
            "quiz.4.wo_params",
            (),
            count_parameters(wo),
            "quiz.worked.formula",
            (("text", _projection_worked(wo)),),
        ),
        Question(
            "4",
            "output_shape",
            SHAPE,
            "quiz.4.output_shape",
            (),
            output,
            "quiz.worked.formula",
            (("text", f"(B, L, d_model) = {_shape_text(output)}"),),
        ),
    ]
    doubled = doubled_heads_parameters(run)
    if doubled is not None:
        now = count_parameters(run.model)
        heads = run.num_heads
        asked.append(
            Question(
                "4",
                "double_heads",
                NUMBER,
                "quiz.4.double_heads_locked" if run.source_kind == PRETRAINED else "quiz.4.double_heads",
                (("heads", heads), ("doubled", 2 * heads), ("now", _n(now))),
                doubled,
                "quiz.worked.double_heads",
                (("now", _n(now)), ("doubled", _n(doubled)), ("d_k", run.d_model // (2 * heads))),
            )
        )
    return asked


def previous_token_shares(run: AttentionRun) -> torch.Tensor:
    """(H,) each head's mean weight on the previous token, over the rows that have one (row 0 has none)."""
    weights = run.trace.attend.weights[0]  # (H, Lq, Lk)
    rows = torch.arange(1, weights.size(1), device=weights.device)  # (L-1,)
    return weights[:, rows, rows - 1].mean(dim=-1)  # (H,)


def _model(run: AttentionRun) -> list[Question]:
    """Questions on the model itself, for weights that learned something (trained here, a checkpoint): which head
    reads the previous token (a text run only: an image's previous token is the previous patch in row order), and
    the KV cache's bytes per token (a causal run only: an encoder keeps no cache)."""
    if run.source_kind == RANDOM or len(run.tokens) < 2:
        return []
    asked: list[Question] = []
    if not _reads_an_image(run):
        asked.append(_previous_head(run))
    if run.config.mask_type == "causal":
        asked.append(_kv_cache_bytes(run))
    return asked


def _reads_an_image(run: AttentionRun) -> bool:
    """Whether the run's tokens are an image's patches (a model trained here on images, a ViT checkpoint)."""
    if run.image is not None or run.config.trains_on_images:
        return True
    return run.source_kind == PRETRAINED and source_sizes(run.config.weight_spec).modality == IMAGE


def _previous_head(run: AttentionRun) -> Question:
    shares = previous_token_shares(run)
    best = int(torch.argmax(shares).item())
    return Question(
        "model",
        "previous_head",
        NUMBER,
        "quiz.model.previous_head",
        (("layer", run.layer),),
        best,
        "quiz.worked.previous_head",
        (("head", best), ("share", f"{float(shares[best]):.3f}")),
    )


def _kv_cache_bytes(run: AttentionRun) -> Question:
    kv, d_k, layers = run.trace.project.num_kv_heads, run.d_k, run.num_layers
    cache = 2 * kv_cache_numbers(layers, kv, d_k)  # bfloat16: 2 bytes a number
    return Question(
        "model",
        "kv_cache_bytes",
        NUMBER,
        "quiz.model.kv_cache_bytes",
        (("layers", layers), ("kv", kv), ("d_k", d_k)),
        cache,
        "quiz.worked.formula",
        (("text", f"2 · layers · H_kv · d_k · 2 B = 2·{layers}·{kv}·{d_k}·2 = {_n(cache)}"),),
    )


#: The relation a trained text task's question is about: the one it adds to the previous token where it has one.
_TASK_RELATION = {
    "previous": "previous token",
    "previous_and_first": "first token",
    "previous_and_last_digit": "last digit",
    "induction": "induction",
}


def relation_shares(run: AttentionRun, relation: torch.Tensor) -> torch.Tensor:
    """(H,) each head's mean weight on ``relation``'s cells ((L, L) bool), over the rows the heads' labels count:
    a row with at least two keys to choose from that the training loss looked at and where the relation points."""
    weights = run.trace.attend.weights[0]  # (H, L, L)
    length = weights.size(-1)
    keep = torch.ones(length, length, dtype=torch.bool, device=weights.device)  # (L, L)
    if run.mask is not None:  # broadcastable to (1, H, L, L): every head's cells a row may read
        keep = keep & run.mask.to(weights.device).reshape(-1, *run.mask.shape[-2:]).all(dim=0)  # (L, L)
    rows = keep.sum(dim=-1) >= 2  # (L,)
    if run.scored_rows is not None:
        rows = rows & run.scored_rows.to(rows.device)
    return shares(weights, relation.to(weights.device), rows)  # (H,)


def _task_relation(run: AttentionRun) -> tuple[str, torch.Tensor] | None:
    """The trained text task's relation (name, (L, L) bool cells) on the run's tokens, or ``None`` (unscramble, the
    reviews, the digits; a relation that points nowhere on these tokens in this layer)."""
    task_name = run.config.task or ""
    name = _TASK_RELATION.get(task_name)
    if task_name == "induction" and run.layer < run.num_layers - 1:  # layer 0 copies each token's previous one
        name = "previous token"
    if name is None or not all(token in SYMBOLS for token in run.tokens):
        return None
    length = len(run.tokens)
    if name in ("previous token", "first token"):
        cells = positional_relations(length, "cpu")[name]  # (L, L)
    else:
        task = make_task(task_name)
        ids = torch.tensor([SYMBOLS.index(token) for token in run.tokens], device="cpu")  # (L,)
        found = task.relations(ids, run.layer).get(name)
        if found is None:
            return None
        cells = found.cpu()  # (L, L)
    return (name, cells) if bool(cells.any()) else None


def _relation_questions(run: AttentionRun) -> list[Question]:
    """Which key the task's relation points at from the last row where it points (and the loss looks), and which
    head puts the most weight on that relation (asked where it is not the previous token: the model's step asks)."""
    found = _task_relation(run)
    if found is None:
        return []
    name, cells = found
    length = len(run.tokens)
    scored = torch.ones(length, dtype=torch.bool, device="cpu") if run.scored_rows is None else run.scored_rows.cpu()
    rows = [i for i in range(cells.size(0)) if bool(cells[i].any()) and bool(scored[i])]
    if not rows:
        return []
    row = rows[-1]
    key = int(torch.nonzero(cells[row])[0])
    tokens = run.tokens
    weights = run.trace.attend.weights[0]  # (H, L, L)
    head_shares = relation_shares(run, cells)  # (H,)
    best = int(torch.argmax(head_shares).item())
    asked = [
        Question(
            "model",
            "relation_key",
            NUMBER,  # a position: a task's tokens are digits, which the token reader would take for positions
            "quiz.trained.relation_key",
            (
                ("relation", Message(f"label.{name}")),
                ("row", row),
                ("token", shown_token(tokens[row])),
                ("last", length - 1),
            ),
            key,
            "quiz.worked.relation_key",
            (
                ("index", key),
                ("token", shown_token(tokens[key])),
                ("head", best),
                ("weight", f"{float(weights[best, row, key]):.4f}"),
            ),
        )
    ]
    if name != "previous token" and run.num_heads > 1:
        asked.append(
            Question(
                "model",
                "relation_head",
                NUMBER,
                "quiz.trained.relation_head",
                (("relation", Message(f"label.{name}")), ("layer", run.layer)),
                best,
                "quiz.worked.relation_head",
                (("share", f"{float(head_shares[best]):.3f}"), ("head", best)),
            )
        )
    return asked


def _faded_question(run: AttentionRun) -> Question | None:
    """Why some rows are faded on the trained model's charts: the rows the loss never looked at (where there are)."""
    if run.scored_rows is None or bool(run.scored_rows.all()):
        return None
    faded = [i for i, scored in enumerate(run.scored_rows.tolist()) if not scored]
    shown = ", ".join(map(str, faded[:12])) + (", …" if len(faded) > 12 else "")
    return Question(
        "model",
        "faded",
        CHOICE,
        "quiz.trained.faded",
        (),
        1,
        "quiz.worked.faded",
        (("rows", shown), ("count", len(faded))),
        choices=("quiz.trained.faded.mask", "quiz.trained.faded.loss", "quiz.trained.faded.pad"),
    )


def _prediction(run: AttentionRun) -> Question | None:
    """What the model reads the image or the review as: the page's own note of the model's forward."""
    for note in run.notes:
        if note.code in ("trained_digit", "trained_image"):
            predicted = int(note.params["predicted"])  # type: ignore[call-overload]
            return Question(
                "model",
                "prediction",
                NUMBER,
                "quiz.trained.digit",
                (),
                predicted,
                "quiz.worked.digit",
                (("percent", note.params["percent"]), ("digit", predicted)),
            )
        if note.code in ("trained_review_negative", "trained_review_positive"):
            label = note.code.removeprefix("trained_review_")
            return Question(
                "model",
                "prediction",
                CHOICE,
                "quiz.trained.review",
                (),
                LABELS.index(label),
                "quiz.worked.review",
                (("percent", note.params["percent"]), ("label", Message(f"quiz.trained.review.{label}"))),
                choices=tuple(f"quiz.trained.review.{name}" for name in LABELS),
            )
    return None


def _cls_top(run: AttentionRun) -> Question:
    """Which token [CLS]'s row weighs most in the last head: what the readout of a review or a digit reads."""
    weights = run.trace.attend.weights[0]  # (H, L, L)
    head = run.num_heads - 1
    key = int(torch.argmax(weights[head, 0]).item())
    tokens = run.tokens
    return Question(
        "model",
        "cls_top",
        TOKEN,
        "quiz.trained.cls_top",
        (("head", head), ("token", shown_token(tokens[0]))),
        key,
        "quiz.worked.top_key",
        (("index", key), ("token", shown_token(tokens[key])), ("weight", f"{float(weights[head, 0, key]):.4f}")),
        tokens=tokens,
    )


def _patches(run: AttentionRun) -> Question:
    """How many tokens a digit's layer reads: [CLS] and the patches of the 8 × 8 image."""
    patch = run.config.patch or 2
    side = DIGIT_SIZE // patch
    return Question(
        "model",
        "patches",
        NUMBER,
        "quiz.trained.patches",
        (("size", DIGIT_SIZE), ("patch", patch)),
        len(run.tokens),
        "quiz.worked.formula",
        (("text", f"1 + ({DIGIT_SIZE} / {patch})² = 1 + {side}² = {len(run.tokens)}"),),
    )


def _trained(run: AttentionRun) -> list[Question]:
    """Questions on a model trained here, from its own weights on the learner's input: the task's relation (which
    key it points at, which head reads it), the prediction a review or a digit gets, what [CLS] reads in the last
    layer, a digit's tokens, and why some rows are faded."""
    if run.source_kind != TRAINED:
        return []
    prediction = _prediction(run)
    if prediction is None:
        asked = _relation_questions(run)
    else:
        asked = [prediction]
        if run.layer == run.num_layers - 1:  # the readout reads [CLS]'s output of the last layer
            asked.append(_cls_top(run))
    if run.config.task == "digits":
        asked.append(_patches(run))
    faded = _faded_question(run)
    if faded is not None:
        asked.append(faded)
    return asked


_BUILDERS = {
    "1": _step1,
    "1b": _step1b,
    "2": _step2,
    "3": _step3,
    "4": _step4,
    "model": _model,
    "trained": _trained,
}


def questions_of(step: str, run: AttentionRun) -> tuple[Question, ...]:
    """The questions step ``step`` asks of ``run`` (none for 1b in a layer without GQA or RoPE, none for ``model``
    with random weights)."""
    if step not in _BUILDERS:
        raise ValueError(f"no questions for step {step!r}; steps: {', '.join(STEPS)}")
    return tuple(_BUILDERS[step](run))


def all_questions(run: AttentionRun) -> tuple[Question, ...]:
    """Every step's questions, in page order."""
    return tuple(q for step in STEPS for q in questions_of(step, run))


_SHAPE_SPLIT = re.compile(r"[\s,×x*]+", re.IGNORECASE)
_NUMBER = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(e[+-]?[0-9]+)?", re.IGNORECASE)
_GROUPED = re.compile(r"[+-]?[0-9]{1,3}(,[0-9]{3})+(\.[0-9]*)?")
_WHOLE = re.compile(r"[0-9]+")  # ASCII digits only: "²" or "٣" is a digit to str.isdigit, not to a learner's count


def _read_shape(text: str) -> Reading:
    body = text.strip()
    if body.lower().startswith("torch.size"):
        body = body[len("torch.size") :].strip()
    body = body.strip("()[] ")
    parts = [part for part in _SHAPE_SPLIT.split(body) if part]
    if not parts or len(parts) > 8 or not all(_WHOLE.fullmatch(part) and len(part) <= 9 for part in parts):
        return Reading(problem=SHAPE)
    return Reading(value=tuple(int(part) for part in parts))


def _read_number(text: str) -> Reading:
    body = text.strip().replace("_", "").replace(" ", "").replace("\u202f", "").replace("\u00a0", "")
    if _GROUPED.fullmatch(body):
        body = body.replace(",", "")
    if body.count("/") == 1:
        top, bottom = body.split("/")
        a, b = _read_number(top), _read_number(bottom)
        if a.problem or b.problem or b.value == 0:
            return Reading(problem=NUMBER)
        return Reading(value=float(a.value) / float(b.value))  # type: ignore[arg-type]
    if not _NUMBER.fullmatch(body) or len(body) > 40:
        return Reading(problem=NUMBER)
    value = float(body)
    return Reading(value=value) if math.isfinite(value) else Reading(problem=NUMBER)


def _read_token(text: str, tokens: tuple[str, ...]) -> Reading:
    body = text.strip()
    if _WHOLE.fullmatch(body) and len(body) <= 6:
        index = int(body)
        return Reading(value=index) if index < len(tokens) else Reading(problem=TOKEN)
    wanted = body.strip("'\"“”‘’「」").casefold()
    found = [i for i, token in enumerate(tokens) if token.strip().casefold() == wanted]
    return Reading(value=tuple(found)) if wanted and found else Reading(problem=TOKEN)


def read_answer(question: Question, text: str | None) -> Reading:
    """Read a learner's ``text`` as an answer to ``question`` (a choice's text is the option's index).

    A token named by its text reads as every index that token has (a word may occur twice). Longer than
    :data:`MAX_ANSWER` characters: refused unread (``too_long``).
    """
    if text is None or not str(text).strip():
        return Reading(problem="empty")
    if len(text) > MAX_ANSWER:
        return Reading(problem="too_long")
    if question.kind == SHAPE:
        return _read_shape(text)
    if question.kind == NUMBER:
        return _read_number(text)
    if question.kind == TOKEN:
        return _read_token(text, question.tokens)
    if question.kind == CHOICE:
        body = text.strip()
        ok = _WHOLE.fullmatch(body) is not None and len(body) <= 6 and int(body) < len(question.choices)
        return Reading(value=int(body)) if ok else Reading(problem=CHOICE)
    raise ValueError(f"unknown question kind {question.kind!r}")


def is_right(question: Question, reading: Reading) -> bool:
    """Whether a read answer is the question's: a shape or an index exactly, a whole number exactly, any other
    number within 0.1 % (``0.125``, ``1/8``, ``0.1250``); a token's text is right where one of its places is."""
    if reading.problem is not None:
        return False
    value, answer = reading.value, question.answer
    if question.kind == NUMBER:
        if isinstance(answer, int):
            return float(value) == answer  # type: ignore[arg-type]
        return math.isclose(float(value), float(answer), rel_tol=1e-3, abs_tol=5e-4)  # type: ignore[arg-type]
    if question.kind == TOKEN and isinstance(value, tuple):
        return answer in value
    return value == answer
