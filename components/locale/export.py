"""Messages of the export panel: downloads of the trace and the "reproduce in PyTorch" script."""

MESSAGES: dict[str, dict[str, str]] = {
    "export.title": {"en": "Export", "zh": "导出"},
    "export.intro": {
        "en": "Take this exact forward pass with you: every intermediate tensor, and a script that recomputes it.",
        "zh": "把这一次前向计算带走：每一个中间张量，以及一段能重新算出它的脚本。",
    },
    "export.npz.label": {"en": "Download tensors (.npz)", "zh": "下载张量（.npz）"},
    "export.npz.help": {
        "en": "Every tensor of the trace by name (attend.weights, ...), the tokens and the settings. "
        "Open it with numpy.load.",
        "zh": "按名称保存的全部中间张量（attend.weights 等）、词元和设置。用 numpy.load 打开。",
    },
    "export.csv.label": {"en": "Download tensors (CSV, zip)", "zh": "下载张量（CSV，zip）"},
    "export.csv.help": {
        "en": "One CSV per tensor for a spreadsheet: one row per cell, index columns b, h, i, j, d, dh, then `value`; "
        "plus tokens.csv and config.json.",
        "zh": "每个张量一个 CSV，可用电子表格打开：每个元素一行，先是下标列 b、h、i、j、d、dh，再是 `value`；"
        "另附 tokens.csv 和 config.json。",
    },
    "export.code.title": {"en": "Reproduce in PyTorch", "zh": "用 PyTorch 复现"},
    "export.code.caption": {
        "en": "Needs only PyTorch: the same tokens, embeddings, weights and mask as this page, a from-scratch "
        "MultiHeadAttention, and a check against torch.nn.MultiheadAttention. Copy it into a notebook and run it.",
        "zh": "只需要 PyTorch：与本页相同的词元、嵌入、权重和掩码，一个从零写的 MultiHeadAttention，"
        "并与 torch.nn.MultiheadAttention 对照。复制到 notebook 里即可运行。",
    },
}
