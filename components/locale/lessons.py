"""Messages of the main page's lessons from the tutorials: why √d_k, the labs of each step, `contiguous()`,
dropout, uniform weights, batches and padding, the [PAD] toggle, and `nn.MultiheadAttention`'s batch order."""

MESSAGES: dict[str, dict[str, str]] = {
    # ------------------------------------------------------------ padding together with causal or window
    "controls.block_pad": {"en": "Also block [PAD] keys", "zh": "同时屏蔽 [PAD] 键"},
    "controls.block_pad_help": {
        "en": "Add the padding mask to the causal or window mask (mask & padding): no token attends a [PAD] "
        "token, as in a padded batch. The padding mask itself always blocks them.",
        "zh": "把填充掩码叠加到因果掩码或滑动窗口掩码上（mask & padding）：任何词元都不关注 [PAD] 词元，"
        "就像填充过的批次那样。填充掩码本身总是屏蔽它们。",
    },
    "notes.block_pad_no_pads": {
        "en": "“Also block [PAD] keys” is on, but the text has no [PAD] token: nothing more is blocked.",
        "zh": "已打开“同时屏蔽 [PAD] 键”，但文本中没有 [PAD] 词元：没有多屏蔽任何位置。",
    },
    "error.block_pad.not_boolean": {
        "en": "“Also block [PAD] keys” must be on or off, got “{value}”.",
        "zh": "“同时屏蔽 [PAD] 键”只能是开或关，收到的是“{value}”。",
    },
    # ------------------------------------------------------------ shared by the steps
    "steps.labs": {"en": "Try it in a lab:", "zh": "去实验室试一试："},
    "steps.code": {"en": "The code of this step", "zh": "这一步的代码"},
    # ------------------------------------------------------------ step 2: why √d_k, dropout
    "step2.why_scale": {
        "en": "**Why divide by √d_k?** A score is a sum of d_k products; if the entries of Q and K have "
        "variance 1, the score has variance d_k, so scores grow like √d_k (here √{d_k} ≈ {root}). Large "
        "scores push the softmax towards one-hot: one weight near 1, the rest near 0. There its gradients "
        "vanish and the layer stops learning. Dividing by √d_k brings the scores back to variance 1 for "
        "every d_k. In head {head} here the raw scores have a standard deviation of {raw_std}, the scaled "
        "ones {scaled_std}.",
        "zh": "**为什么要除以 √d_k？** 一个分数是 d_k 个乘积之和；若 Q 和 K 的元素方差为 1，分数的方差就是 d_k，"
        "所以分数大约按 √d_k 增长（这里 √{d_k} ≈ {root}）。分数很大时 softmax 趋向独热（one-hot）："
        "一个权重接近 1，其余接近 0。此时梯度几乎消失，这一层就学不动了。除以 √d_k 让分数的方差回到 1，"
        "与 d_k 无关。这里头 {head} 的原始分数标准差为 {raw_std}，缩放后为 {scaled_std}。",
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
        "`{contiguous}`). `view` only reinterprets memory as it lies, so it needs contiguous memory; on this "
        "tensor it fails:",
        "zh": "`transpose(1, 2)` 并不移动任何数字：它返回同一块内存的视图，只是交换了两个步长（stride）。"
        "这里 `context.transpose(1, 2)` 的形状是 `{shape}`，步长是 `{strides}`；若按顺序存放，这个形状的步长"
        "应为 `{packed}`。所以它不是连续的（`is_contiguous()` 为 `{contiguous}`）。`view` 只是按内存现有的排列"
        "重新解读，因此要求内存连续；对这个张量它会报错：",
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
        "en": "**Alike rows again:** `output = concat W_oᵀ + b_o` is one linear map applied to every row, so "
        "rows that were alike in step 3 stay alike: no cell is further than {spread} from its column's "
        "average, while the values reach {size}.",
        "zh": "**各行依然差不多：** `output = concat W_oᵀ + b_o` 对每一行做同一个线性变换，所以第 3 步中相近的行"
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
        "en": "✓ With the padding mask the short sentence's {count} real tokens get exactly their outputs "
        "alone: max |batch − alone| = {gap}.",
        "zh": "✓ 加上填充掩码，短句的 {count} 个真实词元得到的输出与单独运行时完全一样：最大 |批次 − 单独| = {gap}。",
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
        "en": "The batch needs a text with at least two tokens besides [PAD], cut by the project's tokenizer "
        "(random or trained weights).",
        "zh": "这个批次需要一段除 [PAD] 之外至少有两个词元的文本，并用本项目的分词方式切分（随机权重或训练过的权重）。",
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
