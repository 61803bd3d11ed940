"""The page with grouped K/V heads and RoPE: shapes, counts, the grouping, the offset table, the live check, the
controls and their bad values, in both languages. Every expected number is computed here from the formulas or
from an engine run of the same config, never copied from the page."""

from __future__ import annotations

import re

import pytest
from conftest import heatmaps
from test_app import SMALL, no_problems, open_page, page_text

from components.i18n import t
from mha.config import AttentionConfig
from mha.pipeline import run_attention

TODAY = {**SMALL, "num_kv_heads": "2", "positional": "rope"}  # d_model 64, 4 query heads, 2 K/V heads, L = 6


def _offset_rows(at) -> list[list[str]]:
    header = t("today.offset.positions", lang="en")
    (table,) = [m.value for m in at.markdown if m.value.startswith(f"| {header}")]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()[2:]]


def test_a_gqa_rope_page_shows_every_shape_and_count_change():
    at = open_page(**TODAY)
    no_problems(at)
    text = page_text(at)
    length, d_k = 6, 64 // 4
    assert f"`[1, 4, {length}, {d_k}]` (B, h, L, d_k)" in text  # Q split into the 4 query heads
    assert f"`[1, 2, {length}, {d_k}]` (B, h_kv, L, d_k)" in text  # K and V into the 2 K/V heads
    width = 2 * d_k
    assert f"**{2 * 64 * 64 + 2 * 64 * width + 2 * 64 + 2 * width:,}**" in text  # 2·d² + 2·d·h_kv·d_k + biases
    assert f"{64 * width + width:,}" in text  # W_k (and W_v): d·h_kv·d_k + h_kv·d_k
    # two tables, parameters then the cache per token; this page's rows in bold
    params_row, cache_row = [line for line in text.splitlines() if line.startswith("| **2 (GQA)**")]
    assert params_row.startswith(f"| **2 (GQA)** | **{2 * (64 * width + width):,}** |")  # W_k + W_v
    assert cache_row.startswith(f"| **2 (GQA)** | **{2 * 1 * 2 * d_k:,}** |")  # this page's cache: 2·layers·h_kv·d_k
    assert f"| 4 (MHA) | {2 * (64 * 64 + 64):,} | {4 * 64 * 64 + 4 * 64:,} |" in text
    assert f"| 4 (MHA) | {2 * 1 * 4 * d_k:,} |" in text
    assert any(s.value.startswith("✓ Matches PyTorch (F.scaled_dot_product_attention)") for s in at.success)


def test_the_k_and_v_panels_show_the_k_v_head_each_query_head_reads():
    at = open_page(**TODAY)
    run = run_attention(
        AttentionConfig(d_model=64, num_heads=4, num_kv_heads=2, positional="rope", tokens=SMALL["tokens"])
    )
    (step1,) = [figure for figure in heatmaps(at) if any(p.title.startswith("Q of head") for p in figure.panels)]
    shared = [re.match(r"(K|V) of K/V head (\d), read by head (\d)", panel.title) for panel in step1.panels]
    shared = [found for found in shared if found]
    assert {found.group(1) for found in shared} == {"K", "V"}
    for found in shared:
        kv, head = int(found.group(2)), int(found.group(3))
        assert kv == run.trace.project.kv_head_of[head] == head // 2


def test_the_offset_table_shows_the_same_score_for_the_same_offset_with_the_learners_tokens():
    at = open_page(**TODAY)
    rows = _offset_rows(at)
    same = [row for row in rows if row[1] == "-3"]
    assert len(same) == 3 and len({row[2] for row in same}) == 1  # RoPE: one score for one offset
    assert len({row[3] for row in same}) == 3  # the sinusoids added instead: three scores
    assert "“the” (as the query) and “sat” (as the key)" in page_text(at)  # tokens 0 and 2 of the learner's text


def test_the_tutorials_layer_points_to_the_two_controls_and_keeps_its_counts():
    at = open_page(**SMALL)
    no_problems(at)
    text = page_text(at)
    assert t("today.hint", lang="en") in text
    assert t("today.title", lang="en") not in text
    assert "K and V: the same shapes." in text
    assert any(s.value.startswith("✓ Matches PyTorch (nn.MultiheadAttention)") for s in at.success)


def test_the_num_kv_heads_control_follows_the_head_count_only_while_it_equals_it():
    at = open_page(**SMALL)
    assert at.number_input(key="num_kv_heads").value == 4
    at.number_input(key="num_heads").set_value(8).run()
    assert at.number_input(key="num_kv_heads").value == 8  # MHA stays MHA
    at.number_input(key="num_kv_heads").set_value(2).run()
    no_problems(at)
    assert at.query_params["num_kv_heads"] == "2"
    at.number_input(key="num_heads").set_value(4).run()
    assert at.number_input(key="num_kv_heads").value == 2  # 2 divides 4: kept
    no_problems(at)


def test_a_num_kv_heads_that_does_not_divide_gets_a_message_naming_the_divisors():
    lang = "en"  # typed in the control (a link's value is clamped to a divisor; the link test runs in Chinese too)
    at = open_page(**SMALL, lang=lang)
    at.number_input(key="num_kv_heads").set_value(3).run()
    assert not at.exception
    (error,) = [e.value for e in at.error]
    assert error == t("error.num_kv_heads.not_dividing", lang=lang, num_kv_heads=3, num_heads=4, divisors="1, 2, 4")
    assert t("summary.title", lang=lang) in page_text(at)  # the page keeps teaching what it can
    # and says that no layer ran: its counts are not those of the layer asked for
    assert t("summary.nothing_ran", lang=lang, d=64) in [c.value for c in at.caption]


@pytest.mark.parametrize(("asked", "used", "lang"), [("99", 4, "en"), ("3", 2, "en"), ("99", 4, "zh")])
def test_a_link_num_kv_heads_that_does_not_divide_is_clamped_to_a_divisor_with_one_message(asked, used, lang):
    at = open_page(**SMALL, num_kv_heads=asked, lang=lang)
    assert not at.exception and not at.error
    (warning,) = [w.value for w in at.warning]
    params = {"value": asked, "num_heads": 4, "divisors": "1, 2, 4", "used": used}
    assert warning == t("url.kv_not_dividing", lang=lang, name="num_kv_heads", **params)
    assert at.number_input(key="num_kv_heads").value == used
    assert at.query_params.get("num_kv_heads") == (None if used == 4 else str(used))  # as many: not in the link
    assert t("summary.nothing_ran", lang=lang, d=64) not in [c.value for c in at.caption]  # the pipeline ran
    assert t("summary.kv_title", lang=lang) in page_text(at)  # and the summary describes it


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_rope_with_an_odd_d_k_gets_a_message_naming_d_k(lang):
    at = open_page(d_model="12", num_heads="4", positional="rope", lang=lang)
    assert not at.exception
    (error,) = [e.value for e in at.error]
    assert error == t("error.positional.rope_odd", lang=lang, d_model=12, num_heads=4, d_k=3)
    assert t("summary.nothing_ran", lang=lang, d=12) in [c.value for c in at.caption]  # no layer ran


def test_a_chinese_gqa_rope_page_runs_in_chinese():
    at = open_page(**TODAY, lang="zh")
    no_problems(at)
    text = page_text(at)
    assert t("today.title", lang="zh") in text and "分组查询注意力" in text
    assert t("today.offset.rope", lang="zh") in text


def test_old_positional_links_still_open_their_page():
    at = open_page(**SMALL, positional="false")
    no_problems(at)
    assert at.radio(key="positional").value == "none"
    assert not at.warning
    assert at.query_params["positional"] == "none"


def test_the_turns_and_the_code_of_step_1b_are_drawn_once_opened_and_follow_the_layer():
    from components.panels.today import CODE_KEY, TURNS_KEY

    at = open_page(**TODAY)
    labels = {t("today.rope.turns", lang="en"), t("today.code", lang="en")}
    closed = [e for e in at.expander if e.label in labels]
    assert len(closed) == 2 and not any(e.children for e in closed), "drawn only once opened (components.folds)"
    at.session_state[TURNS_KEY] = True  # what opening them in the browser sets
    at.session_state[CODE_KEY] = True
    at.run()
    no_problems(at)
    (turns,) = [e for e in at.expander if e.label == t("today.rope.turns", lang="en")]
    caption = t("today.rope.turn_caption", lang="en", head=0, kv_head=0, pairs=f"0, {16 // 4}")  # d_k 16
    assert caption in [c.value for c in turns.caption]
    (code,) = [e for e in at.expander if e.label == t("today.code", lang="en")]
    listing = code.code[0].value
    assert "def repeat_kv" in listing and "def rotate_half" in listing and "# 1b)" in listing
    at.number_input(key="num_kv_heads").set_value(4).run()  # RoPE alone: no repeat_kv in the listing
    (code,) = [e for e in at.expander if e.label == t("today.code", lang="en")]
    assert "def repeat_kv" not in code.code[0].value and "def rotate_half" in code.code[0].value


def test_step_1b_with_one_feature_pair_per_head():
    from components.panels.today import TURNS_KEY

    at = open_page(d_model="16", num_heads="8", positional="rope", tokens=SMALL["tokens"])  # d_k = 2: one pair
    at.session_state[TURNS_KEY] = True
    at.run()
    no_problems(at)
    (turns,) = [e for e in at.expander if e.label == t("today.rope.turns", lang="en")]
    assert t("today.rope.turn_caption", lang="en", head=0, kv_head=0, pairs="0") in [c.value for c in turns.caption]


def test_the_kv_cache_rows_count_every_layer_of_a_checkpoint(listed_llama):
    at = open_page(weights="pretrained", checkpoint="tiny_llama", tokens="the cat sat on the mat")
    no_problems(at)
    text = page_text(at)
    layers, kv_heads, d_k = 2, 2, 32 // 4  # the tests' Llama (tests/tiny_checkpoint.py): 2 layers, 4 / 2 heads, d 32
    _parameters, cache = [line for line in text.splitlines() if line.startswith(f"| **{kv_heads} (GQA)**")]
    assert cache.split("|")[2].strip() == f"**{2 * layers * kv_heads * d_k:,}**"  # the cache table's numbers
    assert t("summary.kv_note", lang="en", layers=layers) in text


@pytest.mark.parametrize(
    ("page", "base"), [({"checkpoint": "tiny_qwen2"}, 1_000_000), ({"checkpoint": "tiny_llama"}, 10_000)]
)
def test_the_rope_base_is_written_as_the_checkpoints_note_writes_it(listed_llama, page, base):
    at = open_page(weights="pretrained", tokens="the cat sat on the mat", **page)
    no_problems(at)
    text = page_text(at).replace("\\,", ",")  # the note's number is markdown-escaped: 1\,000\,000 shows 1,000,000
    written = f"{base:,}"  # 1,000,000: the way the page writes every count
    assert f"rope_theta = {written};" in text  # the checkpoint's note
    assert f"θ_i = {written}^(−2i/d_k)" in text and "e+0" not in text  # step 1b's formula, the same number


def test_the_checkpoint_checks_note_says_whether_repeat_kv_repeats_anything(listed_llama):
    from types import SimpleNamespace

    from components.panels.checkpoint_check import _kv_heads

    at = open_page(weights="pretrained", checkpoint="tiny_llama", tokens="the cat sat on the mat")
    no_problems(at)
    repeated = t("check.kv_repeated", kv=2, group=2)  # the tests' Llama: 4 query heads, 2 key/value heads
    assert t("check.checkpoint_how_llama", kv_heads=repeated) in [c.value for c in at.caption]
    for kv, heads in ((4, 4), (1, 1)):  # a Llama without grouping (Llama 2 7B: 32 and 32): nothing is repeated
        run = SimpleNamespace(model=SimpleNamespace(num_kv_heads=kv, num_heads=heads))
        assert _kv_heads(run) == t("check.kv_own")
    assert _kv_heads(SimpleNamespace(model=SimpleNamespace(num_kv_heads=1, num_heads=8))) == t(
        "check.kv_repeated", kv=1, group=8
    )
