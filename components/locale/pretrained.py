"""Messages about pretrained checkpoints: loading, refusals, token notes, the check against them, the head finder."""

MESSAGES: dict[str, dict[str, str]] = {
    # ------------------------------------------------------------ a checkpoint that cannot be used here
    "source.unlisted": {
        "en": "“{name}” is not on this server's list of checkpoints; showing random weights.",
        "zh": "“{name}”不在本服务器的检查点列表中；改为显示随机权重。",
    },
    "source.missing": {
        "en": "The checkpoint “{name}” is listed, but its folder on this server holds no checkpoint (config.json, "
        "weights and tokenizer). The administrator can fix its entry in ATTN_PLAYGROUND_CHECKPOINTS. Showing "
        "random weights.",
        "zh": "检查点“{name}”在列表中，但它在本服务器上的文件夹里没有检查点（config.json、权重和分词器）。"
        "管理员可以修改 ATTN_PLAYGROUND_CHECKPOINTS 中的这一项。改为显示随机权重。",
    },
    "source.offline": {
        "en": "The checkpoint “{name}” ({location}) is not downloaded on this server, and the server is offline "
        "(HF_HUB_OFFLINE). The administrator can download it beforehand with `hf download` (the Hugging Face "
        "command line) and the id {location}. Showing random weights.",
        "zh": "检查点“{name}”（{location}）尚未下载到本服务器，而服务器处于离线模式（HF_HUB_OFFLINE）。"
        "管理员可以事先用 Hugging Face 的命令 `hf download` 加上编号 {location} 下载它。改为显示随机权重。",
    },
    "source.download_failed": {
        "en": "The checkpoint “{name}” ({location}) could not be downloaded ({reason}). Showing random weights; "
        "the page tries again a minute later. The administrator can download it beforehand with `hf download`.",
        "zh": "检查点“{name}”（{location}）下载失败（{reason}）。改为显示随机权重；一分钟后页面会再试一次。"
        "管理员可以事先用 `hf download` 命令下载它。",
    },
    "source.not_downloaded": {
        "en": "The checkpoint “{name}” is not downloaded on this server yet; rerun the page to download it. "
        "Showing random weights.",
        "zh": "检查点“{name}”还没有下载到本服务器；重新运行页面即可下载。改为显示随机权重。",
    },
    "source.not_supported": {
        "en": "“{name}” is a {model_type} model: this page reads one layer of a BERT-family encoder (model type "
        "{supported}) and no other architecture. Showing random weights.",
        "zh": "“{name}”是 {model_type} 模型：本页只读取 BERT 系列编码器（模型类型 {supported}）的一层，"
        "不支持其他结构。改为显示随机权重。",
    },
    "source.too_big": {
        "en": "“{name}” (hidden size {d_model}, {num_heads} heads, {layers} layers) is beyond this server's "
        "limits; showing random weights.",
        "zh": "“{name}”（隐藏维度 {d_model}、{num_heads} 个头、{layers} 层）超出了本服务器的限制；改为显示随机权重。",
    },
    "source.broken": {
        "en": "The checkpoint “{name}” could not be loaded ({reason}); showing random weights.",
        "zh": "检查点“{name}”无法加载（{reason}）；改为显示随机权重。",
    },
    # ------------------------------------------------------------ first download and loading
    "pretrained.downloading": {
        "en": "Downloading the checkpoint {name} to this server (the first time only): {done} of {total} MB",
        "zh": "正在把检查点 {name} 下载到本服务器（仅第一次）：{done} / {total} MB",
    },
    "pretrained.connecting": {
        "en": "Downloading the checkpoint {name} to this server (the first time only)…",
        "zh": "正在把检查点 {name} 下载到本服务器（仅第一次）…",
    },
    "pretrained.loading": {
        "en": "Loading the checkpoint {name} (the first time on this server takes a few seconds)…",
        "zh": "正在加载检查点 {name}（在本服务器上第一次加载需要几秒钟）…",
    },
    # ------------------------------------------------------------ the checkpoint's tokens
    "notes.unk_tokens": {
        "en": "{count} of the {total} tokens are [UNK]: the vocabulary of {checkpoint} does not know them, so they "
        "all get the same token embedding (the [UNK] row). Only their position embeddings, and from the second "
        "layer on what attention mixed into them, tell them apart: what the words were is lost.",
        "zh": "{total} 个词元中有 {count} 个是 [UNK]：{checkpoint} 的词表里没有它们，所以它们得到同一个词元嵌入"
        "（[UNK] 那一行）。只有各自的位置嵌入，以及从第二层起注意力混入的内容，能把它们区分开："
        "原来是什么词已经丢失了。",
    },
    "notes.unk_chinese": {
        "en": "For Chinese text choose the checkpoint {suggestion}: its vocabulary has Chinese characters, that of "
        "{checkpoint} mostly does not.",
        "zh": "中文文本请选择检查点 {suggestion}：它的词表包含汉字，而 {checkpoint} 的词表几乎没有。",
    },
    "notes.unk_chinese_unlisted": {
        "en": "The vocabulary of {checkpoint} has few Chinese characters. A Chinese checkpoint (such as "
        "`bert-base-chinese`) would know them; this server does not list one.",
        "zh": "{checkpoint} 的词表里汉字很少。中文检查点（例如 `bert-base-chinese`）认识它们，但本服务器没有提供。",
    },
    "label.[SEP]": {"en": "[SEP]", "zh": "[SEP]"},
    # ------------------------------------------------------------ the check against the checkpoint itself
    "check.checkpoint_pass": {
        "en": "✓ Matches the checkpoint **{checkpoint}** itself, layer {layer}: max |Δ weights| = {weights} against "
        "its `attentions[{layer}]`, max |Δ output| = {out} against its attention block (tolerance {tol}).",
        "zh": "✓ 与检查点 **{checkpoint}** 本身的第 {layer} 层一致：与它的 `attentions[{layer}]` 相比权重最大差 "
        "|Δ| = {weights}，与它的注意力块相比输出最大差 |Δ| = {out}（容差 {tol}）。",
    },
    "check.checkpoint_fail": {
        "en": "✗ Differs from the checkpoint **{checkpoint}** itself, layer {layer}: max |Δ weights| = {weights}, "
        "max |Δ output| = {out} (tolerance {tol}).",
        "zh": "✗ 与检查点 **{checkpoint}** 本身的第 {layer} 层不一致：权重最大差 |Δ| = {weights}，"
        "输出最大差 |Δ| = {out}（容差 {tol}）。",
    },
    "check.checkpoint_what_if": {
        "en": "The comparison with the checkpoint **{checkpoint}** does not apply: the checkpoint was run without "
        "this mask (every token sees every other, only [PAD] is masked), so this mask is a “what if” of yours. "
        "Choose no mask or the padding mask to compare.",
        "zh": "与检查点 **{checkpoint}** 的比较在这里不适用：检查点运行时没有使用这个掩码（每个词元都能看到其他所有"
        "词元，只屏蔽 [PAD]），所以这个掩码是你的“假设”。选择不加掩码或填充掩码即可比较。",
    },
    "check.checkpoint_pad_unmasked": {
        "en": "The comparison with the checkpoint **{checkpoint}** does not apply: the checkpoint masks the [PAD] "
        "tokens, this page's mask does not. Choose the padding mask to compare.",
        "zh": "与检查点 **{checkpoint}** 的比较在这里不适用：检查点屏蔽了 [PAD] 词元，而本页的掩码没有。"
        "选择填充掩码即可比较。",
    },
    "check.checkpoint_how": {
        "en": "The checkpoint's own forward pass on the same text: its weights are `attentions[layer]` "
        "(output_attentions=True), its output is what attention.output.dense returns (a forward hook), before "
        "dropout, the residual connection and LayerNorm. It runs in float32.",
        "zh": "检查点在同一段文本上自己的前向计算：它的权重是 `attentions[layer]`（output_attentions=True），"
        "它的输出是 attention.output.dense 的返回值（前向钩子），在 dropout、残差连接和 LayerNorm 之前。"
        "它以 float32 运行。",
    },
    # ------------------------------------------------------------ the head finder
    "finder.title": {"en": "Head finder: every head of every layer", "zh": "找注意力头：所有层的所有头"},
    "finder.what": {
        "en": "Pick a token that looks (the query) and a token it might look at (the key): the map shows the weight "
        "each head of each layer of {checkpoint} puts on that key from that query, and the list ranks them. "
        "These are the checkpoint's own weights, with only [PAD] masked.",
        "zh": "选一个“看”的词元（查询）和它可能看向的词元（键）：下图显示 {checkpoint} 每一层的每个头从这个查询放在这个"
        "键上的权重，下方按大小排序。这些是检查点自己的权重，只屏蔽了 [PAD]。",
    },
    "finder.query": {"en": "Query token (looks)", "zh": "查询词元（看的一方）"},
    "finder.key": {"en": "Key token (looked at)", "zh": "键词元（被看的一方）"},
    "finder.chart": {
        "en": "Weight from {looking} to {looked_at}, per layer and head",
        "zh": "从 {looking} 到 {looked_at} 的权重，按层和头",
    },
    "finder.top": {"en": "Strongest heads:", "zh": "最强的头："},
    "finder.entry": {"en": "layer {layer}, head {head}: {weight}", "zh": "第 {layer} 层第 {head} 个头：{weight}"},
    "finder.show": {"en": "Show layer {layer}, head {head}", "zh": "查看第 {layer} 层第 {head} 个头"},
    "finder.uniform": {
        "en": "For comparison, uniform weights would give every key 1/{count} = {uniform}.",
        "zh": "作为对照，均匀权重会给每个键 1/{count} = {uniform}。",
    },
    "finder.link_token": {
        "en": "The link's {name} “{value}” is not a token of this text; using {used}.",
        "zh": "链接中的 {name}“{value}”不是这段文本的词元；改用 {used}。",
    },
    "chart.layer": {"en": "layer", "zh": "层"},
    # ------------------------------------------------------------ the tutorials' examples in a real model
    "example.pretrained_animal": {
        "en": "“it” → “animal” in a real model",
        "zh": "真实模型中的“it”→“animal”",
    },
    "example.pretrained_xiaoming": {
        "en": "“he” → “Xiaoming” in a Chinese model",
        "zh": "中文模型中的“他”→“小明”",
    },
    "example.pretrained_note": {
        "en": "With random weights no head points anywhere in particular; the relations of the tutorials' examples "
        "appear in trained heads. These buttons open the example in a pretrained checkpoint, with the head finder "
        "on the pair.",
        "zh": "随机权重下没有哪个头有明确的指向；教程例句中的关系出现在训练过的头里。下面的按钮在预训练检查点中打开"
        "例句，并用“找注意力头”查看这一对词元。",
    },
}
