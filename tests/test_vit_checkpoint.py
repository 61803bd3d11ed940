"""The pretrained source on tiny ViTs and DeiTs built here (no network): sizes and modality from config.json, the
family's layer mapping checked against the checkpoint's own attentions and ``o_proj`` output and against a float64
computation from its weights, the Pre-Norm input, the tokens ([CLS], DeiT's [DIST], the grid in row-major order),
the image made by the checkpoint's own processor, a mask as a "what if", an uploaded image, refusals, and a
learner's own ViT hub id.
"""

from __future__ import annotations

import io
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from test_any_checkpoint import FakeHub, _edit_json
from tiny_checkpoint import VIT_HEADS, VIT_HIDDEN, VIT_IMAGE, VIT_LAYERS, VIT_PATCH, build_vit

from components.i18n import t
from mha.checkpoints import ANY_CHECKPOINT_ENV
from mha.config import LIMITS, PRETRAINED, RANDOM, AttentionConfig, WeightSpec
from mha.pipeline import run_attention
from mha.sources import SourceSizes, SourceUnavailableError, any_checkpoint, make_source, source_sizes
from mha.sources.checkpoint.loader import load_checkpoint
from mha.sources.families.vit import DEIT
from mha.vision.patches import patch_tokens, patchify
from mha.vision.samples import DATA_DIR, DIGIT_LEVELS, load_digits, sample_image
from mha.vision.upload import decode_image

REPO = Path(__file__).resolve().parents[1]
TOLERANCE = 1e-5  # the checkpoint runs in float32 (CHECKPOINT_TOLERANCE)
GRID = VIT_IMAGE // VIT_PATCH  # 4 × 4 patches
PREFIX = {"tinyvit": ("[CLS]",), "tinydeit": ("[CLS]", "[DIST]")}


@pytest.fixture(autouse=True)
def _vits_on_the_list(listed_vit):
    """Every test here runs on a server that lists the tiny ViT, the tiny DeiT and the tiny BERT."""


def config(**changes: object) -> AttentionConfig:
    return AttentionConfig(**{"weights": PRETRAINED, "checkpoint": "tinyvit", "image": "photo-temple", **changes})


def their_picture(image: str):
    """The bundled image as a Pillow picture, made here from the files (not through the page's tensors)."""
    from PIL import Image

    if image.startswith("photo-"):
        return Image.open(DATA_DIR / f"{image}.jpg").convert("RGB")
    digits = load_digits()
    levels = digits.images[digits.sample_index(int(image.removeprefix("digit-")))].numpy()  # (8, 8) in 0..16
    grey = np.round(levels.astype(np.float64) * 255 / DIGIT_LEVELS).astype(np.uint8)
    return Image.fromarray(grey, mode="L").convert("RGB")


def their_forward(folder: Path, image: str, layer: int):
    """The checkpoint run by ``transformers`` alone on the picture, with its own processor: its pixels, what its layer's
    attention received (a pre-hook), its hidden states, its attentions and what ``o_proj`` returned (a hook)."""
    from transformers import AutoImageProcessor, AutoModel

    model = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    processor = AutoImageProcessor.from_pretrained(folder, backend="pil")
    pixels = processor(images=their_picture(image), return_tensors="pt")["pixel_values"]  # (1, 3, 32, 32)
    received, returned = [], []
    attention = model.layers[layer].attention
    pre = attention.register_forward_pre_hook(
        lambda _m, args, kwargs: received.append(args[0] if args else kwargs["hidden_states"]), with_kwargs=True
    )
    post = attention.o_proj.register_forward_hook(lambda _m, _i, out: returned.append(out))
    with torch.no_grad():
        out = model(pixel_values=pixels, output_hidden_states=True, output_attentions=True)
    pre.remove()
    post.remove()
    return model, pixels, received[0], out, returned[0]


# ---------------------------------------------------------------- sizes and modality, before any weight
def test_sizes_and_modality_come_from_config_json(tiny_vit):
    assert source_sizes(WeightSpec(PRETRAINED, checkpoint="tinyvit")) == SourceSizes(
        VIT_HIDDEN, VIT_HEADS, VIT_LAYERS, "image"
    )
    assert source_sizes(WeightSpec(PRETRAINED, checkpoint="tinydeit")).modality == "image"
    assert source_sizes(WeightSpec(PRETRAINED, checkpoint="tiny")).modality == "text"  # the BERT
    assert source_sizes(WeightSpec(RANDOM, 8, 2, 0)).modality == "text"


def test_the_modality_is_read_without_transformers_or_pillow(tiny_vit):
    """The controls ask before any weight is loaded: config.json alone, no transformers, no Pillow."""
    code = (
        "import sys\n"
        "from mha.config import WeightSpec\n"
        "from mha.sources import source_sizes\n"
        "print(source_sizes(WeightSpec('pretrained', checkpoint='tinyvit')).modality)\n"
        "print(sorted({name.split('.')[0] for name in sys.modules} & {'transformers', 'PIL'}))\n"
    )
    env = {"ATTN_PLAYGROUND_CHECKPOINTS": f"tinyvit={tiny_vit}", "HF_HUB_OFFLINE": "1", "PATH": ""}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["image", "[]"]


def test_a_pretrained_image_config_is_not_held_to_the_texts_token_count():
    """The text box may hold anything (even nothing): an image checkpoint never reads it; its image is in the key."""
    empty = config(tokens="")
    assert empty.weight_spec == WeightSpec(PRETRAINED, checkpoint="tinyvit")
    assert config(image="digit-3") != config(image="photo-temple")  # configs differ (and cache apart) by image
    run = run_attention(empty)
    assert run.tokens[0] == "[CLS]"


# ---------------------------------------------------------------- the layer against the checkpoint
@pytest.mark.parametrize("image", ["digit-3", "photo-temple"])
@pytest.mark.parametrize("name", ["tinyvit", "tinydeit"])
@pytest.mark.parametrize("layer", range(VIT_LAYERS))
def test_every_layer_matches_the_checkpoints_own_attentions_and_output(name, image, layer, tiny_vit, tiny_deit):
    folder = {"tinyvit": tiny_vit, "tinydeit": tiny_deit}[name]
    run = run_attention(config(checkpoint=name, image=image, layer=layer))
    model, pixels, received, out, returned = their_forward(folder, image, layer)
    ours = load_checkpoint(name).encode(sample_image(image)).inputs["pixel_values"]  # the checkpoint's processor's
    assert ours.shape == pixels.shape and float((ours - pixels).abs().max()) <= 1e-6
    assert (run.d_model, run.num_heads, run.num_layers, run.layer) == (VIT_HIDDEN, VIT_HEADS, VIT_LAYERS, layer)
    assert run.tokens == (*PREFIX[name], *patch_tokens(GRID, GRID, cls=False))
    # the run on the suite's device, the checkpoint's own forward on the CPU: values compared on the CPU
    assert float((run.x.cpu() - received).abs().max()) <= 1e-6  # what the checkpoint's attention received ...
    with torch.no_grad():
        before = model.layers[layer].layernorm_before(out.hidden_states[layer])  # ... is layernorm_before (Pre-Norm)
    assert float((run.x.cpu() - before).abs().max()) <= 1e-6
    assert float((run.trace.weights.cpu() - out.attentions[layer]).abs().max()) <= TOLERANCE  # per head (1, H, L, L)
    assert float((run.trace.output.cpu() - returned).abs().max()) <= TOLERANCE  # o_proj's output
    check = make_source(run.config.weight_spec).compare(run.config, run.trace.weights, run.trace.output, run.mask)
    assert check.applies and check.passed and check.how == "check.checkpoint_how_vit"
    assert max(check.max_abs_weights, check.max_abs_output) <= TOLERANCE


def test_float64_run_equals_attention_computed_from_the_checkpoints_projections_by_hand():
    """An independent reference: x @ q_proj/k_proj/v_proj (theirs, float64), split, softmax, o_proj."""
    layer = 1
    run = run_attention(config(layer=layer, dtype="float64"))
    block = load_checkpoint("tinyvit").model.layers[layer].attention
    x = run.x[0].cpu()  # (L, D) float64; the reference is computed on the CPU (mps has no float64)
    length, d, heads = x.size(0), VIT_HIDDEN, VIT_HEADS
    d_k = d // heads

    def project(linear: torch.nn.Linear, inputs: torch.Tensor) -> torch.Tensor:
        return inputs @ linear.weight.cpu().double().T + linear.bias.cpu().double()  # (L, D)

    projections = (block.q_proj, block.k_proj, block.v_proj)
    q, k, v = (project(linear, x).view(length, heads, d_k).transpose(0, 1) for linear in projections)  # (H, L, d_k)
    weights = (q @ k.transpose(-1, -2) / math.sqrt(d_k)).softmax(dim=-1)  # (H, L, L): no mask
    context = (weights @ v).transpose(0, 1).reshape(length, d)  # (L, D)
    output = project(block.o_proj, context)  # (L, D)
    assert run.x.dtype == torch.float64
    torch.testing.assert_close(run.trace.weights[0].cpu(), weights, rtol=0, atol=1e-12)
    torch.testing.assert_close(run.trace.output[0].cpu(), output, rtol=0, atol=1e-12)


# ---------------------------------------------------------------- tokens: the grid in row-major order
@pytest.mark.parametrize("name", ["tinyvit", "tinydeit"])
def test_token_n_of_the_patches_is_grid_cell_row_n_over_q_column_n_mod_q(name):
    """The checkpoint's own embedding of token prefix + n is its patch convolution of our patch n (row-major),
    plus position prefix + n: the labels r{row}c{column} name the cells the model read there."""
    checkpoint = load_checkpoint(name)
    encoded = checkpoint.encode(sample_image("photo-flower"))
    pixels = encoded.inputs["pixel_values"]  # (1, 3, 32, 32)
    embeddings = checkpoint.model.embeddings
    with torch.no_grad():
        hidden = checkpoint.model(pixel_values=pixels, output_hidden_states=True).hidden_states[0][0]  # (L, D)
        conv = embeddings.patch_embeddings.projection  # Conv2d(3, D, p, stride=p)
        patches = patchify(pixels, VIT_PATCH)[0]  # (N, 3·p·p), row-major
        by_hand = patches @ conv.weight.reshape(VIT_HIDDEN, -1).T + conv.bias  # (N, D)
    prefix = len(PREFIX[name])
    torch.testing.assert_close(hidden[prefix:] - embeddings.position_embeddings[0, prefix:], by_hand, rtol=0, atol=1e-5)
    for n in range(GRID * GRID):
        assert encoded.tokens[prefix + n] == f"r{n // GRID}c{n % GRID}"
    assert encoded.tokens[:prefix] == PREFIX[name] and len(encoded.tokens) == prefix + GRID * GRID


def test_the_deit_processor_resizes_then_crops_the_centre(tiny_deit):
    """DeiT's processor (resize to 40 × 40, centre crop 32 × 32) runs as the checkpoint's own, not ViT's."""
    settings = json.loads((tiny_deit / "preprocessor_config.json").read_text())
    assert settings["do_center_crop"] and settings["crop_size"] == {"height": 32, "width": 32}
    pixels = load_checkpoint("tinydeit").encode(sample_image("photo-temple")).inputs["pixel_values"]
    vit_pixels = load_checkpoint("tinyvit").encode(sample_image("photo-temple")).inputs["pixel_values"]
    assert pixels.shape == vit_pixels.shape == (1, 3, VIT_IMAGE, VIT_IMAGE)
    assert float((pixels - vit_pixels).abs().max()) > 0.1  # cropped, not squeezed: other pixels


# ---------------------------------------------------------------- the mask: a "what if"
@pytest.mark.parametrize("mask_type", ["causal", "window"])
def test_a_mask_on_an_image_checkpoint_runs_as_a_what_if_and_the_check_says_it_does_not_apply(mask_type):
    run = run_attention(config(mask_type=mask_type, window=1))
    length = len(run.tokens)
    assert run.config.mask_type == mask_type and run.mask is not None  # the learner's mask ran
    blocked = ~run.mask.cpu().expand(1, 1, length, length)[0, 0]  # (L, L)
    assert float(run.trace.weights[0].cpu()[:, blocked].abs().max()) == 0.0
    check = make_source(run.config.weight_spec).compare(run.config, run.trace.weights, run.trace.output, run.mask)
    assert (check.applies, check.reason) == (False, "what_if_image") and not check.passed
    for lang in ("en", "zh"):
        assert "tinyvit" in t("check.checkpoint_what_if_image", lang=lang, checkpoint="tinyvit")


@pytest.mark.parametrize("mask_type", ["none", "padding"])
def test_no_mask_and_the_padding_mask_are_what_the_checkpoint_ran(mask_type):
    """An image has no [PAD]: the padding mask blocks nothing and the check applies."""
    run = run_attention(config(mask_type=mask_type))
    check = make_source(run.config.weight_spec).compare(run.config, run.trace.weights, run.trace.output, run.mask)
    assert check.applies and check.passed


# ---------------------------------------------------------------- an image given as pixels (an upload)
def _png(pixels: np.ndarray) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.mark.parametrize("name", ["tinyvit", "tinydeit"])
@pytest.mark.parametrize("channels", [1, 3])
def test_an_uploaded_image_runs_through_prepare_image_and_the_check_compares_that_image(name, channels, device):
    """What the page does with an upload: decode it, ``prepare_image`` it, and pass it to ``compare``."""
    rng = np.random.default_rng(7)
    shape = (45, 70) if channels == 1 else (45, 70, 3)
    image = decode_image(_png(rng.integers(0, 256, size=shape, dtype=np.uint8)))  # (C, 45, 70) in [0, 1]
    assert image.size(0) == channels
    page = config(checkpoint=name, layer=1)
    source = make_source(page.weight_spec)
    inputs = source.prepare_image(page, device, image)  # the suite's device, as the page's run
    assert inputs.tokens == (*PREFIX[name], *patch_tokens(GRID, GRID, cls=False))
    assert "family_vit" in [note.code for note in inputs.notes]
    with torch.inference_mode():
        trace = inputs.model.forward_traced(inputs.x, inputs.x, inputs.x, None)
    check = source.compare(page, trace.weights, trace.output, None, image=image)
    assert check.applies and check.passed
    bundled = run_attention(page, source)  # config.image: another picture, other numbers
    assert float((bundled.x.cpu() - inputs.x.cpu()).abs().max()) > 1e-3
    assert not source.compare(page, bundled.trace.weights, bundled.trace.output, None, image=image).passed
    tokens, maps = source.attention_maps(image)
    assert tokens == inputs.tokens and maps.shape == (VIT_LAYERS, VIT_HEADS, len(tokens), len(tokens))
    torch.testing.assert_close(maps[1:2].cpu(), trace.weights.cpu(), rtol=0, atol=TOLERANCE)


def test_a_text_checkpoint_refuses_an_image_and_an_image_checkpoint_a_text():
    text_source = make_source(WeightSpec(PRETRAINED, checkpoint="tiny"))
    with pytest.raises(ValueError, match="reads text"):
        text_source.prepare_image(config(checkpoint="tiny"), torch.device("cpu"), sample_image("digit-3"))
    image_source = make_source(WeightSpec(PRETRAINED, checkpoint="tinyvit"))
    assert image_source.input_of(config()) == "photo-temple" and text_source.input_of(config(tokens="a b")) == "a b"
    with pytest.raises(ValueError, match="reads images"):
        image_source.induction_maps()


# ---------------------------------------------------------------- variants
def test_a_vit_without_qkv_biases_gets_zero_biases_and_still_matches(tmp_path, monkeypatch):
    folder = build_vit(tmp_path / "nobias", qkv_bias=False, seed=3)
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", f"nobias={folder}")
    run = run_attention(config(checkpoint="nobias", layer=1))
    for ours in ("W_q", "W_k", "W_v"):
        assert float(getattr(run.model, ours).bias.abs().max()) == 0.0
    assert float(run.model.W_o.bias.abs().max()) > 0.0
    _, _, _, out, returned = their_forward(folder, "photo-temple", 1)
    assert float((run.trace.weights.cpu() - out.attentions[1]).abs().max()) <= TOLERANCE
    assert float((run.trace.output.cpu() - returned).abs().max()) <= TOLERANCE


def test_a_classifier_checkpoint_as_the_hub_saves_it_is_read_through_its_vit(tmp_path, monkeypatch):
    """``google/vit-base-patch16-224`` is a ``ViTForImageClassification``: its layers under ``vit.``, a classifier
    besides. The page's layer equals what the classifier model itself computes (its own attentions)."""
    from transformers import AutoImageProcessor, ViTForImageClassification

    folder = build_vit(tmp_path / "classifier", classifier=True, seed=4)
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", f"classifier={folder}")
    run = run_attention(config(checkpoint="classifier", layer=1))
    model = ViTForImageClassification.from_pretrained(folder, attn_implementation="eager").eval()
    processor = AutoImageProcessor.from_pretrained(folder, backend="pil")
    pixels = processor(images=their_picture("photo-temple"), return_tensors="pt")["pixel_values"]
    with torch.no_grad():
        attentions = model(pixel_values=pixels, output_attentions=True).attentions
    assert float((run.trace.weights.cpu() - attentions[1]).abs().max()) <= TOLERANCE  # values, on the CPU
    assert torch.equal(run.model.W_v.bias.cpu(), model.vit.layers[1].attention.v_proj.bias)


@pytest.mark.parametrize(
    ("changes", "variant"),
    [
        ({"model_type": "swin"}, "swin"),
        ({"head_dim": 16}, "vit with head_dim × heads ≠ hidden_size"),
        ({"num_channels": 4}, "vit of 4 channels"),
        ({"patch_size": [8, 4]}, "vit with patches of 8 × 4 pixels"),
    ],
)
def test_vit_variants_this_page_cannot_read_are_refused_naming_the_families(
    tiny_vit, tmp_path, monkeypatch, changes, variant
):
    folder = shutil.copytree(tiny_vit, tmp_path / "other")
    _edit_json(folder / "config.json", **changes)
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", f"other={folder}")
    with pytest.raises(SourceUnavailableError) as error:
        source_sizes(WeightSpec(PRETRAINED, checkpoint="other"))
    assert error.value.code == "not_supported"
    assert error.value.params == {
        "name": "other",
        "model_type": variant,
        "supported": "bert, gpt2, llama, qwen2, vit, deit",
    }


def test_an_image_of_more_tokens_than_the_server_shows_is_refused_before_loading(tiny_vit, tmp_path, monkeypatch):
    """A ViT-B/16 at 384 pixels reads 24 × 24 + 1 = 577 tokens; at 224 pixels 197 fit (DeiT's 198 too)."""
    folder = shutil.copytree(tiny_vit, tmp_path / "big")
    _edit_json(folder / "config.json", image_size=384, patch_size=16)
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", f"big={folder}")
    with pytest.raises(SourceUnavailableError) as error:
        source_sizes(WeightSpec(PRETRAINED, checkpoint="big"))
    assert error.value.code == "too_many_tokens"
    assert error.value.params == {"name": "big", "count": 577, "high": LIMITS.image_tokens_max}
    for lang in ("en", "zh"):
        assert "577" in t("source.too_many_tokens", lang=lang, **error.value.params)
    _edit_json(folder / "config.json", image_size=224, patch_size=16)
    assert source_sizes(WeightSpec(PRETRAINED, checkpoint="big")).d_model == VIT_HIDDEN  # 197 tokens: shown
    _edit_json(folder / "config.json", image_size=224, patch_size=16, model_type=DEIT)
    assert source_sizes(WeightSpec(PRETRAINED, checkpoint="big")).modality == "image"  # 198


def test_a_processor_that_makes_another_size_than_the_model_reads_is_refused_when_loading(
    tiny_vit, tmp_path, monkeypatch
):
    folder = shutil.copytree(tiny_vit, tmp_path / "mismatch")
    _edit_json(folder / "preprocessor_config.json", size={"height": 48, "width": 48})
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", f"mismatch={folder}")
    with pytest.raises(SourceUnavailableError) as error:
        make_source(WeightSpec(PRETRAINED, checkpoint="mismatch"))
    assert error.value.code == "broken"
    assert error.value.params["reason"] == "its image processor makes 48 × 48 pixels, its model reads 32 × 32"


def test_a_listed_folder_without_an_image_processor_is_missing(tiny_vit, tmp_path, monkeypatch):
    folder = shutil.copytree(tiny_vit, tmp_path / "bare")
    (folder / "preprocessor_config.json").unlink()
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", f"bare={folder}")
    with pytest.raises(SourceUnavailableError) as error:
        source_sizes(WeightSpec(PRETRAINED, checkpoint="bare"))
    assert error.value.code == "missing"


# ---------------------------------------------------------------- a learner's own ViT hub id
VIT_HUB_ID = "someone/tiny-vit"
VIT_NEEDED = ("config.json", "preprocessor_config.json", "model.safetensors")


@pytest.fixture
def vit_hub(tiny_vit, tmp_path, monkeypatch) -> FakeHub:
    """The tiny ViT as a hub repository holds it, with pickled weights and a README besides."""
    repo = shutil.copytree(tiny_vit, tmp_path / "repo")
    (repo / "pytorch_model.bin").write_bytes(b"pickled")
    (repo / "README.md").write_text("# tiny vit")
    return FakeHub(repo, tmp_path / "cache").install(monkeypatch)


def test_a_learners_vit_hub_id_downloads_its_processor_not_a_tokenizer_and_runs(vit_hub, monkeypatch):
    monkeypatch.setenv(ANY_CHECKPOINT_ENV, "1")
    download = any_checkpoint.start_download(VIT_HUB_ID)
    assert download.wait(30) and download.error is None
    assert sorted(vit_hub.fetched) == sorted(VIT_NEEDED)
    page = AttentionConfig(weights=PRETRAINED, hub_id=VIT_HUB_ID, image="digit-7", layer=1)
    assert source_sizes(page.weight_spec).modality == "image"
    source = make_source(page.weight_spec)
    run = run_attention(page, source)
    assert run.tokens[0] == "[CLS]" and len(run.tokens) == 1 + GRID * GRID
    check = source.compare(run.config, run.trace.weights, run.trace.output, run.mask)
    assert check.passed and check.checkpoint == VIT_HUB_ID


def test_a_learners_vit_whose_processor_needs_remote_code_is_refused(vit_hub, monkeypatch):
    _edit_json(vit_hub.repo / "preprocessor_config.json", auto_map={"AutoImageProcessor": "mine.Processor"})
    monkeypatch.setenv(ANY_CHECKPOINT_ENV, "100")
    with pytest.raises(SourceUnavailableError) as error:
        any_checkpoint.plan(VIT_HUB_ID)
    assert error.value.code == "remote_code" and error.value.params["where"] == "preprocessor_config.json"


def test_a_learners_vit_without_a_processor_is_refused_as_broken(vit_hub, monkeypatch):
    (vit_hub.repo / "preprocessor_config.json").unlink()
    monkeypatch.setenv(ANY_CHECKPOINT_ENV, "100")
    with pytest.raises(SourceUnavailableError) as error:
        any_checkpoint.plan(VIT_HUB_ID)
    assert error.value.code == "broken" and "image processor" in error.value.params["reason"]
    assert not vit_hub.fetched
