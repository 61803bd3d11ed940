"""The weight-source seam: specs as cache keys, the seeded source, runs that carry their model, head labels."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from conftest import trained_spec

from mha.checkpoints import (
    CHECKPOINTS_ENV,
    DEFAULT_CHECKPOINTS,
    checkpoint_location,
    checkpoint_names,
    parse_checkpoints,
)
from mha.config import LIMITS, PRETRAINED, TRAINED, AttentionConfig, ConfigError, WeightSpec
from mha.head_labels import BROAD, LABEL_THRESHOLD, label_heads, positional_relations
from mha.masks import causal_mask
from mha.pipeline import run_attention
from mha.reference import compare_with_torch
from mha.sources import SourceSizes, make_source, source_sizes
from mha.sources.seeded import SeededSource, build_model


# ---------------------------------------------------------------- specs
def test_a_spec_holds_only_what_decides_the_weights():
    base = AttentionConfig(d_model=32, num_heads=4, seed=3)
    for change in ({"mask_type": "causal"}, {"tokens": "another sentence"}, {"layer": 1}, {"positional": False}):
        assert dataclasses.replace(base, **change).weight_spec == base.weight_spec, change
    for change in ({"seed": 4}, {"d_model": 64}, {"num_heads": 8}):
        assert dataclasses.replace(base, **change).weight_spec != base.weight_spec, change


def test_trained_specs_name_the_task_and_the_sentence_only_where_the_task_trains_on_it():
    trained = AttentionConfig(d_model=64, num_heads=2, weights=TRAINED, task="previous_and_first")
    assert trained.weight_spec == trained_spec(64, 2, 0, task="previous_and_first")
    assert dataclasses.replace(trained, tokens="other words").weight_spec == trained.weight_spec
    unscramble = dataclasses.replace(trained, task="unscramble")
    assert unscramble.weight_spec.text == unscramble.tokens
    assert dataclasses.replace(unscramble, tokens="other words").weight_spec != unscramble.weight_spec


def test_a_pretrained_spec_is_the_checkpoint_alone():
    name = checkpoint_names()[0]
    config = AttentionConfig(d_model=512, num_heads=7, weights=PRETRAINED, checkpoint=name)  # 512 / 7: not checked
    assert config.weight_spec == WeightSpec(PRETRAINED, checkpoint=name)
    assert dataclasses.replace(config, seed=5, d_model=64, num_heads=2).weight_spec == config.weight_spec


def test_training_sizes_are_capped_in_the_config():
    AttentionConfig(d_model=LIMITS.train_d_model_max, num_heads=2, weights=TRAINED)
    with pytest.raises(ConfigError) as error:
        AttentionConfig(d_model=LIMITS.train_d_model_max * 2, num_heads=2, weights=TRAINED)
    assert (error.value.field, error.value.code) == ("d_model", "too_big_to_train")
    with pytest.raises(ConfigError):
        AttentionConfig(d_model=64, num_heads=LIMITS.train_num_heads_max * 2, weights=TRAINED)


@pytest.mark.parametrize(
    ("field", "value"),
    [("weights", "magic"), ("task", "sorting"), ("layer", -1), ("layer", LIMITS.layers_max), ("tokenizer", "bpe")],
)
def test_unknown_weight_choices_are_refused_naming_the_field(field, value):
    with pytest.raises(ConfigError) as error:
        AttentionConfig(**{field: value})
    assert error.value.field == field


# ---------------------------------------------------------------- the server's checkpoint list
def test_the_checkpoint_list_is_names_to_locations():
    assert parse_checkpoints("tiny=/srv/models/tiny, zh = org/bert-zh") == {
        "tiny": "/srv/models/tiny",
        "zh": "org/bert-zh",
    }
    for bad in ("tiny", "=/srv/x", "tiny=", "../x=/srv", "a=1,a=2", "has space=/x"):
        with pytest.raises(ValueError, match=CHECKPOINTS_ENV):
            parse_checkpoints(bad)


def test_without_the_variable_the_default_list_is_offered(monkeypatch):
    monkeypatch.delenv(CHECKPOINTS_ENV, raising=False)
    assert checkpoint_names() == tuple(DEFAULT_CHECKPOINTS)
    monkeypatch.setenv(CHECKPOINTS_ENV, "mine=/srv/models/mine")
    assert checkpoint_names() == ("mine",)
    assert checkpoint_location("mine") == "/srv/models/mine"


@pytest.mark.parametrize("asked", ["/etc/passwd", "../models/x", "https://example.com/m", "org/model", "nope"])
def test_a_checkpoint_off_the_list_is_refused_by_the_config(asked, monkeypatch):
    monkeypatch.setenv(CHECKPOINTS_ENV, "mine=/srv/models/mine")
    with pytest.raises(ConfigError) as error:
        AttentionConfig(weights=PRETRAINED, checkpoint=asked)
    assert (error.value.field, error.value.code) == ("checkpoint", "unknown")
    with pytest.raises(KeyError):
        checkpoint_location(asked)  # a name off the list is never turned into a location


# ---------------------------------------------------------------- the seeded source and the run
def test_the_seeded_source_makes_build_models_weights_once_per_device_and_dtype():
    spec = AttentionConfig(d_model=16, num_heads=4, seed=2).weight_spec
    source = make_source(spec)
    assert isinstance(source, SeededSource)
    cpu = torch.device("cpu")  # pinned: compared bit for bit with build_model's draw on the CPU
    first = source.model(cpu, "float32")
    assert source.model(cpu, "float32") is first
    assert source.model(cpu, "float64").W_q.weight.dtype == torch.float64
    for name, tensor in build_model(16, 4, seed=2).state_dict().items():  # a seed draws the same bits: exactly
        assert torch.equal(first.state_dict()[name], tensor), name
    assert source_sizes(spec) == SourceSizes(16, 4, 1)


def test_trained_sources_report_their_layer_count_before_training():
    assert source_sizes(trained_spec(64, 2, 0, task="induction")).num_layers == 2
    assert source_sizes(trained_spec(64, 2, 0, task="previous")).num_layers == 1


def test_a_run_carries_the_model_it_ran_and_reads_sizes_from_its_trace():
    config = AttentionConfig(d_model=24, num_heads=3, mask_type="causal", tokens="one two three four", dtype="float64")
    source = SeededSource(config.weight_spec)
    run = run_attention(config, source)
    assert run.model is source.model(run.device.device, "float64")  # the model of the run's device and dtype
    assert (run.d_model, run.num_heads, run.d_k) == (24, 3, 8)
    assert run.tokens == ("one", "two", "three", "four") and isinstance(run.tokens, tuple)
    out, weights = run.model(run.x, run.x, run.x, run.mask)
    torch.testing.assert_close(out, run.trace.output, rtol=0, atol=1e-12)  # forward scales q, the trace the scores
    torch.testing.assert_close(weights, run.trace.weights, rtol=0, atol=1e-12)
    check = compare_with_torch(run.model, run.x, run.x, run.x, run.mask, run.trace.output, run.trace.weights)
    assert check.passed and check.tolerance == 1e-10


# ---------------------------------------------------------------- head labels
def _one_hot_rows(length: int, target: torch.Tensor) -> torch.Tensor:
    """(L, L) weights putting all of each row on ``target[i]``."""
    return torch.nn.functional.one_hot(target, length).double()


def test_labels_name_the_relation_that_holds_the_weight():
    length = 8
    positions = torch.arange(length)
    previous = _one_hot_rows(length, (positions - 1).clamp(min=0))
    first = _one_hot_rows(length, torch.zeros(length, dtype=torch.long))
    itself = _one_hot_rows(length, positions)
    following = _one_hot_rows(length, (positions + 1).clamp(max=length - 1))
    uniform = torch.full((length, length), 1 / length, dtype=torch.float64)
    labels = label_heads(torch.stack([previous, first, itself, following, uniform]))
    assert [label.name for label in labels] == ["previous token", "first token", "itself", "next token", BROAD]
    assert [label.share for label in labels[:4]] == [1.0, 1.0, 1.0, 1.0]
    assert labels[4].share == pytest.approx(1 / length)  # broad: the best relation's share, here uniform's


def test_a_row_without_a_choice_does_not_count():
    """Under a causal mask row 0 can only look at itself: that is the mask, not something the head learned."""
    length = 6
    mask = causal_mask(length)[0, 0]  # (L, L)
    uniform = mask.double() / mask.sum(dim=-1, keepdim=True)  # (L, L): uniform over what each row may see
    (label,) = label_heads(uniform.unsqueeze(0), mask)
    assert label.name == BROAD


def test_labels_need_a_clear_lift_over_uniform_weights():
    """With two tokens, uniform weights already give 0.5 to 'itself': that is no label."""
    (label,) = label_heads(torch.full((1, 2, 2), 0.5))
    assert label.name == BROAD and label.share == pytest.approx(0.5) and label.share >= LABEL_THRESHOLD


def test_a_sources_own_relation_and_scored_rows_are_used():
    length = 5
    digits = torch.zeros(length, length, dtype=torch.bool)
    digits[1:, 1] = True  # rows 1.. point at key 1 (say, the last digit)
    weights = _one_hot_rows(length, torch.tensor([0, 0, 1, 1, 1])).unsqueeze(0)  # row 1 looks elsewhere
    scored = torch.tensor([False, False, True, True, True])  # ... but the loss never looked at row 1
    (label,) = label_heads(weights, relations={"last digit": digits}, rows=scored)
    assert (label.name, label.share) == ("last digit", 1.0)
    (every_row,) = label_heads(weights, relations={"last digit": digits})
    assert (every_row.name, every_row.share) == ("last digit", 0.75)  # rows 1-4 count: 3 of 4 on the digit


def test_positional_relations_point_where_their_names_say():
    relations = positional_relations(4)
    assert relations["previous token"].nonzero().tolist() == [[1, 0], [2, 1], [3, 2]]
    assert relations["next token"].nonzero().tolist() == [[0, 1], [1, 2], [2, 3]]
    assert relations["first token"].nonzero().tolist() == [[1, 0], [2, 0], [3, 0]]
    assert relations["itself"].nonzero().tolist() == [[0, 0], [1, 1], [2, 2], [3, 3]]
