"""Messages shared by every page: app title, language selector, validation errors."""

MESSAGES: dict[str, dict[str, str]] = {
    "app.title": {"en": "Attention Playground", "zh": "注意力游乐场"},
    "lang.label": {"en": "Language / 语言", "zh": "语言 / Language"},
    "lang.en": {"en": "English", "zh": "English"},
    "lang.zh": {"en": "中文", "zh": "中文"},
    "lang.invalid": {
        "en": "Unknown language “{value}” in the link; use one of: {choices}.",
        "zh": "链接中的语言“{value}”无法识别；可选：{choices}。",
    },
}
