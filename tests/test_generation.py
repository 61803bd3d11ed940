"""Greedy generation by a causal checkpoint, with the shown layer followed by our layer and its own cache.

Every number is compared with the checkpoint's own: its ``generate`` (tokens and per-step attentions), its
forward's attention block output, the weights in its files.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import torch

from mha.config import AttentionConfig, WeightSpec
from mha.counting import KVCacheSize
from mha.kv_cache import KVCache
from mha.memory import CPU
from mha.sources.checkpoint.check import CHECKPOINT_TOLERANCE
from mha.sources.checkpoint.generation import (
    GENERATE_MAX,
    CheckpointDecoder,
    DecodeStep,
    Generation,
    LayerFollower,
    first_token_shares,
    generate,
    record,
    sink_layers,
    sink_shares,
)
from mha.sources.checkpoint.loader import load_checkpoint
from mha.sources.checkpoint.source import PretrainedSource

CAUSAL = ["gpt2", "llama", "qwen2"]
PROMPT = "the cat sat on the mat"
NEW = 16


@pytest.fixture
def listed(tiny_gpt2, tiny_llama, tiny_qwen2, tiny_checkpoint, monkeypatch):
    """The tests' GPT-2, Llama, Qwen2 and BERT on the server's list."""
    listed = f"gpt2={tiny_gpt2},llama={tiny_llama},qwen2={tiny_qwen2},tiny={tiny_checkpoint}"
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", listed)
    return {"gpt2": tiny_gpt2, "llama": tiny_llama, "qwen2": tiny_qwen2, "tiny": tiny_checkpoint}


def _hf_generate(checkpoint, encoded, new_tokens):
    """The checkpoint's own greedy generation, with its attentions per step."""
    with torch.inference_mode():
        return checkpoint.language_model.generate(
            **encoded.inputs,
            max_new_tokens=new_tokens,
            do_sample=False,
            output_attentions=True,
            return_dict_in_generate=True,
        )


def _config(name: str, layer: int = 0, tokens: str = PROMPT) -> AttentionConfig:
    return AttentionConfig(weights="pretrained", checkpoint=name, tokens=tokens, layer=layer)


# ---------------------------------------------------------------- the loaded language model
@pytest.mark.parametrize("name", CAUSAL)
def test_a_causal_checkpoint_holds_its_language_model_around_the_model_it_reads(listed, name):
    from safetensors.torch import load_file

    checkpoint = load_checkpoint(name)
    lm = checkpoint.language_model
    assert checkpoint.generates and lm is not None
    assert lm.base_model is checkpoint.model  # one set of weights: the base model read is the one inside
    head, embedding = lm.get_output_embeddings().weight, checkpoint.model.get_input_embeddings().weight
    assert (head is embedding) == bool(lm.config.tie_word_embeddings)
    if head is not embedding:  # an untied head is the one in the files, not a random one
        saved = load_file(str(listed[name] / "model.safetensors"))
        torch.testing.assert_close(head, saved["lm_head.weight"], rtol=0, atol=0)


def test_an_encoder_has_no_language_model_and_does_not_generate(listed):
    assert load_checkpoint("tiny").language_model is None
    source = PretrainedSource(WeightSpec("pretrained", checkpoint="tiny"))
    assert not source.generates
    with pytest.raises(ValueError, match="tiny has no language-model head: it cannot generate"):
        source.generate(_config("tiny"), 4)


def test_a_gpt2_saved_without_its_head_is_read_but_does_not_generate(tmp_path, tiny_gpt2, monkeypatch):
    from transformers import AutoTokenizer, GPT2Config, GPT2Model

    folder = tmp_path / "headless"
    config = GPT2Config(vocab_size=400, n_positions=64, n_embd=32, n_layer=2, n_head=4, tie_word_embeddings=False)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        GPT2Model(config).save_pretrained(folder)
    AutoTokenizer.from_pretrained(tiny_gpt2).save_pretrained(folder)
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", f"headless={folder}")
    checkpoint = load_checkpoint("headless")
    assert checkpoint.language_model is None and not checkpoint.generates
    assert type(checkpoint.model).__name__ == "GPT2Model" and len(checkpoint.model.h) == 2
    with pytest.raises(ValueError, match="cannot generate"):
        generate(checkpoint, checkpoint.encode(PROMPT), 0, 4)


# ---------------------------------------------------------------- tokens and weights against generate
@pytest.mark.parametrize("name", CAUSAL)
def test_greedy_tokens_and_every_steps_weights_are_the_checkpoints_own(listed, name):
    checkpoint = load_checkpoint(name)
    encoded = checkpoint.encode(PROMPT)
    ids = encoded.inputs["input_ids"]  # (1, L)
    length = ids.size(1)
    assert list(ids[0]) == checkpoint.tokenizer(PROMPT)["input_ids"]  # with the tokenizer's BOS where it adds one
    hf = _hf_generate(checkpoint, encoded, NEW)
    hf_new = hf.sequences[0, length:].tolist()
    eos = checkpoint.language_model.generation_config.eos_token_id  # an int, a list or None
    hf_ended = bool(hf_new) and hf_new[-1] in (eos if isinstance(eos, list) else [eos])  # generate's own end
    layers, heads = checkpoint.sizes.num_layers, checkpoint.sizes.num_heads
    kv_heads = getattr(checkpoint.model.config, "num_key_value_heads", heads)  # GPT-2: one per query head
    d_k = checkpoint.sizes.d_model // heads
    for layer in range(layers):
        generation = generate(checkpoint, encoded, layer, NEW)
        assert list(generation.new_ids) == hf_new
        assert generation.ended_at_eos == hf_ended and not generation.stopped
        assert generation.new_tokens == checkpoint.display_tokens(hf_new)
        assert generation.prompt_tokens == encoded.tokens and generation.prompt_ids == tuple(ids[0].tolist())
        assert len(generation.steps) == len(hf_new) == len(hf.attentions)
        for step, attentions in zip(generation.steps, hf.attentions, strict=True):  # attentions: layers x (1,H,n,t)
            t = length + step.index
            theirs = attentions[layer][0, :, -1]  # (H, t): the row that chose the step's token
            assert step.position == t - 1 and step.token_id == hf_new[step.index]
            assert step.q_shape == (1, heads, length if step.index == 0 else 1, d_k)
            assert step.cache_shape == (1, kv_heads, t, d_k) and step.weights.shape == (heads, t)
            torch.testing.assert_close(step.weights, theirs, rtol=0, atol=CHECKPOINT_TOLERANCE)
            torch.testing.assert_close(step.checkpoint_weights, theirs, rtol=0, atol=1e-6)
            # max |ours - the checkpoint's|, against generate's row: off by no more than theirs differ (here 0)
            apart = float((step.checkpoint_weights - theirs).abs().max())
            assert abs(step.max_abs_weights - float((step.weights - theirs).abs().max())) <= apart + 1e-9
            shares = torch.stack([a[0, :, -1, 0].mean() for a in attentions])  # (layers,)
            torch.testing.assert_close(step.first_token_share, shares, rtol=0, atol=1e-6)
        assert generation.max_abs_weights <= CHECKPOINT_TOLERANCE
    assert generation.cache_size == KVCacheSize(layers, kv_heads, d_k, torch.float32)
    assert generation.cache_size.bytes_per_token == 2 * layers * kv_heads * d_k * 4


def test_its_three_parts_run_by_hand_make_generates_steps(listed):
    """The checkpoint decodes one token, our layer follows through its cache, the step is recorded: run one after
    the other by hand, they give generate's steps, each forward at the positions after the last."""
    checkpoint = load_checkpoint("llama")
    encoded = checkpoint.encode(PROMPT)
    layer, length = 1, encoded.inputs["input_ids"].size(1)
    generation = generate(checkpoint, encoded, layer, 4)
    decoder = CheckpointDecoder(checkpoint, CPU)
    follower = LayerFollower(
        checkpoint, decoder.base_model, checkpoint.layer_model(layer, CPU, "float32"), layer, length + 4
    )
    fed = encoded.inputs["input_ids"]  # (1, L): the prompt, then each token chosen
    for step in generation.steps:
        start = 0 if step.index == 0 else length + step.index - 1
        decoded = decoder.decode(fed)
        assert (decoded.start, decoded.fed, decoded.position) == (start, fed.size(1), step.position)
        assert decoded.token_id == step.token_id and decoder.length == step.position + 1
        trace = follower.follow(decoded)
        assert trace.appended == tuple(range(start, step.position + 1)) and follower.cache.length == step.length
        made = record(step.index, step.token, decoded, trace, layer, 0.0)
        for name in ("weights", "checkpoint_weights", "first_token_share"):
            torch.testing.assert_close(getattr(made, name), getattr(step, name), rtol=0, atol=0)
        assert (made.q_shape, made.cache_shape, made.max_abs_weights) == (
            step.q_shape,
            step.cache_shape,
            step.max_abs_weights,
        )
        fed = torch.tensor([[decoded.token_id]])  # (1, 1)


@pytest.mark.parametrize(
    "first",
    ["mha.sources.checkpoint.generation", "mha.sources.checkpoint.generation_service", "mha.sources.checkpoint.source"],
)
def test_the_generation_modules_import_first_in_a_fresh_process(first):
    """No import cycle between the generation and the checkpoint source, whichever a process imports first."""
    root = Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, "-c", f"import {first}"], cwd=root, check=True, timeout=120)


@pytest.mark.parametrize("name", CAUSAL)
def test_the_source_generates_from_the_configs_text_and_layer(listed, name):
    checkpoint = load_checkpoint(name)
    text = "the dog sat on the cat"
    source = PretrainedSource(WeightSpec("pretrained", checkpoint=name))
    layer = checkpoint.sizes.num_layers - 1
    generation = source.generate(_config(name, layer, text), GENERATE_MAX)
    hf = _hf_generate(checkpoint, checkpoint.encode(text), GENERATE_MAX)
    assert list(generation.new_ids) == hf.sequences[0, len(generation.prompt_ids) :].tolist()
    assert generation.layer == layer and generation.checkpoint == name
    for step, attentions in zip(generation.steps, hf.attentions, strict=True):
        torch.testing.assert_close(step.weights, attentions[layer][0, :, -1], rtol=0, atol=CHECKPOINT_TOLERANCE)


@pytest.mark.parametrize("name", CAUSAL)
def test_our_layers_steps_give_the_checkpoints_attention_output_for_every_position(listed, name):
    """Prefill then one token at a time through our layer's forward_step: row by row the block's own output."""
    checkpoint = load_checkpoint(name)
    generation = generate(checkpoint, checkpoint.encode(PROMPT), 0, 8)
    ids = torch.tensor([[*generation.prompt_ids, *generation.new_ids]])  # (1, T)
    encoded = checkpoint.encode_ids(ids)
    length = len(generation.prompt_ids)
    for layer in range(checkpoint.sizes.num_layers):
        model = checkpoint.layer_model(layer, torch.device("cpu"), "float32")  # our layer, on the CPU here
        x = checkpoint.layer_input(encoded, layer).cpu()  # (1, T, D), wherever the checkpoint ran
        _, block = checkpoint.forward_with_block_output(encoded, layer)
        block = block.cpu()  # (1, T, D): values compared on the CPU
        cache = KVCache.for_layer(model, ids.size(1))
        with torch.inference_mode():
            rows = [model.forward_step(x[:, :length], cache, 0).output]
            rows += [model.forward_step(x[:, i : i + 1], cache, i).output for i in range(length, ids.size(1))]
        ours = torch.cat(rows, dim=1)  # (1, T, D)
        scale = max(1.0, float(block.abs().max()))
        torch.testing.assert_close(ours, block, rtol=0, atol=CHECKPOINT_TOLERANCE * scale)


def test_an_end_of_text_token_ends_the_generation_as_it_ends_generate(listed, monkeypatch):
    checkpoint = load_checkpoint("llama")
    encoded = checkpoint.encode(PROMPT)
    full = generate(checkpoint, encoded, 0, NEW).new_ids
    eos = full[3]
    first = full.index(eos)  # the first time that token is chosen
    monkeypatch.setattr(checkpoint.language_model.generation_config, "eos_token_id", eos)
    generation = generate(checkpoint, encoded, 0, NEW)
    hf = _hf_generate(checkpoint, encoded, NEW).sequences[0, len(generation.prompt_ids) :].tolist()
    assert generation.ended_at_eos and not generation.stopped
    assert list(generation.new_ids) == list(full[: first + 1]) == hf  # the end token is the last new token
    assert len(generation.steps) == first + 1 and generation.requested == NEW
    exact = generate(checkpoint, encoded, 0, first + 1)  # the end token is also the last one asked for
    assert exact.ended_at_eos and list(exact.new_ids) == hf and hf[-1] == eos


def test_stop_ends_it_before_the_next_step_and_progress_counts_the_steps(listed):
    checkpoint = load_checkpoint("gpt2")
    encoded = checkpoint.encode(PROMPT)
    stop, calls = threading.Event(), []

    def progress(done: int, total: int) -> None:
        calls.append((done, total))
        if done == 3:
            stop.set()

    generation = generate(checkpoint, encoded, 1, 10, stop=stop, progress=progress)
    assert generation.stopped and not generation.ended_at_eos
    assert calls == [(1, 10), (2, 10), (3, 10)]
    assert generation.new_ids == generate(checkpoint, encoded, 1, 10).new_ids[:3]
    assert [step.index for step in generation.steps] == [0, 1, 2]


@pytest.mark.parametrize("count", [0, GENERATE_MAX + 1, -1, True, 2.0])
def test_a_token_count_outside_one_to_the_cap_is_refused_naming_it(listed, count):
    checkpoint = load_checkpoint("gpt2")
    with pytest.raises(ValueError, match=rf"from 1 to GENERATE_MAX={GENERATE_MAX}, got {count!r}"):
        generate(checkpoint, checkpoint.encode(PROMPT), 0, count)


def test_a_layer_a_padded_prompt_or_too_many_positions_are_refused_with_the_numbers(listed):
    gpt2 = load_checkpoint("gpt2")
    with pytest.raises(ValueError, match="gpt2 has layers 0 to 2, got layer=3"):
        generate(gpt2, gpt2.encode(PROMPT), 3, 4)
    long = gpt2.encode_ids(torch.full((1, 150), int(gpt2.encode("cat").inputs["input_ids"][0, 0])))
    positions = gpt2.language_model.config.n_positions
    with pytest.raises(
        ValueError, match=rf"150 prompt tokens and 11 new ones need 161 positions; gpt2 has {positions}"
    ):
        generate(gpt2, long, 0, 11)
    filled = generate(gpt2, long, 0, positions - 150)  # every position: no end-of-text token on the way
    assert len(filled.new_ids) == positions - 150 and not filled.ended_at_eos
    qwen2 = load_checkpoint("qwen2")
    ids = qwen2.encode(PROMPT).inputs["input_ids"]  # (1, L)
    padded = qwen2.encode_ids(torch.cat([ids, torch.tensor([[qwen2.tokenizer.pad_token_id]])], dim=1))
    with pytest.raises(ValueError, match="without padding"):
        generate(qwen2, padded, 0, 4)


def test_a_bert_tokenizers_sep_is_left_off_the_prompt_and_the_tokens_are_the_language_models_own(listed_gpt2):
    """gpt2-chinese: a GPT-2 with a BERT tokenizer, whose every text is [CLS] ... [SEP]. Generation goes on from
    the text's last token: the prompt keeps [CLS] and ends before [SEP]."""
    checkpoint = load_checkpoint("gpt2-chinese")
    tokenizer = checkpoint.tokenizer
    assert tokenizer(PROMPT)["input_ids"][-1] == tokenizer.sep_token_id  # the frame the prompt must not end with
    source = PretrainedSource(WeightSpec("pretrained", checkpoint="gpt2-chinese"))
    generation = source.generate(_config("gpt2-chinese", 1), NEW)
    prompt = [tokenizer.cls_token_id, *tokenizer(PROMPT, add_special_tokens=False)["input_ids"]]
    assert list(generation.prompt_ids) == prompt and generation.prompt_ids[-1] != tokenizer.sep_token_id
    assert generation.prompt_tokens[0] == "[CLS]" and "[SEP]" not in generation.prompt_tokens
    with torch.inference_mode():
        hf = checkpoint.language_model.generate(
            input_ids=torch.tensor([prompt]),
            attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
            max_new_tokens=NEW,
            do_sample=False,
        )
    assert list(generation.new_ids) == hf[0, len(prompt) :].tolist()


# ---------------------------------------------------------------- attention sinks
def _step(index: int, attentions: list[torch.Tensor]) -> DecodeStep:
    heads, t = attentions[0].shape[1], attentions[0].shape[-1]
    row = attentions[0][0, :, -1]
    return DecodeStep(index, t - 1, "x", 0, (1, heads, 1, 2), (1, heads, t, 2), row, row, 0.0,
                      first_token_shares(attentions), 0.0)  # fmt: skip


def _generation(steps: list[DecodeStep]) -> Generation:
    return Generation("built", 0, ("a",), (0,), ("x",) * len(steps), (0,) * len(steps), tuple(steps), len(steps),
                      False, False, KVCacheSize(3, 2, 2))  # fmt: skip


def test_a_layer_whose_rows_put_most_weight_on_the_first_token_is_named_a_sink():
    """Three layers, rows of t = 4 .. 7 positions: layer 1's heads put 0.8 on position 0, layer 0 spreads evenly,
    layer 2 puts 2.5 × the even share there."""
    steps = []
    for index, t in enumerate(range(4, 8)):
        even = torch.full((1, 2, 1, t), 1.0 / t)  # (1, H, 1, t)
        sink = torch.full((1, 2, 1, t), 0.2 / (t - 1))
        sink[..., 0] = 0.8
        mild = torch.full((1, 2, 1, t), (1 - 2.5 / t) / (t - 1))
        mild[..., 0] = 2.5 / t
        steps.append(_step(index, [even, sink, mild]))
    generation = _generation(steps)
    shares, uniform = sink_shares(generation)
    torch.testing.assert_close(shares, torch.tensor([sum(1 / t for t in range(4, 8)) / 4, 0.8, 2.5 * uniform]))
    assert uniform == pytest.approx(sum(1 / t for t in range(4, 8)) / 4)
    assert sink_layers(generation) == (1,)
    assert sink_layers(generation, threshold=2.0) == (1, 2)
    assert sink_layers(generation, threshold=0.5) == (0, 1, 2)
    with pytest.raises(ValueError, match="no step"):
        sink_shares(_generation([]))


def test_the_sink_shares_of_a_generation_are_the_checkpoints_own_mean_weight_on_position_0(listed):
    checkpoint = load_checkpoint("llama")
    encoded = checkpoint.encode(PROMPT)
    generation = generate(checkpoint, encoded, 0, 10)
    hf = _hf_generate(checkpoint, encoded, 10)
    per_step = torch.stack([torch.stack([a[0, :, -1, 0].mean() for a in step]) for step in hf.attentions])
    shares, uniform = sink_shares(generation)
    torch.testing.assert_close(shares, per_step.mean(dim=0), rtol=0, atol=1e-6)
    length = encoded.inputs["input_ids"].size(1)
    assert uniform == pytest.approx(sum(1 / (length + i) for i in range(len(hf.attentions))) / len(hf.attentions))
    # No layer of the tiny Llama is a sink at the default 3 x uniform: name the layers above a threshold between
    # its layers' ratios (the checkpoint's own shares over 1/t by hand), so the rule picks some layers and not all.
    ratios = per_step.mean(dim=0) / uniform  # (layers,)
    threshold = float(ratios.min() + ratios.max()) / 2
    expected = tuple(i for i, ratio in enumerate(ratios.tolist()) if ratio > threshold)
    assert 0 < len(expected) < len(ratios)
    assert sink_layers(generation, threshold=threshold) == expected


def test_the_cache_bytes_per_token_count_every_layer_in_float32(listed):
    checkpoint = load_checkpoint("qwen2")
    generation = generate(checkpoint, checkpoint.encode(PROMPT), 0, 2)
    config = checkpoint.model.config
    head_dim = config.hidden_size // config.num_attention_heads
    one_layer = KVCache(1, config.num_key_value_heads, 1, head_dim)  # one position of one layer, float32
    assert generation.cache_size.bytes_per_token == config.num_hidden_layers * (one_layer.k.nbytes + one_layer.v.nbytes)
    saved = json.loads((listed["qwen2"] / "config.json").read_text())  # the sizes as the checkpoint's files give them
    layers, kv_heads = saved["num_hidden_layers"], saved["num_key_value_heads"]
    d_k = saved.get("head_dim") or saved["hidden_size"] // saved["num_attention_heads"]
    assert generation.cache_size.bytes_per_token == 2 * layers * kv_heads * d_k * 4  # K and V, float32
