"""The small tasks a model is trained on: deterministic data, targets, and the relations a head should learn.

Shape legend: B batch, L sequence length, R readouts (outputs per position).

Every task makes its sequences from a private ``torch.Generator`` handed in by the
caller (never the global RNG: the server is shared) and computes its targets from the
token ids alone, so a learner's own sequence gets targets by the same rule. A target
of :data:`IGNORE` means the loss does not look at that output; a query row whose
outputs are all ignored is arbitrary after training (the page greys it).

Tasks (values of ``AttentionConfig.task``):
    previous                 output at i is token i-1: one relation, every head learns the same
    previous_and_first       two outputs, token i-1 and token 0: two relations for two heads
    previous_and_last_digit  token i-1, and the most recent digit before i (causal): position + content
    induction                two layers: the token that followed the last earlier occurrence of token i
    unscramble               a sentence shuffled, then blanks to write it back: blank k points at word k
    digits                   an 8 × 8 handwritten digit cut into patches: its class, read from [CLS]
    reviews                  a Chinese review read character by character: positive or negative, read from [CLS]

The text tasks' ids are token ids, (B, L). The digits task's ids are images' indices into
scikit-learn's digits, (B,): the model reads the images themselves (:meth:`Task.inputs`), and
the accuracy is measured on held-out digits no step trained on (:meth:`Task.evaluation_sequences`). The reviews
task's ids are likewise indices into the bundled reviews (:mod:`mha.text.reviews`), (B,); the model reads their
characters' ids, (B, L).

What the accuracy is measured on (:attr:`Task.evaluation`): ``"fresh"`` sequences drawn like the
training ones from their own generator (each task above but unscramble has more than a billion
possible sequences, so almost surely none was trained on); ``"held_out"``: unscramble's orders set
aside before training (:meth:`Task.hold_out`), which no training batch contains; ``"every_order"``:
a two-word sentence has two orders and both are trained on; ``"held_out_images"``: the digits kept
out of training (:meth:`Task.evaluation_sequences`); ``"held_out_reviews"``: the reviews' held-out split, which
neither training nor the choice of the recipe saw (the validation split is what chose it).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch
from torch import Tensor

from mha.head_labels import HeadLabel, induction_relation, induction_sources, label_heads
from mha.masks import causal_mask
from mha.text.baseline import BASELINE_HELD_OUT
from mha.text.reviews import LABELS, LENGTH, PAD, load_reviews
from mha.tokens import tokenize
from mha.training.classifier import MLP_RATIO
from mha.training.digits_model import build_digits_model, digits_model_parameters
from mha.training.model import Model, build_task_model, task_model_parameters
from mha.training.reviews_model import build_reviews_model, reviews_model_parameters
from mha.vision.analysis import patch_head_labels
from mha.vision.patches import patch_tokens
from mha.vision.samples import (
    DEFAULT_IMAGE,
    DIGIT_LEVELS,
    DIGIT_PIXEL_MEAN,
    DIGIT_PIXEL_STD,
    DIGIT_SIZE,
    load_digits,
)

__all__ = [
    "DIGITS",
    "IGNORE",
    "SYMBOLS",
    "TASK_LAYERS",
    "TASK_MASKS",
    "DigitsTask",
    "Message",
    "PageWords",
    "Recipe",
    "ReviewsTask",
    "Task",
    "make_task",
    "reads_characters",
    "task_layers",
    "task_mask",
]

#: The symbols of the digit and letter tasks: one token each.
SYMBOLS = tuple("0123456789abcdefghijklmnopqrstuvwxyz")
DIGITS = frozenset("0123456789")
IGNORE = -100  # a target the loss skips (``F.cross_entropy``'s ignore_index)
#: Layers of a model trained on each task (the others have one). The digits' first layer lets the patches look at
#: each other before [CLS] reads them in the second (bench/vision.py: with one layer, about 94 % held out). The
#: reviews have one: [CLS] reads 96 characters at once (two blocks cost twice a step and did worse at 48 characters).
TASK_LAYERS = {"induction": 2, "digits": 2, "reviews": 1}
#: The mask a task trains with (the others train without one): induction predicts what comes next.
TASK_MASKS = {"induction": "causal"}
_DIGIT_SHARE = 0.3  # of the tokens of previous_and_last_digit's sequences
_EXAMPLE_DRAWS = 64  # sequences tried for one that shows the task's relations
BLANK = "_"  # unscramble's output slots: where the sentence is written back
#: Unscramble sets aside one order in HELD_OUT_SHARE (at most HELD_OUT_MAX) before training; a two-word
#: sentence (two orders) none.
HELD_OUT_SHARE = 4
HELD_OUT_MAX = 1024


def task_layers(name: str) -> int:
    """How many attention layers a model for task ``name`` has."""
    return TASK_LAYERS.get(name, 1)


def task_mask(name: str) -> str:
    """The mask task ``name`` trains with: ``"causal"`` or ``"none"``."""
    return TASK_MASKS.get(name, "none")


@dataclass(frozen=True)
class Recipe:
    """How a task is trained: AdamW's learning rate and weight decay, the warm-up, and when training ends.

    The learning rate rises linearly over ``warmup_steps``. Then either (``steps`` is ``None``) it stays until
    the accuracy target, after which training goes on for ``sharpen_steps`` more (with ``anneal``, the rate
    falling linearly to 0 meanwhile); or training takes ``steps`` steps whatever the accuracy (a fixed
    schedule), the rate falling from its top to 0 along a half cosine after the warm-up. ``dropout``: the share of
    the embeddings' entries zeroed in each training step (the reviews' encoder only). The defaults are the text
    tasks' (AdamW without weight decay is Adam).
    """

    learning_rate: float = 3e-3
    weight_decay: float = 0.0
    warmup_steps: int = 0
    sharpen_steps: int = 100
    anneal: bool = False
    steps: int | None = None
    dropout: float = 0.0


@dataclass(frozen=True)
class Message:
    """Words the page shows, as a message key of ``components/locale`` and its parameters (a parameter that is a
    :class:`Message` is translated first)."""

    key: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PageWords:
    """The message keys the training box and the timeline say a task with (``components/locale``)."""

    ask: str = "training.ask.sequence"  # before training: how long it takes (docs/PERFORMANCE.md's tables)
    schedule: str | None = None  # a fixed schedule's line after training (none: a target ends it)
    sample: str = "training.timeline_what"  # what the timeline's sample is
    difference: str = "training.difference"  # what the heads' difference over training shows


@dataclass(frozen=True)
class Task:
    """A task: its vocabulary, sequence length, training mask, readouts and rules, its model and what the page
    says of it.

    Subclasses define :meth:`sample` (random sequences) and :meth:`targets` (the rule);
    :meth:`relations` names the content patterns a head may learn beyond the positional ones. A task builds its
    model (:meth:`build_model`) and counts its parameters (:meth:`model_parameters`); the page and lab 11 ask it
    what its readout answers (:meth:`readouts_at`, :attr:`readout_classes`) and which words describe it.
    """

    #: The learner's sentence is read as characters, whatever the tokenizer (the reviews).
    reads_characters: ClassVar[bool] = False
    #: The one answer is read at [CLS] (the digits, the reviews): a query's row reaches it there or through a later
    #: layer.
    answer_at_cls: ClassVar[bool] = False
    #: The names of the classes the readout answers with where they are words (message ``training.class.<name>``);
    #: ``None``: it answers with the task's tokens (:attr:`vocab`).
    readout_classes: ClassVar[tuple[str, ...] | None] = None
    #: The held-out accuracy of the baseline the task's accuracy is compared with (``None``: none).
    baseline: ClassVar[float | None] = None
    #: The sequence tasks show an example's inputs and targets in a table (:meth:`example_text`).
    shows_targets: ClassVar[bool] = True
    page_words: ClassVar[PageWords] = PageWords()

    name: str
    vocab: tuple[str, ...]  # id -> token
    length: int  # L of the training sequences (also the most positions the model knows)
    outputs: tuple[str, ...]  # one readout per name
    classes: int  # classes of every readout
    mask: str = "none"  # the mask it trains with: "none" or "causal"
    layers: int = 1
    min_length: int = 2  # the shortest sequence of the learner's own that is taken
    batch: int = 128  # sequences per training step
    recipe: Recipe = field(default_factory=Recipe)

    @property
    def reads_image(self) -> bool:
        """Whether the model reads images (the ids index them), not token ids."""
        return False

    def sample(self, batch: int, generator: torch.Generator) -> Tensor:
        """``batch`` random sequences of ids, (B, L)."""
        raise NotImplementedError

    @property
    def evaluation(self) -> str:
        """What :meth:`evaluation_sequences` are: ``"fresh"``, ``"held_out"``, ``"every_order"``,
        ``"held_out_images"`` or ``"held_out_reviews"`` (module doc)."""
        return "fresh"

    def hold_out(self, generator: torch.Generator) -> Task:
        """This task with the sequences its evaluation keeps from training set aside (here none: ``"fresh"``)."""
        return self

    def evaluation_sequences(self, count: int, generator: torch.Generator) -> Tensor:
        """The sequences the reported accuracy is measured on, (N, L): here ``count`` fresh ones."""
        return self.sample(count, generator)

    def example(self, generator: torch.Generator) -> Tensor:
        """One sequence (L,) to show, drawn until it shows the task's relations apart from the positional ones."""
        for _ in range(_EXAMPLE_DRAWS):
            ids = self.sample(1, generator)[0]
            if self._shows_relations(ids):
                return ids
        return ids

    def _shows_relations(self, ids: Tensor) -> bool:
        """Whether each of the task's own relations points somewhere other than the previous token on 3+ rows."""
        length = ids.numel()
        previous = (
            torch.ones(length, length, dtype=torch.bool, device=ids.device).tril(-1).triu(-1)
        )  # (L, L): j == i - 1
        for cells in self.relations(ids, self.layers - 1).values():
            if int((cells & ~previous).any(dim=-1).sum()) < 3:
                return False
        return True

    def targets(self, ids: Tensor) -> Tensor:
        """(B, L) ids -> (B, R, L) targets, :data:`IGNORE` where an output has none."""
        raise NotImplementedError

    def inputs(self, ids: Tensor) -> Tensor:
        """What the model reads for ``ids``: the ids themselves (an image task: the images)."""
        return ids

    def relations(self, ids: Tensor, layer: int) -> dict[str, Tensor]:
        """The task's own relations on one sequence (L,) in ``layer``: name -> (L, L) bool key cells per row."""
        return {}

    def scored_rows(self, ids: Tensor, layer: int) -> Tensor:
        """(B, L) ids -> (B, L) bool: rows whose weights the loss depends on in ``layer``.

        In the last layer, the rows with a target; in an earlier layer every row (its output
        is read by every later query).
        """
        if layer < self.layers - 1:
            return torch.ones(ids.shape, dtype=torch.bool, device=ids.device)
        return (self.targets(ids) != IGNORE).any(dim=1)  # (B, R, L) -> (B, L)

    def parse(self, tokens: Sequence[str]) -> Tensor | None:
        """The learner's tokens as ids (L,), or ``None`` when they are not a sequence of this task."""
        if not self.min_length <= len(tokens) <= self.length:
            return None
        index = {symbol: i for i, symbol in enumerate(self.vocab)}
        lowered = [token.lower() for token in tokens]
        if not all(token in index for token in lowered):
            return None
        return torch.tensor([index[token] for token in lowered], device="cpu")  # data: on the CPU, moved where read

    def tokens(self, ids: Tensor) -> tuple[str, ...]:
        """(L,) ids -> the tokens shown on the page."""
        return tuple(self.vocab[i] for i in ids.tolist())

    def read_text(self, text: str, tokenizer: str) -> Tensor | None:
        """The learner's text as ids (L,): its tokens, or its characters when it has no spaces (``31415926``)."""
        tokens = tokenize(text, tokenizer)
        parsed = self.parse(tokens)
        if parsed is None and len(tokens) == 1:
            parsed = self.parse(list(tokens[0]))
        return parsed

    def training_mask(self, length: int, device: torch.device | str | None = None) -> Tensor | None:
        """The keep-mask the task trains with on ``length`` tokens, (1, 1, L, L), or ``None``."""
        return causal_mask(length, device=device) if self.mask == "causal" else None

    def build_model(
        self,
        d_model: int,
        num_heads: int,
        generator: torch.Generator,
        num_kv_heads: int | None = None,
        rope_base: float | None = None,
    ) -> Model:
        """The task's model, its parameters drawn from ``generator`` alone (here token embeddings and ``x + MHA(x)``
        layers, :func:`~mha.training.model.build_task_model`); ``num_kv_heads`` and ``rope_base`` go to every
        attention layer."""
        sizes = (len(self.vocab), self.length, d_model, num_heads, self.layers, len(self.outputs), self.classes)
        return build_task_model(*sizes, generator, num_kv_heads, rope_base)

    def model_parameters(
        self, d_model: int, num_heads: int, num_kv_heads: int | None = None, rope: bool = False
    ) -> dict[str, int]:
        """The model's parameters by part, counted by formula (:func:`~mha.training.model.task_model_parameters`)."""
        sizes = (len(self.vocab), self.length, d_model, num_heads, self.layers, len(self.outputs), self.classes)
        return task_model_parameters(*sizes, num_kv_heads, rope)

    def model_words(self, d_model: int, num_heads: int, num_kv_heads: int, rope: bool) -> Message:
        """The model's line under the task: its parts, sizes, parameter counts and recipe."""
        counts = self.model_parameters(d_model, num_heads, num_kv_heads, rope)
        positions = (
            Message("training.model_rope")
            if rope
            else Message("training.model_positions", {"length": self.length, "d": d_model})
        )
        return Message(
            "training.model",
            {
                "vocab": len(self.vocab),
                "positions": positions,
                "d": d_model,
                "layers": self.layers,
                "heads": _heads_words(num_heads, num_kv_heads),
                "attention": f"{counts['attention']:,}",
                "readouts": len(self.outputs),
                "classes": self.classes,
                "total": f"{counts['total']:,}",
                "lr": f"{self.recipe.learning_rate:g}",
                "batch": self.batch,
            },
        )

    def explanation(self) -> Message:
        """The task in words, above its model's line."""
        return Message(f"training.task.{self.name}")

    def result_numbers(self) -> dict[str, str | int]:
        """Numbers the line after training quotes beyond the history's (unscramble: its orders and words)."""
        return {}

    def readouts_at(self, ids: Tensor, query: int, layer: int) -> tuple[int, ...]:
        """The readouts whose answer a change of ``query``'s row in ``layer`` can reach on ``ids`` (L,) and that the
        task scores: here those with a target at ``query``."""
        targets = self.targets(ids.unsqueeze(0))[0, :, query]  # (R,)
        return tuple(r for r in range(targets.numel()) if int(targets[r]) != IGNORE)

    def head_labels(self, weights: Tensor, ids: Tensor, layer: int, mask: Tensor | None) -> tuple[HeadLabel, ...]:
        """Each head's label on ``ids`` in ``layer`` (weights (H, L, L)): the positional relations and the task's
        own, over the rows the loss looked at."""
        rows = self.scored_rows(ids.unsqueeze(0), layer)[0]
        return label_heads(weights, mask, self.relations(ids, layer), rows)

    def shows_cls_row_only(self, layer: int) -> bool:
        """Whether the timeline draws ``layer``'s [CLS] row alone (the one row its loss reads, where the whole
        matrix is too long to read)."""
        return False


def _heads_words(num_heads: int, num_kv_heads: int) -> Message:
    """The attention layers' heads: query heads (h) and key/value heads (h_kv)."""
    return Message("training.model_heads", {"heads": num_heads, "kv_heads": num_kv_heads})


def _uniform_symbols(batch: int, length: int, generator: torch.Generator) -> Tensor:
    return torch.randint(len(SYMBOLS), (batch, length), generator=generator, device="cpu")  # (B, L)


def _previous(ids: Tensor) -> Tensor:
    """(B, L) -> (B, L): token i-1 at i, IGNORE at 0."""
    out = torch.full_like(ids, IGNORE)
    out[:, 1:] = ids[:, :-1]
    return out


@dataclass(frozen=True)
class PreviousTask(Task):
    """Output at i is token i-1."""

    def sample(self, batch: int, generator: torch.Generator) -> Tensor:
        return _uniform_symbols(batch, self.length, generator)

    def targets(self, ids: Tensor) -> Tensor:
        return _previous(ids).unsqueeze(1)  # (B, 1, L)


@dataclass(frozen=True)
class PreviousAndFirstTask(Task):
    """Two outputs at i: token i-1 and token 0 (row 0 has neither: token 0 there is the token itself)."""

    def sample(self, batch: int, generator: torch.Generator) -> Tensor:
        return _uniform_symbols(batch, self.length, generator)

    def targets(self, ids: Tensor) -> Tensor:
        first = ids[:, :1].expand_as(ids).clone()  # (B, L)
        first[:, 0] = IGNORE
        return torch.stack([_previous(ids), first], dim=1)  # (B, 2, L)


def _last_digit_positions(ids: Tensor) -> Tensor:
    """(B, L) -> (B, L): the position of the most recent digit strictly before i, or -1."""
    is_digit = ids < len(DIGITS)  # SYMBOLS starts with the ten digits
    positions = torch.arange(ids.size(1), device=ids.device).expand_as(ids)  # (B, L)
    marked = torch.where(is_digit, positions, torch.full_like(positions, -1))  # (B, L)
    seen = torch.cummax(marked, dim=1).values  # (B, L): latest digit at or before i
    before = torch.full_like(seen, -1)
    before[:, 1:] = seen[:, :-1]  # strictly before i
    return before


@dataclass(frozen=True)
class PreviousAndLastDigitTask(Task):
    """Two outputs at i: token i-1, and the most recent digit before i (none: not scored)."""

    def sample(self, batch: int, generator: torch.Generator) -> Tensor:
        digit = torch.rand(batch, self.length, generator=generator, device="cpu") < _DIGIT_SHARE  # (B, L)
        digits = torch.randint(len(DIGITS), (batch, self.length), generator=generator, device="cpu")
        letters = torch.randint(len(DIGITS), len(SYMBOLS), (batch, self.length), generator=generator, device="cpu")
        return torch.where(digit, digits, letters)

    def targets(self, ids: Tensor) -> Tensor:
        where = _last_digit_positions(ids)  # (B, L)
        digit = torch.gather(ids, 1, where.clamp(min=0))  # (B, L)
        digit = torch.where(where >= 0, digit, torch.full_like(digit, IGNORE))
        return torch.stack([_previous(ids), digit], dim=1)  # (B, 2, L)

    def relations(self, ids: Tensor, layer: int) -> dict[str, Tensor]:
        where = _last_digit_positions(ids.unsqueeze(0))[0]  # (L,)
        keys = torch.arange(ids.numel(), device=ids.device)
        return {"last digit": (keys.view(1, -1) == where.view(-1, 1)) & (where.view(-1, 1) >= 0)}  # (L, L)


@dataclass(frozen=True)
class InductionTask(Task):
    """At i, the token that followed the most recent earlier occurrence of token i (none: not scored).

    Sequences: distinct tokens, one stretch of 2 to 6 of them repeated once at a random place,
    so the distance to the earlier copy varies and no fixed offset solves the task: a head in
    layer 1 must find "where was my token before" by content, reading what a layer-0 head
    copied from each position's previous token.
    """

    def sample(self, batch: int, generator: torch.Generator) -> Tensor:
        return self._sample(batch, generator, shortest=2)

    def example(self, generator: torch.Generator) -> Tensor:
        """A sequence whose repeated stretch is long (4 to 6 tokens): induction and previous token stay apart."""
        return self._sample(1, generator, shortest=4)[0]

    def _sample(self, batch: int, generator: torch.Generator, shortest: int) -> Tensor:
        distinct = torch.rand(batch, len(SYMBOLS), generator=generator, device="cpu").argsort(
            dim=1
        )  # (B, V): distinct tokens
        repeat = torch.randint(shortest, 7, (batch, 1), generator=generator, device="cpu")  # (B, 1): stretch length r
        start = (
            torch.rand(batch, 1, generator=generator, device="cpu") * (self.length - 2 * repeat + 1)
        ).long()  # (B, 1): s
        positions = torch.arange(self.length, device="cpu").expand(batch, -1)  # (B, L)
        # Positions before s + r read token p; the copy and what follows read p - r (the copy repeats s..s+r-1).
        source = torch.where(positions < start + repeat, positions, positions - repeat)  # (B, L)
        return torch.gather(distinct, 1, source)  # (B, L)

    def targets(self, ids: Tensor) -> Tensor:
        source = induction_sources(ids)  # (B, L)
        following = torch.gather(ids, 1, source.clamp(min=0))  # (B, L)
        return torch.where(source >= 0, following, torch.full_like(following, IGNORE)).unsqueeze(1)  # (B, 1, L)

    def relations(self, ids: Tensor, layer: int) -> dict[str, Tensor]:
        return {"induction": induction_relation(ids)}  # (L, L)


@dataclass(frozen=True)
class UnscrambleTask(Task):
    """The sentence's n words shuffled, then n blanks where it is written back; blank k points at word k.

    Ids ``0 .. n-1`` are the words' places in the sentence (a repeated word gets one id per
    place, so every pointer is unambiguous) and id ``n`` is the blank. The output at blank k
    is the position, in the shuffled half, of word k: the blank knows only its own position,
    so a head must learn "blank k looks for word k" and point there. The learner's own
    sentence is the task: :meth:`parse` takes no other input.

    A short sentence has few orders (7 words: 5,040) and training draws ten thousand shuffles and
    more, so fresh shuffles would be orders already trained on. :meth:`hold_out` sets aside
    ``min(n! // HELD_OUT_SHARE, HELD_OUT_MAX)`` orders that :meth:`sample` never draws, and the
    accuracy is measured on exactly those. Two words have two orders: none is set aside.
    """

    held_out: frozenset[tuple[int, ...]] = frozenset()  # orders no training batch contains

    @property
    def words(self) -> int:
        """n, the words of the sentence."""
        return len(self.vocab) - 1

    @property
    def orders(self) -> int:
        """n!, the orders of the sentence."""
        return math.factorial(self.words)

    @property
    def evaluation(self) -> str:
        return "held_out" if self.held_out else "every_order"

    def hold_out(self, generator: torch.Generator) -> UnscrambleTask:
        """This task with ``min(n! // HELD_OUT_SHARE, HELD_OUT_MAX)`` random orders set aside."""
        count = min(self.orders // HELD_OUT_SHARE, HELD_OUT_MAX)
        chosen: dict[tuple[int, ...], None] = {}  # in the order drawn
        while len(chosen) < count:
            for order in self._shuffles(count, generator).tolist():
                if len(chosen) < count:
                    chosen.setdefault(tuple(order), None)
        return dataclasses.replace(self, held_out=frozenset(chosen))

    def evaluation_sequences(self, count: int, generator: torch.Generator) -> Tensor:
        """The held-out orders (``count`` is not used), or every order when none is held out, with their blanks."""
        orders = sorted(self.held_out) if self.held_out else list(itertools.permutations(range(self.words)))
        return self._with_blanks(torch.tensor(orders, device="cpu"))

    def _shuffles(self, batch: int, generator: torch.Generator) -> Tensor:
        return torch.rand(batch, self.words, generator=generator, device="cpu").argsort(
            dim=1
        )  # (B, n): a permutation per row

    def _with_blanks(self, shuffled: Tensor) -> Tensor:
        blanks = torch.full_like(shuffled, self.words)  # (B, n)
        return torch.cat([shuffled, blanks], dim=1)  # (B, 2n)

    def sample(self, batch: int, generator: torch.Generator) -> Tensor:
        shuffled = self._shuffles(batch, generator)  # (B, n)
        while held := [i for i, order in enumerate(shuffled.tolist()) if tuple(order) in self.held_out]:
            shuffled[held] = self._shuffles(len(held), generator)  # drawn again: never a held-out order
        return self._with_blanks(shuffled)

    def targets(self, ids: Tensor) -> Tensor:
        where = ids[:, : self.words].argsort(dim=1)  # (B, n): where[k] = the shuffled position of word k
        out = torch.full_like(ids, IGNORE)
        out[:, self.words :] = where
        return out.unsqueeze(1)  # (B, 1, 2n)

    def relations(self, ids: Tensor, layer: int) -> dict[str, Tensor]:
        target = self.targets(ids.unsqueeze(0))[0, 0]  # (L,)
        keys = torch.arange(ids.numel(), device=ids.device)
        return {"shuffled position": (keys.view(1, -1) == target.view(-1, 1)) & (target.view(-1, 1) >= 0)}

    def result_numbers(self) -> dict[str, str | int]:
        """The sentence's orders and words (the accuracy is on orders set aside from them)."""
        return {"orders": f"{self.orders:,}", "words": self.words}

    def parse(self, tokens: Sequence[str]) -> Tensor | None:
        return None

    def read_text(self, text: str, tokenizer: str) -> Tensor | None:
        return None


@dataclass(frozen=True)
class ClassifierTask(Task):
    """A task whose model is the Pre-Norm classifier (:mod:`mha.training.classifier`): one answer, a class, read
    at [CLS]; ids index the task's data (B,), whose inputs the model reads (:meth:`Task.inputs`)."""

    answer_at_cls: ClassVar[bool] = True
    shows_targets: ClassVar[bool] = False

    def readouts_at(self, ids: Tensor, query: int, layer: int) -> tuple[int, ...]:
        """The one readout, read at [CLS]: reached by [CLS]'s row in the last layer, by any row in an earlier one."""
        return (0,) if query == 0 or layer < self.layers - 1 else ()

    def parse(self, tokens: Sequence[str]) -> Tensor | None:
        return None

    def read_text(self, text: str, tokenizer: str) -> Tensor | None:
        return None


#: How the digits train (``python -m bench --only vision`` measures it): a fixed schedule of 350 steps (the
#: held-out accuracy is what counts, not reaching a batch accuracy), 20 warm-up steps, weight decay against the
#: 1,433 training images' overfitting, and the learning rate annealed to 0 along a cosine.
DIGITS_RECIPE = Recipe(learning_rate=5e-3, weight_decay=0.1, warmup_steps=20, steps=350)


@dataclass(frozen=True)
class DigitsTask(ClassifierTask):
    """Which digit an 8 × 8 image shows; the model reads it cut into ``patch`` × ``patch`` patches.

    Ids are images' indices into :func:`~mha.vision.samples.load_digits`, (B,); the tokens are
    [CLS] and the patches (``length`` = (8 / patch)² + 1); the one output is read at [CLS]
    (targets (B, 1, 1)). Training draws from the fixed training split; the accuracy is measured
    on the held-out split. ``vocab`` holds the classes' names.
    """

    patch: int = 2

    page_words: ClassVar[PageWords] = PageWords(
        ask="training.ask.digits",
        schedule="training.fixed_schedule",
        sample="training.timeline_what_image",
        difference="training.difference_image",
    )

    @property
    def reads_image(self) -> bool:
        return True

    @property
    def grid(self) -> int:
        """Patches along each side of the image."""
        return DIGIT_SIZE // self.patch

    def sample(self, batch: int, generator: torch.Generator) -> Tensor:
        train = load_digits().train
        return train[torch.randint(train.numel(), (batch,), generator=generator, device="cpu")]  # (B,)

    def example(self, generator: torch.Generator) -> Tensor:
        """The index of the page's default image (``digit-3``), a 0-d tensor: the timeline shows it."""
        return torch.tensor(load_digits().sample_index(int(DEFAULT_IMAGE.removeprefix("digit-"))), device="cpu")

    def targets(self, ids: Tensor) -> Tensor:
        return load_digits().labels[ids].view(-1, 1, 1)  # (B,) -> (B, R=1, 1): the class, at [CLS]

    def inputs(self, ids: Tensor) -> Tensor:
        """(B,) indices -> (B, 1, 8, 8) images in [0, 1] (the 0..16 levels / 16)."""
        return load_digits().images[ids].float().unsqueeze(1) / DIGIT_LEVELS  # (B, 8, 8) -> (B, 1, 8, 8)

    @property
    def evaluation(self) -> str:
        return "held_out_images"

    def evaluation_sequences(self, count: int, generator: torch.Generator) -> Tensor:
        """The held-out images' indices, (N,) (``count`` is not used): no training step draws them."""
        return load_digits().held_out

    def scored_rows(self, ids: Tensor, layer: int) -> Tensor:
        """(B,) -> (B, L): in the last layer only [CLS]'s row reaches the loss; in an earlier one every row."""
        if layer < self.layers - 1:
            return torch.ones(ids.numel(), self.length, dtype=torch.bool, device=ids.device)
        rows = torch.zeros(ids.numel(), self.length, dtype=torch.bool, device=ids.device)  # (B, L)
        rows[:, 0] = True
        return rows

    def tokens(self, ids: Tensor) -> tuple[str, ...]:
        """[CLS] and the patches' grid cells (``r0c0`` ...), whatever the image."""
        return patch_tokens(self.grid, self.grid)

    def build_model(
        self,
        d_model: int,
        num_heads: int,
        generator: torch.Generator,
        num_kv_heads: int | None = None,
        rope_base: float | None = None,
    ) -> Model:
        """A small ViT over the digits' patches (:mod:`mha.training.digits_model`), standardising with the
        training images' pixel mean and deviation."""
        pixels = (DIGIT_PIXEL_MEAN, DIGIT_PIXEL_STD)
        sizes = (1, DIGIT_SIZE, self.patch, d_model, num_heads, self.layers, self.classes)
        return build_digits_model(*sizes, generator, pixels, num_kv_heads, rope_base)

    def model_parameters(
        self, d_model: int, num_heads: int, num_kv_heads: int | None = None, rope: bool = False
    ) -> dict[str, int]:
        sizes = (1, DIGIT_SIZE, self.patch, d_model, num_heads, self.layers, self.classes)
        return digits_model_parameters(*sizes, num_kv_heads, rope)

    def model_words(self, d_model: int, num_heads: int, num_kv_heads: int, rope: bool) -> Message:
        counts = self.model_parameters(d_model, num_heads, num_kv_heads, rope)
        recipe = self.recipe
        positions = (
            Message("training.model_digits_rope", {"tokens": self.length})
            if rope
            else Message(
                "training.model_digits_positions", {"tokens": self.length, "positions": f"{counts['positions']:,}"}
            )
        )
        return Message(
            "training.model_digits",
            {
                "pixels": self.patch * self.patch,
                "d": d_model,
                "embedding": f"{counts['patch_embedding']:,}",
                "positions": positions,
                "heads": _heads_words(num_heads, num_kv_heads),
                "layers": self.layers,
                "attention": f"{counts['attention']:,}",
                "hidden": MLP_RATIO * d_model,
                "total": f"{counts['total']:,}",
                "lr": f"{recipe.learning_rate:g}",
                "decay": f"{recipe.weight_decay:g}",
                "warmup": recipe.warmup_steps,
                "steps": recipe.steps,
                "batch": self.batch,
                "train": f"{load_digits().train.numel():,}",
            },
        )

    def explanation(self) -> Message:
        held_out = f"{load_digits().held_out.numel():,}"
        return Message("training.task.digits", {"patches": self.length - 1, "patch": self.patch, "held_out": held_out})

    def head_labels(self, weights: Tensor, ids: Tensor, layer: int, mask: Tensor | None) -> tuple[HeadLabel, ...]:
        """Each head's label among the patch grid's relations, not the sequence's."""
        rows = self.scored_rows(ids.unsqueeze(0), layer)[0]
        return patch_head_labels(weights, mask, rows, (self.grid, self.grid))


#: How the reviews train (chosen on the validation split, 96 characters, one block, seeds 0-2: 79.9 % mean without
#: dropout, 81.2 % with 0.1 on the embeddings; 500 steps did no better than dropout and cost more than 15 s; all
#: distinct texts for training (unbalanced) or no weight decay did no better): a fixed schedule of 300 steps of 128
#: reviews (under three passes over the 14,000 training reviews), 20 warm-up steps, the learning rate annealed to 0
#: along a cosine, weight decay 0.1, dropout 0.1 on the embeddings.
REVIEWS_RECIPE = Recipe(learning_rate=3e-3, weight_decay=0.1, warmup_steps=20, steps=300, dropout=0.1)


@dataclass(frozen=True)
class ReviewsTask(ClassifierTask):
    """Whether a Chinese review is positive or negative; the model reads its characters after [CLS].

    Ids are indices into :func:`~mha.text.reviews.load_reviews`, (B,); the model reads their characters' ids
    (:meth:`inputs`, (B, L), [PAD] after a short review); the one output is read at [CLS] (targets (B, 1, 1)).
    Training draws from the training split; the accuracy is measured on the held-out split. ``vocab`` holds the
    characters (the training split's vocabulary), ``outputs`` the one readout, class k is ``LABELS[k]``.
    A learner's sentence is read by :func:`~mha.text.reviews.read_review` (characters, whatever the tokenizer).
    """

    reads_characters: ClassVar[bool] = True
    readout_classes: ClassVar[tuple[str, ...] | None] = LABELS
    baseline: ClassVar[float | None] = BASELINE_HELD_OUT
    page_words: ClassVar[PageWords] = PageWords(
        ask="training.ask.reviews",
        schedule="training.fixed_schedule_reviews",
        sample="training.timeline_what_review",
        difference="training.difference_review",
    )

    def sample(self, batch: int, generator: torch.Generator) -> Tensor:
        train = load_reviews().splits["train"]
        return train[torch.randint(train.numel(), (batch,), generator=generator, device="cpu")]  # (B,)

    def example(self, generator: torch.Generator) -> Tensor:
        """The index of the review the timeline shows (a full-length validation review), a 0-d tensor."""
        return torch.tensor(load_reviews().example(), device="cpu")

    def targets(self, ids: Tensor) -> Tensor:
        return load_reviews().labels[ids].view(-1, 1, 1)  # (B,) -> (B, R=1, 1): the class, at [CLS]

    def inputs(self, ids: Tensor) -> Tensor:
        """(B,) indices -> (B, L) token ids: [CLS], the characters, [PAD]."""
        return load_reviews().ids[ids]

    @property
    def evaluation(self) -> str:
        return "held_out_reviews"

    def evaluation_sequences(self, count: int, generator: torch.Generator) -> Tensor:
        """The held-out reviews' indices, (N,) (``count`` is not used): no training step draws them."""
        return load_reviews().splits["held_out"]

    def validation_sequences(self) -> Tensor:
        """The validation reviews' indices, (N,): what the recipe was chosen by (the bench reports it)."""
        return load_reviews().splits["validation"]

    def scored_rows(self, ids: Tensor, layer: int) -> Tensor:
        """(B,) reviews' indices or (B, L) token ids -> (B, L): in the last layer only [CLS]'s row reaches the loss;
        in an earlier one every row but a [PAD]'s (no later query attends to a [PAD] key)."""
        tokens = self.inputs(ids.cpu()).to(ids.device) if ids.dim() == 1 else ids  # (B, L)
        if layer < self.layers - 1:
            return tokens != self.vocab.index(PAD)
        rows = torch.zeros(tokens.shape, dtype=torch.bool, device=ids.device)  # (B, L)
        rows[:, 0] = True
        return rows

    def tokens(self, ids: Tensor) -> tuple[str, ...]:
        """A review's index (0-d) -> its L tokens ([CLS], the characters, [PAD]); token ids (L,) -> their tokens."""
        ids = load_reviews().ids[int(ids)] if ids.dim() == 0 else ids
        return tuple(self.vocab[i] for i in ids.tolist())

    def build_model(
        self,
        d_model: int,
        num_heads: int,
        generator: torch.Generator,
        num_kv_heads: int | None = None,
        rope_base: float | None = None,
    ) -> Model:
        """A small Pre-Norm encoder over the characters (:mod:`mha.training.reviews_model`), [PAD] keys blocked."""
        sizes = (len(self.vocab), self.length, d_model, num_heads, self.layers, self.classes)
        return build_reviews_model(*sizes, generator, self.vocab.index(PAD), num_kv_heads, rope_base)

    def model_parameters(
        self, d_model: int, num_heads: int, num_kv_heads: int | None = None, rope: bool = False
    ) -> dict[str, int]:
        sizes = (len(self.vocab), self.length, d_model, num_heads, self.layers, self.classes)
        return reviews_model_parameters(*sizes, num_kv_heads, rope)

    def model_words(self, d_model: int, num_heads: int, num_kv_heads: int, rope: bool) -> Message:
        counts = self.model_parameters(d_model, num_heads, num_kv_heads, rope)
        recipe = self.recipe
        positions = (
            Message("training.model_rope")
            if rope
            else Message("training.model_reviews_positions", {"length": self.length, "d": d_model})
        )
        return Message(
            "training.model_reviews",
            {
                "vocab": f"{len(self.vocab):,}",
                "d": d_model,
                "positions": positions,
                "layers": self.layers,
                "heads": _heads_words(num_heads, num_kv_heads),
                "attention": f"{counts['attention']:,}",
                "hidden": MLP_RATIO * d_model,
                "total": f"{counts['total']:,}",
                "steps": recipe.steps,
                "lr": f"{recipe.learning_rate:g}",
                "warmup": recipe.warmup_steps,
                "decay": f"{recipe.weight_decay:g}",
                "batch": self.batch,
            },
        )

    def explanation(self) -> Message:
        sizes = {name: f"{ids.numel():,}" for name, ids in load_reviews().splits.items()}
        characters = f"{len(self.vocab) - 3:,}"  # without [PAD], [CLS] and [UNK]
        return Message("training.task.reviews", {"length": LENGTH, "vocab": characters, **sizes})

    def shows_cls_row_only(self, layer: int) -> bool:
        """In the last layer: only [CLS]'s row reaches the answer, and a review's whole matrix is too long to read."""
        return layer == self.layers - 1


#: Each task's class, by name.
TASK_CLASSES: dict[str, type[Task]] = {
    "previous": PreviousTask,
    "previous_and_first": PreviousAndFirstTask,
    "previous_and_last_digit": PreviousAndLastDigitTask,
    "induction": InductionTask,
    "unscramble": UnscrambleTask,
    "digits": DigitsTask,
    "reviews": ReviewsTask,
}


def reads_characters(name: str) -> bool:
    """Whether task ``name`` reads the learner's sentence as characters whatever the tokenizer (before a config
    validates: no task is made)."""
    return name in TASK_CLASSES and TASK_CLASSES[name].reads_characters


def make_task(name: str, text: str | None = None, patch: int = 2) -> Task:
    """The task ``name``; ``unscramble`` needs ``text``, its sentence's tokens joined by single spaces.

    ``patch`` is the digits' patch size (2 or 4: 16 or 4 patches).

    Raises:
        ValueError: an unknown name, unscramble without at least two words, or a patch that does not divide 8.
    """
    if name == "previous":
        return PreviousTask(name, SYMBOLS, 12, ("previous token",), len(SYMBOLS))
    if name == "previous_and_first":
        return PreviousAndFirstTask(name, SYMBOLS, 12, ("previous token", "first token"), len(SYMBOLS))
    if name == "previous_and_last_digit":
        return PreviousAndLastDigitTask(name, SYMBOLS, 12, ("previous token", "last digit"), len(SYMBOLS))
    if name == "induction":
        # Two layers cost twice a step: half the batch keeps it within seconds (it learns as fast per step).
        outputs = ("induction",)
        return InductionTask(name, SYMBOLS, 12, outputs, len(SYMBOLS), task_mask(name), task_layers(name), batch=64)
    if name == "unscramble":
        words = tuple(text.split(" ")) if text else ()
        if len(words) < 2:
            raise ValueError(f"unscramble needs a sentence of at least two tokens, got {text!r}")
        return UnscrambleTask(name, (*words, BLANK), 2 * len(words), ("shuffled position",), len(words))
    if name == "digits":
        if patch < 1 or DIGIT_SIZE % patch:
            raise ValueError(f"the digits' patch size must divide {DIGIT_SIZE}, got {patch}")
        classes = tuple(str(k) for k in range(10))
        length = (DIGIT_SIZE // patch) ** 2 + 1
        layers = task_layers(name)
        return DigitsTask(name, classes, length, ("digit",), 10, layers=layers, recipe=DIGITS_RECIPE, patch=patch)
    if name == "reviews":
        vocab = load_reviews().vocab
        return ReviewsTask(
            name, vocab, 1 + LENGTH, ("sentiment",), len(LABELS), layers=task_layers(name), recipe=REVIEWS_RECIPE
        )
    raise ValueError(f"unknown task {name!r}")
