"""The pattern search: previous-token and induction scores against hand computations, the repeated random
sequence, and the scores of a tiny GPT-2 whose weights plant a previous-token head (0.0) and an induction
head (1.0) that works by composition (``tiny_checkpoint.build_induction_gpt2``).

What the planted-model test proves: on a repeated sequence of random tokens the scores single out exactly
the planted heads -- head 0.0 by position (it looks one back), head 1.0 by content alone (its query is the
current token, its key the previous token that head 0.0 wrote into the residual stream): nothing in its
own weights knows a position, so its induction score can only come from the composition of the two layers.
The ablation test shows it: with head 0.0's output zeroed, head 1.0 scores what uniform weights score.
"""

from __future__ import annotations

import pytest
import torch
from tiny_checkpoint import INDUCTION_HEAD, PREVIOUS_HEAD

from mha.config import PRETRAINED, WeightSpec
from mha.head_finder import rank_table
from mha.head_patterns import (
    causal_uniform,
    head_patterns,
    induction_scores,
    previous_token_scores,
    repeated_sequence,
)
from mha.sources import make_source
from mha.sources.checkpoint.loader import load_checkpoint

ANIMAL = "The animal didn't cross the street because it was too tired"


# ---------------------------------------------------------------- against hand computations
def test_previous_token_scores_are_the_mean_weight_on_the_key_before():
    maps = torch.zeros(1, 2, 4, 4)  # (layers, H, L, L)
    maps[0, 0] = torch.tensor(
        [[1.0, 0, 0, 0], [0.9, 0.1, 0, 0], [0.2, 0.6, 0.2, 0], [0.1, 0.1, 0.5, 0.3]]
    )  # head 0: 0.9, 0.6, 0.5 one key back
    maps[0, 1] = causal_uniform(4)[0, 0].float()  # head 1: 1/2, 1/3, 1/4
    scores = previous_token_scores(maps)
    assert scores.shape == (1, 2) and scores.dtype == torch.float64
    assert float(scores[0, 0]) == pytest.approx((0.9 + 0.6 + 0.5) / 3, abs=1e-7)
    assert float(scores[0, 1]) == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3, abs=1e-7)
    with pytest.raises(ValueError):
        previous_token_scores(torch.ones(1, 1, 1, 1))


def test_the_repeated_sequence_is_seeded_distinct_and_framed():
    candidates = torch.arange(10, 60)
    sequence = repeated_sequence(candidates, 5, seed=3, prefix=(1,), suffix=(2,))
    ids = sequence.ids.tolist()
    assert (len(ids), ids[0], ids[-1], sequence.start, sequence.half) == (12, 1, 2, 1, 5)
    first, second = ids[1:6], ids[6:11]
    assert first == second and len(set(first)) == 5 and all(10 <= i < 60 for i in first)
    assert torch.equal(repeated_sequence(candidates, 5, seed=3, prefix=(1,), suffix=(2,)).ids, sequence.ids)
    assert not torch.equal(repeated_sequence(candidates, 5, seed=4).ids, sequence.ids[1:11])
    assert sequence.queries.tolist() == [6, 7, 8, 9, 10] and sequence.targets.tolist() == [2, 3, 4, 5, 6]
    for bad in (1, 51):
        with pytest.raises(ValueError):
            repeated_sequence(candidates, bad, seed=0)


def test_induction_scores_read_the_token_after_the_earlier_copy():
    sequence = repeated_sequence(torch.arange(100), 3, seed=0, prefix=(7,))  # positions: BOS, a b c, a b c
    length = sequence.ids.numel()  # 7
    maps = causal_uniform(length).float().repeat(2, 1, 1, 1)  # (layers=2, H=1, L, L)
    induction = torch.zeros(length, length)
    for query, target in ((4, 2), (5, 3), (6, 4)):  # from a, b, c (second copy) to b, c, a (after the first)
        induction[query, target] = 1.0
    induction[:4, 0] = 1.0  # the first copy has nothing to copy: it rests on the BOS
    maps[1, 0] = 0.8 * induction + 0.2 * causal_uniform(length)[0, 0].float()
    scores = induction_scores(maps, sequence)
    uniform = (1 / 5 + 1 / 6 + 1 / 7) / 3  # rows 4, 5, 6 spread over 5, 6, 7 keys
    assert float(scores[0, 0]) == pytest.approx(uniform, abs=1e-7)
    assert float(scores[1, 0]) == pytest.approx(0.8 + 0.2 * uniform, abs=1e-7)
    patterns = head_patterns(maps, sequence, scores)
    assert patterns.uniform_induction == pytest.approx(uniform, abs=1e-12)
    assert patterns.uniform_previous == pytest.approx(sum(1 / (i + 1) for i in range(1, length)) / (length - 1))
    assert patterns.half == 3 and patterns.previous.shape == (2, 1)
    with pytest.raises(ValueError):
        induction_scores(maps[..., :6, :6], sequence)


def test_rank_table_orders_heads_by_value_then_layer_then_head():
    table = torch.tensor([[0.2, 0.9], [0.9, 0.1]], dtype=torch.float64)
    assert [(r.layer, r.head, r.weight) for r in rank_table(table)] == [
        (0, 1, 0.9),
        (1, 0, 0.9),
        (0, 0, 0.2),
        (1, 1, 0.1),
    ]


# ---------------------------------------------------------------- the checkpoint's own probe
def test_the_probe_is_drawn_from_the_vocabulary_without_special_tokens(listed_gpt2):
    gpt2 = make_source(WeightSpec(PRETRAINED, checkpoint="gpt2"))
    sequence, maps = gpt2.induction_maps()
    tokenizer = load_checkpoint("gpt2").tokenizer
    assert sequence.start == 1 and sequence.ids[0] == tokenizer.bos_token_id  # GPT-2: BOS first, as TransformerLens
    assert sequence.half == 50 and maps.shape == (3, 4, 101, 101)
    drawn = set(sequence.ids[1:].tolist())
    assert not drawn & set(tokenizer.all_special_ids)
    again, _ = gpt2.induction_maps()
    assert torch.equal(again.ids, sequence.ids)  # seeded: the same sequence every time
    chinese = make_source(WeightSpec(PRETRAINED, checkpoint="gpt2-chinese"))
    framed, _ = chinese.induction_maps()
    tokens = load_checkpoint("gpt2-chinese").display_tokens(framed.ids.tolist())
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"  # the BERT tokenizer's own frame, not a BOS
    assert not [token for token in tokens[1:-1] if token.startswith("[")]  # no [PAD], [UNK], [MASK]...
    assert framed.half == 32  # 37 words less 5 special ones


def test_the_planted_heads_are_found_by_their_scores(listed_gpt2):
    source = make_source(WeightSpec(PRETRAINED, checkpoint="planted"))
    _, text_maps = source.attention_maps(ANIMAL)
    sequence, probe = source.induction_maps()
    patterns = head_patterns(text_maps, sequence, induction_scores(probe, sequence))
    previous, induction = patterns.previous, patterns.induction  # (layers, H)
    top_previous, top_induction = rank_table(previous)[0], rank_table(induction)[0]
    assert (top_previous.layer, top_previous.head) == PREVIOUS_HEAD and top_previous.weight > 0.99
    assert (top_induction.layer, top_induction.head) == INDUCTION_HEAD and top_induction.weight > 0.99
    others = [(layer, head) for layer in range(2) for head in range(2)]
    assert max(float(previous[cell]) for cell in others if cell != PREVIOUS_HEAD) < 0.3
    assert max(float(induction[cell]) for cell in others if cell != INDUCTION_HEAD) < 0.1
    assert float(induction[PREVIOUS_HEAD]) < 0.01  # the previous-token head looks one back, not at the copy
    # the zeroed heads are uniform under the causal mask: their scores are exactly the uniform baselines
    assert float(previous[0, 1]) == pytest.approx(patterns.uniform_previous, abs=1e-6)
    assert float(induction[1, 1]) == pytest.approx(patterns.uniform_induction, abs=1e-6)


def _induction_without(source, layer: int, head: int | None) -> tuple[torch.Tensor, torch.Tensor]:
    """The probe's weights (layers, H, L, L) and induction scores (layers, H) with head ``layer.head``'s output
    zeroed: its d_head features of the merged heads, before ``c_proj`` writes them into the residual stream
    (``None``: nothing zeroed)."""
    model = load_checkpoint("planted").model  # the model the source's forward runs
    d_head = model.config.n_embd // model.config.n_head

    def zero_head(_module, args):
        merged = args[0].clone()  # (1, L, H·d_head): head h's output in features h·d_head .. (h + 1)·d_head
        merged[..., head * d_head : (head + 1) * d_head] = 0.0
        return (merged, *args[1:])

    handle = None if head is None else model.h[layer].attn.c_proj.register_forward_pre_hook(zero_head)
    try:
        sequence, maps = source.induction_maps()
    finally:
        if handle is not None:
            handle.remove()
    return maps, induction_scores(maps, sequence)


def test_the_planted_induction_head_works_only_through_the_previous_token_head(listed_gpt2):
    """Zeroing head 0.0's output takes head 1.0's induction score down to what uniform causal weights score
    (its keys read only what head 0.0 wrote: without it every key is the same and the weights are uniform);
    zeroing the other head of layer 0 leaves it where it was (head 0.1's weights are zero, so this checks that
    the ablation removes one head's features and nothing else)."""
    source = make_source(WeightSpec("pretrained", checkpoint="planted"))
    sequence, _ = source.induction_maps()
    chance = float(induction_scores(causal_uniform(sequence.ids.numel()), sequence)[0, 0])
    assert chance < 0.05
    maps, scores = _induction_without(source, 0, None)
    assert float(scores[INDUCTION_HEAD]) > 0.99
    without_previous, ablated = _induction_without(source, *PREVIOUS_HEAD)
    assert float(ablated[INDUCTION_HEAD]) == pytest.approx(chance, abs=1e-3)
    torch.testing.assert_close(without_previous[0], maps[0])  # layer 0's own weights are untouched: only its output
    other = (PREVIOUS_HEAD[0], 1 - PREVIOUS_HEAD[1])
    without_other, kept = _induction_without(source, *other)
    assert float(kept[INDUCTION_HEAD]) > 0.99
    torch.testing.assert_close(without_other, maps)
    _, again = _induction_without(source, 0, None)  # the hooks are gone: the model computes as before
    torch.testing.assert_close(again, scores, rtol=0, atol=0)
