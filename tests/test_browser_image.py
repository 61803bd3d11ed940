"""The image page in a real Chromium, in Chinese (AppTest cannot upload on a Chinese page): a file that is not an
image is refused with the Chinese message and the page keeps the sample; a photo uploaded is read instead, shown
beside the 8 × 8 the model read; the heatmaps draw each patch's picture beside its label. The server trains the
digits for real (d_model 16, 2 heads: seconds)."""

from __future__ import annotations

import pytest
from conftest import ARTIFACTS, console_errors
from test_browser_controls import settle, text_appears

from components.i18n import t
from mha.config import ConfigError
from mha.vision.samples import DATA_DIR
from mha.vision.upload import decode_image

pytestmark = pytest.mark.browser

LINK = "/?weights=trained&task=digits&d_model=16&num_heads=2&seed=11&lang=zh"


def _sidebar_text(page) -> str:
    return page.locator('[data-testid="stSidebar"]').inner_text()


def test_an_upload_on_the_chinese_page_is_refused_or_read_in_chinese(app_url, page, tmp_path):
    page.goto(app_url + LINK)
    settle(page, text_appears(t("patches.title", lang="zh")), timeout_ms=240_000)
    assert t("controls.image_upload_link", lang="zh") in _sidebar_text(page)
    uploader = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    notes = tmp_path / "notes.png"
    notes.write_bytes(b"not a picture at all\n" * 8)
    with pytest.raises(ConfigError) as refused:
        decode_image(notes.read_bytes())
    message = t(f"error.image.{refused.value.code}", lang="zh")
    uploader.set_input_files(str(notes))
    page.wait_for_function(
        f"() => document.querySelector('[data-testid=\"stSidebar\"]').innerText.includes({message!r})", timeout=60_000
    )
    settle(page, text_appears("这张图是一个手写的 3"))  # the sample goes on
    uploader.set_input_files(str(DATA_DIR / "photo-flower.jpg"))  # a photo replaces the file refused
    charts = settle(page, text_appears(t("patches.original", lang="zh")), timeout_ms=120_000)
    assert all(charts)
    assert message not in _sidebar_text(page) and t("controls.image_upload_shown", lang="zh") in _sidebar_text(page)
    assert "这个模型只认识数字" in page.locator('[data-testid="stMainBlockContainer"]').inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "image-upload-zh.png"), full_page=True)
    assert console_errors(page) == []


def test_the_heatmaps_draw_each_patchs_picture_beside_its_label(app_url, page):
    page.goto(app_url + LINK.replace("lang=zh", "lang=en"))
    settle(page, text_appears(t("patches.title")), timeout_ms=240_000)
    # step 1's chart: the row labels moved left by a picture's width; a picture's pixels are grey (r = g = b)
    drawn = page.evaluate(
        """() => {
            const chart = document.querySelector('.st-key-heatmap_step1 .attn-heatmap');
            const layout = chart.attnLayout;
            const canvas = chart.querySelector('canvas');
            const ratio = canvas.width / canvas.clientWidth;
            const box = layout.panels[0];
            const x = Math.round((layout.gutter - 3 - layout.thumb / 2) * ratio);
            const y = Math.round((box.y + 1.5 * box.ch) * ratio);  // row 1: patch r0c0
            const [r, g, b, a] = canvas.getContext('2d').getImageData(x, y, 1, 1).data;
            return {thumb: layout.thumb, grey: r === g && g === b, opaque: a === 255};
        }"""
    )
    assert drawn["thumb"] >= 10 and drawn["grey"] and drawn["opaque"], drawn
    assert console_errors(page) == []
