"""The reviews' vocabulary, reading and example at the cases mutation testing (scripts/mutation.sh) found no test
for. ``load_reviews`` is cached once per process, so these call the functions it is built from directly."""

from __future__ import annotations

import torch

from mha.text.reviews import CLS, LENGTH, PAD, UNK, Reviews, build_vocabulary, load_reviews, read_review


def test_the_vocabulary_keeps_characters_seen_twice_most_frequent_first_ties_in_code_point_order():
    """好 ×4, 差 ×3, b ×2 and a ×2 (a tie: a before b), c and 坏 once (left out: fewer than 2)."""
    texts = ["好好差b", "好差a坏", "好差ab", "c"]
    assert build_vocabulary(texts) == (PAD, CLS, UNK, "好", "差", "a", "b")


def test_a_reading_gives_the_ids_the_unknown_and_the_chinese_characters_it_counts():
    vocab = (PAD, CLS, UNK, "好", "x", "\u3400", "\u9fff", "\uf900", "\ufaff")
    reading = read_review("好 x? \u3400\u9fff\uf900\ufaff!", vocab)
    assert reading.tokens == (CLS, "好", "x", UNK, "\u3400", "\u9fff", "\uf900", "\ufaff", UNK)
    assert reading.ids.tolist() == [1, 3, 4, 2, 5, 6, 7, 8, 2]  # each token's place in the vocabulary
    assert reading.unknown == 2  # "?" and "!"
    assert reading.chinese == 5  # 好 and the four ends of the two CJK ranges counted; x, ? and ! not
    assert read_review("\u33ff\ua000\uf8ff\ufb00", vocab).chinese == 0  # one past each end of the ranges


def test_the_example_is_the_first_full_length_validation_review_with_no_unknown_character():
    reviews = load_reviews()
    index = reviews.example()
    known = set(reviews.vocab)
    candidates = [
        i
        for i in reviews.splits["validation"].tolist()
        if len(reviews.texts[i]) == LENGTH and set(reviews.texts[i]) <= known
    ]
    assert candidates and index == candidates[0]


def test_an_unknown_first_character_is_counted_too():
    assert read_review("?x", (PAD, CLS, UNK, "x")).unknown == 1


def test_without_a_full_length_review_the_example_is_the_first_validation_review():
    """The fallback: no validation review fills all LENGTH characters, so the first of the split is shown."""
    texts = ("ab", "cd", "ef")
    reviews = Reviews(
        texts=texts,
        labels=torch.tensor([0, 1, 0]),
        ids=torch.zeros(3, 1 + LENGTH, dtype=torch.long),
        splits={
            "train": torch.tensor([0]),
            "validation": torch.tensor([2, 1]),
            "held_out": torch.tensor([], dtype=torch.long),
        },
        vocab=(PAD, CLS, UNK, "a", "b"),
    )
    assert reviews.example() == 2
