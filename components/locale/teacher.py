"""Messages of teacher (presentation) mode: the switch, the slide navigation, the controls a host can hide."""

MESSAGES: dict[str, dict[str, str]] = {
    "teacher.settings": {"en": "Presentation mode", "zh": "演示模式"},
    "teacher.toggle": {"en": "Present one step at a time", "zh": "逐步演示"},
    "teacher.toggle_help": {
        "en": "For a projector: one pipeline step per slide, large type, Previous / Next (or the ← → keys). "
        "The link keeps the mode, the slide and the hidden controls.",
        "zh": "适合投影：每页一个步骤，大号字体，用“上一步 / 下一步”（或 ← → 键）翻页。"
        "链接会记住演示模式、当前页和隐藏的控件。",
    },
    "teacher.hide": {"en": "Controls hidden while presenting", "zh": "演示时隐藏的控件"},
    "teacher.hide_help": {
        "en": "Hidden controls keep their values (from the link or the defaults); they are just not shown.",
        "zh": "隐藏的控件仍保留其取值（来自链接或默认值），只是不显示出来。",
    },
    "teacher.hidden_now": {"en": "Hidden for this presentation: {names}", "zh": "本次演示隐藏了：{names}"},
    "teacher.step_of": {"en": "Step {step} / {steps}", "zh": "第 {step} 步 / 共 {steps} 步"},
    "teacher.final": {"en": "Summary and live check", "zh": "小结与实时核对"},
    "teacher.previous": {"en": "Previous", "zh": "上一步"},
    "teacher.next": {"en": "Next", "zh": "下一步"},
    "teacher.leave": {"en": "Leave presentation", "zh": "退出演示"},
    "teacher.control.d_model": {"en": "d_model (model width)", "zh": "d_model（模型维度）"},
    "teacher.control.num_heads": {"en": "number of heads", "zh": "头数"},
    "teacher.control.num_kv_heads": {"en": "number of key/value heads", "zh": "K/V 头数"},
    "teacher.control.mask_type": {"en": "mask", "zh": "掩码"},
    "teacher.control.window": {"en": "window width", "zh": "窗口宽度"},
    "teacher.control.block_pad": {"en": "also block [PAD] keys", "zh": "同时屏蔽 [PAD] 键"},
    "teacher.control.tokens": {"en": "text and examples", "zh": "文本与例句"},
    "teacher.control.seed": {"en": "seed", "zh": "随机种子"},
    "teacher.control.positional": {"en": "positions", "zh": "位置信息"},
    "teacher.control.device": {"en": "device", "zh": "设备"},
    "teacher.control.head": {"en": "head selector", "zh": "注意力头选择"},
    "teacher.control.generate": {"en": "generation's new tokens", "zh": "生成的新词元数"},
    "teacher.control.color_scale": {"en": "colour scale of the weights", "zh": "权重的颜色刻度"},
    # A problem in the link's "hide" list (the other link problems use the url.* messages of the playground).
    "url.unknown_names": {
        "en": "Link parameter “{name}” names controls that do not exist: {value}; they are ignored. "
        "Controls that can be hidden: {choices}.",
        "zh": "链接参数“{name}”中有不存在的控件：{value}；已忽略。可以隐藏的控件：{choices}。",
    },
    # ------------------------------------------------------------ the slides about the model
    "teacher.slide.model": {"en": "The model", "zh": "模型"},
    "teacher.slide.patches": {"en": "Patches on the image", "zh": "图像上的图块"},
    "teacher.slide.heads": {"en": "Head finder and pattern search", "zh": "找注意力头与模式搜索"},
    "teacher.slide.timeline": {"en": "The heads during training", "zh": "训练过程中的各个头"},
    "teacher.slide_missing": {
        "en": "This page has no slide “{asked}”: it shows “{shown}”, the nearest slide before it.",
        "zh": "本页没有“{asked}”这一页：显示的是它之前最近的一页“{shown}”。",
    },
    "teacher.slide_missing_first": {
        "en": "This page has no slide “{asked}” and none before it: it shows its first slide, “{shown}”, which comes "
        "after it.",
        "zh": "本页没有“{asked}”这一页，它之前也没有别的页：显示的是本页的第一页“{shown}”，它在“{asked}”之后。",
    },
    "teacher.model.title": {"en": "The model: {checkpoint}", "zh": "模型：{checkpoint}"},
    "teacher.model.value": {"en": "this checkpoint", "zh": "本检查点"},
    "teacher.model.layers": {"en": "layers", "zh": "层数"},
    "teacher.model.heads": {"en": "heads per layer", "zh": "每层的头数"},
    "teacher.model.heads_value": {
        "en": "{heads} query heads, {kv_heads} key/value heads",
        "zh": "{heads} 个查询头，{kv_heads} 个键/值头",
    },
    "teacher.model.width": {"en": "width", "zh": "宽度"},
    "teacher.model.width_value": {"en": "d_model {d}, d_k {d_k}", "zh": "d_model {d}，d_k {d_k}"},
    "teacher.model.layer": {"en": "layer shown", "zh": "显示的层"},
    "teacher.model.tokens": {"en": "tokens of the input", "zh": "输入的词元数"},
    "teacher.model.no_notes": {
        "en": "Nothing to note about this checkpoint's layer: the steps read it as they read random weights.",
        "zh": "这个检查点的这一层没有需要说明的地方：后面的步骤像读随机权重一样读它。",
    },
}
