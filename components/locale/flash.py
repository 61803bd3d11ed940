"""Messages of lab 13 (FlashAttention, tile by tile)."""

MESSAGES: dict[str, dict[str, str]] = {
    "nav.lab.flash": {"en": "13 · FlashAttention, tile by tile", "zh": "13 · FlashAttention：逐块计算"},
    "lab.flash.title": {
        "en": "Lab 13 · FlashAttention: the same numbers, tile by tile",
        "zh": "实验 13 · FlashAttention：逐块计算，同样的数",
    },
    "lab.flash.intro": {
        "en": "The first tutorial says FlashAttention speeds attention up *without changing the mathematical "
        "result*. Here it is, step by step, on your tokens: queries in blocks, keys and values read one tile at a "
        "time, a running max **m**, a running sum **ℓ** and a running output **O** per row, and at the end the "
        "same numbers as softmax(QKᵀ/√d)V, while no score matrix larger than one tile was ever held.",
        "zh": "第一篇教程说 FlashAttention 能加速注意力，*而不改变数学结果*。这里在你的词元上一步步演示："
        "查询分成块，键和值一次读一个分块，每一行保存一个运行最大值 **m**、一个运行和 **ℓ** 和一个运行输出 **O**，"
        "最后得到与 softmax(QKᵀ/√d)V 相同的数，而内存里从未有过比一个分块更大的分数矩阵。",
    },
    "lab.flash.explain": {
        "en": "**The online softmax.** A softmax needs the largest score of the row (to subtract it, so that exp does "
        "not overflow) and the sum over the whole row. Milakov & Gimelshein (2018, "
        "*Online normalizer calculation for softmax*) showed both can be kept while reading the row piece by "
        "piece. After the scores S_j of tile j:\n\n"
        "- `m' = max(m, rowmax S_j)`\n"
        "- `P_j = exp(S_j − m')`\n"
        "- `ℓ' = e^(m − m') · ℓ + rowsum P_j`\n"
        "- `O' = e^(m − m') · O + P_j V_j`\n\n"
        "and at the end the output is O / ℓ. When a tile holds a larger score than every earlier one, m grows and "
        "the factor e^(m − m') < 1 shrinks what the earlier tiles added to ℓ and O, exactly as if they had been "
        "computed with the new maximum from the start. Nothing is approximated: the result differs from full "
        "attention only by float32 rounding (the sums are taken in another order).\n\n"
        "**FlashAttention** (Dao et al. 2022, *FlashAttention: Fast and Memory-Efficient Exact Attention with "
        "IO-Awareness*) runs this update on blocks sized to fit the GPU's small fast memory (SRAM): the L × L scores "
        "are never written to the large slow memory (HBM). The loop here is ordered as in FlashAttention-2 (Dao "
        "2023, Algorithm 1): each query block reads every tile, and O is divided by ℓ once, at the end. The 2022 "
        "paper's Algorithm 1 does the same arithmetic with the loops the other way round (tiles outside, query "
        "blocks inside, O divided by ℓ after every tile). It computes the "
        "same scores as full attention, so its arithmetic still grows like L²; it is faster on a GPU because it "
        "reads and writes slow memory far less, and its memory grows like L, not L².\n\n"
        "**With a causal mask** a tile whose every cell lies above the diagonal has nothing to add: it is skipped, "
        "never read. A row whose cells in a read tile are all masked keeps m = −∞; exp(−∞ − (−∞)) would be NaN, so "
        "the code subtracts 0 instead of −∞ there (the same guard as in the authors' `flash-attn` code).\n\n"
        "Here q, k, v are one head of 8 numbers per token: your tokens' embeddings (with positions) through a seeded "
        "layer's W_q, W_k, W_v. The engine is `mha/experiments/flash.py`, `tiled_attention`.",
        "zh": "**在线 softmax。** softmax 需要一行里的最大分数（先减去它，exp 才不会溢出）和整行的和。"
        "Milakov 与 Gimelshein 在 2018 年的论文（Online normalizer calculation for softmax）里证明，"
        "这两个量都可以在一段一段读这一行时保存下来。读完第 j 个分块的分数 S_j 之后：\n\n"
        "- `m' = max(m, rowmax S_j)`\n"
        "- `P_j = exp(S_j − m')`\n"
        "- `ℓ' = e^(m − m') · ℓ + rowsum P_j`\n"
        "- `O' = e^(m − m') · O + P_j V_j`\n\n"
        "最后输出是 O / ℓ。当某个分块里出现比之前都大的分数时，m 变大，因子 e^(m − m') < 1 "
        "把之前分块加进 ℓ 和 O 的部分缩小，正好等于一开始就用新的最大值计算。没有任何近似："
        "结果与完整注意力只差 float32 的舍入（求和的顺序不同）。\n\n"
        "**FlashAttention**：Dao 等 2022 年的论文（FlashAttention: Fast and Memory-Efficient Exact Attention with "
        "IO-Awareness）在大小正好放进 GPU 小而快的存储（SRAM）的块上做这个更新："
        "L × L 的分数从不写入大而慢的显存（HBM）。这里的循环顺序与 FlashAttention-2（Dao 2023 年的论文，算法 1）相同："
        "每个查询块读完所有分块，O 只在最后除以 ℓ 一次。2022 年论文的算法 1 做的是同样的运算，只是两层循环反过来"
        "（分块在外层，查询块在内层，每读一个分块就把 O 除以 ℓ）。"
        "它计算的分数与完整注意力相同，所以计算量仍按 L² 增长；"
        "它在 GPU 上更快，是因为读写慢速存储少得多，而它的内存按 L 增长，不是 L²。\n\n"
        "**有因果掩码时**，所有格子都在对角线上方的分块没有任何贡献：直接跳过，从不读取。"
        "如果某一行在一个已读分块里的格子全被掩盖，它的 m 保持 −∞；exp(−∞ − (−∞)) 会是 NaN，"
        "所以代码在那里减去 0 而不是 −∞（与作者的 `flash-attn` 代码里的保护相同）。\n\n"
        "这里的 q、k、v 是一个头、每个词元 8 个数：你的词元嵌入（加上位置）经过一个随机种子固定的层的 "
        "W_q、W_k、W_v。引擎代码是 `mha/experiments/flash.py` 的 `tiled_attention`。",
    },
    "lab.flash.default_text": {
        "en": "The animal didn't cross the street because it was too tired",
        "zh": "小明喜欢打球，他放学后去了操场",
    },
    "lab.flash.block_q": {"en": "Query block size B_r (rows)", "zh": "查询块大小 B_r（行）"},
    "lab.flash.block_k": {"en": "Key/value tile size B_c (columns)", "zh": "键/值分块大小 B_c（列）"},
    "lab.flash.causal": {"en": "Causal mask", "zh": "因果掩码"},
    "lab.flash.grid": {
        "en": "L = {length}: {blocks} {rows} × {tiles} {columns} = {all}.",
        "zh": "L = {length}：{blocks}{rows} × {tiles}{columns} = {all}。",
    },
    "lab.flash.count.token.one": {"en": "{count} token", "zh": "{count} 个词元"},
    "lab.flash.count.token.many": {"en": "{count} tokens", "zh": "{count} 个词元"},
    "lab.flash.count.query_block.one": {"en": "{count} query block", "zh": "{count} 个查询块"},
    "lab.flash.count.query_block.many": {"en": "{count} query blocks", "zh": "{count} 个查询块"},
    "lab.flash.count.tile.one": {"en": "{count} tile", "zh": "{count} 个分块"},
    "lab.flash.count.tile.many": {"en": "{count} tiles", "zh": "{count} 个分块"},
    "lab.flash.count.row.one": {"en": "{count} row", "zh": "{count} 行"},
    "lab.flash.count.row.many": {"en": "{count} rows", "zh": "{count} 行"},
    "lab.flash.count.column.one": {"en": "{count} column", "zh": "{count} 列"},
    "lab.flash.count.column.many": {"en": "{count} columns", "zh": "{count} 列"},
    "lab.flash.size.one": {"en": "of {size}", "zh": "（{size}）"},
    "lab.flash.size.each": {"en": "of {size} each", "zh": "（每块 {size}）"},
    "lab.flash.size.up_to": {"en": "of up to {size}", "zh": "（每块最多 {size}）"},
    "lab.flash.uneven": {
        "en": "The block sizes need not divide L: the last query block has {last_q}, the last tile {last_k}.",
        "zh": "块大小不必整除 L：最后一个查询块有 {last_q}，最后一个分块有 {last_k}。",
    },
    "lab.flash.span.rows": {"en": "rows {start}–{end}", "zh": "第 {start}–{end} 行"},
    "lab.flash.span.row": {"en": "row {start}", "zh": "第 {start} 行"},
    "lab.flash.span.keys": {"en": "keys and values {start}–{end}", "zh": "键和值 {start}–{end}"},
    "lab.flash.span.key": {"en": "key and value {start}", "zh": "键和值 {start}"},
    "lab.flash.step_title": {"en": "Step through the tiles", "zh": "逐个分块走一遍"},
    "lab.flash.block_pick": {"en": "Query block i (from 0)", "zh": "查询块 i（从 0 开始）"},
    "lab.flash.tile_pick": {"en": "Tile j read (from 0)", "zh": "读取的分块 j（从 0 开始）"},
    "lab.flash.step_read": {
        "en": "Query block **{block}** ({rows}) reads tile **{tile}** of {tiles}: {columns}. Below: m, ℓ before "
        "and after it, and O after it.",
        "zh": "查询块 **{block}**（{rows}）读取第 **{tile}** 个分块（共 {tiles} 个）："
        "{columns}。下面是读取前后的 m、ℓ，以及读取后的 O。",
    },
    "lab.flash.step_skipped": {
        "en": "Query block {block} ({rows}), tile {tile} of {tiles} ({columns}): every cell is masked, so the tile "
        "is skipped, never read; m, ℓ and O stay as they were.",
        "zh": "查询块 {block}（{rows}），第 {tile} 个分块（共 {tiles} 个，{columns}）："
        "每个格子都被掩盖，所以跳过这个分块，从不读取；m、ℓ 和 O 保持不变。",
    },
    "lab.flash.masked": {"en": "masked cell (read, adds 0)", "zh": "被掩盖的格子（已读，贡献为 0）"},
    "lab.flash.skipped": {"en": "skipped tile (never read)", "zh": "跳过的分块（从不读取）"},
    "lab.flash.score": {"en": "score QKᵀ/√d", "zh": "分数 QKᵀ/√d"},
    "lab.flash.chart_caption": {
        "en": "The scores S = QKᵀ/√d, which the tiled loop never holds all at once. Outlined: the tile read now; "
        "bright: this query block's tiles already read; faded: its tiles still to come; very faint: the other "
        "query blocks.",
        "zh": "分数 S = QKᵀ/√d，分块循环从不同时保存它们。带框的是现在读取的分块；鲜明的是本查询块已经读过的分块；"
        "较淡的是还没读的分块；最淡的是其他查询块。",
    },
    "lab.flash.rescaled": {
        "en": "A larger score appeared for {rows}: m grew, and what the earlier tiles added to ℓ and O was "
        "multiplied by e^(m − m') (down to {factor:.4f}).",
        "zh": "{rows} 出现了更大的分数：m 变大，之前分块加进 ℓ 和 O 的部分乘上了 e^(m − m')（最小为 {factor:.4f}）。",
    },
    "lab.flash.not_rescaled": {
        "en": "No row found a larger score in this tile: e^(m − m') = 1, nothing earlier needs correcting.",
        "zh": "这个分块里没有哪一行出现更大的分数：e^(m − m') = 1，之前的结果不需要修正。",
    },
    "lab.flash.col.row": {"en": "query row", "zh": "查询行"},
    "lab.flash.col.m_before": {"en": "m before", "zh": "之前的 m"},
    "lab.flash.col.tile_max": {"en": "rowmax S_j", "zh": "本块行最大值 rowmax S_j"},
    "lab.flash.col.m": {"en": "m after", "zh": "之后的 m"},
    "lab.flash.col.rescale": {"en": "e^(m − m')", "zh": "e^(m − m')"},
    "lab.flash.col.l_before": {"en": "ℓ before", "zh": "之前的 ℓ"},
    "lab.flash.col.l": {"en": "ℓ after", "zh": "之后的 ℓ"},
    "lab.flash.o_title": {
        "en": "**O after the tile** (not yet divided by ℓ):",
        "zh": "**读取后的 O**（还没有除以 ℓ）：",
    },
    "lab.flash.axis.feature": {"en": "feature", "zh": "特征"},
    "lab.flash.o_last": {
        "en": "The last tile: O / ℓ is now this block's output, the rows of softmax(QKᵀ/√d)V.",
        "zh": "最后一个分块：现在 O / ℓ 就是本块的输出，即 softmax(QKᵀ/√d)V 的这几行。",
    },
    "lab.flash.result_title": {"en": "The result: the same numbers", "zh": "结果：同样的数"},
    "lab.flash.check": {
        "en": "Tiled (online softmax) against full softmax(QKᵀ/√d)V, float32, every row:",
        "zh": "分块计算（在线 softmax）对比完整的 softmax(QKᵀ/√d)V，float32，所有行：",
    },
    "lab.flash.metric.tile": {"en": "Largest score matrix held (tiled)", "zh": "最大的分数矩阵（分块）"},
    "lab.flash.metric.full": {"en": "Score matrix of full attention", "zh": "完整注意力的分数矩阵"},
    "lab.flash.metric.skipped": {"en": "Tiles skipped / all", "zh": "跳过的分块 / 全部"},
    "lab.flash.skipped_caption": {
        "en": "With the causal mask, a tile that lies wholly above the diagonal is skipped, never read: here "
        "{skipped} of {all}. Such tiles are part of why the flash kernel is fast on causal attention.",
        "zh": "有因果掩码时，完全在对角线上方的分块被跳过，从不读取：这里是 {all} 个中的 {skipped} 个。"
        "这也是 FlashAttention 内核在因果注意力上快的原因之一。",
    },
    "lab.flash.no_mask_caption": {
        "en": "Without a mask every tile is read ({all}, none skipped); switch the causal mask on to see tiles "
        "skipped.",
        "zh": "没有掩码时，每个分块都要读（共 {all}，一个也不跳过）；打开因果掩码可以看到被跳过的分块。",
    },
    "lab.flash.cost_title": {"en": "Memory as L grows, measured", "zh": "内存随 L 的增长（实测）"},
    "lab.flash.cost_intro": {
        "en": "Random q, k, v of {heads} heads × d = {d}, at L = 64 … 1024: the peak memory the PyTorch CPU allocator "
        "held during one call of full attention (this engine's, which holds the H × L × L scores) and of the "
        "tiled loop above (B_r = B_c = the block below), read by the profiler in a separate process. Then "
        "`F.scaled_dot_product_attention` under each of the four CPU and GPU backends of "
        "`torch.nn.attention.sdpa_kernel` (`math`, `flash`, `efficient`, `cudnn`): which run on this machine, and "
        "how fast.",
        "zh": "随机的 q、k、v，{heads} 个头 × d = {d}，L = 64 … 1024：完整注意力（本引擎的实现，保存 H × L × L "
        "的分数）和上面的分块循环（B_r = B_c = 下面选的块大小）各调用一次时 PyTorch CPU 分配器占用的内存峰值，"
        "由性能分析器（profiler）在单独的进程里读出。然后在 `torch.nn.attention.sdpa_kernel` 面向 CPU 和 GPU 的"
        "四个后端（`math`、`flash`、`efficient`、`cudnn`）下分别运行 "
        "`F.scaled_dot_product_attention`：哪些能在这台机器上运行，各自多快。",
    },
    "lab.flash.memory_block": {"en": "Block size (B_r = B_c)", "zh": "块大小（B_r = B_c）"},
    "lab.flash.press": {
        "en": "Press Measure to measure the memory at L = 64 … 1024 and time the sdpa backends (a few seconds).",
        "zh": "点击“测量”，测量 L = 64 … 1024 的内存，并为 `sdpa_kernel` 的各个后端计时（几秒钟）。",
    },
    "lab.flash.failed": {
        "en": "The measurement did not finish (the server may be overloaded). Try again, or with fewer rounds.",
        "zh": "测量没有完成（服务器可能负载过高）。请重试，或减少计时轮数。",
    },
    "lab.flash.progress.start": {
        "en": "Starting the measurement in a Python process of its own (it loads PyTorch first)…",
        "zh": "正在一个单独的 Python 进程里开始测量（它先加载 PyTorch）……",
    },
    "lab.flash.progress.memory": {
        "en": "{done} of {total} parts measured. Now: the peak memory of full and tiled attention at L = {length}…",
        "zh": "已测完 {done} / {total} 部分。现在：L = {length} 时完整注意力与分块注意力的内存峰值……",
    },
    "lab.flash.progress.backends": {
        "en": "{done} of {total} parts measured. Now: timing the sdpa backends at L = {length}…",
        "zh": "已测完 {done} / {total} 部分。现在：在 L = {length} 为 `sdpa_kernel` 的各个后端计时……",
    },
    "lab.flash.method.full": {"en": "full (L × L scores)", "zh": "完整（L × L 分数）"},
    "lab.flash.method.tiled": {"en": "tiled (online softmax)", "zh": "分块（在线 softmax）"},
    "lab.flash.memory": {"en": "Peak memory", "zh": "内存峰值"},
    "lab.flash.memory_caption": {
        "en": "Both axes are logarithmic: a line twice as steep grows like L² instead of L. At small L the tiled "
        "loop's own temporaries (one tile's scores and P, the running m, ℓ and O) outweigh the whole L × L matrix; "
        "as L grows, only the full method's matrix keeps growing with L².",
        "zh": "两个坐标轴都是对数刻度：斜率加倍的线按 L² 增长而不是按 L。L 很小时，分块循环自己的临时张量"
        "（一个分块的分数和 P、运行中的 m、ℓ 和 O）比整个 L × L 矩阵还大；L 变大后，只有完整方法的矩阵按 L² 一直增长。",
    },
    "lab.flash.col.full_peak": {"en": "full: peak (measured)", "zh": "完整：峰值（实测）"},
    "lab.flash.col.tiled_peak": {"en": "tiled: peak (measured)", "zh": "分块：峰值（实测）"},
    "lab.flash.col.full_cells": {"en": "full: largest matrix (cells)", "zh": "完整：最大矩阵（格数）"},
    "lab.flash.col.tiled_cells": {"en": "tiled: largest matrix (cells)", "zh": "分块：最大矩阵（格数）"},
    "lab.flash.memory_ok": {
        "en": "From L = {short} to {long}: full attention's peak grew {full:.1f}× (like L², at least {full_min:.1f}× "
        "expected), the tiled loop's {tiled:.1f}× (like L, at most {tiled_max:.1f}× expected). At L = {long}: "
        "{full_bytes} against {tiled_bytes}.",
        "zh": "从 L = {short} 到 {long}：完整注意力的峰值增长了 {full:.1f} 倍"
        "（按 L² 增长，预期至少 {full_min:.1f} 倍），"
        "分块循环的峰值增长了 {tiled:.1f} 倍（按 L 增长，预期至多 {tiled_max:.1f} 倍）。"
        "L = {long} 时：{full_bytes} 对 {tiled_bytes}。",
    },
    "lab.flash.memory_bad": {
        "en": "From L = {short} to {long}: full attention's peak grew {full:.1f}× (at least {full_min:.1f}× "
        "expected), the tiled loop's {tiled:.1f}× (at most {tiled_max:.1f}× expected): not the expected growth on "
        "this run. At L = {long}: {full_bytes} against {tiled_bytes}.",
        "zh": "从 L = {short} 到 {long}：完整注意力的峰值增长了 {full:.1f} 倍（预期至少 {full_min:.1f} 倍），"
        "分块循环的峰值增长了 {tiled:.1f} 倍（预期至多 {tiled_max:.1f} 倍）：这次测量不符合预期的增长。"
        "L = {long} 时：{full_bytes} 对 {tiled_bytes}。",
    },
    "lab.flash.backends_title": {
        "en": "**PyTorch's backends** on this machine ({device}), causal, L = {length}:",
        "zh": "这台机器（{device}）上 **PyTorch 的后端**，因果，L = {length}：",
    },
    "lab.flash.col.backend": {"en": "backend", "zh": "后端"},
    "lab.flash.col.runs": {"en": "runs here", "zh": "能否运行"},
    "lab.flash.yes": {"en": "yes", "zh": "能"},
    "lab.flash.no": {"en": "no", "zh": "不能"},
    "lab.flash.col.ms": {"en": "ms per call (median)", "zh": "每次毫秒（中位数）"},
    "lab.flash.col.diff": {"en": "max |difference| from MATH", "zh": "与 MATH 的最大 |差值|"},
    "lab.flash.backend_check": {
        "en": "The flash backend against the math backend ({device}):",
        "zh": "`flash` 后端对比 `math` 后端（{device}）：",
    },
    "lab.flash.no_flash_backend": {
        "en": "The flash backend does not run on this machine ({device}).",
        "zh": "`flash` 后端不能在这台机器（{device}）上运行。",
    },
    "lab.flash.refused": {
        "en": "Why {count} backends do not run here (PyTorch's words)",
        "zh": "为什么有 {count} 个后端不能在这里运行（PyTorch 的原话）",
    },
    "lab.flash.refused_one": {
        "en": "Why one backend does not run here (PyTorch's words)",
        "zh": "为什么有 1 个后端不能在这里运行（PyTorch 的原话）",
    },
}
