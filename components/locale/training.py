"""Messages of trained weights: the tasks, training and its progress, the timeline, the notes of a trained run."""

MESSAGES: dict[str, dict[str, str]] = {
    # ------------------------------------------------------------ the task
    "training.title": {"en": "Training: {task}", "zh": "训练：{task}"},
    "training.task.previous": {
        "en": "**Copy the previous token.** The input is a row of 12 random digits and letters; at each "
        "position i the model must output the token at i − 1. One relation is enough, so every head learns "
        "the same thing: look one step back. More heads do not make more relations: the task decides.",
        "zh": "**复制前一个词元。** 输入是一行 12 个随机的数字和字母；在每个位置 i，模型要输出位置 i − 1 上的词元。"
        "一种关系就够了，所以每个头都学到同一件事：往回看一步。头多了，关系并不会变多：关系由任务决定。",
    },
    "training.task.previous_and_first": {
        "en": "**Previous token and first token.** Two outputs at each position i: the token at i − 1 and the "
        "token at position 0. Two relations: with 2 heads one head learns to look one step back and the other "
        "at the first token. With 1 head it cannot look at both places sharply: try it and watch the accuracy.",
        "zh": "**前一个词元和第一个词元。** 每个位置 i 有两个输出：位置 i − 1 的词元和位置 0 的词元。两种关系："
        "有 2 个头时，一个头学会往回看一步，另一个头看第一个词元。只有 1 个头时，它无法同时清楚地看两个地方："
        "试试看，留意准确率。",
    },
    "training.task.previous_and_last_digit": {
        "en": "**Previous token and last digit.** The input mixes letters and digits. Two outputs at i: the "
        "token at i − 1, and the most recent digit before i. A positional head (one step back) next to a "
        "content head (it looks for digits, and among them the nearest one before it).",
        "zh": "**前一个词元和最近的数字。** 输入混合了字母和数字。位置 i 有两个输出：位置 i − 1 的词元，以及 i "
        "之前最近的一个数字。一个按位置工作的头（往回看一步）旁边是一个按内容工作的头（找数字，并在其中找 i "
        "之前最近的那个）。",
    },
    "training.task.induction": {
        "en": "**Induction (two layers).** Distinct tokens, one stretch of them repeated later "
        "(`a b c d x y a b c`). At a token seen before, the output is the token that followed it last time "
        "(after the second `a` comes `b`). Layer 0 learns a previous-token head: each position takes in the "
        "token before it. Layer 1 learns induction heads: they look for the position whose previous token is "
        "their own token, and copy what is there. Trained with the causal mask.",
        "zh": "**归纳头（两层）。** 一串各不相同的词元，其中一段后来又重复出现（`a b c d x y a b c`）。"
        "在一个之前出现过的词元处，输出是上次紧跟在它后面的词元（第二个 `a` 之后是 `b`）。"
        "第 0 层学会一个“前一个词元”头：每个位置收进它前面的词元。"
        "第 1 层学会归纳头：寻找“前一个词元正是我自己”的位置，并把那里的词元复制过来。"
        "训练时使用因果掩码。",
    },
    "training.task.unscramble": {
        "en": "**Unscramble your sentence.** The words of your sentence (the text box) are shuffled, and as "
        "many blanks `_` follow, where the model writes the sentence back in order: at blank k it must name "
        "the position, in the shuffled half, of word k. A blank knows only its own position, so a head has "
        "to learn that blank k looks for word k, and point at it. Every training sequence is a new shuffle, "
        "except for the orders set aside before training (a quarter of them, rounded down, at most 1,024): "
        "no step draws them, and the accuracy is measured on them (a two-word sentence has only two orders: "
        "none is set aside).",
        "zh": "**还原打乱的句子。** 你的句子（文本框中的）被打乱，后面跟着同样多的空位 `_`，模型要在这些空位上按顺序"
        "写回句子：在第 k 个空位，它要说出第 k 个词在打乱的那一半中的位置。空位只知道自己的位置，所以必须有一个头"
        "学会“第 k 个空位去找第 k 个词”，并指向它。每个训练序列都是一次新的打乱，"
        "但训练前会留出四分之一的顺序（向下取整，最多 1,024 种），训练从不抽到它们，准确率就在它们上面测量"
        "（两个词的句子只有两种顺序：不留出任何一种）。",
    },
    "training.example": {
        "en": "An example and its targets (· : no target there, the loss skips it):",
        "zh": "一个例子及其目标（· 表示该处没有目标，损失不计）：",
    },
    "training.row.input": {"en": "input", "zh": "输入"},
    "training.row.position": {"en": "position", "zh": "位置"},
    "training.output.previous token": {"en": "target: previous token", "zh": "目标：前一个词元"},
    "training.output.first token": {"en": "target: first token", "zh": "目标：第一个词元"},
    "training.output.last digit": {"en": "target: last digit before", "zh": "目标：之前最近的数字"},
    "training.output.induction": {"en": "target: what followed it last time", "zh": "目标：上次紧随其后的词元"},
    "training.output.shuffled position": {
        "en": "target: where word k sits in the shuffled half",
        "zh": "目标：第 k 个词在打乱部分中的位置",
    },
    "training.model": {
        "en": "The model, small enough to read: token embedding ({vocab} × {d}){positions}, then {layers} × `x + "
        "MultiHeadAttention(x)` ({heads}; {attention} parameters each, the layer of the four steps below), then "
        "{readouts} × `Linear({d}, {classes})` readouts: **{total}** parameters. No LayerNorm, no feed-forward "
        "layer: whatever it computes, its attention heads compute. Trained with `Adam` (learning rate {lr}) on "
        "batches of {batch} fresh random sequences.",
        "zh": "模型很小，一眼能读完：词嵌入（{vocab} × {d}）{positions}，然后是 {layers} 个 "
        "`x + MultiHeadAttention(x)`（{heads}；每个 {attention} 个参数，就是下面四个步骤中的那一层），最后是 "
        "{readouts} 个 `Linear({d}, {classes})` 读出层：共 **{total}** 个参数。没有 LayerNorm，没有前馈层：它算"
        "的一切都由注意力头来算。用 `Adam`（学习率 {lr}）在每批 {batch} 个新的随机序列上训练。",
    },
    "training.model_positions": {
        "en": " + learned positions ({length} × {d})",
        "zh": " + 可学习的位置向量（{length} × {d}）",
    },
    "training.model_rope": {
        "en": " and no position vectors: RoPE turns every layer's q and k by position",
        "zh": "，没有位置向量：旋转位置编码（RoPE）在每一层按位置旋转 q 和 k",
    },
    "training.model_heads": {
        "en": "{heads} query heads (h), {kv_heads} K/V heads (h_kv)",
        "zh": "{heads} 个查询头 (h)、{kv_heads} 个 K/V 头 (h_kv)",
    },
    "training.gqa_note": {
        "en": "Each K/V head serves {group} query heads here ({heads} query heads, h_kv = {kv_heads}). Measured on the "
        "sequence tasks (not unscramble, not the digits) at d_model 64 with learned positions: with fewer K/V heads, "
        "down to one, each still trained to 99 % or more, and in “previous token and first token” two query heads "
        "sharing one K/V head still became a previous-token head and a first-token head: each query head has its "
        "own W_q. With RoPE, “previous token and first token” at 2 query heads missed the target in 1 of 3 seeds "
        "with 2 K/V heads and in 2 of 3 with 1.",
        "zh": "这里每个 K/V 头服务 {group} 个查询头（{heads} 个查询头，h_kv = {kv_heads}）。在序列任务（不含“还原打乱的"
        "句子”和手写数字）上、d_model 64、可学习位置向量下实测：K/V 头更少（少到 1 个）时，每个任务仍训练到 99 % 以上；"
        "在“前一个词元和第一个词元”任务中，共用同一个 K/V 头的两个查询头仍分别成为前一个词元头和第一个词元头："
        "每个查询头有自己的 W_q。用旋转位置编码（RoPE）时，2 个查询头的“前一个词元和第一个词元”任务，"
        "2 个 K/V 头时 3 个种子中有 1 个、1 个 K/V 头时有 2 个没有达到目标。",
    },
    # ------------------------------------------------------------ training
    "training.ask": {
        "en": "This model has not been trained on this server yet. Press **Train**: it trains here, {time}, and then "
        "every visitor shares it.",
        "zh": "本服务器还没有训练过这个模型。按 **训练**：它会在这里训练，{time}，之后所有访问者共用它。",
    },
    "training.ask.sequence": {
        "en": "in about 1 to 5 seconds at d_model 64 and 2 heads on a quiet server's CPU (longer at larger sizes, "
        "with RoPE or fewer K/V heads: up to about 17 s, and while the server is busy)",
        "zh": "在空闲服务器的 CPU 上，d_model 为 64、2 个头时约需 1 到 5 秒（尺寸更大、用 RoPE 或 K/V 头更少时更久，"
        "最多约 17 秒；服务器繁忙时也更久）",
    },
    "training.ask.digits": {
        "en": "in about 6 to 7 seconds at d_model 64, 2 heads and patch 2 on a quiet server's CPU (longer at "
        "larger sizes, and while the server is busy)",
        "zh": "在空闲服务器的 CPU 上，d_model 为 64、2 个头、补丁 2 时约需 6 到 7 秒（尺寸更大或服务器繁忙时更久）",
    },
    "training.ask.reviews": {
        "en": "in about 11 to 12 seconds at d_model 64 and 2 heads on a quiet server's CPU (longer at larger sizes; "
        "30 seconds to over a minute were measured while the server was busy)",
        "zh": "在空闲服务器的 CPU 上，d_model 为 64、2 个头时约需 11 到 12 秒（尺寸更大时更久；服务器繁忙时实测 30 秒到"
        "一分多钟）",
    },
    "training.train": {"en": "Train", "zh": "训练"},
    "training.on_model_slide": {
        "en": "The model is still training; its progress is on the slide “The model”. This slide shows its step "
        "as soon as the training ends.",
        "zh": "模型还在训练；训练进度在“模型”那一页。训练一结束，本页就会显示这一步。",
    },
    "training.stop": {"en": "Stop", "zh": "停止"},
    "training.queued": {
        "en": "Waiting for a free trainer: place **{place}** in line (this server trains {running} models at once).",
        "zh": "正在等待空闲的训练位置：排在第 **{place}** 位（本服务器同时训练 {running} 个模型）。",
    },
    "training.running": {
        "en": "Training: step {step} of at most {cap} · loss {loss} · batch accuracy {accuracy} %",
        "zh": "正在训练：第 {step} 步，最多 {cap} 步 · 损失 {loss} · 本批准确率 {accuracy} %",
    },
    "training.running_fixed": {
        "en": "Training: step {step} of {steps} · loss {loss} · batch accuracy {accuracy} %",
        "zh": "正在训练：第 {step} 步，共 {steps} 步 · 损失 {loss} · 本批准确率 {accuracy} %",
    },
    "training.starting": {"en": "Training starts…", "zh": "训练即将开始…"},
    "training.stopped": {
        "en": "Training stopped at step {step}; nothing was kept. Press **Train** to train again.",
        "zh": "训练在第 {step} 步停止；没有保留任何结果。按 **训练** 重新开始。",
    },
    "training.failed": {
        "en": "Training failed ({message}). Press **Train** to try again, or choose other sizes.",
        "zh": "训练失败（{message}）。按 **训练** 重试，或换一组尺寸。",
    },
    "training.done.fresh": {
        "en": "Trained in {steps} steps ({seconds} s): **accuracy {accuracy} %** on {sequences} new random "
        "sequences ({predictions} predictions), drawn apart from the training batches: out of more than a billion "
        "possible sequences, almost surely none of them was trained on.",
        "zh": "训练了 {steps} 步（{seconds} 秒）：在 {sequences} 个新的随机序列上 **准确率 {accuracy} %**"
        "（{predictions} 个预测）。这些序列与训练批次分开抽取：可能的序列超过十亿个，"
        "几乎可以肯定其中没有一个被训练过。",
    },
    "training.done.held_out": {
        "en": "Trained in {steps} steps ({seconds} s): **accuracy {accuracy} %** on {sequences} of the {orders} "
        "orders of your sentence ({predictions} predictions). They were set aside before training and no "
        "training step drew them: the accuracy says whether the model writes back an order it never saw.",
        "zh": "训练了 {steps} 步（{seconds} 秒）：在你的句子的 {orders} 种顺序中的 {sequences} 种上 "
        "**准确率 {accuracy} %**（{predictions} 个预测）。这些顺序在训练前就被留出，没有任何训练步抽到它们："
        "准确率说明模型能否写回一个从未见过的顺序。",
    },
    "training.done.every_order": {
        "en": "Trained in {steps} steps ({seconds} s): **accuracy {accuracy} %** on all {orders} orders of your "
        "{words}-word sentence ({predictions} predictions). Every one of them was also trained on: {orders} "
        "orders leave none to set aside, so this measures what the model learned, not whether it would write "
        "back an order it never saw. Add a word to get orders set aside.",
        "zh": "训练了 {steps} 步（{seconds} 秒）：在你这个 {words} 个词的句子的全部 {orders} 种顺序上 "
        "**准确率 {accuracy} %**（{predictions} 个预测）。每一种顺序都被训练过：只有 {orders} 种顺序，"
        "没有可以留出的，所以这里衡量的是模型学到了什么，而不是它能否写回一个从未见过的顺序。"
        "再加一个词，就会有顺序被留出。",
    },
    "training.target_reached": {
        "en": "The batch accuracy reached {target} % at step {step}; {sharpen} more steps then sharpened the heads.",
        "zh": "本批准确率在第 {step} 步达到 {target} %；之后又训练了 {sharpen} 步，让各个头变得更清晰。",
    },
    "training.target_missed": {
        "en": "The batch accuracy did not reach {target} % within the cap of {steps} steps: these sizes (or this "
        "seed) do not solve the task here. Look at the heads to see what they learned instead.",
        "zh": "在 {steps} 步的上限内，本批准确率没有达到 {target} %：这组尺寸（或这个种子）在这里解决不了这个任务。"
        "看看各个头，了解它们学到了什么。",
    },
    "training.one_head": {
        "en": "One head, two places to look: watch its weights split between the previous token and the first "
        "token, and the accuracy stay low. With 2 heads each takes one relation.",
        "zh": "一个头，两个要看的地方：注意它的权重如何分散在前一个词元和第一个词元之间，准确率也上不去。"
        "有 2 个头时，每个头各负责一种关系。",
    },
    "training.no_pointer": {
        "en": "No head points at the words here: with this seed the model found another way (a head that avoids "
        "the word and spreads its weight over all the others still tells where the word is). Another seed "
        "usually gives a head that points.",
        "zh": "这里没有哪个头指向对应的词：用这个种子，模型找到了另一种办法（一个头避开那个词，把权重分给其余所有词，"
        "同样能说出词的位置）。换一个种子，通常会得到一个直接指向的头。",
    },
    "training.layer_shown": {
        "en": "The four steps below show layer {layer} of layers 0 to {high} (the Layer control chooses).",
        "zh": "下面的四个步骤显示第 {layer} 层（共 0 到 {high} 层，用“层”控件选择）。",
    },
    "training.curves": {"en": "Loss and batch accuracy during training", "zh": "训练过程中的损失和本批准确率"},
    # ------------------------------------------------------------ the timeline
    "training.timeline": {"en": "Training timeline", "zh": "训练时间线"},
    "training.timeline_what": {
        "en": "The heads on the sample sequence at snapshots taken during training: move the slider from the "
        "first step to the last. Faded rows carry no loss (training never looked at their outputs), so "
        "their weights are arbitrary; grey cells are masked.",
        "zh": "训练过程中各个快照时刻，各个头在示例序列上的权重：把滑块从第一步拖到最后一步。颜色变淡的行没有损失"
        "（训练从不看它们的输出），所以它们的权重是任意的；灰色的格子被掩码屏蔽。",
    },
    "training.snapshot": {"en": "Snapshot", "zh": "快照"},
    "training.snapshot_at": {"en": "step {step} ({percent} %)", "zh": "第 {step} 步（{percent} %）"},
    "training.layer_title": {"en": "Layer {layer}", "zh": "第 {layer} 层"},
    "training.head_title": {"en": "head {head}: {label}", "zh": "头 {head}：{label}"},
    "training.difference": {
        "en": "How different are the heads? The mean total-variation distance between every two heads' weights "
        "(½ Σ |p − q| per row: 0 when two heads attend alike, 1 when they look at different tokens), on the "
        "sample sequences' rows that carry a loss. Where the task needs two relations the heads move apart as "
        "each takes one (often after a while alike on the easier one); where it needs one, they end alike.",
        "zh": "各个头有多不同？每两个头的权重之间的平均总变差距离（每行 ½ Σ |p − q|：两个头关注方式相同时为 0，"
        "看不同词元时为 1），在示例序列中有损失的行上计算。任务需要两种关系时，各个头会随着各自接手一种关系而分开"
        "（常常先一起停留在较容易的那种关系上）；只需要一种关系时，它们最后会一样。",
    },
    "training.difference_one_head": {
        "en": "With one head there is no other head to compare it with.",
        "zh": "只有一个头时，没有别的头可以比较。",
    },
    "training.layers": {
        "en": "Every layer's heads on your sequence",
        "zh": "各层的所有头（在你的序列上）",
    },
    "training.chart.step": {"en": "training step", "zh": "训练步数"},
    "training.chart.loss": {"en": "loss", "zh": "损失"},
    "training.chart.accuracy": {"en": "batch accuracy", "zh": "本批准确率"},
    "training.chart.difference": {"en": "difference between heads", "zh": "头之间的差异"},
    "training.chart.layer": {"en": "layer", "zh": "层"},
    "training.chart.scored": {"en": "carries a loss", "zh": "有损失"},
    # ------------------------------------------------------------ a trained run's notes and labels
    "notes.trained_sample": {
        "en": "Your text is not a sequence this task reads: it takes {low} to {high} tokens, each a digit 0–9 or "
        "a letter a–z, separated by spaces (for example `{example}`). Showing the sample sequence of the "
        "training timeline instead.",
        "zh": "你的文本不是这个任务能读的序列：它需要 {low} 到 {high} 个词元，每个是一个数字 0–9 或字母 a–z，"
        "用空格分开（例如 `{example}`）。改为显示训练时间线所用的示例序列。",
    },
    "notes.trained_unscramble": {
        "en": "The first {words} tokens are your sentence, shuffled (the shuffle depends on the seed); the {words} "
        "blanks `_` after them are where the model writes it back: blank k looks for word k.",
        "zh": "前 {words} 个词元是打乱后的你的句子（打乱方式由种子决定）；后面的 {words} 个空位 `_` 是模型写回句子的"
        "地方：第 k 个空位去找第 k 个词。",
    },
    "notes.trained_no_repeat": {
        "en": "No token of your sequence appears twice, so there is nothing to induce: the induction heads have "
        "nowhere to point. Repeat a stretch, for example `a b c d x y a b c`.",
        "zh": "你的序列中没有重复出现的词元，所以没有可以归纳的东西：归纳头无处可指。重复其中一段，例如 "
        "`a b c d x y a b c`。",
    },
    "notes.trained_mask_causal": {
        "en": "This model was trained with the causal mask and is shown here with another: its heads now see "
        "tokens they never saw in training. Choose the causal mask to see what it learned.",
        "zh": "这个模型是用因果掩码训练的，这里却用了别的掩码：它的头现在能看到训练中从未见过的词元。"
        "选择因果掩码，才能看到它学到了什么。",
    },
    "notes.trained_mask_none": {
        "en": "This model was trained without a mask and is shown here with one: its heads lose keys they used in "
        "training. Choose no mask to see what it learned.",
        "zh": "这个模型是在没有掩码的情况下训练的，这里却加了掩码：它的头失去了训练时用到的一些键。"
        "选择“无掩码”，才能看到它学到了什么。",
    },
    "step2.unscored_rows": {
        "en": "Rows {rows} carry no loss: training never looked at their outputs, so their weights are arbitrary "
        "(the labels leave them out; this step's charts and the training timeline draw them faded).",
        "zh": "第 {rows} 行没有损失：训练从不看它们的输出，所以它们的权重是任意的（标签不计这些行；"
        "本步骤的图和训练时间线把它们显示得较淡）。",
    },
    "label.last digit": {"en": "last digit", "zh": "最近的数字"},
    "label.induction": {"en": "induction", "zh": "归纳"},
    "label.shuffled position": {"en": "its word", "zh": "对应的词"},
    "error.tokens.unscramble_length": {
        "en": "Unscramble trains on your sentence, which must have 2 to {high} tokens (it has {count}): "
        "shorten it or choose another task.",
        "zh": "“还原打乱的句子”用你的句子训练，句子必须有 2 到 {high} 个词元（现在有 {count} 个）："
        "请缩短句子，或选择别的任务。",
    },
    # ------------------------------------------------------------ from the tutorials' examples to trained heads
    "examples.trained": {
        "en": "In these sentences one word points to another (it → animal). Heads trained here on a small task "
        "learn to point like that, one head for each relation the task needs.",
        "zh": "这些句子里，一个词指向另一个词（他 → 小明）。在这里用小任务训练的头也学会这样指向，"
        "任务需要几种关系，就有几个头各管一种。",
    },
    "examples.trained_button": {"en": "See heads that learned relations", "zh": "看看学会了关系的头"},
    # ------------------------------------------------------------ where the training ran
    "training.ran_on": {
        "en": "Trained on **{device}** in {seconds} s.",
        "zh": "在 **{device}** 上训练，用时 {seconds} 秒。",
    },
    "training.out_of_memory": {
        "en": "{device} ran out of memory training this model (d_model {d_model}, {heads} heads, {layers} layers), "
        "so it trained on the CPU instead.",
        "zh": "{device} 训练这个模型（d_model {d_model}，{heads} 个头，{layers} 层）时内存不足，所以改在 CPU 上训练。",
    },
}
