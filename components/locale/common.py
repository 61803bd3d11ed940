"""Messages shared by every page: app title, language names, validation errors."""

MESSAGES: dict[str, dict[str, str]] = {
    "app.title": {"en": "Attention Playground", "zh": "注意力游乐场"},
    "lang.en": {"en": "English", "zh": "English"},
    "lang.zh": {"en": "中文", "zh": "中文"},
}
