"""Messages for input the controls had to correct (typed text, emptied number fields)."""

MESSAGES: dict[str, dict[str, str]] = {
    "input.control_chars": {
        "en": "The text contains {count} invisible control or direction characters; they are ignored.",
        "zh": "文本中有 {count} 个不可见的控制字符或方向字符，已忽略。",
    },
    "input.empty_number": {
        "en": "“{name}” was empty, not a number or out of range: {used} (the default) is used instead.",
        "zh": "“{name}”为空、不是数字或超出范围：改用默认值 {used}。",
    },
}
