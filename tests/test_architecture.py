"""The import rules of ARCHITECTURE.md: the engine never imports the UI, heavy libraries load only when asked."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ENGINE_FORBIDDEN = {"streamlit", "components", "pages", "playground", "altair", "pandas"}
UI_FORBIDDEN = {"pages", "playground"}


def _modules(folder: str) -> list[Path]:
    return sorted((REPO / folder).rglob("*.py"))


def _imports(path: Path, top_level_only: bool = False) -> set[str]:
    """The first component of every module ``path`` imports (at module level only, when asked)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else ast.walk(tree)
    names = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", _modules("mha"), ids=lambda p: str(p.relative_to(REPO)))
def test_the_engine_never_imports_the_ui(path):
    assert not _imports(path) & ENGINE_FORBIDDEN


@pytest.mark.parametrize("path", _modules("mha"), ids=lambda p: str(p.relative_to(REPO)))
def test_the_engine_imports_transformers_only_when_a_checkpoint_is_asked_for(path):
    assert "transformers" not in _imports(path, top_level_only=True)


@pytest.mark.parametrize("path", [*_modules("mha"), *_modules("components")], ids=lambda p: str(p.relative_to(REPO)))
def test_onnx_and_onnxruntime_are_imported_only_inside_the_functions_of_lab_12(path):
    assert not _imports(path, top_level_only=True) & {"onnx", "onnxruntime"}
    if _imports(path) & {"onnx", "onnxruntime"}:
        assert path.relative_to(REPO).as_posix() in {
            "mha/experiments/onnx_export.py",
            "mha/experiments/onnx_isolated.py",
        }


@pytest.mark.parametrize("path", _modules("components"), ids=lambda p: str(p.relative_to(REPO)))
def test_the_ui_never_imports_the_pages(path):
    assert not _imports(path) & UI_FORBIDDEN


def test_the_default_page_does_not_load_heavy_optional_libraries():
    """What the main page imports to draw its default view leaves transformers and jieba unloaded."""
    code = (
        "import sys; import components.controls, components.runner, components.steps, mha.pipeline; "
        "from mha.config import AttentionConfig; from mha.pipeline import run_attention; "
        "run_attention(AttentionConfig()); "
        "print(sorted(name for name in ('transformers', 'jieba', 'onnx', 'onnxruntime') if name in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("page", ["playground.py", "pages/12_onnx_export.py"])
def test_the_pages_never_load_onnx_or_onnxruntime(page):
    """The main page, and lab 12 itself even after an export and its checks (a child process does that work)."""
    export = "at.button(key='onnx_export').click().run(); " if "onnx" in page else ""
    code = (
        "import sys; from streamlit.testing.v1 import AppTest; "
        f"at = AppTest.from_file({str(REPO / page)!r}, default_timeout=300).run(); {export}"
        "assert not at.exception, at.exception; assert not at.error, at.error; "
        "print(sorted(name for name in ('onnx', 'onnxruntime', 'onnxscript') if name in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"
