"""Messages of images: the digits task, images and uploads refused, and lab 10 (windows and shifted windows)."""

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
    "training.done.held_out_images": {
        "en": "Trained in {steps} steps ({seconds} s): **accuracy {accuracy} %** on the {sequences} held-out digits, "
        "which no training step saw.",
        "zh": "训练了 {steps} 步（{seconds} 秒）：在 {sequences} 张留出的数字上 **准确率 {accuracy} %**，"
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
        "en": "At D = {d} and M = {m}: with {patches} patches ({side} × {side}, a 4096-pixel image at patches of "
        "16), global attention costs **{ratio}×** what windows cost. Quadruple the image's area and global "
        "attention's scores grow 16×, the windows' 4×.",
        "zh": "在 D = {d}、M = {m} 时：{patches} 个图块（{side} × {side}，即 4096 像素的图像、图块边长 16）下，"
        "全局注意力的代价是窗口注意力的 **{ratio} 倍**。图像面积变为 4 倍，全局注意力的分数变为 16 倍，"
        "窗口注意力的只变为 4 倍。",
    },
    "lab.windows.press": {
        "en": "Press Measure to time both on grids of 8 × 8, 16 × 16 and 32 × 32 random patches (a few seconds).",
        "zh": "点击“测量”，在 8 × 8、16 × 16 和 32 × 32 个随机图块的网格上为两者计时（几秒钟）。",
    },
    "lab.windows.col.patches": {"en": "patches N", "zh": "图块数 N"},
    "lab.windows.col.global": {"en": "global, ms (median)", "zh": "全局，毫秒（中位数）"},
    "lab.windows.col.windows": {"en": "shifted windows, ms (median)", "zh": "移位窗口，毫秒（中位数）"},
}
