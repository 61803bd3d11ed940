"""Check yourself beyond the four steps, the engine's side: the generation panel's questions against the
checkpoint's own generation, a trained model's against its task's rule and its own weights, and the labs' against
computations of the tests' own, for several configurations each; every question reads in both languages."""

from __future__ import annotations

import math

import pytest
import torch

from components.i18n import t
from mha.config import TRAINED, AttentionConfig, WeightSpec
from mha.experiments.scaling import scaling_stats
from mha.generation_questions import generation_questions
from mha.lab_questions import heads_questions, masks_questions, reshape_questions, scaling_questions
from mha.pipeline import run_attention
from mha.questions import Message, Question, is_right, questions_of, read_answer
from mha.sources.trained import TrainedSource
from mha.training.loop import train
from mha.training.service import TrainedModel
from mha.vision.images import as_digit
from mha.vision.samples import sample_image

PROMPT = "the cat sat on the mat"

#: The right option of each multiple choice, by the question's name.
RIGHT_OPTIONS = {"why_cache": "causal", "faded": "loss", "sharper": None, "torch_true": "block", "prediction": None}


def _by_name(questions) -> dict[str, Question]:
    return {q.name: q for q in questions}


def _reads_in_both_languages(questions) -> None:
    """Every prompt, option and worked answer has both languages' words, a Message parameter translated."""
    for question in questions:
        for lang in ("en", "zh"):
            params = {k: t(v, lang=lang) if isinstance(v, Message) else v for k, v in question.params}
            worked = {k: t(v, lang=lang) if isinstance(v, Message) else v for k, v in question.worked_params}
            assert t(question.prompt, lang=lang, **params)
            assert t(question.worked, lang=lang, **worked)
            assert all(t(choice, lang=lang) for choice in question.choices)
        if question.kind == "choice" and RIGHT_OPTIONS.get(question.name):
            assert question.choices[question.answer].endswith("." + RIGHT_OPTIONS[question.name]), question.key


# ---------------------------------------------------------------- the generation
@pytest.fixture
def listed(tiny_gpt2, tiny_llama, tiny_qwen2, tiny_checkpoint, monkeypatch):
    listed = f"gpt2={tiny_gpt2},llama={tiny_llama},qwen2={tiny_qwen2},tiny={tiny_checkpoint}"
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", listed)


def _hf_attentions(name: str, tokens: str, new_tokens: int):
    """The checkpoint's own greedy generation with its attentions per step (transformers' ``generate``)."""
    from mha.sources.checkpoint.loader import load_checkpoint

    checkpoint = load_checkpoint(name)
    with torch.inference_mode():
        return checkpoint.language_model.generate(
            **checkpoint.encode(tokens).inputs,
            max_new_tokens=new_tokens,
            do_sample=False,
            output_attentions=True,
            return_dict_in_generate=True,
        )


@pytest.mark.parametrize(
    ("name", "layer", "new", "text"),
    [("gpt2", 0, 3, PROMPT), ("gpt2", 1, 6, "a dog ran to the park"), ("llama", 0, 4, PROMPT), ("qwen2", 1, 2, PROMPT)],
)
def test_the_generations_answers_are_its_own(listed, name, layer, new, text):
    from mha.sources.checkpoint.loader import load_checkpoint
    from mha.sources.checkpoint.source import PretrainedSource

    config = AttentionConfig(weights="pretrained", checkpoint=name, tokens=text, layer=layer)
    run = run_attention(config)
    generation = PretrainedSource(WeightSpec("pretrained", checkpoint=name)).generate(config, new)
    questions = _by_name(generation_questions(generation, run))
    assert set(questions) == {"cache_shape", "top_key", "cache_bytes", "why_cache"}
    assert all(q.key == f"check_gen_{q.name}" and q.qid == f"gen.{q.name}" for q in questions.values())
    sizes = load_checkpoint(name).language_model.config
    heads = sizes.num_attention_heads
    kv = getattr(sizes, "num_key_value_heads", None) or heads
    d_k = sizes.hidden_size // heads
    layers = sizes.num_hidden_layers
    prompt, steps = len(generation.prompt_tokens), len(generation.steps)
    assert steps == new
    assert questions["cache_shape"].answer == (1, kv, prompt + steps - 1, d_k)  # the last row read L + n - 1 positions
    hf = _hf_attentions(name, text, new).attentions[-1][layer][0, :, -1]  # (H, t): the checkpoint's own last row
    top = questions["top_key"]
    head = dict(top.params)["head"]
    assert hf[head, top.answer] == pytest.approx(float(hf[head].max()), abs=1e-5)
    total = prompt + len(generation.new_tokens)
    assert questions["cache_bytes"].answer == 2 * layers * kv * d_k * 2 * total  # K and V, bfloat16
    assert questions["cache_bytes"].answer == generation.cache_size.numbers_per_token * 2 * total  # 2 bytes each
    worked = dict(questions["cache_bytes"].worked_params)["text"]
    assert worked.endswith(f"{questions['cache_bytes'].answer:,}")
    _reads_in_both_languages(questions.values())


def test_a_generation_without_a_step_asks_nothing(listed):
    import dataclasses

    from mha.sources.checkpoint.source import PretrainedSource

    config = AttentionConfig(weights="pretrained", checkpoint="gpt2", tokens=PROMPT)
    generation = PretrainedSource(WeightSpec("pretrained", checkpoint="gpt2")).generate(config, 1)
    assert generation_questions(dataclasses.replace(generation, steps=()), run_attention(config)) == ()


# ---------------------------------------------------------------- trained weights
def _trained_run(task: str, tokens: str | None, layer: int = 0, heads: int = 2, **fields):
    if tokens is not None:
        fields["tokens"] = tokens
    config = AttentionConfig(d_model=16, num_heads=heads, weights=TRAINED, task=task, layer=layer, **fields)
    spec = config.weight_spec
    model, history = train(spec.task, spec.d_model, spec.num_heads, spec.seed, text=spec.text, patch=spec.patch or 2,
                           max_steps=3)  # fmt: skip
    source = TrainedSource(TrainedModel(spec, model, history))
    return run_attention(config, source), source


def _rule_key(task: str, tokens: tuple[str, ...], row: int, layer: int) -> int | None:
    """Where the task's rule points from ``row``, computed here token by token (None: nowhere)."""
    if task == "previous" or (task == "induction" and layer == 0):
        return row - 1 if row > 0 else None
    if task == "previous_and_first":
        return 0 if row > 0 else None
    if task == "previous_and_last_digit":
        digits = [j for j in range(row) if tokens[j].isdigit()]
        return digits[-1] if digits else None
    earlier = [j for j in range(row) if tokens[j] == tokens[row]]  # induction: after the latest earlier copy
    return earlier[-1] + 1 if earlier else None


@pytest.mark.parametrize(
    ("task", "tokens", "layer"),
    [
        ("previous", "3 1 4 1 5 9 2 6", 0),
        ("previous_and_first", "3 1 4 1 5", 0),
        ("previous_and_last_digit", "c 4 a t 7 b x y", 0),
        ("induction", "a b c d x y a b c", 1),
        ("induction", "a b c d x y a b c", 0),
    ],
)
def test_a_trained_models_answers_are_its_tasks_rule_and_its_weights(task, tokens, layer):
    run, _ = _trained_run(task, tokens, layer)
    questions = _by_name(questions_of("trained", run))
    scored = run.scored_rows.tolist()
    rows = [i for i in range(len(run.tokens)) if scored[i] and _rule_key(task, run.tokens, i, layer) is not None]
    row = rows[-1]
    key_question = questions["relation_key"]
    assert dict(key_question.params)["row"] == row
    assert key_question.answer == _rule_key(task, run.tokens, row, layer)
    weights = run.trace.attend.weights[0]  # (H, L, L)
    keep = run.mask[0, 0] if run.mask is not None else torch.ones(len(run.tokens), len(run.tokens), dtype=torch.bool)
    counted = [i for i in range(len(run.tokens)) if scored[i] and int(keep[i].sum()) >= 2]
    counted = [i for i in counted if _rule_key(task, run.tokens, i, layer) is not None]
    means = [sum(float(weights[h, i, _rule_key(task, run.tokens, i, layer)]) for i in counted) / len(counted)
             for h in range(run.num_heads)]  # fmt: skip
    relation = "previous token" if task == "previous" or (task == "induction" and layer == 0) else None
    if relation is None:
        best = questions["relation_head"].answer
        assert means[best] == pytest.approx(max(means), abs=1e-6)
        assert float(dict(questions["relation_head"].worked_params)["share"]) == pytest.approx(means[best], abs=1e-3)
    else:
        assert "relation_head" not in questions  # the model's step asks the previous-token head
    faded = [i for i, ok in enumerate(scored) if not ok]
    if faded:
        assert questions["faded"].answer == 1 and dict(questions["faded"].worked_params)["count"] == len(faded)
    else:
        assert "faded" not in questions
    _reads_in_both_languages(questions.values())
    right = read_answer(key_question, str(key_question.answer))
    assert is_right(key_question, right) and not is_right(key_question, read_answer(key_question, str(row)))


def test_a_review_and_a_digit_ask_what_the_model_reads():
    from mha.text.reviews import LABELS

    run, source = _trained_run("reviews", "这家店的菜很好吃，服务也很好", heads=2)
    questions = _by_name(questions_of("trained", run))
    model = source.model(torch.device("cpu"), "float32")
    ids = torch.tensor([source.task.vocab.index(token) for token in run.tokens]).unsqueeze(0)  # (1, L)
    with torch.inference_mode():
        probabilities = model.logits(ids)[0, 0, 0].softmax(dim=-1)  # (B, R, L, C) -> [CLS]'s classes
    assert questions["prediction"].answer == int(probabilities.argmax())
    assert questions["prediction"].choices[questions["prediction"].answer].endswith(LABELS[int(probabilities.argmax())])
    weights = run.trace.attend.weights[0]  # (H, L, L)
    cls = questions["cls_top"]
    assert float(weights[dict(cls.params)["head"], 0, cls.answer]) == pytest.approx(
        float(weights[dict(cls.params)["head"], 0].max()), abs=1e-6
    )
    _reads_in_both_languages(questions.values())

    for patch, layer in ((2, 1), (4, 0)):
        run, source = _trained_run("digits", None, layer=layer, patch=patch)
        questions = _by_name(questions_of("trained", run))
        assert questions["patches"].answer == 1 + (8 // patch) ** 2
        assert ("cls_top" in questions) == (layer == 1)  # [CLS]'s row is read out in the last layer only
        model = source.model(torch.device("cpu"), "float32")
        pixels = as_digit(sample_image(run.config.image)).unsqueeze(0)  # (1, 1, 8, 8)
        with torch.inference_mode():
            logits = model.logits(pixels).reshape(-1)  # (K,)
        assert questions["prediction"].answer == int(logits.argmax())
        _reads_in_both_languages(questions.values())


def test_random_weights_and_a_checkpoint_ask_no_trained_question():
    assert questions_of("trained", run_attention(AttentionConfig())) == ()


# ---------------------------------------------------------------- the labs
@pytest.mark.parametrize(
    ("d_k", "mode", "tau"), [(64, "scaled", 1.0), (16, "unscaled", 1.0), (256, "temperature", 2.5)]
)
def test_lab1s_answers(d_k, mode, tau):
    stats = {each: {s.d_k: s for s in scaling_stats(each)} for each in ("scaled", "unscaled")}
    max_weights = {each: stats[each][d_k].max_weight for each in stats}
    questions = _by_name(scaling_questions(d_k, mode, tau, stats["scaled"][d_k].variance_raw, max_weights))
    assert questions["variance"].answer == d_k
    expected = {"scaled": 1 / math.sqrt(d_k), "unscaled": 1.0, "temperature": 1 / (tau * math.sqrt(d_k))}[mode]
    assert questions["multiplier"].answer == pytest.approx(expected)
    assert is_right(questions["multiplier"], read_answer(questions["multiplier"], f"{expected:.5f}"))
    sharper = questions["sharper"]
    assert sharper.choices[sharper.answer].endswith(".unscaled")  # q·k's spread saturates the unscaled softmax
    _reads_in_both_languages(questions.values())


@pytest.mark.parametrize(("d_model", "length"), [(64, 12), (16, 3), (256, 16)])
def test_lab2s_answers(d_model, length):
    from mha.experiments.heads import SWEEP_HEAD_COUNTS, head_sweep

    runs = head_sweep([f"w{i}" for i in range(length)], d_model, 0, 1.0)
    heads = [run.num_heads for run in runs]
    questions = _by_name(
        heads_questions(d_model, length, heads, [run.params for run in runs], [run.weight_entries for run in runs])
    )
    assert heads == list(SWEEP_HEAD_COUNTS)
    assert questions["params"].answer == 4 * d_model * d_model + 4 * d_model
    h = dict(questions["maps"].params)["h"]
    assert questions["maps"].answer == h * length * length
    assert questions["d_k"].answer == d_model // heads[-1]
    _reads_in_both_languages(questions.values())


@pytest.mark.parametrize(("length", "d_model", "heads"), [(6, 16, 4), (5, 8, 2), (12, 64, 8), (3, 32, 8)])
def test_lab3s_answers(length, d_model, heads):
    tokens = [f"t{i}" for i in range(length)]
    questions = _by_name(reshape_questions(tokens, d_model, heads))
    # every number of the (1, L, D) projection names its token: value // D; the buggy view's head h, row 0
    flat = torch.arange(length * d_model).view(1, length, d_model)  # (1, L, D)
    wrong = flat.view(1, heads, length, d_model // heads)  # (1, H, L, Dh): the bug
    head = dict(questions["source"].params)["head"]
    assert questions["source"].answer == int(wrong[0, head, 0, 0]) // d_model
    assert questions["shape"].answer == (1, heads, length, d_model // heads)
    _reads_in_both_languages(questions.values())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lab4s_answers(seed):
    generator = torch.Generator().manual_seed(seed)
    length = 3 + seed
    keep = torch.rand(length, length, generator=generator) > 0.5
    keep[seed % length] = False  # one fully masked row at least
    tokens = [f"t{i}" for i in range(length)]
    questions = _by_name(masks_questions(tokens, keep))
    assert questions["row_keys"].answer == sum(bool(v) for v in keep[-1])
    assert questions["empty_rows"].answer == sum(not any(bool(v) for v in row) for row in keep)
    # what True means to nn.MultiheadAttention, asked of it: the key a True blocks gets no weight
    layer = torch.nn.MultiheadAttention(4, 1, batch_first=True)
    x = torch.randn(1, 2, 4, generator=generator)
    blocked = torch.tensor([[False, True], [False, False]])
    with torch.no_grad():
        _, weights = layer(x, x, x, attn_mask=blocked)
    assert float(weights[0, 0, 1]) == 0.0
    torch_true = questions["torch_true"]
    assert torch_true.choices[torch_true.answer].endswith(".block")
    _reads_in_both_languages(questions.values())
