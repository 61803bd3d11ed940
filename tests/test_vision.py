"""Images through the four steps: the bundled samples, uploads refused or decoded, patches, the ViT analyses,
the digits task, its model, its training and its weight source; lab 10's windows and shifted windows.

Patches are checked against ``F.unfold`` (an independent reshape); rollout and attention distance against
numbers worked out by hand from their definitions; uploads against files made here (PNG and JPEG by
Pillow, headers written byte by byte for the hostile ones); the shifted-window mask against the Swin
code's own construction (three slices per axis) and against windows displaced without the roll.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import itertools
import math
import struct
import zlib
from pathlib import Path

import pytest
import torch
from conftest import SHORT_TRAINING_STEPS, headings, trained_spec
from PIL import Image
from streamlit.testing.v1 import AppTest
from tolerances import FLOAT32
from torch.nn import functional as F

from components.controls import error_message
from components.i18n import t
from components.locale import CATALOG
from mha.config import LIMITS, TRAINED, AttentionConfig, ConfigError
from mha.experiments import windows as windows_module
from mha.experiments.timing import Timing
from mha.experiments.windows import (
    cost_rows,
    cyclic_shift,
    grid_mask,
    image_tokens,
    measure_windows_steady,
    multiply_adds,
    query_weights,
    shifted_window_mask,
    window_attention,
    window_ids,
    window_merge,
    window_partition,
)
from mha.module import MultiHeadAttention
from mha.pipeline import run_attention
from mha.sources.seeded import build_model as build_seeded_layer
from mha.sources.trained import TrainedSource
from mha.training import loop, train
from mha.training import service as service_module
from mha.training.digits_model import DigitsModel, digits_model_parameters
from mha.training.service import TrainedModel
from mha.training.tasks import DigitsTask, make_task
from mha.vision.analysis import (
    attention_rollout,
    cls_map,
    mean_attention_distance,
    patch_head_labels,
    uniform_attention_distance,
)
from mha.vision.images import as_digit, resize, to_channels
from mha.vision.patches import GRID_RELATIONS, grid_relations, patch_centres, patch_grid, patch_tokens, patchify
from mha.vision.samples import (
    DATA_DIR,
    DIGIT_PIXEL_MEAN,
    DIGIT_PIXEL_STD,
    SAMPLE_NAMES,
    load_digits,
    sample_image,
    sample_label,
)
from mha.vision.upload import KEPT_SIDE_MAX, REFUSALS, decode_image, read_upload

REPO = Path(__file__).resolve().parents[1]
#: scikit-learn 1.9.1's wheel lists this sha256 for sklearn/datasets/data/digits.csv.gz (its RECORD file).
DIGITS_SHA256 = "09f66e6debdee2cd2b5ae59e0d6abbb73fc2b0e0185d2e1957e9ebb51e23aa22"


# ---------------------------------------------------------------- the bundled samples
def test_the_digits_are_scikit_learns_file_unchanged():
    assert hashlib.sha256((DATA_DIR / "digits.csv.gz").read_bytes()).hexdigest() == DIGITS_SHA256
    digits = load_digits()
    assert digits.images.shape == (1797, 8, 8) and digits.images.dtype == torch.uint8
    assert int(digits.images.max()) == 16 and int(digits.images.min()) == 0
    assert torch.bincount(digits.labels).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]


def test_the_split_holds_a_fifth_of_every_class_out_and_never_overlaps():
    digits = load_digits()
    train_set, held = set(digits.train.tolist()), set(digits.held_out.tolist())
    assert not train_set & held and len(train_set | held) == 1797
    for digit in range(10):
        count = int((digits.labels == digit).sum())
        assert int((digits.labels[digits.held_out] == digit).sum()) == math.ceil(0.2 * count)
    assert torch.equal(load_digits.__wrapped__().held_out, digits.held_out)  # a fixed split, read again


def test_each_digit_sample_is_a_held_out_image_of_its_class():
    digits = load_digits()
    for digit in range(10):
        name = f"digit-{digit}"
        index = digits.sample_index(digit)
        assert index in set(digits.held_out.tolist()) and int(digits.labels[index]) == digit
        assert sample_label(name) == digit
        image = sample_image(name)
        assert image.shape == (1, 8, 8)
        torch.testing.assert_close(image[0], digits.images[index].float() / 16, rtol=0, atol=0)


def test_photos_are_rgb_in_zero_one_at_their_committed_size():
    for name in ("photo-temple", "photo-flower"):
        image = sample_image(name)
        assert image.shape == (3, 224, 336) and image.dtype == torch.float32
        assert float(image.min()) >= 0.0 and float(image.max()) <= 1.0 and float(image.std()) > 0.05
        assert sample_label(name) is None
    assert set(SAMPLE_NAMES) == {*(f"digit-{k}" for k in range(10)), "photo-temple", "photo-flower"}
    with pytest.raises(ValueError, match="no bundled image"):
        sample_image("digit-12")


def test_the_pixel_statistics_the_model_standardises_with_are_the_training_splits():
    digits = load_digits()
    pixels = digits.images[digits.train].double() / 16
    assert float(pixels.mean()) == pytest.approx(DIGIT_PIXEL_MEAN, abs=1e-3)
    assert float(pixels.std()) == pytest.approx(DIGIT_PIXEL_STD, abs=1e-3)


# ---------------------------------------------------------------- images made into a model's input
def test_grey_is_bt601_luma_and_resizing_averages_blocks():
    rgb = torch.rand(3, 4, 6, generator=torch.Generator().manual_seed(0))
    grey = to_channels(rgb, 1)
    expected = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]
    torch.testing.assert_close(grey[0], expected)
    square = resize(rgb, 2, 2)  # the centred 4 × 4 (columns 1..4), then 2 × 2 blocks averaged
    block = rgb[:, 0:2, 1:3].mean(dim=(1, 2))
    torch.testing.assert_close(square[:, 0, 0], block)
    assert to_channels(grey, 3).shape == (3, 4, 6)


def test_a_dark_digit_on_white_paper_becomes_light_ink_on_dark():
    paper = torch.ones(1, 32, 32)
    paper[0, 4:28, 14:18] = 0.0  # a black stroke: "1"
    digit = as_digit(paper)
    assert digit.shape == (1, 8, 8)
    assert float(digit[0, 2:6, 3:5].mean()) > 0.9 and float(digit[0, :, 0].max()) < 0.1
    bundled = sample_image("digit-3")
    assert as_digit(bundled) is bundled  # the model's own input, untouched


# ---------------------------------------------------------------- uploads
def _png(width: int, height: int, mode: str = "RGB") -> bytes:
    buffer = io.BytesIO()
    Image.new(mode, (width, height), "white").save(buffer, "PNG")
    return buffer.getvalue()


def _png_header(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width`` × ``height`` over one tiny compressed row: written by hand, no pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit grey
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + chunk(b"IEND", b"")
    )


def _refusal(data: bytes) -> ConfigError:
    with pytest.raises(ConfigError) as refused:
        decode_image(data)
    assert refused.value.field == "image"
    return refused.value


def test_a_png_and_a_jpeg_are_decoded_to_zero_one_and_kept_small():
    grey = decode_image(_png(40, 30, "L"))
    assert grey.shape == (1, 30, 40) and float(grey.min()) == 1.0  # white
    buffer = io.BytesIO()
    Image.new("RGB", (2000, 1000), (255, 0, 0)).save(buffer, "JPEG", quality=90)
    red = decode_image(buffer.getvalue())
    assert red.shape[0] == 3 and max(red.shape[1:]) <= KEPT_SIDE_MAX
    assert red.shape[2] / red.shape[1] == pytest.approx(2.0, rel=0.02)  # the aspect ratio kept
    assert float(red[0].mean()) > 0.9 and float(red[1].mean()) < 0.1


def test_transparency_is_laid_on_white():
    buffer = io.BytesIO()
    Image.new("RGBA", (8, 8), (0, 0, 0, 0)).save(buffer, "PNG")  # fully transparent black
    assert float(decode_image(buffer.getvalue()).min()) == 1.0


def test_bad_uploads_are_refused_with_a_reason_and_the_numbers():
    assert _refusal(b"").code == "not_image"
    assert _refusal(b"hello, this is text").code == "not_image"
    gif = io.BytesIO()
    Image.new("RGB", (4, 4)).save(gif, "GIF")
    refused = _refusal(gif.getvalue())
    assert refused.code == "format" and refused.params["found"] == "GIF"
    too_big = b"\x89PNG\r\n\x1a\n" + bytes(LIMITS.image_bytes_max)
    assert _refusal(too_big).code == "file_too_large"  # refused before Pillow opens it
    many = _refusal(_png_header(5000, 4000))  # 20 M pixels claimed by a file of a few hundred bytes
    assert many.code == "too_many_pixels" and (many.params["width"], many.params["height"]) == (5000, 4000)
    assert _refusal(_png_header(20000, 20000)).code == "bomb"  # past Pillow's own DecompressionBombError
    assert _refusal(b"\x89PNG\r\n\x1a\n" + b"garbage" * 10).code == "broken"
    whole = io.BytesIO()
    Image.effect_noise((64, 64), 50).save(whole, "JPEG")
    assert _refusal(whole.getvalue()[:300]).code == "broken"  # cut short


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_refusal_has_a_message_in_both_languages_with_its_numbers(lang):
    made = {
        "file_too_large": ConfigError("image", "file_too_large", "", size="3.0", high="2"),
        "not_image": ConfigError("image", "not_image", ""),
        "format": ConfigError("image", "format", "", found="GIF"),
        "too_many_pixels": ConfigError("image", "too_many_pixels", "", width=5000, height=4000, high="16,777,216"),
        "bomb": ConfigError("image", "bomb", ""),
        "broken": ConfigError("image", "broken", ""),
    }
    assert set(made) == set(REFUSALS)
    for code, error in made.items():
        assert f"error.image.{code}" in CATALOG
        message = t(f"error.image.{code}", lang=lang, **error.params)
        assert "{" not in message and message != code
    assert "5000 × 4000" in t("error.image.too_many_pixels", lang=lang, **made["too_many_pixels"].params)


def test_the_page_translates_a_refusal_and_an_unknown_sample():
    with pytest.raises(ConfigError) as unknown:
        AttentionConfig(image="<b>cat</b>")
    assert unknown.value.field == "image" and unknown.value.code == "unknown"
    message = error_message(unknown.value)
    assert "<b>" not in message and "digit-3" in message  # escaped, and says what to choose
    with pytest.raises(ConfigError) as patch:
        AttentionConfig(patch=3)
    assert patch.value.field == "patch" and "2, 4" in error_message(patch.value)


# ---------------------------------------------------------------- patches
@pytest.mark.parametrize(("channels", "height", "width", "patch"), [(1, 8, 8, 2), (1, 8, 8, 4), (3, 8, 12, 4)])
def test_patchify_matches_unfold(channels, height, width, patch):
    images = torch.randn(2, channels, height, width, generator=torch.Generator().manual_seed(1))
    ours = patchify(images, patch)
    theirs = F.unfold(images, kernel_size=patch, stride=patch).transpose(1, 2)  # (B, C·p·p, N) -> (B, N, C·p·p)
    assert ours.shape == (2, (height // patch) * (width // patch), channels * patch * patch)
    assert torch.equal(ours, theirs)  # both only move numbers: no arithmetic to differ in


def test_patch_n_is_the_grid_cell_its_label_names():
    images = torch.arange(2 * 8 * 12, dtype=torch.float32).view(1, 2, 8, 12)
    patches = patchify(images, 4)
    rows, columns = patch_grid(8, 12, 4)
    labels = patch_tokens(rows, columns)
    assert labels[0] == "[CLS]" and len(labels) == 1 + rows * columns
    for n, label in enumerate(labels[1:]):
        r, c = int(label[1]), int(label[3])
        assert torch.equal(patches[0, n], images[0, :, 4 * r : 4 * r + 4, 4 * c : 4 * c + 4].flatten())
    centres = patch_centres(rows, columns, 4)
    assert centres[0].tolist() == [2.0, 2.0] and centres[-1].tolist() == [6.0, 10.0]
    with pytest.raises(ValueError, match="must divide"):
        patchify(images, 5)


# ---------------------------------------------------------------- analysis
def test_rollout_matches_a_two_layer_example_worked_by_hand():
    # Layer 1, two heads: the identity and a cyclic shift; mean A1 = [[.5,.5,0],[0,.5,.5],[.5,0,.5]],
    # Â1 = 0.5·A1 + 0.5·I = [[.75,.25,0],[0,.75,.25],[.25,0,.75]] (rows already sum to 1).
    layer_1 = torch.tensor(
        [[[1.0, 0, 0], [0, 1, 0], [0, 0, 1]], [[0.0, 1, 0], [0, 0, 1], [1, 0, 0]]], dtype=torch.float64
    )
    # Layer 2, one head: uniform rows, and a row with no key (a fully masked query: zero weights).
    # Â2 rows: [2/3, 1/6, 1/6], [1/6, 2/3, 1/6], and 0.5·I's row [0, 0, .5] renormalised to [0, 0, 1].
    layer_2 = torch.tensor([[[1 / 3, 1 / 3, 1 / 3], [1 / 3, 1 / 3, 1 / 3], [0, 0, 0]]], dtype=torch.float64)
    # R = Â2 · Â1, row by row: 2/3·[.75,.25,0] + 1/6·[0,.75,.25] + 1/6·[.25,0,.75] = [13, 7, 4] / 24, and so on.
    expected = torch.tensor([[13, 7, 4], [4, 13, 7], [6, 0, 18]], dtype=torch.float64) / 24
    rollout = attention_rollout([layer_1, layer_2])
    torch.testing.assert_close(rollout, expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(cls_map(rollout, 1, 2), torch.tensor([[7, 4]], dtype=torch.float64) / 24)
    batched = attention_rollout([layer_1.expand(2, -1, -1, -1), layer_2.expand(2, -1, -1, -1)])  # (B, H, L, L)
    torch.testing.assert_close(batched, expected.expand(2, 3, 3), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="at least one layer"):
        attention_rollout([])


def test_mean_attention_distance_of_constructed_heads():
    # A 2 × 2 grid of 4-pixel patches after [CLS]: L = 5; centres (2,2), (2,6), (6,2), (6,6).
    weights = torch.zeros(5, 5, 5, dtype=torch.float64)  # (H, L, L)
    weights[0, 1:, 1:] = torch.eye(4)  # itself
    neighbour = torch.tensor([1, 0, 3, 2])  # r0c0 <-> r0c1, r1c0 <-> r1c1: 4 pixels apart
    weights[1, 1 + torch.arange(4), 1 + neighbour] = 1.0
    weights[2, 1 + torch.arange(4), 1 + torch.tensor([3, 2, 1, 0])] = 1.0  # the opposite corner: 4·√2
    weights[3, 1:, 1:] = 0.25  # uniform over the patches: (0 + 4 + 4 + 4·√2) / 4 = 2 + √2
    weights[4, 1:, 0] = 0.5  # half on [CLS] (left out), half on itself (0 pixels)
    weights[4, 1:, 1:] = 0.5 * torch.eye(4)
    weights[:, 0] = 0.2  # [CLS]'s own row plays no part
    distance = mean_attention_distance(weights, rows=2, columns=2, patch=4)
    expected = [0.0, 4.0, 4 * math.sqrt(2), 2 + math.sqrt(2), 0.0]
    torch.testing.assert_close(distance.pixels, torch.tensor(expected, dtype=torch.float64))
    torch.testing.assert_close(distance.cls_share, torch.tensor([0, 0, 0, 0, 0.5], dtype=torch.float64))
    with pytest.raises(ValueError, match="do not fit"):
        mean_attention_distance(weights, rows=3, columns=2, patch=4)


def _distance_by_loops(weights: torch.Tensor, rows: int, columns: int, patch: int) -> tuple[list[float], list[float]]:
    """Per head of (H, 1 + N, 1 + N) weights ([CLS] first): the mean over the query patches of Σ weight × the
    distance between the two patches' centres, patch n's centre ((n // columns + ½)·p, (n % columns + ½)·p) pixels
    from the top-left corner; and the mean weight the query patches give [CLS]. Plain loops."""
    patches = rows * columns
    pixels, cls_share = [], []
    for head in weights.tolist():
        total = on_cls = 0.0
        for query in range(patches):
            y, x = (query // columns + 0.5) * patch, (query % columns + 0.5) * patch
            on_cls += head[1 + query][0]
            for key in range(patches):
                key_y, key_x = (key // columns + 0.5) * patch, (key % columns + 0.5) * patch
                total += head[1 + query][1 + key] * math.hypot(y - key_y, x - key_x)
        pixels.append(total / patches)
        cls_share.append(on_cls / patches)
    return pixels, cls_share


def test_mean_attention_distance_of_heads_on_a_grid_wider_than_tall():
    """A 3 × 4 grid of 5-pixel patches after [CLS] (L = 13), each head's pixels worked out by hand."""
    rows, columns, patch = 3, 4, 5
    patches = rows * columns
    weights = torch.zeros(4, 1 + patches, 1 + patches, dtype=torch.float64)  # (H, L, L)
    for query in range(patches):
        row, col = divmod(query, columns)
        # head 0: the patch to the right, 5 pixels away; the last column's 3 queries, with none, look at [CLS]
        weights[0, 1 + query, 1 + query + 1 if col < columns - 1 else 0] = 1.0
        # head 1: the patch below, 5 pixels away; the last row's 4 queries look at themselves, 0 pixels
        weights[1, 1 + query, 1 + query + columns if row < rows - 1 else 1 + query] = 1.0
        # head 3: half on [CLS], half on the far corner r2c3 (0 pixels from itself)
        weights[3, 1 + query, 0] = weights[3, 1 + query, patches] = 0.5
    weights[2, 1:, 1:] = 1 / patches  # head 2: uniform over the patches
    weights[:, 0] = 1 / (1 + patches)  # [CLS]'s own row plays no part
    distance = mean_attention_distance(weights, rows, columns, patch)
    # head 0: 9 queries × 5 pixels + 3 × 0, over 12 queries; 3 of 12 rows' weight on [CLS]
    # head 1: 8 queries × 5 pixels + 4 × 0, over 12
    # head 2: the mean distance between two of the 12 centres, over all 144 ordered pairs, by loops
    centres = [((n // columns + 0.5) * patch, (n % columns + 0.5) * patch) for n in range(patches)]
    pairwise = sum(math.dist(a, b) for a in centres for b in centres) / patches**2
    # head 3: half the weight × the distance to r2c3, centre (12.5, 17.5), averaged over the queries
    far = sum(0.5 * math.dist(c, (12.5, 17.5)) for c in centres) / patches
    expected = [45 / 12, 40 / 12, pairwise, far]
    torch.testing.assert_close(distance.pixels, torch.tensor(expected, dtype=torch.float64), rtol=0, atol=1e-12)
    torch.testing.assert_close(distance.cls_share, torch.tensor([0.25, 0, 0, 0.5], dtype=torch.float64))
    pixels, cls_share = _distance_by_loops(weights, rows, columns, patch)  # the loops agree with the hand
    assert pixels == pytest.approx(expected) and cls_share == pytest.approx([0.25, 0, 0, 0.5])


def test_uniform_attention_distance_is_the_mean_distance_between_patches_less_clss_share():
    # 2 × 2 patches of 4 pixels after [CLS]: each weight 1/5; from every patch the distances 0, 4, 4, 4·√2
    assert uniform_attention_distance(2, 2, 4) == pytest.approx((4 + 4 + 4 * math.sqrt(2)) / 5)
    # 1 × 3 patches of 2 pixels, no [CLS]: (0+2+4 + 2+0+2 + 4+2+0) / 9
    assert uniform_attention_distance(1, 3, 2, cls_tokens=0) == pytest.approx(16 / 9)


def test_the_grid_relations_follow_the_grid_not_the_reading_order():
    cells = grid_relations(3, 3)  # [CLS], then r0c0 .. r2c2 at tokens 1..9
    assert list(cells) == list(GRID_RELATIONS)
    left = cells["left patch"]
    assert bool(left[1 + 4, 1 + 3]) and int(left[1 + 4].sum()) == 1  # r1c1 -> r1c0
    assert not left[1 + 3].any()  # r1c0 has no left neighbour: not r0c2, its previous token
    assert bool(cells["patch above"][1 + 4, 1 + 1]) and bool(cells["patch below"][1 + 4, 1 + 7])
    assert int(cells["nearby patches"][1 + 4].sum()) == 9 and int(cells["nearby patches"][1 + 0].sum()) == 4
    assert cells["[CLS]"][1:, 0].all() and not cells["[CLS]"][0].any() and not cells["[CLS]"][:, 1:].any()
    for name in GRID_RELATIONS[2:]:
        assert not cells[name][0].any() and not cells[name][:, 0].any()  # [CLS] has no place in the grid


def test_heads_on_a_grid_are_labelled_by_the_grid_never_previous_token():
    length = 10  # [CLS] + 3 × 3
    above, previous, cls = torch.zeros(length, length), torch.zeros(length, length), torch.zeros(length, length)
    for n in range(9):
        above[1 + n, 1 + n - 3 if n >= 3 else 0] = 1.0  # the patch above ([CLS] from the first row)
        previous[1 + n, n] = 1.0  # the token before it in reading order
        cls[1 + n, 0] = 1.0
    for head in (above, previous, cls):
        head[0, 0] = 1.0
    labels = patch_head_labels(torch.stack([above, previous, cls]), None, None, (3, 3))
    assert [label.name for label in labels] == ["patch above", "left patch", "[CLS]"]
    # the previous token is the left neighbour inside a row (the rows where "left patch" points: share 1); at a
    # row's start it is the last patch of the row above, which the grid's words do not call a neighbour
    assert [label.share for label in labels] == [pytest.approx(1.0)] * 3


def test_an_upload_is_named_by_its_files_sha256_and_equal_uploads_are_one_cache_key():
    data = _png(20, 10)
    first, second = read_upload(data), read_upload(data)
    assert first.digest == hashlib.sha256(data).hexdigest() and first.pixels is not second.pixels
    assert first == second and hash(first) == hash(second) and repr(first) == f"Upload(digest={first.digest!r})"
    assert read_upload(_png(20, 11)) != first


# ---------------------------------------------------------------- the digits' model and task
def test_the_vit_counts_its_parameters_as_the_formula_says():
    for patch in (2, 4):
        task = make_task("digits", patch=patch)
        model = task.build_model(32, 4, torch.Generator().manual_seed(0))
        assert isinstance(model, DigitsModel) and [type(m) for m in model.layers] == [MultiHeadAttention] * 2
        counts = digits_model_parameters(1, 8, patch, 32, 4, 2, 10)
        assert counts["total"] == sum(p.numel() for p in model.parameters())
        assert counts["patch_embedding"] == sum(p.numel() for p in model.patch_embedding.parameters())
        assert counts["positions"] == model.position_embedding.numel() == task.length * 32
        assert counts["attention"] == sum(p.numel() for p in model.layers[0].parameters())


def test_the_vit_is_pre_norm_and_reads_its_answer_from_cls():
    task = make_task("digits")
    model = task.build_model(16, 2, torch.Generator().manual_seed(0))
    images = task.inputs(torch.tensor([0, 5, 9]))  # (3, 1, 8, 8)
    xs, weights = model.layer_inputs(images)
    assert [x.shape for x in xs] == [(3, 17, 16)] * 3 and [w.shape for w in weights] == [(3, 2, 17, 17)] * 2
    embedded = model.embed(images)
    torch.testing.assert_close(xs[0], model.blocks[0].norm_1(embedded))  # the attention reads LN1(x)
    patches = patchify((images - DIGIT_PIXEL_MEAN) / DIGIT_PIXEL_STD, 2)
    torch.testing.assert_close(embedded[:, 1:], model.patch_embedding(patches) + model.position_embedding[:, 1:])
    logits, _ = model(images)
    assert logits.shape == (3, 1, 1, 10)
    torch.testing.assert_close(logits[:, 0, 0], model.readout(xs[-1][:, 0]))  # [CLS] alone


def test_a_training_step_computes_cls_alone_in_the_last_block_and_gets_the_same_logits_and_gradients():
    """``DigitsModel.logits`` (a training step's) leaves out the last block's other rows: nothing else reaches the
    readout, so the logits and every parameter's gradient are the full forward pass's, to float32 rounding."""
    task = make_task("digits")
    model = task.build_model(32, 4, torch.Generator().manual_seed(2))
    images = task.inputs(torch.arange(6))
    full, _ = model(images)
    short = model.logits(images)
    torch.testing.assert_close(short, full, rtol=1e-5, atol=1e-6)
    grads = []
    for logits in (full, short):
        model.zero_grad()
        logits.sum().backward(retain_graph=True)
        grads.append({name: p.grad.clone() for name, p in model.named_parameters()})
    for name, grad in grads[0].items():  # sums over six images in another order: float32 rounding (FLOAT32)
        torch.testing.assert_close(grads[1][name], grad, **FLOAT32, msg=name)
    assert grads[0]["blocks.1.attention.W_q.weight"].abs().sum() > 0  # [CLS]'s query of the last block is trained


def test_the_digits_task_trains_on_the_training_split_and_scores_cls_only():
    task = make_task("digits")
    assert isinstance(task, DigitsTask) and task.length == 17 and make_task("digits", patch=4).length == 5
    ids = task.sample(500, torch.Generator().manual_seed(0))
    assert not set(ids.tolist()) & set(load_digits().held_out.tolist())
    assert torch.equal(task.targets(ids).view(-1), load_digits().labels[ids])
    assert task.layers == 2
    rows = task.scored_rows(ids[:2], 1)  # the last layer: [CLS]'s row alone reaches the answer
    assert rows.shape == (2, 17) and rows[:, 0].all() and not rows[:, 1:].any()
    assert task.scored_rows(ids[:2], 0).all()  # the first: every row is read by the next layer
    assert task.tokens(ids[0])[:3] == ("[CLS]", "r0c0", "r0c1")
    with pytest.raises(ValueError, match="must divide"):
        make_task("digits", patch=3)


def test_digits_reach_95_percent_on_held_out_digits():
    # A small configuration, as the text tasks' tests train: 4 × 4 patches (5 tokens), d_model 32, 2 heads.
    _, history = train("digits", d_model=32, num_heads=2, seed=1, patch=4)
    assert history.target_step is not None
    assert history.evaluated == load_digits().held_out.numel() == 364
    assert history.accuracy >= 0.95, history.accuracy
    assert history.snapshots[-1].weights[0].shape == (2, 5, 5)
    assert history.probe.ndim == 0 and int(history.probe) == load_digits().sample_index(3)


def test_the_digits_train_a_fixed_number_of_steps_along_a_cosine():
    recipe = make_task("digits").recipe
    assert recipe.steps == 350 and recipe.warmup_steps == 20
    rate = recipe.learning_rate
    lr = [loop._learning_rate(recipe, step, None, 0, 350) for step in range(350)]
    assert lr[0] == pytest.approx(rate / 20) and lr[19] == pytest.approx(rate) and lr[20] == pytest.approx(rate)
    assert lr[185] == pytest.approx(rate / 2)  # halfway through the 330 steps after the warm-up
    assert lr[-1] == pytest.approx(rate * 0.5 * (1 + math.cos(math.pi * 329 / 330)))
    assert all(a >= b for a, b in itertools.pairwise(lr[20:]))  # falling, to near 0
    _, history = train("digits", 8, 2, seed=0, patch=4, max_steps=25)
    assert history.steps == 25  # the schedule fits under a lower cap


def test_digits_training_is_a_pure_function_of_its_arguments():
    first, first_history = train("digits", 16, 2, seed=3, patch=4, max_steps=15)
    second, second_history = train("digits", 16, 2, seed=3, patch=4, max_steps=15)
    for name, tensor in first.state_dict().items():
        assert torch.equal(tensor, second.state_dict()[name]), name
    assert first_history.losses == second_history.losses
    assert first.position_embedding.shape == (1, 5, 16)


# ---------------------------------------------------------------- the trained source
@pytest.fixture(scope="module")
def digits_source() -> TrainedSource:
    config = AttentionConfig(d_model=16, num_heads=2, weights=TRAINED, task="digits", tokens="")
    model, history = train("digits", 16, 2, seed=0, max_steps=20)
    return TrainedSource(TrainedModel(config.weight_spec, model, history))


def test_a_digits_config_needs_no_text_and_keys_its_weights_by_patch():
    config = AttentionConfig(d_model=16, num_heads=2, weights=TRAINED, task="digits", tokens="", patch=4)
    assert config.trains_on_images and config.weight_spec.patch == 4 and config.weight_spec.text is None
    assert AttentionConfig(d_model=16, num_heads=2, weights=TRAINED, task="previous").weight_spec.patch is None
    with pytest.raises(ConfigError) as empty:
        AttentionConfig(d_model=16, num_heads=2, weights=TRAINED, task="previous", tokens="")
    assert empty.value.field == "tokens"  # a text task still needs its text


def test_a_digits_run_shows_the_patches_through_the_same_four_steps(digits_source):
    config = AttentionConfig(d_model=16, num_heads=2, weights=TRAINED, task="digits", tokens="", image="digit-7")
    run = run_attention(config, digits_source)
    assert run.tokens == patch_tokens(4, 4) and run.x.shape == (1, 17, 16)
    model = digits_source.model(torch.device("cpu"), "float32")  # the reference on the CPU; the run's values moved
    with torch.inference_mode():
        _, weights = model.layer_inputs(sample_image("digit-7").unsqueeze(0))
    torch.testing.assert_close(run.trace.weights.cpu(), weights[0])  # the shown layer's weights are the model's own
    assert run.scored_rows.tolist() == [True] * 17  # the first layer: every row is read by the second
    assert run.image.image.grid == (4, 4) and run.image.image.prefix == 1
    torch.testing.assert_close(run.image.image.pixels.cpu(), sample_image("digit-7"))  # the 8 × 8 the model read
    for mine, theirs in zip(run.image.layer_weights, weights, strict=True):
        torch.testing.assert_close(mine.cpu(), theirs)
    assert {label.name for label in run.head_labels} <= {*GRID_RELATIONS, "broad"}  # the grid's words, not a row's
    last = run_attention(dataclasses.replace(config, layer=1), digits_source)
    torch.testing.assert_close(last.trace.weights.cpu(), weights[1])
    assert last.scored_rows.tolist() == [True] + [False] * 16  # [CLS]'s row alone reaches the answer
    assert [rows.tolist() for rows in last.image.layer_rows] == [[True] * 17, [True] + [False] * 16]
    (note,) = run.notes
    assert note.code == "trained_digit" and note.params["label"] == 7
    photo = run_attention(dataclasses.replace(config, image="photo-flower"), digits_source)
    assert photo.notes[0].code == "trained_image" and photo.x.shape == (1, 17, 16)
    distance = mean_attention_distance(run.trace.weights[0], 4, 4, 2)  # the 8 × 8 digit in 2-pixel patches
    pixels, cls_share = _distance_by_loops(run.trace.weights[0].cpu(), 4, 4, 2)
    expected_pixels, expected_share = (torch.tensor(v, dtype=torch.float64) for v in (pixels, cls_share))
    torch.testing.assert_close(distance.pixels.cpu(), expected_pixels, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(distance.cls_share.cpu(), expected_share, rtol=1e-6, atol=1e-6)


def test_an_upload_goes_through_the_same_source(digits_source):
    config = AttentionConfig(d_model=16, num_heads=2, weights=TRAINED, task="digits", tokens="")
    image = decode_image(_png(30, 40))
    inputs = digits_source.prepare_image(config, torch.device("cpu"), image)
    assert inputs.tokens[0] == "[CLS]" and inputs.x.shape == (1, 17, 16)
    assert inputs.notes[0].code == "trained_image"


# ---------------------------------------------------------------- lab 10: windows and shifted windows
def _swin_regions(rows: int, columns: int, window: int, shift: int) -> torch.Tensor:
    """The Swin paper's code's construction of the rolled grid's regions: three slices per axis, numbered in turn."""
    regions = torch.zeros(rows, columns, dtype=torch.long)
    bands = (slice(0, -window), slice(-window, -shift), slice(-shift, None))
    count = 0
    for h in bands:
        for w in bands:
            regions[h, w] = count
            count += 1
    return regions


def _members(rows: int, columns: int, window: int) -> list[list[tuple[int, int]]]:
    """The places of each window of the grid, windows row by row, places row by row inside (plain loops)."""
    return [
        [(top + i, left + j) for i in range(window) for j in range(window)]
        for top in range(0, rows, window)
        for left in range(0, columns, window)
    ]


@pytest.mark.parametrize(
    ("rows", "columns", "window", "shift"), [(8, 8, 4, 2), (8, 8, 4, 1), (8, 12, 4, 3), (6, 6, 2, 1)]
)
def test_the_shifted_window_mask_is_swins(rows, columns, window, shift):
    regions = _swin_regions(rows, columns, window, shift)
    mask = shifted_window_mask(rows, columns, window, shift)
    places = _members(rows, columns, window)
    assert mask.shape == (len(places), window * window, window * window) and mask.dtype == torch.bool
    for w, members in enumerate(places):
        for a, (ra, ca) in enumerate(members):
            for b, (rb, cb) in enumerate(members):
                assert bool(mask[w, a, b]) == bool(regions[ra, ca] == regions[rb, cb]), (w, a, b)
    assert bool(shifted_window_mask(rows, columns, window, 0).all())  # no shift: nothing to keep apart


@pytest.mark.parametrize(("side", "window", "shift"), [(8, 4, 2), (8, 4, 0), (8, 2, 1), (12, 4, 3)])
def test_the_grid_mask_is_the_partition_into_displaced_windows(side, window, shift):
    def band(
        i: int,
    ) -> int:  # windows displaced by s, without the roll: bands [0, s), [s, s + M), ..., smaller at the edges
        return (i - shift) // window

    mask = grid_mask(side, side, window, shift)[0, 0]
    for n in range(side * side):
        for m in range(side * side):
            same = band(n // side) == band(m // side) and band(n % side) == band(m % side)
            assert bool(mask[n, m]) == same, (n, m)


def test_window_partition_and_merge_are_inverse_and_follow_the_windows():
    x = torch.randn(2, 8, 12, 3, generator=torch.Generator().manual_seed(0))
    windows = window_partition(x, 4)
    assert windows.shape == (2 * 6, 16, 3)
    for w, members in enumerate(_members(8, 12, 4)):
        for k, (r, c) in enumerate(members):
            assert torch.equal(windows[6 + w, k], x[1, r, c])  # batch 1's windows follow batch 0's
    assert torch.equal(window_merge(windows, 8, 12, 4), x)
    ids = window_ids(8, 12, 4)
    assert ids[0, 0] == 0 and ids[0, 11] == 2 and ids[7, 0] == 3 and int(ids.max()) == 5
    rolled = cyclic_shift(torch.arange(64).view(1, 8, 8), 2)[0]
    assert int(rolled[0, 0]) == 2 * 8 + 2 and int(rolled[6, 6]) == 0  # patch (i, j) moves to (i − s, j − s)
    with pytest.raises(ValueError, match="must divide"):
        window_partition(x, 5)
    with pytest.raises(ValueError, match="shift"):
        shifted_window_mask(8, 8, 4, 4)


@pytest.mark.parametrize("shift", [0, 1, 2, 3])
def test_window_attention_is_attention_over_all_patches_with_the_grid_mask(shift):
    model = build_seeded_layer(16, 2, 3)
    x = torch.randn(2, 64, 16, generator=torch.Generator().manual_seed(1))
    out, weights = window_attention(model, x, 8, 8, 4, shift)
    reference, _ = model(x, x, x, grid_mask(8, 8, 4, shift))
    torch.testing.assert_close(out, reference, rtol=1e-5, atol=1e-6)
    assert weights.shape == (2 * 4, 2, 16, 16)
    blocked = ~shifted_window_mask(8, 8, 4, shift).repeat(2, 1, 1).unsqueeze(1)  # (B·W, 1, M², M²)
    assert bool((weights.masked_select(blocked) == 0).all())


def test_query_weights_look_only_where_each_rule_lets_them():
    x = image_tokens(sample_image("photo-temple"), 8, 8, 32, seed=0)
    assert x.shape == (1, 64, 32)
    weights = query_weights(build_seeded_layer(32, 2, 0), x, 8, 4, 2, query=27)
    assert weights.shape == (3, 2, 64)
    torch.testing.assert_close(weights.sum(-1), torch.ones(3, 2))
    assert bool((weights[0] > 0).all())  # global: every patch
    for view, shift in ((1, 0), (2, 2)):
        allowed = grid_mask(8, 8, 4, shift)[0, 0, 27]
        assert bool((weights[view][:, ~allowed] == 0).all()) and bool((weights[view][:, allowed] > 0).all())


def test_multiply_adds_are_the_swin_papers_numbers():
    """Liu et al. 2021 (Swin Transformer), eq. (1) and (2): Ω(MSA) = 4hwC² + 2(hw)²C, Ω(W-MSA) = 4hwC² + 2M²hwC,
    worked out by hand for Swin-T's settings (M = 7): stage 1, h = w = 56, C = 96; stage 2, h = w = 28, C = 192.

    Stage 1: hw = 3136; 4·3136·96² = 4·3136·9216 = 115,605,504; 2·3136²·96 = 2·9,834,496·96 = 1,888,223,232;
    2·7²·3136·96 = 98·301,056 = 29,503,488. MSA: 2,003,828,736; W-MSA: 145,108,992.
    Stage 2: hw = 784; 4·784·192² = 4·784·36,864 = 115,605,504 (the same); 2·784²·192 = 2·614,656·192 =
    236,027,904; 2·7²·784·192 = 98·150,528 = 14,751,744. MSA: 351,633,408; W-MSA: 130,357,248.
    """
    assert multiply_adds("global", 56 * 56, 96, 7) == 2_003_828_736
    assert multiply_adds("windows", 56 * 56, 96, 7) == 145_108_992
    assert multiply_adds("global", 28 * 28, 192, 7) == 351_633_408
    assert multiply_adds("windows", 28 * 28, 192, 7) == 130_357_248
    rows = cost_rows((56, 28), 96, 7)
    assert [(row.side, row.patches) for row in rows] == [(56, 3136), (28, 784)]
    assert (rows[0].global_madds, rows[0].window_madds) == (2_003_828_736, 145_108_992)
    # 28 × 28 at C = 96: 4·784·9216 = 28,901,376; 2·784²·96 = 118,013,952; 2·49·784·96 = 7,375,872
    assert (rows[1].global_madds, rows[1].window_madds) == (146_915_328, 36_277_248)
    with pytest.raises(ValueError, match="unknown method"):
        multiply_adds("sliding", 64, 32, 4)


def test_measure_windows_reports_both_methods_per_grid():
    steady = measure_windows_steady((4, 8), 16, 2, 4, repeats=3)
    assert [row.side for row in steady.result] == [4, 8]  # the grids asked for, in order
    for row in steady.result:
        for timing in (row.global_time, row.window_time):
            assert timing.rounds == 3, timing  # the rounds asked for
            assert all(math.isfinite(v) for v in (timing.low_s, timing.median_s, timing.high_s)), timing
            assert 0 < timing.low_s <= timing.median_s <= timing.high_s, timing  # quartiles in order
    assert 1 <= steady.attempts <= 3
    assert steady.trusted == (steady.breaks == ())


@pytest.mark.parametrize(
    ("seconds", "attempts", "broken"),
    [
        # global 16×, windows 8×: each twice its work's growth (8× and 4×), the most allowed
        ({4: (1.0, 1.0), 8: (16.0, 8.0)}, 1, ()),
        # global 17×, windows 9×: each more than twice its work: flagged with the work's growth, measured 3 times
        ({4: (1.0, 1.0), 8: (17.0, 9.0)}, 3, (("global", 17.0, 8.0), ("windows", 9.0, 4.0))),
    ],
)
def test_measure_windows_checks_each_time_against_its_counted_work(monkeypatch, seconds, attempts, broken):
    """The times are set here (no clock): from a 4 × 4 grid to 8 × 8 (N = 16 to 64, D = 16, M = 4) the counted
    work of global attention, 4·N·16² + 2·N²·16 = 1024·N + 32·N², grows from 24,576 to 196,608 (8×, N² at work),
    and that of the windows, 4·N·16² + 2·4²·N·16 = 1536·N, from 24,576 to 98,304 (4×, linear in N)."""
    timed: list[tuple] = []

    def set_times(calls, repeats):
        timed.append(calls)
        side = math.isqrt(calls[0]()[1].size(-1))  # the global call's weights: (1, H, N, N)
        return [Timing(s, s, s, repeats) for s in seconds[side]]

    monkeypatch.setattr(windows_module, "time_calls", set_times)
    steady = measure_windows_steady((4, 8), 16, 2, 4, repeats=3)
    assert steady.attempts == attempts and len(timed) == 2 * attempts
    assert [(b.series, b.size_from, b.size_to, b.time_ratio, b.work_ratio) for b in steady.breaks] == [
        (series, 4, 8, time_ratio, work_ratio) for series, time_ratio, work_ratio in broken
    ]
    global_call, window_call = timed[-1]  # the 8 × 8 grid's calls: global attention, then shifted windows
    assert global_call()[1].shape == (1, 2, 64, 64)
    assert window_call()[1].shape == (64 // 16, 2, 16, 16)  # 4 windows of 4 × 4 patches, every head


# ---------------------------------------------------------------- the page
def test_a_digits_link_trains_then_shows_the_patches_through_the_four_steps(short_trainings):
    at = AppTest.from_file(str(REPO / "playground.py"), default_timeout=120)
    for key, value in {"weights": "trained", "task": "digits", "d_model": "16", "num_heads": "2"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception and not at.error
    assert headings(at, 3)[0] == t("training.title", task=t("task.digits"))
    job = service_module.training_service().job(trained_spec(16, 2, 0, task="digits", patch=2))
    assert job is not None and job.finished.wait(120)
    at.run()
    assert not at.exception and not at.error
    page = "\n".join(str(e.value) for kind in ("markdown", "caption", "success", "info") for e in at.get(kind))
    assert f"Trained in {SHORT_TRAINING_STEPS} steps" in page and "364 held-out validation digits" in page
    assert "a handwritten 3 that the model never trained on" in page  # the default image, digit-3
    for title in ("step1.title", "step2.title", "step3.title", "step4.title"):
        assert t(title) in page, title
