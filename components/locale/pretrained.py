"""Messages about pretrained checkpoints: loading, refusals, token notes, the check against them, the head finder."""

MESSAGES: dict[str, dict[str, str]] = {
    # ------------------------------------------------------------ a checkpoint that cannot be used here
    "source.unlisted": {
        "en": "“{name}” is not on this server's list of checkpoints; showing random weights.",
        "zh": "“{name}”不在本服务器的检查点列表中；改为显示随机权重。",
    },
    "source.missing": {
        "en": "The checkpoint “{name}” is listed, but its folder on this server holds no checkpoint (config.json, "
        "weights, and a tokenizer or an image processor). The administrator can fix its entry in "
        "ATTN_PLAYGROUND_CHECKPOINTS. Showing random weights.",
        "zh": "检查点“{name}”在列表中，但它在本服务器上的文件夹里没有检查点（config.json、权重，"
        "以及分词器或图像预处理器）。管理员可以修改 ATTN_PLAYGROUND_CHECKPOINTS 中的这一项。改为显示随机权重。",
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
        "en": "“{name}” is a {model_type} model: this page reads one layer of the model types {supported} and no "
        "other architecture. Showing random weights.",
        "zh": "“{name}”是 {model_type} 模型：本页只读取模型类型 {supported} 中的一层，不支持其他结构。"
        "改为显示随机权重。",
    },
    # ------------------------------------------------------------ a learner's own hub checkpoint (hub_id)
    "source.any_off": {
        "en": "This server does not load a checkpoint of your own (“{name}”); choose one from its list. The "
        "administrator can allow it with ATTN_PLAYGROUND_ANY_CHECKPOINT_MB. Showing random weights.",
        "zh": "本服务器不加载你自己指定的检查点（“{name}”）；请从列表中选择一个。管理员可以用 "
        "ATTN_PLAYGROUND_ANY_CHECKPOINT_MB 开启这一功能。改为显示随机权重。",
    },
    "source.bad_hub_id": {
        "en": "“{name}” is not a Hugging Face hub id: write it as owner/name (for example `distilbert/distilgpt2`), "
        "without a path or a link. Showing random weights.",
        "zh": "“{name}”不是 Hugging Face 模型编号：请写成“所有者/名称”的形式（例如 `distilbert/distilgpt2`），"
        "不要写路径或链接。改为显示随机权重。",
    },
    "source.too_large": {
        "en": "“{name}” has {size_mb} MB of weights; this server loads a checkpoint of your own up to {cap_mb} MB. "
        "Choose a smaller one. Nothing was downloaded; showing random weights.",
        "zh": "“{name}”的权重有 {size_mb} MB；本服务器只加载不超过 {cap_mb} MB 的自选检查点。请换一个更小的。"
        "没有下载任何文件；改为显示随机权重。",
    },
    "source.no_safetensors": {
        "en": "“{name}” has no safetensors weights (model.safetensors): for a checkpoint of your own this server "
        "loads only those, never pickled pytorch_model.bin files. Nothing was downloaded; showing random weights.",
        "zh": "“{name}”没有 `safetensors` 格式的权重（model.safetensors）：对于自选检查点，本服务器只加载这种格式，"
        "从不加载 `pickle` 格式的 pytorch_model.bin。没有下载任何文件；改为显示随机权重。",
    },
    "source.remote_code": {
        "en": "“{name}” would need its repository's own Python code ({where} has an auto_map): this server never "
        "runs it. Choose a BERT, GPT-2, Llama, Qwen2 or ViT checkpoint that runs without it. Nothing was "
        "downloaded; showing random weights.",
        "zh": "“{name}”需要运行它仓库里自带的 Python 代码（{where} 中有 auto_map）：本服务器从不运行这种代码。"
        "请选择无需它就能运行的 BERT、GPT-2、Llama、Qwen2 或 ViT 检查点。没有下载任何文件；改为显示随机权重。",
    },
    "url.hub_id_off": {
        "en": "The link names a checkpoint of your own (`{name}` = “{value}”), which this server does not load: "
        "it was left out.",
        "zh": "链接指定了一个自选检查点（`{name}` = “{value}”），本服务器不加载这种检查点：已忽略。",
    },
    "url.hub_id_form": {
        "en": "The link's `{name}` “{value}” is not a hub id of the form owner/name: it was left out.",
        "zh": "链接中的 `{name}` “{value}”不是“所有者/名称”形式的模型编号：已忽略。",
    },
    "controls.mask_causal_checkpoint": {
        "en": "This checkpoint is a causal language model: its layer always runs under its own causal mask; "
        "`padding` also blocks the [PAD] keys, and a window is not applied.",
        "zh": "这个检查点是因果语言模型：它的这一层总是在自己的因果掩码下运行；"
        "选 `padding` 会再屏蔽 [PAD] 键，窗口掩码不会生效。",
    },
    "controls.hub_id": {"en": "…or a hub id of your own", "zh": "……或你自己的模型编号"},
    "controls.hub_id_help": {
        "en": "Any Hugging Face model of the BERT, GPT-2, Llama, Qwen2 or ViT family, as owner/name (for example "
        "`distilbert/distilgpt2`), up to {cap_mb} MB of safetensors weights. It replaces the list's choice; "
        "empty it to go back to the list.",
        "zh": "任何 BERT、GPT-2、Llama、Qwen2 或 ViT 系列的 Hugging Face 模型，写成“所有者/名称”"
        "（例如 `distilbert/distilgpt2`），safetensors 权重不超过 {cap_mb} MB。"
        "填写后取代列表中的选择；清空即回到列表。",
    },
    "error.hub_id.bad_form": {
        "en": "The hub id “{value}” is not of the form owner/name (for example `distilbert/distilgpt2`).",
        "zh": "模型编号“{value}”不是“所有者/名称”的形式（例如 `distilbert/distilgpt2`）。",
    },
    "error.hub_id.any_off": {
        "en": "This server does not load a checkpoint of your own (“{value}”); choose one from its list.",
        "zh": "本服务器不加载你自己指定的检查点（“{value}”）；请从列表中选择一个。",
    },
    "source.too_big": {
        "en": "“{name}” (hidden size {d_model}, {num_heads} heads, {layers} layers) is beyond this server's "
        "limits; showing random weights.",
        "zh": "“{name}”（隐藏维度 {d_model}、{num_heads} 个头、{layers} 层）超出了本服务器的限制；改为显示随机权重。",
    },
    "source.too_many_tokens": {
        "en": "“{name}” reads every image as {count} tokens ([CLS] and its patches); this server shows at most {high}. "
        "Choose a checkpoint with fewer or larger patches; showing random weights.",
        "zh": "“{name}”把每张图像读成 {count} 个词元（[CLS] 和它的图像块）；本服务器最多显示 {high} 个。"
        "请换一个图像块更少或更大的检查点；改为显示随机权重。",
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
    "notes.byte_pieces": {
        "en": "{count} of the {total} tokens are pieces of a character: the byte-level vocabulary of {checkpoint} has "
        "no token for it, so it cuts the character's `UTF-8` bytes into several tokens (shown as �).",
        "zh": "{total} 个词元中有 {count} 个是某个字符的碎片：{checkpoint} 的字节级词表里没有这个字符，"
        "于是把它的 `UTF-8` 字节切成几个词元（显示为 �）。",
    },
    # ------------------------------------------------------------ GPT-2: what its reader must know
    "notes.family_gpt2": {
        "en": "{checkpoint} is a GPT-2, a causal language model. Its layer is read differently from BERT's: "
        "`c_attn` is one `Conv1D` whose weight is stored (in, out), transposed against `nn.Linear`'s (out, in), "
        "with Q, K and V side by side; the page splits it in three and transposes each into W_q, W_k, W_v, and "
        "`c_proj`, transposed, is W_o. GPT-2 normalises before attention (Pre-Norm): the layer's input is `ln_1` "
        "of the residual stream, to which the position embedding was added once, before layer 0. Every layer runs "
        "under the causal mask (each token sees itself and the tokens before it), whatever mask the sidebar names; "
        "the padding mask still blocks [PAD] keys on top.",
        "zh": "{checkpoint} 是 GPT-2，一个因果语言模型。读取它的层和 BERT 不同：`c_attn` 是一个 `Conv1D`，"
        "它的权重按 (输入, 输出) 存放，与 `nn.Linear` 的 (输出, 输入) 互为转置，而且 Q、K、V 并排放在一起；"
        "本页把它切成三份，各自转置后成为 W_q、W_k、W_v，`c_proj` 转置后就是 W_o。GPT-2 在注意力之前做归一化"
        "（Pre-Norm）：这一层的输入是残差流经过 `ln_1` 的结果，位置嵌入只在第 0 层之前加过一次。每一层都在因果掩码下"
        "运行（每个词元只能看到自己和它之前的词元），与侧边栏选择的掩码无关；填充掩码仍会额外屏蔽 [PAD] 键。",
    },
    "notes.gpt2_unframed": {
        "en": "Its tokenizer (a byte-level BPE) adds no [CLS] and no [SEP]: every token is a piece of your text, and a "
        "word's leading space belongs to its token (“ animal”). With nothing else to look at, GPT-2 heads often "
        "rest on the first token.",
        "zh": "它的分词器（字节级的字节对编码（BPE））不加 [CLS] 也不加 [SEP]：每个词元都是你文本的一部分，"
        "单词前面的空格也属于这个词元（“ animal”）。没有其他可看的位置时，GPT-2 的头常常停在第一个词元上。",
    },
    "notes.gpt2_framed": {
        "en": "Its tokenizer is a BERT tokenizer: it adds [CLS] before your text and [SEP] after it, as in the "
        "checkpoint's training. The model is still causal: each token sees only itself and the tokens before it.",
        "zh": "它的分词器是 BERT 分词器：在你的文本前加 [CLS]、后加 [SEP]，和这个检查点训练时一样。"
        "模型仍然是因果的：每个词元只能看到自己和它之前的词元。",
    },
    # ------------------------------------------------------------ Llama and Qwen2: what their reader must know
    "notes.family_llama": {
        "en": "{checkpoint} is a Llama, a causal language model. Its layer holds `q_proj`, `k_proj`, `v_proj` and "
        "`o_proj`, which are W_q, W_k, W_v and W_o as they are, with no biases unless its config.json sets "
        "`attention_bias` (false by default); where they have none, neither has the page's layer. Llama "
        "normalises before attention with RMSNorm (Pre-Norm): the layer's input is `input_layernorm` of the "
        "residual stream, to which no position was added. Positions enter as rotations (RoPE) instead: after the "
        "split into heads, each head's q and k are turned by their position, feature i paired with feature "
        "i + d_k/2, at angles set by the checkpoint's own rope_theta = {rope_base}; v is not turned. Every layer "
        "runs under the causal mask (each token sees itself and the tokens before it), whatever mask the sidebar "
        "names.",
        "zh": "{checkpoint} 是 Llama，一个因果语言模型。它的层包含 `q_proj`、`k_proj`、`v_proj` 和 `o_proj`，"
        "原样就是 W_q、W_k、W_v 和 W_o；除非它的 config.json 设置了 `attention_bias`（默认为 `false`），它们没有偏置；"
        "它们没有偏置时，本页的层也没有。"
        "Llama 在注意力之前用均方根归一化（RMSNorm）做归一化（Pre-Norm）：这一层的输入是残差流经过 "
        "`input_layernorm` 的结果，残差流中没有加过位置。位置改以旋转的方式进入，即旋转位置编码（RoPE）：拆分成头之后，"
        "每个头的 q 和 k 按各自的位置旋转，第 i 个特征与第 i + d_k/2 个特征成对，旋转角度由检查点自己的 "
        "rope_theta = {rope_base} 决定；v 不旋转。每一层都在因果掩码下运行（每个词元只能看到自己和它之前的词元），"
        "与侧边栏选择的掩码无关。",
    },
    "notes.family_qwen2": {
        "en": "{checkpoint} is a Qwen2, a causal language model read like a Llama: `q_proj`, `k_proj`, `v_proj` "
        "and `o_proj` are W_q, W_k, W_v and W_o as they are. Unlike Llama's, its `q_proj`, `k_proj` and `v_proj` "
        "have biases and its `o_proj` has none: the page's layer copies the three and gives W_o a zero bias, which "
        "adds nothing. Qwen2 normalises before attention with RMSNorm (Pre-Norm): the layer's input is "
        "`input_layernorm` of the residual stream, to which no position was added. Positions enter as rotations "
        "(RoPE) instead: after the split into heads, each head's q and k are turned by their position, feature i "
        "paired with feature i + d_k/2, at angles set by the checkpoint's own rope_theta = {rope_base}; v is not "
        "turned. Every layer runs under the causal mask (each token sees itself and the tokens before it), "
        "whatever mask the sidebar names; a Qwen2 with sliding-window attention turned on is not read here.",
        "zh": "{checkpoint} 是 Qwen2，一个因果语言模型，读取方式与 Llama 相同：`q_proj`、`k_proj`、`v_proj` 和 "
        "`o_proj` 原样就是 W_q、W_k、W_v 和 W_o。与 Llama 不同的是，它的 `q_proj`、`k_proj` 和 `v_proj` 有偏置，"
        "`o_proj` 没有：本页的层复制这三个偏置，并给 W_o 一个全零的偏置，它不改变任何结果。Qwen2 在注意力之前用"
        "均方根归一化（RMSNorm）做归一化（Pre-Norm）：这一层的输入是残差流经过 `input_layernorm` 的结果，"
        "残差流中没有加过位置。位置改以旋转的方式进入，即旋转位置编码（RoPE）：拆分成头之后，每个头的 q 和 k "
        "按各自的位置旋转，第 i 个特征与第 i + d_k/2 个特征成对，旋转角度由检查点自己的 rope_theta = {rope_base} "
        "决定；v 不旋转。每一层都在因果掩码下运行（每个词元只能看到自己和它之前的词元），与侧边栏选择的掩码无关；"
        "开启了滑动窗口注意力的 Qwen2 本页不读取。",
    },
    "notes.grouped_kv": {
        "en": "{checkpoint} has {heads} query heads but {kv_heads} key/value heads (grouped-query attention): W_k "
        "and W_v make {kv_heads} heads of d_k features each, and query head h reads key/value head h // {group}, "
        "so {group} query heads in a row share one. The weights are still one map per query head.",
        "zh": "{checkpoint} 有 {heads} 个查询头，但只有 {kv_heads} 个键/值头，即分组查询注意力（GQA）：W_k 和 W_v "
        "只产生 {kv_heads} 个头，每个头 d_k 个特征；第 h 个查询头读取第 h // {group} 个键/值头，所以相邻的 {group} "
        "个查询头共用一个。注意力权重仍然是每个查询头一张图。",
    },
    "notes.zero_bias": {
        "en": "{checkpoint}'s {names} has no bias: the page's layer holds a zero one there (it adds nothing), so "
        "the counts on this page include {count} parameters the checkpoint does not hold.",
        "zh": "{checkpoint} 的 {names} 没有偏置：本页的层在那里放了一个全零偏置（不改变任何结果），所以本页的参数量"
        "比检查点本身多 {count} 个。",
    },
    "notes.llama_framed": {
        "en": "Its tokenizer adds tokens of its own to every text (a start token such as `<s>` before it, for "
        "example); "
        "they are shown with your text's tokens, and the model reads them like the others.",
        "zh": "它的分词器会给每段文本加上自己的词元（例如在文本前面加上 `<s>` 这样的起始词元）；"
        "这些词元和你文本的词元一起显示，模型也像读其他词元一样读它们。",
    },
    "notes.llama_unframed": {
        "en": "Its tokenizer adds no token of its own (no start token): every token is a piece of your text.",
        "zh": "它的分词器不加任何自己的词元（没有起始词元）：每个词元都是你文本的一部分。",
    },
    # ------------------------------------------------------------ ViT: what its reader must know
    "notes.family_vit": {
        "en": "{checkpoint} is a Vision Transformer: its first token is [CLS], and the image's patches of {patch} × "
        "{patch} pixels follow in reading order, row by row ({grid} patches; r0c1 is row 0, column 1). Its own image "
        "processor made the picture into {size} pixels, rescaled and normalised, as in its training. Its layer "
        "holds `q_proj`, `k_proj`, `v_proj` and `o_proj` (in the files `attention.attention.query`, `key`, `value` "
        "and `attention.output.dense`), which are W_q, W_k, W_v and W_o as they are. ViT normalises before "
        "attention (Pre-Norm): the layer's input is `layernorm_before` of the residual stream. Every patch sees "
        "every other: the checkpoint uses no mask.",
        "zh": "{checkpoint} 是视觉 Transformer（ViT）：它的第一个词元是 [CLS]，后面是图像中 {patch} × {patch} 像素的"
        "图像块，按阅读顺序逐行排列（共 {grid} 个图像块；r0c1 表示第 0 行第 1 列）。它自己的图像预处理器把图片变成 "
        "{size} 像素，再缩放取值并归一化，和训练时一样。它的层包含 `q_proj`、`k_proj`、`v_proj` 和 `o_proj`"
        "（在文件中名为 `attention.attention.query`、`key`、`value` 和 `attention.output.dense`），"
        "原样就是 W_q、W_k、W_v 和 W_o。"
        "ViT 在注意力之前做归一化（Pre-Norm）：这一层的输入是残差流经过 `layernorm_before` 的结果。每个图像块都能看到"
        "其他所有图像块：检查点不使用掩码。",
    },
    "notes.deit_dist": {
        "en": "{checkpoint} is a distilled DeiT: after [CLS] comes a second token of its own, [DIST] (distillation), "
        "which learnt to predict what a teacher network predicted. The patches follow them.",
        "zh": "{checkpoint} 是经过蒸馏的 `DeiT`：[CLS] 之后还有它自己的第二个特殊词元 [DIST]（蒸馏词元），"
        "它学会了预测教师网络的预测结果。图像块排在这两个词元之后。",
    },
    "label.[SEP]": {"en": "[SEP]", "zh": "[SEP]"},
    # ------------------------------------------------------------ the check against the checkpoint itself
    "check.checkpoint_pass": {
        "en": "✓ Matches the checkpoint **{checkpoint}** itself, layer {layer}: max |Δ weights| = {weights} against "
        "its `attentions[{layer}]` (tolerance {tol}), max |Δ output| = {out} against its attention block (tolerance "
        "{tol_out}).",
        "zh": "✓ 与检查点 **{checkpoint}** 本身的第 {layer} 层一致：与它的 `attentions[{layer}]` 相比权重最大差 "
        "|Δ| = {weights}（容差 {tol}），与它的注意力块相比输出最大差 |Δ| = {out}（容差 {tol_out}）。",
    },
    "check.checkpoint_fail": {
        "en": "✗ Differs from the checkpoint **{checkpoint}** itself, layer {layer}: max |Δ weights| = {weights} "
        "(tolerance {tol}), max |Δ output| = {out} (tolerance {tol_out}).",
        "zh": "✗ 与检查点 **{checkpoint}** 本身的第 {layer} 层不一致：权重最大差 |Δ| = {weights}（容差 {tol}），"
        "输出最大差 |Δ| = {out}（容差 {tol_out}）。",
    },
    "check.checkpoint_scaled": {
        "en": "The output's tolerance is {tol} × its largest |value| here, {scale}: float32 keeps about 7 significant "
        "digits, so the same sums in another order differ in proportion to the numbers' size.",
        "zh": "这里输出的容差是 {tol} × 它的最大绝对值 {scale}：float32 大约只保留 7 位有效数字，同样的求和换个顺序，"
        "差异与数值本身的大小成正比。",
    },
    "check.checkpoint_what_if": {
        "en": "The comparison with the checkpoint **{checkpoint}** does not apply: the checkpoint was run without "
        "this mask (every token sees every other, only [PAD] is masked), so this mask is a “what if” of yours. "
        "Choose no mask or the padding mask to compare.",
        "zh": "与检查点 **{checkpoint}** 的比较在这里不适用：检查点运行时没有使用这个掩码（每个词元都能看到其他所有"
        "词元，只屏蔽 [PAD]），所以这个掩码是你的“假设”。选择不加掩码或填充掩码即可比较。",
    },
    "check.checkpoint_what_if_image": {
        "en": "The comparison with the checkpoint **{checkpoint}** does not apply: the checkpoint was run without a "
        "mask (every patch sees every other), so this mask is a “what if” of yours. Choose no mask to compare.",
        "zh": "与检查点 **{checkpoint}** 的比较在这里不适用：检查点运行时不使用掩码（每个图像块都能看到其他"
        "所有图像块），所以这个掩码是你的“假设”。选择不加掩码即可比较。",
    },
    "check.checkpoint_pad_unmasked": {
        "en": "The comparison with the checkpoint **{checkpoint}** does not apply: the checkpoint masks the [PAD] "
        "tokens, this page's mask does not. Choose the padding mask to compare.",
        "zh": "与检查点 **{checkpoint}** 的比较在这里不适用：检查点屏蔽了 [PAD] 词元，而本页的掩码没有。"
        "选择填充掩码即可比较。",
    },
    "check.checkpoint_how_gpt2": {
        "en": "The checkpoint's own forward pass on the same text, under its causal mask: its weights are "
        "`attentions[layer]` (output_attentions=True, eager attention), its output is what attn.c_proj returns "
        "(a forward hook), before dropout and the residual connection. Our layer's input is ln_1 of "
        "`hidden_states[layer]`. It runs in float32.",
        "zh": "检查点在同一段文本上、在它的因果掩码下自己的前向计算：它的权重是 `attentions[layer]`"
        "（output_attentions=True，`attn_implementation='eager'`），它的输出是 attn.c_proj 的返回值（前向钩子），"
        "在 dropout 和残差连接之前。本页这一层的输入是 `hidden_states[layer]` 经过 ln_1 的结果。它以 float32 运行。",
    },
    "check.checkpoint_how_llama": {
        "en": "The checkpoint's own forward pass on the same text, under its causal mask: its weights are "
        "`attentions[layer]` (output_attentions=True, eager attention; one map per query head, {kv_heads}), its "
        "output is what self_attn.o_proj returns (a forward hook), before the "
        "residual connection. Our layer's input is input_layernorm of `hidden_states[layer]`. The checkpoint turns "
        "q and k with the cos and sin of its own `rotary_emb`; our layer computes them from the same rope_theta. "
        "It runs in float32.",
        "zh": "检查点在同一段文本上、在它的因果掩码下自己的前向计算：它的权重是 `attentions[layer]`"
        "（output_attentions=True，`attn_implementation='eager'`；每个查询头一张图，{kv_heads}），"
        "它的输出是 self_attn.o_proj 的返回值（前向钩子），在残差连接之前。本页这一层的输入是 "
        "`hidden_states[layer]` 经过 input_layernorm 的结果。检查点用它自己的 `rotary_emb` 算出的 cos 和 sin "
        "旋转 q 和 k；本页的层用同一个 rope_theta 自己计算它们。它以 float32 运行。",
    },
    "check.kv_repeated": {
        "en": "each of its {kv} key/value heads repeated by `repeat_kv` for its {group} query heads",
        "zh": "它的 {kv} 个键/值头各自由 `repeat_kv` 为 {group} 个查询头复制",
    },
    "check.kv_own": {
        "en": "each query head with a key/value head of its own, so `repeat_kv` repeats nothing",
        "zh": "每个查询头都有自己的键/值头，所以 `repeat_kv` 不做复制",
    },
    "check.checkpoint_how_vit": {
        "en": "The checkpoint's own forward pass on the same image, made by its own image processor: its weights "
        "are `attentions[layer]` (output_attentions=True, eager attention), its output is what attention.o_proj "
        "returns (a forward hook), before dropout and the residual connection. Our layer's input is "
        "layernorm_before of `hidden_states[layer]`. It runs in float32.",
        "zh": "检查点在同一张图像（由它自己的图像预处理器处理）上自己的前向计算：它的权重是 `attentions[layer]`"
        "（output_attentions=True，`attn_implementation='eager'`），它的输出是 attention.o_proj 的返回值（前向钩子），"
        "在 dropout 和残差连接之前。本页这一层的输入是 `hidden_states[layer]` 经过 layernorm_before 的结果。"
        "它以 float32 运行。",
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
    "finder.what_image": {
        "en": "Pick a token that looks (the query; [CLS] is the one a classifier reads) and a patch it might look at "
        "(the key): the map shows the weight each head of each layer of {checkpoint} puts on that key from that "
        "query, and the list ranks them. These are the checkpoint's own weights, with no mask.",
        "zh": "选一个“看”的词元（查询；分类器读取的是 [CLS]）和它可能看向的图像块（键）：下图显示 {checkpoint} "
        "每一层的每个头从这个查询放在这个键上的权重，下方按大小排序。这些是检查点自己的权重，没有掩码。",
    },
    "finder.what_causal": {
        "en": "Pick a token that looks (the query) and a token before it (the key): the map shows the weight each "
        "head of each layer of {checkpoint} puts on that key from that query, and the list ranks them. These are "
        "the checkpoint's own weights, under its causal mask: a key after the query always gets 0.",
        "zh": "选一个“看”的词元（查询）和它前面的一个词元（键）：下图显示 {checkpoint} 每一层的每个头从这个查询放在"
        "这个键上的权重，下方按大小排序。这些是检查点自己在因果掩码下的权重：查询之后的键权重总是 0。",
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
    # ------------------------------------------------------------ the pattern search (causal checkpoints)
    "patterns.title": {
        "en": "Pattern search: previous-token and induction heads",
        "zh": "按模式找头：前一个词元头和归纳头",
    },
    "patterns.what": {
        "en": "Two patterns causal language models are known for, scored over every head of every layer of "
        "{checkpoint}. A **previous-token** head looks one token back: its score is its mean weight on token i−1 "
        "over your text. An **induction** head looks at the token that came right after an earlier copy of the "
        "current token (… A B … A → B): its score is measured on {half} random tokens repeated once, as the mean "
        "weight from each token of the second copy on the token after its first copy. Both are the checkpoint's "
        "own weights.",
        "zh": "因果语言模型中有两种著名的模式，这里在 {checkpoint} 所有层的所有头上打分。**前一个词元**头往回看一个"
        "词元：得分是它在你的文本上放在第 i−1 个词元上的平均权重。**归纳**头看的是当前词元上一次出现时紧随其后的那个"
        "词元（… A B … A → B）：得分在 {half} 个随机词元重复一遍的序列上测量，是第二遍中每个词元放在它第一次出现时"
        "下一个词元上的平均权重。两者都是检查点自己的权重。",
    },
    "patterns.previous_chart": {"en": "Previous-token score", "zh": "前一个词元得分"},
    "patterns.induction_chart": {"en": "Induction score", "zh": "归纳得分"},
    "patterns.score": {"en": "score", "zh": "得分"},
    "patterns.top": {"en": "Strongest {label} heads:", "zh": "最强的{label}头："},
    "patterns.uniform": {
        "en": "For comparison, uniform weights under the causal mask would score {previous} (previous token, on "
        "your text) and {induction} (induction).",
        "zh": "作为对照，因果掩码下的均匀权重得分为 {previous}（前一个词元，在你的文本上）和 {induction}（归纳）。",
    },
    "patterns.published": {
        "en": "Published for GPT-2 small (12 layers, layer.head from 0): previous-token heads 2.2 and 4.11; induction "
        "heads 5.1, 5.5, 6.9, 7.2 and 7.10 (`docs/HEADS.md` gives the sources). Another checkpoint has heads of "
        "its own.",
        "zh": "已发表的最小版 GPT-2（GPT-2 small）结果（12 层，层.头 从 0 起数）：前一个词元头 2.2 和 4.11；"
        "归纳头 5.1、5.5、6.9、7.2 和 7.10（出处见 `docs/HEADS.md`）。别的检查点有它自己的头。",
    },
    "patterns.repeat": {
        "en": "Repeat my text twice (so that induction heads have a copy to find)",
        "zh": "把我的文本重复一遍（让归纳头有可找的副本）",
    },
    "patterns.repeat_help": {
        "en": "The head labels of the steps read your text: a head is labelled induction where your text repeats.",
        "zh": "各步骤中的头标签读取的是你的文本：文本有重复时，头才会被标为“归纳”。",
    },
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
    # ------------------------------------------------------------ where the checkpoint's own forward ran
    "pretrained.ran_on": {
        "en": "The checkpoint's own forward ran on **{device}**.",
        "zh": "检查点自己的前向计算在 **{device}** 上运行。",
    },
    "pretrained.out_of_memory": {
        "en": "{device} ran out of memory running {checkpoint} ({parameters} parameters, {megabytes} MiB in float32), "
        "so its forward ran on the CPU instead.",
        "zh": "{device} 运行 {checkpoint}（{parameters} 个参数，float32 下 {megabytes} MiB）时内存不足，"
        "所以它的前向计算改在 CPU 上运行。",
    },
    "notes.out_of_memory_checkpoint": {
        "en": "{device} ran out of memory running {checkpoint} ({parameters} parameters, {megabytes} MiB in float32), "
        "so this run is on the CPU.",
        "zh": "{device} 运行 {checkpoint}（{parameters} 个参数，float32 下 {megabytes} MiB）时内存不足，"
        "所以这次运行改在 CPU 上。",
    },
    "notes.out_of_memory_layer": {
        "en": "{device} ran out of memory running this layer (d_model {d_model}, {heads} heads, {tokens} tokens), "
        "so this run is on the CPU.",
        "zh": "{device} 运行这一层（d_model {d_model}，{heads} 个头，{tokens} 个词元）时内存不足，"
        "所以这次运行改在 CPU 上。",
    },
}
