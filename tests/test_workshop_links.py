"""Every link of docs/WORKSHOP.md opens a valid configuration of the playground, and opens it without an error or a
warning: each link is opened in AppTest, the checkpoints it names served by the tests' tiny ones (a GPT-2 for
``distilgpt2``, a Llama for ``smollm2-135m``, a BERT for ``minilm``) and its trainings short (conftest)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from components.url_params import VIEW_DOMAINS, parse_query_params, parse_teacher_params
from mha.checkpoints import checkpoint_names
from mha.config import LIMITS, AttentionConfig
from mha.masks import MASK_TYPES
from mha.tokens import tokenize

REPO = Path(__file__).resolve().parents[1]
WORKSHOP = REPO / "docs" / "WORKSHOP.md"
BASE = "http://localhost:8501/"
# The widget keys of the contract (ARCHITECTURE.md, "The URL is the state") and the language parameter.
WIDGET_KEYS = {
    "d_model", "num_heads", "mask_type", "window", "block_pad", "tokens", "seed", "positional", "weights", "task",
    "checkpoint", "layer", "patch", "image", "generate",
}  # fmt: skip
PRESENTATION_KEYS = {"teacher", "step"}
URL_KEYS = WIDGET_KEYS | PRESENTATION_KEYS | {"lang"}
INT_KEYS = {"d_model", "num_heads", "window", "seed", "layer", "patch", "generate"}
#: The guide's checkpoints, served in the tests by the tiny checkpoints of their families (conftest).
GUIDE_CHECKPOINTS = {"distilgpt2": "tiny_gpt2", "smollm2-135m": "tiny_llama", "minilm": "tiny_checkpoint"}
BOOLEANS = {"true": True, "false": False}

ALL_LINKS = re.findall(r"\]\((http://localhost:8501/[^)\s]*)\)", WORKSHOP.read_text(encoding="utf-8"))
LINKS = [url for url in ALL_LINKS if urlsplit(url).path == "/"]  # the playground itself
LAB_LINKS = [url for url in ALL_LINKS if urlsplit(url).path != "/"]  # pages/<n>_<name>.py at /<name>


def _query(url: str) -> dict[str, str]:
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}/" == BASE, url
    query = parse_qs(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
    assert all(len(values) == 1 for values in query.values()), f"a parameter repeats in {url}"
    return {name: values[0] for name, values in query.items()}


def _config(query: dict[str, str]) -> AttentionConfig:
    """The configuration a link asks for, parsed strictly (no clamping, no defaults for bad values)."""
    values: dict[str, object] = {}
    for name, raw in query.items():
        if name in INT_KEYS:
            assert re.fullmatch(r"\d+", raw), f"{name}={raw!r} is not a whole number"
            values[name] = int(raw)
        elif name == "block_pad":
            assert raw in BOOLEANS, f"{name}={raw!r} is not true/false"
            values[name] = BOOLEANS[raw]
        elif name == "mask_type":
            assert raw in MASK_TYPES, f"mask_type={raw!r}"
            values[name] = raw
        elif name == "positional":  # an old link's on/off reads as the page reads it (url_params)
            assert raw in {*BOOLEANS, "sinusoidal", "none", "rope"}, f"positional={raw!r}"
            values[name] = {True: "sinusoidal", False: "none"}.get(BOOLEANS.get(raw), raw)  # type: ignore[call-overload]
        elif name in {"tokens", "weights", "task", "checkpoint", "image"}:
            values[name] = raw
    if values.get("weights") == "pretrained" and "checkpoint" not in values:
        values["checkpoint"] = checkpoint_names()[0]  # the link leaves the server's default checkpoint
    return AttentionConfig(**{name: value for name, value in values.items() if name not in VIEW_DOMAINS})


def _lab_page(url_path: str) -> Path | None:
    """The page file Streamlit serves at ``/<name>``: ``pages/<number>_<name>.py``."""
    name = url_path.strip("/")
    matches = [page for page in (REPO / "pages").glob("*.py") if re.fullmatch(rf"\d+_{re.escape(name)}\.py", page.name)]
    return matches[0] if len(matches) == 1 else None


def test_the_guide_has_links_in_both_languages():
    langs = [_query(url).get("lang") for url in LINKS]
    assert langs.count("en") >= 8 and langs.count("zh") >= 8, langs
    assert langs.count("en") == langs.count("zh"), "each exercise has a link in both sections"


@pytest.mark.parametrize("url", LINKS)
def test_link_opens_a_valid_configuration(url):
    query = _query(url)
    assert set(query) <= URL_KEYS, f"unknown parameter(s) {set(query) - URL_KEYS} in {url}"
    assert query.get("lang") in {"en", "zh"}, url
    config = _config(query)  # raises ConfigError for an invalid combination (e.g. 512 / 7 heads)
    tokens = tokenize(config.tokens)
    assert 1 <= len(tokens) <= LIMITS.tokens_max, (url, len(tokens))


@pytest.mark.parametrize("url", LINKS)
def test_link_passes_the_app_url_parser_unchanged(url):
    query = _query(url)
    parsed = parse_query_params({k: v for k, v in query.items() if k != "lang"})
    assert parsed.problems == [], parsed.problems
    assert parse_teacher_params(query).problems == []
    expected = _config(query)
    for name, value in parsed.values.items():
        if name in VIEW_DOMAINS:  # the page's view (generate): not the config's
            assert str(value) == query[name], name
        else:
            assert getattr(expected, name) == value, name


def test_exercise_facts_stated_in_the_guide():
    """The numbers the guide quotes (token counts, d_k, parameter count) for its own links."""
    configs = [_config(_query(url)) for url in LINKS]
    by_text = {config.tokens: len(tokenize(config.tokens)) for config in configs}
    assert by_text["The animal didn't cross the street because it was too tired"] == 11
    assert by_text["I like to learn attention step by step"] == 8
    assert by_text["小明喜欢打球，因为他很开心。"] == 14
    assert tokenize("小明喜欢打球，因为他很开心。")[9] == "他"
    assert sorted({c.d_k for c in configs if c.d_model == 512}) == [8, 64, 512]
    text = WORKSHOP.read_text(encoding="utf-8")
    assert f"{4 * 512**2 + 4 * 512:,}" in text  # 1,050,624: 4·d² + 4·d for d = 512


@pytest.mark.parametrize("url", LAB_LINKS)
def test_lab_link_names_an_existing_page(url):
    assert _lab_page(urlsplit(url).path) is not None, f"no pages/<n>_<name>.py for {url}"
    assert _query(url).keys() == {"lang"}, url


# ---------------------------------------------------------------- each link opened, as a learner opens it
SCRIPT = str(REPO / "playground.py")


@pytest.fixture
def guide_checkpoints(request, monkeypatch) -> None:
    """The server's list for a test: the guide's checkpoint names, each served by a tiny checkpoint."""
    listed = ",".join(f"{name}={request.getfixturevalue(fixture)}" for name, fixture in GUIDE_CHECKPOINTS.items())
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", listed)


def _shown(at: AppTest, kind: str) -> list[str]:
    return [str(element.value) for element in at.get(kind)]


def _link_warnings(at: AppTest) -> list[str]:
    """The page's warnings, but the training's own verdict that it missed its accuracy target: that is what a
    model says (the tests' 30-step trainings miss it; so does one head on two relations, the point of exercise 9),
    not a problem of the link."""
    from conftest import SHORT_TRAINING_STEPS

    from components.i18n import t
    from mha.training.loop import TARGET_ACCURACY

    missed = {
        t("training.target_missed", lang=lang, target=f"{100 * TARGET_ACCURACY:g}", steps=SHORT_TRAINING_STEPS)
        for lang in ("en", "zh")
    }
    return [text for text in _shown(at, "warning") if text not in missed]


def _open(url: str) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=120)
    for name, value in _query(url).items():
        at.query_params[name] = value
    return at.run()


def _opened_after_training(url: str) -> AppTest:
    """The link opened; for trained weights, opened again once the (short) training it started has ended: the page
    with the model, as the first learner's page shows it when the training ends (and every later learner's at once)."""
    from test_trained_page import finish

    at = _open(url)
    if _query(url).get("weights") != "trained":
        return at
    assert not at.exception and not at.error, (at.exception, _shown(at, "error"))
    finish(_config(_query(url)).weight_spec)
    return _open(url)


def test_the_guide_names_only_checkpoints_the_tests_can_serve():
    named = {_query(url).get("checkpoint") for url in LINKS} - {None}
    assert named and named <= set(GUIDE_CHECKPOINTS), named


@pytest.mark.usefixtures("guide_checkpoints", "short_trainings")
@pytest.mark.parametrize("url", LINKS)
def test_link_opens_the_page_without_an_error_or_a_warning(url):
    at = _opened_after_training(url)
    assert not at.exception, at.exception
    assert not at.error and not _link_warnings(at), (_shown(at, "error"), _shown(at, "warning"))


@pytest.mark.parametrize("url", LAB_LINKS)
def test_lab_link_opens_its_page_without_an_error_or_a_warning(url):
    page = _lab_page(urlsplit(url).path)
    at = AppTest.from_file(str(page), default_timeout=120)
    for name, value in _query(url).items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, at.exception
    assert not at.error, _shown(at, "error")
    # A lab's own warnings are its lesson (lab 4's NaN rows); none may be about the link.
    assert not [text for text in _shown(at, "warning") if "“lang”" in text], _shown(at, "warning")


def _session_two(lang: str) -> str:
    """The second session's part of the guide in ``lang`` (from its anchor to the next language or the end)."""
    text = WORKSHOP.read_text(encoding="utf-8")
    start = text.index('<a id="session-two">' if lang == "en" else '<a id="第二节课">')
    end = text.find('<a id="中文">', start)
    return text[start : end if end > 0 else None]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_session_two_is_45_minutes_with_a_link_per_exercise(lang):
    part = _session_two(lang)
    rows = re.findall(r"^\| (\d+) \| [^|]+ \| (\d+) \|$", part, re.M)
    assert len(rows) == 8 and sum(int(minutes) for _, minutes in rows) == 45, rows
    assert re.search(r"^\| \| (total|合计) \| 45 \|$", part, re.M)
    links = [
        _query(url) | {"path": urlsplit(url).path} for url in re.findall(r"\]\((http://localhost:8501/[^)\s]*)\)", part)
    ]
    assert all(link["lang"] == lang for link in links)
    wanted = {
        "a causal model's layer and its pattern search": {"checkpoint": "distilgpt2", "step": "heads"},
        "grouped-query heads and RoPE": {"checkpoint": "smollm2-135m"},
        "generation": {"checkpoint": "smollm2-135m", "generate": "16"},
        "an image's patches slide": {"task": "digits", "step": "patches"},
        "Swin's windows (lab 10)": {"path": "/windows"},
        "what the layer used (lab 11)": {"path": "/attribution"},
        "the tutorial's two masks (lab 4)": {"path": "/masks"},
        "an export (lab 12)": {"path": "/onnx"},
    }
    for what, fields in wanted.items():
        assert any(fields.items() <= link.items() for link in links), what


def _exercise(lang: str, heading: str) -> str:
    """One exercise of the guide in ``lang``: from its heading to the next heading."""
    text = _session_two(lang)
    start = text.index(heading)
    end = text.find("\n#### ", start + 1)
    return text[start : end if end > 0 else None]


@pytest.mark.parametrize(
    ("lang", "heading", "wrong"),
    [
        ("en", "#### S2.2 ", ("how far apart", "and so is the")),
        ("zh", "#### 二 · 2 ", ("相隔多远", "KV 缓存也是")),
    ],
)
def test_the_grouped_query_exercise_says_what_rope_and_the_cache_depend_on(lang, heading, wrong):
    """SmolLM2-135M's sizes (bench/pretrained.py: 576 wide, 9 query / 3 K/V heads): W_k and W_v are a third of W_q,
    the KV cache per token a third of what nine K/V heads would keep (not a third of W_q); RoPE's score depends on
    the two vectors and n − m, not on the distance alone."""
    from bench.pretrained import BUILT, LLAMA_SHAPES
    from mha.counting import kv_cache_numbers

    name = "SmolLM2-135M size, random"
    _, d_model, _, heads, _ = BUILT[name]
    kv_heads, d_k = int(LLAMA_SHAPES[name]["kv_heads"]), d_model // heads
    part = _exercise(lang, heading)
    assert f"{heads} " in part and f"{kv_heads} " in part
    assert f"{d_model} · {kv_heads * d_k}" in part and f"{d_model} · {d_model}" in part  # numbers, not a shape
    assert f"2 · {kv_heads} · {d_k} = {kv_cache_numbers(1, kv_heads, d_k):,}" in part
    assert f"{kv_cache_numbers(1, heads, d_k):,}" in part
    assert "n − m" in part and not [phrase for phrase in wrong if phrase in part], part
