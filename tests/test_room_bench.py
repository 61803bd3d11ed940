"""The room bench follows today's page: a small room of simulated learners on a real server ends with no error.

``python -m bench.room`` (``bench/room.py``, ``bench/_browser_session.py``) times a change from the learner's
BackMsg to the ``script_finished`` that ends it and then checks that the link and the values show the change.
A change on the page may be more than one run (a short run that ends ``FINISHED_EARLY_FOR_RERUN`` for a
callback's ``st.rerun`` of the live fragments, or of the whole page on a checkpoint's page, then that run), so a
learner that read the first ``script_finished`` as the end would see the change unapplied and report errors here.
The room is small (3 learners, about 10 s, each mix): it checks what the bench reads, not what the server holds.
"""

from __future__ import annotations

import pytest

from bench.room import CHECKPOINT, MIXES, QUICK_THINK_S, SERVER_ENV, Mix, checkpoint_link, measure_room, own_sentence

LEARNERS = 3
RAMP_S, STEADY_S = 1.0, 9.0


@pytest.mark.parametrize("mix", MIXES, ids=[mix.name for mix in MIXES])
def test_a_small_room_sees_every_change_applied(mix):
    result = measure_room(mix, LEARNERS, RAMP_S, STEADY_S, think_s=QUICK_THINK_S)
    assert len(result.open_s) == LEARNERS, result.error_examples
    assert len(result.change_s) >= 2 * LEARNERS, (len(result.change_s), result.error_examples)  # not vacuous
    assert not result.errors, result.error_examples
    assert result.reconnects == 0
    # A size, mask or text change is a short run, then the live fragments' run: the bench followed it to the end.
    assert max(result.runs) >= 2, result.runs


def test_a_small_room_follows_changes_of_more_than_one_run(tiny_gpt2):
    """On a checkpoint's page a new sentence runs the page from the text box's callback: a short run that ends early
    for the rerun, then the page's run. The bench must follow both and find the sentence applied."""
    env = {**SERVER_ENV, "ATTN_PLAYGROUND_CHECKPOINTS": f"{CHECKPOINT}={tiny_gpt2}"}
    mix = Mix("checkpoint text", checkpoint_link, lambda learner, step: ("tokens", own_sentence(learner, step + 1)))
    result = measure_room(mix, LEARNERS, RAMP_S, STEADY_S, env=env, think_s=QUICK_THINK_S)
    assert len(result.change_s) >= 2 * LEARNERS, (len(result.change_s), result.error_examples)
    assert not result.errors, result.error_examples
    assert min(result.runs) >= 2, result.runs  # every change here is the early-ended run and the page's
