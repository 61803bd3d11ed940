"""The text tasks' sampling at the cases mutation testing (scripts/mutation.sh) found no test for: every batch is
drawn from the generator it is given (never the global one), and the induction sequences cover every stretch
length and every start the task's rule allows, checked here over many seeded sequences by reading them back."""

from __future__ import annotations

import pytest
import torch

from mha.training.tasks import make_task

TEXT_TASKS = ["previous", "previous_and_first", "previous_and_last_digit", "induction"]


@pytest.mark.parametrize("name", [*TEXT_TASKS, "unscramble"])
def test_a_batch_is_a_function_of_its_generator_alone(name):
    """The same seed gives the same batch whatever the global generator did meanwhile; another seed another batch."""
    task = make_task(name, "the cat sat on the mat today") if name == "unscramble" else make_task(name)
    if name == "unscramble":
        task = task.hold_out(torch.Generator().manual_seed(0))  # orders set aside: some draws are drawn again
    first = task.sample(8, torch.Generator().manual_seed(3))
    torch.manual_seed(12345)
    torch.rand(100)  # the global generator moves: a sample that read it would change
    assert torch.equal(task.sample(8, torch.Generator().manual_seed(3)), first)
    assert not torch.equal(task.sample(8, torch.Generator().manual_seed(4)), first)
    if name == "induction":
        example = task.example(torch.Generator().manual_seed(3))
        torch.manual_seed(54321)
        assert torch.equal(task.example(torch.Generator().manual_seed(3)), example)


def _stretch(row: list[int]) -> tuple[int, int]:
    """(start s, length r) of the one stretch a sequence of otherwise distinct tokens repeats right after itself."""
    seen: dict[int, int] = {}
    repeated = []
    for position, token in enumerate(row):
        if token in seen:
            repeated.append(seen[token])
        seen[token] = position
    start, length = repeated[0], len(repeated)
    assert repeated == list(range(start, start + length))  # one stretch, in order
    assert row[start : start + length] == row[start + length : start + 2 * length]  # copied right after itself
    return start, length


def test_induction_sequences_take_every_stretch_of_2_to_6_at_every_start_that_fits():
    """Stretch r in 2..6 and start s in 0..L-2r (the copy ends by L = 12): each (r, s) pair occurs in 4,000 draws."""
    task = make_task("induction")
    pairs = {_stretch(row) for row in task.sample(4000, torch.Generator().manual_seed(0)).tolist()}
    assert pairs == {(s, r) for r in range(2, 7) for s in range(task.length - 2 * r + 1)}


def test_an_induction_example_repeats_a_stretch_of_4_to_6():
    task = make_task("induction")
    lengths = {_stretch(task.example(torch.Generator().manual_seed(seed)).tolist())[1] for seed in range(60)}
    assert lengths == {4, 5, 6}


def test_the_induction_tasks_relation_is_named_as_its_readout():
    task = make_task("induction")
    ids = task.sample(1, torch.Generator().manual_seed(0))[0]
    assert tuple(task.relations(ids, task.layers - 1)) == task.outputs == ("induction",)


def test_a_sequence_of_the_shortest_length_taken_is_read():
    task = make_task("previous")
    assert task.min_length == 2
    assert task.parse(["a", "b"]) is not None
    assert task.parse(["a"]) is None
