"""A task carries its model and what the page and lab 11 ask of it; the digits and the reviews share one Pre-Norm
classifier; the labs reach the page only through the session layer; one rule for a checkpoint that cannot be made.

ARCHITECTURE.md's claims about them, held here: no module outside ``mha/training/tasks.py`` tests a task's class,
labs 11 and 12 do not import ``runner``, the words a task names are in the catalog in both languages.
"""

from __future__ import annotations

import ast
import dataclasses
import math
from pathlib import Path

import pytest
import torch
from streamlit.testing.v1 import AppTest

from components.i18n import t
from components.locale import CATALOG
from mha.text.reviews import PAD
from mha.training.classifier import POSITION_STD, PreNormClassifier
from mha.training.reviews_model import ReviewsModel
from mha.training.tasks import IGNORE, TASK_CLASSES, Message, Task, make_task, reads_characters

REPO = Path(__file__).resolve().parents[1]
SENTENCE = "the cat sat on the mat"


def _tasks() -> list[Task]:
    return [make_task(name, SENTENCE) for name in TASK_CLASSES]


def _keys(message: Message) -> list[str]:
    """The message's key and those of the messages among its parameters."""
    nested = [key for value in message.params.values() if isinstance(value, Message) for key in _keys(value)]
    return [message.key, *nested]


# ---------------------------------------------------------------- the architecture's claims
def _python_files(*rooms: str) -> list[Path]:
    return [path for room in rooms for path in (REPO / room).rglob("*.py")] + [REPO / "playground.py"]


def test_no_module_outside_the_tasks_names_a_task_class_or_a_model_class():
    """The page, the sources, the labs and the loop ask the task; they never test its class."""
    names = {cls.__name__ for cls in TASK_CLASSES.values()} | {"ClassifierTask", "DigitsModel", "ReviewsModel"}
    found = []
    for path in _python_files("mha", "components", "pages"):
        if path.name in ("tasks.py", "digits_model.py", "reviews_model.py", "model.py", "classifier.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Name | ast.alias)
                and (node.id if isinstance(node, ast.Name) else node.name) in names
            ):
                found.append(f"{path.relative_to(REPO)}:{getattr(node, 'lineno', '?')}")
    assert found == []


@pytest.mark.parametrize("lab", ["attribution", "onnx_export"])
def test_labs_11_and_12_reach_the_page_only_through_the_session_layer(lab):
    tree = ast.parse((REPO / "components" / "labs" / f"{lab}.py").read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            imported |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
    assert not [name for name in imported if "runner" in name or name.startswith("mha.sources")], imported
    assert any(name.startswith("components.labs.session_layer.") for name in imported)


def test_the_training_sections_are_panels():
    """The training box and the timeline are modules of ``components/panels/``; ``components/training.py`` draws no
    section of the page (only the sidebar's link to a trained example)."""
    from components import panels

    assert callable(panels.training_box.render) and callable(panels.timeline.render)
    source = (REPO / "components" / "training.py").read_text(encoding="utf-8")
    assert "heading(" not in source and "vega.draw" not in source and "st.fragment" not in source


# ---------------------------------------------------------------- what a task says of itself
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_message_a_task_names_is_in_the_catalog_and_takes_its_parameters(lang):
    from components.training import words

    for task in _tasks():
        page = task.page_words
        keys = [page.ask, page.sample, page.difference] + ([page.schedule] if page.schedule else [])
        for rope in (False, True):
            line = task.model_words(32, 4, 2, rope)
            keys += _keys(line)
            said = words(line)  # a missing parameter raises
            total = sum(
                p.numel() for p in task.build_model(32, 4, torch.Generator(), 2, 1e4 if rope else None).parameters()
            )
            assert f"{total:,}" in said, (task.name, rope)  # the line's total is the model's own count
        keys += _keys(task.explanation())
        words(task.explanation())
        for key in keys:
            assert key in CATALOG and lang in CATALOG[key], (task.name, key)
        if page.schedule:
            assert t(page.schedule, lang=lang, steps=1, warmup=1)


def test_the_readouts_a_query_reaches():
    """A sequence task: the readouts with a target at the query; a classifier task: [CLS]'s one readout, reached by
    [CLS]'s row in the last layer and by every row in an earlier one."""
    task = make_task("previous_and_first")
    ids = task.parse(list("31415926"))
    assert task.readouts_at(ids, 0, 0) == ()  # neither a previous nor a first token at position 0
    assert task.readouts_at(ids, 3, 0) == (0, 1)
    reviews = make_task("reviews")
    ids = torch.tensor([reviews.vocab.index(c) if c in reviews.vocab else 0 for c in "好好"])
    assert reviews.readouts_at(ids, 0, reviews.layers - 1) == (0,)
    assert reviews.readouts_at(ids, 1, reviews.layers - 1) == ()
    deeper = dataclasses.replace(reviews, layers=2)  # an earlier layer (the page's model has one)
    assert deeper.readouts_at(ids, 1, 0) == (0,) and deeper.readouts_at(ids, 1, 1) == ()
    assert reviews.readout_classes == ("negative", "positive") and make_task("previous").readout_classes is None
    previous = make_task("previous")
    targets = previous.targets(previous.parse(list("abcd")).unsqueeze(0))[0, 0]
    assert [previous.readouts_at(previous.parse(list("abcd")), q, 0) for q in range(4)] == [
        () if int(targets[q]) == IGNORE else (0,) for q in range(4)
    ]


def test_the_sidebar_asks_the_task_whether_it_reads_characters():
    assert [name for name in TASK_CLASSES if reads_characters(name)] == ["reviews"]
    assert not reads_characters("no such task")


# ---------------------------------------------------------------- one Pre-Norm classifier
def test_the_digits_and_the_reviews_are_one_classifier_with_two_embeddings():
    digits = make_task("digits").build_model(16, 2, torch.Generator().manual_seed(0))
    reviews = make_task("reviews").build_model(16, 2, torch.Generator().manual_seed(0))
    assert isinstance(digits, PreNormClassifier) and isinstance(reviews, PreNormClassifier)
    for method in ("layer_inputs", "forward", "logits", "changed_logits", "init_parameters", "probabilities"):
        assert getattr(type(digits), method) is getattr(type(reviews), method) is getattr(PreNormClassifier, method)


def test_the_reviews_model_draws_its_parameters_in_a_fixed_order():
    """Rebuilt here from the generator alone: the token vectors and the positions ~ N(0, 0.02²), then every Linear in
    module order (per block W_q, W_k, W_v, W_o and the MLP; the readout) ~ U(-1/√fan_in, 1/√fan_in), weight then
    bias; the LayerNorms 1 and 0."""
    task = make_task("reviews")
    d, hidden, generator = 16, 32, torch.Generator().manual_seed(7)
    model = task.build_model(d, 2, torch.Generator().manual_seed(7))
    expected = {
        "token_embedding.weight": torch.empty(len(task.vocab), d).normal_(0.0, POSITION_STD, generator=generator),
        "position_embedding": torch.empty(1, task.length, d).normal_(0.0, POSITION_STD, generator=generator),
    }
    linears = []
    for block in range(task.layers):
        linears += [(f"blocks.{block}.attention.{w}", d, d) for w in ("W_q", "W_k", "W_v", "W_o")]
        linears += [(f"blocks.{block}.mlp.0", d, hidden), (f"blocks.{block}.mlp.2", hidden, d)]
        for norm in ("norm_1", "norm_2"):
            expected[f"blocks.{block}.{norm}.weight"], expected[f"blocks.{block}.{norm}.bias"] = (
                torch.ones(d),
                torch.zeros(d),
            )
    linears.append(("readout", d, task.classes))
    expected["norm.weight"], expected["norm.bias"] = torch.ones(d), torch.zeros(d)
    for prefix, fan_in, rows in linears:
        bound = 1.0 / math.sqrt(fan_in)
        expected[f"{prefix}.weight"] = torch.empty(rows, fan_in).uniform_(-bound, bound, generator=generator)
        expected[f"{prefix}.bias"] = torch.empty(rows).uniform_(-bound, bound, generator=generator)
    state = model.state_dict()
    assert sorted(state) == sorted(expected)
    for name, tensor in expected.items():  # the same seed draws the same bits: exactly
        assert torch.equal(state[name], tensor), name
    assert isinstance(model, ReviewsModel) and model.pad_id == task.vocab.index(PAD)


def test_the_digits_model_changes_its_answer_as_its_forward_does():
    """``changed_logits`` with a zero change is the forward's answer; a change of [CLS]'s row in the last block moves
    it by the readout of that change after the block's MLP and the final LayerNorm (computed here)."""
    task = make_task("digits")
    model = task.build_model(16, 2, torch.Generator().manual_seed(3)).double()
    images = task.inputs(torch.tensor([4])).double()  # (1, 1, 8, 8)
    change = torch.zeros(2, task.length, 16, dtype=torch.float64)
    change[1, 0] = torch.linspace(-1, 1, 16, dtype=torch.float64)
    with torch.no_grad():
        logits = model.changed_logits(images, None, 1, change, 0)  # (2, 1, K)
        full, _ = model(images)
        torch.testing.assert_close(logits[0, 0], full[0, 0, 0], rtol=0, atol=1e-12)
        x = model.embed(images)
        x, _, _ = model.blocks[0](x)
        last = model.blocks[1]
        normed = last.norm_1(x)
        x = x + last.attention(normed, normed, normed)[0] + change[1]
        x = x + last.mlp(last.norm_2(x))
        expected = model.readout(model.norm(x)[:, 0])  # (1, K)
    torch.testing.assert_close(logits[1], expected, rtol=0, atol=1e-12)


# ---------------------------------------------------------------- a checkpoint that cannot be made here
def _fallback_script() -> None:
    import streamlit as st

    from components.controls import weights_made_here
    from mha.checkpoints import checkpoint_names
    from mha.config import AttentionConfig
    from mha.sources import SourceUnavailableError

    def offline(spec):
        raise SourceUnavailableError("offline", f"{spec} is offline", name="gpt2", location="org/gpt2")

    config = AttentionConfig(weights="pretrained", checkpoint=checkpoint_names()[0])
    made = weights_made_here(config, offline)
    st.write(f"made={made.weights if made else None}")
    kept = weights_made_here(config, lambda spec: None)
    st.write(f"kept={kept.weights}")
    st.write(f"none={weights_made_here(None, offline)}")


def test_a_checkpoint_that_cannot_be_made_says_why_and_gives_random_weights():
    at = AppTest.from_function(_fallback_script).run()
    assert not at.exception
    shown = [m.value for m in at.markdown]
    assert "made=random" in shown and "kept=pretrained" in shown and "none=None" in shown
    (error,) = at.error  # the reason, once: the config that fell back
    assert "gpt2" in error.value and "org" in error.value
