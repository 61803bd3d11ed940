"""Download formats for one forward pass: every tensor of the trace as ``.npz``, ``.pt`` and CSV.

All hold the same numbers, named after :meth:`mha.trace.AttentionTrace.tensors`
(``"project.q_heads"``, ``"attend.weights"``, ...), with blocked cells of
``attend.masked_scores`` kept as ``-inf``. A layer with grouped-query heads has Hkv key/value heads in
``project.k_heads``, ``project.v_heads`` (and ``project.k_rotated``), query head h reading key/value head
h // (H / Hkv) (the config's ``num_heads`` and ``num_kv_heads``); a layer with RoPE adds ``project.q_rotated`` and
``project.k_rotated``; where either changed what step 2 read, ``attend.queries``, ``attend.keys`` and
``attend.values`` hold it (H heads each; absent when they are step 1's own tensors).

``.npz`` (``np.load(path)``; no pickle needed):
    * one array per trace tensor, by its dotted name, in the model's dtype; the mask,
      when there is one, is ``"attend.mask"`` (bool, ``True`` = may attend);
    * ``"attend.scale"``: the score multiplier 1/sqrt(d_k), a 0-d float64 array;
    * ``"model.rope_base"``, only where the layer rotates q and k (RoPE): its base, a 0-d float64 array
      (10000 for a layer made here, a checkpoint's own ``rope_theta``);
    * ``"model.W_q.weight"``, ``"model.W_q.bias"``, ... ``"model.W_o.bias"``: the layer's
      weights (``nn.Linear`` layout: weight (out, in), bias (out,); W_k and W_v (Hkv·d_k, D)), whatever
      their origin (a layer without biases has no ``.bias`` entries);
    * ``"tokens"``: the tokens, a 1-d unicode array of length L;
    * ``"config"``: the configuration as a JSON string, a 0-d unicode array
      (``json.loads(str(data["config"]))``).

``.pt`` (``torch.load(path, weights_only=True)``; PyTorch only, no NumPy): a dict with the same
names and contents as the ``.npz``, tensors as tensors, ``"attend.scale"`` (and ``"model.rope_base"``) a float,
``"tokens"`` a list of str and ``"config"`` the JSON string. The reproducing script (:mod:`mha.reproduce`) reads
trained and pretrained weights from it.

CSV (a zip, for spreadsheets), UTF-8 with a byte-order mark so Excel shows Chinese:
    * ``<name>.csv`` per tensor, in long form: one row per cell, one index column per
      dimension, then ``value``. Index columns are named by :data:`DIMENSIONS`:
      ``b`` batch, ``h`` head (a key/value head in ``project.k_heads``, ``project.v_heads``,
      ``project.k_rotated``), ``i`` query position, ``j`` key position, ``d`` feature of d_model (of Hkv·d_k
      in ``project.k`` and ``project.v`` with fewer key/value heads), ``dh`` feature of one head. The mask
      has its broadcast shape ((1, 1, L, L), or (1, 1, 1, L) for padding) and values ``1`` (may attend)
      or ``0``; floats are written with enough digits to read back the exact number
      (9 significant for float32, 17 for float64), ``-inf`` for blocked scores;
    * ``tokens.csv``: columns ``position`` and ``token`` (positions are ``i`` and ``j``);
    * ``config.json``: the configuration, as in the ``.npz``, plus ``scale`` (and ``rope_base`` with RoPE).
    The layer's weights are in the ``.npz`` only (a 1024-wide layer would be 4 million rows).
A spreadsheet turns a long CSV into a matrix with a pivot table (rows ``i``, columns
``j``, filter ``h``).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import zipfile

import numpy as np
import torch
from torch import Tensor

from mha.config import PRETRAINED, TRAINED, AttentionConfig
from mha.pipeline import AttentionRun

__all__ = [
    "DIMENSIONS",
    "PROJECTIONS",
    "config_json",
    "export_basename",
    "trace_arrays",
    "trace_csv_zip",
    "trace_npz",
    "trace_pt",
]

PROJECTIONS = ("W_q", "W_k", "W_v", "W_o")

# Index column names of each trace tensor, in PyTorch order (see mha/trace.py for the shapes).
DIMENSIONS: dict[str, tuple[str, ...]] = {
    "project.x_query": ("b", "i", "d"),
    "project.x_key": ("b", "j", "d"),
    "project.x_value": ("b", "j", "d"),
    "project.q": ("b", "i", "d"),
    "project.k": ("b", "j", "d"),
    "project.v": ("b", "j", "d"),
    "project.q_heads": ("b", "h", "i", "dh"),
    "project.k_heads": ("b", "h", "j", "dh"),  # h: the key/value head (0 .. Hkv-1)
    "project.v_heads": ("b", "h", "j", "dh"),  # h: the key/value head (0 .. Hkv-1)
    "project.q_rotated": ("b", "h", "i", "dh"),
    "project.k_rotated": ("b", "h", "j", "dh"),  # h: the key/value head (0 .. Hkv-1)
    "attend.mask": ("b", "h", "i", "j"),
    "attend.raw_scores": ("b", "h", "i", "j"),
    "attend.scaled_scores": ("b", "h", "i", "j"),
    "attend.masked_scores": ("b", "h", "i", "j"),
    "attend.weights": ("b", "h", "i", "j"),
    "attend.context": ("b", "h", "i", "dh"),
    "attend.queries": ("b", "h", "i", "dh"),
    "attend.keys": ("b", "h", "j", "dh"),
    "attend.values": ("b", "h", "j", "dh"),
    "concat.concat": ("b", "i", "d"),
    "out.output": ("b", "i", "d"),
}

_FLOAT_FORMAT = {np.dtype(np.float32): "%.9g", np.dtype(np.float64): "%.17g"}


def export_basename(config: AttentionConfig) -> str:
    """A file name stem that names the configuration, e.g. ``attention_d512_h8_causal_seed0``.

    The window size is part of the mask name for ``window`` (``window2``), ``_nopad`` follows a
    mask that also blocks [PAD] keys (``causal_nopad``); fewer key/value heads follow the heads
    (``h8kv2``) and RoPE follows them (``attention_d512_h8kv2_rope_causal_seed0``); trained weights
    add the task (``attention_trained_induction_layer1_d64_h2_none_seed0``), a checkpoint
    its name and layer (``attention_minilm_layer3_none``: its heads and positions are its own).
    """
    mask = f"window{config.window}" if config.mask_type == "window" else config.mask_type
    if config.block_pad and config.mask_type != "padding":
        mask += "_nopad"
    if config.weights == PRETRAINED:
        name = config.pretrained_name.replace("/", "--")  # a learner's hub id owner/name: no folder in a file name
        return f"attention_{name}_layer{config.layer}_{mask}"
    origin = f"trained_{config.task}_layer{config.layer}_" if config.weights == TRAINED else ""
    heads = f"h{config.num_heads}" + (f"kv{config.num_kv_heads}" if config.num_kv_heads != config.num_heads else "")
    rope = "_rope" if config.positional == "rope" else ""
    return f"attention_{origin}d{config.d_model}_{heads}{rope}_{mask}_seed{config.seed}"


def config_json(run: AttentionRun) -> str:
    """The run's configuration as a JSON object (Chinese kept readable, not ``\\u`` escaped)."""
    return json.dumps(dataclasses.asdict(run.config), ensure_ascii=False, indent=2)


def _to_numpy(tensor: Tensor) -> np.ndarray:
    return tensor.detach().cpu().numpy()


def trace_arrays(run: AttentionRun) -> dict[str, np.ndarray]:
    """Every array that goes into the ``.npz``, by name (see the module docstring).

    Returns:
        The trace tensors by dotted name, then ``"attend.scale"``, the layer's weights
        (``"model.W_q.weight"``, ...), ``"tokens"`` and ``"config"``.
    """
    arrays = {name: _to_numpy(tensor) for name, tensor in run.trace.tensors().items()}
    arrays["attend.scale"] = np.array(run.trace.attend.scale, dtype=np.float64)
    if run.model.rope_base is not None:
        arrays["model.rope_base"] = np.array(run.model.rope_base, dtype=np.float64)
    for name in PROJECTIONS:
        linear = getattr(run.model, name)
        arrays[f"model.{name}.weight"] = _to_numpy(linear.weight)
        if linear.bias is not None:
            arrays[f"model.{name}.bias"] = _to_numpy(linear.bias)
    arrays["tokens"] = np.array(run.tokens, dtype=np.str_)
    arrays["config"] = np.array(config_json(run), dtype=np.str_)
    return arrays


def trace_npz(run: AttentionRun) -> bytes:
    """The ``.npz`` file of :func:`trace_arrays`, compressed, as bytes."""
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **trace_arrays(run))
    return buffer.getvalue()


def trace_pt(run: AttentionRun) -> bytes:
    """The ``.pt`` file (see the module docstring): what the ``.npz`` holds, saved with ``torch.save``, as bytes."""
    tensors = dict(run.trace.tensors())
    for name in PROJECTIONS:
        linear = getattr(run.model, name)
        tensors[f"model.{name}.weight"] = linear.weight
        if linear.bias is not None:
            tensors[f"model.{name}.bias"] = linear.bias
    contents: dict[str, object] = {name: tensor.detach().cpu().clone() for name, tensor in tensors.items()}
    contents["attend.scale"] = float(run.trace.attend.scale)
    if run.model.rope_base is not None:
        contents["model.rope_base"] = float(run.model.rope_base)
    contents["tokens"] = list(run.tokens)
    contents["config"] = config_json(run)
    buffer = io.BytesIO()
    torch.save(contents, buffer)
    return buffer.getvalue()


def _long_csv(name: str, array: np.ndarray) -> bytes:
    """One tensor in long form: an index column per dimension, then ``value``."""
    dims = DIMENSIONS.get(name, tuple(f"dim{axis}" for axis in range(array.ndim)))
    index = np.indices(array.shape).reshape(array.ndim, -1).T  # (cells, ndim), row-major like array.ravel()
    if array.dtype == np.bool_:
        values, value_format = array.ravel().astype(np.int64), "%d"
    else:
        values, value_format = array.ravel(), _FLOAT_FORMAT.get(array.dtype, "%.17g")
    row_format = ",".join(["%d"] * array.ndim + [value_format])
    rows = (row_format % (*k, v) for k, v in zip(index.tolist(), values.tolist(), strict=True))
    text = "\n".join((",".join((*dims, "value")), *rows)) + "\n"
    return text.encode("utf-8-sig")


def _tokens_csv(tokens: tuple[str, ...]) -> bytes:
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["position", "token"])
    writer.writerows(enumerate(tokens))
    return text.getvalue().encode("utf-8-sig")


def trace_csv_zip(run: AttentionRun) -> bytes:
    """A zip of one long-form CSV per trace tensor, ``tokens.csv`` and ``config.json``, as bytes."""
    config = dataclasses.asdict(run.config) | {"scale": run.trace.attend.scale}
    if run.model.rope_base is not None:
        config["rope_base"] = float(run.model.rope_base)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for name, tensor in run.trace.tensors().items():
            archive.writestr(f"{name}.csv", _long_csv(name, _to_numpy(tensor)))
        archive.writestr("tokens.csv", _tokens_csv(run.tokens))
        archive.writestr("config.json", json.dumps(config, ensure_ascii=False, indent=2))
    return buffer.getvalue()
