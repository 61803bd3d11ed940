"""BERT and GPT-2 checkpoints written to a folder, made here from a config and a vocabulary: no network.

The tests use the tiny BERT (2 layers, 4 heads, hidden 32); ``bench/pretrained.py`` builds
MiniLM- and BERT-base-sized ones with random weights the same way. The vocabulary knows the
test sentences' words (and ``##s``), a few Chinese characters and, for the larger sizes,
filler words up to BERT's 30,522 entries; other words and most Chinese characters become ``[UNK]``.

GPT-2s (:func:`build_gpt2`) come with a byte-level BPE trained here on the test sentences, or with
the tiny BERT's WordPiece tokenizer (as a Chinese GPT-2 pairs them); :func:`build_induction_gpt2`
sets a 2-layer GPT-2's weights so that it has a previous-token head and an induction head.

ViTs and DeiTs (:func:`build_vit`) come with their image processor's settings, as the hub's do
(``preprocessor_config.json``: ViT's resize and normalise; DeiT's resize, centre crop and normalise).

Llamas and Qwen2s (:func:`build_llama`: 4 query heads sharing 2 key/value heads, rotary positions) come with a
tokenizer trained here on :data:`CORPUS`: a Llama-2-style ``LlamaTokenizer`` that puts its BOS ``<s>`` first, or
Qwen2's byte-level ``Qwen2Tokenizer``, which adds nothing. :func:`build_smollm2` builds one at SmolLM2-135M's sizes
(random weights) for the benches.
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


# ---------------------------------------------------------------- GPT-2
GPT2_HIDDEN, GPT2_LAYERS, GPT2_HEADS, GPT2_POSITIONS = 32, 3, 4, 160
END = "<|endoftext|>"
#: What the tiny byte-level BPE is trained on: the test sentences, so that their words are whole tokens.
CORPUS = (
    "The animal didn't cross the street because it was too tired",
    "the cat sat on the mat, the dog sat on the mat.",
    "a b c a b c thinking machines think",
)


def _byte_level_bpe(vocab_size: int = 400):
    """A GPT-2-style byte-level BPE (the 256 bytes, merges learnt from :data:`CORPUS`, ``<|endoftext|>``)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2TokenizerFast

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[END],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(list(CORPUS) * 3, trainer)
    return GPT2TokenizerFast(tokenizer_object=bpe, bos_token=END, eos_token=END, unk_token=END)


def _bert_tokenizer(folder: Path):
    from transformers import BertTokenizer

    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(SPECIAL + WORDS) + "\n", encoding="utf-8")
    return BertTokenizer(vocab=str(vocab), do_lower_case=True)


def build_gpt2(
    folder: Path,
    hidden: int = GPT2_HIDDEN,
    layers: int = GPT2_LAYERS,
    heads: int = GPT2_HEADS,
    vocab_size: int | None = None,
    seed: int = 0,
    bert_tokenizer: bool = False,
    positions: int | None = None,
) -> Path:
    """Write a GPT-2 with random weights (``seed``) and its tokenizer to ``folder``; return it.

    The tokenizer is a byte-level BPE trained here on :data:`CORPUS` (GPT-2's kind: no [CLS],
    no [SEP], no pad token) or, with ``bert_tokenizer``, the tiny BERT's WordPiece vocabulary, as a
    Chinese GPT-2 (``uer/gpt2-chinese-cluecorpussmall``) pairs a GPT-2 with a BERT tokenizer.
    ``vocab_size`` sizes the model's embedding (``None``: the tokenizer's); ``positions`` its position
    embedding (``None``: GPT-2's 1,024 with a ``vocab_size``, else 160).
    """
    from transformers import GPT2Config, GPT2Model

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = _bert_tokenizer(folder) if bert_tokenizer else _byte_level_bpe()
    end = tokenizer.cls_token_id if bert_tokenizer else tokenizer.eos_token_id
    config = GPT2Config(
        vocab_size=max(vocab_size or 0, len(tokenizer)),
        n_positions=positions or (1024 if vocab_size else GPT2_POSITIONS),
        n_embd=hidden,
        n_layer=layers,
        n_head=heads,
        bos_token_id=end,
        eos_token_id=end,
        tokenizer_class="BertTokenizer" if bert_tokenizer else None,
    )
    with torch.random.fork_rng():  # the global RNG of the calling process is left as it was
        torch.manual_seed(seed)
        model = GPT2Model(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def build_tiny_gpt2(folder: Path) -> Path:
    """The tests' GPT-2: 3 layers, 4 heads, hidden 32, a byte-level BPE of 400 entries."""
    return build_gpt2(folder)


# ---------------------------------------------------------------- a GPT-2 with a planted induction circuit
#: (layer, head) of the planted heads: a previous-token head in layer 0 and an induction head in layer 1.
PREVIOUS_HEAD, INDUCTION_HEAD = (0, 0), (1, 0)


def build_induction_gpt2(folder: Path, positions: int = 140) -> Path:
    """A 2-layer, 2-head GPT-2 whose weights are set so that head 0.0 is a previous-token head and head 1.0
    an induction head, by composition -- with the tiny BERT's WordPiece tokenizer (V = 37 words).

    The residual stream is split into blocks, each a "+" half and a "-" half holding the same values
    with opposite signs, so that every vector sums to 0 and has the same norm wherever it is: then
    GPT-2's LayerNorms (weight 1, bias 0) only scale it by one constant, s = sqrt(D) / ||x||.

    * T (2V dims): the token, one-hot (``wte``); P (2P dims): the position, one-hot (``wpe``);
      S (2V dims): empty at the input, where head 0.0 writes the previous token.
    * Head 0.0: its query at i is slot i-1, its key at j slot j (from P): the score is large only
      for j = i-1, so it looks one token back. Its value is the token (from T), and ``c_proj`` writes
      it into S: after layer 0, position j holds "my previous token was x" in S.
    * Head 1.0: its query is the current token (from T), its key the previous token written into S:
      the score is large only where token(j - 1) == token(i), i.e. at the position right after an
      earlier copy of the current token -- the induction pattern. It knows no position: it works
      only through what head 0.0 wrote (K-composition).
    * Heads 0.1 and 1.1 and both MLPs are zero (their attention is uniform over what the mask allows).
    """
    from transformers import GPT2Config, GPT2Model

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = _bert_tokenizer(folder)
    words = len(tokenizer)
    t_plus, t_minus, s_plus, s_minus = (block * words for block in range(4))
    p_plus, p_minus = 4 * words, 4 * words + positions
    hidden = 2 * ((4 * words + 2 * positions + 1) // 2)  # every block, rounded up to an even width for 2 heads
    d_head = hidden // 2
    assert d_head >= max(words, positions), (d_head, words, positions)
    config = GPT2Config(
        vocab_size=words,
        n_positions=positions,
        n_embd=hidden,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
        tokenizer_class="BertTokenizer",
    )
    model = GPT2Model(config).eval()
    scale = hidden**0.5 / 2  # LayerNorm's factor at layer 0: ||x|| = 2 (T and P, each of norm sqrt(2))
    # Query and key weights: a score of sharp^2 * s^2 / sqrt(d_head) where the pattern points, 0 elsewhere:
    # about 16 at layer 0 (s = sqrt(D) / 2) and 20 at layer 1 (s = sqrt(D / 6): T, P and S each of norm sqrt(2)).
    sharp0, sharp1 = 1.5, 2.0
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
        for block in model.h:
            block.ln_1.weight.fill_(1.0)
            block.ln_2.weight.fill_(1.0)
        model.ln_f.weight.fill_(1.0)
        ids, places = torch.arange(words), torch.arange(positions)
        model.wte.weight[ids, t_plus + ids] = 1.0
        model.wte.weight[ids, t_minus + ids] = -1.0
        model.wpe.weight[places, p_plus + places] = 1.0
        model.wpe.weight[places, p_minus + places] = -1.0
        q, k, v, o = (torch.zeros(hidden, hidden) for _ in range(4))  # nn.Linear layout: (out, in)
        q[places[1:] - 1, p_plus + places[1:]] = sharp0  # head 0 (rows 0..d_head-1): query slot i-1 at i
        k[places, p_plus + places] = sharp0  # key slot j at j
        v[ids, t_plus + ids] = 1.0  # value: the token, in slot = its id
        o[s_plus + ids, ids] = 1.0 / scale  # write it into S: +1 ...
        o[s_minus + ids, ids] = -1.0 / scale  # ... and -1
        _set_attention(model.h[0].attn, q, k, v, o)
        q, k = torch.zeros(hidden, hidden), torch.zeros(hidden, hidden)
        q[ids, t_plus + ids] = sharp1  # head 0: query = the current token
        k[ids, s_plus + ids] = sharp1  # key = the previous token, as head 0.0 wrote it
        _set_attention(model.h[1].attn, q, k, torch.zeros(hidden, hidden), torch.zeros(hidden, hidden))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _set_attention(attention, q, k, v, o) -> None:
    """A GPT-2 attention's ``c_attn`` and ``c_proj`` from ``nn.Linear``-layout (out, in) matrices: a Conv1D
    stores (in, out), Q, K and V side by side."""
    attention.c_attn.weight.copy_(torch.cat([q.T, k.T, v.T], dim=1))  # (D, 3D)
    attention.c_proj.weight.copy_(o.T)  # (D, D)


# ---------------------------------------------------------------- ViT and DeiT
#: The tests' ViT: 32 × 32 pixels in 8 × 8 patches (a 4 × 4 grid: 16 patches + [CLS]), 2 layers, 4 heads, hidden 32.
VIT_IMAGE, VIT_PATCH, VIT_LAYERS, VIT_HEADS, VIT_HIDDEN = 32, 8, 2, 4, 32


def build_vit(
    folder: Path,
    image_size: int = VIT_IMAGE,
    patch_size: int = VIT_PATCH,
    hidden: int = VIT_HIDDEN,
    layers: int = VIT_LAYERS,
    heads: int = VIT_HEADS,
    seed: int = 0,
    deit: bool = False,
    qkv_bias: bool = True,
    intermediate: int | None = None,
    classifier: bool = False,
) -> Path:
    """Write a ViT (or, with ``deit``, a DeiT: [CLS] and [DIST] before the patches) with random weights (``seed``)
    and its image processor to ``folder``; return it.

    The weights are drawn wider than ViT's own initialisation (std 0.2, not 0.02) so that the heads' weights
    are far from uniform, and so are the biases (ViT's are 0). The processor resizes to ``image_size`` (a
    DeiT's: to ``image_size + 8``, then crops the centre) and normalises with mean and std 0.5, as
    ``google/vit-base-patch16-224``'s does.
    ``intermediate`` sizes the MLP (``None``: 4 × hidden, ViT's ratio). With ``classifier`` a ViT is saved with a
    classification head (``ViTForImageClassification``, 3 classes: its weights under ``vit.``), as the hub's are.
    """
    from transformers import (
        DeiTConfig,
        DeiTImageProcessorPil,
        DeiTModel,
        ViTConfig,
        ViTForImageClassification,
        ViTImageProcessorPil,
        ViTModel,
    )

    folder.mkdir(parents=True, exist_ok=True)
    sizes = {
        "image_size": image_size,
        "patch_size": patch_size,
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "intermediate_size": intermediate or 4 * hidden,
        "qkv_bias": qkv_bias,
        "initializer_range": 0.2,
    }
    config = DeiTConfig(**sizes) if deit else ViTConfig(**sizes, num_labels=3)
    with torch.random.fork_rng(), torch.no_grad():  # the global RNG of the calling process is left as it was
        torch.manual_seed(seed)
        model = DeiTModel(config) if deit else ViTForImageClassification(config) if classifier else ViTModel(config)
        for name, parameter in model.named_parameters():
            if name.endswith("bias"):  # ViT initialises them to 0: drawn here, so that copying them is tested
                parameter.normal_(std=0.2)
    model.save_pretrained(folder)
    square = {"height": image_size, "width": image_size}
    normalise = {"image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    if deit:
        margin = {"height": image_size + 8, "width": image_size + 8}
        processor = DeiTImageProcessorPil(size=margin, crop_size=square, do_center_crop=True, **normalise)
    else:
        processor = ViTImageProcessorPil(size=square, **normalise)
    processor.save_pretrained(folder)
    return folder


def build_tiny_vit(folder: Path) -> Path:
    """The tests' ViT: 32 × 32 pixels, 8 × 8 patches, 2 layers, 4 heads, hidden 32."""
    return build_vit(folder)


# ---------------------------------------------------------------- Llama and Qwen2
#: The tests' Llama and Qwen2: hidden 32, 4 query heads and 2 key/value heads (d_k 8), 2 layers.
LLAMA_HIDDEN, LLAMA_LAYERS, LLAMA_HEADS, LLAMA_KV_HEADS, LLAMA_POSITIONS = 32, 2, 4, 2, 160
#: Their rotary bases: Llama 2's and Qwen2.5's.
LLAMA_ROPE_THETA, QWEN2_ROPE_THETA = 10_000.0, 1_000_000.0


def _trained_merges(tokenizer_json: str) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """The vocabulary and merges of a trained ``tokenizers`` BPE (its JSON), as the tokenizer classes take them."""
    import json

    model = json.loads(tokenizer_json)["model"]
    merges = [tuple(merge) if isinstance(merge, list) else tuple(merge.split(" ")) for merge in model["merges"]]
    return model["vocab"], merges


def _llama_tokenizer(vocab_size: int = 400):
    """A Llama-2-style tokenizer (transformers' ``LlamaTokenizer``: SentencePiece-like BPE on ``▁``-marked words, byte
    fallback) trained on :data:`CORPUS`, which puts its BOS ``<s>`` before every text (``add_bos_token``)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaTokenizer

    specials = ["<unk>", "<s>", "</s>", *(f"<0x{byte:02X}>" for byte in range(256))]  # byte fallback's pieces
    bpe = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    bpe.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True)
    trainer = trainers.BpeTrainer(vocab_size=len(specials) + vocab_size, special_tokens=specials, show_progress=False)
    bpe.train_from_iterator(list(CORPUS) * 3, trainer)
    vocab, merges = _trained_merges(bpe.to_str())
    return LlamaTokenizer(vocab=vocab, merges=merges, add_bos_token=True)


def _qwen2_tokenizer(vocab_size: int = 400):
    """A Qwen2 tokenizer (transformers' ``Qwen2Tokenizer``: byte-level BPE, no BOS, ``<|endoftext|>`` its end and
    pad token) trained on :data:`CORPUS`."""
    from tokenizers import pre_tokenizers, trainers
    from transformers import Qwen2Tokenizer

    untrained = Qwen2Tokenizer()  # its own normaliser and pre-tokeniser, trained below
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend = untrained.backend_tokenizer
    backend.train_from_iterator(list(CORPUS) * 3, trainer)
    vocab, merges = _trained_merges(backend.to_str())
    return Qwen2Tokenizer(vocab=vocab, merges=merges)


def build_llama(
    folder: Path,
    qwen2: bool = False,
    hidden: int = LLAMA_HIDDEN,
    layers: int = LLAMA_LAYERS,
    heads: int = LLAMA_HEADS,
    kv_heads: int = LLAMA_KV_HEADS,
    rope_theta: float | None = None,
    seed: int = 0,
    save_dtype: str | None = None,
    **config: object,
) -> Path:
    """Write a Llama (or, with ``qwen2``, a Qwen2) with random weights (``seed``) and its tokenizer to ``folder``;
    return it. Saved as ``LlamaForCausalLM`` / ``Qwen2ForCausalLM``, as the hub's are (the base model under
    ``model.``).

    The weights are drawn wider than Llama's own initialisation (std 0.2, not 0.02) so that the heads' weights are
    far from uniform; so are Qwen2's q, k, v biases (initialised to 0) and every RMSNorm's weight (1 + N(0, 0.2)),
    so that copying them and the layer's input are tested. ``rope_theta``: ``None`` for Llama 2's 10,000 (Qwen2:
    Qwen2.5's 1,000,000). ``save_dtype``: the number type of the saved weights (``"bfloat16"``, as the hub's
    Llamas are stored; the page loads them in float32 all the same); ``None``: float32. ``config``: more
    ``LlamaConfig`` / ``Qwen2Config`` settings.
    """
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = _qwen2_tokenizer() if qwen2 else _llama_tokenizer()
    settings = {
        "vocab_size": len(tokenizer),
        "hidden_size": hidden,
        "intermediate_size": 2 * hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "max_position_embeddings": LLAMA_POSITIONS,
        "rope_theta": rope_theta or (QWEN2_ROPE_THETA if qwen2 else LLAMA_ROPE_THETA),
        "initializer_range": 0.2,
        "tie_word_embeddings": False,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
        **config,
    }
    kind, model_class = (Qwen2Config, Qwen2ForCausalLM) if qwen2 else (LlamaConfig, LlamaForCausalLM)
    with torch.random.fork_rng(), torch.no_grad():  # the global RNG of the calling process is left as it was
        torch.manual_seed(seed)
        model = model_class(kind(**settings))
        for name, parameter in model.named_parameters():
            if name.endswith("bias"):  # Qwen2's q, k, v biases: drawn, not 0
                parameter.normal_(std=0.2)
            elif "norm" in name:  # RMSNorm's weights: not all 1
                parameter.normal_(mean=1.0, std=0.2)
    if save_dtype is not None:
        model = model.to(getattr(torch, save_dtype))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def build_tiny_llama(folder: Path) -> Path:
    """The tests' Llama: hidden 32, 4 query heads, 2 key/value heads, 2 layers, rope_theta 10,000, a BOS-adding
    tokenizer."""
    return build_llama(folder)


def build_tiny_qwen2(folder: Path) -> Path:
    """The tests' Qwen2: as the Llama, with q, k, v biases, rope_theta 1,000,000 and a tokenizer that adds nothing."""
    return build_llama(folder, qwen2=True)


#: SmolLM2-135M's sizes, from ``HuggingFaceTB/SmolLM2-135M``'s config.json (``build_llama``'s arguments), with
#: Llama's initialisation std of 0.02 (the tests' tiny Llamas draw 0.2, for heads far from uniform).
SMOLLM2_SIZES: dict[str, object] = {
    "hidden": 576,
    "layers": 30,
    "heads": 9,
    "kv_heads": 3,
    "vocab_size": 49152,
    "rope_theta": 1e5,
    "intermediate_size": 1536,
    "tie_word_embeddings": True,
    "initializer_range": 0.02,
}


def build_smollm2(folder: Path, seed: int = 0) -> Path:
    """A Llama of SmolLM2-135M's sizes (:data:`SMOLLM2_SIZES`: 576 wide, 30 layers, 9 query and 3 key/value heads,
    RoPE base 100,000, a 49,152-token embedding tied to the head) with random weights (``seed``) and the tokenizer
    trained here, saved in bfloat16 as the hub's file is (loaded in float32, every weight is then in memory)."""
    return build_llama(folder, seed=seed, save_dtype="bfloat16", **SMOLLM2_SIZES)  # type: ignore[arg-type]
