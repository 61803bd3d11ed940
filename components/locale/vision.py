"""Messages of images: the digits task, images and uploads refused, and lab 10 (windows and shifted windows)."""

MESSAGES: dict[str, dict[str, str]] = {
    # ------------------------------------------------------------ the digits task
    "task.digits": {"en": "handwritten digits (a small ViT)", "zh": "手写数字（小型 ViT）"},
    "training.task.digits": {
        "en": "**Which digit is it?** An 8 × 8 image of a handwritten digit (one of the 1,797 that come with "
        "scikit-learn, bundled with this app) is cut into {patches} patches of {patch} × {patch} pixels. The "
        "tokens are those patches, named by their place in the grid (`r1c2`: row 1, column 2), after a `[CLS]` "
        "token that belongs to no patch. The answer is read from `[CLS]` alone, after attention: its row shows "
        "which patches the answer draws on. {held_out} of the digits are held out: no training step reads them, "
        "and the accuracy is measured on them. They are a validation set, not a test set: the training recipe "
        "and the number of blocks were chosen by the accuracy on these same digits, so it may read a little high "
        "for digits nobody has measured anything on.",
        "zh": "**这是哪个数字？** 一张 8 × 8 的手写数字图片（来自 scikit-learn 自带的 1,797 张，已随本应用打包）"
        "被切成 {patches} 个 {patch} × {patch} 像素的图块（Patch）。词元就是这些图块，按它们在网格中的位置命名"
        "（`r1c2`：第 1 行第 2 列），前面还有一个不属于任何图块的 `[CLS]` 词元。答案只从注意力之后的 `[CLS]` "
        "读出：它那一行显示答案取自哪些图块。其中 {held_out} 张数字被留出：没有任何训练步读到它们，准确率就在它们上面"
        "测量。它们是验证集，不是测试集：训练方案和块数正是按这些数字上的准确率选出来的，所以对从未被用来做任何选择的"
        "数字，这个准确率可能略微偏高。",
    },
    "training.model_digits": {
        "en": "The model, a small Vision Transformer (ViT): each patch flattened ({pixels} numbers) and embedded by "
        "`Linear({pixels}, {d})` ({embedding} parameters); a learned `[CLS]` vector first{positions}; then "
        "{layers} Pre-Norm block(s), `x + MultiHeadAttention(LayerNorm(x))` ({heads}; {attention} parameters, "
        "the layer of the four steps below) and `x + MLP(LayerNorm(x))` with `Linear({d}, {hidden})`, GELU, "
        "`Linear({hidden}, {d})`; a final LayerNorm and `Linear({d}, 10)` reading `[CLS]`: **{total}** "
        "parameters. Trained for {steps} steps with `AdamW` (learning rate {lr}, rising over {warmup} steps, "
        "then falling to 0 along a cosine; weight decay {decay}) on batches of {batch} of the {train} training "
        "digits. The answer is read from `[CLS]` alone, so a training step computes only `[CLS]`'s row in the "
        "last block: nothing else reaches the loss.",
        "zh": "模型是一个小型视觉 Transformer（ViT）：每个图块展平（{pixels} 个数），由 `Linear({pixels}, {d})` 嵌入（"
        "{embedding} 个参数）；最前面一个可学习的 `[CLS]` 向量{positions}；然后是 {layers} 个 Pre-Norm 块："
        "`x + MultiHeadAttention(LayerNorm(x))`（{heads}；{attention} 个参数，就是下面四个步骤中的那一层）和 "
        "`x + MLP(LayerNorm(x))`，其中是 `Linear({d}, {hidden})`、GELU、`Linear({hidden}, {d})`；最后是 "
        "LayerNorm 和读取 `[CLS]` 的 `Linear({d}, 10)`：共 **{total}** 个参数。用 `AdamW` 训练 {steps} 步（学习"
        "率 {lr}，先在 {warmup} 步内升高，再按余弦曲线降到 0；权重衰减 {decay}），在 {train} 张训练数字中每批取 "
        "{batch} 张。答案只从 `[CLS]` 读出，所以每个训练步在最后一个块中只计算 `[CLS]` 那一行：其他的都到不了损"
        "失。",
    },
    "training.model_digits_positions": {
        "en": " and a learned position vector for each of the {tokens} tokens ({positions} parameters)",
        "zh": "，{tokens} 个词元各有一个可学习的位置向量（{positions} 个参数）",
    },
    "training.model_digits_rope": {
        "en": " and no position vectors: RoPE turns q and k by the order of the {tokens} tokens (`[CLS]`, then the "
        "patches row by row)",
        "zh": "，没有位置向量：旋转位置编码（RoPE）按 {tokens} 个词元的顺序（先 `[CLS]`，再逐行的图块）旋转 q 和 k",
    },
    "training.done.held_out_images": {
        "en": "Trained in {steps} steps ({seconds} s): **accuracy {accuracy} %** on the {sequences} held-out "
        "validation digits, which no training step saw (the recipe was chosen on them).",
        "zh": "训练了 {steps} 步（{seconds} 秒）：在 {sequences} 张留出的验证数字上 **准确率 {accuracy} %**，"
        "训练中没有任何一步见过它们（训练方案是按它们选的）。",
    },
    "training.fixed_schedule": {
        "en": "A fixed schedule of {steps} steps: the learning rate rose over {warmup} steps, then fell to 0 along "
        "a cosine (no batch accuracy to wait for: the held-out digits' accuracy is what counts).",
        "zh": "固定训练 {steps} 步：学习率先在 {warmup} 步内升高，再按余弦曲线降到 0"
        "（不必等本批准确率达到目标：重要的是留出数字上的准确率）。",
    },
    "training.timeline_what_image": {
        "en": "The heads on the sample image (a held-out handwritten 3) at snapshots taken during training: move "
        "the slider from the first step to the last. Faded rows carry no loss (in the last layer only `[CLS]`'s "
        "row reaches the answer), so their weights are arbitrary.",
        "zh": "训练过程中各个快照时刻，各个头在示例图像（一个留出的手写 3）上的权重：把滑块从第一步拖到最后一步。"
        "颜色变淡的行没有损失（在最后一层只有 `[CLS]` 那一行通向答案），所以它们的权重是任意的。",
    },
    "training.difference_image": {
        "en": "How different are the heads? The mean total-variation distance between every two heads' weights "
        "(½ Σ |p − q| per row: 0 when two heads attend alike, 1 when they look at different patches), on the "
        "sample images' rows that carry a loss.",
        "zh": "各个头有多不同？每两个头的权重之间的平均总变差距离（每行 ½ Σ |p − q|：两个头关注方式相同时为 0，"
        "看不同图块时为 1），在示例图像中有损失的行上计算。",
    },
    "notes.trained_digit": {
        "en": "The image is a handwritten {label} that the model never trained on; the model reads it as a "
        "**{predicted}** ({percent} %).",
        "zh": "这张图是一个手写的 {label}，模型训练时从未见过它；模型认为它是 **{predicted}**（{percent} %）。",
    },
    "notes.trained_image": {
        "en": "This model knows only digits: the image is read as one (grey, cut to a square, averaged down to "
        "8 × 8, inverted when its background is light). It reads it as a **{predicted}** ({percent} %).",
        "zh": "这个模型只认识数字：这张图被当作数字来读（转成灰度，裁成正方形，平均缩小到 8 × 8，背景偏亮时反色）。"
        "模型认为它是 **{predicted}**（{percent} %）。",
    },
    # ------------------------------------------------------------ images: choices and uploads refused
    "error.image.unknown": {
        "en": "Image {value} is not one of the bundled samples: choose one of {choices}.",
        "zh": "图片 {value} 不是自带的样例：请从 {choices} 中选择。",
    },
    "error.patch.unknown": {
        "en": "Patch size {value} is not offered: choose one of {choices}.",
        "zh": "没有 {value} 这个图块大小：请从 {choices} 中选择。",
    },
    "error.image.file_too_large": {
        "en": "The file has {size} MB; images of up to {high} MB are read. Choose a smaller file.",
        "zh": "文件有 {size} MB；最多只读取 {high} MB 的图片。请换一个更小的文件。",
    },
    "error.image.not_image": {
        "en": "The file is not an image: upload a PNG or a JPEG.",
        "zh": "这个文件不是图片：请上传 PNG 或 JPEG。",
    },
    "error.image.format": {
        "en": "{found} images are not read here: save it as PNG or JPEG and upload that.",
        "zh": "这里不读取 {found} 格式的图片：请另存为 PNG 或 JPEG 再上传。",
    },
    "error.image.too_many_pixels": {
        "en": "The image has {width} × {height} pixels; at most {high} pixels are read. Shrink it and upload it again.",
        "zh": "这张图片有 {width} × {height} 个像素；最多只读取 {high} 个像素。请缩小后重新上传。",
    },
    "error.image.bomb": {
        "en": "The file claims an image far larger than it could hold (a decompression bomb); it is not decoded. "
        "Upload another image.",
        "zh": "这个文件声称包含一张远超其容量的巨大图片（解压炸弹），因此不会被解码。请上传别的图片。",
    },
    "error.image.broken": {
        "en": "The file starts like a PNG or JPEG, but its pixels could not be read (damaged or cut short). Save "
        "it again and upload it.",
        "zh": "这个文件开头像 PNG 或 JPEG，但无法读出它的像素（文件损坏或不完整）。请重新保存后再上传。",
    },
    # ------------------------------------------------------------ the image controls
    "controls.patch": {"en": "Patch size", "zh": "图块大小"},
    "controls.patch_size": {"en": "{patch} × {patch} px", "zh": "{patch} × {patch} 像素"},
    "controls.patch_help": {
        "en": "Pixels on a patch's side: 2 cuts the 8 × 8 digit into 16 patches (17 tokens with [CLS]), 4 into 4 "
        "(5 tokens). Another patch size is another model: it is trained anew.",
        "zh": "图块每边的像素数：2 把 8 × 8 的数字切成 16 个图块（加上 [CLS] 共 17 个词元），4 切成 4 个"
        "（5 个词元）。换一个图块大小就是另一个模型：需要重新训练。",
    },
    "controls.image": {"en": "Image", "zh": "图像"},
    "controls.image_help": {
        "en": "A bundled sample: a handwritten digit the model never trained on, or a photo (read as a digit).",
        "zh": "自带的样例：一个模型训练时从未见过的手写数字，或一张照片（被当作数字来读）。",
    },
    "controls.image_upload": {"en": "Or upload an image of your own", "zh": "或上传你自己的图像"},
    "controls.image_upload_help": {
        "en": "{formats}, at most {mb} MB and {pixels} pixels. The model reads it as a digit: grey, a centred "
        "square, averaged down to 8 × 8.",
        "zh": "{formats}，最大 {mb} MB、{pixels} 像素。模型把它当作数字来读：转成灰度，取居中的正方形，"
        "平均缩小到 8 × 8。",
    },
    "controls.image_upload_link": {
        "en": "An upload is not in the link: a link opens the sample chosen above.",
        "zh": "上传的图像不会写进链接：打开链接看到的是上面选中的样例。",
    },
    "controls.image_upload_shown": {
        "en": "Your upload is shown; the sample above waits. An upload is not in the link: remove it (×) to go "
        "back to the sample.",
        "zh": "正在显示你上传的图像，上面的样例暂不使用。上传的图像不会写进链接：删除它（×）即可回到样例。",
    },
    # ------------------------------------------------------------ the four steps on an image
    "step1.patch_shapes": {
        "en": "**Image → tokens:** image `{image}` (B, C, H, W) → patches `{patches}` (B, N, C·p·p) → "
        "`nn.Linear({pixels}, {d})` (a ViT's `Conv2d` with kernel and stride p is the same map) → `{embedded}`; "
        "`[CLS]` first and a learned position added to every token → `{tokens}` (B, L, d_model). x below is "
        "that, through the blocks before and the shown block's LayerNorm.",
        "zh": "**图像 → 词元：** 图像 `{image}` (B, C, H, W) → 图块 `{patches}` (B, N, C·p·p) → "
        "`nn.Linear({pixels}, {d})`（ViT 中核与步长都为 p 的 `Conv2d` 是同一个映射）→ `{embedded}`；"
        "最前面加上 `[CLS]`，每个词元再加上可学习的位置向量 → `{tokens}` (B, L, d_model)。下面的 x "
        "就是它经过前面的块、再经过所示块的 LayerNorm 之后的结果。",
    },
    "step1.patch_params": {
        "en": "**Patch embedding:** `Linear({pixels}, {d})`: {pixels} × {d} + {d} = {embedding}; `[CLS]`: {d}; "
        "positions: {length} × {d} = {positions}.",
        "zh": "**图块嵌入：** `Linear({pixels}, {d})`：{pixels} × {d} + {d} = {embedding}；`[CLS]`：{d}；"
        "位置：{length} × {d} = {positions}。",
    },
    "step2.labels_note_image": {
        "en": "On an image the tokens are a grid, not a sequence: a head is labelled with the grid relation that "
        "gets most of its weight (itself, [CLS], the patch to the left, right, above or below, or the 3 × 3 "
        "patches around) when that is at least half of it and twice what uniform weights would give; otherwise "
        "it is broad, and the number is the best relation's share. In reading order the token before a patch is "
        "its left neighbour only inside a row, so “previous token” is not used here.",
        "zh": "在图像上，词元是一个网格，而不是序列：如果某种网格关系（自身、[CLS]、左边/右边/上面/下面的图块，"
        "或周围 3 × 3 的图块）得到一个头的大部分权重——至少一半，并且是均匀权重的两倍以上——就用它来标注这个头；"
        "否则标为“分散”，数字是最强关系所占的比例。按阅读顺序，一个图块前面的词元只在同一行内才是它左边的邻居，"
        "所以这里不用“前一个词元”。",
    },
    "label.[CLS]": {"en": "[CLS]", "zh": "[CLS]"},
    "label.left patch": {"en": "left patch", "zh": "左边的图块"},
    "label.right patch": {"en": "right patch", "zh": "右边的图块"},
    "label.patch above": {"en": "patch above", "zh": "上面的图块"},
    "label.patch below": {"en": "patch below", "zh": "下面的图块"},
    "label.nearby patches": {"en": "nearby patches", "zh": "附近的图块"},
    "padding.image": {
        "en": "Images of one size have the same number of patches ({tokens} tokens here), so a batch of images "
        "needs no padding and no padding mask: this panel is for text.",
        "zh": "同样大小的图像有同样多的图块（这里是 {tokens} 个词元），所以一批图像不需要填充，也不需要填充掩码："
        "这个面板是为文本准备的。",
    },
    # ------------------------------------------------------------ the patches panel
    "patches.title": {"en": "What the heads look at: the patches on the image", "zh": "各个头在看什么：图像上的图块"},
    "patches.what": {
        "en": "The tokens are the image's patches: `r1c2` is the patch in row 1, column 2 of the grid, and `[CLS]` "
        "comes first, belonging to no patch. A query's row of weights gives every patch a weight, so it can be "
        "laid over the image: the more orange a patch, the more weight the query gives it. These are step 2's "
        "weights, in the layer the four steps show (the Layer control chooses).",
        "zh": "词元就是图像的图块：`r1c2` 是网格第 1 行第 2 列的图块，`[CLS]` 排在最前面，不属于任何图块。"
        "一个查询的那一行权重给每个图块一个权重，所以可以铺在图像上：图块越橙，查询给它的权重越多。"
        "这些就是第 2 步的权重，来自四个步骤所显示的那一层（用“层”控件选择）。",
    },
    "patches.sizes": {
        "en": "**The image the model read:** {height} × {width} pixels, {channels} channel(s). Cut into patches of "
        "{patch} × {patch} pixels: a grid of {rows} × {columns} = {patches} patches, each flattened into {pixels} "
        "numbers. With `[CLS]` first: L = {tokens} tokens.",
        "zh": "**模型读到的图像：** {height} × {width} 像素，{channels} 个通道。切成 {patch} × {patch} 像素的"
        "图块：{rows} × {columns} = {patches} 个图块的网格，每个图块展平为 {pixels} 个数。加上最前面的 "
        "`[CLS]`：L = {tokens} 个词元。",
    },
    "patches.original": {
        "en": "The image before the model's resizing:",
        "zh": "模型缩放之前的图像：",
    },
    "patches.digit_look": {
        "en": "The digits' model reads every image as a digit: grey, a centred square, averaged down to 8 × 8, "
        "light ink on a dark ground (a photo or an upload too).",
        "zh": "数字模型把每张图都当作数字来读：转成灰度，取居中的正方形，平均缩小到 8 × 8，深色背景上的浅色笔迹"
        "（照片和上传的图像也一样）。",
    },
    "patches.query_title": {"en": "One query's weights over the image", "zh": "一个查询的权重铺在图像上"},
    "patches.query": {"en": "Query token", "zh": "查询词元"},
    "patches.query_help": {
        "en": "[CLS] or a patch: its row of weights is laid over the image, for the mean of the heads and for "
        "each head.",
        "zh": "[CLS] 或某个图块：它那一行权重被铺在图像上，分别显示各头的平均和每个头。",
    },
    "patches.mean": {"en": "mean of the heads", "zh": "各头的平均"},
    "patches.head": {"en": "head {head}: {label}", "zh": "头 {head}：{label}"},
    "patches.on_cls": {"en": "on [CLS]: {weight}", "zh": "给 [CLS]：{weight}"},
    "patches.query_caption": {
        "en": "The row of {query} in layer {layer}, framed in blue when it is a patch. The weight on `[CLS]` has "
        "no place on the image: it is written under each title. The most opaque orange is {top}, the largest "
        "weight on a patch here; point at a patch for its weight.",
        "zh": "第 {layer} 层中 {query} 那一行的权重；查询是图块时用蓝框标出。给 `[CLS]` 的权重在图像上没有位置，"
        "写在每个标题下面。最深的橙色是 {top}，即这里图块上最大的权重；把鼠标指向图块可以看到它的权重。",
    },
    "patches.query_unscored": {
        "en": "In layer {layer} no training loss looks at the row of {query} (only `[CLS]`'s reaches the answer): "
        "its weights were never trained and say little.",
        "zh": "在第 {layer} 层，训练的损失不看 {query} 这一行（只有 `[CLS]` 那一行通向答案）："
        "它的权重从未被训练，说明不了什么。",
    },
    "patches.distance_title": {
        "en": "How far each head looks: mean attention distance",
        "zh": "每个头看多远：平均注意力距离",
    },
    "patches.distance_what": {
        "en": "For each patch, the distance in pixels to every patch it attends to, weighted by its weight, then "
        "averaged over the patches: one number per head and layer (the ViT paper's Figure 7, Dosovitskiy et al. "
        "2021). In large ViTs trained on millions of images the paper found that some heads look at most of the "
        "image already in the lowest layers while others stay local, and that the distance grows with depth. "
        "Does that hold here? `[CLS]` is left out as a query and as a key (its weight is dropped, not spread "
        "over the patches).",
        "zh": "对每个图块，把它关注的每个图块与它之间的像素距离按权重加权，再对所有图块取平均：每个头、每一层一个数"
        "（见 ViT 论文的图 7）（Dosovitskiy et al., 2021）。论文发现，在用数百万张图训练的大型 ViT 中，"
        "一些头在最低的几层就已经看向图像的大部分，另一些头只看附近，而且距离随层数加深而增大。这里是否也是如此？"
        "`[CLS]` 既不作为查询也不作为键参与计算（给它的权重被丢掉，而不是分给各个图块）。",
    },
    "patches.distance_layer": {
        "en": "Layer {layer}: from {low} px (head {near}) to {high} px (head {far}).",
        "zh": "第 {layer} 层：从 {low} 像素（头 {near}）到 {high} 像素（头 {far}）。",
    },
    "patches.distance_uniform": {
        "en": "Dashed line: a head that weighs every token alike would measure {uniform} px (neighbouring patches "
        "are {patch} px apart). Above it a head looks further than chance. Below it a head looks nearer than chance "
        "*or* puts much of its weight on {cls}, which counts as 0 px here: read a low dot with its weight on {cls} "
        "(in its tooltip).",
        "zh": "虚线：对每个词元一视同仁的头会得到 {uniform} 像素（相邻图块相距 {patch} 像素）。"
        "高于它，这个头看得比随机更远。低于它，这个头要么看得比随机更近，要么把很多权重给了 {cls}，"
        "而给 {cls} 的权重在这里按 0 像素计：读一个低的点时，要看它给 {cls} 的权重（在提示框里）。",
    },
    "patches.distance_left_out": {
        "en": "Layer {layers} left out: the model trained here reads its answer from `[CLS]` alone, so in its last "
        "layer no loss looks at the patches' rows; their distances would measure weights never trained.",
        "zh": "省略了第 {layers} 层：这里训练的模型只从 `[CLS]` 读出答案，所以在最后一层，损失不看各个图块的行；"
        "它们的距离衡量的是从未训练过的权重。",
    },
    "patches.rollout_title": {
        "en": "Attention rollout: where `[CLS]`'s answer traces back to",
        "zh": "注意力展开（rollout）：`[CLS]` 的答案追溯到哪里",
    },
    "patches.rollout_what": {
        "en": "Attention rollout (Abnar & Zuidema 2020) follows attention through every layer: each layer's "
        "weights averaged over the heads, the residual connection added as 0.5·A + 0.5·I (rows renormalised), "
        "and the layers multiplied from the first up. `[CLS]`'s row of the product is laid over the image beside "
        "`[CLS]`'s row of the last layer alone.",
        "zh": "注意力展开（Abnar & Zuidema, 2020）把注意力穿过每一层串起来：每层的权重先对各头取平均，把残差连接"
        "算作 0.5·A + 0.5·I（每行重新归一化），再从第一层起逐层相乘。乘积中 `[CLS]` 那一行铺在图像上，"
        "旁边是仅最后一层中 `[CLS]` 那一行。",
    },
    "patches.rollout_last": {
        "en": "last layer ({layer}), mean of the heads",
        "zh": "最后一层（第 {layer} 层），各头平均",
    },
    "patches.rollout_all": {"en": "rollout over layers 0–{last}", "zh": "第 0–{last} 层的展开"},
    "patches.rollout_numbers": {
        "en": "Over {layers} layers `[CLS]` keeps {kept} of its own rollout row. The residual's half compounds, it "
        "does not add up: the path that stays on `[CLS]` through every layer carries at least 0.5^{layers} ≈ "
        "{floor} by itself, and paths that leave and come back add the rest.",
        "zh": "经过 {layers} 层，`[CLS]` 的展开行有 {kept} 留在它自己身上。每一层残差的那一半是相乘而不是相加："
        "每一层都停在 `[CLS]` 上的那条路径本身至少带来 0.5^{layers} ≈ {floor}，离开又回来的路径补上其余部分。",
    },
    "patches.rollout_one_layer": {
        "en": "With one layer, rollout is that layer's 0.5·A + 0.5·I: over the patches it is the mean of the heads "
        "at half strength (the two pictures share one colour scale), because the other half of `[CLS]`'s row "
        "stays on `[CLS]` itself.",
        "zh": "只有一层时，展开就是这一层的 0.5·A + 0.5·I：在各图块上，它就是各头平均的一半强度（两幅图共用一个颜色"
        "刻度），因为 `[CLS]` 那一行的另一半留在 `[CLS]` 自己身上。",
    },
    "patches.rollout_caution": {
        "en": "A caution: attention is not an explanation. Rollout leaves out the values, the MLPs and the "
        "LayerNorms: it shows where attention flows, not why the model answers as it does.",
        "zh": "提醒：注意力不等于解释。展开忽略了值向量、MLP 和 LayerNorm：它显示注意力流向哪里，"
        "而不是模型为什么这样回答。",
    },
    "patches.chart.patch": {"en": "patch", "zh": "图块"},
    "patches.chart.distance": {"en": "mean attention distance (px)", "zh": "平均注意力距离（像素）"},
    "patches.chart.uniform": {"en": "uniform attention", "zh": "均匀注意力"},
    "patches.chart.cls_share": {"en": "weight on {cls} (left out)", "zh": "给 {cls} 的权重（未计入）"},
    # ------------------------------------------------------------ the bundled images' names
    "image.digit": {"en": "handwritten {digit}", "zh": "手写数字 {digit}"},
    "image.photo-temple": {"en": "photo: a temple in Beijing", "zh": "照片：北京的一座楼阁"},
    "image.photo-flower": {"en": "photo: a dahlia", "zh": "照片：一朵大丽花"},
    # ------------------------------------------------------------ lab 10: windows and shifted windows
    "nav.lab.windows": {"en": "10 · Windows (Swin)", "zh": "10 · 窗口注意力（Swin）"},
    "lab.windows.title": {"en": "Lab 10 · Windows and shifted windows", "zh": "实验 10 · 窗口与移位窗口"},
    "lab.windows.intro": {
        "en": "A ViT lets every patch attend to every other patch of the image, from the first layer on: its cost "
        "grows with the square of the number of patches. The Swin Transformer lets a patch attend only inside its "
        "window of M × M patches, and in the next layer shifts the windows so that information crosses their "
        "borders. See which patches each rule lets one patch see, and what each costs as the image grows.",
        "zh": "ViT 让每个图块从第一层起就能关注整张图像的所有其他图块：代价随图块数的平方增长。"
        "Swin Transformer 只让图块在自己所在的 M × M 图块窗口内关注，并在下一层移动窗口，让信息跨过窗口边界。"
        "看看每种规则让一个图块看得到哪些图块，以及图像变大时各自的代价。",
    },
    "lab.windows.explain": {
        "en": "**Windows (W-MSA).** The grid of patches is cut into windows of M × M; attention runs inside each "
        "window only, as a batch of short sequences of M² patches. A patch at a window's edge never sees its "
        "neighbour across the border.\n\n"
        "**Shifted windows (SW-MSA).** The next layer moves the windows by s = M / 2 patches, so their borders "
        "fall elsewhere: what was cut apart is now together. At the image's edges the moved windows are smaller. "
        "Rather than pad them, Swin rolls the grid up and left by s (`torch.roll(x, shifts=(-s, -s), dims=(1, 2))`): "
        "the grid is again cut into windows of M × M, but a window at the far edges now holds patches from up to "
        "four places that were not neighbours. A mask keeps them apart: the rolled grid is split into 3 × 3 "
        "regions and a patch may attend only to patches of its own region (in this app's convention, `True` = "
        "may attend; Swin's code adds −100 to the other scores). Rolling back by (s, s) puts every output where "
        "its patch was. The numbers are exactly those of attention over all patches with one big mask, computed "
        "window by window.\n\n"
        "**The cost.** For N patches of width D, global attention costs 4·N·D² + 2·N²·D multiply–adds (the four "
        "projections, then Q Kᵀ and the weighted sum of V), windows 4·N·D² + 2·M²·N·D: each patch meets M² "
        "others, not N. With M fixed the cost grows linearly in the number of patches, that is, with the "
        "image's area (the tutorial: the complexity becomes linear). The price: one layer sees only its "
        "window; the shift lets information travel further layer by layer.\n\n"
        "These windows are squares of patches of an image: not the main page's sliding window mask "
        "|i − j| ≤ w, which moves with each token. The weights here are random (seeded): where a patch *may* "
        "look is the point, not what a trained model would look at. Swin also adds a learned relative "
        "position bias inside each window; it is left out here.",
        "zh": "**窗口（W-MSA）。** 图块网格被切成 M × M 的窗口；注意力只在每个窗口内部计算，"
        "相当于一批长度为 M² 的短序列。处在窗口边上的图块永远看不到边界另一侧的邻居。\n\n"
        "**移位窗口（SW-MSA）。** 下一层把窗口移动 s = M / 2 个图块，边界落到别处：原来被切开的现在在一起了。"
        "在图像边缘，移动后的窗口会变小。Swin 不去填充它们，而是把网格向上、向左滚动 s "
        "（`torch.roll(x, shifts=(-s, -s), dims=(1, 2))`）：网格又被切成 M × M 的窗口，"
        "但远端边缘的一个窗口现在装着来自图像上最多四个互不相邻位置的图块。掩码把它们隔开：滚动后的网格被分成 "
        "3 × 3 个区域，图块只能关注同一区域内的图块（按本应用的约定 `True` 表示可以关注；"
        "Swin 的代码是给其他分数加上 −100）。再滚动 (s, s) 回去，每个输出就回到它原来的图块位置。"
        "这样逐窗口算出的数，与对全部图块加一个大掩码计算注意力的结果完全相同。\n\n"
        "**代价。** 对宽度为 D 的 N 个图块，全局注意力要 4·N·D² + 2·N²·D 次乘加（四个投影，加上 Q Kᵀ 和对 V "
        "的加权求和），窗口注意力要 4·N·D² + 2·M²·N·D：每个图块只与 M² 个图块相遇，而不是 N 个。"
        "M 固定时，代价随图块数、也就是图像面积线性增长——教程所说的“复杂度降为线性”。"
        "代价是：一层只能看到自己的窗口；移位让信息一层一层传得更远。\n\n"
        "这里的窗口是图像上由图块组成的正方形，不是主页面上随每个词元移动的滑动窗口掩码 |i − j| ≤ w。"
        "这里的权重是随机的（由种子决定）：重点是一个图块*可以*看哪里，而不是训练好的模型会看哪里。"
        "Swin 还在每个窗口内加上可学习的相对位置偏置，这里省略了。",
    },
    "lab.windows.image": {"en": "Image", "zh": "图像"},
    "lab.windows.window": {"en": "Window M (patches a side)", "zh": "窗口 M（每边图块数）"},
    "lab.windows.shift": {"en": "Shift s", "zh": "移位 s"},
    "lab.windows.not_the_sliding_window": {
        "en": "An 8 × 8 grid of patches (the image resized to 64 × 64 pixels, patches of 8 × 8). A window is a "
        "square of M × M patches, not the main page's sliding window.",
        "zh": "一个 8 × 8 的图块网格（图像缩放到 64 × 64 像素，每个图块 8 × 8）。窗口是 M × M 个图块组成的正方形，"
        "不是主页面上的滑动窗口。",
    },
    "lab.windows.tooltip.patch": {"en": "patch", "zh": "图块"},
    "lab.windows.partition_title": {"en": "The windows on the grid", "zh": "网格上的窗口"},
    "lab.windows.panel.windows": {"en": "Windows (W-MSA)", "zh": "窗口（W-MSA）"},
    "lab.windows.panel.shifted": {"en": "Windows shifted by {s} (SW-MSA)", "zh": "移动 {s} 后的窗口（SW-MSA）"},
    "lab.windows.panel.rolled": {"en": "After torch.roll by −{s}", "zh": "torch.roll 滚动 −{s} 之后"},
    "lab.windows.partition_caption": {
        "en": "Left: {windows} windows of {m} × {m}; each colour is a window, the number its index. Middle: the "
        "same grid with the windows moved by {s}: {shifted} windows, smaller at the edges. Right: the grid after "
        "the roll, each cell naming the patch it now holds; cut into windows of {m} × {m} again, and coloured by "
        "the groups the mask keeps apart: the same groups as in the middle.",
        "zh": "左：{windows} 个 {m} × {m} 的窗口；每种颜色是一个窗口，数字是它的编号。中：同一个网格，"
        "窗口移动了 {s}：共 {shifted} 个窗口，边缘处较小。右：滚动之后的网格，每格写着它现在装的图块；"
        "再次切成 {m} × {m} 的窗口，颜色表示被掩码隔开的各组：与中间的分组相同。",
    },
    "lab.windows.mask_title": {"en": "The mask of one rolled window", "zh": "一个滚动后窗口的掩码"},
    "lab.windows.mask_window": {"en": "Window of the rolled grid", "zh": "滚动后网格中的窗口"},
    "lab.windows.mask_panel": {"en": "rolled window {window}", "zh": "滚动后的窗口 {window}"},
    "lab.windows.axis.key": {"en": "key patch", "zh": "键图块"},
    "lab.windows.axis.query": {"en": "query patch", "zh": "查询图块"},
    "lab.windows.mask_caption": {
        "en": "Window {window} holds {size} patches from {regions} region(s): T = may attend (same region), "
        "F = blocked. A window with one region is not masked at all.",
        "zh": "窗口 {window} 装有来自 {regions} 个区域的 {size} 个图块：T = 可以关注（同一区域），F = 被屏蔽。"
        "只含一个区域的窗口完全不被遮挡。",
    },
    "lab.windows.query_title": {
        "en": "Where one patch may look: global, windows, shifted windows",
        "zh": "一个图块可以看哪里：全局、窗口、移位窗口",
    },
    "lab.windows.query": {"en": "Query patch", "zh": "查询图块"},
    "lab.windows.head": {"en": "Head", "zh": "头"},
    "lab.windows.view.global": {"en": "Global attention", "zh": "全局注意力"},
    "lab.windows.view.windows": {"en": "Windows", "zh": "窗口"},
    "lab.windows.view.shifted": {"en": "Windows shifted by {s}", "zh": "移动 {s} 后的窗口"},
    "lab.windows.query_caption": {
        "en": "The blue square is patch {query}; the more orange a patch, the more weight it gets (one head, "
        "random weights, one scale for the three). Global attention lets it see all {all} patches, so each gets "
        "little; windows {windows}; shifted windows {shifted}.",
        "zh": "蓝框是图块 {query}；图块越橙，得到的权重越多（一个头，随机权重，三幅图用同一刻度）。"
        "全局注意力让它看到全部 {all} 个图块，所以每个分得很少；窗口只有 {windows} 个；移位窗口 {shifted} 个。",
    },
    "lab.windows.cost_title": {"en": "The cost as the image grows", "zh": "图像变大时的代价"},
    "lab.windows.method.global": {"en": "global attention", "zh": "全局注意力"},
    "lab.windows.method.windows": {"en": "windows (shifted or not)", "zh": "窗口（移位与否）"},
    "lab.windows.axis.patches": {"en": "patches N", "zh": "图块数 N"},
    "lab.windows.axis.madds": {"en": "millions of multiply–adds per layer", "zh": "每层乘加次数（百万）"},
    "lab.windows.cost_summary": {
        "en": "At D = {d} and M = {m}: with {patches} patches ({side} × {side}, an image of {pixels} × {pixels} "
        "pixels in patches of {patch} × {patch} pixels), global attention costs **{ratio}×** what windows cost. "
        "Quadruple the image's area and global attention's scores grow 16×, the windows' 4×.",
        "zh": "在 D = {d}、M = {m} 时：{patches} 个图块（{side} × {side}，即 {pixels} × {pixels} 像素的图像、"
        "图块边长 {patch} 像素）下，全局注意力的代价是窗口注意力的 **{ratio} 倍**。图像面积变为 4 倍，"
        "全局注意力的分数变为 16 倍，窗口注意力的只变为 4 倍。",
    },
    "lab.windows.press": {
        "en": "Press Measure to time both on grids of 8 × 8, 16 × 16 and 32 × 32 random patches (a few seconds).",
        "zh": "点击“测量”，在 8 × 8、16 × 16 和 32 × 32 个随机图块的网格上为两者计时（几秒钟）。",
    },
    "lab.windows.col.patches": {"en": "patches N", "zh": "图块数 N"},
    "lab.windows.col.global": {"en": "global, ms (median)", "zh": "全局，毫秒（中位数）"},
    "lab.windows.col.windows": {"en": "shifted windows, ms (median)", "zh": "移位窗口，毫秒（中位数）"},
}
