"""The pretrained source on tiny Llama and Qwen2 checkpoints built here (no network): their projections copied as they
are (Llama without biases; Qwen2's q, k, v biases and a zero W_o bias), grouped K/V heads and rotary positions with
the checkpoint's rope_theta, checked against the checkpoint's own attentions, ``o_proj`` output and ``rotary_emb``
and against a float64 computation written here from the checkpoint's weights; RMSNorm Pre-Norm input; the causal
mask kept whatever the page's mask; what the tokenizer adds; refusals naming the values; the head finder and the
pattern search; the page (AppTest).
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
import torch
from conftest import HeadPicker
from streamlit.testing.v1 import AppTest
from test_languages import HAN, leftover_english, shown_texts, user_tokens
from tiny_checkpoint import LLAMA_HEADS, LLAMA_HIDDEN, LLAMA_KV_HEADS, LLAMA_LAYERS

from components.i18n import t
from components.runner import cached_head_patterns
from components.safe_text import md_escape
from mha.checkpoints import DEFAULT_CHECKPOINTS
from mha.config import PRETRAINED, AttentionConfig, WeightSpec
from mha.device import resolve_device
from mha.head_finder import rank_heads, rank_table
from mha.masks import causal_mask
from mha.pipeline import run_attention
from mha.sources import SourceSizes, SourceUnavailableError, make_source, source_sizes
from mha.sources.checkpoint.loader import load_checkpoint
from mha.sources.families import FAMILIES

ANIMAL = "The animal didn't cross the street because it was too tired"
TOLERANCE = 1e-5
D_K = LLAMA_HIDDEN // LLAMA_HEADS
NAMES = ("tiny_llama", "tiny_qwen2")
SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")


def _page_device() -> str:
    """The device the page's run uses (its ``device`` left to auto): the page's cached forwards are keyed by it."""
    return str(resolve_device("auto").device)


@pytest.fixture(autouse=True)
def _llamas_on_the_list(listed_llama):
    """Every test here runs on a server that lists the tiny Llama and Qwen2 (and the tiny BERT)."""


@pytest.fixture
def folders(tiny_llama, tiny_qwen2) -> dict[str, Path]:
    return {"tiny_llama": tiny_llama, "tiny_qwen2": tiny_qwen2}


def config(**changes: object) -> AttentionConfig:
    return AttentionConfig(**{"weights": PRETRAINED, "checkpoint": "tiny_llama", "tokens": ANIMAL, **changes})


def config_json(folder: Path) -> dict:
    return json.loads((folder / "config.json").read_text())


def their_forward(folder: Path, text: str, layer: int):
    """The checkpoint run by ``transformers`` alone: its tokens, what its layer's attention received (a pre-hook),
    its attentions, what ``o_proj`` returned (a hook) and its ``rotary_emb``'s cos and sin for the text's positions."""
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    received, returned = [], []
    attention = model.layers[layer].self_attn
    pre = attention.register_forward_pre_hook(
        lambda _m, args, kwargs: received.append(args[0] if args else kwargs["hidden_states"]), with_kwargs=True
    )
    post = attention.o_proj.register_forward_hook(lambda _m, _i, out: returned.append(out))
    with torch.no_grad():
        out = model(input_ids=ids, output_attentions=True)
        cos, sin = model.rotary_emb(received[0], torch.arange(ids.size(1)).view(1, -1))  # (1, L, Dh) each
    pre.remove()
    post.remove()
    return model, tokenizer, ids, received[0], out.attentions[layer], returned[0], (cos[0], sin[0])


# ---------------------------------------------------------------- the families and the list
def test_llama_and_qwen2_are_causal_families_and_smollm2_is_on_the_default_list():
    assert FAMILIES["llama"].causal and FAMILIES["qwen2"].causal
    assert FAMILIES["llama"].bos_first and FAMILIES["qwen2"].bos_first
    assert DEFAULT_CHECKPOINTS["smollm2-135m"] == "HuggingFaceTB/SmolLM2-135M"
    assert "Qwen/Qwen2.5-0.5B" not in DEFAULT_CHECKPOINTS.values()  # ~2 GB in float32: listed by a server that has room


@pytest.mark.parametrize("name", NAMES)
def test_sizes_come_from_config_json_with_the_key_value_heads(name, folders):
    written = config_json(folders[name])
    sizes = source_sizes(WeightSpec(PRETRAINED, checkpoint=name))  # read before any weight loads
    assert sizes == SourceSizes(
        written["hidden_size"],
        written["num_attention_heads"],
        written["num_hidden_layers"],
        causal=True,
        num_kv_heads=written["num_key_value_heads"],
    )
    assert (sizes.d_model, sizes.num_heads, sizes.num_kv_heads) == (LLAMA_HIDDEN, LLAMA_HEADS, LLAMA_KV_HEADS)


def test_other_families_have_no_key_value_head_count():
    assert source_sizes(WeightSpec(PRETRAINED, checkpoint="tiny")).num_kv_heads is None


# ---------------------------------------------------------------- the layer against the checkpoint
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("layer", range(LLAMA_LAYERS))
def test_every_layer_matches_the_checkpoints_own_attentions_and_output(name, layer, folders):
    run = run_attention(config(checkpoint=name, layer=layer))  # on the suite's device; compared on the CPU
    _, _, ids, received, attentions, returned, _ = their_forward(folders[name], ANIMAL, layer)
    assert len(run.tokens) == ids.size(1)
    assert (run.d_model, run.num_heads, run.num_layers, run.layer) == (LLAMA_HIDDEN, LLAMA_HEADS, LLAMA_LAYERS, layer)
    assert float((run.x.cpu() - received).abs().max()) <= 1e-6  # the input: input_layernorm of the residual stream
    assert attentions.shape == run.trace.weights.shape == (1, LLAMA_HEADS, ids.size(1), ids.size(1))
    assert float((run.trace.weights.cpu() - attentions).abs().max()) <= TOLERANCE  # per query head
    assert float((run.trace.output.cpu() - returned).abs().max()) <= TOLERANCE  # o_proj's output
    check = make_source(config(checkpoint=name).weight_spec).compare(
        run.config, run.trace.weights, run.trace.output, run.mask
    )
    assert check.applies and check.passed and check.how == "check.checkpoint_how_llama"
    assert max(check.max_abs_weights, check.max_abs_output) <= TOLERANCE


@pytest.mark.parametrize("name", NAMES)
def test_the_projections_are_copied_as_they_are_with_the_familys_biases(name):
    source = make_source(config(checkpoint=name).weight_spec)
    base = load_checkpoint(name).model
    for layer in range(LLAMA_LAYERS):
        model = run_attention(config(checkpoint=name, layer=layer), source).model
        theirs = base.layers[layer].self_attn
        assert theirs.k_proj.weight.shape == model.W_k.weight.shape == (LLAMA_KV_HEADS * D_K, LLAMA_HIDDEN)
        for ours, linear in (("W_q", theirs.q_proj), ("W_k", theirs.k_proj), ("W_v", theirs.v_proj)):
            assert torch.equal(getattr(model, ours).weight.cpu(), linear.weight.cpu())
            if name == "tiny_llama":  # Llama: no bias anywhere, ours neither
                assert linear.bias is None and getattr(model, ours).bias is None
            else:  # Qwen2: q, k, v with their biases
                assert torch.equal(getattr(model, ours).bias.cpu(), linear.bias.cpu())
                assert bool(linear.bias.abs().sum() > 0)
        assert torch.equal(model.W_o.weight.cpu(), theirs.o_proj.weight.cpu()) and theirs.o_proj.bias is None
        if name == "tiny_llama":
            assert model.W_o.bias is None
        else:  # Qwen2's o_proj has no bias: ours is zero
            assert torch.equal(model.W_o.bias.cpu(), torch.zeros(LLAMA_HIDDEN))


@pytest.mark.parametrize("name", NAMES)
def test_the_trace_keeps_grouped_heads_and_the_checkpoints_own_rotation(name, folders):
    run = run_attention(config(checkpoint=name, layer=1))
    length = len(run.tokens)
    project = run.trace.project
    assert list(project.q_heads.shape) == [1, LLAMA_HEADS, length, D_K]
    assert list(project.k_heads.shape) == list(project.v_heads.shape) == [1, LLAMA_KV_HEADS, length, D_K]
    assert project.kv_head_of == (0, 0, 1, 1)
    assert run.config.num_kv_heads == LLAMA_KV_HEADS
    assert run.model.rope_base == config_json(folders[name])["rope_parameters"]["rope_theta"]
    *_, (cos, sin) = their_forward(folders[name], ANIMAL, 1)  # the checkpoint's rotary_emb, (L, Dh) each

    def turned(x):  # transformers' own rotation: x cos + rotate_half(x) sin
        half = x.size(-1) // 2
        return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin

    # the run's tensors on the CPU, where the checkpoint's cos and sin are
    assert float((project.q_rotated.cpu() - turned(project.q_heads.cpu())).abs().max()) <= 1e-6
    assert float((project.k_rotated.cpu() - turned(project.k_heads.cpu())).abs().max()) <= 1e-6


@pytest.mark.parametrize("name", NAMES)
def test_float64_run_equals_attention_computed_by_hand_from_the_checkpoints_weights(name, folders):
    """An independent reference: projections, pairs (i, i + d/2) turned by position · theta_i, query head h on key/value
    head h // 2, causal softmax, o_proj -- written here from the checkpoint's tensors and its config.json."""
    layer = 1
    run = run_attention(config(checkpoint=name, layer=layer, dtype="float64"))
    block = load_checkpoint(name).model.layers[layer].self_attn
    theta = config_json(folders[name])["rope_parameters"]["rope_theta"]
    x = run.x[0].cpu()  # (L, D) float64; the reference is computed on the CPU (mps has no float64)
    length, heads, kv_heads, d = x.size(0), LLAMA_HEADS, LLAMA_KV_HEADS, D_K

    def project(linear, count):  # (L, D) -> (count, L, d)
        y = x @ linear.weight.cpu().double().T + (0 if linear.bias is None else linear.bias.cpu().double())
        return y.view(length, count, d).transpose(0, 1)

    def rotated(y):  # each pair (i, i + d/2) turned by position * theta^(-2i/d)
        angle = torch.arange(length, dtype=torch.float64)[:, None] * theta ** (
            -2 * torch.arange(d // 2, dtype=torch.float64) / d
        )
        first, second = y[..., : d // 2], y[..., d // 2 :]
        return torch.cat((first * angle.cos() - second * angle.sin(), second * angle.cos() + first * angle.sin()), -1)

    q, k, v = (
        rotated(project(block.q_proj, heads)),
        rotated(project(block.k_proj, kv_heads)),
        project(block.v_proj, kv_heads),
    )
    shared = [h * kv_heads // heads for h in range(heads)]  # query head h -> its key/value head
    scores = q @ k[shared].transpose(-1, -2) / math.sqrt(d)  # (H, L, L)
    scores = scores.masked_fill(~torch.ones(length, length, dtype=torch.bool).tril(), float("-inf"))
    weights = scores.softmax(dim=-1)  # (H, L, L)
    context = (weights @ v[shared]).transpose(0, 1).reshape(length, heads * d)  # (L, D)
    output = context @ block.o_proj.weight.cpu().double().T  # (L, D): o_proj has no bias in either family
    assert run.x.dtype == torch.float64
    torch.testing.assert_close(run.trace.weights[0].cpu(), weights, rtol=0, atol=1e-12)
    torch.testing.assert_close(run.trace.output[0].cpu(), output, rtol=0, atol=1e-12)


# ---------------------------------------------------------------- the causal mask
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("mask_type", ["none", "causal", "padding", "window"])
def test_a_llama_layer_always_runs_under_its_causal_mask(name, mask_type):
    run = run_attention(config(checkpoint=name, mask_type=mask_type, window=1))
    length = len(run.tokens)
    assert run.config.mask_type == "causal"
    assert torch.equal(run.mask.cpu().expand(1, 1, length, length), causal_mask(length))  # no [PAD]: the triangle
    above = ~torch.ones(length, length, dtype=torch.bool).tril()
    assert float(run.trace.weights[0].cpu()[:, above].abs().max()) == 0.0  # no token sees a later one
    check = make_source(config(checkpoint=name).weight_spec).compare(
        run.config, run.trace.weights, run.trace.output, run.mask
    )
    assert check.applies and check.passed


# ---------------------------------------------------------------- tokens and notes
def test_what_the_tokenizer_adds_is_read_from_the_tokenizer(folders):
    from transformers import AutoTokenizer

    llama = run_attention(config())
    tokenizer = AutoTokenizer.from_pretrained(folders["tiny_llama"])
    assert llama.tokens == tuple(tokenizer.convert_ids_to_tokens(tokenizer(ANIMAL)["input_ids"]))
    assert llama.tokens[0] == tokenizer.bos_token  # this tokenizer puts its BOS first
    qwen2 = run_attention(config(checkpoint="tiny_qwen2"))
    assert "".join(qwen2.tokens) == ANIMAL  # byte-level pieces, decoded: the text and nothing else
    codes = {name: [note.code for note in run.notes] for name, run in (("llama", llama), ("qwen2", qwen2))}
    assert codes == {
        "llama": ["family_llama", "llama_framed", "grouped_kv"],
        "qwen2": ["family_qwen2", "llama_unframed", "grouped_kv", "zero_bias"],
    }


@pytest.mark.parametrize(("name", "base"), [("tiny_llama", "10,000"), ("tiny_qwen2", "1,000,000")])
def test_the_notes_carry_the_checkpoints_rotary_base_and_head_counts(name, base, folders):
    run = run_attention(config(checkpoint=name))
    notes = {note.code: dict(note.params) for note in run.notes}
    family = "family_llama" if name == "tiny_llama" else "family_qwen2"
    assert notes[family] == {"checkpoint": name, "rope_base": base}
    assert float(base.replace(",", "")) == config_json(folders[name])["rope_parameters"]["rope_theta"]
    assert notes["grouped_kv"] == {"checkpoint": name, "heads": 4, "kv_heads": 2, "group": 2}
    for lang in ("en", "zh"):
        assert base in t(f"notes.{family}", lang=lang, **notes[family])


# ---------------------------------------------------------------- refusals
def _listed_copy(folder: Path, target: Path, monkeypatch, **changes: object) -> str:
    copy = shutil.copytree(folder, target)
    (copy / "config.json").write_text(json.dumps({**config_json(copy), **changes}))
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", f"other={copy}")
    return "other"


@pytest.mark.parametrize(
    ("name", "changes", "variant"),
    [
        ("tiny_llama", {"head_dim": 16}, "llama with head_dim 16 ≠ hidden_size 32 / 4 heads"),
        (
            "tiny_llama",
            {"rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 10000.0}},
            "llama with rope_type 'linear'",
        ),
        ("tiny_llama", {"rope_scaling": {"type": "dynamic", "factor": 2.0}}, "llama with rope_type 'dynamic'"),
        (
            "tiny_qwen2",
            {"use_sliding_window": True, "sliding_window": 4},
            "qwen2 with sliding-window attention (sliding_window 4)",
        ),
        (
            "tiny_qwen2",
            {"layer_types": ["full_attention", "sliding_attention"]},
            "qwen2 with sliding_attention layers",
        ),
    ],
)
def test_variants_this_page_cannot_match_are_refused_naming_the_values(
    name, changes, variant, folders, tmp_path, monkeypatch
):
    other = _listed_copy(folders[name], tmp_path / "other", monkeypatch, **changes)
    with pytest.raises(SourceUnavailableError) as error:
        source_sizes(WeightSpec(PRETRAINED, checkpoint=other))
    assert error.value.code == "not_supported"
    supported = "bert, gpt2, llama, qwen2, vit, deit"
    assert error.value.params == {"name": "other", "model_type": variant, "supported": supported}
    for lang in ("en", "zh"):
        assert variant in t("source.not_supported", lang=lang, **error.value.params)


def test_key_value_heads_that_do_not_divide_the_heads_are_refused_naming_both(folders, tmp_path, monkeypatch):
    other = _listed_copy(folders["tiny_llama"], tmp_path / "other", monkeypatch, num_key_value_heads=3)
    with pytest.raises(SourceUnavailableError) as error:
        source_sizes(WeightSpec(PRETRAINED, checkpoint=other))
    assert error.value.code == "broken"
    assert error.value.params["reason"] == "config.json: 3 key/value heads do not divide 4 heads"


def test_projections_of_other_shapes_than_config_jsons_sizes_are_named():
    from mha.sources.checkpoint.loader import _shape_problem

    checkpoint = load_checkpoint("tiny_llama")
    attention = checkpoint.family.attention(checkpoint.model, 0)
    assert _shape_problem(checkpoint.family, attention, checkpoint.sizes) is None
    one_kv_head = SourceSizes(LLAMA_HIDDEN, LLAMA_HEADS, LLAMA_LAYERS, causal=True, num_kv_heads=1)
    found = _shape_problem(checkpoint.family, attention, one_kv_head)
    assert found == f"W_k is [{LLAMA_KV_HEADS * D_K}, {LLAMA_HIDDEN}], config.json's sizes make [{D_K}, {LLAMA_HIDDEN}]"


def test_the_default_rotation_and_full_attention_layers_are_read(folders, tmp_path, monkeypatch):
    changes = {"rope_scaling": None, "layer_types": ["full_attention"] * 2, "use_sliding_window": False}
    other = _listed_copy(folders["tiny_qwen2"], tmp_path / "other", monkeypatch, **changes)
    assert source_sizes(WeightSpec(PRETRAINED, checkpoint=other)).num_kv_heads == LLAMA_KV_HEADS


# ---------------------------------------------------------------- the head finder and the pattern search
@pytest.mark.parametrize("name", NAMES)
def test_the_head_finder_reads_every_layers_weights_from_the_checkpoint(name, folders):
    source = make_source(config(checkpoint=name).weight_spec)
    tokens, maps = source.attention_maps(ANIMAL)
    assert maps.shape == (LLAMA_LAYERS, LLAMA_HEADS, len(tokens), len(tokens))
    for layer in range(LLAMA_LAYERS):
        *_, attentions, _, _ = their_forward(folders[name], ANIMAL, layer)
        assert float((maps[layer] - attentions[0]).abs().max()) <= 1e-6
    query, key = len(tokens) - 1, 1
    ranked = rank_heads(maps, query, key)
    assert len(ranked) == LLAMA_LAYERS * LLAMA_HEADS
    assert ranked[0].weight == pytest.approx(float(maps[:, :, query, key].max()))


@pytest.mark.parametrize("name", NAMES)
def test_the_pattern_search_probes_with_the_tokenizers_bos_where_it_has_one(name, folders):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folders[name])
    source = make_source(config(checkpoint=name).weight_spec)
    sequence, maps = source.induction_maps()
    if tokenizer.bos_token_id is None:  # Qwen2's tokenizer has no BOS: the probe starts with the random tokens
        assert sequence.start == 0
    else:  # the Llama tokenizer puts its BOS first: so does the probe
        assert sequence.start == 1 and int(sequence.ids[0]) == tokenizer.bos_token_id
    length = sequence.ids.numel()
    assert torch.equal(sequence.ids[sequence.start : sequence.start + sequence.half], sequence.ids[-sequence.half :])
    assert maps.shape == (LLAMA_LAYERS, LLAMA_HEADS, length, length)
    above = ~torch.ones(length, length, dtype=torch.bool).tril()
    assert float(maps.cpu()[:, :, above].abs().max()) == 0.0  # the checkpoint's own causal weights
    patterns = cached_head_patterns(WeightSpec(PRETRAINED, checkpoint=name), ANIMAL, "cpu").value  # as text_maps
    _, text_maps = source.attention_maps(ANIMAL)
    length = text_maps.size(-1)
    by_hand = sum(text_maps[:, :, i, i - 1].cpu().double() for i in range(1, length)) / (length - 1)  # mean w[i, i-1]
    torch.testing.assert_close(patterns.previous.cpu(), by_hand, rtol=0, atol=1e-12)
    assert patterns.induction.shape == (LLAMA_LAYERS, LLAMA_HEADS)


# ---------------------------------------------------------------- the page
def open_page(params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def texts(at: AppTest, kind: str) -> list[str]:
    return [str(element.value) for element in at.get(kind)]


@pytest.mark.parametrize("name", NAMES)
def test_the_page_of_a_llama_checkpoint_matches_it_and_says_how_it_was_read(name):
    at = open_page({"weights": "pretrained", "checkpoint": name, "tokens": ANIMAL, "mask_type": "none", "layer": "1"})
    assert not at.exception and not at.error, texts(at, "error")
    run = run_attention(config(checkpoint=name, layer=1))
    check = make_source(run.config.weight_spec).compare(run.config, run.trace.weights, run.trace.output, run.mask)
    numbers = {"weights": f"{check.max_abs_weights:.2e}", "out": f"{check.max_abs_output:.2e}", "tol": "1e-05"}
    numbers["tol_out"] = f"{1e-5 * check.output_scale:.1e}" if check.output_scale > 1 else "1e-05"
    assert check.passed
    assert t("check.checkpoint_pass", checkpoint=md_escape(name), layer=1, **numbers) in texts(at, "success")
    repeated = t("check.kv_repeated", kv=LLAMA_KV_HEADS, group=LLAMA_HEADS // LLAMA_KV_HEADS)
    assert t("check.checkpoint_how_llama", kv_heads=repeated) in texts(at, "caption")
    infos = texts(at, "info")
    for note in run.notes:
        assert t(f"notes.{note.code}", **{key: md_escape(value, 200) for key, value in note.params.items()}) in infos
    assert t("controls.mask_causal_checkpoint") in [c.value for c in at.sidebar.caption]
    assert at.number_input(key="layer").max == LLAMA_LAYERS - 1


def test_the_pattern_search_on_a_llama_page_opens_the_strongest_head():
    at = open_page({"weights": "pretrained", "checkpoint": "tiny_llama", "tokens": ANIMAL})
    assert not at.exception and not at.error
    patterns = cached_head_patterns(WeightSpec(PRETRAINED, checkpoint="tiny_llama"), ANIMAL, _page_device()).value
    top = rank_table(patterns.induction)[0]
    at.button(key="pattern_induction_0").click().run()
    assert not at.exception
    assert (at.number_input(key="layer").value, HeadPicker(at).value) == (top.layer, top.head)
    assert at.selectbox(key="finder_query").options  # the head finder is drawn on the checkpoint's tokens


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_llama_page_reads_in_its_language(lang):
    at = open_page({"weights": "pretrained", "checkpoint": "tiny_qwen2", "tokens": ANIMAL, "lang": lang})
    assert not at.exception
    pieces = {label.split(":", 1)[-1].strip() for label in at.selectbox(key="finder_query").options}
    data = user_tokens(at) | {p for p in pieces if len(p) > 3} | set(at.selectbox(key="checkpoint").options)
    shown = [(key, text) for key, text in shown_texts(at) if key != "lang" and not key.startswith("example_")]
    assert len(shown) > 20
    if lang == "zh":
        leftovers = [(key, text[:80], words) for key, text in shown if (words := leftover_english(text, data))]
        assert not leftovers, leftovers
    else:
        assert not [(key, text[:80]) for key, text in shown if HAN.search(text)]


def test_the_outputs_tolerance_grows_with_its_largest_value_and_the_weights_do_not():
    from mha.sources.checkpoint.check import CHECKPOINT_TOLERANCE, CheckpointCheck

    def check(weights: float, output: float, scale: float) -> CheckpointCheck:
        return CheckpointCheck("c", 0, True, max_abs_weights=weights, max_abs_output=output, output_scale=scale)

    assert CHECKPOINT_TOLERANCE == 1e-5
    assert check(1e-6, 2.9e-3, 300.0).passed  # 1e-5 × 300 = 3e-3
    assert not check(1e-6, 3.1e-3, 300.0).passed
    assert not check(2e-5, 1e-6, 300.0).passed  # the weights lie in [0, 1]: their tolerance stays 1e-5
    assert not check(1e-6, 2e-5, 0.5).passed  # outputs under 1: 1e-5, not less
    assert check(1e-6, 9e-6, 0.5).passed


@pytest.mark.parametrize("name", NAMES)
def test_the_page_says_which_parameters_it_counts_that_the_checkpoint_does_not_hold(name, tiny_llama, tiny_qwen2):
    """Qwen2's o_proj has no bias: our layer's zero one is counted on the page, and a note gives the difference from
    the checkpoint's own q/k/v/o_proj tensors; a Llama (no biases at all) needs no note."""
    from transformers import AutoModel

    folder = tiny_qwen2 if name == "tiny_qwen2" else tiny_llama
    theirs = AutoModel.from_pretrained(folder).layers[0].self_attn
    held = sum(
        p.numel() for part in ("q_proj", "k_proj", "v_proj", "o_proj") for p in getattr(theirs, part).parameters()
    )
    run = run_attention(config(checkpoint=name, layer=0))
    counted = sum(p.numel() for p in run.model.parameters())
    notes = [note for note in run.notes if note.code == "zero_bias"]
    if name == "tiny_qwen2":
        (note,) = notes
        assert note.params["names"] == "W_o" and counted - held == note.params["count"] == run.d_model
        at = open_page({"weights": "pretrained", "checkpoint": name, "tokens": ANIMAL})
        shown = t("notes.zero_bias", checkpoint=md_escape(name), names=md_escape("W_o"), count=run.d_model)
        assert shown in texts(at, "info")
    else:
        assert not notes and counted == held


@pytest.mark.parametrize("name", [*NAMES, None])
def test_steps_1_and_4_write_the_layers_own_formulas_and_counts(name):
    """A Llama has no biases: steps 1 and 4 write ``Q = x W_qᵀ`` and ``output = concat W_oᵀ`` and count W_o as d²;
    Qwen2's layer (q, k, v biases, a zero W_o bias) and the default page's random layer keep every ``+ b``."""
    params = {"tokens": ANIMAL} if name is None else {"weights": "pretrained", "checkpoint": name, "tokens": ANIMAL}
    at = open_page(params)
    assert not at.exception and not at.error, texts(at, "error")
    parsed = AttentionConfig(tokens=ANIMAL) if name is None else config(checkpoint=name)
    model = run_attention(parsed).model
    d = model.d_model
    q_bias, o_bias = model.W_q.bias is not None, model.W_o.bias is not None
    assert (q_bias, o_bias) == ((True, True) if name != "tiny_llama" else (False, False))
    shown = "\n".join(texts(at, "markdown"))
    q_formula = "Q = x W_qᵀ + b_q" if q_bias else "Q = x W_qᵀ"
    o_formula = "output = concat W_oᵀ + b_o" if o_bias else "output = concat W_oᵀ"
    assert t("step1.what", formula=q_formula) in shown and t("step4.what", formula=o_formula) in shown
    assert ("+ b_q" in shown) == q_bias and ("+ b_o" in shown) == o_bias
    assert f"`{q_formula}`" in shown and f"`{o_formula}`" in shown  # the shapes' lines
    one = f"{d * d + (d if o_bias else 0):,}"
    assert t("step4.params" if o_bias else "step4.params_nobias", d=d, one=one) in shown
    assert (f"{d}² + {d} = " in shown) == q_bias  # no bias term counted anywhere on a Llama's steps
