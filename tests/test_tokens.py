"""The tokenizer's rules: whitespace separates words in every script; unspaced CJK by characters or jieba words."""

from __future__ import annotations

import pytest

from mha.tokens import TOKENIZERS, tokenize

SEGMENTED = "小明 喜欢 打球"
UNSPACED = "小明喜欢打球"


@pytest.mark.parametrize("mode", TOKENIZERS)
def test_whitespace_separates_words_in_every_script(mode):
    assert tokenize(SEGMENTED, mode) == ["小明", "喜欢", "打球"]
    assert tokenize("The cat  sat\n on\tthe mat", mode) == ["The", "cat", "sat", "on", "the", "mat"]


def test_unspaced_chinese_is_one_token_per_character_by_default():
    assert tokenize(UNSPACED) == list(UNSPACED)
    assert tokenize(UNSPACED, "characters") == list(UNSPACED)


def test_words_mode_cuts_unspaced_chinese_with_jieba():
    import jieba

    words = tokenize(UNSPACED, "words")
    assert words == ["小明", "喜欢", "打球"]
    assert "".join(words) == UNSPACED  # a segmentation: nothing lost or added
    assert words == jieba.Tokenizer().lcut(UNSPACED)  # the segmenter's own answer, not a copy of it


def test_punctuation_and_special_tokens_stay_their_own_tokens_in_both_modes():
    text = "小明喜欢打球，他放学后去了操场。[PAD]"
    for mode in TOKENIZERS:
        tokens = tokenize(text, mode)
        assert tokens[-1] == "[PAD]" and "，" in tokens and "。" in tokens
        assert "".join(tokens) == text.replace(" ", "")
    han = sum("\u4e00" <= ch <= "\u9fff" for ch in text)
    assert len(tokenize(text, "characters")) == han + 2 + 1  # every character, the 2 marks, [PAD]
    assert len(tokenize(text, "words")) < len(tokenize(text, "characters"))


def test_mixed_scripts_keep_latin_words_whole():
    assert tokenize("我爱NLP和PyTorch") == ["我", "爱", "NLP", "和", "PyTorch"]
    assert tokenize("我爱NLP和PyTorch", "words")[-1] == "PyTorch"


def test_spaced_text_keeps_its_words_as_typed_with_characters():
    """Text that already has spaces between CJK words is segmented: each spaced chunk is one token."""
    assert tokenize("我 喜欢打球") == ["我", "喜欢打球"]
    assert tokenize("我 喜欢打球", "words") == ["我", "喜欢", "打球"]  # jieba cuts inside the chunk


def test_the_result_is_a_fresh_list_each_time():
    first = tokenize(UNSPACED, "words")
    first.append("x")  # the cache behind tokenize must not see this
    assert tokenize(UNSPACED, "words") == ["小明", "喜欢", "打球"]


def test_an_unknown_mode_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="characters, words"):
        tokenize("a b", "bytes")
