"""The trained weight source: a model trained here on a small task, shown one attention layer at a time.

The tokens are the learner's own when they form a sequence of the task (``3 1 4 1 5 9 2 6``),
else the sample sequence the training timeline shows, with a note saying what the task
reads. The shown layer's input is what the model computes before it on those tokens, with
the learner's mask; the relations are the task's own (``last digit``, ``induction``,
``shuffled position``) and the scored rows those the training loss looked at.

An image task (``digits``) reads an image instead: ``config.image`` (a bundled sample) or, through
:meth:`TrainedSource.prepare_image`, any image (an upload), made to look like the digits; the
tokens are [CLS] and the patches, and the shown layer's input is what its LayerNorm gives it.

The ``reviews`` task reads the learner's sentence as characters after [CLS] (whatever the tokenizer; cut to its
length, unknown characters as [UNK], each with a note), and says how the model reads it: positive or negative and
the probability, from the model's own forward on it.
"""

from __future__ import annotations

import copy

import torch
from torch import Tensor

from mha.config import TRAINED, AttentionConfig, ConfigError, WeightSpec
from mha.experiments.attribution import PredictionEffects, prediction_effects
from mha.masks import build_mask
from mha.sources.base import ImageAttention, Note, SourceInputs
from mha.text.reviews import LENGTH, read_review
from mha.training.model import Model
from mha.training.service import TrainedModel, training_service
from mha.training.tasks import Task, make_task
from mha.vision.images import as_digit
from mha.vision.patches import PatchedImage
from mha.vision.samples import sample_image, sample_label

__all__ = ["TrainedSource"]

#: A learner's sequence for these tasks is a row of digits and letters; unscramble reads the sentence itself.
_EXAMPLES = {"induction": "a b c d x y a b c"}
_DEFAULT_EXAMPLE = "3 1 4 1 5 9 2 6"


class TrainedSource:
    """A finished training (see :mod:`mha.training.service`) as a weight source.

    Args:
        trained: the finished model and its history; never changed (shared by every session).
    """

    kind = TRAINED

    def __init__(self, trained: TrainedModel) -> None:
        spec = trained.spec
        if spec.task is None or spec.d_model is None or spec.num_heads is None:
            raise ValueError(f"a trained-weight spec needs task, d_model and num_heads, got {spec}")
        self.trained = trained
        self.task: Task = make_task(spec.task, spec.text, spec.patch or 2)
        self.d_model, self.num_heads = spec.d_model, spec.num_heads
        self.num_layers = self.task.layers
        self._models: dict[tuple[str, str], Model] = {}

    @classmethod
    def from_spec(cls, spec: WeightSpec) -> TrainedSource:
        """The source for ``spec``, training it first unless this process already has it (blocks meanwhile)."""
        return cls(training_service().result(spec))

    def model(self, device: torch.device, dtype: str) -> Model:
        """The trained model on ``device`` in ``dtype`` (a copy made on first use, then shared)."""
        key = (str(device), dtype)
        if key not in self._models:  # a race makes the same copy twice: harmless
            self._models[key] = copy.deepcopy(self.trained.model).to(device=device, dtype=getattr(torch, dtype))
        return self._models[key]

    def sequence(self, config: AttentionConfig) -> tuple[Tensor, tuple[Note, ...]]:
        """The ids (L,) to show: the learner's tokens when the task reads them, else the sample, with notes."""
        task = self.task
        if task.reads_characters:
            return self._review(config)
        if task.name == "unscramble":
            return self.trained.history.probe, (Note("trained_unscramble", {"words": len(task.vocab) - 1}),)
        ids = task.read_text(config.tokens, config.tokenizer)
        if ids is None:
            example = _EXAMPLES.get(task.name, _DEFAULT_EXAMPLE)
            note = Note("trained_sample", {"low": task.min_length, "high": task.length, "example": example})
            return self.trained.history.probe, (note,)
        if task.name == "induction" and not bool(task.relations(ids, 1)["induction"].any()):
            return ids, (Note("trained_no_repeat"),)
        return ids, ()

    def _review(self, config: AttentionConfig) -> tuple[Tensor, tuple[Note, ...]]:
        """The reviews task's ids (L,): the learner's sentence as characters, with notes on what was cut or unknown
        (no character at all: the timeline's review)."""
        reading = read_review(config.tokens, self.task.vocab)
        if reading is None:
            probe = self.task.inputs(self.trained.history.probe.view(1))[0]  # (L,): [CLS], the characters, [PAD]
            return probe[probe != self.task.vocab.index("[PAD]")], (Note("trained_review_sample"),)
        read = reading.ids.numel() - 1
        notes: tuple[Note, ...] = ()
        if reading.cut:
            notes += (Note("trained_review_cut", {"total": read + reading.cut, "high": LENGTH, "count": reading.cut}),)
        if reading.chinese == 0:
            notes += (Note("trained_review_not_chinese"),)
        if reading.unknown:
            notes += (Note("trained_review_unknown", {"count": reading.unknown, "total": read}),)
        return reading.ids, notes

    def _review_rows(self, layer: int) -> Note:
        """Which rows of the shown layer reach the reviews' answer: [CLS]'s alone in the last layer, every
        character's in an earlier one (through the layers after it)."""
        last = self.num_layers - 1
        if layer == last:
            return Note("trained_review_last_layer")
        return Note("trained_review_earlier_layer", {"last": last})

    def prepare(self, config: AttentionConfig, device: torch.device) -> SourceInputs:
        """The task's tokens, the input of layer ``config.layer`` on them, and that layer.

        An image task reads the bundled sample ``config.image`` (see :meth:`prepare_image`).
        """
        self._check_layer(config)
        if self.task.reads_image:
            return self.prepare_image(config, device, sample_image(config.image), sample_label(config.image))
        return self._prepare_text(config, device)

    def prepare_image(
        self, config: AttentionConfig, device: torch.device, image: Tensor, label: int | None = None
    ) -> SourceInputs:
        """An image task's run on ``image``: [CLS] and the patches, layer ``config.layer``'s input, that layer.

        Args:
            config: the page's config (``image`` is not read: ``image`` is given).
            image: (C, H, W) in [0, 1], any size (a bundled sample, an upload); made into the digits'
                grey 8 × 8 by :func:`~mha.vision.images.as_digit`.
            label: the digit it shows, when known (a bundled digit): the note says whether the model agrees.

        Returns:
            :class:`SourceInputs` whose ``x`` (1, L, D) is the shown block's LayerNorm output (Pre-Norm), with the
            8 × 8 image the model read and every layer's weights on it (:class:`ImageAttention`).

        Raises:
            ValueError: a text task's source.
        """
        if not self.task.reads_image:
            raise ValueError(f"task {self.task.name} reads no image")
        self._check_layer(config)
        digit = as_digit(image)  # (1, 8, 8)
        pixels = digit.unsqueeze(0).to(device=device, dtype=getattr(torch, config.dtype))  # (1, 1, 8, 8)
        tokens = self.task.tokens(torch.zeros(1, device="cpu"))
        model = self.model(device, config.dtype)
        mask = build_mask(config.mask_type, tokens, window=config.window, device=device)
        with torch.inference_mode():
            xs, weights = model.layer_inputs(pixels, mask)  # (1, L, D) per layer, then the readout's input
            probabilities = model.probabilities(xs[-1])[0]  # [CLS]'s (K,)
        predicted = int(probabilities.argmax())
        share = f"{100 * float(probabilities[predicted]):.0f}"
        if label is None:
            notes: tuple[Note, ...] = (Note("trained_image", {"predicted": predicted, "percent": share}),)
        else:
            notes = (Note("trained_digit", {"label": label, "predicted": predicted, "percent": share}),)
        if config.mask_type != "none":
            notes += (Note("trained_mask_none"),)
        one = torch.zeros(
            1, dtype=torch.long, device="cpu"
        )  # one image: the rows a loss looks at do not depend on which
        rows = tuple(self.task.scored_rows(one, layer)[0].to(device) for layer in range(self.num_layers))  # (L,) each
        return SourceInputs(
            tokens=tokens,
            x=xs[config.layer],
            model=model.layers[config.layer],
            layer=config.layer,
            scored_rows=rows[config.layer],
            notes=notes,
            image=ImageAttention(PatchedImage(digit.float().cpu(), self.task.patch), tuple(weights), rows),
        )

    def key_effects(
        self,
        config: AttentionConfig,
        mask: Tensor | None,
        query: int,
        deltas: Tensor,
        device: torch.device,
    ) -> PredictionEffects | None:
        """The model's answer that ``query``'s row of layer ``config.layer`` reaches, and what removing each key
        does to it (lab 11: :func:`~mha.experiments.attribution.prediction_effects`).

        Args:
            config: the page's config (its tokens, layer and number type).
            mask: the keep-mask the run's layers ran with, on ``device``.
            query: the query whose row the keys are removed from.
            deltas: (L, D) the change of that row of the layer's output for each removed key.
            device: the run's device.

        Returns:
            ``None`` where the task reads an image (its prediction is not run again on the patches here) or scores
            no answer that this row reaches (:meth:`~mha.training.tasks.Task.readouts_at`).
        """
        if self.task.reads_image:
            return None
        ids, _ = self.sequence(config)
        readouts = self.task.readouts_at(ids, query, config.layer)
        if not readouts:
            return None
        model = self.model(device, config.dtype)
        return prediction_effects(model, ids, mask, config.layer, query, deltas, readouts)

    def _check_layer(self, config: AttentionConfig) -> None:
        """Raise :class:`ConfigError` for a layer this task's model does not have."""
        if not 0 <= config.layer < self.num_layers:
            raise ConfigError(
                "layer",
                "out_of_range",
                f"layer must be from 0 to {self.num_layers - 1} for task {self.task.name}, got {config.layer}",
                value=config.layer,
                low=0,
                high=self.num_layers - 1,
            )

    def _prepare_text(self, config: AttentionConfig, device: torch.device) -> SourceInputs:
        """The learner's tokens (or the sample sequence), the shown layer's input on them, that layer."""
        ids, notes = self.sequence(config)
        tokens = self.task.tokens(ids)
        model = self.model(device, config.dtype)
        mask = build_mask(config.mask_type, tokens, window=config.window, device=device)
        with torch.inference_mode():
            xs, _ = model.layer_inputs(ids.unsqueeze(0).to(device), mask)  # (1, L, D) per layer
        if self.task.readout_classes is not None:  # the verdict first: the model's forward on the sentence, this mask
            with torch.inference_mode():
                probabilities = model.probabilities(xs[-1])[0]  # [CLS]'s (K,)
            label = self.task.readout_classes[int(probabilities.argmax())]
            percent = f"{100 * float(probabilities.max()):.0f}"
            notes = (Note(f"trained_review_{label}", {"percent": percent}), self._review_rows(config.layer), *notes)
        if self.task.mask != config.mask_type:  # "trained_mask_causal" or "trained_mask_none"
            notes += (Note(f"trained_mask_{self.task.mask}"),)
        relations = {name: cells.to(device) for name, cells in self.task.relations(ids, config.layer).items()}
        scored = self.task.scored_rows(ids.unsqueeze(0), config.layer)[0].to(device)  # (L,)
        return SourceInputs(
            tokens=tokens,
            x=xs[config.layer],
            model=model.layers[config.layer],
            layer=config.layer,
            relations=relations,
            scored_rows=scored,
            notes=notes,
        )
