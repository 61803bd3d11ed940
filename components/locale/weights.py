"""Messages about where the weights come from: the weight-source controls, the tokenizer, head labels."""

MESSAGES: dict[str, dict[str, str]] = {
    # ------------------------------------------------------------ controls
    "controls.weights": {"en": "Weights", "zh": "权重来源"},
    "controls.weights_help": {
        "en": "random: seeded numbers that learned nothing (every head looks alike); trained: a small task is "
        "trained here in seconds; pretrained: one layer of a real checkpoint.",
        "zh": "随机：由种子生成、什么也没学过的数（每个头都差不多）；训练：在这里用几秒钟训练一个小任务；"
        "预训练：真实检查点中的一层。",
    },
    "weights.random": {"en": "random (seeded)", "zh": "随机（由种子决定）"},
    "weights.trained": {"en": "trained on a small task", "zh": "在小任务上训练"},
    "weights.pretrained": {"en": "pretrained checkpoint", "zh": "预训练检查点"},
    "controls.task": {"en": "Task", "zh": "任务"},
    "task.previous": {"en": "copy the previous token", "zh": "复制前一个词元"},
    "task.previous_and_first": {"en": "previous token and first token", "zh": "前一个词元和第一个词元"},
    "task.previous_and_last_digit": {"en": "previous token and last digit", "zh": "前一个词元和最近的数字"},
    "task.induction": {"en": "induction (two layers)", "zh": "归纳头（两层）"},
    "task.unscramble": {"en": "unscramble your sentence", "zh": "还原打乱的句子"},
    "controls.checkpoint": {"en": "Checkpoint", "zh": "检查点"},
    "controls.checkpoint_help": {
        "en": "The checkpoints this server offers (its administrator sets the list).",
        "zh": "本服务器提供的检查点（列表由管理员设置）。",
    },
    "controls.layer": {"en": "Layer", "zh": "层"},
    "controls.layer_help": {
        "en": "Which layer's attention to show, 0 to {high}.",
        "zh": "显示哪一层的注意力，0 到 {high}。",
    },
    "controls.layer_clamped": {
        "en": "Layer {value} does not exist here; the layers are 0 to {high}. Showing the nearest.",
        "zh": "这里没有第 {value} 层；层号为 0 到 {high}。改为显示最近的一层。",
    },
    "controls.sizes_locked": {
        "en": "d_model = **{d_model}**, num_heads = **{num_heads}** (d_k = {d_k}) come from the checkpoint "
        "and cannot be changed; your own values come back with the other weights.",
        "zh": "d_model = **{d_model}**、头数 = **{num_heads}**（d_k = {d_k}）由检查点决定，不能修改；"
        "换回其他权重来源时会恢复你自己的取值。",
    },
    "controls.tokenizer": {"en": "Chinese without spaces", "zh": "无空格的中文"},
    "controls.tokenizer_help": {
        "en": "Spaces always separate tokens: three words typed with spaces are three tokens. Chinese typed "
        "without spaces is cut into characters (six characters, six tokens) or into words by the jieba segmenter.",
        "zh": "空格总是分隔词元（“小明 喜欢 打球”是三个）。没有空格的文本按字切分（“小明喜欢打球”是六个），"
        "或用 jieba 分词器按词切分（三个）。",
    },
    "tokenizer.characters": {"en": "one token per character", "zh": "按字"},
    "tokenizer.words": {"en": "words (jieba)", "zh": "按词（jieba）"},
    "controls.tokenizer_checkpoint": {
        "en": "The checkpoint cuts the text with its own tokenizer ([CLS], word pieces, [SEP]).",
        "zh": "检查点用它自己的分词器切分文本（[CLS]、子词、[SEP]）。",
    },
    "controls.seed_help_trained": {
        "en": "Same seed, same starting weights and training data: the same trained model.",
        "zh": "相同的种子，相同的初始权重和训练数据：训练出相同的模型。",
    },
    "controls.seed_help_pretrained": {
        "en": "A checkpoint's weights do not depend on a seed.",
        "zh": "检查点的权重与随机种子无关。",
    },
    "controls.positional_trained": {
        "en": "A trained model learns its own position vectors (sinusoidal and none train the same model); RoPE trains "
        "one that rotates q and k instead and has no position vectors.",
        "zh": "训练的模型会学习自己的位置向量（正弦和无训练的是同一个模型）；RoPE 训练的模型改为旋转 q 和 k，"
        "没有位置向量。",
    },
    "controls.positional_pretrained": {
        "en": "The checkpoint brings its own positions: learned position embeddings (BERT, GPT-2, ViT) or rotary "
        "positions with its own rope_theta (Llama, Qwen2).",
        "zh": "检查点自带位置信息：可学习的位置嵌入（BERT、GPT-2、ViT），或按它自己的 rope_theta 做的旋转位置编码"
        "（Llama、Qwen2）。",
    },
    "controls.dtype": {"en": "Number type", "zh": "数值类型"},
    "controls.dtype_help": {
        "en": "float32 as in training; float64 shows the same numbers with about 16 digits instead of 7.",
        "zh": "float32 与训练时相同；float64 给出同样的数，但精度约 16 位而不是 7 位。",
    },
    # ------------------------------------------------------------ choices that cannot run
    "error.weights.unknown": {
        "en": "Unknown weights “{value}”; choose one of: {choices}.",
        "zh": "未知的权重来源“{value}”；请从 {choices} 中选择。",
    },
    "error.task.unknown": {
        "en": "Unknown task “{value}”; choose one of: {choices}.",
        "zh": "未知的任务“{value}”；请从 {choices} 中选择。",
    },
    "error.checkpoint.unknown": {
        "en": "“{value}” is not on this server's list of checkpoints; choose one of: {choices}.",
        "zh": "“{value}”不在本服务器的检查点列表中；请从 {choices} 中选择。",
    },
    "error.layer.out_of_range": {
        "en": "Layer {value} is outside {low}..{high}; choose a layer in that range.",
        "zh": "第 {value} 层超出 {low}..{high} 的范围；请选择此范围内的层。",
    },
    "error.tokenizer.unknown": {
        "en": "Unknown tokenizer “{value}”; choose one of: {choices}.",
        "zh": "未知的分词方式“{value}”；请从 {choices} 中选择。",
    },
    "error.d_model.too_big_to_train": {
        "en": "Training here is limited to d_model ≤ {d_model_max} and num_heads ≤ {num_heads_max} "
        "(asked: {d_model} and {num_heads}); choose smaller sizes, for example 64 and 2.",
        "zh": "这里的训练限于 d_model ≤ {d_model_max}、头数 ≤ {num_heads_max}（当前为 {d_model} 和 {num_heads}）；"
        "请选择更小的尺寸，例如 64 和 2。",
    },
    "source.generic": {
        "en": "These weights cannot be loaded here ({message}); showing random weights.",
        "zh": "这里无法加载这些权重（{message}）；改为显示随机权重。",
    },
    # ------------------------------------------------------------ presentation mode
    "teacher.control.weights": {"en": "weights", "zh": "权重来源"},
    "teacher.control.task": {"en": "task", "zh": "任务"},
    "teacher.control.checkpoint": {"en": "checkpoint", "zh": "检查点"},
    "teacher.control.hub_id": {"en": "a hub id of your own", "zh": "自选模型编号"},
    "teacher.control.patch": {"en": "patch size", "zh": "图块大小"},
    "teacher.control.image": {"en": "image", "zh": "图像"},
    "teacher.control.layer": {"en": "layer", "zh": "层"},
    "teacher.control.tokenizer": {"en": "tokenizer", "zh": "分词方式"},
    "teacher.control.dtype": {"en": "number type", "zh": "数值类型"},
    # ------------------------------------------------------------ head labels
    "label.previous token": {"en": "previous token", "zh": "前一个词元"},
    "label.next token": {"en": "next token", "zh": "后一个词元"},
    "label.first token": {"en": "first token", "zh": "第一个词元"},
    "label.itself": {"en": "itself", "zh": "自身"},
    "label.broad": {"en": "broad", "zh": "分散"},
    "label.with_share": {"en": "{label} {share}", "zh": "{label} {share}"},
    "step2.labels_title": {"en": "What each head does, read from its weights:", "zh": "每个头在做什么（从权重读出）："},
    "step2.labels_note": {
        "en": "A head is labelled with the relation that gets most of its weight (previous token, next token, "
        "first token, itself, or a pattern of the task) when that is at least half of it and twice what uniform "
        "weights would give; otherwise it is broad, and the number is the best relation's share.",
        "zh": "如果某种关系（前一个词元、后一个词元、第一个词元、自身，或任务中的某种模式）得到一个头的大部分权重——"
        "至少一半，并且是均匀权重的两倍以上——就用它来标注这个头；否则标为“分散”，数字是最强关系所占的比例。",
    },
}
