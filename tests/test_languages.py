"""Two languages: every page reads in its own language, and the language is chosen URL > selector > locale.

``test_i18n.py`` checks the catalog (both languages, same placeholders). Here:

- every ``t("...")`` key written in the code exists in the catalog;
- every text a page shows (headings, markdown, captions, alerts, widget labels, options and help,
  buttons, expanders, links, table headers and cells, chart titles) is in the page's language:
  with ``lang=zh`` no English words are left once code, identifiers, the user's tokens and a short
  list of technical names are set aside; with ``lang=en`` no Chinese character outside the user's
  tokens, the example sentences and the language selector;
- the language comes from the ``lang`` URL parameter, then the selector, then the browser's locale
  (``st.context.locale`` is patched for AppTest; a real Chromium with a Chinese locale checks it too).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import headings
from google.protobuf.descriptor import FieldDescriptor
from streamlit.runtime.context import ContextProxy
from streamlit.testing.v1 import AppTest

from components.canvas import CHART
from components.heatmap import decode
from components.i18n import language_from_locale, t
from components.locale import CATALOG
from components.nav import LAB_PAGES
from mha.tokens import tokenize

REPO = Path(__file__).resolve().parents[1]
HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

# ---------------------------------------------------------------- collecting what a page shows
_TEXT_FIELDS = frozenset({"body", "label", "help", "options", "content", "placeholder"})
_SKIPPED_ELEMENTS = frozenset({"Code", "Html"})  # code is code; Html carries only the constant CSS


def _walk(node) -> Iterator:
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def _proto_strings(message) -> Iterator[str]:
    for field, value in message.ListFields():
        items = value if field.is_repeated else [value]
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            for item in items:
                yield from _proto_strings(item)
        elif field.type == FieldDescriptor.TYPE_STRING and field.name in _TEXT_FIELDS:
            yield from items


def _chart_titles(spec: object) -> Iterator[str]:
    if isinstance(spec, dict):
        for key, value in spec.items():
            if key != "title":
                yield from _chart_titles(value)
            elif isinstance(value, str):
                yield value
            elif isinstance(value, list):
                yield from (line for line in value if isinstance(line, str))
            elif isinstance(value, dict) and isinstance(value.get("text"), str):
                yield value["text"]
    elif isinstance(spec, list):
        for item in spec:
            yield from _chart_titles(item)


def shown_texts(at: AppTest) -> list[tuple[str, str]]:
    """``(widget key or "", text)`` for every text the page shows, from every element's protobuf."""
    found = []
    for node in _walk(at._tree):
        proto = getattr(node, "proto", None)
        kind = type(node).__name__
        if proto is None or not hasattr(proto, "ListFields") or kind in _SKIPPED_ELEMENTS:
            continue
        key = str(getattr(proto, "id", "")).rsplit("-", 1)[-1]
        if getattr(node, "type", "") == "vega_lite_chart":
            found += [(key, title) for title in _chart_titles(json.loads(proto.spec))]
        elif getattr(node, "type", "") == "bidi_component":
            if proto.component_name == CHART:  # the canvas heatmaps: every word but the token labels
                found += [(key, word) for word in decode(proto.bytes).words()]
        elif kind == "Table":
            frame = node.value
            found += [(key, str(column)) for column in frame.columns]
            found += [(key, cell) for column in frame.columns for cell in frame[column] if isinstance(cell, str)]
        else:
            found += [(key, text) for text in _proto_strings(proto)]
    return found


def user_tokens(at: AppTest) -> set[str]:
    """Tokens of every text box on the page: the user's words, in whatever language they are."""
    texts = [node.value for node in _walk(at._tree) if type(node).__name__ in {"TextArea", "TextInput"}]
    return {token for text in texts if isinstance(text, str) for token in tokenize(text)}


def _own_text(key: str) -> bool:
    """Texts checked for language: not the language selector (both names on purpose), not example sentences."""
    return key != "lang" and not key.startswith("example_")


# ---------------------------------------------------------------- what counts as leftover English
_CODE_SPAN = re.compile(r"`[^`]*`")
_CALL = re.compile(r"[A-Za-z_][\w.]*\([^()]*\)")  # sublayer(x), nn.MultiheadAttention(query, key, value)
_GLOSS = re.compile(r"（[\x20-\x7e]+）")  # an English term in full-width brackets after its translation
_IDENTIFIER = re.compile(r"[A-Za-z]*[_.\d\u00b2\u00b3\u1d40-\u1d7f][\w.\u1d40-\u1d7f]*")  # d_model, W_q, Kᵀ, .npz
_NAME = re.compile(r"[A-Za-z]+(?:-[A-Za-z0-9]+)*")  # words, and hyphenated names such as Post-Norm
#: Names a Chinese technical text keeps in English (products, APIs, units, standard terms).
TECHNICAL = frozenset({
    "PyTorch", "Python", "API", "notebook", "CSV", "zip", "npz", "KiB", "MiB", "GiB", "nats", "bug", "PAD", "FLOPs",
    "NaN", "cpu", "cuda", "mps", "CPU", "GPU", "True", "False", "sin", "cos", "exp", "log", "softmax", "dropout",
    "eval", "view", "transpose", "reshape", "contiguous", "MultiHeadAttention", "MultiheadAttention",
    "TransformerEncoderLayer", "Transformer", "Swin", "BERT", "BERT-base", "GPT", "LayerNorm", "Post-Norm",
    "Pre-Norm", "FFN", "GELU", "ReLU", "jieba", "Hugging", "Face", "CLS", "SEP", "UNK",
    "ONNX", "Runtime", "TensorRT",
    "ViT", "MLP", "PNG", "JPEG", "scikit-learn", "DeiT", "DIST",
    "RoPE", "GQA", "MQA", "MHA", "Llama", "Qwen", "Mistral", "RMSNorm", "Ainslie", "Shazeer",
    "Longformer", "BigBird", "elu", "RNN", "Katharopoulos", "Beltagy", "Zaheer",
    "FlashAttention", "Dao", "Milakov", "Gimelshein", "SRAM", "HBM",
})  # fmt: skip
_SHORT_WORDS = frozenset({"of", "in", "to", "is", "on", "or", "by", "as", "at", "an", "be", "it", "no", "if", "so"})


def leftover_english(text: str, tokens: set[str]) -> list[str]:
    """English words in a Chinese text, once code, calls, glosses, identifiers, tokens and TECHNICAL are removed."""
    rest = text.replace("\\", "")  # md_escape's backslashes
    for pattern in (_CODE_SPAN, _GLOSS):
        rest = pattern.sub(" ", rest)
    while _CALL.search(rest):
        rest = _CALL.sub(" ", rest)
    for token in sorted(tokens, key=len, reverse=True):  # a token as a whole word: "on" spares FlashAttention
        rest = re.sub(rf"(?<![A-Za-z]){re.escape(token)}(?![A-Za-z])", " ", rest)
    rest = _IDENTIFIER.sub(" ", rest)
    words = _NAME.findall(rest)
    return [w for w in words if w not in TECHNICAL and (len(w) >= 3 or w.lower() in _SHORT_WORDS)]


def test_leftover_english_finds_english_and_spares_technical_text():
    tokens = {"cat", "sat"}
    assert leftover_english("Step 2 of 4", set()) == ["Step", "of"]
    assert leftover_english("头数 num_heads (h)", set()) == []
    assert (
        leftover_english("对键做 softmax，`view(B, L, H, d_k)` 与 nn.MultiheadAttention(query, key) 对照", set()) == []
    )
    assert leftover_english("平均熵（nats）· 来自 cat · sat", tokens) == []
    assert leftover_english("合计：Total parameters", set()) == ["Total", "parameters"]
    assert leftover_english("13 · FlashAttention：逐块计算", {"on"}) == []  # a token inside a name is not cut out
    assert leftover_english("Attention on 注意力", {"on"}) == ["Attention"]


# ---------------------------------------------------------------- every key in the code is in the catalog
def _t_calls() -> Iterator[tuple[str, ast.AST]]:
    files = [REPO / "playground.py", *REPO.glob("pages/*.py"), *REPO.glob("components/**/*.py")]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "t" and node.args:
                yield path.relative_to(REPO).as_posix(), node.args[0]


def _key_pattern(arg: ast.AST) -> re.Pattern | None:
    """The key of a ``t(...)`` call as a regex: literal text, with each f-string field as one or more characters."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return re.compile(re.escape(arg.value))
    if isinstance(arg, ast.JoinedStr):
        parts = [re.escape(p.value) if isinstance(p, ast.Constant) else ".+" for p in arg.values]
        return re.compile("".join(parts))
    return None


def test_every_key_used_in_the_code_is_in_the_catalog():
    checked = 0
    for path, arg in _t_calls():
        pattern = _key_pattern(arg)
        if pattern is None:  # a key held in a variable: its values are checked where they are built
            continue
        assert any(pattern.fullmatch(key) for key in CATALOG), f"{path}: t({ast.unparse(arg)}) has no message"
        checked += 1
    assert checked > 150


@pytest.mark.parametrize("key", sorted(CATALOG))
def test_english_messages_have_no_chinese_unless_quoting_it(key):
    # The selector names both languages; the example sentence and the cross-attention lab quote Chinese on purpose.
    quoting = {"lang.label", "lang.zh", "example.xiaoming", "lab.cross.explain"}
    if key not in quoting:
        assert not HAN.search(CATALOG[key]["en"]), CATALOG[key]["en"]


# ---------------------------------------------------------------- each page in its own language
PAGES = [
    ("playground.py", {}),
    ("playground.py", {"teacher": "1", "step": "2"}),
    ("playground.py", {"teacher": "1", "step": "5"}),
    *[(page, {}) for page, _, _ in LAB_PAGES],
]
_PAGE_IDS = ["playground", "teacher-step2", "teacher-summary", *[lab for _, lab, _ in LAB_PAGES]]
SMALL = {"d_model": "64", "num_heads": "4", "mask_type": "causal"}  # the default sentence, masked: notes shown


def open_page(page: str, lang: str, params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(REPO / page), default_timeout=60)
    at.query_params["lang"] = lang
    for name, value in ({**SMALL, **params} if page == "playground.py" else params).items():
        at.query_params[name] = value
    return at.run()


@pytest.mark.parametrize(("page", "params"), PAGES, ids=_PAGE_IDS)
def test_chinese_pages_have_no_english_left(page, params):
    at = open_page(page, "zh", params)
    assert not at.exception, at.exception
    tokens = user_tokens(at)
    texts = [(key, text) for key, text in shown_texts(at) if _own_text(key)]
    assert len(texts) > 10
    leftovers = [(key, text[:90], words) for key, text in texts if (words := leftover_english(text, tokens))]
    assert not leftovers, leftovers
    titles = [e.value for kind in ("title", "header", "subheader") for e in at.get(kind)]
    titles += [text for level in (1, 2, 3) for text in headings(at, level)]  # the playground's are Markdown
    assert titles and all(HAN.search(h) for h in titles), titles


@pytest.mark.parametrize(("page", "params"), PAGES, ids=_PAGE_IDS)
def test_english_pages_have_no_chinese_outside_the_users_tokens(page, params):
    at = open_page(page, "en", params)
    assert not at.exception, at.exception
    tokens = sorted(user_tokens(at), key=len, reverse=True)
    chinese = []
    for key, text in shown_texts(at):
        rest = text
        for token in tokens:
            rest = rest.replace(token, "")
        if _own_text(key) and HAN.search(rest):
            chinese.append((key, text[:90]))
    assert not chinese, chinese
    selector = at.selectbox(key="lang")
    assert selector.options == ["English", "中文"]  # each language named in itself


def test_chinese_sentence_stays_as_typed_on_the_english_page():
    at = open_page("playground.py", "en", {"tokens": "小明喜欢打球"})
    assert not at.exception
    assert "0\\:小 · 1\\:明" in "\n".join(m.value for m in at.markdown)  # the user's tokens, escaped, untranslated
    assert headings(at, 1) == ["Attention Playground"]


# ---------------------------------------------------------------- URL > selector > browser locale
@pytest.mark.parametrize(
    ("locale", "expected"),
    [
        ("zh", "zh"),
        ("zh-CN", "zh"),
        ("zh-TW", "zh"),
        ("zh-Hans-SG", "zh"),
        ("ZH-hk", "zh"),
        ("en-US", "en"),
        ("en", "en"),
        ("fr-FR", "en"),
        ("ja-JP", "en"),
        ("", "en"),
        (None, "en"),
    ],
)
def test_browser_locale_resolution(locale, expected):
    assert language_from_locale(locale) == expected


@pytest.fixture
def browser_locale(monkeypatch):
    """Set what ``st.context.locale`` answers (AppTest runs the page in this process)."""

    def use(locale: str | None) -> None:
        monkeypatch.setattr(ContextProxy, "locale", property(lambda self: locale))

    return use


def _lab(lang_params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(REPO / "pages/1_scaling.py"), default_timeout=60)  # a light page: language only
    for name, value in lang_params.items():
        at.query_params[name] = value
    return at.run()


def test_without_a_link_the_browser_locale_decides(browser_locale):
    browser_locale("zh-CN")
    at = _lab({})
    assert at.selectbox(key="lang").value == "zh"
    assert at.title[0].value == t("lab.scaling.title", lang="zh")
    assert at.query_params["lang"] == "zh"  # and the link now says so
    browser_locale("de-DE")
    assert _lab({}).selectbox(key="lang").value == "en"


def test_the_link_beats_the_browser_locale(browser_locale):
    browser_locale("zh-CN")
    at = _lab({"lang": "en"})
    assert at.selectbox(key="lang").value == "en"
    assert at.title[0].value == t("lab.scaling.title", lang="en")


def test_the_selector_beats_link_and_locale_and_updates_the_link(browser_locale):
    # From English to Chinese, and no rerun after: AppTest formats option labels outside the script run,
    # hence in English, so it cannot send the widgets of a Chinese page back (a browser has no such limit).
    browser_locale("de-DE")
    at = _lab({"lang": "en"})
    at.selectbox(key="lang").set_value("zh").run()
    assert at.title[0].value == t("lab.scaling.title", lang="zh")
    assert at.query_params["lang"] == "zh"
    assert at.selectbox(key="lang").value == "zh"


def test_a_bad_lang_in_the_link_falls_back_to_the_locale_with_a_warning_in_that_language(browser_locale):
    browser_locale("zh-TW")
    at = _lab({"lang": "<b>fr</b>"})
    assert at.selectbox(key="lang").value == "zh"
    (warning,) = at.sidebar.warning
    assert HAN.search(warning.value)
    assert "\\<b\\>fr" in warning.value and "<b>" not in warning.value  # quoted as text, never as HTML
    assert at.query_params["lang"] == "zh"


@pytest.mark.browser
def test_a_chinese_browser_opens_the_chinese_page(app_url, browser):
    from conftest import wait_for_app

    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="zh-CN")
    try:
        page = context.new_page()
        page.goto(f"{app_url}/?d_model=64&num_heads=4")
        wait_for_app(page)
        assert page.get_by_role("heading", name="注意力游乐场").first.is_visible()
        assert "lang=zh" in page.url
        page.goto(f"{app_url}/?d_model=64&num_heads=4&lang=en")  # the link beats the browser
        wait_for_app(page)
        assert page.get_by_role("heading", name="Attention Playground").first.is_visible()
    finally:
        context.close()
