"""URL query parameters -> control values: pure parsing, clamping, and the problems reported."""

from __future__ import annotations

import pytest

from components.url_params import DEFAULTS, INT_RANGES, URL_KEYS, clean_text, parse_query_params, to_query_params
from mha.checkpoints import checkpoint_names
from mha.config import LIMITS, AttentionConfig
from mha.tokens import tokenize


def _codes(parsed) -> dict[str, str]:
    return {problem.field: problem.code for problem in parsed.problems}


def test_valid_values_parse_to_plain_values_without_problems():
    raw = {
        "d_model": "256",
        "num_heads": "4",
        "mask_type": "causal",
        "window": "3",
        "tokens": "小明喜欢打球",
        "seed": "7",
        "positional": "none",
        "device": "cpu",
        "head": "2",
    }
    parsed = parse_query_params(raw)
    assert parsed.problems == []
    assert parsed.values == {
        "d_model": 256,
        "num_heads": 4,
        "mask_type": "causal",
        "window": 3,
        "tokens": "小明喜欢打球",
        "seed": 7,
        "positional": "none",
        "device": "cpu",
        "head": 2,
    }


def test_absent_and_unknown_keys_are_ignored():
    parsed = parse_query_params({"utm_source": "mail", "lang": "zh"})
    assert parsed.values == {}
    assert parsed.problems == []


@pytest.mark.parametrize("raw", ["abc", "", "12.5", "1e3", "0x10", "--3", "３"])
def test_non_integers_fall_back_to_the_default(raw):
    parsed = parse_query_params({"d_model": raw})
    assert parsed.values["d_model"] == DEFAULTS["d_model"]
    (problem,) = parsed.problems
    assert (problem.field, problem.code) == ("d_model", "not_integer")
    assert problem.params["value"] == raw
    assert problem.params["used"] == DEFAULTS["d_model"]


@pytest.mark.parametrize(
    ("key", "raw", "expected"),
    [
        ("d_model", "1000000000", LIMITS.d_model_max),
        ("d_model", "-64", LIMITS.d_model_min),
        ("d_model", "1", LIMITS.d_model_min),
        ("num_heads", "0", 1),
        ("num_heads", "65", LIMITS.num_heads_max),
        ("window", "-1", 0),
        ("seed", "99999999999999", LIMITS.seed_max),
        ("head", "64", LIMITS.num_heads_max - 1),
    ],
)
def test_out_of_range_numbers_are_clamped(key, raw, expected):
    parsed = parse_query_params({key: raw})
    assert parsed.values[key] == expected
    (problem,) = parsed.problems
    assert (problem.field, problem.code) == (key, "out_of_range")
    assert (problem.params["low"], problem.params["high"]) == INT_RANGES[key]
    assert problem.params["used"] == expected


def test_thousands_of_digits_are_clamped_without_calling_int_on_them():
    # int() refuses strings over 4300 digits (ValueError); the parser must never get there.
    parsed = parse_query_params({"d_model": "9" * 5000, "seed": "-" + "9" * 5000})
    assert parsed.values == {"d_model": LIMITS.d_model_max, "seed": 0}
    assert _codes(parsed) == {"d_model": "out_of_range", "seed": "out_of_range"}


def test_clamped_values_make_a_valid_config():
    parsed = parse_query_params({"d_model": "1000000000", "num_heads": "-5", "window": "1000"})
    config = AttentionConfig(
        d_model=parsed.values["d_model"], num_heads=parsed.values["num_heads"], window=parsed.values["window"]
    )
    assert (config.d_model, config.num_heads, config.window) == (1024, 1, LIMITS.tokens_max)


def test_unknown_mask_and_device_fall_back_to_defaults():
    parsed = parse_query_params({"mask_type": "diagonal", "device": "tpu"}, devices=("auto", "cpu"))
    assert parsed.values == {"mask_type": "none", "device": "auto"}
    assert _codes(parsed) == {"mask_type": "unknown_choice", "device": "unknown_choice"}
    choices = {problem.field: problem.params["choices"] for problem in parsed.problems}
    assert choices == {"mask_type": "none, causal, padding, window", "device": "auto, cpu"}


def test_device_not_offered_here_is_refused():
    parsed = parse_query_params({"device": "cuda"}, devices=("auto", "cpu"))
    assert parsed.values["device"] == "auto"
    assert _codes(parsed) == {"device": "unknown_choice"}


@pytest.mark.parametrize(("raw", "expected"), [("true", True), ("0", False), ("OFF", False), (" yes ", True)])
def test_booleans(raw, expected):
    parsed = parse_query_params({"block_pad": raw})
    assert parsed.values["block_pad"] is expected
    assert parsed.problems == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("true", "sinusoidal"),
        ("0", "none"),
        ("OFF", "none"),
        (" yes ", "sinusoidal"),
        ("rope", "rope"),
        ("none", "none"),
    ],
)
def test_old_on_off_links_of_positional_keep_working(raw, expected):
    parsed = parse_query_params({"positional": raw})
    assert parsed.values["positional"] == expected
    assert parsed.problems == []


def test_a_bad_positional_falls_back_to_sinusoidal():
    parsed = parse_query_params({"positional": "maybe"})
    assert parsed.values["positional"] == "sinusoidal"
    assert _codes(parsed) == {"positional": "unknown_choice"}


@pytest.mark.parametrize("key", ["block_pad"])
def test_bad_boolean_falls_back_to_the_default(key):
    parsed = parse_query_params({key: "maybe"})
    assert parsed.values[key] is DEFAULTS[key]
    assert _codes(parsed) == {key: "not_boolean"}


def test_control_and_bidi_characters_are_removed_from_tokens():
    raw = "the\x00 cat\u202e sat\x1b\ton\nthe mat"
    parsed = parse_query_params({"tokens": raw})
    assert parsed.values["tokens"] == "the cat sat\ton\nthe mat"
    (problem,) = parsed.problems
    assert (problem.code, problem.params["count"]) == ("control_chars", 3)


def test_clean_text_keeps_chinese_emoji_and_right_to_left_letters():
    text = "小明 😀 שלום"
    assert clean_text(text) == (text, 0)


def test_over_long_text_is_cut_to_the_character_limit():
    parsed = parse_query_params({"tokens": "a" * (LIMITS.text_chars_max + 500)})
    assert len(parsed.values["tokens"]) == LIMITS.text_chars_max
    assert _codes(parsed) == {"tokens": "too_long_text"}


def test_too_many_tokens_keeps_the_first_ones_exactly():
    words = [f"w{i}" for i in range(LIMITS.tokens_max + 72)]
    parsed = parse_query_params({"tokens": " ".join(words)})
    assert tokenize(parsed.values["tokens"]) == words[: LIMITS.tokens_max]
    (problem,) = parsed.problems
    assert problem.code == "too_many_tokens"
    assert (problem.params["count"], problem.params["high"]) == (len(words), LIMITS.tokens_max)


def test_too_many_chinese_tokens_keeps_the_same_tokens():
    text = "小明喜欢打球，他放学后去了操场" * 20  # 300 tokens
    parsed = parse_query_params({"tokens": text})
    assert tokenize(parsed.values["tokens"]) == tokenize(text)[: LIMITS.tokens_max]


def test_round_trip_of_valid_values():
    values = {key: DEFAULTS[key] for key in URL_KEYS} | {"positional": "rope", "mask_type": "window", "head": 3}
    values |= {"weights": "pretrained", "checkpoint": checkpoint_names()[-1], "layer": 2, "tokenizer": "words"}
    values |= {"num_heads": 8, "num_kv_heads": 2}
    assert parse_query_params(to_query_params(values)).values == values
    assert to_query_params({"positional": "none"})["positional"] == "none"


def test_num_kv_heads_leaves_the_link_when_it_equals_num_heads():
    assert to_query_params({"num_heads": 4, "num_kv_heads": 4})["num_kv_heads"] is None
    assert to_query_params({"num_heads": 4, "num_kv_heads": 2})["num_kv_heads"] == "2"


def test_a_bad_num_kv_heads_in_a_link_falls_back_to_the_links_num_heads():
    parsed = parse_query_params({"num_heads": "6", "num_kv_heads": "two"})
    assert parsed.values["num_kv_heads"] == 6
    assert _codes(parsed) == {"num_kv_heads": "not_integer"}


# ---------------------------------------------------------------- where the weights come from
def test_weight_source_values_parse():
    name = checkpoint_names()[-1]
    raw = {"weights": "pretrained", "checkpoint": name, "layer": "3", "task": "induction", "tokenizer": "words"}
    parsed = parse_query_params(raw)
    assert parsed.problems == []
    assert parsed.values == {"weights": "pretrained", "checkpoint": name, "layer": 3, "task": "induction",
                             "tokenizer": "words"}  # fmt: skip


@pytest.mark.parametrize("asked", ["/etc/passwd", "../../models", "https://evil.example/model", "org/some-model", ""])
def test_a_checkpoint_that_is_not_on_the_list_is_never_taken(asked):
    parsed = parse_query_params({"checkpoint": asked})
    assert parsed.values["checkpoint"] == checkpoint_names()[0]
    (problem,) = parsed.problems
    assert (problem.field, problem.code, problem.params["value"]) == ("checkpoint", "unknown_choice", asked)


def test_a_layer_outside_every_models_depth_is_clamped():
    parsed = parse_query_params({"layer": "9" * 30})
    assert parsed.values["layer"] == LIMITS.layers_max - 1
    assert parsed.problems[0].code == "out_of_range"


def test_the_token_cap_counts_with_the_links_tokenizer():
    text = "小明喜欢打球" * 30  # 180 characters, 90 jieba words
    by_characters = parse_query_params({"tokens": text})
    by_words = parse_query_params({"tokens": text, "tokenizer": "words"})
    assert [p.code for p in by_characters.problems] == ["too_many_tokens"]
    assert by_words.problems == [] and by_words.values["tokens"] == text
    assert len(tokenize(by_characters.values["tokens"])) == LIMITS.tokens_max
