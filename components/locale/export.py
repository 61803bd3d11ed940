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
    "export.pt.label": {"en": "Download tensors (.pt)", "zh": "下载张量（.pt）"},
    "export.pt.help": {
        "en": "The same tensors as the .npz, for PyTorch alone: torch.load(path, weights_only=True) gives a dict "
        "by name. The reproducing script reads trained and pretrained weights from it.",
        "zh": "与 .npz 相同的张量，只需 PyTorch：torch.load(path, weights_only=True) 得到按名称索引的字典。"
        "复现脚本从这里读取训练得到的权重和预训练权重。",
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
        "MultiHeadAttention, and a check against torch.nn.MultiheadAttention (a layer with grouped-query heads or "
        "RoPE: against scaled_dot_product_attention). Copy it into a notebook and run it.",
        "zh": "只需要 PyTorch：与本页相同的词元、嵌入、权重和掩码，一个从零写的 MultiHeadAttention，"
        "并与 torch.nn.MultiheadAttention 对照（使用分组查询注意力 GQA 或 RoPE 的层，"
        "则与 scaled_dot_product_attention 对照）。"
        "复制到 notebook 里即可运行。",
    },
    "export.code.caption_pt": {
        "en": "Needs only PyTorch: these weights took more than a script to make, so it reads the layer's input and "
        "weights from the .pt download above (put the file next to the script), then runs a from-scratch "
        "MultiHeadAttention with this page's mask and checks it against torch.nn.MultiheadAttention (a layer with "
        "grouped-query heads or RoPE: against scaled_dot_product_attention).",
        "zh": "只需要 PyTorch：这些权重不是一段脚本就能造出来的，所以脚本从上面的 .pt 下载中读取这一层的输入和权重"
        "（把文件放在脚本旁边），然后用本页的掩码运行一个从零写的 MultiHeadAttention，"
        "并与 torch.nn.MultiheadAttention 对照（使用分组查询注意力 GQA 或 RoPE 的层，"
        "则与 scaled_dot_product_attention 对照）。",
    },
}
