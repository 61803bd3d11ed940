"""Messages of "Check yourself": each step's questions, their options, verdicts and worked answers, the progress,
and the room (a teacher's slide of the room's answers, a learner's room)."""

MESSAGES: dict[str, dict[str, str]] = {
    "quiz.title": {"en": "Check yourself", "zh": "自我检测"},
    "quiz.intro": {
        "en": "Answers are computed from this page's own run: change a control and the questions change.",
        "zh": "答案由本页这次运行算出：改动控件，题目随之改变。",
    },
    "quiz.answer": {"en": "Your answer", "zh": "你的答案"},
    "quiz.right": {"en": "✓ Right.", "zh": "✓ 答对了。"},
    "quiz.wrong": {"en": "✗ Not quite. {worked}", "zh": "✗ 不对。{worked}"},
    "quiz.too_long": {
        "en": "That answer is longer than {limit} characters: it was not read.",
        "zh": "答案超过 {limit} 个字符，未读取。",
    },
    "quiz.unreadable.shape": {
        "en": "Could not read that as a shape like [1, 8, 11, 64].",
        "zh": "无法读成形状，请写成 [1, 8, 11, 64] 这样的形式。",
    },
    "quiz.unreadable.number": {
        "en": "Could not read that as a number like 787,968 or 0.125 (1/8 works too).",
        "zh": "无法读成数字，请写成 787,968 或 0.125 这样的形式（也可写 1/8）。",
    },
    "quiz.unreadable.token": {
        "en": "Could not read that as a token: give its index (0 .. {last}) or its text.",
        "zh": "无法读成词元：请写它的序号（0 .. {last}）或它的文字。",
    },
    "quiz.progress": {
        "en": "This step: {step_right} of {step_total} right · in all: {right} of {total}",
        "zh": "本步：答对 {step_right} / {step_total} 题 · 总计：{right} / {total}",
    },
    "quiz.predict": {"en": "Predict, then see", "zh": "先预测，再查看"},
    "quiz.predict_help": {
        "en": "Hide this step's chart until you have answered its question.",
        "zh": "回答本步的题目之前先隐藏图表。",
    },
    "quiz.predict_hidden": {
        "en": "The chart stays hidden until you answer the question about it.",
        "zh": "回答相关题目之前，图表保持隐藏。",
    },
    # step 1
    "quiz.1.wq_params": {
        "en": "How many parameters does `W_q` hold (weights and biases) with d_model = {d}?",
        "zh": "d_model = {d} 时，`W_q` 有多少个参数（权重加偏置）？",
    },
    "quiz.1.wq_params_no_bias": {
        "en": "How many parameters does `W_q` hold (weights only: this layer has no biases) with d_model = {d}?",
        "zh": "d_model = {d} 时，`W_q` 有多少个参数（只有权重：这一层没有偏置）？",
    },
    "quiz.1.k_shape": {
        "en": "What shape does K have after `k.view({args}).transpose(1, 2)` ({kv} key/value heads for {h} query "
        "heads)?",
        "zh": "执行 `k.view({args}).transpose(1, 2)` 之后 K 的形状是什么（{kv} 个 K/V 头对应 {h} 个查询头）？",
    },
    "quiz.1.layer_params": {
        "en": "How many parameters does the whole layer hold (`W_q`, `W_k`, `W_v`, `W_o`)?",
        "zh": "整层（`W_q`、`W_k`、`W_v`、`W_o`）共有多少个参数？",
    },
    # step 1b
    "quiz.1b.kv_head": {
        "en": "With {heads} query heads and {kv} key/value heads, which key/value head does query head {h} read?",
        "zh": "{heads} 个查询头、{kv} 个 K/V 头时，查询头 {h} 读取哪个 K/V 头？",
    },
    "quiz.1b.wk_params": {
        "en": "How many parameters does `W_k` hold with {kv} key/value heads of d_k = {d_k}?",
        "zh": "{kv} 个 K/V 头、d_k = {d_k} 时，`W_k` 有多少个参数？",
    },
    "quiz.1b.rope_pairs": {
        "en": "RoPE turns each head's vector of d_k = {d_k} numbers in pairs. How many pairs per head?",
        "zh": "RoPE 把每个头 d_k = {d_k} 维的向量两两配对旋转。每个头有多少对？",
    },
    "quiz.1b.rope_what": {"en": "What does RoPE turn?", "zh": "RoPE 旋转的是什么？"},
    "quiz.1b.rope_what.qk": {"en": "q and k, by their positions", "zh": "按位置旋转 q 和 k"},
    "quiz.1b.rope_what.v": {"en": "v, by its position", "zh": "按位置旋转 v"},
    "quiz.1b.rope_what.x": {"en": "the input x, before `W_q`", "zh": "`W_q` 之前的输入 x"},
    # step 2
    "quiz.2.scale": {
        "en": "The scores are multiplied by 1/√d_k. What is that number here (d_k = {d_k})?",
        "zh": "分数要乘以 1/√d_k。这里（d_k = {d_k}）这个数是多少？",
    },
    "quiz.2.weights_shape": {
        "en": "What shape do the attention weights have?",
        "zh": "注意力权重的形状是什么？",
    },
    "quiz.2.top_key": {
        "en": "In head {head}, which key does token {row} ({token}) weigh most? (its index or its text; the chart "
        "above shows it)",
        "zh": "在头 {head} 中，词元 {row}（{token}）权重最大的是哪个键？（写序号或文字；上面的图可以看到）",
    },
    "quiz.2.why_scale": {"en": "Why divide the scores by √d_k?", "zh": "为什么要把分数除以 √d_k？"},
    "quiz.2.why_scale.sum": {"en": "So that each row of weights sums to 1", "zh": "让每行权重之和为 1"},
    "quiz.2.why_scale.spread": {
        "en": "If q and k have independent entries of mean 0 and variance 1, q·k (a sum of d_k products) has "
        "variance d_k; dividing by √d_k brings it back to 1. Unscaled, the softmax tends to put nearly all of a "
        "row's weight on one key, where its gradients are tiny",
        "zh": "若 q 和 k 的各分量相互独立、均值为 0、方差为 1，则 q·k（d_k 个乘积之和）的方差为 d_k；除以 √d_k "
        "使方差回到 1。不缩放时 softmax 往往把一行几乎全部的权重给一个键，那里的梯度很小",
    },
    "quiz.2.why_scale.memory": {"en": "To save memory", "zh": "为了节省内存"},
    "quiz.2.why_mask": {"en": "What does the causal mask remove?", "zh": "因果掩码去掉了什么？"},
    "quiz.2.why_mask.pad": {"en": "The padding tokens", "zh": "填充词元"},
    "quiz.2.why_mask.future": {
        "en": "Every key after the query's own position (the future)",
        "zh": "查询自身位置之后的所有键（未来）",
    },
    "quiz.2.why_mask.self": {"en": "Each token's own key", "zh": "每个词元自己的键"},
    # step 3
    "quiz.3.concat_shape": {
        "en": "What shape do the heads have once put side by side again (`transpose(1, 2).contiguous().view(...)`)?",
        "zh": "各头重新并排之后（`transpose(1, 2).contiguous().view(...)`）的形状是什么？",
    },
    "quiz.3.why_contiguous": {
        "en": "Why `.contiguous()` before `.view(...)`?",
        "zh": "为什么在 `.view(...)` 之前要调用 `.contiguous()`？",
    },
    "quiz.3.why_contiguous.speed": {"en": "It makes the matmul faster", "zh": "它让矩阵乘法更快"},
    "quiz.3.why_contiguous.copy": {
        "en": "It keeps the heads apart in memory",
        "zh": "它让各头在内存中保持分开",
    },
    "quiz.3.why_contiguous.view": {
        "en": "`transpose` only changes the strides; `view` needs the numbers in row order, which `.contiguous()` "
        "copies them into",
        "zh": "`transpose` 只改变步长；`view` 需要按行顺序存放的数，`.contiguous()` 把它们复制成这种顺序",
    },
    # step 4
    "quiz.4.wo_params": {"en": "How many parameters does `W_o` hold?", "zh": "`W_o` 有多少个参数？"},
    "quiz.4.output_shape": {"en": "What shape does the layer's output have?", "zh": "这一层输出的形状是什么？"},
    "quiz.4.double_heads": {
        "en": "The layer holds {now} parameters with {heads} heads. How many with {doubled} heads (same d_model; "
        "a layer with fewer key/value heads keeps their number)? Answer, then try it with the heads control.",
        "zh": "这一层在 {heads} 个头时有 {now} 个参数。改成 {doubled} 个头"
        "（d_model 不变；K/V 头较少的层保持其数目）时有多少？先回答，再用头数控件试试。",
    },
    "quiz.4.double_heads_locked": {
        "en": "The layer holds {now} parameters with {heads} heads. How many would it hold with {doubled} heads "
        "(same d_model; a layer with fewer key/value heads keeps their number)?",
        "zh": "这一层在 {heads} 个头时有 {now} 个参数。如果改成 {doubled} 个头"
        "（d_model 不变；K/V 头较少的层保持其数目），会有多少？",
    },
    # the model (trained here, a checkpoint)
    "quiz.model.previous_head": {
        "en": "Which head of layer {layer} puts the most weight on the previous token (averaged over the rows)?",
        "zh": "第 {layer} 层中，哪个头平均给前一个词元的权重最大？",
    },
    "quiz.model.kv_cache_bytes": {
        "en": "A KV cache keeps K and V of every layer for each token. How many bytes per token in bfloat16 here "
        "({layers} layers, {kv} key/value heads of d_k = {d_k})?",
        "zh": "KV 缓存为每个词元保存每一层的 K 和 V。这里用 bfloat16 时每个词元占多少字节"
        "（{layers} 层，{kv} 个 K/V 头，d_k = {d_k}）？",
    },
    "quiz.worked.previous_head": {
        "en": "The head that gives the previous token the most, on average {share} of a row's weight: head {head}",
        "zh": "平均给前一个词元权重最多（每行平均 {share}）的是：头 {head}",
    },
    # the generation (a causal checkpoint's KV cache)
    "quiz.gen.cache_shape": {
        "en": "After the last step (step {step}, the row of “{token}” at position {position}), what shape do this "
        "layer's cached K and V each have?",
        "zh": "最后一步（第 {step} 步，位置 {position} 上“{token}”那一行）之后，这一层缓存的 K 和 V 各是什么形状？",
    },
    "quiz.gen.top_key": {
        "en": "At the last step (step {step}), which of the t = {t} cached keys does head {head} weigh most? (its "
        "index or its text; the step chart shows it with the slider on step {step})",
        "zh": "在最后一步（第 {step} 步），头 {head} 在 t = {t} 个缓存的键中权重最大的是哪个？（写序号或文字；"
        "滑块移到第 {step} 步时，这一步的图可以看到）",
    },
    "quiz.gen.cache_bytes": {
        "en": "How many bytes would the whole KV cache (every layer) take in bfloat16, 2 bytes a number, for this "
        "text's {t} tokens ({layers} layers, {kv} key/value heads of d_k = {d_k})?",
        "zh": "若用 bfloat16（每个数 2 字节），这段文本的 {t} 个词元的整个 KV 缓存（所有层）占多少字节"
        "（{layers} 层，{kv} 个 K/V 头，d_k = {d_k}）？",
    },
    "quiz.gen.why_cache": {
        "en": "Why can each step reuse the cached keys and values instead of recomputing them?",
        "zh": "为什么每一步可以复用缓存的键和值，而不必重新计算？",
    },
    "quiz.gen.why_cache.weights": {
        "en": "Because the weights W_k and W_v are the same at every step",
        "zh": "因为 W_k 和 W_v 在每一步都相同",
    },
    "quiz.gen.why_cache.causal": {
        "en": "Under the causal mask a token's keys and values depend only on it and the tokens before it: a new "
        "token changes none of the earlier ones",
        "zh": "在因果掩码下，一个词元的键和值只取决于它自己和它之前的词元：新的词元不会改变之前任何一个",
    },
    "quiz.gen.why_cache.stored": {
        "en": "Because the cache keeps the attention weights, which do not change",
        "zh": "因为缓存保存的是注意力权重，而权重不会变",
    },
    "quiz.worked.why_cache": {
        "en": "No earlier row may read a later token, so every layer's input at an earlier position, and its k and v, "
        "stay as they were: a step computes the new token's k and v only and appends them ({kv} of each per layer, "
        "one per K/V head). The same W_k and W_v alone would not do: without the causal mask the inputs they multiply "
        "would change.",
        "zh": "前面的行不能读取后面的词元，所以每一层在较早位置上的输入以及它的 k 和 v 都保持不变：每一步只计算新词元的"
        "k 和 v 并追加（每层各 {kv} 个，每个 K/V 头一个）。仅靠相同的 W_k 和 W_v 不够："
        "没有因果掩码，它们所乘的输入就会变。",
    },
    # a model trained here
    "quiz.trained.relation_key": {
        "en": "The task's rule “{relation}”: from row {row} ({token}), which key does it point at? (its position, "
        "0 .. {last})",
        "zh": "任务的规则“{relation}”：从第 {row} 行（{token}）出发，它指向哪个键？（写它的位置，0 .. {last}）",
    },
    "quiz.worked.relation_key": {
        "en": "The rule points at the token “{token}” in position {index}; head {head}, which reads the rule most, "
        "puts {weight} of the row's weight there: key {index}",
        "zh": "规则指向位置 {index} 上的词元“{token}”；最常读取这条规则的头 {head} 在那里放了这一行 {weight} 的权重："
        "键 {index}",
    },
    "quiz.trained.relation_head": {
        "en": "On this trained model, which head of layer {layer} puts the most weight on “{relation}” (averaged "
        "over the rows the training looked at)?",
        "zh": "在这个训练好的模型上，第 {layer} 层哪个头给“{relation}”的权重最大（对训练看过的行取平均）？",
    },
    "quiz.worked.relation_head": {
        "en": "The head with the largest mean share there, {share} of a row's weight: head {head}",
        "zh": "在那里平均份额最大（每行 {share}）的是：头 {head}",
    },
    "quiz.trained.faded": {
        "en": "Some rows of this trained model's charts are faded. Why?",
        "zh": "这个训练好的模型的图里，有些行是淡的。为什么？",
    },
    "quiz.trained.faded.mask": {"en": "The mask hides them", "zh": "掩码把它们遮住了"},
    "quiz.trained.faded.loss": {
        "en": "The training loss never looked at their outputs: their weights are whatever training left",
        "zh": "训练的损失从未看过它们的输出：它们的权重是训练留下的任意值",
    },
    "quiz.trained.faded.pad": {"en": "They are padding tokens", "zh": "它们是填充词元"},
    "quiz.worked.faded": {
        "en": "The task has no target at {count} row(s) here ({rows}): nothing trained their weights.",
        "zh": "这里有 {count} 行（{rows}）没有任务目标：没有任何训练约束它们的权重。",
    },
    "quiz.trained.digit": {
        "en": "Which digit does the model read this image as?",
        "zh": "模型把这张图读成哪个数字？",
    },
    "quiz.worked.digit": {
        "en": "Its readout of [CLS] gives {percent} % to: {digit}",
        "zh": "它对 [CLS] 的读出给了 {percent} %：{digit}",
    },
    "quiz.trained.review": {
        "en": "How does the model read this sentence?",
        "zh": "模型怎样理解这句话？",
    },
    "quiz.trained.review.negative": {"en": "negative", "zh": "负面"},
    "quiz.trained.review.positive": {"en": "positive", "zh": "正面"},
    "quiz.worked.review": {
        "en": "Its readout of [CLS] says {label} with {percent} %.",
        "zh": "它对 [CLS] 的读出给出{label}，概率 {percent} %。",
    },
    "quiz.trained.patches": {
        "en": "The {size} × {size} digit is cut into {patch} × {patch} patches. How many tokens does this layer read, "
        "[CLS] included?",
        "zh": "这个 {size} × {size} 的数字被切成 {patch} × {patch} 的图块。这一层读入多少个词元（含 [CLS]）？",
    },
    "quiz.trained.cls_top": {
        "en": "The answer is read from {token}'s row. In head {head}, which token does that row weigh most? (its "
        "index or its text)",
        "zh": "答案从 {token} 那一行读出。在头 {head} 中，那一行权重最大的是哪个词元？（写序号或文字）",
    },
    # the labs
    "quiz.intro_lab": {
        "en": "Answers are computed from this lab's own numbers: change a control and the questions change.",
        "zh": "答案由本实验自己的数字算出：改动控件，题目随之改变。",
    },
    "quiz.lab1.variance": {
        "en": "If q and k have independent entries of mean 0 and variance 1, what variance does q·k have at "
        "d_k = {d_k}?",
        "zh": "若 q 和 k 的各分量相互独立、均值为 0、方差为 1，d_k = {d_k} 时 q·k 的方差是多少？",
    },
    "quiz.worked.lab1.variance": {
        "en": "q·k sums d_k products of variance 1: measured here {measured}; in theory d_k = {d_k}",
        "zh": "q·k 是 d_k 个方差为 1 的乘积之和：这里测得 {measured}；理论值 d_k = {d_k}",
    },
    "quiz.lab1.multiplier": {
        "en": "With the scaling “{mode}” at d_k = {d_k}, what number are the scores q·k multiplied by?",
        "zh": "缩放方式为“{mode}”、d_k = {d_k} 时，分数 q·k 要乘以多少？",
    },
    "quiz.lab1.sharper": {
        "en": "At d_k = {d_k}, which scaling gives the larger mean largest weight of a row (a sharper softmax)?",
        "zh": "d_k = {d_k} 时，哪种缩放让每行最大权重的平均值更大（softmax 更尖锐）？",
    },
    "quiz.lab1.sharper.scaled": {"en": "scaled by 1/√d_k", "zh": "乘以 1/√d_k"},
    "quiz.lab1.sharper.unscaled": {"en": "unscaled", "zh": "不缩放"},
    "quiz.worked.lab1.sharper": {
        "en": "Mean largest weight of a row here: scaled {scaled}, unscaled {unscaled}.",
        "zh": "这里每行最大权重的平均值：缩放 {scaled}，不缩放 {unscaled}。",
    },
    "quiz.lab2.params": {
        "en": "With d_model = {d}, how many parameters does the layer hold with h = {h} heads?",
        "zh": "d_model = {d} 时，h = {h} 个头的层有多少个参数？",
    },
    "quiz.worked.lab2.params": {
        "en": "The same for every h: the heads split d_model, they add no weights. {text}",
        "zh": "对每个 h 都相同：头只是切分 d_model，不增加权重。{text}",
    },
    "quiz.lab2.maps": {
        "en": "How many attention weights does the layer compute with h = {h} heads on these {length} tokens?",
        "zh": "在这 {length} 个词元上，h = {h} 个头的层共计算多少个注意力权重？",
    },
    "quiz.lab2.d_k": {
        "en": "With d_model = {d} and h = {h} heads, how many numbers does each head's q have per token (d_k)?",
        "zh": "d_model = {d}、h = {h} 个头时，每个头的 q 对每个词元有多少个数（d_k）？",
    },
    "quiz.lab3.source": {
        "en": "With the bug (`q.view(B, H, L, d_k)`, no transpose), row 0 of head {head} is filled from which token? "
        "(its index or its text; the table above shows it with the bug switched on)",
        "zh": "有这个错误时（`q.view(B, H, L, d_k)`，没有转置），头 {head} 的第 0 行来自哪个词元？"
        "（写序号或文字；打开错误开关时上面的表可以看到）",
    },
    "quiz.worked.lab3.source": {
        "en": "Row 0 of head {head} is row n = h·L + i = {flat} of the flat (H·L) rows, which is token n // H, slice "
        "n % H = {piece} (H = {h}): {token}, token {index}",
        "zh": "头 {head} 的第 0 行是展平后 (H·L) 行中的第 n = h·L + i = {flat} 行，即词元 n // H、切片 n % H = {piece}"
        "（H = {h}）：{token}，词元 {index}",
    },
    "quiz.lab3.shape": {
        "en": "What shape does q have after `q.view(B, L, H, d_k).transpose(1, 2)` here ({length} tokens, {heads} "
        "heads of d_k = {d_k})?",
        "zh": "这里（{length} 个词元，{heads} 个头，d_k = {d_k}）执行 `q.view(B, L, H, d_k).transpose(1, 2)` 之后 q 的"
        "形状是什么？",
    },
    "quiz.lab4.row_keys": {
        "en": "With your mask, how many keys may the last row ({row}: {token}) attend to?",
        "zh": "按你的掩码，最后一行（{row}：{token}）可以关注多少个键？",
    },
    "quiz.worked.lab4.row_keys": {
        "en": "Count the ticked cells of that row in the mask: {count}",
        "zh": "数一数掩码中这一行勾选的格子：{count}",
    },
    "quiz.lab4.empty_rows": {
        "en": "How many rows of your mask keep no key at all (fully masked rows)?",
        "zh": "你的掩码中有多少行一个键都没有保留（整行被屏蔽）？",
    },
    "quiz.worked.lab4.empty_rows": {
        "en": "Rows with no ticked cell: {count}",
        "zh": "一个格子都没勾选的行数：{count}",
    },
    "quiz.lab4.torch_true": {
        "en": "In the boolean `attn_mask` of `nn.MultiheadAttention`, what does `True` mean?",
        "zh": "在 `nn.MultiheadAttention` 的布尔 `attn_mask` 中，`True` 表示什么？",
    },
    "quiz.lab4.torch_true.attend": {"en": "this key may be attended to", "zh": "可以关注这个键"},
    "quiz.lab4.torch_true.block": {"en": "this key is blocked", "zh": "这个键被屏蔽"},
    "quiz.worked.lab4.torch_true": {
        "en": "PyTorch's boolean mask is the opposite of ours: `True` blocks (`mask = ~keep`, the table above).",
        "zh": "PyTorch 的布尔掩码与我们的相反：`True` 表示屏蔽（`mask = ~keep`，见上表）。",
    },
    # worked answers
    "quiz.worked.formula": {"en": "{text}", "zh": "{text}"},
    "quiz.worked.top_key": {
        "en": "The largest weight in that row, {weight}, is on {token}: key {index}",
        "zh": "这一行最大的权重 {weight} 在 {token} 上：键 {index}",
    },
    "quiz.worked.rope_what": {
        "en": "q and k are turned by their positions m and n, so the angle the rotation puts between them depends "
        "only on their offset m − n, not on where they are (q·k also depends on the two vectors); v is not turned.",
        "zh": "q 和 k 按各自的位置 m 和 n 旋转，因此旋转在两者之间造成的角度只取决于位置差 m − n，与它们所在的位置"
        "无关（q·k 还取决于这两个向量本身）；v 不旋转。",
    },
    "quiz.worked.why_scale": {
        "en": "Here the raw scores' standard deviation is {raw}; divided by √d_k = √{d_k} it is {scaled}. The larger "
        "the spread, the closer the softmax comes to putting a whole row's weight on one key.",
        "zh": "这里原始分数的标准差是 {raw}；除以 √d_k = √{d_k} 后是 {scaled}。离散程度越大，softmax 越接近把"
        "一整行的权重都给一个键。",
    },
    "quiz.worked.why_mask": {
        "en": "Row i keeps keys 0 .. i: a token may not read the tokens after it.",
        "zh": "第 i 行只保留键 0 .. i：词元不能读取它之后的词元。",
    },
    "quiz.worked.why_contiguous": {
        "en": "After `transpose` the tensor is a strided view; `.contiguous()` copies it into row order for `view`.",
        "zh": "`transpose` 之后张量是按步长读取的视图；`.contiguous()` 把它复制成按行顺序，供 `view` 使用。",
    },
    "quiz.worked.double_heads": {
        "en": "W_q and W_o stay d × d; only W_k and W_v can change, as d_k becomes {d_k} (with as many key/value "
        "heads as heads, none changes). Now {now}, then {doubled}",
        "zh": "W_q 与 W_o 仍是 d × d；只有 W_k、W_v 可能随 d_k 变为 {d_k} 而改变（K/V 头数与头数相同时都不变）。"
        "现在 {now}，之后 {doubled}",
    },
    # the room
    "teacher.slide.room": {"en": "The room's answers", "zh": "全场的回答"},
    "room.title": {"en": "The room's answers", "zh": "全场的回答"},
    "room.open": {"en": "Open a room", "zh": "开设房间"},
    "room.link": {"en": "Learners open this link:", "zh": "学员请打开这个链接："},
    "room.code": {"en": "Room `{code}`", "zh": "房间 `{code}`"},
    "room.counts": {
        "en": "{question}: {answered} answered, {right} right",
        "zh": "{question}：{answered} 人作答，{right} 人答对",
    },
    "room.settings_note": {
        "en": "The counts are for the questions as the learners' link asks them (its sizes and sentence): a learner "
        "who changes a control answers other numbers under the same question.",
        "zh": "这些计数针对学员链接（其中的尺寸和句子）所出的题目：改动了控件的学员，在同一道题下回答的是另一组数字。",
    },
    "room.none_yet": {"en": "No answers yet.", "zh": "尚无回答。"},
    "room.joined": {"en": "You answer into room `{code}`.", "zh": "你的回答计入房间 `{code}`。"},
    "room.unknown": {
        "en": "Room {code} is unknown or has expired: your answers count only here.",
        "zh": "房间 {code} 不存在或已过期：你的回答只在本页计数。",
    },
    "room.flood": {
        "en": "Too many answers in a short time: this one was not sent to the room.",
        "zh": "短时间内回答过多：这次回答没有计入房间。",
    },
}
