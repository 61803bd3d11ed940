"""Training with fewer key/value heads (GQA, MQA) and rotary positions (RoPE): the models, training, the page.

The options reach every attention layer of the text tasks' model and the digits' ViT; with RoPE neither model has
a learned position embedding; without the options a model draws exactly the parameters it drew before them
(checked against the old draws written out here). Trainings are tiny (d_model 16-32), a few seconds in all.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from conftest import ShortTrainer, trained_spec
from streamlit.testing.v1 import AppTest
from test_languages import leftover_english

from components.i18n import t
from mha.config import ROPE_BASE, AttentionConfig, WeightSpec
from mha.module import MultiHeadAttention
from mha.training import service as service_module
from mha.training import train
from mha.training.classifier import POSITION_STD
from mha.training.digits_model import DigitsModel, digits_model_parameters
from mha.training.model import TaskModel
from mha.training.service import train_spec
from mha.training.tasks import make_task
from mha.vision.samples import DIGIT_PIXEL_MEAN, DIGIT_PIXEL_STD, DIGIT_SIZE

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")


def _generator(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# ---------------------------------------------------------------- the draws of the models before the options
def _old_task_model_draws(name: str, d_model: int, generator: torch.Generator) -> dict[str, torch.Tensor]:
    """What ``build_task_model`` drew before ``num_kv_heads`` and ``rope_base``: the token embedding, the position
    embedding (each N(0, 1)), then W_q, W_k, W_v, W_o (D x D, weight then bias) of every layer and every readout
    (U(-1/sqrt(D), 1/sqrt(D)))."""
    task = make_task(name)
    bound = 1.0 / math.sqrt(d_model)
    draws = {
        "token_embedding.weight": torch.empty(len(task.vocab), d_model).normal_(generator=generator),
        "position_embedding.weight": torch.empty(task.length, d_model).normal_(generator=generator),
    }
    linears = [(f"layers.{i}.{w}", d_model) for i in range(task.layers) for w in ("W_q", "W_k", "W_v", "W_o")]
    linears += [(f"readouts.{r}", task.classes) for r in range(len(task.outputs))]
    for prefix, rows in linears:
        draws[f"{prefix}.weight"] = torch.empty(rows, d_model).uniform_(-bound, bound, generator=generator)
        draws[f"{prefix}.bias"] = torch.empty(rows).uniform_(-bound, bound, generator=generator)
    return draws


def _old_patch_model_draws(patch: int, d_model: int, generator: torch.Generator) -> dict[str, torch.Tensor]:
    """What the digits' ``build_patch_model`` drew before the options: [CLS] and the positions ~ N(0, 0.02²), then
    every Linear in module order (the patch embedding; per block W_q, W_k, W_v, W_o (D x D) and the MLP; the
    readout) ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)); the LayerNorms start as 1 and 0."""
    task = make_task("digits", patch=patch)
    tokens, hidden = task.length, 2 * d_model
    draws = {
        "cls_token": torch.empty(1, 1, d_model).normal_(0.0, POSITION_STD, generator=generator),
        "position_embedding": torch.empty(1, tokens, d_model).normal_(0.0, POSITION_STD, generator=generator),
    }
    linears = [("patch_embedding", patch * patch, d_model)]
    for block in range(task.layers):
        linears += [(f"blocks.{block}.attention.{w}", d_model, d_model) for w in ("W_q", "W_k", "W_v", "W_o")]
        linears += [(f"blocks.{block}.mlp.0", d_model, hidden), (f"blocks.{block}.mlp.2", hidden, d_model)]
        for norm in ("norm_1", "norm_2"):
            draws[f"blocks.{block}.{norm}.weight"] = torch.ones(d_model)
            draws[f"blocks.{block}.{norm}.bias"] = torch.zeros(d_model)
    linears.append(("readout", d_model, task.classes))
    draws["norm.weight"], draws["norm.bias"] = torch.ones(d_model), torch.zeros(d_model)
    ordered = {}
    for prefix, fan_in, rows in linears:
        bound = 1.0 / math.sqrt(fan_in)
        ordered[f"{prefix}.weight"] = torch.empty(rows, fan_in).uniform_(-bound, bound, generator=generator)
        ordered[f"{prefix}.bias"] = torch.empty(rows).uniform_(-bound, bound, generator=generator)
    return {**draws, **ordered}


def _assert_draws(model: torch.nn.Module, draws: dict[str, torch.Tensor]) -> None:
    state = model.state_dict()
    assert sorted(state) == sorted(draws)
    for name, tensor in draws.items():  # the same seed draws the same bits: exactly
        assert torch.equal(state[name], tensor), name


@pytest.mark.parametrize("name", ["previous_and_first", "induction"])
def test_without_the_options_a_text_model_draws_what_it_drew_before(name):
    model = make_task(name).build_model(16, 2, _generator(3))
    _assert_draws(model, _old_task_model_draws(name, 16, _generator(3)))
    named = make_task(name).build_model(16, 2, _generator(3), num_kv_heads=2, rope_base=None)
    _assert_draws(named, _old_task_model_draws(name, 16, _generator(3)))  # as many K/V heads as heads: the same


@pytest.mark.parametrize("patch", [2, 4])
def test_without_the_options_the_digits_model_draws_what_it_drew_before(patch):
    model = make_task("digits", patch=patch).build_model(16, 2, _generator(5))
    _assert_draws(model, _old_patch_model_draws(patch, 16, _generator(5)))


def test_the_options_change_the_draws():
    """The old draws are not what every model draws: one K/V head or RoPE gives other parameters."""
    old = _old_task_model_draws("previous", 16, _generator(3))
    for options in ({"num_kv_heads": 1}, {"rope_base": ROPE_BASE}):
        model = make_task("previous").build_model(16, 2, _generator(3), **options)
        state = model.state_dict()
        assert sorted(state) != sorted(old) or any(
            state[k].shape != v.shape or not torch.equal(state[k], v) for k, v in old.items()
        ), options


# ---------------------------------------------------------------- the models with the options
@pytest.mark.parametrize(("name", "heads", "kv_heads"), [("previous", 4, 1), ("induction", 4, 2), ("digits", 2, 1)])
def test_every_trained_layer_has_the_smaller_w_k_and_w_v(name, heads, kv_heads):
    model, _ = train(name, 32, heads, 0, num_kv_heads=kv_heads, rope_base=ROPE_BASE, max_steps=2)
    d_k = 32 // heads
    assert len(model.layers) == make_task(name).layers
    for layer in model.layers:
        assert isinstance(layer, MultiHeadAttention)
        assert (layer.num_kv_heads, layer.rope_base) == (kv_heads, ROPE_BASE)
        assert layer.W_q.weight.shape == layer.W_o.weight.shape == (32, 32)
        assert layer.W_k.weight.shape == layer.W_v.weight.shape == (kv_heads * d_k, 32)
        assert layer.W_k.bias.shape == layer.W_v.bias.shape == (kv_heads * d_k,)


def test_a_rope_text_model_has_no_position_embedding_and_reads_order_from_the_rotation():
    task = make_task("previous")
    model = task.build_model(16, 2, _generator(0), rope_base=ROPE_BASE)
    assert model.position_embedding is None
    assert not [name for name, _ in model.named_parameters() if "position" in name]
    ids = task.sample(2, _generator(1))  # (2, L)
    torch.testing.assert_close(model.embed(ids), model.token_embedding(ids))  # token vectors alone
    with torch.no_grad():
        _, (weights,) = model(ids)
        _, (flipped,) = model(ids.flip(1))  # the same tokens in reverse: only the rotation tells them apart
    assert (weights - flipped.flip(-1).flip(-2)).abs().max() > 1e-3
    plain = task.build_model(16, 2, _generator(0))
    assert plain.position_embedding is not None and plain.position_embedding.weight.shape == (task.length, 16)


def test_a_rope_digits_model_has_no_position_embedding():
    model = make_task("digits").build_model(16, 2, _generator(0), num_kv_heads=1, rope_base=ROPE_BASE)
    assert isinstance(model, DigitsModel) and model.position_embedding is None
    assert not [name for name, _ in model.named_parameters() if "position" in name]
    images = make_task("digits").inputs(torch.arange(3))  # (3, 1, 8, 8)
    with torch.no_grad():
        full, _ = model(images)
        short = model.logits(images)  # [CLS]'s row alone in the last block: its query turned by position 0
    torch.testing.assert_close(short, full, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("heads", "kv_heads", "rope"), [(2, None, False), (4, 2, False), (4, 1, True), (2, 2, True)])
def test_the_parameter_counts_are_what_the_models_hold(heads, kv_heads, rope):
    base = ROPE_BASE if rope else None
    for name in ("previous_and_first", "induction"):
        task = make_task(name)
        model = task.build_model(32, heads, _generator(0), kv_heads, base)
        counts = task.model_parameters(32, heads, kv_heads, rope)
        assert counts["total"] == sum(p.numel() for p in model.parameters()), name
        assert counts["attention"] == sum(p.numel() for p in model.layers[0].parameters())
    model = make_task("digits").build_model(32, heads, _generator(0), kv_heads, base)
    counts = digits_model_parameters(1, DIGIT_SIZE, 2, 32, heads, 2, 10, kv_heads, rope)
    assert counts["total"] == sum(p.numel() for p in model.parameters())
    assert counts["positions"] == (0 if rope else 17 * 32)
    assert (model.pixel_mean, model.pixel_std) == (DIGIT_PIXEL_MEAN, DIGIT_PIXEL_STD)


# ---------------------------------------------------------------- training
@pytest.mark.parametrize(
    ("name", "kv_heads", "rope_base"),
    [("previous", 1, ROPE_BASE), ("previous_and_first", 1, None)],
    ids=["previous-mqa-rope", "previous_and_first-mqa"],
)
def test_training_with_one_kv_head_reaches_the_target(name, kv_heads, rope_base):
    model, history = train(name, 32, 2, 0, num_kv_heads=kv_heads, rope_base=rope_base)
    assert history.target_step is not None and history.accuracy >= 0.99
    assert model.layers[0].num_kv_heads == kv_heads


def test_a_spec_with_the_options_trains_a_model_with_them():
    """The page's path: a config's weight spec names the options, and ``train_spec`` hands them to training."""
    config = AttentionConfig(
        weights="trained", task="previous", d_model=16, num_heads=2, num_kv_heads=1, positional="rope"
    )
    spec = config.weight_spec
    assert (spec.num_kv_heads, spec.rope_base) == (1, ROPE_BASE)
    model, history = train_spec(spec, lambda *_: None, lambda: False)
    assert isinstance(model, TaskModel) and model.position_embedding is None
    assert [(layer.num_kv_heads, layer.rope_base) for layer in model.layers] == [(1, ROPE_BASE)]
    assert history.accuracy >= 0.99


# ---------------------------------------------------------------- the page
def test_the_gqa_messages_read_in_chinese():
    for key, params in (
        ("training.gqa_note", {"group": 4, "heads": 4, "kv_heads": 1}),
        ("training.model_rope", {}),
        ("training.model_heads", {"heads": 4, "kv_heads": 1}),
        ("training.model_digits_rope", {"tokens": 17}),
    ):
        assert not leftover_english(t(key, lang="zh", **params), set()), key


GQA_LINK = {"weights": "trained", "task": "previous", "num_heads": "2", "num_kv_heads": "1", "positional": "rope"}
GQA_SPEC = trained_spec(64, 2, 0, task="previous", num_kv_heads=1, rope_base=ROPE_BASE)


def _trained_page(link: dict[str, str], spec: WeightSpec) -> AppTest:
    """The page of ``link`` once its model (``spec``) is trained (conftest's short trainings)."""
    at = AppTest.from_file(SCRIPT, default_timeout=60)
    for key, value in link.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception and not at.error  # waiting for the training
    job = service_module.training_service().job(spec)
    assert job is None or job.finished.wait(120)
    return at.run()


def _errors(at: AppTest) -> list[str]:
    """The page's ``st.error`` texts; the live check (against ``F.scaled_dot_product_attention`` for such a layer)
    must say it matches."""
    assert any(s.value.startswith("✓ Matches PyTorch") for s in at.success), [s.value for s in at.success]
    return [e.value for e in at.error]


def _model_line(at: AppTest) -> str:
    blank = ("vocab", "positions", "d", "layers", "heads", "attention", "readouts", "classes", "total", "lr", "batch")
    start = t("training.model", **dict.fromkeys(blank, "")).split("(")[0]
    (line,) = [c.value for c in at.caption if c.value.startswith(start)]
    return line


def test_a_trained_page_with_one_kv_head_and_rope_trains_that_model_and_says_so(short_trainings: ShortTrainer):
    at = _trained_page(GQA_LINK, GQA_SPEC)
    assert not at.exception
    assert short_trainings.started == [GQA_SPEC]  # the link's options reached the trainer
    model = service_module.training_service().finished(GQA_SPEC).model
    assert model.position_embedding is None
    assert model.layers[0].W_k.weight.shape == model.layers[0].W_v.weight.shape == (32, 64)  # 1 x d_k, D
    assert _errors(at) == []
    assert t("training.gqa_note", group=2, heads=2, kv_heads=1) in [c.value for c in at.caption]
    line = _model_line(at)
    assert t("training.model_heads", heads=2, kv_heads=1) in line and t("training.model_rope") in line
    total = make_task("previous").model_parameters(64, 2, 1, rope=True)["total"]
    assert f"**{total:,}**" in line


def test_a_trained_rope_page_shows_the_steps_without_an_exception(short_trainings: ShortTrainer):
    spec = trained_spec(64, 2, 0, task="previous", rope_base=ROPE_BASE)
    at = _trained_page({**GQA_LINK, "num_kv_heads": "2"}, spec)
    assert not at.exception
    assert _errors(at) == []
    assert short_trainings.started == [spec]
    assert t("step1.title") in [m.value.removeprefix("### ") for m in at.markdown]  # the steps show the layer
    assert t("training.gqa_note", group=1, heads=2, kv_heads=2) not in [
        c.value for c in at.caption
    ]  # as many K/V heads
    line = _model_line(at)
    assert t("training.model_heads", heads=2, kv_heads=2) in line and t("training.model_rope") in line
