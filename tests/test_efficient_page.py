"""Lab 14's page in AppTest: its verdicts say what the engine measures, and the Measure button draws both bargains."""

from __future__ import annotations

import math
import re
from pathlib import Path

import torch
from streamlit.testing.v1 import AppTest

from components.i18n import t
from components.labs import efficient_cost
from components.labs.efficient import D_MODEL, DEFAULT_TEXT
from components.labs.efficient_cost import mask_saving
from components.labs.measure import Measured
from mha.experiments.efficient_cost import EfficientRow
from mha.experiments.inputs import token_heads
from mha.tokens import tokenize

REPO = Path(__file__).resolve().parents[1]
PAGE = str(REPO / "pages/14_efficient.py")


def _open(lang: str = "en") -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["lang"] = lang
    return at.run()


def _printed_difference(box: str) -> float:
    return float(re.search(r"= ([0-9.e+-]+) [>≤]", box).group(1))


def test_the_weights_verdict_prints_the_difference_of_two_formulas_written_here():
    at = _open()
    assert not at.exception, at.exception
    tokens = tokenize(DEFAULT_TEXT["en"])
    q, k, _ = token_heads(tokens, D_MODEL, 2)  # the page's default: 2 heads
    softmax = torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, dim=-1)
    features_q, features_k = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
    kernel = features_q @ features_k.transpose(-2, -1)
    implied = kernel / kernel.sum(-1, keepdim=True)
    expected = float((softmax - implied).abs().max())
    check = t("lab.efficient.check.weights", lang="en")
    box = next(w.value for w in at.warning if w.value.startswith(check))
    assert abs(_printed_difference(box) - expected) <= 0.005 * expected  # 3 significant digits printed
    assert len(at.error) == 0 and len(at.success) == 3  # the state's form and both sparse runs agree


def test_causal_toggle_checks_the_running_sum_and_a_changed_pattern_changes_the_kept_share():
    at = _open("zh")
    at.toggle(key="efficient_causal").set_value(True).run()
    assert not at.exception, at.exception
    assert any(s.value.startswith(t("lab.efficient.check.running_sum", lang="zh")) for s in at.success)
    kept = t("lab.efficient.metric.kept", lang="zh", pattern=t("lab.efficient.panel.longformer", lang="zh"))
    before = next(m.value for m in at.metric if m.label == kept)
    at.slider(key="efficient_window").set_value(3).run()
    after = next(m.value for m in at.metric if m.label == kept)
    assert float(after.rstrip("%")) > float(before.rstrip("%"))


def test_measure_draws_both_bargains_and_says_where_they_cross():
    """The multiply-add count is stated as a count (equal at L = d), and the measured crossing the page prints is
    the one its own table of medians shows: linear no slower from that L on, and not faster just before it."""
    at = _open()
    at.select_slider(key="efficient_cap").set_value(512).run()
    at.slider(key="efficient_repeats").set_value(3).run()
    at.button(key="efficient_measure").click().run()
    assert not at.exception, at.exception
    assert len(at.get("vega_lite_chart")) >= 3  # the two masks, then time and memory of each bargain
    text = "\n".join(m.value for m in at.markdown)
    assert "equal at L = 64" in text  # 2·L²·d = 2·L·d² at L = d, the page's default d = 64
    table = next(d.value for d in at.dataframe if t("lab.efficient.col.method", lang="en") in d.value.columns)
    ms = {
        (method, int(length)): float(value)
        for method, length, value in zip(
            table[t("lab.efficient.col.method", lang="en")], table["L"], table[t("lab.efficient.col.ms", lang="en")],
            strict=True,
        )
    }  # fmt: skip
    softmax, linear = t("lab.efficient.method.softmax", lang="en"), t("lab.efficient.method.linear", lang="en")
    lengths = sorted(length for method, length in ms if method == softmax)
    assert lengths[-1] == 512
    found = re.search(r"In time, linear attention costs less than softmax attention from L = (\d+) on", text)
    if found is None:  # "did not stay below": at the longest length linear was not faster
        assert "In time, linear attention did not stay below softmax attention up to L = 512" in text
        assert ms[linear, 512] >= ms[softmax, 512]
    else:
        crossing = int(found.group(1))
        assert all(ms[linear, n] <= ms[softmax, n] for n in lengths if n >= crossing)  # printed to 3 decimals
        if crossing > lengths[0]:
            before = lengths[lengths.index(crossing) - 1]
            assert ms[linear, before] >= ms[softmax, before]


def test_the_state_caption_says_which_holds_more_on_the_learners_tokens():
    """L² weights against d² + d numbers of the state, worked out here: a sentence past L ≈ d gets the other caption."""
    at = _open()
    for text, heads in [(DEFAULT_TEXT["en"], 2), (" ".join(f"w{i}" for i in range(20)), 4)]:
        at.text_input(key="efficient_text").set_value(text)
        at.select_slider(key="efficient_heads").set_value(heads).run()
        assert not at.exception, at.exception
        length, head_dim = len(tokenize(text)), D_MODEL // heads
        key = (
            "lab.efficient.state_caption_past" if length**2 > head_dim**2 + head_dim else "lab.efficient.state_caption"
        )
        expected = t(key, lang="en", d=head_dim, yours=t("lab.efficient.yours.many", lang="en", count=length))
        assert any(c.value == expected for c in at.caption), (length, head_dim)


# ---------------------------------------------------------------- every sentence chosen from the page's own numbers
def _texts(at: AppTest) -> list[str]:
    """Every sentence the page shows: markdown, captions, boxes and metric labels."""
    boxes = [*at.markdown, *at.caption, *at.info, *at.success, *at.warning, *at.error]
    return [element.value for element in boxes] + [metric.label for metric in at.metric]


def test_the_intro_says_linear_attention_does_less_only_past_l_equals_d_in_both_languages():
    """Not "cheap at every length": fewer multiply-adds once L passes d (the page's own count, below), in time
    where the measurement finds it."""
    for lang, past in (("en", "once L passes d"), ("zh", "L 超过 d 之后乘加次数更少")):
        at = _open(lang)
        intro = t("lab.efficient.intro", lang=lang)
        assert any(m.value == intro for m in at.markdown)
        assert past in intro and "every length" not in intro and "任何长度" not in intro


def _entropy(weights: torch.Tensor) -> torch.Tensor:
    """-Σ w log w of each row, written out here (0 · log 0 = 0)."""
    return torch.tensor([-sum(float(w) * math.log(w) for w in row if w > 0) for row in weights.double()])


def test_causal_state_is_every_running_sum_and_the_flatter_rows_are_counted_on_the_pages_numbers():
    """With Causal on the state shown is the (L, d, d) running sums and (L, d) key sums the code keeps; the rows
    flatter or sharper under linear attention are counted by entropy on the weights recomputed here."""
    at = _open()
    tokens = tokenize(DEFAULT_TEXT["en"])
    length = len(tokens)
    sharper_seen = 0
    for heads, causal in [(2, False), (2, True), (4, True)]:
        at.select_slider(key="efficient_heads").set_value(heads)
        at.toggle(key="efficient_causal").set_value(causal).run()
        for head in range(heads):
            at.radio(key="efficient_head").set_value(head).run()
            assert not at.exception, at.exception
            d = D_MODEL // heads
            expected_state = length * (d * d + d) if causal else d * d + d
            label = t("lab.efficient.metric.state_causal" if causal else "lab.efficient.metric.state", lang="en", d=d)
            shown = next(m.value for m in at.metric if m.label == label)
            assert int(shown.replace(",", "")) == expected_state, (heads, causal, shown)
            matrix = length * length
            if causal:
                key = "lab.efficient.state_caption_causal_past" if matrix > expected_state else (
                    "lab.efficient.state_caption_causal")  # fmt: skip
                yours = t("lab.efficient.yours.many", lang="en", count=length)
                caption = t(key, lang="en", d=d, limit=f"{d * d + d:,}", yours=yours)  # written as a person would
                assert any(c.value == caption for c in at.caption)
                assert not any("does not grow with L" in c.value for c in at.caption)
            q, k, _ = token_heads(tokens, D_MODEL, heads)
            scores = q[0, head] @ k[0, head].T / math.sqrt(d)  # (L, L)
            kernel = (torch.nn.functional.elu(q[0, head]) + 1) @ (torch.nn.functional.elu(k[0, head]) + 1).T
            if causal:
                future = torch.ones(length, length, dtype=torch.bool).triu(1)
                scores, kernel = scores.masked_fill(future, float("-inf")), kernel.masked_fill(future, 0.0)
            gap = _entropy(kernel / kernel.sum(-1, keepdim=True)) - _entropy(torch.softmax(scores, dim=-1))
            flatter, sharper = int((gap > 1e-6).sum()), int((gap < -1e-6).sum())
            sharper_seen += sharper
            counted = t("lab.efficient.rows_flatter", lang="en", head=head, flatter=flatter, sharper=sharper,
                        same=length - flatter - sharper, rows=length)  # fmt: skip
            assert any(c.value == counted for c in at.caption), (heads, causal, head, flatter, sharper)
    assert sharper_seen > 0  # the setting where linear attention is not flatter on every row was among them


def _longformer_share(length: int, window: int, global_tokens: list[int]) -> float:
    kept = sum(abs(i - j) <= window or i in global_tokens or j in global_tokens for i in range(length)
               for j in range(length))  # fmt: skip
    return kept / length**2


def test_the_kept_caption_says_what_the_shares_shown_are():
    """ "Keeps most of them" only where a pattern keeps more than half: the Longformer share recomputed here from its
    definition, BigBird's read from the page's metric."""
    cases = [("en", 1, [0]), ("zh", 1, [0]), ("en", 4, [0]), ("en", 0, [])]
    for lang, window, global_tokens in cases:
        at = _open(lang)
        at.slider(key="efficient_window").set_value(window)
        at.multiselect(key="efficient_global").set_value(global_tokens).run()
        assert not at.exception, at.exception
        length = len(tokenize(DEFAULT_TEXT[lang]))
        names = [t("lab.efficient.panel.longformer", lang=lang), t("lab.efficient.panel.bigbird", lang=lang)]
        metric = {m.label: m.value for m in at.metric}
        bigbird = float(metric[t("lab.efficient.metric.kept", lang=lang, pattern=names[1])].rstrip("%")) / 100
        longformer = _longformer_share(length, window, global_tokens)
        assert metric[t("lab.efficient.metric.kept", lang=lang, pattern=names[0])] == f"{longformer:.0%}"
        most = [longformer > 0.5, bigbird > 0.5]
        cells = {"length": length, "entries": t("lab.efficient.entries.many", lang=lang, count=length**2)}
        if all(most):
            expected = t("lab.efficient.kept_caption.most", lang=lang, **cells)
        elif not any(most):
            expected = t("lab.efficient.kept_caption.few", lang=lang, **cells)
        else:
            more, less = names if most[0] else names[::-1]
            expected = t("lab.efficient.kept_caption.mixed", lang=lang, more=more, less=less, **cells)
        assert any(c.value == expected for c in at.caption), (lang, window, longformer, bigbird)


def _fake_measurement(masked_faster: bool, masked_smaller: bool):
    """Rows as the child would return them, with the dense masked run faster and/or smaller than the dense one at
    the longest length (the page must say so, not "saved nothing")."""
    rows = []
    for length in (32, 64, 128, 256, 512):
        dense_s, dense_bytes = 1e-8 * length**2, 4 * length**2
        costs = {
            "softmax": (dense_s, dense_bytes),
            "linear": (2e-6 * length, 400 * length),
            "dense": (dense_s, dense_bytes),
            "dense_masked": (
                dense_s * (0.8 if masked_faster and length == 512 else 1.3),
                dense_bytes * (0.9 if masked_smaller and length == 512 else 1.25),
            ),
            "block_sparse": (3e-6 * length, 300 * length),
        }
        rows += [EfficientRow(m, length, s, int(b), s * 0.9, s * 1.1, length) for m, (s, b) in costs.items()]
    return Measured(tuple(rows), "12:00:00", 1, ())


def test_what_the_mask_saved_is_read_from_the_measurement_and_one_measurement_is_singular(monkeypatch):
    for lang in ("en", "zh"):
        for faster, smaller in [(True, False), (False, False), (True, True), (False, True)]:
            monkeypatch.setattr(efficient_cost, "cost_frame", lambda *_, f=faster, s=smaller: _fake_measurement(f, s))
            at = _open(lang)
            at.select_slider(key="efficient_cap").set_value(512).run()
            at.button(key="efficient_measure").click().run()
            assert not at.exception, at.exception
            text = "\n".join(_texts(at))
            saved = {(True, False): "time", (False, False): "nothing", (True, True): "both", (False, True): "memory"}
            for each in ("time", "nothing", "both", "memory"):
                assert (t(f"lab.efficient.mask.{each}", lang=lang) in text) == (each == saved[faster, smaller])
            assert t("lab.common.measured_at_once", lang=lang, time="12:00:00") in text
            assert "measurement(s)" not in text and "1 measurements" not in text
    assert mask_saving(100, 100, 2.0, 2.0) == "lab.efficient.mask.nothing"  # equal is no saving


def _performance_table() -> dict[str, list[float]]:
    text = (REPO / "docs/PERFORMANCE.md").read_text(encoding="utf-8")
    lines = text[text.index("| L | softmax ms | linear ms") :].splitlines()
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    body = lines[2 : next(i for i, line in enumerate(lines) if not line.startswith("|"))]  # up to the table's end
    rows = [[float(cell) for cell in line.strip("|").split("|")] for line in body]
    return {name: [row[i] for row in rows] for i, name in enumerate(header)}


def _cheaper_from(table: dict[str, list[float]], cheaper: str, dearer: str) -> int:
    """The shortest L of the table from which ``cheaper`` is below ``dearer`` at every longer L."""
    found = None
    for length, low, high in reversed(list(zip(table["L"], table[cheaper], table[dearer], strict=True))):
        if low >= high:
            break
        found = int(length)
    assert found is not None
    return found


def test_the_measured_crossover_is_an_observation_with_the_same_numbers_in_both_languages():
    """The explanation's crossover remark says where this project's table measured it, in English and in Chinese."""
    crossing = _cheaper_from(_performance_table(), "linear ms", "softmax ms")
    for lang in ("en", "zh"):
        explain = t("lab.efficient.explain", lang=lang)
        assert "d = 64" in explain and f"L = {crossing}" in explain, lang


def test_the_docs_say_from_where_bigbirds_kept_blocks_cost_less_as_their_table_measured():
    table = _performance_table()
    memory = max(_cheaper_from(table, "kept blocks MiB", "dense MiB"), _cheaper_from(table, "kept blocks MiB",
                                                                                     "masked MiB"))  # fmt: skip
    than_masked = _cheaper_from(table, "kept blocks ms", "dense masked ms")
    than_dense = _cheaper_from(table, "kept blocks ms", "dense ms")
    performance = " ".join((REPO / "docs/PERFORMANCE.md").read_text(encoding="utf-8").split())
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    for doc, words in [
        (performance, (f"less memory than either dense run from L = {memory:,}",
                       f"less time than the masked dense run from L = {than_masked:,}",
                       f"less than the plain dense run only from L = {than_dense:,}")),
        (readme, (f"less memory than either dense run from L = {memory:,}",
                  f"less time than the masked run from L = {than_masked:,}",
                  f"than the plain dense run from L = {than_dense:,}")),
    ]:  # fmt: skip
        for sentence in words:
            assert sentence in doc, sentence


def test_numbers_and_plurals_on_a_one_token_sentence():
    for lang in ("en", "zh"):
        at = _open(lang)
        at.text_input(key="efficient_text").set_value("hello").run()
        assert not at.exception, at.exception
        text = "\n".join(_texts(at))
        assert not re.search(r"\b1 [a-z]+s\b", text), text
        if lang == "en":
            assert "1 token: hello" in text and "Your one token is" in text
