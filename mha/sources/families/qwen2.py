"""Qwen2-family language models (``model_type: qwen2``): read as a Llama (``llama.py``), with two differences.

* Qwen2's ``q_proj``, ``k_proj`` and ``v_proj`` have biases and its ``o_proj`` has none (transformers 5's
  ``Qwen2Attention`` builds them so whatever ``config.json`` says): our layer has biases, ``W_o``'s zero, which
  adds nothing (:func:`~mha.sources.checkpoint.checkpoint_model.copy_layer`).
* Sliding-window attention: with ``use_sliding_window: true`` the layers from ``max_window_layers`` on see only the
  last ``sliding_window`` tokens (``layer_types``' ``sliding_attention``): another mask, refused here.
"""

from __future__ import annotations

from collections.abc import Mapping

from mha.sources.families.llama import LlamaFamily

__all__ = ["FAMILY", "QWEN2", "Qwen2Family"]

#: The ``model_type`` this family reads.
QWEN2 = "qwen2"


class Qwen2Family(LlamaFamily):
    """Qwen2 and Qwen2.5 (``Qwen/Qwen2.5-0.5B``...): a Llama whose q, k and v have biases and whose ``o_proj`` has
    none; sliding-window attention, where a checkpoint turns it on, is refused."""

    model_types = (QWEN2,)
    note = "family_qwen2"

    def refuse(self, name: str, config: Mapping[str, object]) -> str | None:
        """As Llama's, and ``use_sliding_window: true`` (a window mask in some layers) is not read here."""
        if config.get("use_sliding_window"):
            return f"{QWEN2} with sliding-window attention (sliding_window {config.get('sliding_window')})"
        return super().refuse(name, config)


FAMILY = Qwen2Family()
