"""The sequence tasks' model around the project's own ``MultiHeadAttention``: embeddings, ``x + MHA(x)`` layers,
readouts.

Shape legend: B batch, L sequence length, D = d_model, H heads, Hkv key/value heads, R readouts, C classes.

    x_0 = token_embedding[ids] + position_embedding[0..L-1]       (B, L, D)
    x_l+1 = x_l + MultiHeadAttention_l(x_l, x_l, x_l, mask)        one or two layers
    logits_r = readout_r(x_last)                                   (B, L, C) per output

No LayerNorm, no MLP: whatever the model computes, the attention layers compute it, so
their heads have to learn the task's relations. Parameters are drawn from a private
generator on a model made on the ``meta`` device (no global RNG is touched).

Today's layers, where asked for: ``num_kv_heads`` < H gives every layer smaller W_k and W_v (Hkv·Dh outputs;
query head h reads key/value head h // (H / Hkv)); ``rope_base`` makes every layer rotate q and k by position
(RoPE), and the model then has no position embedding: ``x_0 = token_embedding[ids]``, positions come from the
rotation alone, as in Llama. Without either option the model and its parameter draws are the ones before them.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from mha.module import MultiHeadAttention
from mha.training.classifier import attention_parameters
from mha.training.digits_model import DigitsModel
from mha.training.reviews_model import ReviewsModel

__all__ = ["Model", "TaskModel", "build_task_model", "task_model_parameters"]


class TaskModel(nn.Module):
    """Token and position embeddings, ``x + MHA(x)`` layers, one linear readout per output.

    Args:
        vocab_size: tokens the embedding knows.
        length: positions the position embedding knows (the longest sequence).
        d_model, num_heads: the attention layers' sizes.
        layers: number of attention layers.
        readouts: number of outputs; each is a ``Linear(D, classes)``.
        classes: classes of every readout.
        num_kv_heads: the layers' key/value heads (default ``num_heads``).
        rope_base: the layers rotate q and k by position with this base; the model then has no position
            embedding (``position_embedding`` is ``None``).
    """

    def __init__(
        self,
        vocab_size: int,
        length: int,
        d_model: int,
        num_heads: int,
        layers: int,
        readouts: int,
        classes: int,
        num_kv_heads: int | None = None,
        rope_base: float | None = None,
    ) -> None:
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(length, d_model) if rope_base is None else None
        self.layers = nn.ModuleList(
            MultiHeadAttention(d_model, num_heads, num_kv_heads=num_kv_heads, rope_base=rope_base)
            for _ in range(layers)
        )
        self.readouts = nn.ModuleList(nn.Linear(d_model, classes) for _ in range(readouts))

    def embed(self, ids: Tensor) -> Tensor:
        """(B, L) ids -> (B, L, D): token vector + position vector (RoPE: the token vector alone)."""
        x = self.token_embedding(ids)  # (B, L, D)
        if self.position_embedding is None:  # RoPE: the layers put the positions into q and k
            return x
        positions = torch.arange(ids.size(1), device=ids.device)
        return x + self.position_embedding(positions)  # (B, L, D) + (L, D)

    def layer_inputs(self, ids: Tensor, mask: Tensor | None) -> tuple[list[Tensor], list[Tensor]]:
        """The input of every layer and the one after the last, and every layer's weights.

        Returns:
            ``(xs, weights)``: ``xs`` has ``layers + 1`` tensors (B, L, D), ``weights`` one (B, H, L, L) per layer.
        """
        x = self.embed(ids)
        xs, weights = [x], []
        for layer in self.layers:
            out, attn = layer(x, x, x, mask)  # (B, L, D), (B, H, L, L)
            x = x + out
            xs.append(x)
            weights.append(attn)
        return xs, weights

    def forward(self, ids: Tensor, mask: Tensor | None = None) -> tuple[Tensor, list[Tensor]]:
        """(B, L) ids -> logits (B, R, L, C) and each layer's weights (B, H, L, L)."""
        xs, weights = self.layer_inputs(ids, mask)
        logits = torch.stack([readout(xs[-1]) for readout in self.readouts], dim=1)  # R x (B, L, C) -> (B, R, L, C)
        return logits, weights

    def logits(self, ids: Tensor, mask: Tensor | None = None) -> Tensor:
        """(B, L) ids -> logits (B, R, L, C), as :meth:`forward` gives them (what a training step reads)."""
        return self(ids, mask)[0]

    def changed_logits(self, ids: Tensor, mask: Tensor | None, layer: int, change: Tensor, query: int) -> Tensor:
        """The logits at ``query`` with layer ``layer``'s output changed by ``change``, one run per row of it.

        Shape:
            ids (1, L); change (N, L, D), added to that layer's output (N copies of the sequence) -> (N, R, C).
        """
        x = self.embed(ids).expand(change.size(0), -1, -1)  # (N, L, D)
        for index, attention in enumerate(self.layers):
            out, _ = attention(x, x, x, mask)  # (N, L, D)
            x = x + (out + change if index == layer else out)
        return torch.stack([readout(x[:, query]) for readout in self.readouts], dim=1)  # R x (N, C) -> (N, R, C)


def build_task_model(
    vocab_size: int,
    length: int,
    d_model: int,
    num_heads: int,
    layers: int,
    readouts: int,
    classes: int,
    generator: torch.Generator,
    num_kv_heads: int | None = None,
    rope_base: float | None = None,
) -> TaskModel:
    """A :class:`TaskModel` (its arguments as the class's) with parameters drawn from ``generator`` alone.

    Embeddings ~ N(0, 1) and linear layers ~ U(-1/sqrt(D), 1/sqrt(D)), the ``nn.Embedding`` and
    ``nn.Linear`` defaults, drawn in a fixed order: the token embedding, the position embedding (none with
    RoPE), then every ``nn.Linear`` in module order (W_q, W_k, W_v, W_o of each layer, then the readouts).
    Without ``num_kv_heads`` and ``rope_base`` these are the draws of the model before either option existed.
    """
    with torch.device("meta"):
        model = TaskModel(vocab_size, length, d_model, num_heads, layers, readouts, classes, num_kv_heads, rope_base)
    model = model.to_empty(device="cpu")
    bound = 1.0 / math.sqrt(d_model)
    with torch.no_grad():
        for embedding in (model.token_embedding, model.position_embedding):
            if embedding is not None:
                embedding.weight.normal_(generator=generator)
        for module in model.modules():
            if isinstance(module, nn.Linear):
                module.weight.uniform_(-bound, bound, generator=generator)
                module.bias.uniform_(-bound, bound, generator=generator)
    return model


def task_model_parameters(
    vocab_size: int,
    length: int,
    d_model: int,
    num_heads: int,
    layers: int,
    readouts: int,
    classes: int,
    num_kv_heads: int | None = None,
    rope: bool = False,
) -> dict[str, int]:
    """A :class:`TaskModel`'s parameters by part, counted by formula (the tests check them against ``numel``).

    Keys: ``tokens`` (vocabulary · D), ``positions`` (L · D; 0 with RoPE), ``attention`` (per layer,
    :func:`~mha.training.classifier.attention_parameters`), ``readouts`` (R · (D · C + C)), ``total``.
    """
    parts = {
        "tokens": vocab_size * d_model,
        "positions": 0 if rope else length * d_model,
        "attention": attention_parameters(d_model, num_heads, num_kv_heads),
        "readouts": readouts * (d_model + 1) * classes,
    }
    parts["total"] = parts["tokens"] + parts["positions"] + layers * parts["attention"] + parts["readouts"]
    return parts


#: A model of a task: token embeddings and attention layers (the sequence tasks), or the Pre-Norm classifier over
#: the digits' patches or the reviews' characters (:mod:`mha.training.classifier`). A task builds its own
#: (:meth:`mha.training.tasks.Task.build_model`).
Model = TaskModel | DigitsModel | ReviewsModel
