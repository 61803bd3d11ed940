"""Training the scratch attention on small tasks: the tasks' rules, the model, training itself, determinism.

Targets are checked against plain-Python versions of each task's rule written here; training
runs tiny configurations (d_model 16-32, 2 heads), a few seconds in all.
"""

from __future__ import annotations

import math

import pytest
import torch
from tolerances import FLOAT32, assert_same_training

from mha.head_labels import label_heads
from mha.module import MultiHeadAttention
from mha.training import loop, train
from mha.training.loop import EVAL_SEQUENCES, SHARPEN_STEPS, SNAPSHOTS_MAX, TrainingStoppedError, head_difference
from mha.training.tasks import (
    DIGITS,
    HELD_OUT_MAX,
    HELD_OUT_SHARE,
    IGNORE,
    SYMBOLS,
    make_task,
    task_layers,
    task_mask,
)

SENTENCE = "the cat sat on the mat"
TASK_TEXT = {"unscramble": SENTENCE}


def _sample(name: str, batch: int = 64, seed: int = 0) -> torch.Tensor:
    return make_task(name, TASK_TEXT.get(name)).sample(batch, torch.Generator().manual_seed(seed))


# ---------------------------------------------------------------- the rules, written out by hand
def _expected(name: str, ids: list[int]) -> list[list[int]]:
    """The targets (R, L) of one sequence, by the task's rule in plain Python."""
    length = len(ids)
    previous = [IGNORE, *ids[:-1]]
    if name == "previous":
        return [previous]
    if name == "previous_and_first":
        return [previous, [IGNORE, *[ids[0]] * (length - 1)]]
    if name == "previous_and_last_digit":
        digits = []
        for i in range(length):
            found = [ids[j] for j in range(i) if SYMBOLS[ids[j]] in DIGITS]
            digits.append(found[-1] if found else IGNORE)
        return [previous, digits]
    if name == "induction":
        out = []
        for i in range(length):
            earlier = [j for j in range(i) if ids[j] == ids[i]]
            out.append(ids[earlier[-1] + 1] if earlier else IGNORE)
        return [out]
    words = length // 2  # unscramble: shuffled words, then blanks
    return [[IGNORE] * words + [ids[:words].index(k) for k in range(words)]]


@pytest.mark.parametrize(
    "name", ["previous", "previous_and_first", "previous_and_last_digit", "induction", "unscramble"]
)
def test_targets_follow_the_tasks_rule(name):
    task = make_task(name, TASK_TEXT.get(name))
    ids = _sample(name)
    assert ids.shape == (64, task.length) and ids.dtype == torch.long
    assert int(ids.min()) >= 0 and int(ids.max()) < len(task.vocab)
    targets = task.targets(ids)
    assert targets.shape == (64, len(task.outputs), task.length)
    for row, target in zip(ids.tolist(), targets.tolist(), strict=True):
        assert target == _expected(name, row)


@pytest.mark.parametrize("name", ["previous_and_last_digit", "induction", "unscramble"])
def test_a_tasks_relation_points_where_its_target_comes_from(name):
    task = make_task(name, TASK_TEXT.get(name))
    for ids in _sample(name, batch=16):
        ((relation, cells),) = task.relations(ids, task.layers - 1).items()
        target = task.targets(ids.unsqueeze(0))[0, -1]  # the content output
        for i in range(task.length):
            pointed = cells[i].nonzero().flatten().tolist()
            if int(target[i]) == IGNORE:
                assert pointed == [], (relation, i)
            else:
                (j,) = pointed
                assert (int(ids[j]) if name != "unscramble" else j) == int(target[i]), (relation, i)


def test_induction_sequences_repeat_a_stretch_at_varying_distances():
    ids = _sample("induction", batch=256)
    distances = set()
    for row in ids.tolist():
        repeated = [i for i in range(len(row)) if row[i] in row[:i]]
        assert 2 <= len(repeated) <= 6  # one stretch of 2..6 tokens, seen once before
        distances.add(repeated[0] - row.index(row[repeated[0]]))
    assert len(distances) >= 4  # no fixed offset solves the task: it needs content


def test_examples_show_the_task_relations_apart_from_the_previous_token():
    for name in ("previous_and_last_digit", "induction"):
        task = make_task(name)
        ids = task.example(torch.Generator().manual_seed(3))
        ((_, cells),) = task.relations(ids, task.layers - 1).items()
        previous = torch.ones(task.length, task.length, dtype=torch.bool).tril(-1).triu(-1)
        assert int((cells & ~previous).any(dim=-1).sum()) >= 3, name


def test_the_learners_text_is_read_when_it_is_a_sequence_of_the_task():
    task = make_task("previous_and_first")
    assert task.tokens(task.read_text("3 1 4 1 5 9 2 6", "characters")) == tuple("31415926")
    assert task.tokens(task.read_text("31415926", "characters")) == tuple("31415926")  # no spaces: characters
    assert task.tokens(task.read_text("A b C", "characters")) == ("a", "b", "c")
    for text in ("The animal didn't cross", "3", "1 2 3 4 5 6 7 8 9 0 1 2 3", "12 3 4", "小 明", ""):
        assert task.read_text(text, "characters") is None, text
    assert make_task("unscramble", SENTENCE).read_text("3 1 4", "characters") is None  # it reads its sentence only


def test_task_sizes_and_masks():
    assert [task_layers(n) for n in ("previous", "induction")] == [1, 2]
    assert [task_mask(n) for n in ("previous", "induction")] == ["none", "causal"]
    unscramble = make_task("unscramble", SENTENCE)
    assert unscramble.length == 12 and unscramble.classes == 6 and unscramble.vocab[-1] == "_"
    with pytest.raises(ValueError, match="unknown task"):
        make_task("sorting")
    with pytest.raises(ValueError, match="two tokens"):
        make_task("unscramble", "alone")


# ---------------------------------------------------------------- the model
def test_the_model_is_the_projects_attention_with_embeddings_and_readouts():
    task = make_task("induction")
    model = task.build_model(32, 4, torch.Generator().manual_seed(0))
    assert [type(layer) for layer in model.layers] == [MultiHeadAttention, MultiHeadAttention]
    ids = _sample("induction", batch=3)
    mask = task.training_mask(task.length)
    logits, weights = model(ids, mask)
    assert logits.shape == (3, 1, 12, len(SYMBOLS))
    assert [w.shape for w in weights] == [(3, 4, 12, 12)] * 2
    assert bool((weights[0][..., 0, 1:] == 0).all())  # causal: the first token sees only itself
    xs, _ = model.layer_inputs(ids, mask)
    out, _ = model.layers[0](xs[0], xs[0], xs[0], mask)
    torch.testing.assert_close(xs[1], xs[0] + out)  # x + MHA(x)


def test_building_a_model_never_touches_the_global_rng():
    state = torch.random.get_rng_state()
    first = make_task("previous").build_model(16, 2, torch.Generator().manual_seed(5))
    second = make_task("previous").build_model(16, 2, torch.Generator().manual_seed(5))
    assert torch.equal(torch.random.get_rng_state(), state)
    for name, tensor in first.state_dict().items():  # a seed draws the same bits: exactly
        assert torch.equal(tensor, second.state_dict()[name]), name


def test_head_difference_is_the_mean_total_variation_between_heads():
    rows = torch.ones(1, 3, dtype=torch.bool)
    same = torch.full((1, 2, 3, 3), 1 / 3)
    assert head_difference(same, rows) == 0.0
    apart = torch.zeros(1, 2, 3, 3)
    apart[0, 0, :, 0] = 1.0
    apart[0, 1, :, 2] = 1.0
    assert head_difference(apart, rows) == 1.0
    half = apart.clone()
    half[0, 1] = torch.tensor([0.5, 0.0, 0.5]).expand(3, 3)  # TV to head 0: (0.5 + 0.5) / 2 = 0.5
    three = torch.cat([apart, half[:, 1:]], dim=1)  # pairs: (0,1) 1.0, (0,2) 0.5, (1,2) 0.5
    assert head_difference(three, rows) == pytest.approx(2 / 3)
    assert head_difference(apart[:, :1], rows) == 0.0  # one head: nothing to compare
    only_row_0 = torch.tensor([[True, False, False]])
    assert head_difference(apart, only_row_0) == 1.0


# ---------------------------------------------------------------- training
def _labels(model, history, name: str, layer: int = 0):
    task = make_task(name)
    ids = history.probe
    mask = task.training_mask(ids.numel())
    _, weights = model.layer_inputs(ids.unsqueeze(0), mask)
    rows = task.scored_rows(ids.unsqueeze(0), layer)[0]
    return label_heads(weights[layer][0], mask, task.relations(ids, layer), rows)


def test_previous_and_first_reaches_the_target_with_one_head_per_relation():
    model, history = train("previous_and_first", d_model=32, num_heads=2, seed=0)
    assert history.target_step is not None and history.accuracy >= 0.99
    assert history.steps == history.target_step + SHARPEN_STEPS  # sharpened after the target
    assert len(history.losses) == len(history.accuracies) == history.steps
    labels = _labels(model, history, "previous_and_first")
    assert sorted(label.name for label in labels) == ["first token", "previous token"]
    assert min(label.share for label in labels) >= 0.9
    assert history.head_difference[0][-1] > 0.8  # the two heads look at different tokens
    assert not model.training and not any(p.requires_grad for p in model.parameters())


def test_previous_gives_every_head_the_same_relation():
    model, history = train("previous", d_model=16, num_heads=2, seed=1)
    assert history.accuracy >= 0.99
    assert [label.name for label in _labels(model, history, "previous")] == ["previous token"] * 2
    assert history.head_difference[0][-1] < 0.3  # alike: one relation, two heads (two relations: > 0.8 above)


def test_training_is_a_pure_function_of_its_arguments():
    state = torch.random.get_rng_state()
    threads = torch.get_num_threads()
    torch.set_num_threads(2)  # not the one thread training runs on: so its restoring the caller's count shows
    try:
        first, first_history = train("previous_and_last_digit", 16, 2, seed=4, max_steps=30)
        assert torch.get_num_threads() == 2  # the caller's thread count is given back
        torch.set_num_threads(1)
        second, second_history = train("previous_and_last_digit", 16, 2, seed=4, max_steps=30)
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(torch.random.get_rng_state(), state)  # the global RNG is never touched
    assert_same_training(first, second)  # the same weights, to the last float32 bits
    losses = torch.tensor(first_history.losses)
    torch.testing.assert_close(losses, torch.tensor(second_history.losses), **FLOAT32)
    other, _ = train("previous_and_last_digit", 16, 2, seed=5, max_steps=30)
    assert (other.layers[0].W_q.weight - first.layers[0].W_q.weight).abs().max() > 0.1  # another seed: other weights


def test_snapshots_cover_the_start_the_middle_and_the_end():
    _, history = train("previous", 8, 2, seed=0, max_steps=253, target_accuracy=2.0)  # never reached: the cap
    assert history.steps == 253 and history.target_step is None
    steps = [snapshot.step for snapshot in history.snapshots]
    assert steps[0] == 0 and steps[-1] == 253 and steps == sorted(steps)
    assert len(steps) <= SNAPSHOTS_MAX + 1
    for fraction in (0.1, 0.5):
        assert min(abs(step - fraction * 253) for step in steps) <= 0.05 * 253
    assert all(
        len(snapshot.weights) == 1 and snapshot.weights[0].shape == (2, 12, 12) for snapshot in history.snapshots
    )
    assert history.record_steps[0] == 0 and history.record_steps[-1] == 253
    assert len(history.head_difference[0]) == len(history.record_steps)


def test_training_reports_each_step_and_stops_when_asked():
    seen = []

    def on_step(step, loss, accuracy):
        seen.append(step)

    with pytest.raises(TrainingStoppedError) as stopped:
        train("previous", 16, 2, seed=0, on_step=on_step, should_stop=lambda: len(seen) >= 7)
    assert seen == list(range(1, 8)) and stopped.value.step == 7


# ---------------------------------------------------------------- what the reported accuracy is measured on
@pytest.mark.parametrize(("words", "held"), [(3, 1), (4, 6), (5, 30), (7, 1024), (9, 1024)])
def test_unscramble_sets_aside_a_quarter_of_the_orders_at_most_1024(words, held):
    task = make_task("unscramble", " ".join(f"w{i}" for i in range(words))).hold_out(torch.Generator().manual_seed(0))
    assert len(task.held_out) == held == min(math.factorial(words) // HELD_OUT_SHARE, HELD_OUT_MAX)
    assert all(sorted(order) == list(range(words)) for order in task.held_out)  # each one an order of the words
    assert task.evaluation == "held_out"
    evaluation = task.evaluation_sequences(EVAL_SEQUENCES, torch.Generator().manual_seed(1))
    assert {tuple(row) for row in evaluation[:, :words].tolist()} == task.held_out and len(evaluation) == held
    assert bool((evaluation[:, words:] == words).all())  # then the blanks


def test_unscramble_never_draws_a_held_out_order():
    task = make_task("unscramble", "a b c d").hold_out(torch.Generator().manual_seed(0))  # 6 of 24 held out
    drawn = task.sample(4000, torch.Generator().manual_seed(1))[:, :4].tolist()
    orders = {tuple(order) for order in drawn}
    assert not orders & task.held_out
    assert len(orders) == 24 - 6  # every other order is drawn


def test_two_words_set_nothing_aside_and_evaluate_on_both_orders():
    task = make_task("unscramble", "cat sat").hold_out(torch.Generator().manual_seed(0))
    assert task.held_out == frozenset() and task.evaluation == "every_order"
    evaluation = task.evaluation_sequences(EVAL_SEQUENCES, torch.Generator().manual_seed(1))
    assert sorted(evaluation[:, :2].tolist()) == [[0, 1], [1, 0]]


def _train_keeping_targets(monkeypatch, task: str, text: str | None, steps: int) -> tuple[list, object, object]:
    """Train ``steps`` steps (seed 3), keeping every training batch's targets (B, R, L)."""
    seen: list[torch.Tensor] = []
    original = loop._loss_and_accuracy

    def recording(logits, targets):
        seen.append(targets)
        return original(logits, targets)

    monkeypatch.setattr(loop, "_loss_and_accuracy", recording)
    model, history = train(task, 16, 2, seed=3, text=text, max_steps=steps)
    assert len(seen) == steps
    return seen, model, history


def test_unscrambles_accuracy_is_measured_on_orders_no_training_batch_contained(monkeypatch):
    text = "the cat sat on mats"  # 5 words: 120 orders, 30 held out; 200 steps draw 25,600 shuffles
    targets, model, history = _train_keeping_targets(monkeypatch, "unscramble", text, steps=200)
    # a blank's target is where its word lies in the shuffled half: argsort of that gives the shuffled order back
    trained = {tuple(row) for batch in targets for row in batch[:, 0, 5:].argsort(dim=1).tolist()}
    assert len(trained) == 120 - 30  # every order but the held-out ones was trained on
    task = make_task("unscramble", text).hold_out(loop._generator(3, "unscramble", "held out"))
    assert len(task.held_out) == 30 and not trained & task.held_out
    assert (history.evaluation, history.sequences, history.evaluated) == ("held_out", 30, 30 * 5)
    # the reported accuracy, computed again here on the held-out orders alone
    ids = task.evaluation_sequences(0, torch.Generator())  # (30, 10)
    logits, _ = model(ids, task.training_mask(ids.size(1)))
    right = (logits.argmax(dim=-1)[:, 0, 5:] == task.targets(ids)[:, 0, 5:]).float().mean()
    assert history.accuracy == pytest.approx(float(right), abs=0.5 / history.evaluated)


def test_fresh_evaluation_sequences_are_not_training_sequences(monkeypatch):
    """The other tasks draw 1,024 fresh sequences from their own generator: none of them was a training batch's."""
    targets, _, history = _train_keeping_targets(monkeypatch, "previous", None, steps=50)
    task = make_task("previous")
    evaluation = task.evaluation_sequences(EVAL_SEQUENCES, loop._generator(3, "previous", "eval"))
    # "previous" targets are the sequence shifted by one: token 0 to L-2 of every trained sequence
    trained = {tuple(row) for batch in targets for row in batch[:, 0, 1:].tolist()}
    assert not trained & {tuple(row) for row in evaluation[:, :-1].tolist()}
    assert (history.evaluation, history.sequences, history.evaluated) == ("fresh", 1024, 1024 * 11)
