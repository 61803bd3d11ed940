"""Messages of the playground page: controls, the four steps, the lessons from the tutorials, summary, live check."""

MESSAGES: dict[str, dict[str, str]] = {
    # ------------------------------------------------------------ page
    "page.intro": {
        "en": "Type a sentence, pick d_model, the number of heads and a mask, and follow one multi-head "
        "attention layer through its four steps: every shape, matrix and parameter count, computed live "
        "and checked against PyTorch.",
        "zh": "输入一句话，选择 d_model、头数和掩码，跟着一个多头注意力层走完四个步骤：每个形状、每个矩阵、"
        "每个参数量都实时计算，并与 PyTorch 逐一核对。",
    },
    "glance.caption": {
        "en": "**At a glance**: how each of the {heads} heads spreads its attention over your sentence (softmax "
        "weights; a row is a token that reads, a column a token it reads). Steps 1 and 2 below compute them.",
        "zh": "**一览**：{heads} 个头各自如何把注意力分配到你的句子上（softmax 权重；每一行是读取的词元，"
        "每一列是被读取的词元）。下面的步骤 1 和 2 一步步算出它们。",
    },
    "glance.caption_some": {
        "en": "**At a glance**: how heads 0–{last} of the {heads} spread their attention over your sentence (softmax "
        "weights; a row is a token that reads, a column a token it reads). Steps 1 and 2 below "
        "compute them; step 2 draws every head.",
        "zh": "**一览**：{heads} 个头中第 0–{last} 个头如何把注意力分配到你的句子上（softmax 权重；每一行是读取的"
        "词元，每一列是被读取的词元）。步骤 1 和 2 一步步算出它们；步骤 2 画出每个头。",
    },
    "glance.too_long": {
        "en": "**At a glance**: {length} tokens are too many to draw every head small here; step 2 shows each head.",
        "zh": "**一览**：{length} 个词元太多，无法在这里把每个头画小；步骤 2 逐个展示各个头。",
    },
    "glance.predicting": {
        "en": "**At a glance**: the heads' weights stay hidden while you predict step 2's chart.",
        "zh": "**一览**：你在预测步骤 2 的图表时，各个头的权重保持隐藏。",
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
    "controls.block_pad": {"en": "Also block [PAD] keys", "zh": "同时屏蔽 [PAD] 键"},
    "controls.block_pad_help": {
        "en": "Add the padding mask to the causal or window mask (mask & padding): no token attends a [PAD] "
        "token, as in a padded batch. The padding mask itself always blocks them.",
        "zh": "把填充掩码叠加到因果掩码或滑动窗口掩码上（mask & padding）：任何词元都不关注 [PAD] 词元，"
        "就像填充过的批次那样。填充掩码本身总是屏蔽它们。",
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
    "controls.positional": {"en": "Positions", "zh": "位置信息"},
    "controls.positional_help": {
        "en": "sinusoidal: add the 2017 paper's sinusoidal encoding to the token vectors. none: no positions at all. "
        "RoPE: add nothing to the input; rotate every head's q and k by their positions inside attention "
        "(Llama, Qwen, Mistral).",
        "zh": "正弦：把 2017 年论文的正弦位置编码加到词向量上。无：完全没有位置信息。RoPE：输入不加任何东西，"
        "而在注意力里按位置旋转每个头的 q 和 k（Llama、Qwen、Mistral 的做法）。",
    },
    "positional.sinusoidal": {"en": "sinusoidal", "zh": "正弦"},
    "positional.none": {"en": "none", "zh": "无"},
    "positional.rope": {"en": "RoPE", "zh": "RoPE"},
    "controls.num_kv_heads": {"en": "num_kv_heads (h_kv)", "zh": "K/V 头数 num_kv_heads (h_kv)"},
    "controls.num_kv_heads_help": {
        "en": "Key/value heads, dividing num_heads. Equal to num_heads: the tutorials' layer (MHA). Fewer: each K/V "
        "head serves a group of query heads (grouped-query attention, GQA; 1 is multi-query, MQA).",
        "zh": "K/V 头的个数，必须整除 num_heads。等于 num_heads：教程里的层（MHA）。更少：每个 K/V 头服务一组查询头"
        "（分组查询注意力 GQA；1 个即多查询注意力 MQA）。",
    },
    "controls.kv_groups": {
        "en": "{num_heads} query heads, {num_kv_heads} K/V heads: each K/V head serves **{group}** query head(s) "
        "({kind})",
        "zh": "{num_heads} 个查询头、{num_kv_heads} 个 K/V 头：每个 K/V 头服务 **{group}** 个查询头（{kind}）",
    },
    "controls.kv_groups_bad": {
        "en": "{num_kv_heads} does not divide {num_heads}: choose one of {divisors}",
        "zh": "{num_kv_heads} 不能整除 {num_heads}：请选 {divisors} 之一",
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
    "mask.window": {"en": "window", "zh": "滑动窗口掩码"},
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
    "url.kv_not_dividing": {
        "en": "Link parameter “{name}” = “{value}” does not divide num_heads = {num_heads} (choose one of {divisors}); "
        "using {used}.",
        "zh": "链接参数“{name}” = “{value}”不能整除 num_heads = {num_heads}（可选 {divisors}）；改用 {used}。",
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
    "url.trained_sizes": {
        "en": "The link asks for trained weights without giving every size: using d_model = {d_model} and "
        "num_heads = {num_heads}, sizes that train here within seconds (about 1 to 12 s on a quiet machine's CPU, by "
        "task; longer with RoPE or fewer K/V heads).",
        "zh": "链接要求训练得到的权重，但没有给出全部尺寸：使用 d_model = {d_model}、num_heads = {num_heads}，"
        "这组尺寸在这里十几秒内就能训练好（在空闲机器的 CPU 上按任务约 1 到 12 秒；用 RoPE 或 K/V 头更少时更久）。",
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
    "error.num_kv_heads.not_dividing": {
        "en": "num_kv_heads = {num_kv_heads} does not divide num_heads = {num_heads}: every key/value head serves the "
        "same number of query heads. Choose one of {divisors} ({num_heads} is the tutorials' layer, 1 is multi-query).",
        "zh": "K/V 头数 num_kv_heads = {num_kv_heads} 不能整除 num_heads = {num_heads}：每个 K/V 头服务的查询头数必须"
        "相同。请选 {divisors} 之一（{num_heads} 即教程里的层，1 即多查询注意力）。",
    },
    "error.num_kv_heads.out_of_range": {
        "en": "num_kv_heads must be a whole number from {low} to {high}, got {value}.",
        "zh": "num_kv_heads 必须是 {low} 到 {high} 之间的整数，收到的是 {value}。",
    },
    "error.positional.rope_odd": {
        "en": "RoPE turns pairs of features, so d_k must be even, but d_k = {d_model} / {num_heads} = {d_k}. "
        "Choose d_model and num_heads with an even d_k, or another kind of positions.",
        "zh": "RoPE 按特征对旋转，所以 d_k 必须是偶数，但 d_k = {d_model} / {num_heads} = {d_k}。"
        "请选择使 d_k 为偶数的 d_model 和 num_heads，或换一种位置信息。",
    },
    "error.positional.unknown": {
        "en": "positional must be one of {choices}, got {value}.",
        "zh": "positional 必须是 {choices} 之一，收到的是 {value}。",
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
    "error.block_pad.not_boolean": {
        "en": "“Also block [PAD] keys” must be on or off, got “{value}”.",
        "zh": "“同时屏蔽 [PAD] 键”只能是开或关，收到的是“{value}”。",
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
    "notes.block_pad_no_pads": {
        "en": "“Also block [PAD] keys” is on, but the text has no [PAD] token: nothing more is blocked.",
        "zh": "已打开“同时屏蔽 [PAD] 键”，但文本中没有 [PAD] 词元：没有多屏蔽任何位置。",
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
    "chart.unscored": {"en": "row without a loss (faded)", "zh": "没有损失的行（显示较淡）"},
    "chart.hover": {
        "en": "Not every token is labelled at this size: point at a cell to see its tokens and its value.",
        "zh": "这么多词元放不下全部标签：把鼠标指向格子即可看到它的词元和数值。",
    },
    "chart.save_png": {"en": "Download this chart as PNG", "zh": "将此图下载为 PNG"},
    "controls.color_scale": {"en": "Colour scale of the weights", "zh": "权重的颜色刻度"},
    "controls.color_scale_help": {
        "en": "Fixed: 0 is white and 1 is dark blue in every head and run, so charts compare. Stretched: the "
        "smallest weight shown is the lightest and the largest the darkest, so near-uniform weights (random, "
        "untrained W_q and W_k) still show their differences; read the numbers on the legend.",
        "zh": "固定：在每个头、每次运行中，0 都是白色、1 都是深蓝，图与图可以直接比较。拉伸：显示的最小权重最浅、"
        "最大权重最深，即使权重接近均匀（W_q 和 W_k 随机、未经训练）也能看出差别；请看图例上的数值。",
    },
    "color_scale.fixed": {"en": "fixed 0–1", "zh": "固定 0–1"},
    "color_scale.stretch": {"en": "stretched to the data", "zh": "按数据拉伸"},
    # ------------------------------------------------------------ steps, shared
    "steps.head": {"en": "Head shown in steps 1 and 2 (0..{high})", "zh": "步骤 1 和 2 中显示的头（0..{high}）"},
    "steps.features_cut": {
        "en": "Showing the first {shown} of {total} features, to keep the chart fast.",
        "zh": "为保持图表流畅，只显示 {total} 维中的前 {shown} 维。",
    },
    # ------------------------------------------------------------ step 1
    "step1.title": {"en": "1 · Project and split into heads", "zh": "1 · 线性投影并拆分成多头"},
    "step1.what": {
        "en": "Each token vector x is multiplied by three learned matrices: {formula}, and K, V the same "
        "way. Then d_model is cut into h pieces of d_k features: `view` splits the last dimension, "
        "`transpose` moves the heads forward so each head works on its own [L, d_k] matrix.",
        "zh": "每个词元向量 x 分别乘以三个可学习的矩阵：{formula}，K、V 同理。然后把 d_model 切成 "
        "h 份，每份 d_k 维：`view` 拆分最后一维，`transpose` 把头的维度移到前面，让每个头处理自己的 "
        "[L, d_k] 矩阵。",
    },
    "step1.tokens": {"en": "**Tokens** (L = {count}):", "zh": "**词元**（L = {count}）："},
    "step1.shapes": {
        "en": "- `x {x}` (B, L, d_model)\n- → `{formula}` `{q}`\n"
        "- → `.view({view_args})` `{view}` (B, L, h, d_k)\n"
        "- → `.transpose(1, 2)` `{heads}` (B, h, L, d_k)",
        "zh": "- `x {x}` (B, L, d_model)\n- → `{formula}` `{q}`\n"
        "- → `.view({view_args})` `{view}` (B, L, h, d_k)\n"
        "- → `.transpose(1, 2)` `{heads}` (B, h, L, d_k)",
    },
    "step1.params": {
        "en": "**Parameters:** W_q, W_k, W_v, each {d}² + {d} = {one}: **{total}** in all.",
        "zh": "**参数量：** W_q、W_k、W_v 各 {d}² + {d} = {one}，共 **{total}**。",
    },
    "step1.chart": {"en": "{name} of head {head} [{length} × {d_k}]", "zh": "头 {head} 的 {name} [{length} × {d_k}]"},
    "step1.shapes_same": {"en": "K and V: the same shapes.", "zh": "K 和 V 的形状相同。"},
    "step1.shapes_kv": {
        "en": "K and V: `{kv_width}` outputs each (h_kv · d_k = {kv} · {d_k}), so `.view({kv_view_args})` → "
        "`.transpose(1, 2)` gives `{k_heads}` (B, h_kv, L, d_k): {kv} K/V heads for {h} query heads.",
        "zh": "K 和 V：各 `{kv_width}` 个输出（h_kv · d_k = {kv} · {d_k}），所以 `.view({kv_view_args})` → "
        "`.transpose(1, 2)` 得到 `{k_heads}` (B, h_kv, L, d_k)：{h} 个查询头共用 {kv} 个 K/V 头。",
    },
    "step1.shapes_rope": {
        "en": "RoPE then turns q and k by position (step 1b below): the shapes stay the same.",
        "zh": "随后 RoPE 按位置旋转 q 和 k（见下方 1b）：形状不变。",
    },
    "step1.params_kv": {
        "en": "**Parameters:** W_q {q_formula} = {q}; W_k and W_v each {kv_formula} = {kv} (their outputs are "
        "h_kv · d_k = {width}, not d_model = {d}): **{total}** in all. With W_o, the layer holds "
        "2·d² + 2·d·h_kv·d_k{bias_terms} = **{layer}**.",
        "zh": "**参数量：** W_q {q_formula} = {q}；W_k、W_v 各 {kv_formula} = {kv}（输出是 h_kv · d_k = {width}，"
        "不是 d_model = {d}）：共 **{total}**。加上 W_o，整层是 2·d² + 2·d·h_kv·d_k{bias_terms} = **{layer}**。",
    },
    "step1.params_nobias": {
        "en": "**Parameters:** W_q, W_k, W_v, each {d}² = {one} (no biases): **{total}** in all.",
        "zh": "**参数量：** W_q、W_k、W_v 各 {d}² = {one}（无偏置），共 **{total}**。",
    },
    "step1.chart_kv": {
        "en": "{name} of K/V head {kv}, read by head {head} [{length} × {d_k}]",
        "zh": "头 {head} 读取的 K/V 头 {kv} 的 {name} [{length} × {d_k}]",
    },
    # ------------------------------------------------------------ step 1b: today's attention
    "today.hint_checkpoint": {
        "en": "This checkpoint's layer is the 2017 kind: one K/V head per query head, positions added to the input. "
        "A Llama or Qwen2 checkpoint, or random or trained weights with num_kv_heads and RoPE, show what today's "
        "models change here.",
        "zh": "这个检查点的层是 2017 年的写法：每个查询头有自己的 K/V 头，位置加在输入上。选择 Llama 或 Qwen2 检查点，"
        "或在随机、训练的权重下设置 num_kv_heads 和 RoPE，就能看到如今的模型在这一步改了什么。",
    },
    "today.hint": {
        "en": "This is the 2017 layer, as the tutorials write it. Today's large models (Llama, Qwen, Mistral) change "
        "this step: set **num_kv_heads** below num_heads (grouped-query attention) or **Positions** to RoPE.",
        "zh": "这是 2017 年的层，与教程写法一致。如今的大模型（Llama、Qwen、Mistral）改变了这一步："
        "把 **num_kv_heads** 设得比 num_heads 小（分组查询注意力），或把 **位置信息** 设为 RoPE。",
    },
    "today.title": {
        "en": "1b · What today's large models add to this step",
        "zh": "1b · 如今的大模型在这一步加了什么",
    },
    "today.code": {"en": "The code of step 1b", "zh": "1b 这一步的代码"},
    "today.gqa.GQA": {
        "en": "**Grouped-query attention** (Ainslie et al. 2023): {h} query heads share {kv} K/V heads, {group} per "
        "group. K and V are "
        "computed once per K/V head, `{k}`, and each is repeated for its group (`repeat_kv`) to `{expanded}` just "
        "before the scores: the scores and weights are still one [L × L] matrix per query head.",
        "zh": "**分组查询注意力**（Ainslie 等，2023）：{h} 个查询头共用 {kv} 个 K/V 头，每组 {group} 个。"
        "K 和 V 按 K/V 头只算一次，`{k}`，在打分之前才为组内每个查询头复制一份（`repeat_kv`），"
        "变成 `{expanded}`：得分和权重仍是每个查询头一个 [L × L] 矩阵。",
    },
    "today.gqa.MQA": {
        "en": "**Multi-query attention** (Shazeer 2019): all {h} query heads read the one K/V head, `{k}`, repeated to "
        "`{expanded}` just before the scores: the scores and weights are still one [L × L] matrix per query head.",
        "zh": "**多查询注意力**（Shazeer，2019）：全部 {h} 个查询头读取同一个 K/V 头 `{k}`，"
        "在打分之前复制成 `{expanded}`：得分和权重仍是每个查询头一个 [L × L] 矩阵。",
    },
    "today.gqa.caption": {
        "en": "Top: query heads q0, q1, … Bottom: the K/V heads they read (one colour per group). Heads of one group "
        "differ only in their queries: they read the same keys and values.",
        "zh": "上排：查询头 q0、q1……下排：它们读取的 K/V 头（每组一种颜色）。"
        "同组的头只有查询不同：读取的键和值完全相同。",
    },
    "today.rope.what": {
        "en": "**RoPE** (rotary position embedding): nothing is added to the input. Instead every head's q and k "
        "are turned by their position: the d_k = {d_k} features form {pairs} pairs (feature i with i + d_k/2, "
        "as Hugging Face's Llama pairs them), and pair i of the token at position m turns by m · θ_i, with "
        "θ_i = {base}^(−2i/d_k).",
        "zh": "**RoPE**（旋转位置编码）：输入上什么也不加，而是按位置旋转每个头的 q 和 k：d_k = {d_k} 个特征组成 "
        "{pairs} 对（特征 i 与 i + d_k/2 配对，与 Hugging Face 的 Llama 相同），位置 m 的词元的第 i 对旋转 "
        "m · θ_i，θ_i = {base}^(−2i/d_k)。",
    },
    "today.rope.pair": {"en": "pair {pair} (θ = {theta} rad)", "zh": "第 {pair} 对（θ = {theta} 弧度）"},
    "today.rope.turns": {
        "en": "See q and k turn, and the angle of each feature pair",
        "zh": "看 q 和 k 如何旋转，以及每对特征的转角",
    },
    "today.rope.turn_caption": {
        "en": "Head {head}'s q (top) and the k of K/V head {kv_head}, which it reads (bottom), feature pair(s) "
        "{pairs}: each token's point before RoPE and after it, joined by a dashed line. A turn keeps the distance "
        "to the cross (0, 0); the token at position m turns by m · θ.",
        "zh": "上排是头 {head} 的 q，下排是它读取的 K/V 头 {kv_head} 的 k，特征对 {pairs}：每个词元旋转前后的点，"
        "用虚线相连。旋转不改变到十字 (0, 0) 的距离；位置 m 的词元转过 m · θ。",
    },
    "today.rope.angles_caption": {
        "en": "Pair 0 turns {fastest} rad per position; the last pair needs about {slowest} positions for one full "
        "turn. Fast pairs tell near positions apart, slow ones far ones.",
        "zh": "第 0 对每个位置转 {fastest} 弧度；最后一对大约要 {slowest} 个位置才转满一圈。转得快的对区分相近的"
        "位置，转得慢的区分相距远的位置。",
    },
    "today.offset.what": {
        "en": "**Why rotate?** Turning q by m·θ and k by n·θ leaves their dot product depending on the two vectors "
        "and on n − m, not on m and n themselves. Your "
        "tokens “{query_token}” (as the query) and “{key_token}” (as the key), put at other positions, in head {head}:",
        "zh": "**为什么要旋转？** q 转 m·θ、k 转 n·θ 之后，两者的点积只取决于这两个向量和 n − m，而与 m、n 本身无关。"
        "把你的词元“{query_token}”（作查询）和“{key_token}”（作键）放到别的位置上，在头 {head} 里：",
    },
    "today.offset.positions": {"en": "positions (m, n)", "zh": "位置 (m, n)"},
    "today.offset.offset": {"en": "offset n − m", "zh": "偏移 n − m"},
    "today.offset.rope": {"en": "score with RoPE", "zh": "RoPE 下的得分"},
    "today.offset.sinusoidal": {
        "en": "score with sinusoids added to x instead",
        "zh": "改为在 x 上加正弦编码时的得分",
    },
    "today.offset.verdict": {
        "en": "The first {count} rows have the same offset ({offset:+d}): with RoPE their scores differ by {rope_gap} "
        "(rounding), so a head can learn “the word 3 places back” once, for every position. With the sinusoids added "
        "to the same vectors, the same rows differ by {sinusoidal_gap}.",
        "zh": "前 {count} 行的偏移相同（{offset:+d}）：RoPE 下它们的得分只差 {rope_gap}（舍入误差），"
        "所以一个头只需学一次“往前数第 3 个词”，在每个位置都适用。"
        "若改为在同样的向量上加正弦编码，这几行相差 {sinusoidal_gap}。",
    },
    "today.chart.token": {"en": "token", "zh": "词元"},
    "today.chart.stage": {"en": "stage", "zh": "阶段"},
    "today.chart.before": {"en": "before RoPE", "zh": "旋转前"},
    "today.chart.after": {"en": "after RoPE", "zh": "旋转后"},
    "today.chart.pair": {"en": "feature pair", "zh": "特征对"},
    "today.chart.first": {"en": "feature i", "zh": "特征 i"},
    "today.chart.second": {"en": "feature i + d_k/2", "zh": "特征 i + d_k/2"},
    "today.chart.angle": {"en": "angle per position (rad)", "zh": "每个位置的转角（弧度）"},
    "today.chart.wavelength": {"en": "positions per full turn", "zh": "转满一圈所需位置数"},
    # ------------------------------------------------------------ step 2
    "step2.title": {"en": "2 · Scaled dot-product attention", "zh": "2 · 缩放点积注意力"},
    "step2.what": {
        "en": "In every head, each query is compared with every key: scores = Q Kᵀ, scaled by 1/√d_k so they do "
        "not grow with d_k. Masked cells are set to −∞, and a softmax over the keys turns each row into "
        "weights that sum to 1. The context is the weighted sum of the values: weights · V.",
        "zh": "在每个头里，每个查询都与每个键比较：分数 = Q Kᵀ，再乘以 1/√d_k，避免分数随 d_k 变大。"
        "被屏蔽的位置设为 −∞，再沿键的维度做 softmax，使每一行变成和为 1 的权重。上下文是值的加权和：权重 · V。",
    },
    "step2.shapes": {
        "en": "- `Q {q}` @ `Kᵀ {kt}`\n- → `scores {scores}` (B, h, L_q, L_k)\n"
        "- → × 1/√{d_k} = {scale}, mask, softmax over keys\n"
        "- → `weights {weights}`\n- → `weights @ V` → `context {context}` (B, h, L, d_k)",
        "zh": "- `Q {q}` @ `Kᵀ {kt}`\n- → `scores {scores}` (B, h, L_q, L_k)\n"
        "- → × 1/√{d_k} = {scale}，加掩码，沿键的维度做 softmax\n"
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
    "step2.causal_case": {
        "en": "Lab 4 · The first tutorial's two causal masks do not fit together (its section-5 mask in its "
        "section-2 module turns this staircase inside out)",
        "zh": "实验 4 · 第一个教程的两个因果掩码并不匹配（把它第 5 节的掩码传给第 2 节的模块，这个阶梯会整个翻过来）",
    },
    "step2.uniform_note": {
        "en": "W_q and W_k here are random, not trained, so every row of weights is close to uniform: no weight "
        "is above {ratio} × 1/L = {bound} (the largest is {largest}; 1/L ≈ {uniform}). A trained model learns "
        "W_q and W_k whose weights pick out a few tokens.",
        "zh": "这里的 W_q 和 W_k 是随机的、没有经过训练，所以每一行权重都接近均匀：没有一个权重超过 "
        "{ratio} × 1/L = {bound}（最大的是 {largest}；1/L ≈ {uniform}）。"
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
        "en": "A last learned matrix mixes the heads: `{formula}`. The output has the same shape "
        "as the input x, so layers can be stacked.",
        "zh": "最后一个可学习矩阵把各个头的信息混合起来：`{formula}`。输出与输入 x 形状相同，所以层可以一层层叠起来。",
    },
    "step4.shapes": {
        "en": "- `concat {concat}` (B, L, d_model)\n- → `{formula}` `{output}`, the shape of `x {x}`",
        "zh": "- `concat {concat}` (B, L, d_model)\n- → `{formula}` `{output}`，与 `x {x}` 形状相同",
    },
    "step4.params": {
        "en": "**Parameters:** W_o, {d}² + {d} = **{one}**.",
        "zh": "**参数量：** W_o，{d}² + {d} = **{one}**。",
    },
    "step4.params_nobias": {
        "en": "**Parameters:** W_o, {d}² = **{one}** (no bias).",
        "zh": "**参数量：** W_o，{d}² = **{one}**（无偏置）。",
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
    "summary.total_gqa": {
        "en": "Total: 2·d² + 2·d·h_kv·d_k + biases = 2·{d}² + 2·{d}·{kv}·{d_k} + {biases} = **{total}**",
        "zh": "合计：2·d² + 2·d·h_kv·d_k + 偏置 = 2·{d}² + 2·{d}·{kv}·{d_k} + {biases} = **{total}**",
    },
    "summary.total_gqa_nobias": {
        "en": "Total (no biases): 2·d² + 2·d·h_kv·d_k = 2·{d}² + 2·{d}·{kv}·{d_k} = **{total}**",
        "zh": "合计（无偏置）：2·d² + 2·d·h_kv·d_k = 2·{d}² + 2·{d}·{kv}·{d_k} = **{total}**",
    },
    "summary.kv_title": {
        "en": "Fewer key/value heads: parameters and the KV cache per token",
        "zh": "更少的 K/V 头：参数量与每个词元的 KV 缓存",
    },
    "summary.kv.heads": {"en": "h_kv", "zh": "h_kv"},
    "summary.kv.wkv": {"en": "W_k + W_v", "zh": "W_k + W_v"},
    "summary.kv.total": {"en": "layer", "zh": "整层"},
    "summary.kv.numbers": {"en": "cache numbers / token", "zh": "每词元缓存的数"},
    "summary.kv.fp32": {"en": "float32", "zh": "float32"},
    "summary.kv.bf16": {"en": "bfloat16", "zh": "bfloat16"},
    "summary.nothing_ran": {
        "en": "No layer ran with these settings (see the message above). The counts below are those of a layer with "
        "d_model = {d} in which every query head has its own K/V head, not of the layer asked for.",
        "zh": "按这些设置没有运行任何层（见上方的提示）。下面的计数属于 d_model = {d}、"
        "每个查询头都有自己的 K/V 头的层，而不是所要求的层。",
    },
    "summary.kv_note": {
        "en": "A decoder that generates keeps every earlier token's K and V (the KV cache): 2 · layers · h_kv · d_k "
        "numbers per token, here for {layers} layer(s). Fewer K/V heads shrink it by h / h_kv; the scores do not "
        "get cheaper (every query head still scores every key). This page's row is in bold.",
        "zh": "逐词生成的解码器会保留之前每个词元的 K 和 V（KV 缓存）：每个词元 2 · 层数 · h_kv · d_k 个数，"
        "这里按 {layers} 层计。更少的 K/V 头让它缩小为 h_kv / h；打分并不因此更便宜（每个查询头仍要给每个键打分）。"
        "本页的那一行加粗。",
    },
    "summary.by_heads": {"en": "Does the head count matter?", "zh": "头数会改变参数量吗？"},
    "summary.by_heads_note": {
        "en": "No, while every query head has its own K/V head (the table): for d_model = {d} the total is the "
        "same for every h. Splitting into heads reshapes the same four matrices; it adds no weights.",
        "zh": "不会，只要每个查询头都有自己的 K/V 头（见表）：d_model = {d} 时，无论 h 取多少，合计都一样。"
        "拆分成多头只是改变同样四个矩阵的形状，并不增加权重。",
    },
    # ------------------------------------------------------------ live check
    "check.title": {"en": "Live check against PyTorch", "zh": "与 PyTorch 实时核对"},
    "check.what": {
        "en": "The same weights run through PyTorch's own implementation on the same input, and the outputs and the "
        "per-head weights are compared number by number. The tutorials' layer is copied into "
        "`torch.nn.MultiheadAttention` (W_q, W_k, W_v stacked into its `in_proj_weight`). A layer with fewer K/V "
        "heads or RoPE, which `nn.MultiheadAttention` cannot hold, runs through PyTorch's own pieces instead: "
        "`F.linear` for the projections, RoPE written another way (each feature pair as a complex number turned by "
        "`torch.polar`) and `F.scaled_dot_product_attention(..., enable_gqa=True)`, which repeats the K/V heads "
        "itself (its weights: the same call with the identity as the values).",
        "zh": "同样的权重交给 PyTorch 自己的实现，用同样的输入运行，再逐元素比较输出和每个头的权重。教程里的层被复制到 "
        "`torch.nn.MultiheadAttention`（W_q、W_k、W_v 叠成它的 `in_proj_weight`）。K/V 头更少或使用 RoPE 的层，"
        "`nn.MultiheadAttention` 装不下，就改用 PyTorch 自己的组件：投影用 `F.linear`，RoPE 换一种写法（每对特征看作"
        "复数，用 `torch.polar` 旋转），注意力用 `F.scaled_dot_product_attention(..., enable_gqa=True)`，由它自己复制 "
        "K/V 头（权重来自同一调用、以单位矩阵作为 V）。",
    },
    "check.pass": {
        "en": "✓ Matches PyTorch ({against}): max |Δ output| = {out}, max |Δ weights| = {weights} (tolerance {tol}).",
        "zh": "✓ 与 PyTorch（{against}）一致：输出最大差 |Δ| = {out}，权重最大差 |Δ| = {weights}（容差 {tol}）。",
    },
    "check.fail": {
        "en": "✗ Differs from PyTorch ({against}): max |Δ output| = {out}, max |Δ weights| = {weights} "
        "(tolerance {tol}).",
        "zh": "✗ 与 PyTorch（{against}）不一致：输出最大差 |Δ| = {out}，权重最大差 |Δ| = {weights}（容差 {tol}）。",
    },
    "check.rows": {
        "en": "{compared} of {total} query rows compared: a row whose keys are all masked gives zeros here and "
        "NaN in PyTorch, so it is left out.",
        "zh": "比较了 {total} 行查询中的 {compared} 行：所有键都被屏蔽的行在这里输出 0，在 PyTorch 中输出 NaN，"
        "因此不参与比较。",
    },
    "check.mask_note": {
        "en": "Note: in this app a bool mask means True = may attend, as in F.scaled_dot_product_attention and "
        "the first tutorial (`masked_fill(mask == 0, -inf)` blocks the zeros). nn.MultiheadAttention's bool "
        "attn_mask means the opposite, True = blocked, and so does the second tutorial's "
        "`torch.triu(torch.ones(L, L), diagonal=1).bool()` with `masked_fill_(mask, -inf)`; so the mask is "
        "inverted (~mask) before it is passed to PyTorch. Lab 4 shows all four spellings side by side.",
        "zh": "注意：本应用的布尔掩码中 True 表示可以关注，与 F.scaled_dot_product_attention 和第一个教程一致"
        "（`masked_fill(mask == 0, -inf)` 屏蔽的是 0）。nn.MultiheadAttention 的布尔 attn_mask 含义相反，"
        "True 表示屏蔽；第二个教程的 `torch.triu(torch.ones(L, L), diagonal=1).bool()` 配合 "
        "`masked_fill_(mask, -inf)` 也是如此。所以传给 PyTorch 之前先取反（~mask）。实验 4 把四种写法并排列出。",
    },
    "check.code": {
        "en": "The code it is compared with (nn.MultiheadAttention's copy; the pieces for GQA or RoPE)",
        "zh": "用来比较的代码（复制到 nn.MultiheadAttention；GQA 或 RoPE 用的组件）",
    },
    "check.order_not_here": {
        "en": "Shown on a layer `nn.MultiheadAttention` can hold (num_kv_heads = num_heads, no RoPE).",
        "zh": "只在 `nn.MultiheadAttention` 装得下的层上演示（num_kv_heads = num_heads，且不用 RoPE）。",
    },
    # ============================================================ lessons from the tutorials
    # ------------------------------------------------------------ shared by the steps
    "steps.labs": {"en": "Try it in a lab:", "zh": "去实验室试一试："},
    "steps.code": {"en": "The code of this step", "zh": "这一步的代码"},
    # ------------------------------------------------------------ step 2: why √d_k, dropout
    "step2.why_scale": {
        "en": "**Why divide by √d_k?** A score q·k is a sum of d_k products q_i·k_i. If the entries of Q and K "
        "are independent with mean 0 (the paper's assumption) and standard deviations σ_q and σ_k, each product "
        "has a standard deviation of σ_q·σ_k and the sum about σ_q·σ_k·√d_k: scores grow like √d_k (here "
        "√{d_k} ≈ {root}). Large scores push the softmax towards one-hot: one weight near 1, the rest near 0. "
        "There its gradients vanish and the layer stops learning. Dividing by √d_k leaves about σ_q·σ_k, "
        "whatever d_k is: the spread no longer depends on d_k. That is variance 1 only when σ_q·σ_k = 1, which "
        "`nn.Linear`'s default initialisation does not give (its weights are uniform in ±1/√d_model: an input of "
        "variance 1 gives entries of variance about 1/3). Here, over all {heads} heads, σ_q = {q_std} and "
        "σ_k = {k_std}, and the entries have means μ_q = {q_mean} and μ_k = {k_mean} (from the biases and from the "
        "inputs' own mean). With means, a product's standard deviation is "
        "√((σ_q² + μ_q²)(σ_k² + μ_k²) − μ_q²μ_k²) = {expected_scaled}, so the sum's is about {expected_raw}: the "
        "raw scores have a standard deviation of {raw_std}, the scaled ones {scaled_std}. The prediction is "
        "approximate: each feature has its own mean, so the entries are not draws from one distribution.",
        "zh": "**为什么要除以 √d_k？** 分数 q·k 是 d_k 个乘积 q_i·k_i 之和。若 Q 和 K 的元素相互独立、均值为 0"
        "（论文的假设），标准差分别为 σ_q 和 σ_k，则每个乘积的标准差为 σ_q·σ_k，求和后约为 σ_q·σ_k·√d_k："
        "分数大约按 √d_k 增长（这里 √{d_k} ≈ {root}）。分数很大时 softmax 趋向独热（one-hot）："
        "一个权重接近 1，其余接近 0。此时梯度几乎消失，这一层就学不动了。除以 √d_k 之后约剩 σ_q·σ_k，"
        "无论 d_k 多大：分数的离散程度不再依赖 d_k。只有当 σ_q·σ_k = 1 时方差才是 1，而 `nn.Linear` "
        "的默认初始化并不给出这一点（其权重在 ±1/√d_model 内均匀分布：方差为 1 的输入得到的元素方差约为 1/3）。"
        "这里全部 {heads} 个头的 σ_q = {q_std}，σ_k = {k_std}，而元素有均值 μ_q = {q_mean}、"
        "μ_k = {k_mean}（来自偏置，也来自输入本身的均值）。有均值时，一个乘积的标准差是 "
        "√((σ_q² + μ_q²)(σ_k² + μ_k²) − μ_q²μ_k²) = {expected_scaled}，"
        "所以求和后约为 {expected_raw}：原始分数的标准差为 {raw_std}，缩放后为 {scaled_std}。"
        "这个预测只是近似：每个特征有自己的均值，所以这些元素并不来自同一个分布。",
    },
    "step2.why_scale_dependent": {
        "en": "Here the scaled scores spread {ratio}× as much as predicted: the entries of these Q and K are not "
        "independent, so the rule of thumb does not give the spread (what trained W_q and W_k learn is such a "
        "dependence: each query lined up with the keys it looks for). Then dividing by √d_k does not make the "
        "spread independent of d_k: a query lined up with its key gives a score that grows like d_k, not √d_k, "
        "so, when every entry of a query follows its key's, the scaled scores still spread more as d_k grows, like "
        "√d_k. The division slows the growth; it does "
        "not remove it.",
        "zh": "这里缩放后分数的离散程度是预测值的 {ratio} 倍：这里 Q 和 K 的元素并不独立，所以这条经验法则"
        "给不出离散程度（训练过的 W_q 和 W_k 学到的正是这种依赖：让每个查询对准它要找的键）。这时除以 √d_k 并不能让"
        "离散程度与 d_k 无关：查询对准它的键时，分数按 d_k 增长，而不是按 √d_k，所以当查询的每个元素都跟随其键的"
        "元素时，缩放后的分数仍随 d_k 变大而更分散，大约按 √d_k 增长。除法减慢了增长，却没有消除它。",
    },
    "step2.why_scale_low": {
        "en": "Here the scaled scores spread only {ratio}× the prediction: {count} scores are few to measure a spread "
        "on, and each feature has its own mean, so the rule of thumb is only rough here.",
        "zh": "这里缩放后分数的离散程度只有预测值的 {ratio} 倍：{count} 个分数用来测量离散程度太少，"
        "而且每个特征有自己的均值，所以这条经验法则在这里只是粗略的。",
    },
    "step2.dropout_title": {
        "en": "Dropout after the softmax (training only)",
        "zh": "softmax 之后的 dropout（仅在训练时）",
    },
    "step2.dropout": {
        "en": "Many tutorial layers put `nn.Dropout(p)` on the weights right after the softmax, before "
        "`weights @ V`: `weights = self.dropout(torch.softmax(scores, dim=-1))`. In training mode each weight "
        "is set to 0 with probability p and the others are multiplied by 1 / (1 − p), so a row sums to 1 "
        "only on average. `model.eval()` turns dropout off. This page always shows evaluation mode: its "
        "layer has no dropout. The table shows one row of head {head} (query {query}) as the page computes "
        "it, and as `F.dropout(weights, p={p}, training=True)` would leave it in one training step.",
        "zh": "许多教程的注意力层在 softmax 之后、`weights @ V` 之前，对权重加一个 `nn.Dropout(p)`："
        "`weights = self.dropout(torch.softmax(scores, dim=-1))`。训练模式下，每个权重以概率 p 被置为 0，"
        "其余的乘以 1 / (1 − p)，所以每一行只是平均而言和为 1。`model.eval()` 会关闭 dropout。"
        "本页始终显示评估模式：它的层没有 dropout。下表是头 {head}（查询 {query}）的一行："
        "本页算出的权重，以及在某一步训练中 `F.dropout(weights, p={p}, training=True)` 之后的样子。",
    },
    "step2.dropout_eval": {"en": "evaluation (this page)", "zh": "评估模式（本页）"},
    "step2.dropout_train": {"en": "training, p = {p}", "zh": "训练模式，p = {p}"},
    "step2.dropout_sum": {"en": "sum of all {count}", "zh": "全部 {count} 个之和"},
    # ------------------------------------------------------------ step 3: contiguous, rows alike
    "step3.contiguous_title": {
        "en": "Why `.contiguous()` before `.view`?",
        "zh": "为什么 `.view` 之前要先 `.contiguous()`？",
    },
    "step3.contiguous": {
        "en": "`transpose(1, 2)` moves no numbers: it returns a view of the same memory with two strides "
        "swapped. Here `context.transpose(1, 2)` has shape `{shape}` and strides `{strides}`; laid out in "
        "order, that shape would have strides `{packed}`. So it is not contiguous (`is_contiguous()` is "
        "`{contiguous}`). `view` only reinterprets memory as it lies, so the dimensions it merges must lie one "
        "after the other in memory (each one's stride = the next one's stride × the next one's size). "
        "Contiguous memory always meets that, but it is not required: on a non-contiguous tensor `view` still "
        "works as long as the dimensions it merges lie one after the other (splitting one always works). Here "
        "it must merge the last two dimensions (h and d_k), and h's stride is not d_k × d_k's stride, so on "
        "this tensor it fails:",
        "zh": "`transpose(1, 2)` 并不移动任何数字：它返回同一块内存的视图，只是交换了两个步长（stride）。"
        "这里 `context.transpose(1, 2)` 的形状是 `{shape}`，步长是 `{strides}`；若按顺序存放，这个形状的步长"
        "应为 `{packed}`。所以它不是连续的（`is_contiguous()` 为 `{contiguous}`）。`view` 只是按内存现有的排列"
        "重新解读，所以它要合并的那些维度在内存中必须一个紧接一个"
        "（每个维度的步长 = 下一个维度的步长 × 下一个维度的大小）。"
        "连续的内存总能满足这一点，但连续并不是必需的：对不连续的张量，只要它要合并的维度在内存中一个紧接一个"
        "（拆分一个维度总是可以的），`view` 照样可用。这里它要合并最后两个维度（h 和 d_k），"
        "而 h 的步长不等于 d_k × d_k 的步长，所以对这个张量它会报错：",
    },
    "step3.contiguous_lucky": {
        "en": "`transpose(1, 2)` moves no numbers: it returns a view of the same memory with two strides "
        "swapped. With one head or one token, the swapped dimension has size 1, so this view happens to be "
        "contiguous (`is_contiguous()` is `{contiguous}`) and `view` alone would work here; with h > 1 and "
        "L > 1 it is not, and `view` fails (`view size is not compatible with input tensor's size and stride`).",
        "zh": "`transpose(1, 2)` 并不移动任何数字：它返回同一块内存的视图，只是交换了两个步长（stride）。"
        "只有一个头或一个词元时，被交换的维度大小为 1，这个视图碰巧是连续的（`is_contiguous()` 为 "
        "`{contiguous}`），这里单用 `view` 也行；当 h > 1 且 L > 1 时就不连续了，`view` 会报错"
        "（`view size is not compatible with input tensor's size and stride`）。",
    },
    "step3.contiguous_fix": {
        "en": "`.contiguous()` first copies the numbers into the new order; then `view` can join h × d_k "
        "back into d_model. `reshape` does both in one call: a view when it can, a copy when it must.",
        "zh": "`.contiguous()` 先把数字按新的顺序复制一份；然后 `view` 才能把 h × d_k 重新接成 d_model。"
        "`reshape` 一步完成两件事：能用视图时用视图，必须复制时才复制。",
    },
    "step3.alike_note": {
        "en": "**Why the rows look alike:** if a head's weights were all equal (1/L), each context row would "
        "be exactly the average of the V rows, (1/L)·Σⱼ Vⱼ: with no mask, the same row for every token. Here "
        "the largest weight is {largest} (1/L ≈ {uniform}): close to uniform, so every row is close to one "
        "average row. No cell is further than {spread} from its column's average, while the values reach "
        "{size}. Trained heads, whose weights pick out a few tokens, give rows that differ.",
        "zh": "**为什么各行看起来差不多：** 如果一个头的权重全都相等（1/L），每一行上下文就恰好是 V 各行的平均 "
        "(1/L)·Σⱼ Vⱼ：不加掩码时，每个词元得到同一行。这里最大的权重是 {largest}（1/L ≈ {uniform}），"
        "接近均匀，所以每一行都接近同一个平均行：任何格子离所在列的平均值都不超过 {spread}，而数值最大达到 "
        "{size}。训练过的头会把权重集中在少数词元上，各行就不一样了。",
    },
    # ------------------------------------------------------------ step 4: rows alike
    "step4.alike_note": {
        "en": "**Alike rows again:** `{formula}` is one linear map applied to every row, so "
        "rows that were alike in step 3 stay alike: no cell is further than {spread} from its column's "
        "average, while the values reach {size}.",
        "zh": "**各行依然差不多：** `{formula}` 对每一行做同一个线性变换，所以第 3 步中相近的行"
        "在这里仍然相近：任何格子离所在列的平均值都不超过 {spread}，而数值最大达到 {size}。",
    },
    # ------------------------------------------------------------ batches and padding
    "padding.title": {"en": "Batches and padding", "zh": "批次与填充"},
    "padding.what": {
        "en": "The page runs one sentence at a time (B = 1), so nothing here ever needs padding. A model "
        "trains on batches: B sentences in one `[B, L, d_model]` tensor, where every sentence must have the "
        "same length L, so the shorter ones are filled up with [PAD]. Here the page's layer runs a batch of "
        "two: your sentence (without its [PAD] tokens) and its first half, padded to {length} tokens. The "
        "padding mask `[B, 1, 1, L]` (True = a real token) is the same for every head and every query: no "
        "query may attend a [PAD] key.",
        "zh": "本页一次只处理一句话（B = 1），所以这里从来不需要填充。模型训练时用的是批次：B 句话放进同一个 "
        "`[B, L, d_model]` 张量，每句话的长度 L 必须相同，所以较短的句子要用 [PAD] 补齐。这里用本页的层运行一个"
        "两句话的批次：你的句子（去掉其中的 [PAD]）和它的前一半，补齐到 {length} 个词元。填充掩码 "
        "`[B, 1, 1, L]`（True 表示真实词元）对每个头、每个查询都一样：任何查询都不能关注 [PAD] 键。",
    },
    "padding.sentence": {"en": "sentence {index}", "zh": "句子 {index}"},
    "padding.col_tokens": {"en": "tokens", "zh": "词元"},
    "padding.col_real": {"en": "real tokens", "zh": "真实词元数"},
    "padding.col_mask": {"en": "mask row (1 = may attend)", "zh": "掩码行（1 表示可以关注）"},
    "padding.shapes": {
        "en": "- batch `x {x}` (B, L, d_model)\n- padding mask `{mask}` (B, 1, 1, L_k), broadcast to the "
        "scores `{scores}` (B, h, L_q, L_k)\n- output `{output}` (B, L, d_model)",
        "zh": "- 批次 `x {x}` (B, L, d_model)\n- 填充掩码 `{mask}` (B, 1, 1, L_k)，广播到分数 `{scores}` "
        "(B, h, L_q, L_k)\n- 输出 `{output}` (B, L, d_model)",
    },
    "padding.with": {
        "en": "✓ With the padding mask the short sentence's {count} real tokens get their outputs alone, up to "
        "float32 rounding: max |batch − alone| = {gap} (at most {tolerance}).",
        "zh": "✓ 加上填充掩码，短句的 {count} 个真实词元得到的输出与单独运行时相同，只差 float32 的舍入："
        "最大 |批次 − 单独| = {gap}（不超过 {tolerance}）。",
    },
    "padding.without": {
        "en": "✗ Without it they attend the [PAD] keys too: max |batch − alone| = {gap}.",
        "zh": "✗ 不加掩码，它们也会关注 [PAD] 键：最大 |批次 − 单独| = {gap}。",
    },
    "padding.with_differs": {
        "en": "✗ Even with the padding mask the short sentence's outputs differ from its run alone: "
        "max |batch − alone| = {gap}.",
        "zh": "✗ 即使加了填充掩码，短句的输出也与单独运行时不同：最大 |批次 − 单独| = {gap}。",
    },
    "padding.without_same": {
        "en": "Without it they happen to come out the same here too: max |batch − alone| = {gap}.",
        "zh": "不加掩码，这里的结果碰巧也一样：最大 |批次 − 单独| = {gap}。",
    },
    "padding.sample": {
        "en": "Output of “{token}”, the short sentence's last real token (first features):",
        "zh": "短句最后一个真实词元“{token}”的输出（前几维）：",
    },
    "padding.row_alone": {"en": "alone, no padding", "zh": "单独运行，无填充"},
    "padding.row_masked": {"en": "in the batch, padding mask", "zh": "在批次中，加填充掩码"},
    "padding.row_unmasked": {"en": "in the batch, no mask", "zh": "在批次中，不加掩码"},
    "padding.causal_note": {
        "en": "With a causal mask, [PAD] tokens added on the right come after every real token, so causal "
        "alone already hides them from the real tokens. A window mask, or padding on the left, does not: "
        "combine them with “Also block [PAD] keys” in the sidebar.",
        "zh": "使用因果掩码时，补在右边的 [PAD] 位于所有真实词元之后，所以单靠因果掩码就能让真实词元看不到它们。"
        "滑动窗口掩码或补在左边的填充则不行：请在侧边栏打开“同时屏蔽 [PAD] 键”把它们组合起来。",
    },
    "padding.unavailable": {
        "en": "The batch needs a text with at least two tokens besides [PAD].",
        "zh": "这个批次需要一段除 [PAD] 之外至少有两个词元的文本。",
    },
    "padding.unavailable_weights": {
        "en": "The batch pads the text as the project's tokenizer cuts it, with the [PAD] input the page makes; {why} "
        "so this panel shows the batch with random weights only.",
        "zh": "这个批次按本项目的分词方式切分文本，再用本页生成的 [PAD] 输入补齐；{why}"
        "所以这个面板只在随机权重下显示批次。",
    },
    "padding.unavailable.pretrained": {
        "en": "a checkpoint cuts the text with its own tokenizer and adds its own special tokens,",
        "zh": "检查点用它自己的分词器切分文本，并加上它自己的特殊词元，",
    },
    "padding.unavailable.trained": {
        "en": "a trained model reads the text as its task does (a sequence task's symbols, the reviews' characters "
        "after [CLS]), not as these tokens and [PAD],",
        "zh": "训练过的模型按它的任务读取文本（序列任务的符号，评论任务中 [CLS] 之后的字符），"
        "而不是读取这些词元和 [PAD]，",
    },
    "padding.code": {"en": "The code of the batch", "zh": "批次的代码"},
    # ------------------------------------------------------------ live check: nn.MultiheadAttention's order
    "check.order_title": {
        "en": "A common pitfall: `nn.MultiheadAttention` expects `[L, B, E]` unless `batch_first=True`",
        "zh": "常见陷阱：除非设 `batch_first=True`，`nn.MultiheadAttention` 要求的顺序是 `[L, B, E]`",
    },
    "check.order": {
        "en": "By default `nn.MultiheadAttention` reads its input as [sequence length, batch, embedding]. Our "
        "batch-first `x {x}` goes in without an error and comes out with the same shape `{out}`, but it was "
        "read as {length} sentences of one token each: its weights have the shape `{weights}`, every token "
        "attends only to itself, and the output is off by max |Δ| = {wrong}. With `x.transpose(0, 1)` "
        "(`[L, B, E]`, and the output transposed back) max |Δ| = {transposed}; with `batch_first=True`, as "
        "the check above uses, {batch_first}.",
        "zh": "默认情况下 `nn.MultiheadAttention` 把输入读作 [序列长度, 批大小, 嵌入维度]。我们按批次优先排列的 "
        "`x {x}` 传进去不会报错，输出形状也一样是 `{out}`，但它被当成了 {length} 句、每句只有一个词元："
        "权重的形状是 `{weights}`，每个词元只关注自己，输出的最大差 |Δ| = {wrong}。先用 `x.transpose(0, 1)` "
        "变成 `[L, B, E]`（输出再转回来），最大差 |Δ| = {transposed}；像上面的核对那样设 `batch_first=True`，"
        "最大差为 {batch_first}。",
    },
}
