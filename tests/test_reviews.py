"""The reviews task: its bundled data (counts, hash, disjoint splits), its vocabulary (the training split's only), its
model, its accuracy on the held-out reviews, the learner's sentence read on the page (bad input included, both
languages) and lab 11 on its [CLS] prediction."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import importlib.util
import lzma
import re
from collections import Counter
from pathlib import Path

import pytest
import torch
from conftest import trained_spec
from streamlit.testing.v1 import AppTest
from test_languages import HAN, leftover_english, shown_texts, user_tokens

from components.controls.keys import REVIEW_EXAMPLES
from components.i18n import t
from components.url_params import parse_query_params, to_query_params
from mha.config import LIMITS, AttentionConfig
from mha.experiments.attribution import ablation_deltas, prediction_effects
from mha.pipeline import run_attention
from mha.sources import make_source
from mha.text.baseline import BASELINE_HELD_OUT, bag_of_characters
from mha.text.reviews import CLS, DATA_FILE, LABELS, LENGTH, PAD, REVIEWS_SHA256, UNK, load_reviews, read_review
from mha.training import train
from mha.training.reviews_model import build_reviews_model, reviews_model_parameters
from mha.training.service import training_service
from mha.training.tasks import make_task

REPO = Path(__file__).resolve().parents[1]
SCRIPT = str(REPO / "playground.py")
LINK = {"weights": "trained", "task": "reviews", "d_model": "16", "num_heads": "2"}
HELD_OUT_MIN = 0.80  # the page's sizes reach 81.7-82.4 % (docs/PERFORMANCE.md, "Chinese reviews"); the bag: 82.2 %


def _rebuild_script():
    spec = importlib.util.spec_from_file_location("reviews_data", REPO / "scripts" / "reviews_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows() -> list[tuple[str, int, str]]:
    """The file read here on its own (not through mha.text.reviews)."""
    lines = lzma.decompress(DATA_FILE.read_bytes()).decode("utf-8").splitlines()
    return [(split, int(label), text) for split, label, text in (line.split("\t") for line in lines)]


# ---------------------------------------------------------------- the data
def test_the_file_is_the_one_the_script_and_the_readme_describe():
    digest = hashlib.sha256(DATA_FILE.read_bytes()).hexdigest()
    assert digest == REVIEWS_SHA256
    readme = (DATA_FILE.parent / "README.md").read_text(encoding="utf-8")
    assert digest in readme and f"{DATA_FILE.stat().st_size:,} bytes" in readme
    assert "MIT License" in (DATA_FILE.parent / "LICENSE").read_text(encoding="utf-8")
    assert DATA_FILE.stat().st_size < 1_000_000
    script = _rebuild_script()
    counts = Counter((split, label) for split, label, _ in _rows())
    assert counts == {(split, label): n for split, n in script.SPLITS.items() for label in (0, 1)}
    assert script.LENGTH == LENGTH


def test_the_splits_are_disjoint_and_every_review_is_cut_as_the_script_cuts_it():
    rows = _rows()
    script = _rebuild_script()
    by_split: dict[str, set[str]] = {}
    for split, _, text in rows:
        assert script.SHORTEST <= len(text) <= LENGTH and script.cut(text) == text
        by_split.setdefault(split, set()).add(text)
    assert sum(len(texts) for texts in by_split.values()) == len(rows)  # no review twice, in one split or two
    reviews = load_reviews()
    indices = [set(reviews.splits[name].tolist()) for name in ("train", "validation", "held_out")]
    assert sum(len(i) for i in indices) == len(set.union(*indices)) == len(rows)
    assert {reviews.texts[i] for i in indices[2]} == by_split["held_out"]


def test_the_vocabulary_comes_from_the_training_split_alone():
    rows = _rows()
    counts = Counter(c for split, _, text in rows if split == "train" for c in text)
    reviews = load_reviews()
    assert reviews.vocab[:3] == (PAD, CLS, UNK)
    assert set(reviews.vocab[3:]) == {c for c, n in counts.items() if n >= 2}
    unseen = {c for split, _, text in rows if split != "train" for c in text} - set(counts)
    assert unseen, "some held-out or validation characters never occur in training"
    for character in sorted(unseen)[:20]:
        assert read_review(character, reviews.vocab).tokens == (CLS, UNK)
    held = next(i for i in reviews.splits["held_out"].tolist() if set(reviews.texts[i]) & unseen)
    row = reviews.ids[held]
    text = reviews.texts[held]
    assert all(int(row[1 + k]) == reviews.vocab.index(UNK) for k, c in enumerate(text) if c in unseen)


def test_the_example_sentences_are_of_both_kinds_and_none_is_a_bundled_review():
    texts = {text for _, _, text in _rows()}
    assert {kind for kind, _ in REVIEW_EXAMPLES} == set(LABELS)
    for _, sentence in REVIEW_EXAMPLES:
        assert not any(sentence in text for text in texts)


def test_a_sentence_is_read_as_characters_cut_to_the_length_with_what_was_left_out_counted():
    vocab = load_reviews().vocab
    assert read_review("", vocab) is None and read_review(" \n ", vocab) is None
    reading = read_review("质量 太差", vocab)
    assert reading.tokens == (CLS, "质", "量", "太", "差") and reading.cut == 0 and reading.chinese == 4
    long = read_review("好" * (LENGTH + 7), vocab)
    assert len(long.tokens) == 1 + LENGTH and long.cut == 7
    english = read_review("ok ☃☃", vocab)
    assert english.chinese == 0 and english.unknown == 2 and english.tokens[-1] == UNK


# ---------------------------------------------------------------- the model
def test_the_encoder_counts_its_parameters_ignores_pad_and_computes_cls_alone_when_training():
    task = make_task("reviews")
    model = build_reviews_model(len(task.vocab), task.length, 16, 2, 2, 2, torch.Generator().manual_seed(0))
    parts = reviews_model_parameters(len(task.vocab), task.length, 16, 2, 2, 2)
    assert parts["total"] == sum(p.numel() for p in model.parameters())
    ids = task.inputs(torch.tensor([0, 1, 2, 3]))  # (4, L), [PAD] after short reviews
    assert bool((ids == 0).any())
    with torch.no_grad():
        full, weights = model(ids)
        assert torch.allclose(model.logits(ids), full, atol=1e-6)
        pads = (ids == 0)[:, None, None, :].expand_as(weights[0])  # (B, H, L, L)
        assert float(weights[0][pads].abs().max()) == 0.0
        one = ids[0][ids[0] != 0]  # the first review alone, no [PAD]
        alone, _ = model(one.view(1, -1))
        assert torch.allclose(alone[0], full[0], atol=1e-5)
        change = torch.zeros(3, one.numel(), 16)
        assert torch.allclose(
            model.changed_logits(one.view(1, -1), None, 1, change, 0)[0, 0], alone[0, 0, 0], atol=1e-5
        )


def test_the_logits_are_the_readout_of_cls_after_every_block_computed_here_step_by_step():
    """Pre-Norm blocks composed here from the model's parts, [PAD] keys blocked here, the readout of position 0."""
    task = make_task("reviews")
    model = build_reviews_model(len(task.vocab), task.length, 16, 2, 2, 2, torch.Generator().manual_seed(1)).double()
    ids = task.inputs(torch.tensor([5, 6, 7]))  # (3, L), [PAD] after short reviews
    assert bool((ids == task.vocab.index(PAD)).any())
    keep = (ids != task.vocab.index(PAD))[:, None, None, :]  # (B, 1, 1, L)
    with torch.no_grad():
        x = model.token_embedding.weight[ids] + model.position_embedding[:, : ids.size(1)]  # (B, L, D)
        for block in model.blocks:
            h = torch.nn.functional.layer_norm(x, (16,), block.norm_1.weight, block.norm_1.bias, block.norm_1.eps)
            x = x + block.attention(h, h, h, keep)[0]
            h = torch.nn.functional.layer_norm(x, (16,), block.norm_2.weight, block.norm_2.bias, block.norm_2.eps)
            x = x + block.mlp(h)
        cls = torch.nn.functional.layer_norm(x[:, 0], (16,), model.norm.weight, model.norm.bias, model.norm.eps)
        expected = cls @ model.readout.weight.T + model.readout.bias  # (B, K)
        assert torch.allclose(model(ids)[0].view(3, 2), expected, atol=1e-10)
        assert torch.allclose(model.logits(ids).view(3, 2), expected, atol=1e-10)


@pytest.mark.parametrize("layer", [0, 1])
def test_the_rows_marked_as_scored_are_those_the_answer_depends_on(layer):
    """A row reaches the answer exactly when the logits' gradient with respect to that row of the layer's attention
    output is not zero: in the last layer [CLS]'s alone, in the first every row but a [PAD]'s."""
    task = dataclasses.replace(make_task("reviews"), layers=2)  # a last layer and an earlier one (the page has one)
    model = build_reviews_model(len(task.vocab), task.length, 16, 2, 2, 2, torch.Generator().manual_seed(2)).double()
    index = next(i for i in load_reviews().splits["train"].tolist() if len(load_reviews().texts[i]) < LENGTH - 5)
    ids = task.inputs(torch.tensor(index))  # (L,), [PAD] at the end
    change = torch.zeros(1, ids.numel(), 16, dtype=torch.float64, requires_grad=True)
    with torch.enable_grad():
        model.changed_logits(ids.view(1, -1), None, layer, change, 0).sum().backward()
    reaches = change.grad[0].abs().sum(dim=-1) > 0  # (L,)
    assert torch.equal(task.scored_rows(torch.tensor([index]), layer)[0], reaches)
    assert torch.equal(task.scored_rows(ids.view(1, -1), layer)[0], reaches)
    assert int(reaches.sum()) == (1 if layer == 1 else len(load_reviews().texts[index]) + 1)


TRAINING_DRAWS = 200  # batches drawn straight from the sampler: 25,600 reviews, most of the 14,000 training ones


def _split_sets() -> dict[str, set[int]]:
    return {name: set(ids.tolist()) for name, ids in load_reviews().splits.items()}


def test_the_sampler_draws_training_reviews_only_and_most_of_them():
    task, generator = make_task("reviews"), torch.Generator().manual_seed(0)
    drawn = torch.cat([task.sample(task.batch, generator) for _ in range(TRAINING_DRAWS)])  # (N,)
    assert drawn.numel() == TRAINING_DRAWS * task.batch
    splits, seen = _split_sets(), set(drawn.tolist())
    assert seen <= splits["train"], sorted(seen - splits["train"])[:10]
    assert len(seen) > 0.75 * len(splits["train"])  # the whole split, not a corner of it (1 - e^(-N/14,000) ≈ 84 %)


def test_every_review_a_training_step_reads_is_a_training_review(monkeypatch):
    """The ids whose labels reach a training step's loss (``targets``, before the evaluation starts) are all in the
    training split: none of the validation reviews (the recipe was chosen by them) or the held-out ones (the page's
    accuracy is measured on them)."""
    from mha.training.tasks import ReviewsTask

    steps, read, evaluating = 20, [], []
    targets, evaluation = ReviewsTask.targets, ReviewsTask.evaluation_sequences

    def reading(self, ids):
        if not evaluating:
            read.append(ids.clone())
        return targets(self, ids)

    def evaluation_starts(self, count, generator):
        evaluating.append(True)
        return evaluation(self, count, generator)

    monkeypatch.setattr(ReviewsTask, "targets", reading)
    monkeypatch.setattr(ReviewsTask, "evaluation_sequences", evaluation_starts)
    _, history = train("reviews", 16, 2, 0, max_steps=steps)
    assert history.steps == len(read) == steps and evaluating
    drawn, splits = set(torch.cat(read).tolist()), _split_sets()
    assert drawn <= splits["train"] and not drawn & (splits["validation"] | splits["held_out"])


@pytest.fixture(scope="module")
def trained():
    """The page's default sizes for trained weights, trained as the page trains them (about 10-25 s)."""
    return train("reviews", 64, 2, 0)


def test_the_held_out_accuracy_is_measured_on_reviews_no_step_trained_on(trained):
    model, history = trained
    reviews = load_reviews()
    held = reviews.splits["held_out"]
    with torch.no_grad():
        logits, _ = model(reviews.ids[held])  # (N, 1, 1, 2)
    accuracy = float((logits.view(-1, 2).argmax(dim=1) == reviews.labels[held]).float().mean())
    assert accuracy == pytest.approx(history.accuracy) and accuracy >= HELD_OUT_MIN
    assert history.evaluation == "held_out_reviews" and history.sequences == held.numel() == 1000


@pytest.mark.parametrize(("kind", "sentence"), REVIEW_EXAMPLES)
def test_the_trained_model_reads_clear_sentences_right(trained, kind, sentence):
    model, _ = trained
    ids = read_review(sentence, load_reviews().vocab).ids
    with torch.no_grad():
        logits, _ = model(ids.view(1, -1))
    assert LABELS[int(logits.view(-1).argmax())] == kind


# ---------------------------------------------------------------- the page
def open_page(params: dict[str, str], lang: str = "en") -> AppTest:
    """The page for ``params`` once the model is trained (a short training: ``short_trainings``)."""
    training_service().result(trained_spec(16, 2, 0, task="reviews"), timeout=120)
    at = AppTest.from_file(SCRIPT, default_timeout=120)
    for key, value in {**params, "lang": lang}.items():
        at.query_params[key] = value
    return at.run()


def _infos(at: AppTest) -> list[str]:
    return [i.value for i in at.info]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_reads_the_sentence_and_says_how(short_trainings, lang):
    at = open_page({**LINK, "tokens": "质量太差了，很失望"}, lang)
    assert not at.exception and not at.error
    infos = "\n".join(_infos(at))
    assert len([k for k in LABELS if f"**{t(f'training.class.{k}', lang=lang)}**" in infos]) == 1
    config = AttentionConfig(**{**LINK, "d_model": 16, "num_heads": 2, "tokens": "质量太差了，很失望"})
    source = make_source(config.weight_spec)
    ids, _ = source.sequence(config)
    with torch.no_grad():
        probabilities = source.trained.model(ids.view(1, -1))[0].view(-1).softmax(dim=0)
    label = LABELS[int(probabilities.argmax())]
    assert t(f"notes.trained_review_{label}", lang=lang, percent=f"{100 * float(probabilities.max()):.0f}") in _infos(
        at
    )
    assert "review_example_0" in [b.key for b in at.button]
    shown = [(key, text) for key, text in shown_texts(at) if key != "lang" and "example_" not in key]
    tokens = user_tokens(at)
    if lang == "zh":
        leftovers = [(key, text[:80], words) for key, text in shown if (words := leftover_english(text, tokens))]
        assert not leftovers, leftovers
    else:
        chinese = [(key, text[:80]) for key, text in shown if HAN.search(re.sub("|".join(tokens), "", text))]
        assert not chinese, chinese


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("！！！。。。", "trained_review_not_chinese"),
        ("great product, love it", "trained_review_not_chinese"),
        ("好" * (LENGTH + 12), "trained_review_cut"),
        ("差" * 300, "trained_review_cut"),  # over the link's token cap: cut there, then to the model's length
    ],
)
def test_bad_sentences_get_a_clear_reading_with_a_note(short_trainings, text, note):
    at = open_page({**LINK, "tokens": text})
    assert not at.exception and not at.error
    infos = "\n".join(_infos(at))
    assert len([k for k in LABELS if f"**{t(f'training.class.{k}')}**" in infos]) == 1  # a reading all the same
    if note == "trained_review_cut":
        total = min(len(text), LIMITS.tokens_max)  # a link's text is cut to the token cap first, with a warning
        assert t(f"notes.{note}", total=total, high=LENGTH, count=total - LENGTH) in _infos(at)
    else:
        assert t(f"notes.{note}") in _infos(at)


def _verdicts(at: AppTest, lang: str = "en") -> int:
    infos = "\n".join(_infos(at))
    return len([k for k in LABELS if f"**{t(f'training.class.{k}', lang=lang)}**" in infos])


@pytest.mark.parametrize("text", ["", "！！！", "hello world", "差" * 300, "好 " * 70])
def test_bad_sentences_typed_in_the_box_get_a_message_or_a_reading(short_trainings, text):
    at = open_page(LINK)
    at.text_area(key="tokens").set_value(text).run()
    assert not at.exception
    if not text.strip():
        assert t("error.tokens.empty") in [e.value for e in at.error]
        return
    assert not at.error and _verdicts(at) == 1
    characters = len("".join(text.split()))
    assert t("controls.review_count", count=characters, length=LENGTH) in [c.value for c in at.caption]
    if characters > LENGTH:
        assert t("notes.trained_review_cut", total=characters, high=LENGTH, count=characters - LENGTH) in _infos(at)
    if text.isascii():
        assert t("notes.trained_review_not_chinese") in _infos(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_example_buttons_of_both_kinds_put_their_sentence_in_and_it_is_read(short_trainings, lang):
    at = open_page(LINK, lang)
    labels = [b.label for b in at.button if b.key and b.key.startswith("review_example_")]
    assert labels == [t(f"reviews.example.{kind}", lang=lang, text=text) for kind, text in REVIEW_EXAMPLES]
    if lang == "zh":  # AppTest reads a translated select box's value back in English on a click: labels only
        return
    for number, (_, sentence) in enumerate(REVIEW_EXAMPLES):
        at.button(key=f"review_example_{number}").click().run()
        assert not at.exception and not at.error
        assert at.text_area(key="tokens").value == sentence
        assert _verdicts(at, lang) == 1
        assert t("controls.review_count", lang=lang, count=len(sentence), length=LENGTH) in [
            c.value for c in at.caption
        ]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_note_says_which_rows_reach_the_answer_in_the_layer_shown(short_trainings, lang):
    """The page's encoder has one block: the layer shown is the last, where [CLS]'s row alone reaches the answer."""
    at = open_page({**LINK, "tokens": "质量太差了，很失望"}, lang)
    assert not at.exception and not at.error
    assert make_task("reviews").layers == 1 and not [w for w in at.number_input if w.key == "layer"]
    assert t("notes.trained_review_last_layer", lang=lang) in _infos(at)
    assert t("notes.trained_review_earlier_layer", lang=lang, last=1) not in _infos(at)


@pytest.mark.parametrize(
    ("layers", "layer", "note"), [(1, 0, "last"), (2, 1, "last"), (2, 0, "earlier"), (3, 1, "earlier")]
)
def test_the_rows_note_names_the_last_layer_only_there(layers, layer, note):
    from types import SimpleNamespace

    from mha.sources.trained import TrainedSource

    shown = TrainedSource._review_rows(SimpleNamespace(num_layers=layers), layer)
    assert shown.code == f"trained_review_{note}_layer"
    assert dict(shown.params) == ({} if note == "last" else {"last": layers - 1})


def test_an_empty_sentence_gets_a_message_not_an_error(short_trainings):
    at = open_page({**LINK, "tokens": "   "})
    assert not at.exception
    assert t("error.tokens.empty") in [e.value for e in at.error]


def test_lab_11_measures_the_reviews_prediction_at_cls(short_trainings):
    """Each key's drop of the predicted class's probability against the trained model rerun here, whole, with that
    key masked for [CLS] in the shown layer (a pre-hook swaps that layer's mask)."""
    choices = {"weights": "trained", "task": "reviews", "d_model": 16, "num_heads": 2, "tokens": "质量太差了，很失望"}
    at = AppTest.from_file(str(REPO / "pages" / "11_attribution.py"), default_timeout=300)
    at.query_params["lang"] = "en"
    for key, value in choices.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["attribution_query"] == 0  # [CLS]: where the answer is read
    config = AttentionConfig(**choices)
    source = make_source(config.weight_spec)
    run = run_attention(config, source)
    ids, _ = source.sequence(config)
    said = [m.value for m in at.markdown if m.value.startswith(t("lab.attribution.prediction_cls").split("{said}")[0])]
    assert said and any(t(f"training.class.{k}") in said[0] for k in LABELS)
    model = copy.deepcopy(source.trained.model).cpu().double().eval()  # the float64 reference, on the CPU
    ids, mask = ids.cpu(), None if run.mask is None else run.mask.cpu()
    length = ids.numel()

    def probabilities(layer_mask: torch.Tensor | None) -> torch.Tensor:
        handle = model.layers[run.layer].register_forward_pre_hook(lambda _m, args: (*args[:3], layer_mask))
        try:
            with torch.inference_mode():
                return torch.softmax(model(ids.view(1, -1))[0].view(-1), dim=0)  # (K,) at [CLS]
        finally:
            handle.remove()

    base = probabilities(None)
    predicted = int(base.argmax())
    deltas = ablation_deltas(run.model, run.x, run.mask, 0, None, "mask").cpu()  # on the run's device
    effects = prediction_effects(source.model(torch.device("cpu"), "float32"), ids, mask, run.layer, 0, deltas, (0,))
    assert int(effects.predicted[0]) == predicted
    for key in range(length):
        keep = torch.ones(1, run.model.num_heads, length, length, dtype=torch.bool)
        keep[:, :, 0, key] = False
        drop = float(base[predicted] - probabilities(keep)[predicted])
        assert float(effects.drops[key, 0]) == pytest.approx(drop, abs=1e-4)


@pytest.mark.parametrize(
    ("accuracy", "kind", "reviews"),
    [
        (0.817, "same", 5),  # the page's sizes, seed 0 (docs/PERFORMANCE.md): below the bag, within a seed's change
        (0.832, "same", 10),
        (0.833, "above", 11),
        (0.900, "above", 78),
        (0.811, "below", 11),
        (0.600, "below", 222),
    ],
)
def test_the_model_is_set_against_the_bag_in_words_chosen_from_the_two_accuracies(accuracy, kind, reviews):
    from types import SimpleNamespace

    from components.panels.training_box import SEED_SPREAD, versus_baseline

    assert BASELINE_HELD_OUT == 0.822 and SEED_SPREAD == 1.0  # the numbers the cases above are worked from
    numbers = {"accuracy": f"{100 * accuracy:.1f}", "baseline": "82.2", "reviews": f"{reviews:,}", "sequences": "1,000"}
    said = versus_baseline(SimpleNamespace(accuracy=accuracy, sequences=1000), BASELINE_HELD_OUT)
    assert said == t(f"training.versus_bag_{kind}", **numbers)
    assert ("not better" in said) == (kind == "same") and ("adds over counting" in said) == (kind == "above")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_introduces_the_bag_as_a_yardstick_and_says_how_the_model_compares(short_trainings, lang):
    at = open_page({**LINK, "tokens": "质量太差了，很失望"}, lang)
    assert not at.exception and not at.error
    captions = [c.value for c in at.caption]
    baseline = f"{100 * BASELINE_HELD_OUT:.1f}"
    assert t("training.model_reviews_baseline", lang=lang, baseline=baseline) in captions
    history = training_service().result(trained_spec(16, 2, 0, task="reviews"), timeout=120).history
    right, bag = round(history.accuracy * history.sequences), round(BASELINE_HELD_OUT * history.sequences)
    kind = "same" if abs(right - bag) <= 10 else "above" if right > bag else "below"
    numbers = {"accuracy": f"{100 * history.accuracy:.1f}", "baseline": baseline, "sequences": "1,000"}
    said = t(f"training.versus_bag_{kind}", lang=lang, reviews=f"{abs(right - bag):,}", **numbers)
    assert said in captions, (said, captions)
    if lang == "en" and kind != "above":
        assert not [c for c in captions if "attention adds" in c or "adds over counting" in c], captions


def test_the_link_asks_for_the_reviews_and_round_trips():
    raw = {"weights": "trained", "task": "reviews", "tokens": "质量太差了，很失望"}
    parsed = parse_query_params(raw)
    assert parsed.problems == [] and parsed.values == raw
    assert parse_query_params(to_query_params(parsed.values)).values == raw
    assert parse_query_params({"task": "review"}).problems[0].field == "task"


@pytest.mark.slow
def test_the_bag_of_characters_reaches_what_the_page_says():
    assert bag_of_characters(load_reviews()).held_out == pytest.approx(BASELINE_HELD_OUT, abs=0.0005)
