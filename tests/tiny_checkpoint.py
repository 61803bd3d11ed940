"""A tiny BERT checkpoint written to a folder, made here from a config and a small vocabulary: no network.

Its vocabulary knows the test sentences' words (and ``##s``), a few Chinese characters and
nothing else, so other words and most Chinese characters become ``[UNK]``.
"""

from __future__ import annotations

from pathlib import Path

import torch

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = [
    *("the", "animal", "didn", "'", "t", "cross", "street", "because", "it", "was", "too", "tired"),
    *("cat", "sat", "on", "mat", "a", "b", "c", "thinking", "machines", "think", "dog", "dogs"),
    *("##s", "##ing", ",", ".", "小", "明", "他", "学"),
]
LAYERS, HEADS, HIDDEN = 2, 4, 32


def build_tiny_bert(folder: Path, seed: int = 0) -> Path:
    """Write a 2-layer, 4-head, hidden-32 BERT and its WordPiece tokenizer to ``folder``; return it."""
    from transformers import BertConfig, BertModel, BertTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(SPECIAL + WORDS) + "\n", encoding="utf-8")
    config = BertConfig(
        vocab_size=len(SPECIAL) + len(WORDS),
        hidden_size=HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=64,
        max_position_embeddings=160,
    )
    with torch.random.fork_rng():  # the global RNG of the test process is left as it was
        torch.manual_seed(seed)
        model = BertModel(config)
    model.save_pretrained(folder)
    BertTokenizer(vocab=str(vocab), do_lower_case=True).save_pretrained(folder)
    return folder
