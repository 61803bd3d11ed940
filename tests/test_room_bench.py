"""The room bench follows today's page: a small room of simulated learners on a real server ends with no error.

``python -m bench.room`` (``bench/room.py``, ``bench/_browser_session.py``) times a change from the learner's
BackMsg to the ``script_finished`` that ends it and then checks that the link and the values show the change.
A change on the page may be more than one run (a short run that ends ``FINISHED_EARLY_FOR_RERUN`` for a
callback's ``st.rerun`` of the live fragments, or of the whole page on a checkpoint's page, then that run), so a
learner that read the first ``script_finished`` as the end would see the change unapplied and report errors here.
The room is small (3 learners, about 10 s, each mix): it checks what the bench reads, not what the server holds.
A learner who generates is followed, as the browser's timer follows the progress fragment, to the run that shows the
generated text; the fragment timers the tab keeps are checked on the messages themselves.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench._browser_session import BrowserSession
from bench.room import (
    CHECKPOINT,
    CHECKPOINT_MIXES,
    MIXES,
    QUICK_THINK_S,
    SERVER_ENV,
    Mix,
    checkpoint_link,
    generates,
    measure_room,
    own_sentence,
)

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


def test_a_small_room_with_a_generating_learner_sees_each_generation_and_reports_the_groups_apart(tiny_gpt2):
    """The generation mix on the tests' GPT-2: learner 0 of 3 generates (a new sentence, then the Generate button),
    the others type; every generation asked for is shown by the change's last run, and the groups' changes are
    counted apart."""
    env = {**SERVER_ENV, "ATTN_PLAYGROUND_CHECKPOINTS": f"{CHECKPOINT}={tiny_gpt2}"}
    mix = next(mix for mix in CHECKPOINT_MIXES if mix.group is not None)
    assert [generates(learner) for learner in range(30)].count(True) == 5
    result = measure_room(mix, LEARNERS, RAMP_S, STEADY_S, env=env, think_s=QUICK_THINK_S)
    assert not result.errors, result.error_examples
    groups = result.group_change_s
    assert set(groups) == {"generating", "typing"}, groups
    assert len(groups["generating"]) >= 2 and len(groups["typing"]) >= 4, groups  # a button press among them
    assert sorted(groups["generating"] + groups["typing"]) == sorted(result.change_s)


def _message(**fields):
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    message = ForwardMsg()
    for path, value in fields.items():
        *parents, name = path.split("__")
        target = message
        for parent in parents:
            target = getattr(target, parent)
        if isinstance(value, list):
            getattr(target, name).extend(value)
        else:
            setattr(target, name, value)
    return message


def test_the_tab_keeps_the_fragment_timers_as_the_browser_does():
    """A fragment's ``run_every`` arrives as ``auto_rerun``; ``stop_auto_rerun`` drops it, a fragment's own run
    keeps it, and a full run's start drops every timer (the fragment re-registers it if the page draws it again)."""
    tab = BrowserSession("http://127.0.0.1:1", "lang=en")
    tab._handle(_message(auto_rerun__fragment_id="watch", auto_rerun__interval=0.5))
    tab._handle(_message(auto_rerun__fragment_id="other", auto_rerun__interval=2.0))
    assert tab.timers == {"watch": 0.5, "other": 2.0}
    tab._handle(_message(stop_auto_rerun__fragment_ids=["other"]))
    assert tab.timers == {"watch": 0.5}
    tab._handle(_message(new_session__page_script_hash="h", metadata__run__fragment_ids=["watch"]))
    assert tab.timers == {"watch": 0.5}  # the fragment's own rerun
    tab._handle(_message(new_session__page_script_hash="h", metadata__run__script_run_id="full"))
    assert tab.timers == {}


def test_the_docs_name_the_room_mixes_that_exist_and_performance_tabulates_every_checkpoint_mix():
    """Every ``--mix "NAME"`` the docs quote is a mix of the bench, and docs/PERFORMANCE.md's room table has a row
    for each checkpoint mix (the lead fills its cells from ``python -m bench.room --mix NAME``)."""
    repo = Path(__file__).resolve().parents[1]
    names = {mix.name for mix in (*MIXES, *CHECKPOINT_MIXES)}
    docs = [repo / "README.md", *sorted((repo / "docs").glob("*.md"))]
    quoted = {name for doc in docs for name in re.findall(r'--mix "([^"<]+)"', doc.read_text(encoding="utf-8"))}
    assert quoted and quoted <= names, quoted - names
    performance = (repo / "docs" / "PERFORMANCE.md").read_text(encoding="utf-8")
    table = performance[performance.index("| mix (`--mix`) |") :].split("\n\n")[0]
    tabulated = {line.split("|")[1].strip().split(":")[0].split(" (")[0] for line in table.splitlines()[2:]}
    assert tabulated == {mix.name for mix in CHECKPOINT_MIXES}, tabulated
