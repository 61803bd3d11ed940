"""The pretrained source: what the pipeline, the check and the head finder ask of one checkpoint.

A :class:`PretrainedSource` names one checkpoint (listed, or the learner's own hub id); its model is
loaded on demand and shared (:func:`~mha.sources.checkpoint.loader.load_checkpoint`). Its six entry
points: :meth:`~PretrainedSource.prepare` (the page's run), :meth:`~PretrainedSource.prepare_image`
(a run on any image), :meth:`~PretrainedSource.attention_maps` and
:meth:`~PretrainedSource.induction_maps` (every head of every layer, for the head finder and the head
patterns), :meth:`~PretrainedSource.compare` (the check, :mod:`mha.sources.checkpoint.check`) and
:meth:`~PretrainedSource.generate` (a causal checkpoint's greedy generation, :mod:`.generation`).

A causal checkpoint runs every layer under its causal mask: the source says so
(``SourceInputs.causal``) and the pipeline runs the layer under the causal mask whatever the page's
mask (the learner's padding mask still blocks ``[PAD]`` keys on top). A checkpoint that reads images
(its family's ``modality`` is ``"image"``) reads no text: its tokens are its family's prefix tokens and
the patches of ``config.image`` (a bundled sample) or of an image given to
:meth:`~PretrainedSource.prepare_image` (an upload). Its attention is unmasked: a mask the learner picks
runs as a "what if", and the check then says it does not apply.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import torch
from torch import Tensor

from mha.checkpoints import checkpoint_names
from mha.config import LIMITS, PRETRAINED, AttentionConfig, ConfigError, WeightSpec
from mha.head_labels import induction_relation
from mha.head_patterns import RepeatedSequence, repeated_sequence
from mha.memory import CPU, megabytes
from mha.module import MultiHeadAttention
from mha.sources.base import IMAGE, SourceInputs
from mha.sources.checkpoint import check
from mha.sources.checkpoint.check import CheckpointCheck
from mha.sources.checkpoint.checkpoint_model import Checkpoint, Encoded
from mha.sources.checkpoint.generation import Generation, generate
from mha.sources.checkpoint.image import ImageCheckpoint
from mha.sources.checkpoint.loader import load_checkpoint
from mha.sources.checkpoint.notes import family_notes, layer_notes, layer_params, token_notes
from mha.sources.checkpoint.origin import origin_of
from mha.sources.checkpoint.text import TextCheckpoint
from mha.vision.samples import sample_image

__all__ = ["INDUCTION_HALF", "INDUCTION_SEED", "SEP", "PretrainedSource"]

SEP = "[SEP]"
INDUCTION_HALF = 50  # random tokens repeated once for the induction score (TransformerLens's 50)
INDUCTION_SEED = 0


class PretrainedSource:
    """One checkpoint (listed, or the learner's own hub id); its model is loaded on demand and shared
    (see :func:`~mha.sources.checkpoint.loader.load_checkpoint`).

    ``modality`` says what it reads: ``"text"`` (``config.tokens``) or ``"image"`` (``config.image``, a
    bundled sample, or any image given to :meth:`prepare_image`, :meth:`attention_maps` and :meth:`compare`).
    """

    kind = PRETRAINED

    def __init__(self, spec: WeightSpec) -> None:
        self.origin = origin_of(spec)
        self.name = self.origin.name
        checkpoint = load_checkpoint(self.origin)
        sizes = checkpoint.sizes
        self.d_model, self.num_heads, self.num_layers = sizes.d_model, sizes.num_heads, sizes.num_layers
        self.causal = checkpoint.family.causal
        self.modality = checkpoint.family.modality
        self.generates = checkpoint.generates  # it has a language-model head: :meth:`generate` works

    def _checkpoint(self) -> Checkpoint:
        return load_checkpoint(self.origin)

    def memory_size(self) -> dict[str, object]:
        """Its size for an out-of-memory message (:mod:`mha.memory`): its name, parameters and float32 megabytes."""
        parameters = self._checkpoint().parameters
        return {"checkpoint": self.name, "parameters": f"{parameters:,}", "megabytes": megabytes(parameters)}

    def forget_device(self, device: torch.device) -> None:
        """Drop the checkpoint's copy on ``device`` (it ran out of memory there): the memory goes back to the others."""
        self._checkpoint().forget_device(device)

    def _text_checkpoint(self) -> TextCheckpoint:
        checkpoint = self._checkpoint()
        if not isinstance(checkpoint, TextCheckpoint):
            raise ValueError(f"{self.name} reads images, not text")
        return checkpoint

    def _image_checkpoint(self) -> ImageCheckpoint:
        checkpoint = self._checkpoint()
        if not isinstance(checkpoint, ImageCheckpoint):
            raise ValueError(f"{self.name} reads text, not images")
        return checkpoint

    def _check_layer(self, layer: int) -> None:
        if not 0 <= layer < self.num_layers:
            high = self.num_layers - 1
            raise ConfigError(
                "layer",
                "out_of_range",
                f"{self.name} has layers 0 to {high}, got {layer}",
                value=layer,
                low=0,
                high=high,
            )

    def input_of(self, config: AttentionConfig) -> str:
        """What of ``config`` this checkpoint reads: its text, or (an image checkpoint) its bundled image's name."""
        return config.image if self.modality == IMAGE else config.tokens

    def _encode(self, source_input: str | Tensor) -> Encoded:
        """A text, or for an image checkpoint a bundled image's name or an image (C, H, W) in [0, 1], encoded."""
        if self.modality == IMAGE:
            image = sample_image(source_input) if isinstance(source_input, str) else source_input
            return self._image_checkpoint().encode(image)
        if not isinstance(source_input, str):
            raise ValueError(f"{self.name} reads text, not images")
        return self._text_checkpoint().encode(source_input)

    def prepare(self, config: AttentionConfig, device: torch.device) -> SourceInputs:
        """The tokenizer's tokens (an image checkpoint: ``config.image``'s patches), the layer's input for them and
        the layer copied into our module.

        Raises:
            ConfigError: a layer the checkpoint does not have, or a text with no token or too many.
        """
        if self.modality == IMAGE:
            return self.prepare_image(config, device, sample_image(config.image))
        self._check_layer(config.layer)
        checkpoint = self._text_checkpoint()
        encoded = checkpoint.encode(config.tokens)
        x = checkpoint.layer_input(encoded, config.layer, device).to(dtype=getattr(torch, config.dtype))  # (1, L, D)
        model = checkpoint.layer_model(config.layer, device, config.dtype)
        ids = encoded.inputs["input_ids"][0].to(device)  # (L,)
        relations = {}
        sep = checkpoint.tokenizer.sep_token_id
        if checkpoint.tokenizer.sep_token == SEP and sep in checkpoint.suffix:  # the tokenizer ends every text so
            relations[SEP] = (ids == sep).expand(ids.numel(), -1)  # (L, L): every row's [SEP] keys
        if checkpoint.family.causal:
            relations["induction"] = induction_relation(ids)  # (L, L): after the earlier copy of the row's token
        notes = token_notes(self.name, config.tokens, encoded.tokens, checkpoint_names())
        notes += family_notes(checkpoint.family, checkpoint.framed, encoded.tokens, layer_params(self.name, model))
        projections = checkpoint.family.projections(checkpoint.attention_block(config.layer))
        without_bias = tuple(ours for ours, (_, bias) in projections.items() if bias is None)
        notes += layer_notes(self.name, model, without_bias)
        return SourceInputs(
            encoded.tokens,
            x,
            model,
            layer=config.layer,
            relations=relations,
            notes=notes,
            causal=checkpoint.family.causal,
        )

    def prepare_image(self, config: AttentionConfig, device: torch.device, image: Tensor) -> SourceInputs:
        """An image checkpoint's run on ``image``: its family's prefix tokens (``[CLS]``; DeiT: and ``[DIST]``) and
        the patches, the layer's input for them and the layer copied into our module.

        Args:
            config: the page's config (its ``image`` is not read: ``image`` is given; ``tokens`` neither).
            image: (C, H, W) in [0, 1], grey or RGB, any size (a bundled sample, an upload): the checkpoint's own
                image processor resizes and normalises it.

        Returns:
            :class:`SourceInputs` whose ``x`` (1, L, D) is the layer's input as its family reads it (a ViT:
            ``layernorm_before``, Pre-Norm).

        Raises:
            ConfigError: a layer the checkpoint does not have.
            ValueError: the checkpoint reads text.
        """
        self._check_layer(config.layer)
        checkpoint = self._image_checkpoint()
        encoded = checkpoint.encode(image)
        x = checkpoint.layer_input(encoded, config.layer, device).to(dtype=getattr(torch, config.dtype))  # (1, L, D)
        model = checkpoint.layer_model(config.layer, device, config.dtype)
        height, width = encoded.inputs["pixel_values"].shape[-2:]  # (1, C, H, W)
        params = {
            "checkpoint": self.name,
            "size": f"{height} × {width}",
            "patch": checkpoint.patch,
            "grid": f"{height // checkpoint.patch} × {width // checkpoint.patch}",
        }
        notes = family_notes(checkpoint.family, False, encoded.tokens, params)
        return SourceInputs(encoded.tokens, x, model, layer=config.layer, notes=notes)

    def attention_maps(self, source_input: str | Tensor, device: torch.device = CPU) -> tuple[tuple[str, ...], Tensor]:
        """Every head's weights in every layer, from the checkpoint's own forward on ``device`` (the one forward our
        layer's input and the check read too: ``Checkpoint.full_forward``).

        Args:
            source_input: the text (a text checkpoint: see :meth:`input_of`), or for an image checkpoint a bundled
                image's name or an image (C, H, W) in [0, 1].
            device: where the forward runs (the run's device).

        Returns:
            The tokens and a float32 tensor (layers, H, L, L) on the CPU: the head finder's charts and scores read it.
        """
        encoded = self._encode(source_input)
        attentions = self._checkpoint().full_forward(encoded, device).attentions  # layers x (1, H, L, L)
        return encoded.tokens, torch.cat(attentions).cpu()  # (layers, H, L, L)

    def induction_maps(self, device: torch.device = CPU) -> tuple[RepeatedSequence, Tensor]:
        """Every head's weights in every layer on a repeated random sequence (seeded: the same every time), from the
        checkpoint's own forward on ``device``.

        The sequence is :data:`INDUCTION_HALF` distinct tokens drawn from the vocabulary (special
        tokens and bracketed markers left out), twice, after the tokenizer's own prefix or the
        family's BOS and before the tokenizer's suffix (fewer tokens where the checkpoint has fewer
        positions or words).

        Returns:
            The sequence and a float32 tensor (layers, H, L, L) on the CPU: the pattern search's scores read it.
        """
        checkpoint = self._text_checkpoint()
        prefix, suffix = checkpoint.probe_prefix(), checkpoint.suffix
        candidates = checkpoint.probe_candidates()
        room = min(checkpoint.max_positions or LIMITS.tokens_max, LIMITS.tokens_max) - len(prefix) - len(suffix)
        half = min(INDUCTION_HALF, candidates.numel(), room // 2)
        sequence = repeated_sequence(candidates, half, INDUCTION_SEED, prefix, suffix)
        encoded = checkpoint.encode_ids(sequence.ids.view(1, -1))  # (1, L): no pad token among the candidates
        attentions = checkpoint.forward(encoded, device, output_attentions=True).attentions  # layers x (1, H, L, L)
        return sequence, torch.cat(attentions).cpu()  # (layers, H, L, L)

    def compare(
        self,
        config: AttentionConfig,
        weights: Tensor,
        output: Tensor,
        mask: Tensor | None,
        image: Tensor | None = None,
        device: torch.device = CPU,
    ) -> CheckpointCheck:
        """Max |Δ| of our per-head weights and output against the checkpoint's, for ``config``'s text (an image
        checkpoint: ``config.image``, or ``image`` when given) and layer (see :func:`.check.compare`); the
        checkpoint's forward runs on ``device``.

        Args:
            weights: our (1, H, L, L) softmax weights.
            output: our (1, L, D) output.
            mask: our bool keep-mask (broadcastable to (1, H, L, L)) or ``None``.
            image: (C, H, W) in [0, 1]: the image an image checkpoint's run read, when not ``config.image`` (an upload).
        """
        self._check_layer(config.layer)
        encoded = self._encode(self.input_of(config) if image is None else image)
        return check.compare(self._checkpoint(), encoded, config.layer, weights, output, mask, device)

    def layer_model(self, layer: int) -> MultiHeadAttention:
        """Our float32 copy of ``layer`` on the CPU, the one :meth:`generate` follows (shared, read-only)."""
        self._check_layer(layer)
        return self._checkpoint().layer_model(layer, CPU, "float32")

    def generate(
        self,
        config: AttentionConfig,
        new_tokens: int,
        stop: threading.Event | None = None,
        progress: Callable[[int, int], None] | None = None,
        device: torch.device = CPU,
    ) -> Generation:
        """Greedy generation of ``new_tokens`` tokens after ``config.tokens``, ``config.layer`` followed by our layer
        (float32) and its own key/value cache (:func:`~mha.sources.checkpoint.generation.generate`), all on ``device``.

        Args:
            config: its ``tokens`` (the prompt, cut by the checkpoint's tokenizer, with the tokenizer's prefix such
                as a BOS or ``[CLS]`` but without its suffix: a GPT-2 with a BERT tokenizer goes on from the text's
                last token, not from a ``[SEP]``) and ``layer``.
            new_tokens: 1 .. :data:`~mha.sources.checkpoint.generation.GENERATE_MAX`.
            stop: set from another thread, it ends the generation before its next step.
            progress: called ``progress(done, new_tokens)`` after each step.
            device: where the checkpoint and our layer run (the run's device).

        Raises:
            ConfigError: a layer the checkpoint does not have, or a text with no token or too many.
            ValueError: a checkpoint that does not generate (an encoder, images), ``new_tokens`` outside
                1 .. GENERATE_MAX, a prompt with ``[PAD]``, or more positions than the checkpoint has.
        """
        self._check_layer(config.layer)
        checkpoint = self._text_checkpoint()
        if not checkpoint.generates:
            raise ValueError(f"{self.name} has no language-model head: it cannot generate")
        encoded = checkpoint.encode(config.tokens)
        model = checkpoint.layer_model(config.layer, device, "float32")
        return generate(checkpoint, encoded, config.layer, new_tokens, stop, progress, model, device)
