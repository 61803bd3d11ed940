"""A BERT checkpoint written to a folder, made here from a config and a vocabulary: no network.

The tests use the tiny one (2 layers, 4 heads, hidden 32); ``bench/pretrained.py`` builds
MiniLM- and BERT-base-sized ones with random weights the same way. The vocabulary knows the
test sentences' words (and ``##s``), a few Chinese characters and, for the larger sizes,
filler words up to BERT's 30,522 entries; other words and most Chinese characters become ``[UNK]``.
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


def build_bert(
    folder: Path,
    hidden: int = HIDDEN,
    layers: int = LAYERS,
    heads: int = HEADS,
    vocab_size: int | None = None,
    seed: int = 0,
) -> Path:
    """Write a BERT with random weights (``seed``) and its WordPiece tokenizer to ``folder``; return it.

    ``vocab_size`` pads the vocabulary with filler words (``None``: only the words above).
    """
    from transformers import BertConfig, BertModel, BertTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    words = SPECIAL + WORDS
    words += [f"filler{i}" for i in range(max((vocab_size or 0) - len(words), 0))]
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(words) + "\n", encoding="utf-8")
    config = BertConfig(
        vocab_size=len(words),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=4 * hidden if vocab_size else 64,
        max_position_embeddings=512 if vocab_size else 160,
    )
    with torch.random.fork_rng():  # the global RNG of the calling process is left as it was
        torch.manual_seed(seed)
        model = BertModel(config)
    model.save_pretrained(folder)
    BertTokenizer(vocab=str(vocab), do_lower_case=True).save_pretrained(folder)
    return folder


def build_tiny_bert(folder: Path) -> Path:
    """The tests' checkpoint: 2 layers, 4 heads, hidden 32, a vocabulary of 37 entries."""
    return build_bert(folder)
