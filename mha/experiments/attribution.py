"""What one query really took from each key: the weight, the size of what was taken, and the effect of removing it.

Shape legend: H heads, L tokens (keys), D = d_model, Dh = D / H, R readouts, C classes.

The layer's output for query i is a sum over heads and keys plus W_o's bias::

    output_i = Σ_h Σ_j α_ij^h · f_h(x_j) + b_o,    f_h(x_j) = v_j^h (W_o^h)ᵀ

where v_j^h = (x_j W_vᵀ + b_v) sliced to head h (its bias included) and W_o^h = W_o.weight[:, h·Dh:(h+1)·Dh],
the d_k columns of W_o that read head h. Three measures of key j for query i:

* the **weight** α_ij^h (what attention maps show);
* the **norm** ‖α_ij^h f_h(x_j)‖ (Kobayashi et al. 2020, "Attention is not only a weight"): the size of
  what key j adds to the output. Summed over heads, ‖Σ_h α_ij^h f_h(x_j)‖ is what it adds to the layer's;
* the **effect** of removing key j: the change of output_i when j is masked for this query (the other keys'
  weights grow back to a sum of 1) or when its value is zeroed (the weights stay; exactly the norm's vector
  goes: ``Δ = -α f``).

A weight is large where the softmax points; a norm is large where it points *at something big*. A head that
puts most of its weight on one token whose vector is small (Kobayashi et al. 2020: BERT's [CLS], [SEP] and
punctuation) adds little
from there, whatever its map shows.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from mha.functional import apply_mask, default_scale, masked_softmax
from mha.module import MultiHeadAttention
from mha.training.model import Model

__all__ = [
    "ABLATIONS",
    "KeyMeasures",
    "PredictionEffects",
    "ablation_deltas",
    "disagreements",
    "kendall_tau",
    "key_measures",
    "prediction_effects",
    "ranks",
    "spearman",
]

#: How a key is removed for one query: masked (the others' weights renormalise) or its value zeroed.
ABLATIONS = ("mask", "zero_value")


@dataclass(frozen=True)
class KeyMeasures:
    """Every measure of every key for one query, per head and for the layer (all heads together).

    Keys the query may not attend to (the run's mask) have weight 0, norm 0 and effect 0; ``allowed`` says which.
    """

    query: int
    weights: Tensor  # (H, L) α_ij^h
    value_norms: Tensor  # (H, L) ‖f_h(x_j)‖: what each key offers, before its weight
    norms: Tensor  # (H, L) ‖α_ij^h f_h(x_j)‖
    masked_effects: Tensor  # (H, L) ‖Δ output_i‖ when key j is masked in head h only
    layer_weights: Tensor  # (L,) the mean of α_ij^h over heads (what an averaged map shows)
    layer_value_norms: Tensor  # (L,) ‖Σ_h f_h(x_j)‖ = ‖v_j W_oᵀ‖: what key j would add with weight 1 in every head
    layer_norms: Tensor  # (L,) ‖Σ_h α_ij^h f_h(x_j)‖
    layer_masked_effects: Tensor  # (L,) ‖Δ output_i‖ when key j is masked in every head
    allowed: Tensor  # (L,) bool: the keys the query may attend to

    def zeroed_effects(self, head: int | None) -> Tensor:
        """‖Δ output_i‖ when key j's value is zeroed (in ``head``, or every head for ``None``): the norm itself.

        Zeroing v_j leaves the weights as they were and removes exactly α_ij f(x_j), so no rerun is needed;
        ``tests/test_labs_experiments.py`` checks it against one.
        """
        return self.layer_norms if head is None else self.norms[head]

    def of(self, head: int | None, ablation: str) -> tuple[Tensor, Tensor, Tensor]:
        """``(weights, norms, effects)`` of ``head`` (``None``: the layer), each (L,), for ``ablation``."""
        if ablation not in ABLATIONS:
            raise ValueError(f"ablation must be one of {', '.join(ABLATIONS)}, got {ablation!r}")
        if head is None:
            effects = self.layer_masked_effects if ablation == "mask" else self.layer_norms
            return self.layer_weights, self.layer_norms, effects
        effects = self.masked_effects[head] if ablation == "mask" else self.norms[head]
        return self.weights[head], self.norms[head], effects


def _query_row_mask(mask: Tensor | None, heads: int, length: int, query: int) -> Tensor:
    """The run's keep-mask for row ``query``, per head: (H, L) bool (all True without a mask)."""
    if mask is None:
        return torch.ones(heads, length, dtype=torch.bool, device="cpu")
    if mask.dtype != torch.bool:
        raise ValueError(f"key_measures needs a bool keep-mask (True = may attend), got dtype {mask.dtype}")
    full = mask.expand(1, heads, -1, length)  # (1, H, Lq, L)
    return full[0, :, query if full.size(2) > 1 else 0].cpu()  # (H, L)


def _per_head_parts(model: MultiHeadAttention, x: Tensor, mask: Tensor | None, query: int) -> tuple[Tensor, ...]:
    """The pieces of query ``query``'s output, float64 on the CPU: scaled scores (H, L), keep (H, L), the values
    v (H, L, Dh) and each head's slice of W_o, transposed: (H, Dh, D)."""
    heads, d_k, d_model = model.num_heads, model.d_k, model.d_model
    with torch.inference_mode():
        q_heads, k_heads, v_heads = model.heads_for_attention(x, x, x)  # (1, H, L, Dh) each: after RoPE and GQA
        q_i = q_heads[0, :, query].cpu().double()  # (H, Dh): float64 on the CPU (Apple's mps has none)
        k = k_heads[0].cpu().double()  # (H, L, Dh)
        scores = torch.matmul(k, q_i.unsqueeze(-1)).squeeze(-1) * default_scale(d_k)  # (H,L,Dh) @ (H,Dh,1) -> (H,L)
        w_o = model.W_o.weight.detach().cpu().double().view(d_model, heads, d_k).permute(1, 2, 0)  # (H, Dh, D)
        values = v_heads[0].cpu().double()  # (H, L, Dh)
    keep = _query_row_mask(mask, heads, x.size(1), query)
    return scores, keep, values, w_o


def _masked_deltas(scores: Tensor, keep: Tensor, f: Tensor) -> Tensor:
    """Δ of one head's part of the output when key j is masked too, for every j: (L, D).

    Key j's cell is blocked in the query's row (with the run's own blocks) and the softmax is taken again
    (:func:`mha.functional.masked_softmax`: a row left with no key gives zero weights, as in the engine).

    Shape:
        scores (L,), keep (L,), f (L, D) -> (L, D).
    """
    length = scores.numel()
    base = torch.matmul(masked_softmax(apply_mask(scores, keep)), f)  # (L,) @ (L, D) -> (D,)
    keep_j = keep.unsqueeze(0) & ~torch.eye(
        length, dtype=torch.bool, device=keep.device
    )  # (L, L): row j keeps every key but j
    new_weights = masked_softmax(apply_mask(scores.expand(length, length), keep_j))  # (L, L)
    return torch.matmul(new_weights, f) - base  # (L, L) @ (L, D) -> (L, D)


def key_measures(model: MultiHeadAttention, x: Tensor, mask: Tensor | None, query: int) -> KeyMeasures:
    """The weight, the norm and the effect of masking, of every key for one query, per head and for the layer.

    Computed in float64 from the layer's own projections, one head at a time (a few (L, D) buffers at once);
    W_o's bias is the same whatever is removed and is left out of every vector (it cancels in every Δ).

    Args:
        model: the attention layer (any dtype, any device).
        x: its input, self-attention, shape (1, L, D).
        mask: ``None`` or the run's bool keep-mask, broadcastable to (1, H, L, L).
        query: the query's position, 0 .. L - 1.

    Returns:
        A :class:`KeyMeasures`; tensors on the CPU, float64.
    """
    length = x.size(1)
    if not 0 <= query < length:
        raise ValueError(f"query must be a position from 0 to {length - 1}, got query={query}")
    scores, keep, values, w_o = _per_head_parts(model, x, mask, query)
    weights = masked_softmax(apply_mask(scores, keep))  # (H, L)
    heads, d_model = w_o.size(0), w_o.size(-1)
    value_norms, norms, masked_effects = (
        torch.zeros(heads, length, dtype=torch.float64, device="cpu") for _ in range(3)
    )
    layer_f, layer_c, layer_delta = (torch.zeros(length, d_model, dtype=torch.float64, device="cpu") for _ in range(3))
    for head in range(heads):
        f = torch.matmul(values[head], w_o[head])  # (L, Dh) @ (Dh, D) -> (L, D): f_h(x_j) for every key
        contributions = weights[head].unsqueeze(-1) * f  # (L, 1) * (L, D) -> (L, D)
        deltas = _masked_deltas(scores[head], keep[head], f)  # (L, D)
        value_norms[head], norms[head], masked_effects[head] = (v.norm(dim=-1) for v in (f, contributions, deltas))
        layer_f += f
        layer_c += contributions
        layer_delta += deltas
    return KeyMeasures(
        query=query,
        weights=weights,
        value_norms=value_norms,
        norms=norms,
        masked_effects=masked_effects,
        layer_weights=weights.mean(dim=0),
        layer_value_norms=layer_f.norm(dim=-1),
        layer_norms=layer_c.norm(dim=-1),
        layer_masked_effects=layer_delta.norm(dim=-1),
        allowed=keep.any(dim=0),
    )


def ablation_deltas(
    model: MultiHeadAttention, x: Tensor, mask: Tensor | None, query: int, head: int | None, ablation: str
) -> Tensor:
    """The change of the layer's output for ``query`` when each key j is removed, as vectors: (L, D), float64.

    Args:
        head: remove the key in this head only; ``None``: in every head.
        ablation: ``"mask"`` (block the cell; the weights renormalise) or ``"zero_value"`` (v_j = 0: Δ = -α f).
    """
    if ablation not in ABLATIONS:
        raise ValueError(f"ablation must be one of {', '.join(ABLATIONS)}, got {ablation!r}")
    scores, keep, values, w_o = _per_head_parts(model, x, mask, query)
    weights = masked_softmax(apply_mask(scores, keep))  # (H, L)
    total = torch.zeros(x.size(1), w_o.size(-1), dtype=torch.float64, device=w_o.device)  # (L, D)
    for h in range(w_o.size(0)) if head is None else (head,):
        f = torch.matmul(values[h], w_o[h])  # (L, Dh) @ (Dh, D) -> (L, D)
        if ablation == "mask":
            total += _masked_deltas(scores[h], keep[h], f)
        else:
            total -= weights[h].unsqueeze(-1) * f  # (L, 1) * (L, D)
    return total


@dataclass(frozen=True)
class PredictionEffects:
    """What removing each key (in one layer, for one query) does to a trained model's prediction at that query."""

    readouts: tuple[int, ...]  # the readouts the task scores at the query (their targets are not ignored)
    predicted: Tensor  # (R,) the class each readout predicts with nothing removed
    probability: Tensor  # (R,) its probability
    drops: Tensor  # (L, R) how much that probability falls when key j is removed (negative: it rises)
    flips: Tensor  # (L, R) bool: removing key j changes the predicted class

    @property
    def largest_drop(self) -> Tensor:
        """(L,) the largest fall of the predicted class's probability over the scored readouts."""
        return self.drops[:, list(self.readouts)].amax(dim=1)

    @property
    def any_flip(self) -> Tensor:
        """(L,) bool: removing key j changes the prediction of a scored readout."""
        return self.flips[:, list(self.readouts)].any(dim=1)


def prediction_effects(
    task_model: Model,
    ids: Tensor,
    mask: Tensor | None,
    layer: int,
    query: int,
    deltas: Tensor,
    readouts: tuple[int, ...],
) -> PredictionEffects:
    """Run a trained model again with layer ``layer``'s output for ``query`` changed by each key's Δ.

    The change is exact: removing key j for one query changes only that query's row of that layer's output, by
    ``deltas[j]`` (:func:`ablation_deltas`); everything after it (the residual, later layers, the readouts) is
    computed again, one batch row per key (the model's ``changed_logits``). A Pre-Norm classifier (the reviews) reads
    its one readout at [CLS], whatever the query: its prediction is at [CLS] (R = 1).

    Args:
        task_model: the trained model (a task's, :meth:`mha.training.tasks.Task.build_model`).
        ids: the token ids, shape (L,).
        mask: the keep-mask every layer ran with, broadcastable to (1, H, L, L), or ``None``.
        layer: the attention layer the keys are removed from.
        query: the query's position.
        deltas: (L, D) the change of that layer's output row ``query`` for each removed key.
        readouts: the readouts whose prediction at ``query`` counts (scored by the task there).

    Shape:
        drops, flips: (L keys, R readouts).
    """
    length = ids.numel()
    param = next(task_model.parameters())
    change = torch.zeros(length + 1, length, deltas.size(-1), dtype=param.dtype, device=param.device)  # (1 + L, L, D)
    change[1:, query] = deltas.to(change)  # row 0: nothing removed; row 1 + j: key j removed
    with torch.inference_mode():  # (1 + L, R, C) at the query; a classifier's (1 + L, 1, C) at [CLS]
        logits = task_model.changed_logits(ids.view(1, -1).to(param.device), mask, layer, change, query)
    probabilities = torch.softmax(logits.cpu().double(), dim=-1)  # (1 + L, R, C): float64 on the CPU
    predicted = probabilities[0].argmax(dim=-1)  # (R,)
    picked = probabilities.gather(-1, predicted.view(1, -1, 1).expand(length + 1, -1, 1)).squeeze(-1)  # (1 + L, R)
    return PredictionEffects(
        readouts=readouts,
        predicted=predicted,
        probability=picked[0],
        drops=picked[0] - picked[1:],
        flips=probabilities[1:].argmax(dim=-1) != predicted,
    )


def ranks(values: Tensor) -> Tensor:
    """Ranks from 1 (the largest) to n, ties sharing their mean rank: (n,) -> (n,) float64."""
    values = values.double()
    greater = (values.unsqueeze(0) > values.unsqueeze(1)).sum(dim=1)  # (n,): how many are larger
    equal = (values.unsqueeze(0) == values.unsqueeze(1)).sum(dim=1)  # (n,): itself included
    return greater.double() + (equal.double() + 1) / 2


def spearman(a: Tensor, b: Tensor) -> float | None:
    """Spearman's rank correlation of two (n,) tensors (Pearson's of the ranks); ``None`` when undefined."""
    rank_a, rank_b = ranks(a), ranks(b)
    rank_a, rank_b = rank_a - rank_a.mean(), rank_b - rank_b.mean()
    denominator = float(rank_a.norm() * rank_b.norm())
    return None if denominator == 0 else float((rank_a * rank_b).sum()) / denominator


def kendall_tau(a: Tensor, b: Tensor) -> float | None:
    """Kendall's τ-b of two (n,) tensors: (concordant - discordant) pairs, corrected for ties; ``None`` if undefined."""
    sign_a = torch.sign(a.double().unsqueeze(0) - a.double().unsqueeze(1))  # (n, n)
    sign_b = torch.sign(b.double().unsqueeze(0) - b.double().unsqueeze(1))  # (n, n)
    upper = torch.ones_like(sign_a, dtype=torch.bool).triu(1)  # each pair once
    pairs_a, pairs_b = float(sign_a.abs()[upper].sum()), float(sign_b.abs()[upper].sum())  # pairs not tied
    if pairs_a == 0 or pairs_b == 0:
        return None
    return float((sign_a * sign_b)[upper].sum()) / (pairs_a * pairs_b) ** 0.5


def disagreements(a: Tensor, b: Tensor, count: int = 3) -> list[tuple[int, float, float]]:
    """The ``count`` positions whose ranks by ``a`` and by ``b`` differ most: ``(index, rank by a, rank by b)``.

    Ranks are 1 for the largest; ties in the difference go to the earlier position.
    """
    rank_a, rank_b = ranks(a), ranks(b)
    gap = (rank_a - rank_b).abs()
    order = sorted(range(gap.numel()), key=lambda i: (-float(gap[i]), i))
    return [(i, float(rank_a[i]), float(rank_b[i])) for i in order[:count] if float(gap[i]) > 0]
