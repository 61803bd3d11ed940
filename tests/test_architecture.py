"""The import rules of ARCHITECTURE.md, read from its table: every row checked against every module's imports.

A row names its rooms (backticked folders or files), what they may import and what they must not
(backticked module names). "the standard library" allows ``sys.stdlib_module_names``; names after
"lazily" may be imported only inside a function body, never when the module loads; "everything" and
"each other" and "the network" are read as they say. A room's own modules are always allowed.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from network_guard import NetworkAccessError, installed

REPO = Path(__file__).resolve().parents[1]
_NAME = re.compile(r"`([A-Za-z_][\w.]*)`")  # a backticked module name (paths have / or end in .py)


@dataclass(frozen=True)
class Rule:
    """One row of the table."""

    rooms: tuple[str, ...]  # "mha/", "playground.py", ...
    anywhere: frozenset[str]  # may be imported at module level
    lazily: frozenset[str]  # only inside a function
    standard_library: bool
    everything: bool
    forbidden: frozenset[str]
    each_other: bool
    no_network: bool


def _names(text: str) -> frozenset[str]:
    return frozenset(name for name in _NAME.findall(text) if not name.endswith(".py"))


def _rules() -> list[Rule]:
    """The rows of ARCHITECTURE.md's import table."""
    lines = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("| room | may import | must not import |")
    rules = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        room, may, must_not = (cell.strip() for cell in line.strip().strip("|").split("|"))
        before, _, after = may.partition("lazily")
        rules.append(
            Rule(
                rooms=tuple(re.findall(r"`([^`]+)`", room)),
                anywhere=_names(before),
                lazily=_names(after),
                standard_library="the standard library" in may,
                everything=may == "everything",
                forbidden=_names(must_not),
                each_other=must_not == "each other",
                no_network=must_not == "the network",
            )
        )
    return rules


RULES = _rules()


def _package(room: str) -> str:
    return room.rstrip("/").removesuffix(".py")


def _files(room: str) -> list[Path]:
    path = REPO / room
    return sorted(path.rglob("*.py")) if path.is_dir() else [path]


@dataclass(frozen=True)
class Import:
    names: tuple[str, ...]  # "tests.local_app"; for ``from a import b`` both "a" and "a.b"
    line: int
    in_function: bool


def _imports(path: Path) -> list[Import]:
    """Every absolute import of ``path``, and whether it sits inside a function body."""
    return _imports_in(path.read_text(encoding="utf-8"))


def _imports_in(source: str) -> list[Import]:
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend(Import((alias.name,), child.lineno, in_function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                for alias in child.names:
                    found.append(Import((child.module, f"{child.module}.{alias.name}"), child.lineno, in_function))
            visit(child, inside)

    visit(ast.parse(source), False)
    return found


def _matches(name: str, allowed: frozenset[str]) -> bool:
    """``tests.local_app.x`` matches ``tests.local_app``; ``torch.nn`` matches ``torch``."""
    return any(name == rule or name.startswith(rule + ".") for rule in allowed)


def _cases() -> list[tuple[Rule, str, Path]]:
    return [(rule, room, path) for rule in RULES for room in rule.rooms for path in _files(room)]


def test_the_table_has_every_room_and_reads_as_rules():
    rooms = [room for rule in RULES for room in rule.rooms]
    assert rooms == ["mha/", "components/", "pages/", "playground.py", "bench/", "scripts/", "tests/"]
    engine = RULES[0]
    assert engine.lazily == {"transformers", "huggingface_hub", "tqdm", "jieba", "onnx", "onnxruntime", "PIL"}
    assert {"streamlit", "components", "pages"} <= engine.forbidden and engine.standard_library
    assert RULES[2].each_other and RULES[-1].everything and RULES[-1].no_network


@pytest.mark.parametrize(
    ("rule", "room", "path"), _cases(), ids=[str(path.relative_to(REPO)) for _, _, path in _cases()]
)
def test_every_module_imports_only_what_its_row_allows(rule, room, path):
    if rule.everything:
        return
    own = _package(room)
    others = {_package(other) for other in rule.rooms if other != room} if rule.each_other else set()
    for found in _imports(path):
        where = f"{path.relative_to(REPO)}:{found.line} imports {found.names[0]}"
        top = found.names[0].split(".")[0]
        assert not any(_matches(name, rule.forbidden | others) for name in found.names), f"{where}: forbidden"
        if top == own or (rule.standard_library and top in sys.stdlib_module_names):
            continue
        if any(_matches(name, rule.anywhere) for name in found.names):
            continue
        assert any(_matches(name, rule.lazily) for name in found.names), f"{where}: not in its row of the table"
        assert found.in_function, f"{where} when the module loads: the table allows it only lazily"


def test_the_lazy_rule_sees_a_module_level_import():
    """The check above can fail: a lazily allowed library imported at module level is told apart."""
    found = _imports_in("import transformers\n\nclass A:\n    import tqdm\n\ndef f():\n    import jieba\n")
    assert [(f.names[0], f.in_function) for f in found] == [("transformers", False), ("tqdm", False), ("jieba", True)]


def test_the_tests_row_the_network_is_kept_by_the_guard():
    assert RULES[-1].no_network and installed()  # conftest installed it in this process
    with pytest.raises(NetworkAccessError):
        socket.create_connection(("192.0.2.1", 80), timeout=1)  # TEST-NET-1: refused before a packet leaves
    with pytest.raises(NetworkAccessError):
        socket.getaddrinfo("huggingface.co", 443)  # no name lookup either
    with socket.socket() as server:  # this machine stays reachable: the tests' own servers
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=5):
            pass


def test_onnx_and_onnxruntime_are_imported_only_by_lab_12s_engine_modules():
    for room in ("mha/", "components/", "pages/", "playground.py"):
        for path in _files(room):
            if any(
                _matches(name, frozenset({"onnx", "onnxruntime"})) for found in _imports(path) for name in found.names
            ):
                assert path.relative_to(REPO).as_posix() in {
                    "mha/experiments/onnx_export.py",
                    "mha/experiments/onnx_isolated.py",
                }


def test_the_default_page_does_not_load_heavy_optional_libraries():
    """What the main page imports to draw its default view leaves transformers and jieba unloaded."""
    code = (
        "import sys; import components.controls, components.runner, components.panels, mha.pipeline; "
        "from mha.config import AttentionConfig; from mha.pipeline import run_attention; "
        "run_attention(AttentionConfig()); "
        "print(sorted(name for name in ('transformers', 'jieba', 'onnx', 'onnxruntime') if name in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("page", ["playground.py", "pages/12_onnx.py"])
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


def test_a_labs_page_file_is_named_after_the_lab():
    """One name per lab: ``pages/<n>_<name>.py``, the name of its messages (``lab.<name>.*``) and of its module."""
    from components.nav import LAB_PAGES

    for number, (page, lab, _) in enumerate(LAB_PAGES, start=1):
        assert page == f"pages/{number}_{lab}.py", page
        assert (REPO / page).is_file()
        module = "onnx_export" if lab == "onnx" else lab  # a module named onnx would read as the onnx package
        assert (REPO / "components" / "labs" / f"{module}.py").is_file(), lab
    listed = {page for page, _, _ in LAB_PAGES}
    assert {str(path.relative_to(REPO)) for path in (REPO / "pages").glob("*.py")} == listed


def test_a_labs_words_live_in_the_one_catalog_named_for_it():
    """Every lab has its catalog in components.locale.LAB_CATALOGS, and no other catalog holds a word of that lab."""
    from components import locale
    from components.locale import LAB_CATALOGS
    from components.nav import LAB_PAGES

    assert set(LAB_CATALOGS) == {lab for _, lab, _ in LAB_PAGES}
    for info in pkgutil.iter_modules(locale.__path__):
        catalog = importlib.import_module(f"components.locale.{info.name}")
        for key in catalog.MESSAGES:
            lab = next((lab for lab in LAB_CATALOGS if key == f"nav.lab.{lab}" or key.startswith(f"lab.{lab}.")), None)
            assert lab is None or catalog is LAB_CATALOGS[lab], f"{key} in {info.name}.py, not {LAB_CATALOGS[lab]}"


#: Streamlit's modules the pages may import besides ``streamlit`` itself, each public: the type of a container, and
#: the script-run context that Streamlit's multithreading guide documents (a thread outside a run has none).
PUBLIC_STREAMLIT = {
    "streamlit.delta_generator": {"DeltaGenerator"},
    "streamlit.runtime.scriptrunner": {"get_script_run_ctx"},
}


def _ui_modules() -> list[Path]:
    return [*(REPO / "components").rglob("*.py"), *(REPO / "pages").glob("*.py"), REPO / "playground.py"]


def test_only_the_cache_room_calls_streamlits_caches():
    """components/cache.py is the one place that caches engine work (ARCHITECTURE.md: "one cache room")."""
    for path in _ui_modules():
        if path == REPO / "components" / "cache.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in {"cache_data", "cache_resource", "cache"}:
                raise AssertionError(f"{path.relative_to(REPO)}:{node.lineno} calls st.{node.attr}")


#: Modules that still read the link themselves: their owners move them to url_state's readers (``link_value``,
#: ``link_values``); none may be added.
LINK_READERS_TO_MOVE: set[str] = set()


def test_only_url_state_reads_or_writes_the_link():
    """``st.query_params`` is touched in components/url_state.py alone (ARCHITECTURE.md: "The URL is the state")."""
    touching = set()
    for path in _ui_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "query_params":
                touching.add(path.relative_to(REPO).as_posix())
    assert touching - LINK_READERS_TO_MOVE == {"components/url_state.py"}


def test_the_pages_touch_nothing_private_of_streamlit():
    """Public Streamlit only: its modules from PUBLIC_STREAMLIT alone, and no ``._name`` on anything but the project's
    own objects (``self``, ``cls``, or a name imported from ``mha`` or ``components``)."""
    for path in _ui_modules():
        tree = ast.parse(path.read_text())
        own = {"self", "cls"}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("streamlit"):
                names = {alias.name for alias in node.names}
                assert names <= PUBLIC_STREAMLIT.get(node.module, set()), f"{path.relative_to(REPO)}: {node.module}"
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in {"mha", "components"}:
                own |= {alias.asname or alias.name for alias in node.names}
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert alias.name == "streamlit" or not alias.name.startswith("streamlit."), alias.name
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                root = node.value
                while isinstance(root, ast.Attribute):
                    root = root.value
                assert isinstance(root, ast.Name) and root.id in own, f"{path.relative_to(REPO)}:{node.lineno}"
