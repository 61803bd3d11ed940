"""Every message exists in English and Simplified Chinese, non-empty, with the same placeholders."""

from __future__ import annotations

import re
import string

import pytest

from components.i18n import LANGUAGES, t
from components.locale import CATALOG

_HAN = re.compile(r"[\u4e00-\u9fff]")


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


@pytest.mark.parametrize("key", sorted(CATALOG))
def test_every_key_has_both_languages_and_the_same_placeholders(key):
    entry = CATALOG[key]
    assert set(entry) == set(LANGUAGES), f"{key}: languages {sorted(entry)}"
    for lang in LANGUAGES:
        assert entry[lang].strip(), f"{key}: empty {lang} text"
    assert _placeholders(entry["en"]) == _placeholders(entry["zh"]), key


def test_the_playground_catalog_is_registered():
    from components.locale import playground

    assert set(playground.MESSAGES) <= set(CATALOG)


def test_playground_messages_are_each_in_their_own_language():
    # Entries that are the same in both languages on purpose (example sentences, symbols) are skipped.
    # Other catalogs may quote a Chinese word in English on purpose, so only the playground's is checked.
    from components.locale import playground

    checked = 0
    for key, entry in playground.MESSAGES.items():
        if entry["en"] == entry["zh"]:
            continue
        assert not _HAN.search(entry["en"]), f"{key}: Chinese in the English text"
        assert _HAN.search(entry["zh"]), f"{key}: no Chinese in the Chinese text"
        checked += 1
    assert checked > 50


def test_t_formats_in_the_requested_language():
    assert t("controls.token_count", lang="en", count=3, high=128) == "3 tokens (at most 128)"
    assert t("controls.token_count", lang="zh", count=3, high=128) == "3 个词元（最多 128 个）"


# A reader's corrections to the Chinese text: the wrong phrase on the left must not come back.
READER_CORRECTIONS = {
    "参数量（实数）": "参数量（实际计数）",  # 实数 is "real number"
    "雕刻": "构造",  # heads are built, not carved
    "对键做 softmax": "沿键的维度做 softmax",
    "逐个数字比较": "逐元素比较",
    "零上下文": "上下文全为 0",
    "模型宽度": "模型维度",  # one term for d_model on every page
}


@pytest.mark.parametrize("wrong", sorted(READER_CORRECTIONS))
def test_the_chinese_text_keeps_the_readers_corrections(wrong):
    offending = [key for key, entry in CATALOG.items() if wrong in entry["zh"]]
    assert not offending, f"{wrong!r} is back in {offending}; write {READER_CORRECTIONS[wrong]!r}"
