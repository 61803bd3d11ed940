"""Messages of the labs on the tutorials' engineering advice: lab 11 (attention is not explanation) and lab 12
(check the exported layer), and of the caption both show for the main page's layer."""

MESSAGES: dict[str, dict[str, str]] = {
    "nav.lab.attribution": {"en": "11 · What the layer used", "zh": "11 · 这一层真正用了什么"},
    "nav.lab.onnx": {"en": "12 · Check the export", "zh": "12 · 检查导出的层"},
    # ------------------------------------------------------------------ the main page's layer, in a lab
    "lab.layer.loading": {"en": "Running the main page's layer…", "zh": "正在运行主页面上的这一层……"},
    "lab.layer.caption": {
        "en": "The layer you have on the main page: {source} · d_model = {d_model} · {heads} heads · layer {layer} "
        "(of {layers}) · {count} tokens · mask: {mask}.",
        "zh": "你在主页面上的这一层：{source} · d_model = {d_model} · {heads} 个头 · 第 {layer} 层（共 {layers} 层）"
        "· {count} 个词元 · 掩码：{mask}。",
    },
    "lab.layer.source.random": {"en": "random weights (seed {seed})", "zh": "随机权重（种子 {seed}）"},
    "lab.layer.source.trained": {"en": "trained here on “{task}”", "zh": "在本机训练的“{task}”任务"},
    "lab.layer.source.pretrained": {"en": "the checkpoint {name}", "zh": "预训练检查点 {name}"},
    "lab.layer.text": {"en": "The main page's text", "zh": "主页面上的文本"},
    "lab.layer.text_help": {
        "en": "Read-only here: the lab examines the main page's run. A trained task shows its own sequence when the "
        "text is not one of its sequences; a checkpoint cuts the text with its own tokenizer.",
        "zh": "这里只读：本实验分析的是主页面的运行结果。文本不是训练任务能读的序列时，任务会显示它自己的示例序列；"
        "预训练检查点用它自己的分词器切分文本。",
    },
    "lab.layer.change": {
        "en": "Change the weights, sizes, sentence or mask on the main page",
        "zh": "到主页面更改权重、尺寸、句子或掩码",
    },
    # ------------------------------------------------------------------ lab 11: what did the layer really use?
    "lab.attribution.title": {"en": "Lab 11 · What did the layer really use?", "zh": "实验 11 · 这一层真正用了什么？"},
    "lab.attribution.intro": {
        "en": "Pick one query token of the layer you have on the main page. For every key, side by side: the "
        "attention weight α, the size of what that key actually adds to the output, ‖α·v·W_o‖, and what removing "
        "the key does. Where the three rank the keys differently, the weight alone tells the wrong story.",
        "zh": "在你主页面上的这一层里选一个查询词元。对每个键并排比较三样东西：注意力权重 α、这个键真正加进输出的"
        "向量有多大 ‖α·v·W_o‖，以及去掉这个键会怎样。三者给键排出的顺序不一样时，只看权重就会讲错故事。",
    },
    "lab.attribution.explain": {
        "en": "The layer's output for query i is a sum over heads h and keys j, plus W_o's bias (a layer "
        "without biases, as Llama's, has b_o = 0 and b_v = 0):\n\n"
        "output_i = Σ_h Σ_j α_ij^h · f_h(x_j) + b_o, with f_h(x_j) = v_j^h · (W_o^h)ᵀ\n\n"
        "where v_j^h is head h's slice of v_j = x_j W_vᵀ + b_v and W_o^h are the d_k columns of W_o that read "
        "head h. An attention map shows only α. Kobayashi et al. (2020, *Attention is not only a weight*) measure "
        "‖α_ij^h f_h(x_j)‖ instead: a key can get most of the weight and still add almost nothing, when its "
        "vector f(x_j) is small (they report it for BERT's heads that look at [CLS], [SEP] and punctuation).\n\n"
        "Removing a key, two ways: **zero its value** v_j: the weights stay, and exactly α·f(x_j) leaves the "
        "output, so its effect equals the norm. **Mask it** for this query (the engine's own mask): the other "
        "keys' weights grow back to a sum of 1, and the output moves by α_j / (1 − α_j) · (o − f(x_j)), which can "
        "be large or small whatever α_j is.\n\n"
        "Per head, each measure is that head's; for all heads together the weight is the mean over heads (what an "
        "averaged map shows), the norm is ‖Σ_h α^h f_h(x_j)‖ and the effect removes the key from every head. The "
        "tutorial (6.2): attention weights cannot be taken as wholly the same as “the reason the model predicts "
        "this”; they can only reflect where the computation looks.",
        "zh": "查询 i 的输出是对所有头 h 和所有键 j 求和，再加上 W_o 的偏置"
        "（没有偏置的层，如 Llama 的层，b_o = 0、b_v = 0）：\n\n"
        "output_i = Σ_h Σ_j α_ij^h · f_h(x_j) + b_o，其中 f_h(x_j) = v_j^h · (W_o^h)ᵀ\n\n"
        "v_j^h 是 v_j = x_j W_vᵀ + b_v 中属于头 h 的那一段，W_o^h 是 W_o 中读取头 h 的那 d_k 列。注意力图只显示 α。"
        "小林等人（Kobayashi et al. 2020）改为度量 ‖α_ij^h f_h(x_j)‖：一个键可以拿到大部分权重，"
        "却几乎什么也没加进输出——只要它的向量 f(x_j) 很小（他们在 BERT 里盯着 [CLS]、[SEP] 和标点的头上报告了这一点）"
        "。\n\n"
        "去掉一个键有两种做法：**把它的值 v_j 置零**：权重不变，输出正好少了 α·f(x_j)，所以影响就等于范数。"
        "**对这个查询遮掉它**（用引擎自己的掩码）：其余键的权重重新归一到 1，输出移动 α_j / (1 − α_j) · (o − f(x_j))，"
        "它可大可小，与 α_j 的大小并不对应。\n\n"
        "选单个头时，每个量都是这个头的；选所有头时，权重取各头的平均（平均注意力图显示的就是它），"
        "范数是 ‖Σ_h α^h f_h(x_j)‖，影响是在每个头里都去掉这个键。教程 6.2 说：注意力权重并不能完全等同于"
        "“模型这样预测的原因”，它只能反映模型在计算过程中的关注分布。",
    },
    "lab.attribution.query": {"en": "Query token", "zh": "查询词元"},
    "lab.attribution.head": {"en": "Head", "zh": "头"},
    "lab.attribution.all_heads": {"en": "all heads (the layer)", "zh": "所有头（整层）"},
    "lab.attribution.head_help": {
        "en": "One head's weights and vectors, or the layer: the mean weight over heads and the sum of their vectors.",
        "zh": "单个头的权重和向量，或者整层：各头权重的平均，以及各头向量之和。",
    },
    "lab.attribution.ablation": {"en": "Remove a key by", "zh": "去掉一个键的方式"},
    "lab.attribution.ablation.mask": {"en": "masking it", "zh": "遮掉它"},
    "lab.attribution.ablation.zero_value": {"en": "zeroing its value v", "zh": "把它的值 v 置零"},
    "lab.attribution.ablation_help": {
        "en": "Masking blocks the key for this query only; the other keys' weights grow back to 1. Zeroing v keeps "
        "the weights and removes exactly α·f(x), so its effect on the output equals the norm.",
        "zh": "遮掉只对这个查询屏蔽该键，其余键的权重重新归一到 1。把 v 置零则权重不变，输出正好少了 α·f(x)，"
        "所以它对输出的影响就等于范数。",
    },
    "lab.attribution.measure.weight": {"en": "weight α", "zh": "权重 α"},
    "lab.attribution.measure.norm": {"en": "‖α·f(x)‖, what it adds", "zh": "‖α·f(x)‖，它加进的量"},
    "lab.attribution.measure.effect_mask": {"en": "effect of masking it", "zh": "遮掉它的影响"},
    "lab.attribution.measure.effect_zero_value": {"en": "effect of zeroing v", "zh": "把 v 置零的影响"},
    "lab.attribution.share": {"en": "share of the measure's total", "zh": "占该量总和的比例"},
    "lab.attribution.chart_title": {
        "en": "Query {token}: three measures per key",
        "zh": "查询 {token}：每个键的三个量",
    },
    "lab.attribution.chart_caption_layer": {
        "en": "Each measure as a share of its own total over the keys this query may attend to, so that the three "
        "can stand side by side. All heads: the weight is the mean over heads; the norm and the effect are the "
        "layer's (every head's vectors summed; the key removed in every head).",
        "zh": "每个量都换算成它在这个查询能关注的所有键上的总和中所占的比例，这样三者才能并排比较。所有头：权重取各头"
        "的平均，"
        "范数和影响是整层的（各头向量相加；在每个头里都去掉该键）。",
    },
    "lab.attribution.chart_caption_head": {
        "en": "Each measure as a share of its own total over the keys this query may attend to, so that the three "
        "can stand side by side; this head's weights and vectors only.",
        "zh": "每个量都换算成它在这个查询能关注的所有键上的总和中所占的比例，这样三者才能并排比较；只看这一个头的权重"
        "和向量。",
    },
    "lab.attribution.rho": {"en": "ρ, {a} vs {b}", "zh": "ρ：{a} 与 {b}"},
    "lab.attribution.short.weight": {"en": "weight", "zh": "权重"},
    "lab.attribution.short.norm": {"en": "norm", "zh": "范数"},
    "lab.attribution.short.effect": {"en": "effect", "zh": "影响"},
    "lab.attribution.rho_caption": {
        "en": "How alike the three rank the keys (Spearman's ρ: +1 the same order, 0 unrelated, −1 reversed). "
        "Weight: {weight}; norm: {norm}; effect: {effect}.",
        "zh": "三个量给键排出的顺序有多相近（斯皮尔曼等级相关 ρ：+1 顺序相同，0 无关，−1 相反）。"
        "权重：{weight}；范数：{norm}；影响：{effect}。",
    },
    "lab.attribution.rho_help": {
        "en": "Spearman's ρ over the keys this query may attend to: +1 the same order, 0 unrelated, −1 reversed. "
        "Kendall's τ: {tau}.",
        "zh": "斯皮尔曼等级相关 ρ（只算这个查询能关注的键）：+1 顺序完全相同，0 无关，−1 完全相反。肯德尔 τ：{tau}。",
    },
    "lab.attribution.same_order": {
        "en": "Weight and norm rank the keys in the same order here.",
        "zh": "在这里，权重和范数给键排出的顺序完全相同。",
    },
    "lab.attribution.disagree": {
        "en": "Where the weight and the norm disagree most (rank 1 = the largest):",
        "zh": "权重和范数分歧最大的键（第 1 名 = 最大）：",
    },
    "lab.attribution.disagree_line": {
        "en": "{token}: rank {by_weight:g} by weight, {by_norm:g} by what it adds",
        "zh": "{token}：按权重排第 {by_weight:g}，按加进的量排第 {by_norm:g}",
    },
    "lab.attribution.col.key": {"en": "key", "zh": "键"},
    "lab.attribution.col.offer": {"en": "‖f(x)‖, what it offers", "zh": "‖f(x)‖，它能提供的量"},
    "lab.attribution.col.ranks": {"en": "ranks (weight · norm · effect)", "zh": "名次（权重 · 范数 · 影响）"},
    "lab.attribution.col.drop": {"en": "fall of the prediction's probability", "zh": "预测概率的下降"},
    "lab.attribution.table_caption": {
        "en": "Only the keys this query may attend to. ‖f(x)‖ is what the key would add with weight 1: the norm "
        "is the weight times it. The effects are ‖Δ output‖ of this query, in the output's own units; ⚑: removing "
        "the key changes a predicted token.",
        "zh": "只列出这个查询能关注的键。‖f(x)‖ 是权重为 1 时这个键会加进的量：范数就是权重乘以它。影响是这个查询输出"
        "的变化"
        " ‖Δ 输出‖，单位与输出相同；⚑：去掉这个键会改变预测出的词元。",
    },
    "lab.attribution.heads_title": {"en": "Every head, for this query", "zh": "这个查询在每个头里的情况"},
    "lab.attribution.col.head": {"en": "head", "zh": "头"},
    "lab.attribution.col.rho": {"en": "ρ (weight, norm)", "zh": "ρ（权重，范数）"},
    "lab.attribution.col.top_weight": {"en": "most weight on", "zh": "权重最大的键"},
    "lab.attribution.col.top_norm": {"en": "adds the most", "zh": "加进最多的键"},
    "lab.attribution.col.top_weight_norm_rank": {
        "en": "its rank by what it adds",
        "zh": "权重最大的键按加进的量排第几",
    },
    "lab.attribution.heads_caption": {
        "en": "A low ρ, or a key with the most weight that ranks far down by what it adds, is a head whose map "
        "misleads: pick it above to see it.",
        "zh": "ρ 很低，或者权重最大的键按加进的量排得很靠后，说明这个头的注意力图会误导人：在上面选中它看看。",
    },
    "lab.attribution.no_prediction_random": {
        "en": "Random weights predict nothing: the effects above are on this layer's output only. Train a task on "
        "the main page to see the effect on a prediction.",
        "zh": "随机权重不做任何预测：上面的影响只是对这一层输出的影响。在主页面上训练一个任务，就能看到对预测的影响。",
    },
    "lab.attribution.no_prediction_checkpoint": {
        "en": "A checkpoint's layer is read here without the model's head (no classifier, no language-model head), "
        "so there is no prediction to measure: the effects above are the change of this attention layer's output "
        "for the query, before the residual connection adds it and before the later layers (and, in a Post-Norm "
        "model such as BERT, before the LayerNorm that follows the residual).",
        "zh": "这里读取检查点的一层时没有模型的输出头（没有分类器，也没有语言模型头），所以没有预测可以度量：上面的影响"
        "是这个注意力层对该查询的输出的变化，还没有被残差连接加上，也还没有经过后面的层（在 BERT 这样的 Post-Norm "
        "模型里，也还没有经过残差之后的 LayerNorm）。",
    },
    "lab.attribution.no_prediction_here": {
        "en": "The task scores no output at this query's position: pick another query to see the effect on a predicti"
        "on.",
        "zh": "这个任务在这个查询的位置上没有要预测的输出：换一个查询词元，就能看到对预测的影响。",
    },
    "lab.attribution.prediction": {
        "en": "Prediction at this query with nothing removed: {said}. The last column shows how much the predicted "
        "token's probability falls when the key is removed in layer {layer} (the rest of the model runs again).",
        "zh": "什么都不去掉时，这个查询位置上的预测：{said}。表格最后一列是在第 {layer} 层去掉该键后"
        "（模型其余部分重新运行），预测词元的概率下降了多少。",
    },
    "lab.attribution.predicts": {
        "en": "{output}: {token} ({probability:.0%})",
        "zh": "{output}：{token}（{probability:.0%}）",
    },
    "lab.attribution.too_few_keys": {
        "en": "The mask leaves {token} fewer than two keys to attend to: nothing to rank. Pick a later query.",
        "zh": "掩码只给 {token} 留下不到两个可关注的键：没有什么可排序的。请选一个更靠后的查询词元。",
    },
    "lab.attribution.verdict_title": {
        "en": "Attention weights are evidence, not explanation",
        "zh": "注意力权重是线索，不是解释",
    },
    "lab.attribution.verdict": {
        "en": "Here the key with the most weight, {token}, gets {weight:.0%} of it; by what it adds it ranks "
        "{norm_rank:g} "
        "of {count}, and by the {effect} {effect_rank:g} of {count}. A weight says how much of a key's vector the "
        "softmax mixes in, not how big that vector is (the norm) nor what the output loses without the key (the "
        "effect). And all three describe one layer's output for one query, which still passes a residual "
        "connection, further layers and a readout before anything is predicted. So a weight is a clue to check, "
        "with the norm and by removing the key, not the reason for a prediction.",
        "zh": "这里权重最大的键是 {token}，拿到了 {weight:.0%} 的权重；按加进的量它排第 {norm_rank:g}（共 {count} 个"
        "），"
        "按{effect}排第 {effect_rank:g}（共 {count} 个）。权重只说明 softmax 把这个键的向量混进了多少，"
        "并不说明这个向量有多大（范数），也不说明去掉这个键后输出会失去什么（影响）。而且这三个量描述的都只是一层对一"
        "个查询的输出，"
        "在做出任何预测之前，它还要经过残差连接、后面的层和输出头。所以权重是需要核实的线索（用范数、用去掉键的实验），"
        "而不是预测的原因。",
    },
    # ------------------------------------------------------------------ lab 12: check the exported layer
    "lab.onnx.title": {"en": "Lab 12 · Check the exported layer", "zh": "实验 12 · 检查导出的层"},
    "lab.onnx.intro": {
        "en": "Export the layer you have on the main page (its sizes and weights) with `torch.onnx.export`, with a "
        "sequence length that may vary, run it in ONNX Runtime on the CPU, and check it the way the tutorial asks "
        "before a deployment: which operators the graph holds and where they come from, the largest difference "
        "to PyTorch at lengths the export never saw, the mask, and both runtimes' speed.",
        "zh": "用 `torch.onnx.export` 导出你在主页面上的这一层（它的尺寸和权重），序列长度设为可变，在 CPU 上用 "
        "ONNX Runtime 运行，并像教程要求的那样在部署前检查它：图里有哪些算子、它们来自哪行代码；在导出时没见过的长度"
        "上与 "
        "PyTorch 的最大差值；掩码；以及两个运行时的速度。",
    },
    "lab.onnx.explain": {
        "en": "The tutorial (6.3): when the layer goes to ONNX Runtime or TensorRT, check that its transposes and "
        "reshapes are supported, that the sequence length can vary, and, for a self-made multi-head attention, "
        "compare its outputs with the official implementation first.\n\n"
        "Our layer's `view(...).transpose(1, 2)` becomes `Shape`, `Gather`, `Concat`, `Reshape` and `Transpose` "
        "nodes: the length is read from the input at run time, so one graph serves every L. The exporter used "
        "is PyTorch's TorchScript exporter (`dynamo=False`): with `verbose=True` it records each node's Python "
        "stack, which gives the line of `mha/` shown next to it. The newer exporter (`torch.export`, the default "
        "since PyTorch 2.9) stops at our masked softmax: `if not empty_rows.any()` branches on the data. The "
        "tracer does not stop; it records the branch the example took, and that is what the mask check below "
        "catches.\n\n"
        "A graph that agrees with PyTorch proves that the export is faithful, not that the layer is right: lab "
        "3's wrong reshape exports just as faithfully.",
        "zh": "教程 6.3：把这一层导出到 ONNX Runtime 或 TensorRT 时，要检查转置和 reshape 是否受支持、序列长度能否变"
        "化；"
        "如果使用的是自研多头注意力实现，尽量先与官方实现做输出对比测试。\n\n"
        "我们这一层的 `view(...).transpose(1, 2)` 变成了 `Shape`、`Gather`、`Concat`、`Reshape` 和 `Transpose` "
        "节点：长度在运行时从输入读取，所以同一张图适用于任何 L。这里用的是 PyTorch 基于 `TorchScript` 的导出器"
        "（`dynamo=False`）：加上 `verbose=True` 它会记下每个节点的 Python 调用栈，由此得到旁边显示的 `mha/` 代码行。"
        "较新的导出器（`torch.export`，自 PyTorch 2.9 起为默认）会停在我们的带掩码 softmax 上："
        "`if not empty_rows.any()` 是依赖数据的分支。追踪器则不会停下，它记下示例输入走过的那个分支——下面的掩码检查"
        "抓到的正是这一点。\n\n"
        "图与 PyTorch 一致，只能证明导出是忠实的，不能证明这一层是对的：实验 3 的错误 reshape 也能同样忠实地导出。",
    },
    "lab.onnx.export": {"en": "Export and check", "zh": "导出并检查"},
    "lab.onnx.press_export": {
        "en": "Press “Export and check”: the export and the checks run in a separate process and take 10–30 "
        "seconds here (the result is kept for this layer and shared).",
        "zh": "点击“导出并检查”：导出和检查在单独的进程中运行，在这台机器上需要 10–30 秒（结果会为这一层保留并共享）。",
    },
    "lab.onnx.exporting": {"en": "Exporting and running ONNX Runtime…", "zh": "正在导出并运行 ONNX Runtime……"},
    "lab.onnx.failed": {
        "en": "The export could not be checked: {message}",
        "zh": "无法完成导出检查：{message}",
    },
    "lab.onnx.metric.operators": {"en": "Operators in the graph", "zh": "图中的算子数"},
    "lab.onnx.metric.reshapes": {"en": "Reshape · Transpose nodes", "zh": "`Reshape` · `Transpose` 节点数"},
    "lab.onnx.metric.opset": {"en": "Opset", "zh": "算子集版本"},
    "lab.onnx.metric.size": {"en": "File size", "zh": "文件大小"},
    "lab.onnx.versions": {
        "en": "Exported in float32 by PyTorch {torch}, read with onnx {onnx}, run by ONNX Runtime {ort} on the CPU.",
        "zh": "由 PyTorch {torch} 以 float32 导出，用 `onnx` {onnx} 读取，在 CPU 上由 ONNX Runtime {ort} 运行。",
    },
    "lab.onnx.download": {"en": "Download the graph (layer.onnx)", "zh": "下载这张图（layer.onnx）"},
    "lab.onnx.lengths_title": {
        "en": "Does the length vary? ONNX Runtime against PyTorch",
        "zh": "长度能变吗？ONNX Runtime 与 PyTorch 对比",
    },
    "lab.onnx.col.seen": {"en": "at export?", "zh": "导出时见过？"},
    "lab.onnx.seen": {"en": "the export's own input", "zh": "导出时的输入"},
    "lab.onnx.unseen": {"en": "never seen", "zh": "从未见过"},
    "lab.onnx.col.output": {"en": "max |Δ output|", "zh": "最大 |Δ 输出|"},
    "lab.onnx.col.weights": {"en": "max |Δ weights|", "zh": "最大 |Δ 权重|"},
    "lab.onnx.col.tolerance": {"en": "tolerance", "zh": "容差"},
    "lab.onnx.col.ok": {"en": "same?", "zh": "一致？"},
    "lab.onnx.lengths_ok": {
        "en": "The graph exported at L = {export} runs at all {count} lengths and gives PyTorch's numbers (every key "
        "allowed). The tolerance is 1e-5 for outputs up to 1 in size and grows with larger ones: float32 keeps "
        "about 7 digits, and the two runtimes add in different orders.",
        "zh": "在 L = {export} 时导出的图在全部 {count} 个长度上都能运行，数值与 PyTorch 一致（所有键都可关注）。"
        "容差：输出不超过 1 时为 1e-5，输出更大时按比例放大——float32 只保留约 7 位有效数字，两个运行时的求和顺序也不"
        "同。",
    },
    "lab.onnx.lengths_bad": {
        "en": "At some length the graph's numbers differ from PyTorch's by more than the tolerance.",
        "zh": "在某些长度上，图的数值与 PyTorch 的差别超过了容差。",
    },
    "lab.onnx.graph_title": {"en": "The graph, next to the code it came from", "zh": "图中的算子，以及它们来自的代码"},
    "lab.onnx.col.line": {"en": "line of mha/", "zh": "mha/ 中的行"},
    "lab.onnx.col.code": {"en": "code", "zh": "代码"},
    "lab.onnx.col.ops": {"en": "ONNX operators, in order", "zh": "ONNX 算子（按顺序）"},
    "lab.onnx.no_line": {"en": "— (added by the exporter)", "zh": "—（导出器添加）"},
    "lab.onnx.graph_caption": {
        "en": "Each line is the innermost frame inside mha/ of the Python stack the exporter recorded for the node "
        "(its doc_string). Constants are left out; nodes without a line were added by the exporter's own passes. "
        "K has one Transpose fewer: its split's transpose(1, 2) and the scores' transpose(-2, -1) became one.",
        "zh": "每一行取自导出器为该节点记录的 Python 调用栈（节点的 doc_string）中位于 `mha/` 内的最内层一帧。"
        "常量节点没有列出；没有代码行的节点是导出器自己的处理步骤添加的。"
        "K 少一个 `Transpose`：拆分头时的 `transpose(1, 2)` 和计算分数时的 `transpose(-2, -1)` 合并成了一个。",
    },
    "lab.onnx.nodes_title": {"en": "Every node", "zh": "所有节点"},
    "lab.onnx.col.op": {"en": "operator", "zh": "算子"},
    "lab.onnx.col.node": {"en": "node", "zh": "节点"},
    "lab.onnx.mask_title": {"en": "Is the mask honoured?", "zh": "掩码生效了吗？"},
    "lab.onnx.causal": {
        "en": "A causal keep-mask given to the graph as its second input, at L = {length} (never seen at export): "
        "max |difference| to PyTorch {diff:.2e} ≤ {tol:.0e}.",
        "zh": "把因果掩码作为图的第二个输入，在 L = {length}（导出时从未见过）上：与 PyTorch 的最大 |差值| 为 "
        "{diff:.2e} ≤ {tol:.0e}。",
    },
    "lab.onnx.empty_intro": {
        "en": "Now a query with no key left to attend to (row {row} blocked entirely, L = {length}). Our layer gives "
        "it zero weights and a zero context, never NaN.",
        "zh": "再看一个没有任何键可关注的查询（第 {row} 行被全部遮住，L = {length}）。我们的层会给它全零的权重和全零"
        "的上下文，"
        "绝不会是 NaN。",
    },
    "lab.onnx.empty_plain_ok": {
        "en": "The exported graph gives zeros there too.",
        "zh": "导出的图在这里也给出全零。",
    },
    "lab.onnx.empty_plain": {
        "en": "The graph exported above gives **{got}** in that row (the other rows agree with PyTorch to "
        "{others:.1e}). The export traced the example, whose rows all had keys, so the branch `if not "
        "empty_rows.any(): return torch.softmax(...)` of mha/functional.py was recorded and the other one was "
        "never seen.",
        "zh": "上面导出的图在这一行给出了**{got}**（其余各行与 PyTorch 的差值在 {others:.1e} 以内）。导出时追踪的是示"
        "例输入，"
        "它的每一行都有可关注的键，于是 `mha/functional.py` 中 `if not empty_rows.any(): return torch.softmax(...)` "
        "这个分支被记录下来，另一个分支从未出现过。",
    },
    "lab.onnx.empty_recorded": {
        "en": "Exported again from an example that has such a row, the graph records the other branch and gives "
        "**{got}**, like PyTorch (max |difference| {diff:.1e}). The lasting fix is a softmax without a branch on "
        "the data; until then, export with an example that covers every case, and compare.",
        "zh": "用带有这种行的示例重新导出，图会记录另一个分支，给出**{got}**，与 PyTorch 一致（最大 |差值| {diff:.1e}"
        "）。"
        "根本的修复是写一个不依赖数据分支的 softmax；在此之前，导出时要用覆盖所有情况的示例，并且做对比。",
    },
    "lab.onnx.row.nan": {"en": "NaN", "zh": "NaN"},
    "lab.onnx.row.zeros": {"en": "zeros", "zh": "全零"},
    "lab.onnx.row.other": {"en": "numbers that are not zero", "zh": "非零的数"},
    "lab.onnx.reshape_title": {"en": "Lab 3's wrong reshape, exported", "zh": "实验 3 的错误 reshape，导出之后"},
    "lab.onnx.metric.same_bug": {
        "en": "max |ONNX Runtime − PyTorch|, both with the bug",
        "zh": "最大 |ONNX Runtime − PyTorch|（两边都带着这个错误）",
    },
    "lab.onnx.metric.wrong_right": {"en": "max |bug − correct layer|", "zh": "最大 |错误版本 − 正确的层|"},
    "lab.onnx.reshape_text": {
        "en": "The same weights with heads split by `view(B, H, L, d_k)` and no transpose, exported at L = {length}: "
        "ONNX Runtime reproduces PyTorch's wrong numbers exactly. Comparing the export with its own source "
        "passes; only a comparison with a reference implementation (lab 3, `nn.MultiheadAttention`) catches the "
        "bug. That is why the tutorial asks for both checks.",
        "zh": "同样的权重，用 `view(B, H, L, d_k)` 而不做转置来拆分头，在 L = {length} 时导出：ONNX Runtime 精确地复"
        "现了 "
        "PyTorch 的错误数值。拿导出结果和它自己的源代码比，检查会通过；只有和参考实现比（实验 3，"
        "`nn.MultiheadAttention`）才能抓到这个错误。这就是教程要求两种检查都做的原因。",
    },
    "lab.onnx.timing_title": {"en": "Both runtimes' speed", "zh": "两个运行时的速度"},
    "lab.onnx.timing_caption": {
        "en": "One forward pass of this layer (every key allowed, weights returned) at L = {lengths}: PyTorch eager "
        "in inference mode against ONNX Runtime's CPU provider with its default graph optimisations, the same "
        "number of threads, in a separate process.",
        "zh": "这一层的一次前向计算（所有键都可关注，同时返回权重），L = {lengths}：PyTorch 即时执行（推理模式）对比 "
        "ONNX Runtime 的 CPU 执行器（默认的图优化），线程数相同，在单独的进程中运行。",
    },
    "lab.onnx.press": {
        "en": "Press Measure to time both runtimes on this server's CPU (in a separate process).",
        "zh": "点击“测量”，在本服务器的 CPU 上为两个运行时计时（在单独的进程中）。",
    },
    "lab.onnx.runtime.torch": {"en": "PyTorch", "zh": "PyTorch"},
    "lab.onnx.runtime.onnx": {"en": "ONNX Runtime", "zh": "ONNX Runtime"},
    "lab.onnx.col.median": {"en": "{runtime}, ms (median)", "zh": "{runtime}，毫秒（中位数）"},
    "lab.onnx.col.spread": {"en": "{runtime}, middle half", "zh": "{runtime}，中间一半"},
    "lab.onnx.col.ratio": {"en": "PyTorch ÷ ONNX Runtime", "zh": "PyTorch ÷ ONNX Runtime"},
    "lab.onnx.ratio_caption": {
        "en": "Above 1: ONNX Runtime is faster on this machine, at these sizes, today; measure again before you "
        "decide anything on it.",
        "zh": "大于 1：在这台机器上、这些规模下、此刻 ONNX Runtime 更快；据此做任何决定之前请再测一次。",
    },
    # ------------------------------------------------------------ lab 11 on a review and on an image
    "lab.attribution.prediction_cls": {
        "en": "The model's reading, at `[CLS]`, with nothing removed: {said}. The last column shows how much the "
        "predicted class's probability falls when the key is removed from this query's row in layer {layer} (the "
        "rest of the model runs again).",
        "zh": "什么都不去掉时，模型在 `[CLS]` 处的判断：{said}。表格最后一列是在第 {layer} 层从这个查询的那一行去掉该键"
        "后（模型其余部分重新运行），预测类别的概率下降了多少。",
    },
    "lab.attribution.no_prediction_cls": {
        "en": "In the last layer only `[CLS]`'s row reaches the answer: choose `[CLS]` as the query (or an earlier "
        "layer, where every character's row reaches it) to see the effect on the prediction.",
        "zh": "在最后一层，只有 `[CLS]` 那一行通向答案：把查询换成 `[CLS]`（或换到更前面的一层，那里每个字的那一行"
        "都通向答案），就能看到对预测的影响。",
    },
    "lab.attribution.no_prediction_image": {
        "en": "On an image this lab measures what each key gives the query, but does not run the digits' model "
        "again without a patch: the effect on its answer is left out.",
        "zh": "在图像上，这个实验测量每个键给查询的贡献，但不会去掉某个图块后重新运行数字模型："
        "对答案的影响这里不计算。",
    },
}
