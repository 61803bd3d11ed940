"""Messages of the main page's lessons from the tutorials: why √d_k, the labs of each step, `contiguous()`,
dropout, uniform weights, batches and padding, the [PAD] toggle, and `nn.MultiheadAttention`'s batch order."""

MESSAGES: dict[str, dict[str, str]] = {
    # ------------------------------------------------------------ padding together with causal or window
    "controls.block_pad": {"en": "Also block [PAD] keys", "zh": "同时屏蔽 [PAD] 键"},
    "controls.block_pad_help": {
        "en": "Add the padding mask to the causal or window mask (mask & padding): no token attends a [PAD] "
        "token, as in a padded batch. The padding mask itself always blocks them.",
        "zh": "把填充掩码叠加到因果掩码或滑动窗口掩码上（mask & padding）：任何词元都不关注 [PAD] 词元，"
        "就像填充过的批次那样。填充掩码本身总是屏蔽它们。",
    },
    "notes.block_pad_no_pads": {
        "en": "“Also block [PAD] keys” is on, but the text has no [PAD] token: nothing more is blocked.",
        "zh": "已打开“同时屏蔽 [PAD] 键”，但文本中没有 [PAD] 词元：没有多屏蔽任何位置。",
    },
    "error.block_pad.not_boolean": {
        "en": "“Also block [PAD] keys” must be on or off, got “{value}”.",
        "zh": "“同时屏蔽 [PAD] 键”只能是开或关，收到的是“{value}”。",
    },
}
