"""The seam between the panels and their values (``components/panels/parts.py``), without a browser.

A change of a live control (the sizes, the mask, the text, the seed ...) redraws only the page's parts. That
is right only if nothing outside a part shows a value: the oracle is the page itself. The page is drawn for
one config and its parts filled for another, and the main area must be exactly what a full run of the second
config draws, element by element. A panel that draws a value outside a part (stale after a change) fails here.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from conftest import trained_spec
from PIL import Image
from streamlit.testing.v1 import AppTest

from components import controls
from components.i18n import t
from components.panels import Results, ValueParts
from components.panels.parts import PART_KEY
from mha.config import DOMAINS, AttentionConfig
from mha.training.service import training_service
from mha.vision.upload import read_upload

SCRIPT = str(Path(__file__).resolve().parents[1] / "playground.py")
BASE = {"d_model": "64", "num_heads": "4", "tokens": "the cat sat on the mat [PAD]", "lang": "en"}
#: The changes of each live control from BASE, with what each needs besides itself (a window needs the window
#: mask). Keyed by every name of controls.LIVE_KEYS: a new live control without an entry fails here (KeyError).
CHANGES_BY_KEY: dict[str, list[dict[str, str]]] = {
    "d_model": [{"d_model": "128", "num_heads": "8"}],
    "num_heads": [{"num_heads": "2"}],
    "num_kv_heads": [{"num_kv_heads": "2"}, {"num_kv_heads": "1", "positional": "rope"}],
    "mask_type": [{"mask_type": "causal"}, {"mask_type": "padding"}],
    "window": [{"mask_type": "window", "window": "1"}],
    "block_pad": [{"mask_type": "causal", "block_pad": "true"}],
    "tokenizer": [{"tokens": "小明喜欢打球", "tokenizer": "words"}],
    "tokens": [{"tokens": " ".join(f"w{i}" for i in range(40))}],  # beyond the cells that follow the head
    "seed": [{"seed": "7"}],
    "positional": [{"positional": "false"}, {"positional": "rope"}],
    "device": [{"device": "cpu"}],  # a choice every machine has
    "dtype": [{"dtype": "float64"}],
    "image": [],  # the text page has no image: IMAGE_CHANGES below
}
CHANGES = [change for key in controls.LIVE_KEYS for change in CHANGES_BY_KEY[key]]


def _main_area(at: AppTest) -> list[tuple[str, bytes]]:
    """Every block and element of the main area, in page order: its kind and its message's bytes."""
    found: list[tuple[str, bytes]] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None and proto.DESCRIPTOR.fields_by_name.get("deferred_file_id"):
            proto = type(proto).FromString(proto.SerializeToString())  # a copy without the per-run file id
            proto.ClearField("deferred_file_id")
        found.append((type(node).__name__, proto.SerializeToString(deterministic=True) if proto is not None else b""))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main)
    return found


def _open(params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=60)
    at.query_params.update(params)
    return at.run()


def _config(at: AppTest) -> AttentionConfig:
    """The config a page ran for, read back from its session (where the controls keep their values)."""
    return AttentionConfig(**{key: at.session_state[key] for key in DOMAINS})


def _framed_then_filled(frame_params: dict[str, str], config: AttentionConfig, monkeypatch) -> AppTest:
    """The page drawn for ``frame_params``, its parts filled for ``config`` (what the live fragment does)."""
    fill = ValueParts.fill
    with monkeypatch.context() as patched:
        patched.setattr(ValueParts, "fill", lambda parts, _results: fill(parts, Results(config)))
        return _open(frame_params)


@pytest.mark.parametrize("change", CHANGES, ids=lambda change: ",".join(change))
def test_a_live_change_fills_the_parts_as_a_full_run_draws_the_page(change, monkeypatch):
    assert set(change) <= set(controls.LIVE_KEYS)
    full = _open({**BASE, **change})
    assert not full.exception and not full.error, [e.value for e in full.exception] + [e.value for e in full.error]
    framed = _framed_then_filled(BASE, _config(full), monkeypatch)
    assert not framed.exception, [e.value for e in framed.exception]
    assert _main_area(framed) == _main_area(full)


#: An image run (trained digits, so short a training here that both pages show one model): one change of each
#: live control that keeps its weights (the trained weights follow such a change in the parts alone).
IMAGE_BASE = {"weights": "trained", "task": "digits", "d_model": "16", "num_heads": "2", "lang": "en"}
IMAGE_CHANGES = [{"image": "digit-7"}, {"image": "photo-flower"}, {"mask_type": "causal"}, {"dtype": "float64"}]


IMAGE_SPEC = trained_spec(16, 2, 0, task="digits", patch=2)


def _trained(params: dict[str, str]) -> None:
    """Train the digits of ``params`` (the link asks for it), and wait for it."""
    _open(params)
    job = training_service().job(IMAGE_SPEC)
    assert job is None or job.finished.wait(120)


def test_every_live_control_has_a_change_here():
    assert set(CHANGES_BY_KEY) == set(controls.LIVE_KEYS)
    changed = {key for change in CHANGES + IMAGE_CHANGES for key in change}
    assert set(controls.LIVE_KEYS) <= changed


@pytest.mark.usefixtures("short_trainings")
@pytest.mark.parametrize("change", IMAGE_CHANGES, ids=lambda change: ",".join(f"{k}={v}" for k, v in change.items()))
def test_an_image_runs_live_change_fills_the_parts_as_a_full_run_draws_the_page(change, monkeypatch):
    assert set(change) <= set(controls.LIVE_KEYS)
    _trained(IMAGE_BASE)
    full = _open({**IMAGE_BASE, **change})
    assert not full.exception and not full.error, [e.value for e in full.exception] + [e.value for e in full.error]
    assert _config(full).weight_spec == IMAGE_SPEC  # the same weights: the parts alone can follow
    framed = _framed_then_filled(IMAGE_BASE, _config(full), monkeypatch)
    assert not framed.exception, [e.value for e in framed.exception]
    assert _main_area(framed) == _main_area(full)


@pytest.mark.usefixtures("short_trainings")
def test_an_upload_fills_the_parts_as_a_full_run_draws_the_page(monkeypatch):
    _trained(IMAGE_BASE)
    image = Image.new("L", (30, 30), 255)
    image.paste(0, (12, 4, 18, 26))  # a dark 1 on white
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    full = _open(IMAGE_BASE)
    uploader = next(w for w in full.get("file_uploader") if w.key == controls.UPLOAD_KEY)
    uploader.set_value(("one.png", buffer.getvalue(), "image/png")).run()  # a second run, with the upload
    assert not full.exception and not full.error
    upload = read_upload(buffer.getvalue())
    fill = ValueParts.fill
    with monkeypatch.context() as patched:  # the page drawn twice too (a widget's message tells a rerun apart)
        patched.setattr(ValueParts, "fill", lambda parts, _results: fill(parts, Results(_config(full), upload)))
        framed = _open(IMAGE_BASE).run()
    assert not framed.exception, [e.value for e in framed.exception]
    assert _main_area(framed) == _main_area(full)
    assert t("patches.original") in [c.value for c in framed.caption]  # the parts showed the upload


def test_the_oracle_catches_a_value_drawn_outside_a_part(monkeypatch):
    """Where a panel draws a value in its frame (here: the steps' shapes, drawn at once), the check fails."""
    from components.panels import frame

    def explain_now(box, step, facts, parts, slide, what=None):
        box.markdown("\n\n".join(facts(Results(controls.build_config(controls.current_choices())))))

    for module in ("step1", "step2", "step3", "step4"):
        monkeypatch.setattr(f"components.panels.{module}.explain", explain_now)
    assert frame.explain is not explain_now
    full_params = {**BASE, "d_model": "128"}
    full = _open(full_params)
    framed = _framed_then_filled(BASE, _config(full), monkeypatch)
    assert _main_area(framed) != _main_area(full)
    monkeypatch.undo()
    assert _main_area(_framed_then_filled(BASE, _config(full), monkeypatch)) == _main_area(
        _open({**BASE, "d_model": "128"})
    )


def _part_places(node) -> list:
    """Every part's place (``value_part_<n>``) under ``node``, in page order."""
    found = []
    proto = getattr(node, "proto", None)
    if proto is not None and getattr(proto, "id", "").split("-")[-1].startswith(PART_KEY):
        found.append(node)
    for child in getattr(node, "children", {}).values():
        found += _part_places(child)
    return found


@pytest.mark.parametrize("change", [{}, *CHANGES], ids=lambda change: ",".join(change) or "base")
def test_every_part_draws_an_element_so_its_place_is_kept_for_the_fragments_later_runs(change):
    """Streamlit lets a fragment's later runs write only where it wrote in the last full run: a part that drew
    nothing would lose its place, and a later value that needs it would fail in the browser (AppTest does not
    check). Each part writes at least an ``st.empty`` (ValueParts.add)."""
    at = _open({**BASE, **change})
    places = _part_places(at.main)
    assert len(places) >= 10  # the page's parts were found
    empty = [place.proto.id for place in places if not place.children]
    assert not empty, empty


def test_step_4s_code_is_the_output_projection_and_nothing_the_trace_keeps():
    """Step 4's excerpt of ``forward_traced`` is ``output = self.project_out(concat)``: the page's listing stops
    before what only the trace needs (which K/V head each query head read)."""
    import ast

    from components.panels.source_code import forward_block, step_code

    statements = ast.parse(forward_block(4)).body
    assigned = [target.id for node in statements for target in getattr(node, "targets", ())]
    calls = [ast.unparse(node.func) for node in ast.walk(statements[-1]) if isinstance(node, ast.Call)]
    assert assigned == ["output"] and calls == ["self.project_out"], forward_block(4)
    assert step_code(4).startswith(forward_block(4) + "\n\ndef project_out(")  # then the method it calls
