"""Messages of images: the digits task, images and uploads refused."""

MESSAGES: dict[str, dict[str, str]] = {
    # ------------------------------------------------------------ the digits task
    "task.digits": {"en": "handwritten digits (a small ViT)", "zh": "手写数字（小型 ViT）"},
    "training.task.digits": {
        "en": "**Which digit is it?** An 8 × 8 image of a handwritten digit (one of the 1,797 that come with "
        "scikit-learn, bundled with this app) is cut into {patches} patches of {patch} × {patch} pixels. The "
        "tokens are those patches, named by their place in the grid (`r1c2`: row 1, column 2), after a `[CLS]` "
        "token that belongs to no patch. The answer is read from `[CLS]` alone, after attention: its row shows "
        "which patches the answer draws on. {held_out} of the digits are held out and never trained on; the "
        "accuracy is measured on them.",
        "zh": "**这是哪个数字？** 一张 8 × 8 的手写数字图片（来自 scikit-learn 自带的 1,797 张，已随本应用打包）"
        "被切成 {patches} 个 {patch} × {patch} 像素的图块（Patch）。词元就是这些图块，按它们在网格中的位置命名"
        "（`r1c2`：第 1 行第 2 列），前面还有一个不属于任何图块的 `[CLS]` 词元。答案只从注意力之后的 `[CLS]` "
        "读出：它那一行显示答案取自哪些图块。其中 {held_out} 张数字被留出，训练时从不使用；准确率就在它们上面测量。",
    },
    "training.model_digits": {
        "en": "The model, a small Vision Transformer (ViT): each patch flattened ({pixels} numbers) and embedded "
        "by `Linear({pixels}, {d})` ({embedding} parameters); a learned `[CLS]` vector first and a learned "
        "position vector for each of the {tokens} tokens ({positions} parameters); then {layers} Pre-Norm "
        "block(s), `x + MultiHeadAttention(LayerNorm(x))` ({attention} parameters, the layer of the four steps "
        "below) and `x + MLP(LayerNorm(x))` with `Linear({d}, {hidden})`, GELU, `Linear({hidden}, {d})`; a "
        "final LayerNorm and `Linear({d}, 10)` reading `[CLS]`: **{total}** parameters. Trained with `AdamW` "
        "(learning rate {lr}, weight decay {decay}, {warmup} warm-up steps) on batches of {batch} of the "
        "{train} training digits.",
        "zh": "模型是一个小型视觉 Transformer（ViT）：每个图块展平（{pixels} 个数），由 `Linear({pixels}, {d})` "
        "嵌入（{embedding} 个参数）；最前面一个可学习的 `[CLS]` 向量，{tokens} 个词元各有一个可学习的位置向量"
        "（{positions} 个参数）；然后是 {layers} 个 Pre-Norm 块：`x + MultiHeadAttention(LayerNorm(x))`"
        "（{attention} 个参数，就是下面四个步骤中的那一层）和 `x + MLP(LayerNorm(x))`，其中是 "
        "`Linear({d}, {hidden})`、GELU、`Linear({hidden}, {d})`；最后是 LayerNorm 和读取 `[CLS]` 的 "
        "`Linear({d}, 10)`：共 **{total}** 个参数。用 `AdamW`（学习率 {lr}，权重衰减 {decay}，预热 {warmup} 步）"
        "在 {train} 张训练数字中每批取 {batch} 张来训练。",
    },
    "training.done_digits": {
        "en": "Trained in {steps} steps ({seconds} s): **accuracy {accuracy} %** on the {count} held-out digits, "
        "which no training step saw.",
        "zh": "训练了 {steps} 步（{seconds} 秒）：在 {count} 张留出的数字上 **准确率 {accuracy} %**，"
        "训练中没有任何一步见过它们。",
    },
    "training.target_reached_digits": {
        "en": "The batch accuracy reached {target} % at step {step}; over {sharpen} more steps the learning rate "
        "then fell to 0.",
        "zh": "本批准确率在第 {step} 步达到 {target} %；之后又训练了 {sharpen} 步，学习率逐渐降到 0。",
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
}
