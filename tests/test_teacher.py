"""Teacher (presentation) mode: the link's ``teacher``, ``step`` and ``hide``, one slide at a time, large type.

Pure parsing first, then the page through AppTest (small sizes: d_model 64, 4 heads, 6 tokens),
then a real Chromium at a projector's 1280x720, which saves test-artifacts/teacher-{en,zh}.png.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import headings, heatmaps, trained_spec
from streamlit.testing.v1 import AppTest
from tolerances import assert_same_charts

from components.charts import PRESENTATION_FONT_SCALE
from components.i18n import LANGUAGES, t
from components.page_sections import fit_slide, slide_names, slide_order
from components.page_sections import slide_title as label_of
from components.panels.source_code import step_code
from components.teacher import LARGE_TYPE_CSS, TeacherView, to_teacher_params
from components.url_params import HIDEABLE, SLIDES, STEPS, URL_KEYS, parse_teacher_params

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
SMALL = {"d_model": "64", "num_heads": "4", "tokens": "the cat sat on the mat"}  # L = 6, d_k = 16


# ---------------------------------------------------------------- the link, parsed
def _codes(parsed) -> dict[str, str]:
    return {problem.field: problem.code for problem in parsed.problems}


def test_valid_presentation_values_parse_without_problems():
    parsed = parse_teacher_params({"teacher": "1", "step": "3", "hide": "seed,device,positional", "d_model": "64"})
    assert parsed.problems == []
    assert parsed.values == {"teacher": True, "step": "3", "hide": ("seed", "positional", "device")}  # HIDEABLE order


@pytest.mark.parametrize(("raw", "on"), [("1", True), ("true", True), (" ON ", True), ("yes", True), ("0", False),
                                         ("false", False), ("off", False), ("no", False)])  # fmt: skip
def test_teacher_switch_words(raw, on):
    parsed = parse_teacher_params({"teacher": raw})
    assert parsed.values == {"teacher": on}
    assert parsed.problems == []


def test_a_bad_switch_word_leaves_presentation_mode_off_with_a_problem():
    parsed = parse_teacher_params({"teacher": "please"})
    assert parsed.values == {"teacher": False}
    (problem,) = parsed.problems
    assert (problem.field, problem.code, problem.params["value"]) == ("teacher", "not_boolean", "please")


@pytest.mark.parametrize("raw", ["", "2.5", "３", "1e1", "--2"])
def test_a_step_that_is_not_a_whole_number_opens_the_first_slide(raw):
    parsed = parse_teacher_params({"step": raw})
    assert parsed.values == {"step": "1"}
    assert _codes(parsed) == {"step": "not_integer"}
    assert parsed.problems[0].params == {"value": raw, "used": 1}


@pytest.mark.parametrize(("raw", "used"), [("0", 1), ("-3", 1), ("6", SLIDES), ("99", SLIDES),
                                           ("9" * 5000, SLIDES), ("-" + "9" * 5000, 1)])  # fmt: skip
def test_a_step_out_of_range_is_clamped(raw, used):
    parsed = parse_teacher_params({"step": raw})
    assert parsed.values == {"step": str(used)}
    (problem,) = parsed.problems
    assert problem.code == "out_of_range"
    assert (problem.params["low"], problem.params["high"], problem.params["used"]) == (1, SLIDES, used)


@pytest.mark.parametrize(
    ("raw", "name"),
    [("model", "model"), (" Patches ", "patches"), ("HEADS", "heads"), ("timeline", "timeline"), ("summary", "5"),
     ("5", "5"), ("1", "1")],
)  # fmt: skip
def test_a_slide_is_named_in_the_link_by_its_name_or_its_number(raw, name):
    parsed = parse_teacher_params({"step": raw})
    assert parsed.values == {"step": name}
    assert parsed.problems == []


@pytest.mark.parametrize("raw", ["two", "intro", "<b>model</b>", "step"])
def test_a_word_that_names_no_slide_opens_the_first_with_a_problem_listing_the_names(raw):
    parsed = parse_teacher_params({"step": raw})
    assert parsed.values == {"step": "1"}
    (problem,) = parsed.problems
    assert (problem.field, problem.code, problem.params["value"], problem.params["used"]) == (
        "step", "unknown_choice", raw, "1"
    )  # fmt: skip
    assert set(problem.params["choices"].split(", ")) == {*slide_order(), "summary"}


def test_the_slides_of_each_kind_of_page_in_order():
    assert slide_names() == ("1", "2", "3", "4", "5")  # random weights: the steps and the summary, as before
    assert slide_names("trained") == ("model", "1", "2", "3", "4", "timeline", "5")
    assert slide_names("trained", image=True) == ("model", "1", "2", "patches", "3", "4", "timeline", "5")
    assert slide_names("pretrained") == ("model", "1", "2", "heads", "3", "4", "5")
    assert slide_names("pretrained", image=True) == ("model", "1", "2", "patches", "heads", "3", "4", "5")
    for weights in ("random", "trained", "pretrained"):
        for image in (False, True):
            slides = slide_names(weights, image)
            assert [s for s in slide_order() if s in slides] == list(slides)  # always in the one order
            assert {"1", "2", "3", "4", "5"} <= set(slides)  # every link's step=1..5 still opens its slide


@pytest.mark.parametrize(("name", "used"), [("2", "2"), ("heads", "2"), ("patches", "2"), ("timeline", "4")])
def test_a_slide_the_page_lacks_opens_the_nearest_one_before_it(name, used):
    assert fit_slide(name, slide_names()) == used
    assert slide_order().index(used) <= slide_order().index(name)


def test_a_slide_with_none_before_it_on_the_page_opens_the_pages_first_which_comes_after_it():
    slides = slide_names()  # random weights: no model slide, and nothing before it
    assert "model" not in slides and slide_order().index("model") < slide_order().index(slides[0])
    assert fit_slide("model", slides) == slides[0] == "1"


def test_hide_is_forgiving_about_case_spaces_and_repeats():
    parsed = parse_teacher_params({"hide": " Seed, seed ,DEVICE,,"})
    assert parsed.values == {"hide": ("seed", "device")}
    assert parsed.problems == []
    assert parse_teacher_params({"hide": ""}).values == {"hide": ()}


def test_unknown_names_in_hide_are_reported_and_the_known_ones_kept():
    parsed = parse_teacher_params({"hide": "colour,seed,<b>x</b>"})
    assert parsed.values == {"hide": ("seed",)}
    (problem,) = parsed.problems
    assert (problem.field, problem.code) == ("hide", "unknown_names")
    assert problem.params["value"] == "<b>x</b>, colour"
    assert problem.params["choices"] == ", ".join(HIDEABLE)


def test_every_control_can_be_hidden():
    assert set(HIDEABLE) == set(URL_KEYS)  # every control mirrored in the URL, the head selector included


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_presentation_problem_has_a_message(lang):
    parsed = parse_teacher_params({"teacher": "maybe", "step": "x", "hide": "colour"})
    parsed_range = parse_teacher_params({"step": "7"})
    for problem in parsed.problems + parsed_range.problems:
        text = t(f"url.{problem.code}", lang=lang, name=problem.field, **problem.params)
        assert f"“{problem.field}”" in text
        assert str(problem.params["value"]) in text


@pytest.mark.parametrize(
    "view",
    [
        TeacherView(True, "4", ("seed", "head")),
        TeacherView(True, str(SLIDES), ()),
        TeacherView(True, "1", HIDEABLE),
        TeacherView(True, "heads", ()),
    ],
)
def test_a_view_survives_its_own_link(view):
    params = {name: value for name, value in to_teacher_params(view).items() if value is not None}
    parsed = parse_teacher_params(params)
    assert parsed.problems == []
    assert TeacherView(parsed.values["teacher"], parsed.values["step"], parsed.values.get("hide", ())) == view


def test_off_the_link_keeps_only_the_hide_list_and_nothing_is_hidden():
    view = TeacherView(False, "3", ("seed",))
    assert to_teacher_params(view) == {"teacher": None, "step": None, "hide": "seed"}
    assert view.hidden == frozenset()
    assert TeacherView(True, "3", ("seed",)).hidden == {"seed"}


# ---------------------------------------------------------------- the page
def step_charts(at: AppTest) -> list:
    """The page's Vega-Lite charts (the steps')."""
    return list(at.get("vega_lite_chart"))


def open_page(**params: str) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=30)
    for key, value in {**SMALL, **params}.items():
        at.query_params[key] = value
    return at.run()


def step_headings(at: AppTest, lang: str = "en") -> list[str]:
    """Headings of the pipeline panels, the summary and the live check on the page."""
    names = [f"step{n}.title" for n in range(1, STEPS + 1)] + ["summary.title", "check.title"]
    titles = [t(name, lang=lang) for name in names]
    return [h for h in headings(at, 3) if h in titles]


def slide_label(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown if m.value in {t("teacher.final")} or "/ 4" in m.value)


@pytest.mark.parametrize("step", range(1, STEPS + 1))
def test_each_slide_shows_one_step(step):
    at = open_page(teacher="1", step=str(step))
    assert not at.exception and not at.error
    assert step_headings(at) == [t(f"step{step}.title")]
    assert t("teacher.step_of", step=step, steps=STEPS) in slide_label(at)
    assert not headings(at, 1)  # no page title or intro on a slide: room for the step
    assert not at.get("download_button")  # the export stays on the normal page


def test_the_last_slide_is_the_summary_and_the_live_check():
    at = open_page(teacher="1", step=str(SLIDES))
    assert not at.exception
    assert step_headings(at) == [t("summary.title"), t("check.title")]
    assert at.success and "✓" in at.success[0].value
    assert t("teacher.final") in slide_label(at)


def test_next_and_previous_move_one_slide_and_the_link_follows():
    at = open_page(teacher="1")
    assert at.query_params["step"] == "1"
    assert at.button(key="teacher_previous_top").disabled
    at.button(key="teacher_next_top").click().run()
    assert step_headings(at) == [t("step2.title")]
    assert at.query_params["step"] == "2"
    at.button(key="teacher_next_bottom").click().run()
    assert at.query_params["step"] == "3"
    at.button(key="teacher_previous_bottom").click().run()
    assert step_headings(at) == [t("step2.title")]
    for _ in range(2, SLIDES):
        at.button(key="teacher_next_top").click().run()
    assert at.query_params["step"] == str(SLIDES)
    assert at.button(key="teacher_next_top").disabled  # nothing after the last slide
    assert not at.exception


def test_hidden_controls_are_not_drawn_but_the_link_values_are_used():
    hidden = "seed,positional,device,head,tokens,window"
    at = open_page(teacher="1", step="1", hide=hidden, seed="7", positional="false", head="2", window="1")
    assert not at.exception and not at.error
    drawn = {w.key for kind in ("number_input", "selectbox", "toggle", "text_area", "radio") for w in at.get(kind)}
    assert drawn.isdisjoint(hidden.split(","))
    assert {"d_model", "num_heads", "mask_type"} <= drawn  # what the host did not hide is still there
    assert not [b for b in at.button if b.key.startswith("example_")]  # the examples go with the text box
    # the numbers are those of a normal page with the same settings
    normal = open_page(seed="7", positional="false", head="2", window="1")
    step_1 = heatmaps(normal)[0].panels  # Q, K, V of the viewed head
    (slide,) = heatmaps(at)
    assert len(slide.panels) == 3
    for ours, theirs in zip(slide.panels, step_1, strict=True):
        assert abs(ours.values - theirs.values).max() < 1e-6
    assert slide.panels[0].title == t("step1.chart", name="Q", head=2, length=6, d_k=16)
    assert at.query_params["seed"] == "7" and at.query_params["head"] == "2"
    assert any("seed" in c.value and "device" in c.value.lower() for c in at.sidebar.caption)


def test_hide_does_nothing_outside_presentation_mode():
    at = open_page(hide="seed,device")
    assert at.number_input(key="seed") is not None and at.selectbox(key="device") is not None
    assert len(step_headings(at)) == 6
    assert at.query_params["hide"] == "seed,device"  # kept in the link for when the mode is switched on


@pytest.mark.parametrize(
    ("params", "field", "used"),
    [({"step": "9"}, "step", "5"), ({"step": "two"}, "step", "1"), ({"hide": "seed,colour"}, "hide", "seed")],
)
def test_bad_presentation_values_warn_and_use_a_safe_value(params, field, used):
    at = open_page(teacher="1", **params)
    assert not at.exception
    warnings = [w.value for w in at.warning if f"“{field}”" in w.value]
    assert len(warnings) == 1, [w.value for w in at.warning]
    assert at.query_params[field] == used


def test_warnings_about_the_link_are_translated_and_quote_the_value_as_text():
    at = open_page(lang="zh", teacher="yes please", hide="<img src=x>,seed", step="0")
    assert not at.exception
    texts = [w.value for w in at.warning]
    assert len(texts) == 3, texts
    assert all("链接参数" in text for text in texts)
    assert any("\\<img src\\=x\\>" in text for text in texts)  # escaped: shown as text, never as HTML
    assert not any(re.search(r"(?<!\\)<img", text) for text in texts)
    assert "teacher" not in at.query_params  # a bad switch word leaves the normal page


def test_leaving_brings_back_the_whole_page_and_a_plain_link():
    at = open_page(teacher="1", step="3", hide="seed")
    at.button(key="teacher_leave").click().run()
    assert not at.exception
    assert headings(at, 1) == [t("app.title")]
    assert len(step_headings(at)) == 6
    assert at.number_input(key="seed").value == 0
    assert "teacher" not in at.query_params and "step" not in at.query_params
    assert at.query_params["hide"] == "seed"


def test_the_switch_in_the_sidebar_starts_a_presentation():
    at = open_page()
    at.toggle(key="teacher").set_value(True).run()
    at.multiselect(key="hide").set_value(["seed", "device"]).run()
    assert not at.exception
    assert step_headings(at) == [t("step1.title")]
    assert (at.query_params["teacher"], at.query_params["step"], at.query_params["hide"]) == ("1", "1", "seed,device")
    drawn = {w.key for w in at.number_input} | {w.key for w in at.selectbox}
    assert "seed" not in drawn and "device" not in drawn


def test_large_type_is_constant_css_only_in_presentation_mode():
    hostile = "</style><script>alert(1)</script>"
    at = open_page(teacher="1", tokens=f"the {hostile} cat")
    (html,) = at.get("html")
    assert html.proto.body == LARGE_TYPE_CSS  # the same constant string whatever the link says
    assert "<script" not in LARGE_TYPE_CSS
    assert not open_page().get("html")


def test_navigation_shows_one_arrow_per_button():
    """A button with a keyboard shortcut shows the key (an arrow); it gets no arrow icon besides."""
    at = open_page(teacher="1", step="2")
    for key in ("teacher_previous_top", "teacher_next_top"):
        button = at.button(key=key).proto
        assert button.shortcut in {"left", "right"} and button.icon == ""
        assert not any(arrow in button.label for arrow in "←→")
    for key in ("teacher_previous_bottom", "teacher_next_bottom"):
        button = at.button(key=key).proto
        assert button.shortcut == "" and button.icon.startswith(":material/arrow_")


@pytest.mark.parametrize("step", range(1, STEPS + 1))
def test_a_slide_folds_the_code_under_the_chart(step):
    at = open_page(teacher="1", step=str(step))
    assert not at.exception
    (expander,) = [e for e in at.expander if e.label == t("steps.code")]
    assert [c.value for c in expander.code] == [step_code(step)]
    normal = open_page()
    assert step_code(step) in [c.value for c in normal.code]  # the normal page shows it open
    assert not [e for e in normal.expander if e.label == t("steps.code")]


def test_slide_charts_have_larger_type_and_the_css_says_how_much():
    """A Vega-Lite chart on a slide (the per-head bars, when the grid is too big) is sent with larger type; the
    canvas heatmaps read theirs from the slide's CSS (checked in the browser test below)."""
    many = {"d_model": "64", "num_heads": "16", "tokens": " ".join(f"w{i}" for i in range(40))}  # 25,600 cells
    slide = open_page(teacher="1", step="2", **many)
    normal = open_page(**many)
    font = json.loads(slide.get("vega_lite_chart")[0].proto.spec)["config"]["axis"]["labelFontSize"]
    plain = json.loads(step_charts(normal)[0].proto.spec)["config"]["axis"]["labelFontSize"]
    assert font == pytest.approx(plain * PRESENTATION_FONT_SCALE)
    assert f"--attn-chart-font-scale: {PRESENTATION_FONT_SCALE}" in LARGE_TYPE_CSS


def test_presentation_in_chinese():
    at = open_page(lang="zh", teacher="1", step="2")
    assert not at.exception
    assert at.button(key="teacher_previous_top").label == "上一步"
    assert at.button(key="teacher_next_top").label == "下一步"
    assert "第 2 步 / 共 4 步" in "\n".join(m.value for m in at.markdown)
    assert step_headings(at, "zh") == [t("step2.title", lang="zh")]


def test_a_presentation_link_from_one_session_opens_the_same_slide_in_another():
    first = open_page(teacher="1", hide="seed,head", head="3", seed="5")
    first.button(key="teacher_next_top").click().run()
    link = dict(first.query_params)
    second = AppTest.from_file(SCRIPT, default_timeout=30)
    for key, value in link.items():
        second.query_params[key] = value
    second.run()
    assert dict(second.query_params) == link
    assert step_headings(second) == step_headings(first) == [t("step2.title")]
    assert heatmaps(second)[0].panels[0].title == t("step2.raw", head=3)  # the hidden head, from the link
    charts = heatmaps(first, payload=True)  # as sent: every head's panels, words and layout
    assert len(charts) == 2  # the head shown, and all heads
    assert_same_charts(heatmaps(second, payload=True), charts)


# ---------------------------------------------------------------- in a real browser, at projector size
@pytest.mark.browser
@pytest.mark.parametrize("lang", LANGUAGES)
def test_presentation_in_the_browser_with_keyboard_and_screenshot(app_url, page, lang):
    from conftest import ARTIFACTS, console_errors, wait_for_app
    from playwright.sync_api import expect

    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{app_url}/?lang={lang}&teacher=1&step=2&hide=seed,device,positional&d_model=64&num_heads=4"
              "&mask_type=causal&tokens=the cat sat on the mat")  # fmt: skip
    wait_for_app(page)
    label = t("teacher.step_of", lang=lang, step=2, steps=STEPS)
    assert page.get_by_text(label).first.is_visible()
    assert page.get_by_role("heading", name=t("step2.title", lang=lang)).count() == 1
    assert page.get_by_test_id("stSidebar").get_attribute("data-collapsed") == "true"  # the slide gets the width
    # projector type for the step's explanation (Streamlit's own is 16 px); the style lands just after the text
    page.wait_for_function(
        """(start) => [...document.querySelectorAll(
            '[data-testid="stMainBlockContainer"] [data-testid="stMarkdownContainer"] p')]
            .some(p => p.textContent.startsWith(start) && parseFloat(getComputedStyle(p).fontSize) >= 22)""",
        arg=t("step2.what", lang=lang)[:12],
        timeout=30_000,
    )
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"teacher-{lang}.png"))
    # A shortcut is bound while its button is enabled: Streamlit disables every widget while the page
    # reconnects (a busy CI machine can drop the websocket), and a key pressed then does nothing.
    expect(page.locator(".st-key-teacher_next_top button")).to_be_enabled(timeout=30_000)
    page.keyboard.press("ArrowRight")  # a presenter's clicker or the arrow keys
    page.wait_for_url("**step=3**", timeout=30_000)
    wait_for_app(page)
    assert page.get_by_role("heading", name=t("step3.title", lang=lang)).count() == 1
    assert console_errors(page) == []


#: The step's main chart: the first chart in its panel, a Vega-Lite chart or the page's canvas heatmap.
MAIN_CHART = '[data-testid="stVegaLiteChart"], .attn-heatmap'
PROJECTOR = {"width": 1280, "height": 720}
MIN_CHART_SHOWN_PX = 120  # of the main chart, at least this much on the first screen
_MEASURE_SLIDE = """([title, chart]) => {
    const heading = [...document.querySelectorAll('[data-testid="stMain"] h3')]
        .find((h) => h.textContent.trim() === title);
    if (!heading) return null;
    const panel = heading.closest('[data-testid="stVerticalBlock"]');
    const main = panel.querySelector(chart) || panel.querySelector('[data-testid="stMarkdownContainer"] table');
    if (!main || !main.getBoundingClientRect().height) return null;
    return {
        title: heading.getBoundingClientRect().bottom,
        chart: main.getBoundingClientRect().top,
        chartBottom: main.getBoundingClientRect().bottom,
        scroll: document.querySelector('[data-testid="stMain"]').scrollTop,
        fontScale: main.attnLayout ? main.attnLayout.k : null,  // a canvas heatmap's type scale
    };
}"""


_SCROLL_TO_BOTTOM = """() => {
    const main = document.querySelector('[data-testid="stMain"]');
    main.scrollTop = main.scrollHeight;
    return main.scrollTop;
}"""


def _slide_title(step: int, lang: str) -> str:
    return t(f"step{step}.title" if step <= STEPS else "summary.title", lang=lang)


def _measure_slide(page, step: int, lang: str) -> dict:
    page.wait_for_function(_MEASURE_SLIDE, arg=[_slide_title(step, lang), MAIN_CHART], timeout=60_000)
    page.wait_for_timeout(500)  # let the charts take their final size
    return page.evaluate(_MEASURE_SLIDE, [_slide_title(step, lang), MAIN_CHART])


LONG_TEXT = "+".join(f"w{i}" for i in range(128))  # the longest text a page takes


@pytest.mark.browser
@pytest.mark.parametrize(
    ("lang", "text"), [("en", ""), ("zh", ""), ("en", LONG_TEXT)], ids=["en", "zh", "en-128-tokens"]
)
def test_every_slide_fits_a_projector_and_next_starts_at_the_top(app_url, page, lang, text):
    """At 1280x720 (the page's default sizes, its default sentence or 128 tokens): the title and the top of the main
    chart of every slide are on the first screen, a step's chart whole (its shapes come under it); after scrolling to
    the bottom, Next opens the next slide at its top. Saves test-artifacts/teacher-slide-{step}-{lang}[-long].png."""
    from conftest import ARTIFACTS, console_errors, wait_for_app

    page.set_viewport_size(PROJECTOR)
    page.goto(f"{app_url}/?lang={lang}&teacher=1&step=1" + (f"&tokens={text}" if text else ""))
    wait_for_app(page)
    ARTIFACTS.mkdir(exist_ok=True)
    for step in range(1, SLIDES + 1):
        box = _measure_slide(page, step, lang)
        page.screenshot(path=str(ARTIFACTS / f"teacher-slide-{step}-{lang}{'-long' if text else ''}.png"))
        assert box["scroll"] == 0, f"slide {step} opened {box['scroll']} px down"
        assert box["title"] <= PROJECTOR["height"], (step, box)
        assert box["chart"] + MIN_CHART_SHOWN_PX <= PROJECTOR["height"], (step, box)
        if step <= STEPS:  # the canvas heatmap took the slide's larger type from its CSS variable, and fits whole
            assert box["fontScale"] == PRESENTATION_FONT_SCALE, (step, box)
            assert box["chartBottom"] <= PROJECTOR["height"], (step, box)  # the shapes come under it
        if step == SLIDES:
            break
        assert page.evaluate(_SCROLL_TO_BOTTOM) > 0
        page.locator(".st-key-teacher_next_bottom button").click()  # the Next at the end of a long slide
        page.wait_for_url(f"**step={step + 1}**", timeout=30_000)
        wait_for_app(page)
    assert console_errors(page) == []


# ---------------------------------------------------------------- slides about the model: trained, checkpoint, image
def _slide_labels(at: AppTest) -> list[str]:
    """The slide's name as the navigation shows it (top and bottom)."""
    return [m.value for m in at.markdown if m.value in {label_of(s) for s in slide_order()}]


def _walk(at: AppTest) -> list[str]:
    """Next from the first slide to the last: the link's step on each slide."""
    while not at.button(key="teacher_previous_top").disabled:
        at.button(key="teacher_previous_top").click().run()
    seen = [at.query_params["step"]]
    while not at.button(key="teacher_next_top").disabled:
        at.button(key="teacher_next_top").click().run()
        assert not at.exception and not at.error, at.query_params["step"]
        seen.append(at.query_params["step"])
    return seen


TRAINED_SLIDE_LINK = {"weights": "trained", "task": "previous_and_first", "d_model": "16", "num_heads": "2"}


def _trained_slide(short_trainings, **params: str) -> AppTest:
    from test_trained_page import finish

    at = open_page(teacher="1", **TRAINED_SLIDE_LINK, **params)
    finish(trained_spec(16, 2, 0, task="previous_and_first"))
    return at.run()


def test_trained_weights_show_step_two_first_and_the_training_on_the_model_slide_only(short_trainings):
    at = _trained_slide(short_trainings, step="2")
    training_title = t("training.title", task=t("task.previous_and_first"))
    assert not at.exception and not at.error
    assert headings(at, 3)[0] == t("step2.title")  # the step first: no training panel above it
    assert training_title not in headings(at, 3) and not at.success and not at.dataframe
    at.button(key="teacher_previous_top").click().run()
    at.button(key="teacher_previous_top").click().run()
    assert at.query_params["step"] == "model"
    assert headings(at, 3)[0] == training_title and step_headings(at) == []
    assert at.dataframe and at.success  # the example table and "Trained in N steps"
    assert _slide_labels(at) == [t("teacher.slide.model")] * 2
    assert _walk(at) == ["model", "1", "2", "3", "4", "timeline", "5"]


def test_a_training_in_progress_shows_its_progress_on_the_model_slide_only(short_trainings):
    short_trainings.hold(trained_spec(16, 2, 0, task="previous_and_first"))  # it waits: still training
    at = open_page(teacher="1", step="2", **TRAINED_SLIDE_LINK)
    assert not at.exception
    assert [i.value for i in at.info] == [t("training.on_model_slide")]
    assert not at.get("progress") and not at.button(key="teacher_next_top").disabled
    assert not [b for b in at.button if b.key == "train_stop"]
    model = open_page(teacher="1", step="model", **TRAINED_SLIDE_LINK)
    assert [b.key for b in model.button if b.key == "train_stop"] == ["train_stop"]  # its progress and Stop here


@pytest.fixture
def gpt2_page(listed_gpt2):
    return {"weights": "pretrained", "checkpoint": "gpt2", "tokens": "the cat sat on the mat", "d_model": "32"}


def test_a_checkpoint_shows_its_notes_on_the_model_slide_and_the_head_finder_on_its_own(gpt2_page):
    at = open_page(teacher="1", step="2", **gpt2_page)
    assert not at.exception and not at.error
    assert headings(at, 3)[0] == t("step2.title") and not at.info  # no checkpoint notes above the step
    model = open_page(teacher="1", step="model", **gpt2_page)
    assert headings(model, 3)[0] == t("teacher.model.title", checkpoint="gpt2") and step_headings(model) == []
    assert len(model.info) >= 1  # the notes (Conv1D, the tokenizer) are here
    heads = open_page(teacher="1", step="heads", **gpt2_page)
    assert headings(heads, 3)[:2] == [t("finder.title"), t("patterns.title")] and step_headings(heads) == []
    finder, previous, induction = (json.loads(c.proto.spec) for c in heads.get("vega_lite_chart"))
    normal = json.loads(step_charts(open_page(**gpt2_page))[0].proto.spec)
    for spec in (finder, previous, induction):  # the room reads the maps: larger words and cells than the page's
        assert spec["config"]["axis"]["labelFontSize"] == pytest.approx(10 * PRESENTATION_FONT_SCALE)
    assert finder["width"] > normal["width"] and "config" not in normal
    assert _walk(heads) == ["model", "1", "2", "heads", "3", "4", "5"]


def test_an_image_checkpoint_shows_its_image_notes_on_the_model_slide_and_its_head_finder_after_step_two(listed_vit):
    link = {"weights": "pretrained", "checkpoint": "tinyvit", "image": "digit-3"}
    at = open_page(teacher="1", step="model", **link)
    assert not at.exception and not at.error
    assert headings(at, 3)[0] == t("teacher.model.title", checkpoint="tinyvit")
    assert t("notes.family_vit", checkpoint="tinyvit", size="32 × 32", patch=8, grid="4 × 4") in [
        i.value for i in at.info
    ]
    assert _walk(at) == ["model", "1", "2", "heads", "3", "4", "5"]


def test_the_digits_have_a_patches_slide_after_step_two(short_trainings):
    from test_trained_page import finish

    link = {"weights": "trained", "task": "digits", "d_model": "32", "num_heads": "2", "patch": "4"}
    at = open_page(teacher="1", step="patches", **link)
    finish(trained_spec(32, 2, 0, task="digits", patch=4))
    at.run()
    assert not at.exception and not at.error
    assert headings(at, 3)[0] == t("patches.title") and step_headings(at) == []
    assert _walk(at) == ["model", "1", "2", "patches", "3", "4", "timeline", "5"]


def test_a_slide_the_page_lacks_opens_the_one_before_it_and_the_link_says_so():
    at = open_page(teacher="1", step="heads")
    assert not at.exception and not at.warning
    assert step_headings(at) == [t("step2.title")] and at.query_params["step"] == "2"
    note = t("teacher.slide_missing", asked=t("teacher.slide.heads"), shown=t("teacher.step_of", step=2, steps=4))
    assert [i.value for i in at.info] == [note]
    at.button(key="teacher_next_top").click().run()  # the note is said once, not on every slide after it
    assert at.query_params["step"] == "3" and not at.info


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_slide_with_none_before_it_opens_the_first_and_the_note_says_it_comes_after(lang):
    at = open_page(teacher="1", step="model", lang=lang)  # random weights: no model slide
    assert not at.exception and not at.warning
    assert step_headings(at, lang) == [t("step1.title", lang=lang)] and at.query_params["step"] == "1"
    asked, shown = t("teacher.slide.model", lang=lang), t("teacher.step_of", lang=lang, step=1, steps=4)
    note = t("teacher.slide_missing_first", lang=lang, asked=asked, shown=shown)
    assert [i.value for i in at.info] == [note]
    assert t("teacher.slide_missing", lang=lang, asked=asked, shown=shown) != note  # not "the nearest before it"


@pytest.mark.parametrize("step", ["model", "heads"])
def test_the_slides_about_a_checkpoint_read_in_chinese(gpt2_page, step):
    from test_languages import leftover_english, shown_texts, user_tokens

    at = open_page(lang="zh", teacher="1", step=step, **gpt2_page)
    assert not at.exception and not at.error
    data = (
        user_tokens(at)
        | {"gpt2", "tiny", "planted", "gpt2-chinese", "animal"}
        | set(at.selectbox(key="checkpoint").options)
    )
    shown = [(key, text) for key, text in shown_texts(at) if key != "lang" and not key.startswith("example_")]
    leftovers = [(key, text[:80], words) for key, text in shown if (words := leftover_english(text, data))]
    assert not leftovers, leftovers
    assert t("teacher.slide." + step, lang="zh") in [m.value for m in at.markdown]
