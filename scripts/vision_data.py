"""Make ``mha/vision/data/`` again from a scikit-learn wheel: the digits as they are, the two photos downsized.

    .venv/bin/python -m pip download scikit-learn==1.9.1 --no-deps -d /tmp/skl
    .venv/bin/python scripts/vision_data.py /tmp/skl/scikit_learn-1.9.1-*.whl

Sources, licences and attribution: ``mha/vision/data/README.md``. Needs Pillow (it comes with Streamlit).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import zipfile
from pathlib import Path

from PIL import Image

OUT = Path(__file__).resolve().parents[1] / "mha" / "vision" / "data"
DIGITS = "sklearn/datasets/data/digits.csv.gz"
PHOTOS = {
    "sklearn/datasets/images/china.jpg": "photo-temple.jpg",
    "sklearn/datasets/images/flower.jpg": "photo-flower.jpg",
}
PHOTO_SIZE = (336, 224)
JPEG_QUALITY = 90


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheel", type=Path, help="a scikit-learn wheel (pip download scikit-learn --no-deps)")
    wheel = zipfile.ZipFile(parser.parse_args().wheel)
    digits = wheel.read(DIGITS)
    (OUT / "digits.csv.gz").write_bytes(digits)
    print(f"digits.csv.gz  {len(digits):,} bytes  sha256 {hashlib.sha256(digits).hexdigest()}")
    for source, name in PHOTOS.items():
        with Image.open(io.BytesIO(wheel.read(source))) as photo:
            small = photo.convert("RGB").resize(PHOTO_SIZE, Image.Resampling.LANCZOS)
        small.save(OUT / name, "JPEG", quality=JPEG_QUALITY, optimize=True)
        print(f"{name}  {(OUT / name).stat().st_size:,} bytes  from {source}")


if __name__ == "__main__":
    main()
