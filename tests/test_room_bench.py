"""The room bench follows today's page: a small room of simulated learners on a real server ends with no error.

``python -m bench.room`` (``bench/room.py``, ``bench/_browser_session.py``) times a change from the learner's
BackMsg to the ``script_finished`` that ends it and then checks that the link and the values show the change.
A change on the page is often more than one run (a short run that ends ``FINISHED_EARLY_FOR_RERUN`` for the
page's own ``st.rerun``, then the live controls' and values' fragments), so a learner that read the first
``script_finished`` as the end would see the change unapplied and report errors here. The room is small (3
learners, about 10 s, each mix): it checks what the bench reads, not what the server holds.
"""

from __future__ import annotations

import pytest

from bench.room import MIXES, QUICK_THINK_S, measure_room

LEARNERS = 3
RAMP_S, STEADY_S = 1.0, 9.0


@pytest.mark.parametrize("mix", MIXES, ids=[mix.name for mix in MIXES])
def test_a_small_room_sees_every_change_applied(mix):
    result = measure_room(mix, LEARNERS, RAMP_S, STEADY_S, think_s=QUICK_THINK_S)
    assert len(result.open_s) == LEARNERS, result.error_examples
    assert len(result.change_s) >= 2 * LEARNERS, (len(result.change_s), result.error_examples)  # not vacuous
    assert not result.errors, result.error_examples
    assert result.reconnects == 0
    # Some change took more than one run (the page's own rerun, then its fragments): the bench followed it.
    assert max(result.runs) >= 2, result.runs
