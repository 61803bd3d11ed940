"""The pretrained source on tiny GPT-2s built here (no network): the family's layer mapping (``c_attn`` split
and transposed) checked against the checkpoint's own attentions and ``c_proj`` output and against a float64
computation from the ``Conv1D`` weights themselves; Pre-Norm input; the causal mask kept whatever the page's
mask; tokens (byte-level BPE decoded; a BERT tokenizer's [CLS]/[SEP] read from the tokenizer); refusals.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
import torch
from tiny_checkpoint import GPT2_HEADS, GPT2_HIDDEN, GPT2_LAYERS, INDUCTION_HEAD, PREVIOUS_HEAD

from components.i18n import t
from mha.checkpoints import DEFAULT_CHECKPOINTS, checkpoint_names, chinese_checkpoint
from mha.config import PRETRAINED, AttentionConfig, ConfigError, WeightSpec
from mha.export import export_basename
from mha.masks import causal_mask
from mha.pipeline import run_attention
from mha.sources import SourceSizes, SourceUnavailableError, make_source, source_sizes
from mha.sources.checkpoint.loader import load_checkpoint
from mha.sources.families import FAMILIES, SUPPORTED_TYPES
from mha.sources.families.bert import BERT
from mha.sources.families.gpt2 import GPT2
from mha.sources.families.llama import LLAMA
from mha.sources.families.qwen2 import QWEN2
from mha.sources.families.vit import DEIT, VIT

ANIMAL = "The animal didn't cross the street because it was too tired"
TOLERANCE = 1e-5


@pytest.fixture(autouse=True)
def _gpt2s_on_the_list(listed_gpt2):
    """Every test here runs on a server that lists the tiny GPT-2s (and the tiny BERT)."""


def config(**changes: object) -> AttentionConfig:
    return AttentionConfig(**{"weights": PRETRAINED, "checkpoint": "gpt2", "tokens": ANIMAL, **changes})


def their_forward(folder: Path, text: str, layer: int):
    """The checkpoint run by ``transformers`` alone: its tokens, what its layer's attention received (a pre-hook),
    its attentions and what ``c_proj`` returned (a hook)."""
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    pad = tokenizer.pad_token_id
    mask = torch.ones_like(ids) if pad is None else (ids != pad).long()
    received, returned = [], []
    attention = model.h[layer].attn
    pre = attention.register_forward_pre_hook(
        lambda _m, args, kwargs: received.append(args[0] if args else kwargs["hidden_states"]), with_kwargs=True
    )
    post = attention.c_proj.register_forward_hook(lambda _m, _i, out: returned.append(out))
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask, output_attentions=True)
    pre.remove()
    post.remove()
    return model, tokenizer, ids, received[0], out.attentions[layer], returned[0]


# ---------------------------------------------------------------- the family and the list
def test_the_families_read_bert_gpt2_llama_qwen2_and_vit_and_the_list_offers_two_gpt2s():
    assert SUPPORTED_TYPES == ("bert", "gpt2", "llama", "qwen2", "vit", "deit")  # the model_type names of config.json
    assert SUPPORTED_TYPES == (BERT, GPT2, LLAMA, QWEN2, VIT, DEIT)
    assert FAMILIES[GPT2].causal and not FAMILIES[BERT].causal and not FAMILIES[VIT].causal
    assert FAMILIES[DEIT] is FAMILIES[VIT]
    assert next(iter(DEFAULT_CHECKPOINTS)) == "minilm"
    assert DEFAULT_CHECKPOINTS["distilgpt2"] == "distilbert/distilgpt2"
    assert DEFAULT_CHECKPOINTS["gpt2-chinese"] == "uer/gpt2-chinese-cluecorpussmall"
    assert chinese_checkpoint(tuple(DEFAULT_CHECKPOINTS)) == "bert-base-chinese"  # still the first Chinese one
    assert chinese_checkpoint(("minilm", "distilgpt2", "gpt2-chinese")) == "gpt2-chinese"


def test_sizes_come_from_gpt2s_config_json(tiny_gpt2):
    config_json = json.loads((tiny_gpt2 / "config.json").read_text())
    assert (config_json["n_embd"], config_json["n_head"], config_json["n_layer"]) == (32, 4, 3)  # GPT-2's own keys
    sizes = source_sizes(WeightSpec(PRETRAINED, checkpoint="gpt2"))
    assert sizes == SourceSizes(GPT2_HIDDEN, GPT2_HEADS, GPT2_LAYERS, causal=True)  # read before any weight loads


# ---------------------------------------------------------------- the layer against the checkpoint
@pytest.mark.parametrize("name", ["gpt2", "gpt2-chinese"])
@pytest.mark.parametrize("layer", range(GPT2_LAYERS))
def test_every_layer_matches_the_checkpoints_own_attentions_and_output(name, layer, tiny_gpt2, chinese_gpt2):
    folder = {"gpt2": tiny_gpt2, "gpt2-chinese": chinese_gpt2}[name]
    run = run_attention(config(checkpoint=name, layer=layer))
    _, tokenizer, ids, received, attentions, returned = their_forward(folder, ANIMAL, layer)
    if name == "gpt2":  # byte-level BPE: the decoded pieces give the text back
        assert len(run.tokens) == ids.size(1) and "".join(run.tokens) == ANIMAL
    else:  # the BERT tokenizer's own tokens
        assert run.tokens == tuple(tokenizer.convert_ids_to_tokens(ids[0].tolist()))
    assert (run.d_model, run.num_heads, run.num_layers, run.layer) == (GPT2_HIDDEN, GPT2_HEADS, GPT2_LAYERS, layer)
    # values compared on the CPU: the run is on the suite's device, the checkpoint's own forward here on the CPU
    assert float((run.x.cpu() - received.cpu()).abs().max()) <= 1e-6  # the input: ln_1 of the residual stream
    assert float((run.trace.weights.cpu() - attentions.cpu()).abs().max()) <= TOLERANCE  # per head, (1, H, L, L)
    assert float((run.trace.output.cpu() - returned.cpu()).abs().max()) <= TOLERANCE  # c_proj's output
    check = make_source(config(checkpoint=name).weight_spec).compare(
        run.config, run.trace.weights, run.trace.output, run.mask
    )
    assert check.applies and check.passed and check.how == "check.checkpoint_how_gpt2"
    assert max(check.max_abs_weights, check.max_abs_output) <= TOLERANCE


def test_c_attn_is_split_in_three_and_transposed_and_c_proj_is_w_o(tiny_gpt2):
    gpt2 = load_checkpoint("gpt2").model
    source = make_source(config().weight_spec)
    d = GPT2_HIDDEN
    for layer in range(GPT2_LAYERS):
        model = run_attention(config(layer=layer), source).model
        c_attn, c_proj = gpt2.h[layer].attn.c_attn, gpt2.h[layer].attn.c_proj
        assert c_attn.weight.shape == (d, 3 * d)  # Conv1D: (in, out), Q K V side by side
        their_weight, their_bias = c_attn.weight.cpu(), c_attn.bias.cpu()  # values compared on the CPU
        for index, name in enumerate(("W_q", "W_k", "W_v")):
            projection = getattr(model, name)
            assert torch.equal(projection.weight.cpu(), their_weight[:, index * d : (index + 1) * d].T)
            assert torch.equal(projection.bias.cpu(), their_bias[index * d : (index + 1) * d])
        assert torch.equal(model.W_o.weight.cpu(), c_proj.weight.cpu().T)
        assert torch.equal(model.W_o.bias.cpu(), c_proj.bias.cpu())


def test_float64_run_equals_attention_computed_from_the_conv1d_weights_by_hand(tiny_gpt2):
    """An independent reference: x @ c_attn.weight + bias (Conv1D's own formula), split, causal softmax, c_proj."""
    layer = 1
    run = run_attention(config(layer=layer, dtype="float64"))
    block = load_checkpoint("gpt2").model.h[layer].attn
    x = run.x[0].cpu()  # (L, D) float64; the reference is computed on the CPU (mps has no float64)
    length, d, heads = x.size(0), GPT2_HIDDEN, GPT2_HEADS
    d_k = d // heads
    qkv = x @ block.c_attn.weight.cpu().double() + block.c_attn.bias.cpu().double()  # (L, 3D)
    q, k, v = (part.view(length, heads, d_k).transpose(0, 1) for part in qkv.split(d, dim=-1))  # 3 x (H, L, d_k)
    scores = q @ k.transpose(-1, -2) / math.sqrt(d_k)  # (H, L, L)
    scores = scores.masked_fill(~torch.ones(length, length, dtype=torch.bool).tril(), float("-inf"))
    weights = scores.softmax(dim=-1)  # (H, L, L)
    context = (weights @ v).transpose(0, 1).reshape(length, d)  # (L, D)
    output = context @ block.c_proj.weight.cpu().double() + block.c_proj.bias.cpu().double()  # (L, D)
    assert run.x.dtype == torch.float64
    torch.testing.assert_close(run.trace.weights[0].cpu(), weights, rtol=0, atol=1e-12)
    torch.testing.assert_close(run.trace.output[0].cpu(), output, rtol=0, atol=1e-12)


# ---------------------------------------------------------------- the causal mask
@pytest.mark.parametrize("mask_type", ["none", "causal", "padding", "window"])
def test_a_gpt2_layer_always_runs_under_its_causal_mask(mask_type):
    run = run_attention(config(mask_type=mask_type, window=1))
    length = len(run.tokens)
    assert run.config.mask_type == "causal" and run.config.block_pad == (mask_type == "padding")
    assert torch.equal(run.mask.cpu().expand(1, 1, length, length), causal_mask(length))  # no [PAD]: the triangle
    above = ~torch.ones(length, length, dtype=torch.bool).tril()
    assert float(run.trace.weights[0].cpu()[:, above].abs().max()) == 0.0  # no token sees a later one
    assert [note.code for note in run.notes] == ["family_gpt2", "gpt2_unframed"]  # the first says it is causal
    check = make_source(config().weight_spec).compare(run.config, run.trace.weights, run.trace.output, run.mask)
    assert check.applies and check.passed
    assert export_basename(run.config).endswith("_causal" + ("_nopad" if mask_type == "padding" else ""))


def test_the_reproducing_script_rebuilds_the_causal_run_the_sidebar_did_not_name(tmp_path):
    """The run's config says the mask that ran (causal), so the script and the export name follow it."""
    from test_reproduce import _run_script

    from mha.export import trace_pt
    from mha.reproduce import reproduce_script

    run = run_attention(config(mask_type="none", layer=1))
    (tmp_path / f"{export_basename(run.config)}.pt").write_bytes(trace_pt(run))  # the script reads the .pt
    saved, stdout = _run_script(reproduce_script(run), tmp_path)
    torch.testing.assert_close(saved["weights"], run.trace.weights.cpu(), atol=1e-6, rtol=0)
    torch.testing.assert_close(saved["output"], run.trace.output.cpu(), atol=1e-6, rtol=0)
    assert stdout.rstrip().endswith("match"), stdout


def test_pad_tokens_of_a_bert_tokenizer_are_masked_on_top_of_the_causal_mask(chinese_gpt2):
    text = "the cat sat [PAD] [PAD]"
    padded = config(checkpoint="gpt2-chinese", tokens=text, mask_type="padding", layer=1)
    run = run_attention(padded)
    assert run.tokens == ("[CLS]", "the", "cat", "sat", "[PAD]", "[PAD]", "[SEP]")
    keys = torch.tensor([True, True, True, True, False, False, True])
    expected = causal_mask(7) & keys.view(1, 1, 1, 7)  # (1, 1, L, L)
    assert torch.equal(run.mask.cpu().expand(1, 1, 7, 7), expected)
    _, _, _, _, attentions, returned = their_forward(chinese_gpt2, text, 1)
    assert float(attentions[..., 4:6].abs().max()) == 0.0  # the checkpoint gives the pads no weight either
    assert float((run.trace.weights.cpu() - attentions.cpu()).abs().max()) <= TOLERANCE
    assert float((run.trace.output.cpu() - returned.cpu()).abs().max()) <= TOLERANCE
    source = make_source(padded.weight_spec)
    assert source.compare(run.config, run.trace.weights, run.trace.output, run.mask).passed
    unmasked = run_attention(config(checkpoint="gpt2-chinese", tokens=text, layer=1))
    check = source.compare(unmasked.config, unmasked.trace.weights, unmasked.trace.output, unmasked.mask)
    assert (check.applies, check.reason) == (False, "pad_unmasked")


# ---------------------------------------------------------------- tokens
def test_byte_level_tokens_are_shown_as_the_text_they_stand_for():
    run = run_attention(config())
    assert run.tokens[:4] == ("The", " animal", " didn", "'t")  # no [CLS], a word's space in its token
    assert "".join(run.tokens) == ANIMAL  # the pieces give the text back
    pad = run_attention(config(tokens="the cat [PAD]"))
    assert "[PAD]" not in pad.tokens  # GPT-2's tokenizer has no pad token: "[PAD]" is text
    assert "".join(pad.tokens) == "the cat [PAD]"


def test_chinese_text_in_a_byte_level_gpt2_is_noted_and_pointed_at_the_chinese_checkpoint():
    run = run_attention(config(tokens="小明喜欢打球"))
    pieces = sum("\ufffd" in token for token in run.tokens)
    assert pieces >= 6  # each character is 3 UTF-8 bytes, none a token of its own here
    notes = {note.code: dict(note.params) for note in run.notes}
    assert notes["byte_pieces"] == {"checkpoint": "gpt2", "count": pieces, "total": len(run.tokens)}
    assert notes["unk_chinese"]["suggestion"] == "gpt2-chinese"


def test_a_bert_tokenizers_frame_is_read_from_the_tokenizer_and_its_sep_labelled():
    run = run_attention(config(checkpoint="gpt2-chinese"))
    assert run.tokens[0] == "[CLS]" and run.tokens[-1] == "[SEP]"
    assert [note.code for note in run.notes][:2] == ["family_gpt2", "gpt2_framed"]
    plain = run_attention(config())
    assert "[CLS]" not in plain.tokens and "[SEP]" not in plain.tokens


def test_empty_and_over_long_texts_are_refused_with_the_checkpoints_tokens():
    for empty in ("", "   "):
        with pytest.raises(ConfigError) as error:
            run_attention(config(tokens=empty))
        assert (error.value.field, error.value.code) == ("tokens", "empty")


def test_a_text_longer_than_the_checkpoints_positions_is_refused(tmp_path, monkeypatch):
    from tiny_checkpoint import build_gpt2

    folder = build_gpt2(tmp_path / "short", positions=8)
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", f"short={folder}")
    with pytest.raises(ConfigError) as error:
        run_attention(config(checkpoint="short"))
    assert (error.value.field, error.value.code) == ("tokens", "too_many") and error.value.params["high"] == 8


# ---------------------------------------------------------------- head labels on the learner's text
def test_the_planted_heads_are_labelled_previous_token_and_induction():
    text = "the cat sat on a mat the cat sat on a mat"
    first = run_attention(config(checkpoint="planted", tokens=text, layer=PREVIOUS_HEAD[0]))
    second = run_attention(config(checkpoint="planted", tokens=text, layer=INDUCTION_HEAD[0]))
    assert first.head_labels[PREVIOUS_HEAD[1]].name == "previous token"
    assert second.head_labels[INDUCTION_HEAD[1]].name == "induction"
    assert second.head_labels[INDUCTION_HEAD[1]].share > 0.99
    # independent of the label pass: from the second "cat" (8) to what followed the first (3: "sat")
    assert float(second.trace.weights[0, INDUCTION_HEAD[1], 8, 3]) > 0.99


# ---------------------------------------------------------------- refusals
def test_a_layer_the_checkpoint_lacks_is_refused():
    with pytest.raises(ConfigError) as error:
        run_attention(config(layer=GPT2_LAYERS))
    assert (error.value.field, error.value.code) == ("layer", "out_of_range")
    assert error.value.params == {"value": GPT2_LAYERS, "low": 0, "high": GPT2_LAYERS - 1}


@pytest.mark.parametrize(
    ("changes", "variant"),
    [
        ({"model_type": "t5"}, "t5"),
        ({"scale_attn_by_inverse_layer_idx": True}, "gpt2 scaled by 1/(layer + 1)"),
        ({"scale_attn_weights": False}, "gpt2 without the 1/sqrt(d_k) scaling"),
        ({"add_cross_attention": True}, "gpt2 with cross-attention"),
    ],
)
def test_gpt2_variants_this_page_cannot_read_are_refused_naming_the_families(
    tiny_gpt2, tmp_path, monkeypatch, changes, variant
):
    folder = shutil.copytree(tiny_gpt2, tmp_path / "other")
    path = folder / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", f"other={folder}")
    with pytest.raises(SourceUnavailableError) as error:
        source_sizes(WeightSpec(PRETRAINED, checkpoint="other"))
    assert error.value.code == "not_supported"
    assert error.value.params == {
        "name": "other",
        "model_type": variant,
        "supported": "bert, gpt2, llama, qwen2, vit, deit",
    }
    for lang in ("en", "zh"):
        assert "bert, gpt2, llama, qwen2, vit, deit" in t("source.not_supported", lang=lang, **error.value.params)


def test_the_bert_checkpoint_on_the_same_list_is_unchanged():
    run = run_attention(config(checkpoint="tiny", mask_type="none"))
    assert run.tokens[0] == "[CLS]" and run.config.mask_type == "none" and run.mask is None
    assert not [note for note in run.notes if note.code.startswith(("family", "gpt2", "causal"))]
    assert "tiny" in checkpoint_names()
