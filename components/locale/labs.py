"""Messages of the labs (pages/) and of the sidebar navigation."""

MESSAGES: dict[str, dict[str, str]] = {
    # ------------------------------------------------------------------ navigation
    "nav.menu": {"en": "Playground and the {count} labs", "zh": "游乐场与 {count} 个实验室"},
    "nav.home": {"en": "Playground", "zh": "游乐场"},
    "nav.labs": {"en": "Labs", "zh": "实验室"},
    "nav.lab.scaling": {"en": "1 · Why √d_k", "zh": "1 · 为什么除以 √d_k"},
    "nav.lab.heads": {"en": "2 · Head sweep", "zh": "2 · 头数对比"},
    "nav.lab.reshape": {"en": "3 · Wrong reshape", "zh": "3 · 错误的 reshape"},
    "nav.lab.masks": {"en": "4 · Mask translator", "zh": "4 · 掩码翻译器"},
    "nav.lab.loop": {"en": "5 · Loop vs fused", "zh": "5 · 循环 vs 融合"},
    "nav.lab.complexity": {"en": "6 · Cost vs length", "zh": "6 · 代价与长度"},
    "nav.lab.cross": {"en": "7 · Cross-attention", "zh": "7 · 交叉注意力"},
    "nav.lab.sculpt": {"en": "8 · Sculpt a head", "zh": "8 · 手工构造注意力头"},
    "nav.lab.encoder": {"en": "9 · Encoder block", "zh": "9 · 编码器层"},
    # ------------------------------------------------------------------ shared by the labs
    "lab.common.explain": {"en": "Why? The explanation", "zh": "为什么？看解释"},
    "lab.common.text": {"en": "Sentence", "zh": "句子"},
    "lab.common.query": {"en": "query token", "zh": "查询词元"},
    "lab.common.key": {"en": "key token", "zh": "键词元"},
    "lab.common.weight": {"en": "weight", "zh": "权重"},
    "lab.common.head": {"en": "head {n}", "zh": "头 {n}"},
    "lab.common.heads_from_zero": {
        "en": "Heads are numbered from 0, like token positions and like the main page (PyTorch's indices).",
        "zh": "头从 0 开始编号，与词元位置和主页面一致（即 PyTorch 的下标）。",
    },
    "lab.common.seed": {"en": "Seed", "zh": "随机种子"},
    "lab.common.d_model": {"en": "d_model (model width)", "zh": "d_model（模型维度）"},
    "lab.common.num_heads": {"en": "Heads h", "zh": "头数 h"},
    "lab.common.tokens_empty": {
        "en": "The sentence has no tokens: type a few words.",
        "zh": "这个句子没有词元：请输入几个词。",
    },
    "lab.common.tokens_too_many": {
        "en": "The sentence has {count} tokens; this lab takes at most {high}. Shorten it.",
        "zh": "这个句子有 {count} 个词元；本实验最多 {high} 个，请缩短。",
    },
    "lab.common.tokens_seen": {"en": "{count} tokens: {tokens}", "zh": "{count} 个词元：{tokens}"},
    "lab.common.token_seen": {"en": "1 token: {tokens}", "zh": "1 个词元：{tokens}"},
    "lab.common.measure": {"en": "Measure", "zh": "测量"},
    "lab.common.measuring": {"en": "Timing…", "zh": "正在计时……"},
    "lab.common.repeats": {"en": "Timed rounds (the median counts)", "zh": "计时轮数（取中位数）"},
    "lab.common.measured_at": {
        "en": "Measured on this server's CPU at {time} ({attempts} measurements taken).",
        "zh": "于 {time} 在本服务器的 CPU 上测得（共测量 {attempts} 次）。",
    },
    "lab.common.measured_at_once": {
        "en": "Measured on this server's CPU at {time} (one measurement taken).",
        "zh": "于 {time} 在本服务器的 CPU 上测得（共测量 1 次）。",
    },
    "lab.common.shared_machine": {
        "en": "This machine is shared: everyone using the app (a whole class, in a workshop) and other programs "
        "run on the same CPU, so single rounds can be several times slower. Each time is the median of "
        "{repeats} rounds and its spread the middle half of them. A result whose times grow much faster than "
        "the work (or fall as the work grows) is measured again, up to {attempts} times; only a result that "
        "passes is kept for 10 minutes and shown to everyone.",
        "zh": "这台机器是共享的：所有使用本应用的人（工作坊里是全班）以及其他程序都在同一个 CPU 上运行，"
        "所以单轮计时可能慢好几倍。每个时间是 {repeats} 轮的中位数，离散程度用中间一半的轮次表示。"
        "如果结果的时间增长远快于计算量（或计算量增加时时间反而下降），就重新测量，最多 {attempts} 次；"
        "只有通过检查的结果才会保留 10 分钟并展示给所有人。",
    },
    "lab.common.untrusted": {
        "en": "After {attempts} measurements some times still do not follow the work: {breaks}. The machine is "
        "probably busy. These numbers are shown but not kept: press Measure again in a moment.",
        "zh": "测量 {attempts} 次后，仍有一些时间与计算量不符：{breaks}。机器可能正忙。"
        "这些数字只显示、不保留：请稍后再点一次“测量”。",
    },
    "lab.common.break": {
        "en": "{series}, L = {start} → {end}: {time:.1f}× the time for {work:.1f}× the work",
        "zh": "{series}，L = {start} → {end}：计算量 {work:.1f} 倍，时间却是 {time:.1f} 倍",
    },
    "lab.common.busy": {
        "en": "Another measurement is running on this server; try again in a few seconds.",
        "zh": "服务器上正在进行另一项测量，请几秒后再试。",
    },
    "lab.common.max_diff_ok": {
        "en": "max |difference| = {diff:.2e} ≤ {tol:.0e}: the same numbers",
        "zh": "最大 |差值| = {diff:.2e} ≤ {tol:.0e}：数值相同",
    },
    "lab.common.max_diff_bad": {
        "en": "max |difference| = {diff:.3g} > {tol:.0e}: different numbers",
        "zh": "最大 |差值| = {diff:.3g} > {tol:.0e}：数值不同",
    },
    # ------------------------------------------------------------------ lab 1: √d_k
    "lab.scaling.title": {"en": "Lab 1 · Why divide by √d_k?", "zh": "实验 1 · 为什么要除以 √d_k？"},
    "lab.scaling.intro": {
        "en": "Attention computes softmax(q·k / √d_k). Switch the division off, or change it, and watch "
        "what the softmax does as the head size d_k grows from 16 to 512.",
        "zh": "注意力计算 softmax(q·k / √d_k)。关掉这个除法或改变它，观察当头的维度 d_k 从 16 增大到 512 时 softmax "
        "的变化。",
    },
    "lab.scaling.explain": {
        "en": "If the numbers in q and k are independent with mean 0 and variance 1 (the paper's footnote 4), "
        "then q·k = q₁k₁ + … + q_d k_d is a sum of d_k terms of variance 1: its variance is **d_k**. "
        "Here q and k are drawn exactly so and the variance is *measured*: it tracks d_k.\n\n"
        "Large scores make the softmax peaky: one weight near 1, the rest near 0 (low entropy). Its "
        "gradients then vanish and training stalls. Dividing by √d_k brings the variance back to 1 "
        "for every d_k, so the softmax behaves the same whatever the head size.\n\n"
        "A temperature τ divides once more: τ > 1 flattens the weights, τ < 1 sharpens them.",
        "zh": "如果 q 和 k 的各个分量相互独立、均值为 0、方差为 1（论文脚注 4 的假设），那么 "
        "q·k = q₁k₁ + … + q_d k_d 是 d_k 个方差为 1 的项之和：方差为 **d_k**。"
        "这里的 q 和 k 正是这样随机生成的，方差是*实测*的：它随 d_k 增长。\n\n"
        "分数越大，softmax 越尖锐：一个权重接近 1，其余接近 0（熵很低）。这时梯度几乎消失，训练停滞。"
        "除以 √d_k 让方差对任何 d_k 都回到 1，于是无论头的维度多大，softmax 的表现都一样。\n\n"
        "温度 τ 再除一次：τ > 1 让权重更平均，τ < 1 让权重更尖锐。",
    },
    "lab.scaling.mode": {"en": "Scores", "zh": "分数的缩放"},
    "lab.scaling.mode.scaled": {"en": "divided by √d_k (standard)", "zh": "除以 √d_k（标准做法）"},
    "lab.scaling.mode.unscaled": {"en": "not divided", "zh": "不除"},
    "lab.scaling.mode.temperature": {"en": "divided by τ·√d_k (temperature)", "zh": "除以 τ·√d_k（温度）"},
    "lab.scaling.temperature": {"en": "Temperature τ", "zh": "温度 τ"},
    "lab.scaling.temperature_help": {
        "en": "Used when the scores are divided by τ·√d_k.",
        "zh": "在分数除以 τ·√d_k 时使用。",
    },
    "lab.scaling.d_k": {"en": "Head size d_k", "zh": "头的维度 d_k"},
    "lab.scaling.series.scaled": {"en": "÷ √d_k", "zh": "÷ √d_k"},
    "lab.scaling.series.unscaled": {"en": "no division", "zh": "不除"},
    "lab.scaling.series.temperature": {"en": "÷ τ·√d_k, τ = {tau:g}", "zh": "÷ τ·√d_k，τ = {tau:g}"},
    "lab.scaling.series.measured": {"en": "measured Var(q·k)", "zh": "实测 Var(q·k)"},
    "lab.scaling.series.theory": {"en": "theory: d_k", "zh": "理论值：d_k"},
    "lab.scaling.variance_title": {"en": "What the softmax receives", "zh": "softmax 收到的是什么"},
    "lab.scaling.metric.variance_raw": {"en": "Var(q·k) at d_k = {d_k}", "zh": "d_k = {d_k} 时的 Var(q·k)"},
    "lab.scaling.metric.variance_scaled": {"en": "Var after your scaling", "zh": "按你的设置缩放后的方差"},
    "lab.scaling.metric.entropy": {"en": "Mean entropy (bits)", "zh": "平均熵（比特）"},
    "lab.scaling.metric.max_weight": {"en": "Mean largest weight", "zh": "每行最大权重的平均值"},
    "lab.scaling.entropy_help": {
        "en": "In bits, as on the main page: 0 = all weight on one key; {top:.0f} = log₂ 32 = spread evenly over "
        "the 32 keys.",
        "zh": "单位是比特，与主页面相同：0 = 全部权重在一个键上；{top:.0f} = log₂ 32 = 平均分给 32 个键。",
    },
    "lab.scaling.variance_caption": {
        "en": "Measured on 256 random queries × 32 random keys per d_k, components drawn from N(0, 1).",
        "zh": "每个 d_k 用 256 个随机查询 × 32 个随机键测得，各分量取自 N(0, 1)。",
    },
    "lab.scaling.axis.variance": {"en": "variance of q·k", "zh": "q·k 的方差"},
    "lab.scaling.axis.entropy": {"en": "entropy per row (bits)", "zh": "每行的熵（比特）"},
    "lab.scaling.axis.max_weight": {"en": "largest weight per row", "zh": "每行最大的权重"},
    "lab.scaling.chart.variance": {"en": "Var(q·k) grows like d_k", "zh": "Var(q·k) 随 d_k 增长"},
    "lab.scaling.colors_caption": {
        "en": "One colour, one meaning on this page: orange = ÷ √d_k, blue = no division, green = ÷ τ·√d_k "
        "(in every chart); grey and purple = the variance of the raw scores q·k (measured, "
        "theory), before any scaling.",
        "zh": "本页中每种颜色只有一个含义：橙色 = ÷ √d_k，蓝色 = 不除，绿色 = ÷ τ·√d_k（所有图中都一样）；"
        "灰色和紫色 = 原始分数 q·k 的方差（实测、理论值），尚未做任何缩放。",
    },
    "lab.scaling.chart.entropy": {"en": "Entropy of the weights", "zh": "权重的熵"},
    "lab.scaling.chart.max_weight": {"en": "Largest weight", "zh": "最大的权重"},
    "lab.scaling.example_title": {"en": "One sentence, d_k = {d_k}", "zh": "一个句子，d_k = {d_k}"},
    "lab.scaling.example_caption": {
        "en": "Queries and keys here are random N(0, 1) vectors per token (no training): only the scaling differs "
        "between the panels.",
        "zh": "这里每个词元的查询和键都是随机的 N(0, 1) 向量（未经训练）：各图之间只有缩放方式不同。",
    },
    # ------------------------------------------------------------------ lab 2: head sweep
    "lab.heads.title": {"en": "Lab 2 · One layer, 1 to 16 heads", "zh": "实验 2 · 同一层，1 到 16 个头"},
    "lab.heads.intro": {
        "en": "The same sentence, the same d_model and *the very same* W_q, W_k, W_v, W_o, split into "
        "h = 1, 2, 4, 8 and 16 heads. Only the split changes.",
        "zh": "同一个句子、同一个 d_model、*完全相同*的 W_q、W_k、W_v、W_o，分成 h = 1、2、4、8、16 个头。"
        "只有切分方式不同。",
    },
    "lab.heads.explain": {
        "en": "Each head gets d_k = d_model / h features of every token. The four projection matrices are "
        "d_model × d_model whatever h is, so the parameter count stays **4·d² + 4·d**: more heads do not "
        "cost more parameters, they cut the same numbers into more, narrower pieces.\n\n"
        "What changes is what each head can do: every head makes its own softmax over its own slice, so "
        "with more heads the layer can look at several places at once (one head per relation). "
        "The weight maps also grow: h·L² numbers instead of L².\n\n"
        "Fresh random weights give almost uniform attention; the *score gain* multiplies W_q to imitate "
        "the larger scores of a trained model (the same gain for every h).",
        "zh": "每个头得到每个词元的 d_k = d_model / h 个特征。四个投影矩阵无论 h 是多少都是 d_model × d_model，"
        "所以参数量始终是 **4·d² + 4·d**：头越多并不增加参数，只是把同样的数切成更多、更窄的块。\n\n"
        "改变的是每个头能做什么：每个头在自己的切片上做自己的 softmax，所以头越多，这一层就能同时关注更多位置"
        "（每个头负责一种关系）。权重图也变多了：h·L² 个数，而不是 L²。\n\n"
        "刚初始化的随机权重给出几乎均匀的注意力；*分数增益*把 W_q 乘以一个系数，模拟训练后模型更大的分数"
        "（对每个 h 使用相同的增益）。",
    },
    "lab.heads.gain": {"en": "Score gain (× W_q)", "zh": "分数增益（× W_q）"},
    "lab.heads.gain_help": {
        "en": "Multiplies W_q, so every score, by this factor. 1 = the freshly initialised layer.",
        "zh": "把 W_q（也就是每个分数）乘以这个系数。1 = 刚初始化的层。",
    },
    "lab.heads.table_title": {"en": "Same parameters, different split", "zh": "参数相同，切分不同"},
    "lab.heads.col.h": {"en": "heads h", "zh": "头数 h"},
    "lab.heads.col.params": {"en": "parameters (counted)", "zh": "参数量（实际计数）"},
    "lab.heads.col.maps": {"en": "weight numbers h·L²", "zh": "权重个数 h·L²"},
    "lab.heads.col.entropy": {"en": "mean entropy (bits)", "zh": "平均熵（比特）"},
    "lab.heads.col.diff": {"en": "max |output − output(h=1)|", "zh": "最大 |输出 − 输出(h=1)|"},
    "lab.heads.table_caption": {
        "en": "Parameters counted on the module for d_model = {d}: {params:,} for every h. The output "
        "changes with h although the weights do not.",
        "zh": "在 d_model = {d} 时对模块实际计数：每个 h 都是 {params:,}。权重没变，输出却随 h 改变。",
    },
    "lab.heads.first_title": {"en": "Head 0 for each h, side by side", "zh": "每种 h 的头 0，并排对比"},
    "lab.heads.panel": {"en": "h = {h}, head 0", "zh": "h = {h}，头 0"},
    "lab.heads.all_title": {"en": "Every head of one h", "zh": "某个 h 的全部头"},
    "lab.heads.choose_h": {"en": "Show the heads of", "zh": "显示这些头"},
    "lab.heads.entropy_title": {"en": "How spread out each head is", "zh": "每个头的注意力有多分散"},
    "lab.heads.uniform": {"en": "uniform (log₂ L)", "zh": "完全均匀（log₂ L）"},
    "lab.heads.entropy_caption": {
        "en": "One dot per head. Entropy in bits, as on the main page: 0 = all weight on one key, "
        "{bits:.2f} = log₂ {count} = spread evenly over all {count} tokens.",
        "zh": "每个点是一个头。熵的单位是比特，与主页面相同：0 = 全部权重在一个键上，"
        "{bits:.2f} = log₂ {count} = 平均分给全部 {count} 个词元。",
    },
    # ------------------------------------------------------------------ lab 3: wrong reshape
    "lab.reshape.title": {"en": "Lab 3 · The wrong reshape", "zh": "实验 3 · 错误的 reshape"},
    "lab.reshape.intro": {
        "en": "Splitting (B, L, d_model) into heads needs `view(B, L, H, d_k)` **and** `transpose(1, 2)`. "
        "Forget the transpose, write `view(B, H, L, d_k)` directly, and nothing crashes: the shape is right, "
        "the numbers are not.",
        "zh": "把 (B, L, d_model) 切成多个头需要 `view(B, L, H, d_k)` **再加** `transpose(1, 2)`。"
        "忘了 transpose、直接写 `view(B, H, L, d_k)`，程序并不会报错：形状是对的，数却错了。",
    },
    "lab.reshape.explain": {
        "en": "`view` never moves numbers; it only reads the same memory with a new shape. In memory the "
        "projection is token 0's d_model features, then token 1's, and so on. `view(B, L, H, d_k)` cuts "
        "each token into H slices, and `transpose(1, 2)` makes head h collect slice h of *every* token.\n\n"
        "`view(B, H, L, d_k)` instead reads the first L·d_k numbers as head 0: that is the first few tokens, "
        'whole, cut into d_k-sized pieces. Each "row" of a head is now a piece of some token, so the heads '
        "mix tokens and a row no longer means one token. The comparison with `nn.MultiheadAttention` "
        "(same weights) catches it at once: that is why the playground checks against PyTorch.",
        "zh": "`view` 从不移动数据，只是用新的形状去读同一块内存。内存里依次是词元 0 的 d_model 个特征、词元 1 "
        "的、……。"
        "`view(B, L, H, d_k)` 把每个词元切成 H 段，`transpose(1, 2)` 再让头 h 收集*每个*词元的第 h 段。\n\n"
        "而 `view(B, H, L, d_k)` 把最前面的 L·d_k 个数当作头 0：那是前几个完整的词元，被切成 d_k 大小的碎片。"
        "于是头里的每一“行”只是某个词元的一段，各个头把词元混在了一起，一行不再代表一个词元。"
        "与 `nn.MultiheadAttention`（相同权重）一比就露馅：这正是游乐场要和 PyTorch 对照的原因。",
    },
    "lab.reshape.toggle": {"en": "Split with view only (the bug)", "zh": "只用 view 切分（这个 bug）"},
    "lab.reshape.check_title": {
        "en": "Checked against nn.MultiheadAttention with the same weights",
        "zh": "与使用相同权重的 nn.MultiheadAttention 对照",
    },
    "lab.reshape.correct_check": {"en": "view + transpose (correct)", "zh": "view + transpose（正确）"},
    "lab.reshape.wrong_check": {"en": "view only (the bug)", "zh": "只用 view（bug）"},
    "lab.reshape.sources_title_bug": {
        "en": "What each head receives with view only",
        "zh": "只用 view 时，每个头拿到的是什么",
    },
    "lab.reshape.sources_title_ok": {
        "en": "What each head receives with view + transpose",
        "zh": "用 view + transpose 时，每个头拿到的是什么",
    },
    "lab.reshape.cell": {"en": "{index}:{token} ·{piece}", "zh": "{index}:{token} ·{piece}"},
    "lab.reshape.row_in_head": {"en": "row in the head", "zh": "头内的行"},
    "lab.reshape.source_token": {"en": "comes from token", "zh": "来自词元"},
    "lab.reshape.sources_caption": {
        "en": "Each cell: the token that fills this row of this head, and ·n: which of its d_model / d_k parts, "
        "counted from 0 (part n = features n·d_k … (n+1)·d_k − 1).",
        "zh": "每个格子：填入该头这一行的词元，·n 表示它的第几段，从 0 开始数（共 d_model / d_k 段；第 n 段 = 第 "
        "n·d_k … (n+1)·d_k − 1 个特征）。",
    },
    "lab.reshape.weights_title_bug": {"en": "The weights the bug computes", "zh": "这个 bug 算出的权重"},
    "lab.reshape.weights_title_ok": {"en": "The correct weights", "zh": "正确的权重"},
    "lab.reshape.row_query": {"en": "query row", "zh": "查询行"},
    "lab.reshape.row_key": {"en": "key row", "zh": "键行"},
    "lab.reshape.weights_caption_bug": {
        "en": "Rows and columns are numbered, not named: with the bug, row i of a head is not token i.",
        "zh": "行和列只标了编号而不是词元：有这个 bug 时，头的第 i 行并不是第 i 个词元。",
    },
    # ------------------------------------------------------------------ lab 4: mask translator
    "lab.masks.title": {"en": "Lab 4 · Mask translator", "zh": "实验 4 · 掩码翻译器"},
    "lab.masks.intro": {
        "en": 'A bool "mask" means opposite things in different places: True = may attend, or True = blocked. '
        "Build one mask, see it in all four spellings, and check that they give the same result — except "
        "where they do not.",
        "zh": "布尔“掩码”在不同的地方含义相反：True = 可以关注，或者 True = 屏蔽。构造一个掩码，看它的四种写法，"
        "验证结果是否相同——以及在哪里不同。",
    },
    "lab.masks.explain": {
        "en": "- **This engine** and `F.scaled_dot_product_attention`: a bool mask, **True = may attend**. "
        "The first tutorial reads its mask the same way: `scores.masked_fill(mask == 0, -inf)` blocks the "
        "zeros, so 1 = may attend.\n"
        "- `nn.MultiheadAttention`: a bool `attn_mask`, **True = blocked**, the opposite; pass `~keep`.\n"
        "- **The second tutorial** writes the causal mask as `torch.triu(torch.ones(L, L), diagonal=1).bool()` "
        "and applies it with `scores.masked_fill_(mask, -inf)`: **True = blocked**, like "
        "`nn.MultiheadAttention` and the opposite of the first tutorial.\n"
        "- **Additive**: a float mask added to the scores, 0 where allowed and −∞ where blocked; this engine, "
        "`F.scaled_dot_product_attention` and `nn.MultiheadAttention` all accept it.\n\n"
        "A row with *every* key blocked has no softmax to speak of: all scores are −∞, and "
        "exp(−∞) / Σ exp(−∞) = 0 / 0. What each implementation returns for such a row is measured below "
        "on this machine's PyTorch, not assumed: the tutorials' plain softmax gives NaN. This engine returns "
        "zero weights and a zero context on purpose (the output row is then just W_o's bias b_o).",
        "zh": "- **本引擎**和 `F.scaled_dot_product_attention`：布尔掩码，**True = 可以关注**。"
        "第一个教程的读法相同：`scores.masked_fill(mask == 0, -inf)` 屏蔽的是 0，所以 1 = 可以关注。\n"
        "- `nn.MultiheadAttention`：布尔 `attn_mask`，**True = 屏蔽**，含义相反；要传 `~keep`。\n"
        "- **第二个教程**把因果掩码写成 `torch.triu(torch.ones(L, L), diagonal=1).bool()`，"
        "再用 `scores.masked_fill_(mask, -inf)` 施加：**True = 屏蔽**，与 `nn.MultiheadAttention` 相同，"
        "与第一个教程相反。\n"
        "- **加性掩码**：加到分数上的浮点掩码，允许处为 0，屏蔽处为 −∞；本引擎、`F.scaled_dot_product_attention` "
        "和 `nn.MultiheadAttention` 都接受。\n\n"
        "如果一行的*所有*键都被屏蔽，softmax 就无从谈起：所有分数都是 −∞，exp(−∞) / Σ exp(−∞) = 0 / 0。"
        "下面在本机的 PyTorch 上实测每种实现对这样一行返回什么，而不是凭假设：教程里的普通 softmax 得到 NaN。"
        "本引擎有意返回全零的权重和全零的上下文（此时这一行的输出就是 W_o 的偏置 b_o）。",
    },
    "lab.masks.preset": {"en": "Start from", "zh": "从这个预设开始"},
    "lab.masks.preset.causal": {"en": "causal (no peeking ahead)", "zh": "因果（不能看后面）"},
    "lab.masks.preset.window": {"en": "sliding window (|i − j| ≤ w)", "zh": "滑动窗口掩码（|i − j| ≤ w）"},
    "lab.masks.preset.padding": {"en": "padding ([PAD] keys blocked)", "zh": "填充（屏蔽 [PAD] 键）"},
    "lab.masks.preset.none": {"en": "none (all allowed)", "zh": "无（全部允许）"},
    "lab.masks.preset.blocked_row": {
        "en": "causal + last row fully blocked",
        "zh": "因果 + 最后一行全部屏蔽",
    },
    "lab.masks.window": {"en": "Sliding window w", "zh": "滑动窗口 w"},
    "lab.masks.edit_title": {"en": "Your mask (click the cells)", "zh": "你的掩码（点击格子修改）"},
    "lab.masks.edit_caption": {
        "en": "Rows are queries, columns are keys; ticked = may attend. Untick a whole row to see a fully masked row.",
        "zh": "行是查询，列是键；勾选 = 可以关注。把一整行的勾都去掉，就得到一个完全被屏蔽的行。",
    },
    "lab.masks.forms_title": {"en": "The same mask, four spellings", "zh": "同一个掩码，四种写法"},
    "lab.masks.form.keep": {
        "en": "ours / F.sdpa / tutorial 1: True = may attend",
        "zh": "本引擎 / F.sdpa / 教程一：True = 可以关注",
    },
    "lab.masks.form.block": {
        "en": "nn.MultiheadAttention: True = blocked",
        "zh": "nn.MultiheadAttention：True = 屏蔽",
    },
    "lab.masks.form.tutorial2": {
        "en": "tutorial 2 (triu(...).bool()): True = blocked",
        "zh": "教程二（triu(...).bool()）：True = 屏蔽",
    },
    "lab.masks.form.additive": {"en": "additive: added to the scores", "zh": "加性：加到分数上"},
    "lab.masks.forms_caption": {
        "en": "T = True, F = False. Light cells may attend, dark cells are blocked: the same cells in all four; "
        "only the spelling differs. The table says who uses which spelling and how to translate: `keep` is "
        "the mask you ticked above.",
        "zh": "T = True，F = False。浅色格子可以关注，深色格子被屏蔽：四者的格子完全相同，只是写法不同。"
        "下表列出谁用哪种写法以及如何互相转换：`keep` 就是你在上面勾选的掩码。",
    },
    "lab.masks.col.spelling": {"en": "spelling", "zh": "写法"},
    "lab.masks.col.true_means": {"en": "True (or 1) means", "zh": "True（或 1）表示"},
    "lab.masks.col.make": {"en": "made from `keep`", "zh": "由 `keep` 得到"},
    "lab.masks.col.apply": {"en": "applied to the scores", "zh": "如何作用于分数"},
    "lab.masks.true_means.keep": {"en": "may attend", "zh": "可以关注"},
    "lab.masks.true_means.block": {"en": "blocked", "zh": "屏蔽"},
    "lab.masks.true_means.tutorial2": {"en": "blocked", "zh": "屏蔽"},
    "lab.masks.true_means.additive": {
        "en": "(a float: 0 = may attend, −∞ = blocked)",
        "zh": "（浮点数：0 = 可以关注，−∞ = 屏蔽）",
    },
    "lab.masks.triu_caption": {
        "en": "This is the causal mask: the second tutorial's `torch.triu(torch.ones(L, L), diagonal=1).bool()` "
        "is exactly `~keep` here (True above the diagonal = blocked).",
        "zh": "这是因果掩码：第二个教程的 `torch.triu(torch.ones(L, L), diagonal=1).bool()` "
        "在这里正好等于 `~keep`（对角线以上为 True = 屏蔽）。",
    },
    "lab.masks.runs_title": {"en": "Run with the same weights", "zh": "用相同的权重运行"},
    "lab.masks.col.implementation": {"en": "implementation", "zh": "实现"},
    "lab.masks.col.call": {"en": "mask passed", "zh": "传入的掩码"},
    "lab.masks.col.diff": {"en": "max |Δ| vs ours", "zh": "与本引擎的最大 |Δ|"},
    "lab.masks.col.masked_rows": {"en": "fully masked row gives", "zh": "完全屏蔽的行得到"},
    "lab.masks.impl.ours": {"en": "this engine", "zh": "本引擎"},
    "lab.masks.impl.sdpa": {"en": "F.scaled_dot_product_attention", "zh": "F.scaled_dot_product_attention"},
    "lab.masks.impl.torch_mha": {
        "en": "nn.MultiheadAttention, need_weights=True",
        "zh": "nn.MultiheadAttention，need_weights=True",
    },
    "lab.masks.impl.torch_mha_fast": {
        "en": "nn.MultiheadAttention, need_weights=False, eval",
        "zh": "nn.MultiheadAttention，need_weights=False，eval",
    },
    "lab.masks.impl.tutorial1": {
        "en": "tutorial 1: masked_fill(mask == 0, -inf), softmax",
        "zh": "教程一：masked_fill(mask == 0, -inf)，softmax",
    },
    "lab.masks.impl.tutorial2": {
        "en": "tutorial 2: masked_fill_(mask, -inf), softmax",
        "zh": "教程二：masked_fill_(mask, -inf)，softmax",
    },
    "lab.masks.passed.keep": {"en": "keep (True = may attend)", "zh": "keep（True = 可以关注）"},
    "lab.masks.passed.block": {"en": "~keep (True = blocked)", "zh": "~keep（True = 屏蔽）"},
    "lab.masks.passed.tutorial2": {"en": "~keep (True = blocked)", "zh": "~keep（True = 屏蔽）"},
    "lab.masks.passed.additive": {"en": "additive (0 / −∞)", "zh": "加性（0 / −∞）"},
    "lab.masks.row.nan": {"en": "NaN", "zh": "NaN"},
    "lab.masks.row.zero_context": {"en": "zero context (output = b_o)", "zh": "上下文全为 0（输出 = b_o）"},
    "lab.masks.row.values": {"en": "other numbers", "zh": "其他数值"},
    "lab.masks.empty_rows": {
        "en": "Fully masked query rows: {rows}. See the last column for what each implementation returns there.",
        "zh": "完全被屏蔽的查询行：{rows}。最后一列显示每种实现在这些行返回什么。",
    },
    "lab.masks.no_empty_rows": {
        "en": "No query row is fully masked. Choose the preset “causal + last row fully blocked”, or untick a whole "
        "row.",
        "zh": "没有完全被屏蔽的查询行。选择预设“因果 + 最后一行全部屏蔽”，或者去掉一整行的勾。",
    },
    "lab.masks.runs_caption": {
        "en": "Δ is measured on the rows that may attend to at least one key (d_model = 16, 2 heads). "
        "nn.MultiheadAttention runs different code depending on need_weights and eval mode, so both are shown. "
        "The tutorials' rows run their step 2 as written (masked_fill, then torch.softmax) between the same "
        "projections.",
        "zh": "Δ 只在至少能关注一个键的行上测量（d_model = 16，2 个头）。"
        "nn.MultiheadAttention 会根据 need_weights 和 eval 模式走不同的代码路径，所以两种都列出。"
        "教程的两行按教程原样执行第 2 步（先 masked_fill，再 torch.softmax），前后使用相同的投影。",
    },
    "lab.masks.weights_title": {"en": "This engine's weights with your mask", "zh": "本引擎在你的掩码下的权重"},
    "lab.masks.mixup.jump": {
        "en": "From the first tutorial? [Its two causal masks do not fit together](#{anchor}): the last section "
        "shows what they do.",
        "zh": "从第一个教程来？[它的两个因果掩码并不匹配](#{anchor})：最后一节展示它们放在一起会怎样。",
    },
    "lab.masks.mixup.title": {
        "en": "The first tutorial's two causal masks do not fit together",
        "zh": "第一个教程的两个因果掩码并不匹配",
    },
    "lab.masks.mixup.intro": {
        "en": "Section 5 of the first tutorial (the decoder) writes its causal mask as an **additive** mask; the "
        "`MultiHeadAttention` of its section 2 reads a mask as **1 = may attend**. Pass the one to the other, as "
        "the tutorial invites, and this is what runs: the tutorial's code as it writes it, with this lab's "
        "weights copied in (d_model = {d_model}, {heads} heads, your sentence and seed).",
        "zh": "第一个教程的第 5 节（解码器）把因果掩码写成**加性**掩码；它第 2 节的 `MultiHeadAttention` "
        "却把掩码读作 **1 = 可以关注**。像教程引导的那样把前者传给后者，运行的就是下面这些：教程原样的代码，"
        "载入本实验的权重（d_model = {d_model}，{heads} 个头，你的句子和随机种子）。",
    },
    "lab.masks.mixup.section5": {
        "en": "Section 5 builds the mask (0 on and below the diagonal, −∞ above):",
        "zh": "第 5 节构造掩码（对角线及以下为 0，对角线以上为 −∞）：",
    },
    "lab.masks.mixup.section2": {
        "en": "Section 2's module applies it (blocked where `mask == 0`):",
        "zh": "第 2 节的模块这样使用它（`mask == 0` 处被屏蔽）：",
    },
    "lab.masks.mixup.as_written": {"en": "as written, head {head}", "zh": "照原样，头 {head}"},
    "lab.masks.mixup.intended": {"en": "intended (causal), head {head}", "zh": "本意（因果），头 {head}"},
    "lab.masks.mixup.nan_legend": {"en": "NaN: not a number", "zh": "NaN：不是一个数"},
    "lab.masks.mixup.caption": {
        "en": "Rows are queries, columns are keys. Intended = this engine with the causal mask "
        "(`mha.masks.causal_mask`). The tutorial's code is kept as it writes it in "
        "`mha/experiments/tutorial_code.py`.",
        "zh": "行是查询，列是键。本意 = 本引擎加上因果掩码（`mha.masks.causal_mask`）。"
        "教程的代码原样保存在 `mha/experiments/tutorial_code.py` 中。",
    },
    "lab.masks.mixup.future_only": {
        "en": "Query rows {rows}: all their weight is on keys **after** the query, none on itself or before it: "
        "the causal staircase turned inside out.",
        "zh": "查询行 {rows}：全部权重都落在查询**之后**的键上，自身和之前的键一点也没有：因果阶梯整个翻了过来。",
    },
    "lab.masks.mixup.nan_rows": {
        "en": "**NaN** in query rows {rows}: no key comes after them, so their softmax runs over nothing but −∞ "
        "(0 / 0), with no error and no warning. This engine gives such a row zero weights, never NaN.",
        "zh": "查询行 {rows} 得到 **NaN**：它们之后没有键，softmax 的输入全是 −∞（0 / 0），既不报错也没有警告。"
        "本引擎对这样的行返回全零的权重，绝不返回 NaN。",
    },
    "lab.masks.mixup.why": {
        "en": "**Why:** the module reads 0 as “blocked” (`mask == 0`), and the additive mask writes 0 for "
        "“allowed”. So every allowed cell is blocked, and the −∞ cells, which are not 0, pass with their scores "
        "untouched.",
        "zh": "**原因**：模块把 0 读作“屏蔽”（`mask == 0`），加性掩码却用 0 表示“允许”。于是每个允许的格子都被屏蔽了，"
        "而那些 −∞ 的格子不等于 0，分数原封不动地通过。",
    },
    "lab.masks.mixup.fixes_title": {"en": "**Two correct fixes**", "zh": "**两种正确的改法**"},
    "lab.masks.mixup.fix.tril": {
        "en": "Keep section 2's module and give it the mask it reads (1 = may attend): in place of section 5's line,",
        "zh": "保留第 2 节的模块，给它能读懂的掩码（1 = 可以关注）：把第 5 节那一行换成",
    },
    "lab.masks.mixup.fix.additive": {
        "en": "Keep section 5's additive mask and add it to the scores, in place of section 2's `masked_fill`:",
        "zh": "保留第 5 节的加性掩码，把它加到分数上，代替第 2 节的 `masked_fill`：",
    },
    "lab.masks.mixup.fix_ok": {
        "en": "The same as this engine's causal attention: max |Δ| = {weights} on the weights, {output} on the "
        "outputs (≤ {tol}).",
        "zh": "与本引擎的因果注意力相同：权重的最大 |Δ| = {weights}，输出的最大 |Δ| = {output}（≤ {tol}）。",
    },
    "lab.masks.mixup.fix_bad": {
        "en": "Not the same as this engine's causal attention: max |Δ| = {weights} on the weights, {output} on the "
        "outputs (> {tol}).",
        "zh": "与本引擎的因果注意力不同：权重的最大 |Δ| = {weights}，输出的最大 |Δ| = {output}（> {tol}）。",
    },
    # ------------------------------------------------------------------ lab 5: loop vs fused
    "lab.loop.title": {"en": "Lab 5 · A loop over heads vs one fused layer", "zh": "实验 5 · 逐头循环 vs 一次融合计算"},
    "lab.loop.intro": {
        "en": "Multi-head attention is often written as a list of single heads run in a Python loop. "
        "This lab cuts our layer's weights into exactly such d_k-wide heads: the same function, so the outputs "
        "agree up to float32 rounding (the check below measures by how much). "
        "It also builds the second tutorial's version, whose heads are full width, and counts what that costs. "
        "Then it times them, here, on this server.",
        "zh": "多头注意力常被写成一个单头列表，在 Python 循环里逐个运行。"
        "本实验把我们这一层的权重切成正好这样的几个宽 d_k 的头：同一个函数，所以输出只差 float32 的舍入误差"
        "（下面的检查会测出差多少）。"
        "它还构造了第二个教程的写法——每个头都是满宽度的——并算出这样做的代价。然后在这台服务器上给它们计时。",
    },
    "lab.loop.explain": {
        "en": "Head h of the loop holds rows h·d_k … (h+1)·d_k − 1 of W_q, W_k and W_v: the same numbers the "
        "fused layer multiplies in one go. Concatenating the heads' outputs and applying W_o is the "
        "fused layer's steps 3 and 4. So the two compute the same function, and the difference is only "
        "*how*: h small matrix products in a Python loop, or one large batched product.\n\n"
        "The second tutorial's `nn.ModuleList([SelfAttention(embed_size) ...])` is a different layer: each "
        "head projects to the full d_model, so W_q, W_k and W_v are d_model × d_model *per head*, and the "
        "output layer takes h·d_model features. That is h times the projection parameters and about h times "
        "the work, for the same output width. Splitting d_model into h slices of d_k = d_model / h is what "
        "keeps multi-head attention as cheap as one head.\n\n"
        'Tutorials sometimes say matrices are "hundreds of times faster" than loops. The loop here runs '
        "over heads only; each head is still a matrix product. Press *Measure* and read the ratio this "
        "machine actually gives: it depends on h, d_model, L and the hardware, and it can even drop below 1.",
        "zh": "循环里的第 h 个头拿的是 W_q、W_k、W_v 的第 h·d_k … (h+1)·d_k − 1 行：正是融合层一次性相乘的那些数。"
        "把各头的输出拼接再乘以 W_o，就是融合层的第 3、4 步。所以两者计算的是同一个函数，区别只在*怎么算*："
        "在 Python 循环里做 h 次小矩阵乘法，还是做一次大的批量乘法。\n\n"
        "第二个教程的 `nn.ModuleList([SelfAttention(embed_size) ...])` 是另一种层：每个头都投影到完整的 d_model，"
        "所以*每个头*的 W_q、W_k、W_v 都是 d_model × d_model，输出层要接收 h·d_model 个特征。"
        "输出宽度不变，投影参数却是 h 倍，计算量也约为 h 倍。把 d_model 切成 h 段、每段 d_k = d_model / h，"
        "正是多头注意力和单头一样便宜的原因。\n\n"
        "有些教程说矩阵运算比循环“快几百倍”。这里的循环只遍历头，每个头本身仍是矩阵乘法。"
        "点击*测量*，看看这台机器实际给出的倍数：它取决于 h、d_model、L 和硬件，甚至可能小于 1。",
    },
    "lab.loop.loop_code": {
        "en": "**A loop over d_k-wide heads** (exactly the fused layer's parameters, cut up)",
        "zh": "**逐头循环，每个头宽 d_k**（参数正好是融合层的参数，切开而已）",
    },
    "lab.loop.full_width_code": {
        "en": "**The second tutorial: full-width heads** (each head d_model wide: h times the projection parameters)",
        "zh": "**第二个教程：满宽度的头**（每个头宽 d_model：投影参数是 h 倍）",
    },
    "lab.loop.fused_code": {"en": "**Fused** (this engine)", "zh": "**融合版**（本引擎）"},
    "lab.loop.equality_check": {
        "en": "The d_k-wide loop over heads against the fused layer, same weights, on a 16-token input:",
        "zh": "宽 d_k 的逐头循环与融合层对照（相同权重，16 个词元的输入）：",
    },
    "lab.loop.params_title": {"en": "Parameters", "zh": "参数量"},
    "lab.loop.col.variant": {"en": "layer", "zh": "层"},
    "lab.loop.col.params": {"en": "parameters", "zh": "参数量"},
    "lab.loop.col.formula": {"en": "formula", "zh": "公式"},
    "lab.loop.params_caption": {
        "en": "With h = {h} heads the full-width layer holds {ratio:.1f}× the parameters of the fused layer "
        "(d = d_model). Counted on the modules in the tests.",
        "zh": "h = {h} 个头时，满宽度的层的参数量是融合层的 {ratio:.1f} 倍（d = d_model）。"
        "测试中对模块实际计数核对过。",
    },
    "lab.loop.variant.fused": {"en": "fused (this engine)", "zh": "融合（本引擎）"},
    "lab.loop.variant.loop": {"en": "loop over d_k-wide heads", "zh": "逐头循环（宽 d_k）"},
    "lab.loop.variant.full_width": {"en": "full-width heads (tutorial 2)", "zh": "满宽度的头（教程二）"},
    "lab.loop.variant.torch_mha": {"en": "nn.MultiheadAttention", "zh": "nn.MultiheadAttention"},
    "lab.loop.timing_title": {"en": "Measured speed", "zh": "实测速度"},
    "lab.loop.timing_caption": {
        "en": "Self-attention on random inputs of length L = {lengths}, on this server's CPU.",
        "zh": "对长度 L = {lengths} 的随机输入做自注意力，在本服务器的 CPU 上测量。",
    },
    "lab.loop.press": {
        "en": "Press Measure to time the four versions (a few seconds).",
        "zh": "点击“测量”为四个版本计时（几秒钟）。",
    },
    "lab.loop.col.median": {"en": "{variant}, ms", "zh": "{variant}，毫秒"},
    "lab.loop.col.spread": {"en": "{variant}, ms", "zh": "{variant}，毫秒"},
    "lab.loop.spread_title": {
        "en": "Spread: the middle half of the timed rounds (25th to 75th percentile)",
        "zh": "离散程度：计时轮次的中间一半（第 25 到第 75 百分位）",
    },
    "lab.loop.col.ratio": {"en": "loop / fused", "zh": "循环 / 融合"},
    "lab.loop.summary": {
        "en": "Measured here with h = {h}: the d_k-wide loop took **{low:.2f}× to {high:.2f}×** the fused layer's "
        "median time (above 1 = the loop is slower).",
        "zh": "这里在 h = {h} 时测得：宽 d_k 的逐头循环所用的时间中位数是融合层的 **{low:.2f}× 到 {high:.2f}×**"
        "（大于 1 = 循环更慢）。",
    },
    "lab.loop.full_width_skipped": {
        "en": "— : the full-width layer is not timed where one call would cost more than 2 GFLOP: too heavy for a "
        "shared server.",
        "zh": "—：满宽度的层单次调用超过 2 GFLOP 时不计时：对共享服务器来说太重。",
    },
    "lab.loop.axis.length": {"en": "sequence length L", "zh": "序列长度 L"},
    "lab.loop.axis.ms": {"en": "milliseconds per call", "zh": "每次调用的毫秒数"},
    "lab.loop.chart_title": {"en": "Time per call", "zh": "每次调用的时间"},
    "lab.loop.chart_caption": {
        "en": "Both axes are logarithmic. Points are medians; the vertical bars span the middle half of the timed "
        "rounds (25th to 75th percentile).",
        "zh": "两个坐标轴都是对数刻度。点是中位数；竖条覆盖计时轮次的中间一半（第 25 到第 75 百分位）。",
    },
    # ------------------------------------------------------------------ lab 6: complexity
    "lab.complexity.title": {"en": "Lab 6 · What longer sequences cost", "zh": "实验 6 · 序列变长的代价"},
    "lab.complexity.intro": {
        "en": "Every query scores every key: L queries × L keys. Measure time and memory against L for full "
        "attention, block-local attention (Swin-style fixed blocks) computed block by block, and PyTorch's fused "
        "`F.scaled_dot_product_attention`.",
        "zh": "每个查询都要给每个键打分：L 个查询 × L 个键。针对完整注意力、"
        "逐块计算的分块局部注意力（Swin 风格的固定块）"
        "和 PyTorch 的融合实现 `F.scaled_dot_product_attention`，测量时间和内存随 L 的变化。",
    },
    "lab.complexity.explain": {
        "en": "**Full attention** builds an H × L × L score matrix: double L and it grows 4×, in time and in "
        "memory. That is the O(L²) of attention. This engine, computing without gradients as here, runs the "
        "softmax in the score matrix's own memory, so one H × L × L float32 tensor holds the scores and then the "
        "weights; its peak is 4 · H · L · (L + d_k) bytes, that tensor and the scaled queries (later the "
        "output). With gradients (training) the scores and the weights are two tensors.\n\n"
        "**Block-local attention** (as in the Swin Transformer) cuts the sequence into fixed blocks of b tokens "
        "and lets each token attend only inside its block. Computed block by block it holds H × L × b scores: "
        "linear in L for a fixed b. The price: tokens in different blocks never see each other in this layer. "
        "(This is not the main page's sliding *window* mask |i − j| ≤ w, which moves with each token; lab 10 "
        "shows Swin's own windows, squares of patches on an image.)\n\n"
        "**F.scaled_dot_product_attention** still computes all L × L scores (the same result as full attention), "
        "but its kernel works in tiles and never keeps the whole matrix: its time still grows like L², its "
        "memory far less. Memory here is the peak the PyTorch CPU allocator held during one call, read from "
        "the profiler; the measurement runs in a separate process, so the profiler's own log stays out of the "
        "server's.",
        "zh": "**完整注意力**要建立 H × L × L 的分数矩阵：L 翻倍，时间和内存都变成 4 倍。这就是注意力的 O(L²)。"
        "本引擎在不求梯度时（这里就是如此）直接在分数矩阵自己的内存里做 softmax，所以只有一个 H × L × L 的 "
        "float32 张量，先存分数、再存权重；峰值为 4 · H · L · (L + d_k) 字节，即这个张量加上缩放后的查询"
        "（之后是输出）。求梯度时（训练）分数和权重是两个张量。\n\n"
        "**分块局部注意力**（如 Swin Transformer）把序列切成每块 b 个词元的固定块，每个词元只在自己的块内关注。"
        "逐块计算时只需要 H × L × b 个分数：在 b 固定时与 L 成线性关系。代价是：不同块里的词元在这一层互相看不见。"
        "（它不是主页面上随每个词元移动的滑动*窗口*掩码 |i − j| ≤ w；实验 10 展示 Swin 自己的窗口："
        "图像上由图块组成的正方形。）\n\n"
        "**F.scaled_dot_product_attention** 仍然计算全部 L × L 个分数（结果与完整注意力相同），"
        "但它的内核分块（tile）计算，从不保存整个矩阵：时间仍按 L² 增长，内存却少得多。"
        "这里的内存是一次调用期间 PyTorch CPU 分配器占用的峰值，从性能分析器（profiler）读出；"
        "测量在单独的进程里进行，所以性能分析器自己的日志不会进入服务器日志。",
    },
    "lab.complexity.block": {"en": "Block size b", "zh": "块大小 b"},
    "lab.complexity.cap": {"en": "Measure live up to L =", "zh": "现场测量到 L ="},
    "lab.complexity.cap_note": {
        "en": "Live measurements stop at L = {cap}: this server is shared by a whole class, and full attention at "
        "L = {length} with your {heads} head(s) would hold one {heads} × {length} × {length} float32 tensor (the "
        "scores, then the weights in the same memory) per call: {big} at its peak with d_k = {d_k}. Longer "
        "lengths are estimated from the longest measured point (dashed lines), not measured.",
        "zh": "现场测量最多到 L = {cap}：这台服务器由全班共享，而按你选的 {heads} 个头，"
        "L = {length} 的完整注意力每次调用要占用一个 {heads} × {length} × {length} 的 float32 张量"
        "（先存分数，再在同一块内存里存权重）：d_k = {d_k} 时峰值为 {big}。更长的长度由测到的最长点推算（虚线），"
        "并非实测。",
    },
    "lab.complexity.press": {
        "en": "Press Measure to time the three methods at L = 16, 32, … up to your cap (a few seconds).",
        "zh": "点击“测量”，在 L = 16、32、……直到你设定的上限，为三种方法计时（几秒钟）。",
    },
    "lab.complexity.failed": {
        "en": "The measurement did not finish (the server may be overloaded). Try a lower cap or fewer rounds.",
        "zh": "测量没有完成（服务器可能负载过高）。请降低上限或减少计时轮数。",
    },
    "lab.complexity.method.full": {"en": "full (this engine)", "zh": "完整（本引擎）"},
    "lab.complexity.method.blocks": {"en": "block-local, blockwise", "zh": "分块局部，逐块"},
    "lab.complexity.method.sdpa": {"en": "F.scaled_dot_product_attention", "zh": "F.scaled_dot_product_attention"},
    "lab.complexity.method.L²": {"en": "∝ L² (reference)", "zh": "∝ L²（参考线）"},
    "lab.complexity.axis.length": {"en": "sequence length L", "zh": "序列长度 L"},
    "lab.complexity.axis.ms": {"en": "milliseconds per call", "zh": "每次调用的毫秒数"},
    "lab.complexity.axis.mib": {"en": "peak memory allocated (MiB)", "zh": "分配内存的峰值（MiB）"},
    "lab.complexity.chart.time": {"en": "Time", "zh": "时间"},
    "lab.complexity.chart.memory": {"en": "Memory", "zh": "内存"},
    "lab.complexity.chart_caption": {
        "en": "Both axes are logarithmic: a straight line of slope 2 is L², slope 1 is L. Solid = measured "
        "(points are medians, vertical bars the middle half of the rounds), dashed = estimated beyond the cap "
        "(and the L² reference).",
        "zh": "两个坐标轴都是对数刻度：斜率为 2 的直线是 L²，斜率为 1 是 L。"
        "实线 = 实测（点是中位数，竖条是中间一半的轮次），"
        "虚线 = 超过上限的推算值（以及 L² 参考线）。",
    },
    "lab.complexity.table_title": {"en": "All numbers", "zh": "全部数据"},
    "lab.complexity.col.method": {"en": "method", "zh": "方法"},
    "lab.complexity.col.ms": {"en": "ms per call (median)", "zh": "每次毫秒（中位数）"},
    "lab.complexity.col.spread": {"en": "ms, middle half", "zh": "毫秒，中间一半"},
    "lab.complexity.col.peak": {"en": "peak memory", "zh": "内存峰值"},
    "lab.complexity.col.formula": {"en": "peak (formula)", "zh": "峰值（公式）"},
    "lab.complexity.col.source": {"en": "source", "zh": "来源"},
    "lab.complexity.measured": {"en": "measured", "zh": "实测"},
    "lab.complexity.estimated": {"en": "estimated", "zh": "推算"},
    "lab.complexity.summary": {
        "en": "Full attention from L = {short} to L = {long} (2× longer): **{time_ratio:.1f}× the time** and "
        "**{memory_ratio:.1f}× the memory**, measured.",
        "zh": "完整注意力从 L = {short} 到 L = {long}（长 2 倍）：实测**时间为 {time_ratio:.1f} 倍**，"
        "**内存为 {memory_ratio:.1f} 倍**。",
    },
    "lab.complexity.next": {
        "en": "Past the L × L matrix: FlashAttention gives the same numbers (to rounding) without ever holding it "
        "(lab 13); linear attention changes the function and sparse attention skips blocks (lab 14): different "
        "bargains, measured on your tokens.",
        "zh": "越过 L × L 矩阵：FlashAttention 从不存下这个矩阵，得到的数却相同（只差舍入，实验 13）；"
        "线性注意力换掉了函数，稀疏注意力跳过一些块（实验 14）：不同的交换，在你的词元上测量。",
    },
    # ------------------------------------------------------------------ lab 7: cross-attention
    "lab.cross.title": {"en": "Lab 7 · Cross-attention", "zh": "实验 7 · 交叉注意力"},
    "lab.cross.intro": {
        "en": "In a translation model the sentence being written (queries) looks at the source sentence "
        "(keys and values). Two different token sequences: the score matrix is no longer square but **L_q × L_k**.",
        "zh": "在翻译模型里，正在生成的句子（查询）去看源句子（键和值）。两个不同的词元序列："
        "分数矩阵不再是方阵，而是 **L_q × L_k**。",
    },
    "lab.cross.explain": {
        "en": "Self-attention passes the same x as query, key and value. Cross-attention passes the decoder's "
        "tokens as the query and the encoder's tokens as key and value: Q = x_q W_q has L_q rows, "
        "K = x_kv W_k and V = x_kv W_v have L_k rows. So QKᵀ is L_q × L_k, each softmax row runs over the "
        "L_k source tokens, and the output has **one row per query token** (L_q), each a mix of source values.\n\n"
        "The weights here are random, not trained: do not read meaning into which word lights up. A "
        "trained translator would put 注意力 on “Attention”. `[PAD]` keys are masked out automatically.",
        "zh": "自注意力把同一个 x 同时作为查询、键和值。交叉注意力把解码器的词元作为查询、编码器的词元"
        "作为键和值："
        "Q = x_q W_q 有 L_q 行，K = x_kv W_k 和 V = x_kv W_v 有 L_k 行。于是 QKᵀ 是 L_q × L_k，"
        "每一行 softmax 在 L_k 个源词元上进行，输出**每个查询词元一行**（共 L_q 行），"
        "每行都是源句值向量的加权混合。\n\n"
        "这里的权重是随机的、未经训练：不要从哪个词亮起来解读含义。训练好的翻译模型会让“注意力”对准 “Attention”。"
        "`[PAD]` 键会被自动屏蔽。",
    },
    "lab.cross.query_text": {"en": "Queries: the sentence being written", "zh": "查询：正在生成的句子"},
    "lab.cross.key_text": {"en": "Keys and values: the source sentence", "zh": "键和值：源句子"},
    "lab.cross.shapes_title": {"en": "Shapes: L_q = {lq}, L_k = {lk}", "zh": "形状：L_q = {lq}，L_k = {lk}"},
    "lab.cross.col.tensor": {"en": "tensor", "zh": "张量"},
    "lab.cross.col.shape": {"en": "shape", "zh": "形状"},
    "lab.cross.col.dims": {"en": "dimensions", "zh": "各维含义"},
    "lab.cross.check": {
        "en": "Checked against nn.MultiheadAttention(query, key, value) with the same weights:",
        "zh": "与使用相同权重的 nn.MultiheadAttention(query, key, value) 对照：",
    },
    "lab.cross.padding": {
        "en": "The source sentence has [PAD] tokens: their columns are masked (weight 0).",
        "zh": "源句子里有 [PAD] 词元：它们所在的列被屏蔽（权重为 0）。",
    },
    "lab.cross.weights_title": {
        "en": "Weights: one row per query, one column per key",
        "zh": "权重：每个查询一行，每个键一列",
    },
    "lab.cross.axis.query": {"en": "query (being written)", "zh": "查询（正在生成）"},
    "lab.cross.axis.key": {"en": "key (source)", "zh": "键（源句）"},
    "lab.cross.caption": {
        "en": "Every row sums to 1 over the source tokens. Untrained random weights: the pattern has no meaning yet.",
        "zh": "每一行在源词元上的和为 1。未经训练的随机权重：这个图案还没有含义。",
    },
    # ------------------------------------------------------------------ lab 8: pattern sculpting
    "lab.sculpt.title": {"en": "Lab 8 · Sculpt attention heads by hand", "zh": "实验 8 · 手工构造注意力头"},
    "lab.sculpt.intro": {
        "en": "Tutorials show heads that attend to the token itself, to the previous token, to the first token, or "
        "evenly. Here four heads are *built* that way: W_q and W_k are written by hand, the input is nothing but "
        "the positional encodings. No training, no words: the weights alone make the patterns.",
        "zh": "教程里常见这样的头：关注自己、关注前一个词元、关注第一个词元，或者平均关注。"
        "这里直接*构造*出这四个头："
        "W_q 和 W_k 由手工写出，输入只有位置编码。没有训练，也没有词：图案完全由权重产生。",
    },
    "lab.sculpt.explain": {
        "en": "The sinusoidal encoding of position p holds pairs (sin ωp, cos ωp). Two facts do all the work:\n\n"
        "1. PE_i · PE_j = Σ cos(ω(i − j)) over the pairs: **largest when i = j**.\n"
        "2. Rotating every pair by the angle −ω turns PE_i into PE_(i−1): a rotation is a matrix.\n\n"
        "So: **itself** — W_q = W_k = “take the first d_k features”, and q_i·k_j peaks at j = i. "
        "**Previous token** — W_q also rotates one step back, so q_i = PE_(i−1) and the peak moves to j = i − 1. "
        "**First token** — W_q = 0 and the bias b_q = PE_0: every query asks the same question, “position 0?”. "
        "**Uniform** — W_q = 0 and b_q = 0: every score is 0 and the softmax spreads evenly.\n\n"
        "The sharpness multiplies W_q and b_q: larger scores, peakier softmax (Lab 1 in reverse). "
        "Position 0 has no previous token; with the causal mask it can only attend to itself.",
        "zh": "位置 p 的正弦位置编码由若干对 (sin ωp, cos ωp) 组成。两个事实就够了：\n\n"
        "1. PE_i · PE_j = 对所有频率求和 cos(ω(i − j))：**当 i = j 时最大**。\n"
        "2. 把每一对旋转角度 −ω，PE_i 就变成 PE_(i−1)：旋转就是一个矩阵。\n\n"
        "于是：**关注自己**——W_q = W_k = “取前 d_k 个特征”，q_i·k_j 在 j = i 处最大。"
        "**关注前一个词元**——W_q 再往回旋转一步，q_i = PE_(i−1)，峰值移到 j = i − 1。"
        "**关注第一个词元**——W_q = 0，偏置 b_q = PE_0：每个查询问的都是同一个问题，“是位置 0 吗？”。"
        "**平均关注**——W_q = 0 且 b_q = 0：所有分数都是 0，softmax 平均分配。\n\n"
        "锐度把 W_q 和 b_q 放大：分数越大，softmax 越尖锐（相当于反过来做实验 1）。"
        "位置 0 没有前一个词元；加上因果掩码后它只能关注自己。",
    },
    "lab.sculpt.length": {"en": "Positions L", "zh": "位置数 L"},
    "lab.sculpt.sharpness": {"en": "Sharpness (× W_q)", "zh": "锐度（× W_q）"},
    "lab.sculpt.sharpness_help": {
        "en": "Multiplies W_q and b_q. 0 makes every head uniform.",
        "zh": "放大 W_q 和 b_q。取 0 时每个头都变成平均关注。",
    },
    "lab.sculpt.causal": {"en": "Causal mask", "zh": "因果掩码"},
    "lab.sculpt.pattern.self": {"en": "itself (diagonal)", "zh": "关注自己（对角线）"},
    "lab.sculpt.pattern.previous": {"en": "previous token", "zh": "关注前一个词元"},
    "lab.sculpt.pattern.first": {"en": "first token", "zh": "关注第一个词元"},
    "lab.sculpt.pattern.uniform": {"en": "uniform", "zh": "平均关注"},
    "lab.sculpt.weights_title": {
        "en": "Four hand-built heads, input = positional encodings only",
        "zh": "四个手工构造的头，输入只有位置编码",
    },
    "lab.sculpt.axis.query": {"en": "query position", "zh": "查询位置"},
    "lab.sculpt.axis.key": {"en": "key position", "zh": "键位置"},
    "lab.sculpt.recipe_title": {"en": "The recipe: this head's W_q and W_k", "zh": "配方：这个头的 W_q 和 W_k"},
    "lab.sculpt.choose": {"en": "Head", "zh": "头"},
    "lab.sculpt.recipe.self": {
        "en": "W_q = sharpness × [I | 0], W_k = [I | 0]: both keep the first d_k features of PE, so "
        "q_i · k_j = sharpness × PE_i · PE_j, largest at j = i.",
        "zh": "W_q = 锐度 × [I | 0]，W_k = [I | 0]：两者都保留 PE 的前 d_k 个特征，所以 "
        "q_i · k_j = 锐度 × PE_i · PE_j，在 j = i 处最大。",
    },
    "lab.sculpt.recipe.previous": {
        "en": "W_q = sharpness × R(−1) [I | 0], W_k = [I | 0]: R(−1) rotates each (sin, cos) pair one position "
        "back (the 2 × 2 blocks on the diagonal), so q_i points at PE_(i−1).",
        "zh": "W_q = 锐度 × R(−1) [I | 0]，W_k = [I | 0]：R(−1) 把每一对 (sin, cos) 往回旋转一个位置"
        "（对角线上的 2 × 2 小块），于是 q_i 指向 PE_(i−1)。",
    },
    "lab.sculpt.recipe.first": {
        "en": "W_q = 0 and b_q = sharpness × PE_0 (printed below the matrices), W_k = [I | 0]: every query is the same "
        "vector, closest to key 0.",
        "zh": "W_q = 0，b_q = 锐度 × PE_0（数值见矩阵下方），W_k = [I | 0]：每个查询都是同一个向量，与键 0 最接近。",
    },
    "lab.sculpt.recipe.uniform": {
        "en": "W_q = 0 and b_q = 0: every query is the zero vector, every score is 0, every weight is 1/L.",
        "zh": "W_q = 0 且 b_q = 0：每个查询都是零向量，每个分数都是 0，每个权重都是 1/L。",
    },
    "lab.sculpt.panel.w_q": {"en": "W_q of this head (d_k × d_model)", "zh": "这个头的 W_q（d_k × d_model）"},
    "lab.sculpt.panel.w_k": {"en": "W_k of this head (d_k × d_model)", "zh": "这个头的 W_k（d_k × d_model）"},
    "lab.sculpt.axis.head_feature": {"en": "head feature", "zh": "头内特征"},
    "lab.sculpt.axis.pe_feature": {"en": "positional-encoding feature", "zh": "位置编码特征"},
    "lab.sculpt.axis.entry": {"en": "entry", "zh": "元素值"},
    "lab.sculpt.bias": {"en": "b_q = [{values}]", "zh": "b_q = [{values}]"},
    "lab.sculpt.matrix_caption": {
        "en": "d_model = {d_model}, 4 heads of d_k = {d_k}; each head reads only the first d_k features of the "
        "positional encoding (the fastest-turning pairs). W_v and W_o are the identity.",
        "zh": "d_model = {d_model}，4 个头，每个 d_k = {d_k}；每个头只读取位置编码的前 d_k 个特征（转得最快的几对）。"
        "W_v 和 W_o 都是单位矩阵。",
    },
    # ------------------------------------------------------------------ lab 9: encoder block
    "lab.encoder.title": {"en": "Lab 9 · Attention inside an encoder block", "zh": "实验 9 · 编码器层里的注意力"},
    "lab.encoder.intro": {
        "en": "Multi-head attention never works alone: a Transformer encoder layer wraps it with a residual "
        "connection, LayerNorm and a feed-forward network. See every step with its shape, where the "
        "parameters are, and check the block against `nn.TransformerEncoderLayer`.",
        "zh": "多头注意力从不单独工作：Transformer 编码器层用残差连接、LayerNorm 和前馈网络把它包起来。"
        "查看每一步及其形状、参数都在哪里，并与 `nn.TransformerEncoderLayer` 对照。",
    },
    "lab.encoder.explain": {
        "en": "**Residual**: each sublayer adds its output to its input (x + sublayer(x)), so information and "
        "gradients can flow straight through.\n\n"
        "**Post-Norm** (the original Transformer, BERT) normalises *after* adding: LayerNorm(x + sublayer(x)). "
        "**Pre-Norm** (GPT-2 and most recent models) normalises what goes *into* the sublayer: "
        "x + sublayer(LayerNorm(x)); the residual stream itself is never normalised inside the block, "
        "which makes deep stacks easier to train.\n\n"
        "**FFN**: two linear layers with an activation between them, applied to each token separately: "
        "d_model → d_ff → d_model. With d_ff = 4·d_model it holds about twice the parameters of the "
        "attention (8·d² against 4·d²).\n\n"
        "BERT-base: 12 heads, d_model 768, d_ff 3072, GELU, Post-Norm, 12 such layers.",
        "zh": "**残差**：每个子层把输出加回输入（x + sublayer(x)），信息和梯度可以直接流过。\n\n"
        "**Post-Norm**（原始 Transformer、BERT）在相加*之后*归一化：LayerNorm(x + sublayer(x))。"
        "**Pre-Norm**（GPT-2 及多数新模型）对*进入*子层的输入归一化：x + sublayer(LayerNorm(x))；"
        "残差流本身在层内从不被归一化，这让很深的网络更容易训练。\n\n"
        "**FFN**：两个线性层，中间一个激活函数，对每个词元单独作用：d_model → d_ff → d_model。"
        "当 d_ff = 4·d_model 时，它的参数约为注意力的两倍（8·d² 对 4·d²）。\n\n"
        "BERT-base：12 个头，d_model 768，d_ff 3072，GELU，Post-Norm，共 12 层这样的结构。",
    },
    "lab.encoder.preset": {"en": "Sizes", "zh": "尺寸"},
    "lab.encoder.preset.small": {"en": "small (64, 4 heads, 256)", "zh": "小（64，4 个头，256）"},
    "lab.encoder.preset.bert_base": {"en": "BERT-base (768, 12 heads, 3072)", "zh": "BERT-base（768，12 个头，3072）"},
    "lab.encoder.placement": {"en": "LayerNorm", "zh": "LayerNorm 的位置"},
    "lab.encoder.placement.post": {"en": "Post-Norm (after the residual)", "zh": "Post-Norm（残差之后）"},
    "lab.encoder.placement.pre": {"en": "Pre-Norm (before the sublayer)", "zh": "Pre-Norm（子层之前）"},
    "lab.encoder.activation": {"en": "FFN activation", "zh": "FFN 激活函数"},
    "lab.encoder.code.post": {
        "en": "x₁ = LayerNorm₁(x + MultiHeadAttention(x, x, x))\ny  = LayerNorm₂(x₁ + FFN(x₁))",
        "zh": "x₁ = LayerNorm₁(x + 多头注意力(x, x, x))\ny  = LayerNorm₂(x₁ + FFN(x₁))",
    },
    "lab.encoder.code.pre": {
        "en": "x₁ = x + MultiHeadAttention(LayerNorm₁(x))\ny  = x₁ + FFN(LayerNorm₂(x₁))",
        "zh": "x₁ = x + 多头注意力(LayerNorm₁(x))\ny  = x₁ + FFN(LayerNorm₂(x₁))",
    },
    "lab.encoder.params_title": {
        "en": "Parameters of one layer (d_model {d}, {h} heads, d_ff {d_ff})",
        "zh": "一层的参数（d_model {d}，{h} 个头，d_ff {d_ff}）",
    },
    "lab.encoder.part.attention": {"en": "attention: 4·d² + 4·d", "zh": "注意力：4·d² + 4·d"},
    "lab.encoder.part.ffn": {"en": "FFN: 2·d·d_ff + d_ff + d", "zh": "FFN：2·d·d_ff + d_ff + d"},
    "lab.encoder.part.layer_norms": {"en": "2 LayerNorms: 4·d", "zh": "2 个 LayerNorm：4·d"},
    "lab.encoder.axis.params": {"en": "parameters", "zh": "参数量"},
    "lab.encoder.metric.formula": {"en": "by the formulas", "zh": "按公式"},
    "lab.encoder.metric.ours": {"en": "counted in this block", "zh": "本模块实际计数"},
    "lab.encoder.metric.torch": {
        "en": "counted in nn.TransformerEncoderLayer",
        "zh": "nn.TransformerEncoderLayer 实际计数",
    },
    "lab.encoder.params_caption": {
        "en": "The feed-forward network holds {share:.0f}% of the layer; the attention {attention:,} parameters.",
        "zh": "前馈网络占这一层参数的 {share:.0f}%；注意力有 {attention:,} 个参数。",
    },
    "lab.encoder.bert_stack": {
        "en": "BERT-base stacks {layers} such layers: {total:,} parameters, plus its embeddings.",
        "zh": "BERT-base 堆叠了 {layers} 个这样的层：共 {total:,} 个参数，另加词嵌入。",
    },
    "lab.encoder.bert_differs": {
        "en": "BERT-base itself is Post-Norm with GELU; here you chose {placement} with {activation}, so this is "
        "BERT-base's size, not BERT-base's block.",
        "zh": "BERT-base 本身是 Post-Norm 加 GELU；这里你选择了 {placement} 和 {activation}，"
        "所以这只是 BERT-base 的尺寸，而不是 BERT-base 的结构。",
    },
    "lab.encoder.check": {
        "en": "Same weights copied into nn.TransformerEncoderLayer (dropout 0, eval):",
        "zh": "把相同的权重复制到 nn.TransformerEncoderLayer（dropout 0，eval）：",
    },
    "lab.encoder.steps_title": {"en": "Step by step", "zh": "逐步查看"},
    "lab.encoder.col.step": {"en": "step", "zh": "步骤"},
    "lab.encoder.col.formula": {"en": "computes", "zh": "计算"},
    "lab.encoder.col.shape": {"en": "shape [B, L, features]", "zh": "形状 [B, L, 特征]"},
    "lab.encoder.col.rms": {"en": "RMS of its numbers", "zh": "数值的均方根"},
    "lab.encoder.step.input": {"en": "input (embeddings + positions)", "zh": "输入（嵌入 + 位置）"},
    "lab.encoder.step.norm1": {"en": "LayerNorm₁", "zh": "LayerNorm₁"},
    "lab.encoder.step.attention": {"en": "multi-head attention", "zh": "多头注意力"},
    "lab.encoder.step.residual1": {"en": "residual: + attention", "zh": "残差：+ 注意力"},
    "lab.encoder.step.norm2": {"en": "LayerNorm₂", "zh": "LayerNorm₂"},
    "lab.encoder.step.ffn_hidden": {"en": "FFN hidden layer (d_ff wide)", "zh": "FFN 隐藏层（宽 d_ff）"},
    "lab.encoder.step.ffn": {"en": "FFN output", "zh": "FFN 输出"},
    "lab.encoder.step.residual2": {"en": "residual: + FFN", "zh": "残差：+ FFN"},
    "lab.encoder.steps_caption.post": {
        "en": "Post-Norm: the block ends with a LayerNorm, which brings each token's numbers to mean 0 and "
        "variance 1, then multiplies them by its weight γ and adds its bias β. Here γ = 1 and β = 0, as "
        "`nn.LayerNorm` starts, so the output has RMS ≈ 1; a trained γ and β give it another scale.",
        "zh": "Post-Norm：这一层以 LayerNorm 结尾：它先把每个词元的数值变成均值 0、方差 1，再乘以权重 γ、加上偏置 β。"
        "这里 γ = 1、β = 0（`nn.LayerNorm` 的初始值），所以输出的均方根约等于 1；训练后的 γ 和 β 会给出别的尺度。",
    },
    "lab.encoder.steps_caption.pre": {
        "en": "Pre-Norm: the block ends with a residual sum, not a LayerNorm: stacked layers keep adding to the same "
        "stream.",
        "zh": "Pre-Norm：这一层以残差相加结尾，而不是 LayerNorm：多层堆叠时不断往同一条残差流里累加。",
    },
}
