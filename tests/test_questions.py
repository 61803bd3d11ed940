"""Check yourself, the engine's side: every generated answer against an independent computation for many
configurations (random weights, GQA, RoPE, masks, sentences, a tiny checkpoint), the answer reader on good and bad
input, and the room store (30 sessions answering at once: no count lost, none doubled)."""

from __future__ import annotations

import math
import threading

import pytest
import torch

from components.check_yourself import FLOOD_ANSWERS, FLOOD_SECONDS, allow_send, learners_link, parse_checked
from mha.config import LIMITS, PRETRAINED, AttentionConfig
from mha.pipeline import run_attention
from mha.questions import MAX_ANSWER, Question, all_questions, is_right, questions_of, read_answer
from mha.room_store import ROOM_HOURS, RoomStore, is_code, session_hash

ANIMAL = "The animal didn't cross the street because it was too tired"

CONFIGS = [
    {},
    {"d_model": 64, "num_heads": 4},
    {"d_model": 96, "num_heads": 6, "num_kv_heads": 2},
    {"d_model": 128, "num_heads": 8, "num_kv_heads": 1, "positional": "rope"},
    {"d_model": 64, "num_heads": 4, "num_kv_heads": 2, "positional": "rope", "mask_type": "causal"},
    {"d_model": 48, "num_heads": 3, "mask_type": "causal", "tokens": "a b c d e", "seed": 3},
    {"d_model": 32, "num_heads": 2, "tokens": "我 爱 北京 天安门", "tokenizer": "words", "seed": 7},
    {"d_model": 120, "num_heads": 5, "mask_type": "window", "window": 1},
    {"d_model": 40, "num_heads": 4, "positional": "rope"},  # twice the heads: an odd d_k RoPE cannot turn
    {"d_model": 128, "num_heads": 64},  # twice the heads: past the heads limit
    {"d_model": 96, "num_heads": 48, "num_kv_heads": 16},  # twice the heads: past the limit, GQA
]

#: The right option of each multiple choice, by the last part of its message key.
RIGHT_OPTIONS = {
    "why_mask": "future",
    "why_scale": "spread",
    "rope_what": "qk",
    "why_contiguous": "view",
    "faded": "loss",
}


def _by_key(run) -> dict[str, Question]:
    return {q.key: q for q in all_questions(run)}


def _independent_weights(run) -> torch.Tensor:
    """softmax(q kᵀ / √d_k) from step 1's heads (turned where RoPE turns them), K/V heads repeated, the mask applied:
    not the trace's own weights."""
    p = run.trace.project
    q = p.q_rotated if p.q_rotated is not None else p.q_heads  # (1, H, L, Dh)
    k = p.k_rotated if p.k_rotated is not None else p.k_heads  # (1, Hkv, L, Dh)
    k = k[:, list(p.kv_head_of)]  # (1, H, L, Dh)
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.size(-1))  # (1, H, L, L)
    if run.mask is not None:
        scores = scores.masked_fill(~run.mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


def _check_answers(run, d: int, heads: int, kv: int, bias: bool) -> None:
    questions = _by_key(run)
    length = len(run.tokens)
    d_k = d // heads
    w = kv * d_k
    b = 1 if bias else 0
    assert questions["check_1_wq_params"].answer == d * d + b * d
    assert questions["check_1_k_shape"].answer == (1, kv, length, d_k)
    assert questions["check_1_layer_params"].answer == 2 * (d * d + b * d) + 2 * (d * w + b * w)
    assert questions["check_2_scale"].answer == pytest.approx(1 / math.sqrt(d_k))
    assert questions["check_2_weights_shape"].answer == (1, heads, length, length)
    weights = _independent_weights(run)
    top = questions["check_2_top_key"]
    head, row = dict(top.params)["head"], dict(top.params)["row"]
    assert weights[0, head, row, top.answer] == pytest.approx(weights[0, head, row].max().item(), abs=1e-6)
    if "check_2_why_scale" in questions:  # its worked answer: the spread of q·k over every head, raw and scaled
        worked = dict(questions["check_2_why_scale"].worked_params)
        p = run.trace.project
        q = p.q_rotated if p.q_rotated is not None else p.q_heads  # (1, H, L, Dh)
        k = (p.k_rotated if p.k_rotated is not None else p.k_heads)[:, list(p.kv_head_of)]  # (1, H, L, Dh)
        raw = (q @ k.transpose(-1, -2)).double().std(correction=0).item()  # (1, H, L, L), the spread of every cell
        assert float(worked["raw"]) == pytest.approx(raw, rel=5e-3)
        assert float(worked["scaled"]) == pytest.approx(raw / math.sqrt(d_k), rel=5e-3)
    assert questions["check_3_concat_shape"].answer == (1, length, d)
    assert questions["check_4_wo_params"].answer == d * d + b * d
    assert questions["check_4_output_shape"].answer == (1, length, d)
    doubled_d_k = d // (2 * heads)
    rope_odd = run.model.rope_base is not None and doubled_d_k % 2 == 1
    if d % (2 * heads) == 0 and 2 * heads <= LIMITS.num_heads_max and not rope_odd:
        w2 = (2 * heads if kv == heads else kv) * d // (2 * heads)  # the tutorials' layer: one K/V head per head
        assert questions["check_4_double_heads"].answer == 2 * (d * d + b * d) + 2 * (d * w2 + b * w2)
    else:
        assert "check_4_double_heads" not in questions
    if kv < heads:
        h = dict(questions["check_1b_kv_head"].params)["h"]
        assert questions["check_1b_kv_head"].answer == h // (heads // kv)
        assert questions["check_1b_wk_params"].answer == d * w + b * w
    else:
        assert "check_1b_kv_head" not in questions
    if run.model.rope_base is not None:
        assert questions["check_1b_rope_pairs"].answer == d_k // 2
    else:
        assert not any(key.startswith("check_1b_rope") for key in questions)
    for question in questions.values():
        assert question.key == f"check_{question.step}_{question.name}"
        assert (question.kind == "choice") == bool(question.choices)
        if question.kind == "choice":
            assert 0 <= question.answer < len(question.choices)
            assert question.choices[question.answer] == f"{question.prompt}.{RIGHT_OPTIONS[question.name]}"
    for step in ("1", "2", "3", "4"):
        assert 2 <= len(questions_of(step, run)) <= 4


@pytest.mark.parametrize("changes", CONFIGS, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()) or "default")
def test_answers_are_the_runs_own(changes):
    config = AttentionConfig(**changes)
    run = run_attention(config)
    _check_answers(run, config.d_model, config.num_heads, config.num_kv_heads, bias=True)


def test_the_questions_change_with_the_choices():
    a = _by_key(run_attention(AttentionConfig()))
    b = _by_key(run_attention(AttentionConfig(d_model=64, num_heads=4, num_kv_heads=2, tokens="one two three")))
    changed = ("check_1_wq_params", "check_1_k_shape", "check_2_scale", "check_2_weights_shape", "check_3_concat_shape")
    for key in changed:
        assert a[key].answer != b[key].answer, key
    assert "check_1b_kv_head" in b and "check_1b_kv_head" not in a
    causal = _by_key(run_attention(AttentionConfig(mask_type="causal")))
    assert "check_2_why_mask" in causal and "check_2_why_scale" not in causal


def test_a_checkpoints_layer_gqa_rope_no_bias(listed_llama):
    from tiny_checkpoint import LLAMA_HEADS, LLAMA_HIDDEN, LLAMA_KV_HEADS, LLAMA_LAYERS

    run = run_attention(AttentionConfig(weights=PRETRAINED, checkpoint="tiny_llama", tokens=ANIMAL))
    _check_answers(run, LLAMA_HIDDEN, LLAMA_HEADS, LLAMA_KV_HEADS, bias=False)
    assert dict(_by_key(run)["check_1_wq_params"].worked_params)["text"].startswith("d² = ")
    _check_model(run, LLAMA_LAYERS, LLAMA_KV_HEADS, LLAMA_HIDDEN // LLAMA_HEADS)
    from components.i18n import t

    questions = _by_key(run)
    for lang, says_biases in (("en", "weights and biases"), ("zh", "权重加偏置")):  # no biases: not said to have any
        label = t(questions["check_1_wq_params"].prompt, lang=lang, **dict(questions["check_1_wq_params"].params))
        assert "W_q" in label and says_biases not in label
        assert says_biases in t("quiz.1.wq_params", lang=lang, d=512)  # the default layer has them
    assert "parameters" in t(questions["check_1_wq_params"].prompt, lang="en", d=1)
    double = questions["check_4_double_heads"]  # a checkpoint's sizes are locked: no control to try it with
    for lang, control in (("en", "heads control"), ("zh", "头数控件")):
        assert control not in t(double.prompt, lang=lang, **dict(double.params))
    default = _by_key(run_attention(AttentionConfig()))["check_4_double_heads"]
    assert "heads control" in t(default.prompt, lang="en", **dict(default.params))


def test_model_questions_only_where_they_mean_something(tiny_gpt2, tiny_vit, tiny_checkpoint, monkeypatch):
    """The KV cache of a causal model only (not BERT's, not ViT's); the previous-token head of a text only (a ViT's
    previous token is the previous patch in row order)."""
    listed = f"gpt2={tiny_gpt2},tinyvit={tiny_vit},tiny={tiny_checkpoint}"
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", listed)
    gpt2 = _by_key(run_attention(AttentionConfig(weights=PRETRAINED, checkpoint="gpt2", tokens=ANIMAL)))
    assert {"check_model_previous_head", "check_model_kv_cache_bytes"} <= set(gpt2)
    bert = _by_key(run_attention(AttentionConfig(weights=PRETRAINED, checkpoint="tiny", tokens=ANIMAL)))
    assert "check_model_previous_head" in bert and "check_model_kv_cache_bytes" not in bert
    vit = _by_key(run_attention(AttentionConfig(weights=PRETRAINED, checkpoint="tinyvit", image="digit-3")))
    assert not any(key.startswith("check_model_") for key in vit)
    assert "check_2_top_key" in vit  # the steps still ask


def test_gpt2s_tokens_are_shown_by_the_one_rule(listed_gpt2):
    from mha.tokens import shown_token

    run = run_attention(AttentionConfig(weights=PRETRAINED, checkpoint="gpt2", tokens="the cat is on the mat"))
    assert any(token.startswith(" ") for token in run.tokens)  # GPT-2 keeps a word's space
    top = _by_key(run)["check_2_top_key"]
    row, key = dict(top.params)["row"], top.answer
    assert dict(top.params)["token"] == shown_token(run.tokens[row]) and not dict(top.params)["token"].startswith(" ")
    assert dict(top.worked_params)["token"] == shown_token(run.tokens[key])


def test_the_why_options_state_the_condition():
    from components.i18n import t

    spread = {lang: t("quiz.2.why_scale.spread", lang=lang) for lang in ("en", "zh")}
    assert "mean 0 and variance 1" in spread["en"] and "variance d_k" in spread["en"] and "back to 1" in spread["en"]
    assert "均值为 0" in spread["zh"] and "方差为 1" in spread["zh"] and "方差为 d_k" in spread["zh"]
    rope = {lang: t("quiz.worked.rope_what", lang=lang) for lang in ("en", "zh")}
    assert "m − n" in rope["en"] and "angle" in rope["en"] and "also depends on the two vectors" in rope["en"]
    assert "m − n" in rope["zh"] and "角度" in rope["zh"] and "只取决于两者的距离" not in rope["zh"]


def _check_model(run, layers: int, kv: int, d_k: int, causal: bool = True) -> None:
    questions = _by_key(run)
    weights = run.trace.attend.weights[0]  # (H, L, L)
    shares = [sum(float(weights[h, i, i - 1]) for i in range(1, weights.size(1))) for h in range(weights.size(0))]
    best = questions["check_model_previous_head"].answer
    assert shares[best] == pytest.approx(max(shares), abs=1e-5)
    if not causal:  # an encoder keeps no KV cache
        assert "check_model_kv_cache_bytes" not in questions
        return
    assert questions["check_model_kv_cache_bytes"].answer == 2 * layers * kv * d_k * 2  # K and V, 2 bytes each
    from components.i18n import t

    for question in (questions["check_model_previous_head"], questions["check_model_kv_cache_bytes"]):
        for lang in ("en", "zh"):
            worked = t(question.worked, lang=lang, **dict(question.worked_params))
            assert worked.endswith(f"{question.answer:,}"), (question.key, worked)


def test_trained_weights_ask_about_the_model():
    from mha.sources.trained import TrainedSource
    from mha.training.loop import train
    from mha.training.service import TrainedModel

    config = AttentionConfig(d_model=16, num_heads=2, weights="trained", task="previous", tokens="3 1 4 1 5 9 2 6")
    spec = config.weight_spec
    model, history = train(spec.task, spec.d_model, spec.num_heads, spec.seed, text=spec.text, max_steps=3)
    run = run_attention(config, TrainedSource(TrainedModel(spec, model, history)))
    _check_answers(run, 16, 2, 2, bias=True)
    _check_model(run, run.num_layers, 2, 8, causal=False)
    assert not any(q.step == "model" for q in all_questions(run_attention(AttentionConfig())))  # random: none


def test_worked_answers_are_the_pages_numbers():
    questions = _by_key(run_attention(AttentionConfig()))
    assert dict(questions["check_1_wq_params"].worked_params)["text"] == "d² + d = 512² + 512 = 262,656"
    assert dict(questions["check_1_k_shape"].worked_params)["text"].endswith("[1, 8, 11, 64]")
    assert dict(questions["check_2_scale"].worked_params)["text"] == "1/√d_k = 1/√64 = 0.125"
    gqa = _by_key(run_attention(AttentionConfig(num_kv_heads=2)))
    assert dict(gqa["check_1b_kv_head"].worked_params)["text"] == "h // (H / H_kv) = 7 // (8 / 2) = 7 // 4 = 1"


# ---------------------------------------------------------------- the reader
def _q(kind: str, answer: object, tokens: tuple[str, ...] = (), choices: tuple[str, ...] = ()) -> Question:
    return Question("1", "x", kind, "p", (), answer, "w", (), choices=choices, tokens=tokens)


@pytest.mark.parametrize(
    "text", ["[1, 8, 11, 64]", "1×8×11×64", "1x8x11x64", "(1,8,11,64)", " 1 8 11 64 ", "torch.Size([1, 8, 11, 64])"]
)
def test_shapes_read_leniently(text):
    question = _q("shape", (1, 8, 11, 64))
    reading = read_answer(question, text)
    assert reading.value == (1, 8, 11, 64) and is_right(question, reading)


@pytest.mark.parametrize("text", ["[1, 8, 11]", "[1, 8, 11, 64, 1]", "(8, 1, 11, 64)"])
def test_wrong_shapes_are_wrong(text):
    question = _q("shape", (1, 8, 11, 64))
    reading = read_answer(question, text)
    assert reading.problem is None and not is_right(question, reading)


@pytest.mark.parametrize("text", ["hello", "[1, eight]", "1.5 x 2", "[-1, 8]", "[]", "1" * 20, "[1, 8, 11, 64²]", "²"])
def test_unreadable_shapes(text):
    assert read_answer(_q("shape", (1, 8)), text).problem == "shape"


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        *[("787968", 787968), ("787,968", 787968), ("787 968", 787968), ("787_968", 787968), ("0.125", 0.125)],
        *[("1/8", 0.125), (".125", 0.125), ("0.1250", 0.125), ("1.25e-1", 0.125), ("0.12501", 0.125)],
    ],
)
def test_numbers_read_leniently(text, answer):
    question = _q("number", answer)
    assert is_right(question, read_answer(question, text))


@pytest.mark.parametrize(("text", "answer"), [("787969", 787968), ("0.13", 0.125), ("1/7", 0.125), ("787,96", 787968)])
def test_near_numbers_are_wrong(text, answer):
    question = _q("number", answer)
    assert not is_right(question, read_answer(question, text))


@pytest.mark.parametrize("text", ["abc", "1/0", "nan", "inf", "1e999", "--3", "1,2,3,4.5.6", "<b>5</b>"])
def test_unreadable_numbers(text):
    assert read_answer(_q("number", 5), text).problem == "number"


def test_tokens_by_index_or_text():
    tokens = ("The", "animal", "it", "the")
    question = _q("token", 1, tokens=tokens)
    assert is_right(question, read_answer(question, "1"))
    assert is_right(question, read_answer(question, "animal"))
    assert is_right(question, read_answer(question, " 'Animal' "))
    assert not is_right(question, read_answer(question, "it"))
    assert not is_right(question, read_answer(question, "2"))
    assert read_answer(question, "4").problem == "token"  # past the last token
    assert read_answer(question, "zebra").problem == "token"
    assert read_answer(question, "²").problem == "token"  # a digit to str.isdigit, not to int()
    assert read_answer(question, "1²").problem == "token"
    twice = _q("token", 3, tokens=tokens)  # "the" and "The": a text names every place it has
    assert is_right(twice, read_answer(twice, "the"))


def test_choices_empty_and_too_long():
    question = _q("choice", 1, choices=("a", "b", "c"))
    assert is_right(question, read_answer(question, "1"))
    assert not is_right(question, read_answer(question, "0"))
    assert read_answer(question, "3").problem == "choice"
    assert read_answer(question, "²").problem == "choice"
    assert read_answer(question, "").problem == "empty"
    assert read_answer(_q("number", 5), "5" * (MAX_ANSWER + 1)).problem == "too_long"
    assert read_answer(_q("number", 5), "5" * 10_000).problem == "too_long"


def test_the_link_and_the_flood_limit():
    assert parse_checked("1.wq_params,2.scale,1b.kv_head") == {"1.wq_params", "2.scale", "1b.kv_head"}
    assert parse_checked("<script>,9.x,1.WQ,,1.a b,2.scale") == {"2.scale"}
    assert len(parse_checked(",".join(f"1.q_{'a' * (i % 30 + 1)}" for i in range(500)))) <= 64
    times: list[float] = []
    assert all(allow_send(times, 0.0) for _ in range(FLOOD_ANSWERS))
    assert not allow_send(times, 1.0)
    assert allow_send(times, FLOOD_SECONDS + 0.5)  # the window moved on
    params = {"teacher": "1", "step": "room", "d_model": "64"}
    assert learners_link("http://host:8501/?teacher=1", params, "ABC234") == "http://host:8501/?d_model=64&room=ABC234"
    assert learners_link("http://host:8501", params, "ABC234") == "http://host:8501/?d_model=64&room=ABC234"


# ---------------------------------------------------------------- the room store
def test_room_store_counts_one_answer_per_session(tmp_path):
    store = RoomStore(tmp_path / "rooms.sqlite3")
    code = store.open_room()
    assert is_code(code) and store.is_open(code)
    assert store.answer(code, "1.wq_params", "s1", False)
    assert store.answer(code, "1.wq_params", "s1", True)  # the latest replaces the first
    assert store.answer(code, "1.wq_params", "s2", False)
    assert store.answer(code, "2.scale", "s2", True)
    counts = {c.question: (c.answered, c.right) for c in store.counts(code)}
    assert counts == {"1.wq_params": (2, 1), "2.scale": (1, 1)}
    assert not store.answer("ZZZZZZ", "2.scale", "s1", True)  # unknown room
    assert not store.is_open("not a code") and not store.is_open("ZZZZZZ")


def test_rooms_expire_and_hold_no_text(tmp_path):
    import sqlite3

    store = RoomStore(tmp_path / "rooms.sqlite3")
    code = store.open_room(now=1000.0)
    assert store.is_open(code, now=1000.0 + ROOM_HOURS * 3600 - 1)
    assert not store.answer(code, "1.x", "s", True, now=1000.0 + ROOM_HOURS * 3600)  # expired: refused
    store.answer(code, "1.x", "session-id-secret", True, now=1001.0)
    with sqlite3.connect(tmp_path / "rooms.sqlite3") as db:
        rows = db.execute("SELECT * FROM answers").fetchall()
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert rows == [(code, "1.x", session_hash("session-id-secret"), 1, 1001.0)]
    store.open_room(now=1000.0 + ROOM_HOURS * 3600 + 1)  # a new room clears the expired ones and their answers
    assert store.counts(code) == ()
    other = store.open_room(now=5000.0)
    assert store.answer(other, "1.x", "s", True, now=5001.0)
    assert not store.is_open(other, now=5000.0 + ROOM_HOURS * 3600)  # looking a room up clears the expired too
    assert store.counts(other) == ()


def test_thirty_sessions_answering_at_once(tmp_path):
    path = tmp_path / "rooms.sqlite3"
    code = RoomStore(path).open_room()
    questions = [f"1.q{i}" for i in range(6)]
    start = threading.Barrier(30)
    errors: list[BaseException] = []

    def learner(n: int) -> None:
        store = RoomStore(path)  # each learner its own process's store: its own connections
        try:
            start.wait()
            for i, question in enumerate(questions):
                store.answer(code, question, f"learner-{n}", False)  # a first try, then the answer that counts
                store.answer(code, question, f"learner-{n}", (n + i) % 3 == 0)
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=learner, args=(n,)) for n in range(30)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    counts = {c.question: (c.answered, c.right) for c in RoomStore(path).counts(code)}
    expected = {q: (30, sum((n + i) % 3 == 0 for n in range(30))) for i, q in enumerate(questions)}
    assert counts == expected


@pytest.mark.parametrize("changes", CONFIGS[:5])
def test_every_question_reads_in_both_languages(changes):
    from components.i18n import t

    for question in all_questions(run_attention(AttentionConfig(**changes))):
        for lang in ("en", "zh"):
            assert t(question.prompt, lang=lang, **dict(question.params))
            assert t(question.worked, lang=lang, **dict(question.worked_params))
            assert all(t(choice, lang=lang) for choice in question.choices)


@pytest.mark.parametrize("changes", [CONFIGS[0], CONFIGS[4]])
def test_a_worked_answer_ends_with_the_answer(changes):
    from components.i18n import t

    for question in all_questions(run_attention(AttentionConfig(**changes))):
        if question.kind == "choice":
            continue
        answer = question.answer
        if question.kind == "shape":
            expected = str(list(answer))
        elif isinstance(answer, float):
            expected = f"{answer:.4g}"
        else:
            expected = f"{answer:,}"
        for lang in ("en", "zh"):
            worked = t(question.worked, lang=lang, **dict(question.worked_params))
            assert worked.endswith(expected), (question.key, lang, worked)
