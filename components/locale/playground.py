"""Messages of the playground page: controls, the four steps, summary, live check, link problems."""

MESSAGES: dict[str, dict[str, str]] = {
    # ------------------------------------------------------------ page
    "page.intro": {
        "en": "Type a sentence, pick d_model, the number of heads and a mask, and follow one multi-head "
        "attention layer through its four steps: every shape, matrix and parameter count, computed live "
        "and checked against PyTorch.",
        "zh": "输入一句话，选择 d_model、头数和掩码，跟着一个多头注意力层走完四个步骤：每个形状、每个矩阵、"
        "每个参数量都实时计算，并与 PyTorch 逐个核对。",
    },
    "page.computing": {"en": "Computing attention…", "zh": "正在计算注意力…"},
    # ------------------------------------------------------------ controls
    "controls.header": {"en": "Controls", "zh": "控制面板"},
    "controls.d_model_presets": {"en": "d_model presets", "zh": "d_model 常用值"},
    "controls.d_model": {"en": "d_model (model width)", "zh": "d_model（模型维度）"},
    "controls.d_model_help": {
        "en": "Size of each token vector, from {low} to {high}.",
        "zh": "每个词元向量的长度，范围 {low} 到 {high}。",
    },
    "controls.num_heads": {"en": "num_heads (h)", "zh": "头数 num_heads (h)"},
    "controls.num_heads_help": {
        "en": "Number of attention heads, 1 to {high}; it must divide d_model.",
        "zh": "注意力头的个数，1 到 {high}；必须能整除 d_model。",
    },
    "controls.d_k": {
        "en": "d_k = d_model / h = {d_model} / {num_heads} = **{d_k}** features per head",
        "zh": "d_k = d_model / h = {d_model} / {num_heads} = 每个头 **{d_k}** 维",
    },
    "controls.d_k_bad": {
        "en": "d_k = {d_model} / {num_heads} = {ratio}: not a whole number",
        "zh": "d_k = {d_model} / {num_heads} = {ratio}：不是整数",
    },
    "controls.mask_type": {"en": "Mask", "zh": "掩码"},
    "controls.window": {"en": "Window width (neighbours each side)", "zh": "窗口宽度（每侧可见的邻居数）"},
    "controls.window_help": {
        "en": "With the window mask, token i may attend token j when |i − j| ≤ width (0 = only itself).",
        "zh": "使用窗口掩码时，当 |i − j| ≤ 宽度 时词元 i 可以关注词元 j（0 表示只关注自己）。",
    },
    "controls.tokens": {"en": "Text (tokens)", "zh": "文本（词元）"},
    "controls.tokens_help": {
        "en": "Spaces separate tokens in every language; Chinese without spaces is cut as chosen below "
        "(characters or words); punctuation is its own token; [PAD] stays whole.",
        "zh": "任何语言都以空格分隔词元；没有空格的中文按下方的选择切分（按字或按词）；标点单独成为词元；"
        "[PAD] 保持完整。",
    },
    "controls.examples": {"en": "Examples from the tutorials:", "zh": "教程中的例句："},
    "controls.token_count": {"en": "{count} tokens (at most {high})", "zh": "{count} 个词元（最多 {high} 个）"},
    "controls.seed": {"en": "Seed", "zh": "随机种子"},
    "controls.seed_help": {
        "en": "Same seed, same weights and embeddings.",
        "zh": "相同的种子，相同的权重和词向量。",
    },
    "controls.positional": {"en": "Positional encoding", "zh": "位置编码"},
    "controls.positional_help": {
        "en": "Add the sinusoidal positional encoding to the token embeddings.",
        "zh": "把正弦位置编码加到词向量上。",
    },
    "controls.device": {"en": "Device", "zh": "设备"},
    "controls.device_used": {"en": "Computed on **{device}** in {dtype}.", "zh": "在 **{device}** 上以 {dtype} 计算。"},
    "device.auto": {"en": "auto (best available)", "zh": "自动（最快的可用设备）"},
    "example.thinking": {"en": "Thinking Machines", "zh": "Thinking Machines"},
    "example.animal": {"en": "The animal didn't cross…", "zh": "The animal didn't cross…"},
    "example.xiaoming": {"en": "小明喜欢打球…", "zh": "小明喜欢打球…"},
    "example.cat": {"en": "The cat sat on the mat", "zh": "The cat sat on the mat"},
    "example.padded": {"en": "… with [PAD] (padding mask)", "zh": "… 带 [PAD]（填充掩码）"},
    # ------------------------------------------------------------ masks
    "mask.none": {"en": "none", "zh": "无掩码"},
    "mask.causal": {"en": "causal", "zh": "因果掩码"},
    "mask.padding": {"en": "padding", "zh": "填充掩码"},
    "mask.window": {"en": "window", "zh": "滑动窗口"},
    "mask.none.help": {"en": "Every token attends every token.", "zh": "每个词元都关注所有词元。"},
    "mask.causal.help": {
        "en": "Token i attends only tokens 0..i: no peeking at later words.",
        "zh": "词元 i 只关注 0..i：不能偷看后面的词。",
    },
    "mask.padding.help": {
        "en": "No token attends a [PAD] token.",
        "zh": "任何词元都不关注 [PAD] 词元。",
    },
    "mask.window.help": {
        "en": "Each token attends its neighbours within the window width.",
        "zh": "每个词元只关注窗口宽度以内的邻居。",
    },
    # ------------------------------------------------------------ problems in a link
    "url.not_integer": {
        "en": "Link parameter “{name}” = “{value}” is not a whole number; using {used}.",
        "zh": "链接参数“{name}” = “{value}”不是整数；改用 {used}。",
    },
    "url.out_of_range": {
        "en": "Link parameter “{name}” = “{value}” is outside {low}..{high}; using {used}.",
        "zh": "链接参数“{name}” = “{value}”超出 {low}..{high} 的范围；改用 {used}。",
    },
    "url.unknown_choice": {
        "en": "Link parameter “{name}” = “{value}” is not one of: {choices}; using {used}.",
        "zh": "链接参数“{name}” = “{value}”不在可选值 {choices} 之中；改用 {used}。",
    },
    "url.not_boolean": {
        "en": "Link parameter “{name}” = “{value}” should be true or false; using {used}.",
        "zh": "链接参数“{name}” = “{value}”应为 true 或 false；改用 {used}。",
    },
    "url.control_chars": {
        "en": "Link parameter “{name}” contained {count} invisible control characters; they were removed.",
        "zh": "链接参数“{name}”含有 {count} 个不可见的控制字符，已删除。",
    },
    "url.too_long_text": {
        "en": "Link parameter “{name}” is longer than {high} characters; it was cut to {high}.",
        "zh": "链接参数“{name}”超过 {high} 个字符，已截断为 {high} 个。",
    },
    "url.too_many_tokens": {
        "en": "Link parameter “{name}” has {count} tokens; only the first {high} are used.",
        "zh": "链接参数“{name}”有 {count} 个词元；只使用前 {high} 个。",
    },
    # ------------------------------------------------------------ choices that cannot run
    "error.d_model.out_of_range": {
        "en": "d_model = {value} is outside {low}..{high}; choose a width in that range.",
        "zh": "d_model = {value} 超出 {low}..{high} 的范围；请选择此范围内的维度。",
    },
    "error.num_heads.out_of_range": {
        "en": "num_heads = {value} is outside {low}..{high}; choose a head count in that range.",
        "zh": "头数 = {value} 超出 {low}..{high} 的范围；请选择此范围内的头数。",
    },
    "error.num_heads.not_divisible": {
        "en": "d_model = {d_model} is not divisible by num_heads = {num_heads}: each head would get "
        "{d_model} / {num_heads} = {ratio} features, and a head needs a whole number of them. "
        "Choose a head count that divides {d_model}, for example {suggestions}.",
        "zh": "d_model = {d_model} 不能被头数 {num_heads} 整除：每个头将分到 {d_model} / {num_heads} = {ratio} 维，"
        "而每个头的维度必须是整数。请选择能整除 {d_model} 的头数，例如 {suggestions}。",
    },
    "error.or": {"en": " or ", "zh": " 或 "},
    "error.mask_type.unknown": {
        "en": "Unknown mask “{value}”; choose one of: {choices}.",
        "zh": "未知的掩码“{value}”；请从 {choices} 中选择。",
    },
    "error.window.out_of_range": {
        "en": "Window width {value} is outside {low}..{high}.",
        "zh": "窗口宽度 {value} 超出 {low}..{high} 的范围。",
    },
    "error.tokens.too_long_text": {
        "en": "The text is longer than {high} characters; shorten it.",
        "zh": "文本超过 {high} 个字符；请缩短。",
    },
    "error.tokens.empty": {
        "en": "The text has no tokens: type a sentence or pick an example.",
        "zh": "文本中没有词元：请输入一句话或选择一个例句。",
    },
    "error.tokens.too_many": {
        "en": "The text has {count} tokens; the limit is {high}. Shorten the text.",
        "zh": "文本有 {count} 个词元，上限是 {high} 个。请缩短文本。",
    },
    "error.seed.out_of_range": {
        "en": "Seed {value} is outside {low}..{high}.",
        "zh": "随机种子 {value} 超出 {low}..{high} 的范围。",
    },
    "error.device.unknown": {
        "en": "Unknown device “{value}”; choose one of: {choices}.",
        "zh": "未知的设备“{value}”；请从 {choices} 中选择。",
    },
    "error.dtype.unknown": {
        "en": "Unknown number type “{value}”; choose one of: {choices}.",
        "zh": "未知的数值类型“{value}”；请从 {choices} 中选择。",
    },
    "error.generic": {
        "en": "The value of “{name}” cannot be used: {message}",
        "zh": "“{name}”的值无法使用：{message}",
    },
    # ------------------------------------------------------------ notes on a run
    "notes.window_covers_all": {
        "en": "The window width {window} covers the whole text of {count} tokens: every token sees every other, "
        "so this is the same as no mask. Choose a width below {count} − 1 to see the window.",
        "zh": "窗口宽度 {window} 覆盖了全部 {count} 个词元：每个词元都能看到其他所有词元，等同于不加掩码。"
        "请把宽度设为小于 {count} − 1 的值，才能看到窗口的效果。",
    },
    "notes.no_pad_tokens": {
        "en": "The text has no [PAD] token, so the padding mask blocks nothing. Try the example with [PAD].",
        "zh": "文本中没有 [PAD] 词元，所以填充掩码什么也不屏蔽。试试带 [PAD] 的例句。",
    },
    "notes.all_pad_tokens": {
        "en": "Every token is [PAD]: every key is blocked, so all weights are zero (not NaN).",
        "zh": "所有词元都是 [PAD]：所有的键都被屏蔽，因此所有权重都是 0（而不是 NaN）。",
    },
    "notes.device_fallback": {
        "en": "Device {requested} is not available here; computed on {used} instead.",
        "zh": "此处没有设备 {requested}；改在 {used} 上计算。",
    },
    # ------------------------------------------------------------ charts
    "chart.query": {"en": "query token", "zh": "查询词元"},
    "chart.key": {"en": "key token", "zh": "键词元"},
    "chart.token": {"en": "token", "zh": "词元"},
    "chart.weight": {"en": "weight", "zh": "权重"},
    "chart.score": {"en": "score", "zh": "分数"},
    "chart.value": {"en": "value", "zh": "数值"},
    "chart.head": {"en": "head", "zh": "头"},
    "chart.feature": {"en": "feature", "zh": "特征维"},
    "chart.masked": {"en": "masked", "zh": "被屏蔽"},
    "chart.entropy": {"en": "mean entropy (bits)", "zh": "平均熵（比特）"},
    "chart.max_weight": {"en": "mean largest weight", "zh": "平均最大权重"},
    "chart.heads_axis": {"en": "head (one block per head)", "zh": "头（每块是一个头）"},
    # ------------------------------------------------------------ steps, shared
    "steps.head": {"en": "Head shown in steps 1 and 2 (0..{high})", "zh": "步骤 1 和 2 中显示的头（0..{high}）"},
    "steps.features_cut": {
        "en": "Showing the first {shown} of {total} features, to keep the chart fast.",
        "zh": "为保持图表流畅，只显示 {total} 维中的前 {shown} 维。",
    },
    # ------------------------------------------------------------ step 1
    "step1.title": {"en": "1 · Project and split into heads", "zh": "1 · 线性投影并拆分成多头"},
    "step1.what": {
        "en": "Each token vector x is multiplied by three learned matrices: Q = x W_qᵀ + b_q, and K, V the same "
        "way. Then d_model is cut into h pieces of d_k features: `view` splits the last dimension, "
        "`transpose` moves the heads forward so each head works on its own [L, d_k] matrix.",
        "zh": "每个词元向量 x 分别乘以三个可学习的矩阵：Q = x W_qᵀ + b_q，K、V 同理。然后把 d_model 切成 "
        "h 份，每份 d_k 维：`view` 拆分最后一维，`transpose` 把头的维度移到前面，让每个头处理自己的 "
        "[L, d_k] 矩阵。",
    },
    "step1.tokens": {"en": "**Tokens** (L = {count}):", "zh": "**词元**（L = {count}）："},
    "step1.shapes": {
        "en": "- `x {x}` (B, L, d_model)\n- → `Q = x W_qᵀ + b_q` `{q}`\n"
        "- → `.view({view_args})` `{view}` (B, L, h, d_k)\n"
        "- → `.transpose(1, 2)` `{heads}` (B, h, L, d_k)\n\nK and V: the same shapes.",
        "zh": "- `x {x}` (B, L, d_model)\n- → `Q = x W_qᵀ + b_q` `{q}`\n"
        "- → `.view({view_args})` `{view}` (B, L, h, d_k)\n"
        "- → `.transpose(1, 2)` `{heads}` (B, h, L, d_k)\n\nK 和 V 的形状相同。",
    },
    "step1.params": {
        "en": "**Parameters:** W_q, W_k, W_v, each {d}² + {d} = {one}: **{total}** in all.",
        "zh": "**参数量：** W_q、W_k、W_v 各 {d}² + {d} = {one}，共 **{total}**。",
    },
    "step1.chart": {"en": "{name} of head {head} [{length} × {d_k}]", "zh": "头 {head} 的 {name} [{length} × {d_k}]"},
    # ------------------------------------------------------------ step 2
    "step2.title": {"en": "2 · Scaled dot-product attention", "zh": "2 · 缩放点积注意力"},
    "step2.what": {
        "en": "In every head, each query is compared with every key: scores = Q Kᵀ, scaled by 1/√d_k so they do "
        "not grow with d_k. Masked cells are set to −∞, and a softmax over the keys turns each row into "
        "weights that sum to 1. The context is the weighted sum of the values: weights · V.",
        "zh": "在每个头里，每个查询都与每个键比较：分数 = Q Kᵀ，再乘以 1/√d_k，避免分数随 d_k 变大。"
        "被屏蔽的位置设为 −∞，再对键做 softmax，使每一行变成和为 1 的权重。上下文是值的加权和：权重 · V。",
    },
    "step2.shapes": {
        "en": "- `Q {q}` @ `Kᵀ {kt}`\n- → `scores {scores}` (B, h, L_q, L_k)\n"
        "- → × 1/√{d_k} = {scale}, mask, softmax over keys\n"
        "- → `weights {weights}`\n- → `weights @ V` → `context {context}` (B, h, L, d_k)",
        "zh": "- `Q {q}` @ `Kᵀ {kt}`\n- → `scores {scores}` (B, h, L_q, L_k)\n"
        "- → × 1/√{d_k} = {scale}，加掩码，对键做 softmax\n"
        "- → `weights {weights}`\n- → `weights @ V` → `context {context}` (B, h, L, d_k)",
    },
    "step2.params": {
        "en": "**Parameters:** none: this step only multiplies what step 1 made.",
        "zh": "**参数量：** 0：这一步只是把第 1 步的结果相乘。",
    },
    "step2.raw": {"en": "Q Kᵀ, head {head}", "zh": "头 {head}：Q Kᵀ"},
    "step2.scaled": {"en": "scaled and masked, head {head}", "zh": "头 {head}：缩放并加掩码"},
    "step2.weights": {"en": "softmax weights, head {head}", "zh": "头 {head}：softmax 权重"},
    "step2.masked_note": {
        "en": "Grey cells with × are masked: their score is −∞ and their weight is exactly 0.",
        "zh": "带 × 的灰色格子是被屏蔽的位置：分数为 −∞，权重恰好为 0。",
    },
    "step2.uniform_note": {
        "en": "W_q and W_k here are random, not trained, so every row of weights is close to uniform "
        "(1/L ≈ {uniform}). A trained model learns W_q and W_k whose weights pick out a few tokens.",
        "zh": "这里的 W_q 和 W_k 是随机的、没有经过训练，所以每一行权重都接近均匀（1/L ≈ {uniform}）。"
        "训练过的模型会学到让权重集中在少数几个词元上的 W_q 和 W_k。",
    },
    "step2.grid_title": {"en": "All {heads} heads", "zh": "全部 {heads} 个头"},
    "step2.grid_stage": {"en": "Show", "zh": "显示"},
    "step2.stage.raw": {"en": "Q Kᵀ", "zh": "Q Kᵀ"},
    "step2.stage.scaled": {"en": "scaled + masked", "zh": "缩放 + 掩码"},
    "step2.stage.weights": {"en": "weights", "zh": "权重"},
    "step2.grid_summarised": {
        "en": "All heads together would be {cells} cells (more than {budget} draws slowly), so each head is "
        "summarised instead: how spread out its weights are (entropy) and how peaked (largest weight). "
        "The chosen head is shown in full above.",
        "zh": "所有头加起来有 {cells} 个格子（超过 {budget} 会很慢），因此改为逐头概括：权重有多分散（熵）、"
        "有多集中（最大权重）。上面完整显示了所选的头。",
    },
    # ------------------------------------------------------------ step 3
    "step3.title": {"en": "3 · Concatenate the heads", "zh": "3 · 拼接多头"},
    "step3.what": {
        "en": "The heads' contexts are put side by side again: `transpose` brings the tokens forward, "
        "`.contiguous()` copies the numbers into that order, and `view` joins h pieces of d_k features back into "
        "one vector of d_model per token.",
        "zh": "把各个头的上下文重新并排放在一起：`transpose` 把词元维移到前面，"
        "`.contiguous()` 把数字按这个顺序复制一份，`view` 再把 h 份 d_k 维重新接成每个词元一个 d_model 维的向量。",
    },
    "step3.shapes": {
        "en": "- `context {context}` (B, h, L, d_k)\n- → `.transpose(1, 2)` `{moved}` (B, L, h, d_k)\n"
        "- → `.contiguous().view({view_args})` `concat {concat}` (B, L, d_model)",
        "zh": "- `context {context}` (B, h, L, d_k)\n- → `.transpose(1, 2)` `{moved}` (B, L, h, d_k)\n"
        "- → `.contiguous().view({view_args})` `concat {concat}` (B, L, d_model)",
    },
    "step3.params": {
        "en": "**Parameters:** none: a reshape only.",
        "zh": "**参数量：** 0：只是改变形状。",
    },
    "step3.chart": {
        "en": "Heads side by side [{length} × {d_model}]; black lines mark head boundaries",
        "zh": "多头并排 [{length} × {d_model}]；黑线是头与头的分界",
    },
    "step3.features_cut": {
        "en": "Showing the first {shown} of each head's {d_k} features, to keep the chart fast.",
        "zh": "为保持图表流畅，每个头只显示 {d_k} 维中的前 {shown} 维。",
    },
    # ------------------------------------------------------------ step 4
    "step4.title": {"en": "4 · Output projection", "zh": "4 · 输出投影"},
    "step4.what": {
        "en": "A last learned matrix mixes the heads: `output = concat W_oᵀ + b_o`. The output has the same shape "
        "as the input x, so layers can be stacked.",
        "zh": "最后一个可学习矩阵把各个头的信息混合起来：`output = concat W_oᵀ + b_o`。输出与输入 x 形状相同，"
        "所以层可以一层层叠起来。",
    },
    "step4.shapes": {
        "en": "- `concat {concat}` (B, L, d_model)\n- → `output = concat W_oᵀ + b_o` `{output}`, the shape of `x {x}`",
        "zh": "- `concat {concat}` (B, L, d_model)\n- → `output = concat W_oᵀ + b_o` `{output}`，与 `x {x}` 形状相同",
    },
    "step4.params": {
        "en": "**Parameters:** W_o, {d}² + {d} = **{one}**.",
        "zh": "**参数量：** W_o，{d}² + {d} = **{one}**。",
    },
    "step4.chart": {"en": "Output [{length} × {d_model}]", "zh": "输出 [{length} × {d_model}]"},
    # ------------------------------------------------------------ summary
    "summary.title": {"en": "Summary: where the parameters are", "zh": "小结：参数在哪里"},
    "summary.per_matrix": {"en": "Per matrix", "zh": "按矩阵"},
    "summary.per_step": {"en": "Per step", "zh": "按步骤"},
    "summary.matrix": {"en": "matrix", "zh": "矩阵"},
    "summary.weights": {"en": "weights", "zh": "权重"},
    "summary.biases": {"en": "biases", "zh": "偏置"},
    "summary.params": {"en": "parameters", "zh": "参数量"},
    "summary.flops": {"en": "FLOPs (matmuls)", "zh": "浮点运算（矩阵乘法）"},
    "summary.step": {"en": "step", "zh": "步骤"},
    "summary.total_row": {"en": "total", "zh": "合计"},
    "summary.total": {
        "en": "Total: 4·d² + 4·d = 4·{d}² + 4·{d} = **{total}**",
        "zh": "合计：4·d² + 4·d = 4·{d}² + 4·{d} = **{total}**",
    },
    "summary.counted": {
        "en": "Counted in the model's tensors: {counted} {ok}",
        "zh": "模型张量中实际数到：{counted} {ok}",
    },
    "summary.by_heads": {"en": "Does the head count matter?", "zh": "头数会改变参数量吗？"},
    "summary.by_heads_note": {
        "en": "No: for d_model = {d} the total is the same for every h. Splitting into heads reshapes the same "
        "four matrices; it adds no weights.",
        "zh": "不会：d_model = {d} 时，无论 h 取多少，合计都一样。拆分成多头只是改变同样四个矩阵的形状，并不增加权重。",
    },
    # ------------------------------------------------------------ live check
    "check.title": {"en": "Live check against PyTorch", "zh": "与 PyTorch 实时核对"},
    "check.what": {
        "en": "The same weights are copied into `torch.nn.MultiheadAttention` (W_q, W_k, W_v stacked into its "
        "`in_proj_weight`), which runs on the same input; the outputs and the per-head weights are compared "
        "number by number.",
        "zh": "把同样的权重复制到 `torch.nn.MultiheadAttention`（W_q、W_k、W_v 叠成它的 `in_proj_weight`），"
        "用同样的输入运行，再逐个数字比较输出和每个头的权重。",
    },
    "check.pass": {
        "en": "✓ Matches PyTorch: max |Δ output| = {out}, max |Δ weights| = {weights} (tolerance {tol}).",
        "zh": "✓ 与 PyTorch 一致：输出最大差 |Δ| = {out}，权重最大差 |Δ| = {weights}（容差 {tol}）。",
    },
    "check.fail": {
        "en": "✗ Differs from PyTorch: max |Δ output| = {out}, max |Δ weights| = {weights} (tolerance {tol}).",
        "zh": "✗ 与 PyTorch 不一致：输出最大差 |Δ| = {out}，权重最大差 |Δ| = {weights}（容差 {tol}）。",
    },
    "check.rows": {
        "en": "{compared} of {total} query rows compared: a row whose keys are all masked gives zeros here and "
        "NaN in PyTorch, so it is left out.",
        "zh": "比较了 {total} 行查询中的 {compared} 行：所有键都被屏蔽的行在这里输出 0，在 PyTorch 中输出 NaN，"
        "因此不参与比较。",
    },
    "check.mask_note": {
        "en": "Note: in this app (as in the tutorials and F.scaled_dot_product_attention) a bool mask means "
        "True = may attend. nn.MultiheadAttention's bool attn_mask means the opposite, True = blocked, so the "
        "mask is inverted (~mask) before it is passed to PyTorch.",
        "zh": "注意：本应用（与教程和 F.scaled_dot_product_attention 一致）的布尔掩码中 True 表示可以关注。"
        "nn.MultiheadAttention 的布尔 attn_mask 含义相反，True 表示屏蔽，所以传给 PyTorch 之前先取反（~mask）。",
    },
    "check.code": {"en": "How the weights are copied", "zh": "权重是如何复制的"},
}
