"""The trained weight source: which tokens it shows, the input of each layer, relations, scored rows, notes.

The models here are trained for a few steps only (what they learned does not matter: the
source's plumbing does); ``test_training.py`` checks what training learns.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
from conftest import trained_spec
from tolerances import FLOAT32

from mha import jobs
from mha.config import LIMITS, TRAINED, AttentionConfig, ConfigError
from mha.pipeline import run_attention
from mha.reference import compare_with_torch
from mha.sources import SourceSizes, make_source, source_sizes
from mha.sources.trained import TrainedSource
from mha.training import service as service_module
from mha.training.loop import train
from mha.training.service import TrainedModel, TrainingService

CPU = torch.device("cpu")
WORDS = ["the", "cat", "sat", "on", "the", "mat"]


def _source(config: AttentionConfig) -> TrainedSource:
    spec = config.weight_spec
    model, history = train(spec.task, spec.d_model, spec.num_heads, spec.seed, text=spec.text, max_steps=3)
    return TrainedSource(TrainedModel(spec, model, history))


def trained(**changes) -> AttentionConfig:
    return AttentionConfig(**{"d_model": 16, "num_heads": 2, "weights": "trained", "task": "previous", **changes})


def test_a_valid_sequence_from_the_text_box_is_shown():
    config = trained(task="previous_and_first", tokens="3 1 4 1 5 9 2 6")
    source = _source(config)
    inputs = source.prepare(config, CPU)
    assert inputs.tokens == tuple("31415926") and inputs.notes == ()
    model = source.model(CPU, "float32")
    ids = torch.tensor([[3, 1, 4, 1, 5, 9, 2, 6]])
    torch.testing.assert_close(inputs.x, model.embed(ids), **FLOAT32)  # layer 0's input: embeddings
    assert inputs.model is model.layers[0]
    assert inputs.scored_rows.tolist() == [False] + [True] * 7  # row 0 has no previous and no "first" target


def test_text_the_task_cannot_read_shows_the_sample_and_says_what_it_takes():
    config = trained(task="previous_and_last_digit")  # the default sentence
    source = _source(config)
    inputs = source.prepare(config, CPU)
    assert inputs.tokens == source.task.tokens(source.trained.history.probe)  # the timeline's sample
    (note,) = inputs.notes
    assert note.code == "trained_sample" and note.params["high"] == 12
    assert source.task.read_text(note.params["example"], "characters") is not None  # the example it gives works
    assert set(inputs.relations) == {"last digit"}


def test_induction_shows_either_layer_with_that_layers_input():
    config = trained(task="induction", tokens="a b c d x y a b c", mask_type="causal")
    source = _source(config)
    assert source.num_layers == 2 and source_sizes(config.weight_spec) == SourceSizes(16, 2, 2)
    first = source.prepare(config, CPU)
    second = source.prepare(dataclasses.replace(config, layer=1), CPU)
    model = source.model(CPU, "float32")
    out, _ = model.layers[0](first.x, first.x, first.x, torch.ones(1, 1, 9, 9, dtype=torch.bool).tril())
    torch.testing.assert_close(second.x, first.x + out)  # layer 1's input: x + MHA_0(x)
    assert second.model is model.layers[1] and second.layer == 1
    assert first.scored_rows.all()  # every row of layer 0 feeds layer 1
    assert second.scored_rows.tolist() == [False] * 6 + [True] * 3  # the repeated a b c
    assert second.relations["induction"].nonzero().tolist() == [[6, 1], [7, 2], [8, 3]]
    assert first.notes == ()
    with pytest.raises(ConfigError) as error:
        source.prepare(dataclasses.replace(config, layer=2), CPU)
    assert (error.value.field, error.value.code, error.value.params["high"]) == ("layer", "out_of_range", 1)


def test_notes_for_no_repeat_and_a_mask_the_model_was_not_trained_with():
    config = trained(task="induction", tokens="a b c d", mask_type="causal")
    source = _source(config)
    assert [note.code for note in source.prepare(config, CPU).notes] == ["trained_no_repeat"]
    unmasked = dataclasses.replace(config, mask_type="none", tokens="a b a b")
    assert [note.code for note in source.prepare(unmasked, CPU).notes] == ["trained_mask_causal"]
    previous = trained(mask_type="window", tokens="a b c")
    assert [note.code for note in _source(previous).prepare(previous, CPU).notes] == ["trained_mask_none"]


def test_unscramble_trains_on_the_learners_sentence_and_shows_its_shuffle():
    config = trained(task="unscramble", tokens="the cat sat on the mat")
    assert config.weight_spec.text == "the cat sat on the mat"
    source = _source(config)
    inputs = source.prepare(config, CPU)
    assert sorted(inputs.tokens[:6]) == sorted(WORDS) and inputs.tokens[6:] == ("_",) * 6
    assert [note.code for note in inputs.notes] == ["trained_unscramble"]
    pointer = inputs.relations["shuffled position"]
    for k in range(6):  # blank k points at word k of the sentence
        (where,) = pointer[6 + k].nonzero().flatten().tolist()
        assert source.task.vocab[int(source.trained.history.probe[where])] == WORDS[k]
    assert inputs.scored_rows.tolist() == [False] * 6 + [True] * 6


def test_a_trained_run_goes_through_the_same_four_steps_and_live_check():
    config = trained(task="previous_and_first", tokens="3 1 4 1 5", dtype="float64")
    source = _source(config)
    run = run_attention(config, source)
    assert run.source_kind == TRAINED and run.num_layers == 1 and len(run.head_labels) == 2
    assert run.model.W_q.weight.dtype == torch.float64
    assert run.model is source.model(run.device.device, "float64").layers[0]  # the model of the run's device
    check = compare_with_torch(run.model, run.x, run.x, run.x, run.mask, run.trace.output, run.trace.weights)
    assert check.passed
    assert source.model(CPU, "float32").layers[0].W_q.weight.dtype == torch.float32  # a copy per dtype


def test_make_source_trains_through_the_shared_service(monkeypatch):
    calls = []

    def short(spec, on_step, should_stop):
        calls.append(spec)
        return train(spec.task, spec.d_model, spec.num_heads, spec.seed, max_steps=2, device=spec.device or "cpu")

    monkeypatch.setitem(jobs._SERVICES, service_module.SERVICE_NAME, TrainingService(trainer=short))
    spec = trained().weight_spec
    first, second = make_source(spec), make_source(spec)
    assert isinstance(first, TrainedSource) and first.trained is second.trained and calls == [spec]


# ---------------------------------------------------------------- the config
def test_a_trained_spec_joins_the_sentences_tokens_only_for_unscramble():
    config = trained(task="unscramble", tokens="  the  cat\tsat ")
    assert config.weight_spec == trained_spec(16, 2, 0, task="unscramble", text="the cat sat")
    assert trained(tokens="a b").weight_spec.text is None
    chinese = trained(task="unscramble", tokens="小明喜欢打球", tokenizer="words")
    assert chinese.weight_spec.text == "小明 喜欢 打球"


@pytest.mark.parametrize("tokens", ["alone", " ".join(f"w{i}" for i in range(LIMITS.unscramble_words_max + 1))])
def test_unscramble_needs_a_sentence_it_can_train_on(tokens):
    with pytest.raises(ConfigError) as error:
        trained(task="unscramble", tokens=tokens)
    assert (error.value.field, error.value.code) == ("tokens", "unscramble_length")
    trained(task="previous", tokens=tokens)  # other tasks show a sample instead


@pytest.mark.parametrize(
    ("d_model", "num_heads"), [(LIMITS.train_d_model_max * 2, 2), (64, LIMITS.train_num_heads_max * 2)]
)
def test_training_over_the_caps_is_refused(d_model, num_heads):
    with pytest.raises(ConfigError) as error:
        trained(d_model=d_model, num_heads=num_heads)
    assert error.value.code == "too_big_to_train"
