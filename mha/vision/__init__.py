"""Images through the same four steps: bundled samples, uploads, patches, and what to read from ViT attention.

Shape legend: B batch, C channels (1 grey, 3 RGB), H and W pixels, p the patch size, R and Q the
patch grid's rows and columns (H / p, W / p), N = R·Q patches, L = N + 1 tokens ([CLS] first).

- :mod:`mha.vision.samples` -- the bundled images: scikit-learn's 8 × 8 digits (with a fixed
  held-out split) and two photos, by name (``digit-3``, ``photo-temple``); no download.
- :mod:`mha.vision.images` -- an image (C, H, W) in [0, 1] made into a model's input (grey, size).
- :mod:`mha.vision.upload` -- a learner's PNG or JPEG decoded within ``LIMITS``, or refused with a code.
- :mod:`mha.vision.patches` -- ``patchify`` (B, C, H, W) -> (B, N, C·p·p), the grid's labels and centres.
- :mod:`mha.vision.analysis` -- mean attention distance per head (pixels) and attention rollout.

Pillow is imported only where a JPEG or PNG is decoded.
"""
