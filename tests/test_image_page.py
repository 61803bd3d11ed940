"""The image page (``weights=trained&task=digits``): the image controls in place of the text's, an upload of one's own
refused with its message or read instead of the sample, the patches panel's numbers, and both languages.

The panel's numbers are checked against the trained model's own weights, run again here on the image the page
read, and against the definitions worked out here in plain loops and NumPy (mean attention distance from the
patches' centres, attention rollout as 0.5·A + 0.5·I with rows renormalised, multiplied from the first layer up),
not against :mod:`mha.vision.analysis`, whose functions the page calls.
"""

from __future__ import annotations

import io
import json
import math
import struct
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import torch
from conftest import headings, trained_spec
from PIL import Image
from streamlit.testing.v1 import AppTest
from test_languages import HAN, leftover_english, shown_texts, user_tokens
from tolerances import FLOAT32, NUMBER, printed_forms, printed_numbers

from components.controls import UPLOAD_KEY, error_message
from components.i18n import t
from mha.config import LIMITS, ConfigError
from mha.training.service import training_service
from mha.vision.analysis import attention_rollout, mean_attention_distance, uniform_attention_distance
from mha.vision.images import as_digit
from mha.vision.samples import SAMPLE_NAMES, sample_image
from mha.vision.upload import decode_image

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
DIGITS = {"weights": "trained", "task": "digits", "d_model": "16", "num_heads": "2"}

pytestmark = pytest.mark.usefixtures("short_trainings")  # every page here trains its digits, briefly


def open_digits(lang: str = "en", **params: str) -> AppTest:
    """The digits page for ``params``, once its (short) training has finished.

    The training runs from an English page first: AppTest formats a widget's value with the page's ``format_func``
    outside the script, in English, so a Chinese page cannot run a second time (nor send a widget back).
    """
    trains = AppTest.from_file(SCRIPT, default_timeout=120)
    trains.query_params.update({**DIGITS, "lang": "en", **params})
    trains.run()
    spec = trained_spec(16, 2, 0, task="digits", patch=int(params.get("patch", "2")))
    job = training_service().job(spec)
    assert job is None or job.finished.wait(120)
    if lang == "en":
        return trains.run()
    at = AppTest.from_file(SCRIPT, default_timeout=120)
    at.query_params.update({**DIGITS, "lang": lang, **params})
    return at.run()


def trained_model(patch: int = 2):
    return training_service().finished(trained_spec(16, 2, 0, task="digits", patch=patch)).model


def charts(at: AppTest) -> list[tuple[dict, dict[str, object]]]:
    """Every Vega-Lite chart: its spec and its datasets (Arrow -> pandas)."""
    found = []
    for element in at.get("vega_lite_chart"):
        sets = element.proto.datasets
        data = {d.name: pa.ipc.open_stream(io.BytesIO(d.data.data)).read_all().to_pandas() for d in sets}
        found.append((json.loads(element.proto.spec), data))
    return found


def overlay(at: AppTest, first_title: str):
    """The cells of the overlay chart whose first picture is titled ``first_title``, and the panels' titles."""
    for spec, data in charts(at):
        titles = [view.get("title", {}).get("text") for view in spec.get("concat", [])]
        if titles and titles[0] == first_title:
            return data["cells"], titles
    raise AssertionError(f"no overlay titled {first_title!r}")


def page_text(at: AppTest) -> str:
    kinds = ("markdown", "caption", "info", "success", "warning", "error")
    return "\n".join(str(e.value) for kind in kinds for e in at.get(kind))


def layer_weights(pixels: torch.Tensor, patch: int = 2) -> list[np.ndarray]:
    """Every layer's weights (H, L, L) of the page's trained model on the (1, 8, 8) image."""
    with torch.inference_mode():
        _, weights = trained_model(patch).layer_inputs(pixels.unsqueeze(0))
    return [w[0].cpu().double().numpy() for w in weights]


# ---------------------------------------------------------------- the controls
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_image_controls_take_the_place_of_the_texts(lang):
    at = open_digits(lang)
    assert not at.exception and not at.error, [e.value for e in at.exception] + [e.value for e in at.error]
    image = at.selectbox(key="image")
    names = [t(f"image.{n}", lang=lang) if n.startswith("photo") else t("image.digit", digit=n[-1], lang=lang)
             for n in SAMPLE_NAMES]  # fmt: skip
    assert image.value == "digit-3" and image.options == names
    assert at.radio(key="patch").value == 2
    assert at.radio(key="patch").options == [t("controls.patch_size", patch=p, lang=lang) for p in (2, 4)]
    (uploader,) = [w for w in at.get("file_uploader") if w.key == UPLOAD_KEY]
    assert {".png", ".jpg", ".jpeg"} <= {f".{kind.lstrip('.')}" for kind in uploader.allowed_type}
    assert t("controls.image_upload_link", lang=lang) in [c.value for c in at.caption]  # not in the link
    assert not [w for w in at.text_area if w.key == "tokens"] and not [w for w in at.radio if w.key == "tokenizer"]
    assert t("patches.title", lang=lang) in headings(at, 3)
    assert t("padding.image", tokens=17, lang=lang) in [i.value for i in at.info]  # no padding for images
    assert t("controls.d_k", d_model=16, num_heads=2, d_k=8, lang=lang) in [c.value for c in at.caption]


def test_the_chinese_image_page_has_no_english_left_and_the_english_one_no_chinese():
    zh = open_digits("zh")
    tokens = user_tokens(zh)
    texts = [(key, text) for key, text in shown_texts(zh) if key != "lang" and not key.startswith("example_")]
    leftovers = [(key, text[:90], words) for key, text in texts if (words := leftover_english(text, tokens))]
    assert not leftovers, leftovers
    en = open_digits("en")
    chinese = [(key, text[:90]) for key, text in shown_texts(en) if key != "lang" and HAN.search(text)]
    assert not chinese, chinese


def test_image_and_patch_come_from_the_link_and_a_new_image_updates_it():
    at = open_digits(image="digit-7", patch="4")
    assert not at.exception and not at.error
    assert at.selectbox(key="image").value == "digit-7" and at.radio(key="patch").value == 4
    assert "a handwritten 7 that the model never trained on" in page_text(at)
    cells, titles = overlay(at, t("patches.mean"))
    assert cells["patch"].tolist()[:4] == ["r0c0", "r0c1", "r1c0", "r1c1"]  # 2 × 2 patches
    assert len(titles) == 3  # the mean and 2 heads
    at.selectbox(key="image").set_value("photo-temple").run()
    assert not at.exception and at.query_params["image"] == "photo-temple" and at.query_params["patch"] == "4"
    assert t("patches.original") in [c.value for c in at.caption]  # a photo: what it was before the resizing


# ---------------------------------------------------------------- uploads
def _png_header(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width`` × ``height`` over one tiny compressed row: written by hand, no pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit grey
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0")) + chunk(b"IEND", b"")


BAD_UPLOADS = {
    "not_image": ("notes.png", b"a shopping list, not a picture\n" * 4),
    "file_too_large": ("big.png", b"\x89PNG\r\n\x1a\n" + bytes(LIMITS.image_bytes_max)),
    "too_many_pixels": ("wide.png", _png_header(5000, 4000)),  # 20 M pixels: over the cap, under Pillow's bomb check
    "bomb": ("bomb.png", _png_header(30_000, 30_000)),  # 900 M pixels claimed in a few dozen bytes
}


@pytest.mark.parametrize("code", list(BAD_UPLOADS))
def test_a_bad_upload_is_refused_with_its_message_and_the_page_keeps_the_sample(code):
    """Each refusal's message (Chinese ones too: ``test_browser_image.py``, AppTest cannot upload on a Chinese page)."""
    name, data = BAD_UPLOADS[code]
    with pytest.raises(ConfigError) as refused:
        decode_image(data)
    assert refused.value.code == code
    at = open_digits()
    uploader = next(w for w in at.get("file_uploader") if w.key == UPLOAD_KEY)
    uploader.set_value((name, data, "image/png")).run()
    assert not at.exception
    assert [e.value for e in at.error] == [error_message(refused.value)]  # the reason, with its numbers
    assert t(f"error.image.{code}").split("{")[0][:20] in at.error[0].value
    assert t("patches.title") in headings(at, 3)  # the page goes on, with the sample
    assert at.selectbox(key="image").value == "digit-3" and not at.selectbox(key="image").disabled
    assert "a handwritten 3 that the model never trained on" in page_text(at)
    uploader = next(w for w in at.get("file_uploader") if w.key == UPLOAD_KEY)
    uploader.set_value(None).run()  # the file removed: its message goes with it
    assert not at.exception and not at.error


def _digit_drawing() -> bytes:
    """A 40 × 40 JPEG-free PNG: a thick dark 1 on white paper (the page inverts it to light ink on dark)."""
    image = Image.new("L", (40, 40), 255)
    for y in range(6, 34):
        for x in range(17, 24):
            image.putpixel((x, y), 20)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def test_an_upload_is_read_instead_of_the_sample_and_stays_out_of_the_link():
    data = _digit_drawing()
    at = open_digits()
    link = dict(at.query_params)
    uploader = next(w for w in at.get("file_uploader") if w.key == UPLOAD_KEY)
    uploader.set_value(("one.png", data, "image/png")).run()
    assert not at.exception and not at.error
    assert dict(at.query_params) == link  # the link still names the sample
    assert at.selectbox(key="image").disabled and t("controls.image_upload_shown") in [c.value for c in at.caption]
    assert "This model knows only digits" in page_text(at)
    pixels = as_digit(decode_image(data))  # (1, 8, 8): what the model reads of the upload
    assert float(pixels[0, 20 // 5, 20 // 5]) > 0.5 > float(pixels[0, 0, 0])  # inverted: the stroke is ink now
    weights = layer_weights(pixels)[0]  # the shown layer, 0: (H, L, L)
    cells, _ = overlay(at, t("patches.mean"))
    mean = cells[cells["panel"] == 0]["weight"].to_numpy()
    np.testing.assert_allclose(mean, weights[:, 0, 1:].mean(axis=0), **FLOAT32)  # [CLS]'s row over the upload
    sample = layer_weights(sample_image("digit-3"))[0]
    assert not np.allclose(mean, sample[:, 0, 1:].mean(axis=0), **FLOAT32)  # not the sample's


# ---------------------------------------------------------------- the panel's numbers
def _distance_by_hand(weights: np.ndarray, grid: int, patch: int) -> list[float]:
    """Each head's mean attention distance: per query patch, the weight on every key patch times the distance of
    their centres ((row + ½)·p, (column + ½)·p), summed; then the mean over the query patches ([CLS] left out)."""
    centres = [((n // grid + 0.5) * patch, (n % grid + 0.5) * patch) for n in range(grid * grid)]
    out = []
    for head in weights:
        per_query = []
        for n, (y, x) in enumerate(centres):
            per_query.append(sum(head[1 + n, 1 + m] * math.dist((y, x), c) for m, c in enumerate(centres)))
        out.append(sum(per_query) / len(per_query))
    return out


def _rollout_by_hand(layers: list[np.ndarray]) -> np.ndarray:
    product = np.eye(layers[0].shape[-1])
    for weights in layers:
        mixed = 0.5 * weights.mean(axis=0) + 0.5 * np.eye(weights.shape[-1])
        mixed = mixed / mixed.sum(axis=1, keepdims=True)
        product = mixed @ product
    return product


def test_the_panels_numbers_are_the_definitions_on_the_models_weights():
    at = open_digits()
    layers = layer_weights(sample_image("digit-3"))  # [(H, 17, 17)] * 2
    # one query's weights over the image: [CLS] by default, the mean of the heads, then each head
    cells, titles = overlay(at, t("patches.mean"))
    assert len(titles) == 3
    for panel, expected in enumerate([layers[0][:, 0].mean(axis=0), *layers[0][:, 0]]):
        shown = cells[cells["panel"] == panel]["weight"].to_numpy()
        np.testing.assert_allclose(shown, expected[1:], **FLOAT32)
    # a patch picked as the query: its row, framed
    at.selectbox(key="patch_query").set_value(6).run()  # token 6: r1c1
    cells, _ = overlay(at, t("patches.mean"))
    np.testing.assert_allclose(cells[cells["panel"] == 1]["weight"], layers[0][0, 6, 1:], **FLOAT32)
    assert cells[cells["query"]]["patch"].unique().tolist() == ["r1c1"]
    # how far each head looks: the first layer only (in the last, the patches' rows carry no loss)
    (distance,) = [data for _, data in charts(at) if "distance" in data]
    assert distance["distance"]["layer"].unique().tolist() == [0]
    np.testing.assert_allclose(distance["distance"]["pixels"], _distance_by_hand(layers[0], 4, 2), **FLOAT32)
    uniform = np.full((1, 17, 17), 1 / 17)
    np.testing.assert_allclose(distance["uniform"]["pixels"], _distance_by_hand(uniform, 4, 2), rtol=1e-12)
    assert t("patches.distance_left_out", layers="1") in [c.value for c in at.caption]
    # rollout over both layers, beside the last layer's [CLS] row
    cells, titles = overlay(at, t("patches.rollout_last", layer=1))
    assert titles[1] == t("patches.rollout_all", last=1)
    np.testing.assert_allclose(cells[cells["panel"] == 0]["weight"], layers[1][:, 0, 1:].mean(axis=0), **FLOAT32)
    np.testing.assert_allclose(cells[cells["panel"] == 1]["weight"], _rollout_by_hand(layers)[0, 1:], **FLOAT32)
    # what [CLS] keeps of its own rollout row (the row a loss reads in every layer), against the residual's floor
    captions = [c.value for c in at.caption]
    said = printed_numbers(captions, "patches.rollout_numbers", layers=2, kept=NUMBER, floor="0.25")
    assert said["kept"] in printed_forms(_rollout_by_hand(layers)[0, 0], ".3g")
    assert _rollout_by_hand(layers)[0, 0] >= 0.25
    # the line under the distances names [CLS]: its weight counts as 0 px
    assert t("patches.distance_uniform", uniform=f"{distance['uniform']['pixels'][0]:.2f}", patch=2, cls="`[CLS]`") in (
        captions
    )


@pytest.mark.parametrize("cls_tokens", [1, 2])
def test_a_head_resting_on_cls_reads_below_the_uniform_line_without_looking_near(cls_tokens):
    """Why the line under the distance chart names [CLS] (and DeiT's [DIST]): their weight is dropped, so a head that
    puts everything on them measures 0 px, below uniform attention, while it looks at no patch at all."""
    length = cls_tokens + 16
    resting = torch.zeros(1, length, length, dtype=torch.float64)  # (H=1, L, L)
    resting[0, :, cls_tokens - 1] = 1.0  # every row on the last prefix token
    distance = mean_attention_distance(resting, 4, 4, 2, cls_tokens)
    assert float(distance.pixels[0]) == 0.0 and float(distance.cls_share[0]) == 1.0
    assert float(distance.pixels[0]) < uniform_attention_distance(4, 4, 2, cls_tokens)
    for lang in ("en", "zh"):
        template = t("patches.distance_uniform", lang=lang)
        assert template.count("{cls}") >= 2  # named where the line's reading is qualified


def test_rollouts_self_share_compounds_the_residual_half_it_does_not_add_up():
    """Uniform attention over 17 tokens: [CLS] keeps 0.53, 0.29, 0.18, 0.12 of its own row after 1–4 layers (worked
    out by hand: Â's diagonal is ½ + ½·1/17, its other entries ½·1/17); it falls with depth, always above 0.5^L."""
    uniform = torch.full((2, 17, 17), 1 / 17, dtype=torch.float64)  # (H, L, L)
    diagonal, other = 0.5 + 0.5 / 17, 0.5 / 17
    by_hand = np.full((17, 17), other) + np.eye(17) * (diagonal - other)
    for layers, expected in zip(range(1, 5), (0.53, 0.29, 0.18, 0.12), strict=True):
        share = float(attention_rollout([uniform] * layers)[0, 0])
        assert share == pytest.approx(np.linalg.matrix_power(by_hand, layers)[0, 0], rel=1e-12)
        assert round(share, 2) == expected
        assert share >= 0.5**layers


def test_with_one_layer_rollout_is_the_mean_of_the_heads_at_half_strength():
    """The one-layer sentence: over the patches, rollout's [CLS] row is half the heads' mean (one shared colour
    scale in the overlay, so the right picture is the left one at half strength, not the same picture)."""
    generator = torch.Generator().manual_seed(0)
    weights = torch.softmax(torch.randn(3, 17, 17, generator=generator, dtype=torch.float64), dim=-1)  # (H, L, L)
    rollout = attention_rollout([weights])  # (L, L)
    torch.testing.assert_close(rollout[0, 1:], 0.5 * weights.mean(dim=0)[0, 1:], rtol=1e-12, atol=1e-15)
    assert float(rollout[0, 0]) >= 0.5


def test_step_one_shows_the_patch_embedding_and_the_charts_carry_each_patchs_picture():
    from components.heatmap import decode

    at = open_digits()
    text = page_text(at)
    # Linear(C·p·p, D) = Linear(4, 16): 4·16 + 16 = 80; positions 17·16 = 272
    assert t("step1.patch_params", pixels=4, d=16, embedding="80", length=17, positions="272") in text
    (step1,) = [e for e in at.get("bidi_component") if e.proto.id.endswith("heatmap_step1")]
    figure = decode(step1.proto.bytes)
    assert figure.thumbnails.shape == (17, 2, 2, 4)
    assert not figure.thumbnails[0].any()  # [CLS] is no patch: transparent
    digit = (sample_image("digit-3")[0] * 255).round().to(torch.uint8).numpy()  # (8, 8)
    assert (figure.thumbnails[1 + 5, ..., 0] == digit[2:4, 2:4]).all()  # patch r1c1: rows 2-3, columns 2-3
    assert (figure.thumbnails[1:, ..., 3] == 255).all()
