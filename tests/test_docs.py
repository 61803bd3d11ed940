"""Every link in README and docs leads somewhere, and every command README shows is one the tests run.

No network here: a link to another site is checked for its form and against the list of sites the
docs are meant to cite (a new one is a deliberate edit of :data:`EXTERNAL_SITES`); links into this
repository must name a file that exists and, with ``#anchor``, a heading or ``<a id>`` in it; links to
the app (``http://localhost:8501/...``) must name a page of the app and parse without a single problem.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest

from components.nav import LAB_PAGES
from components.url_params import parse_query_params, parse_teacher_params

REPO = Path(__file__).resolve().parents[1]
DOCS = sorted([REPO / "README.md", REPO / "ARCHITECTURE.md", *(REPO / "docs").glob("*.md")])
EXTERNAL_SITES = {
    "share.streamlit.io", "docs.streamlit.io", "huggingface.co", "pytorch.org", "download.pytorch.org",
    "docs.astral.sh", "github.com", "pypi.org", "arxiv.org",
}  # fmt: skip
APP_HOSTS = {"localhost:8501", "127.0.0.1:8501"}

_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)|<(https?://[^>\s]+)>")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.M)
_ANCHOR = re.compile(r"<a id=\"([^\"]+)\"")


def _links(path: Path) -> list[str]:
    """Markdown links and autolinks outside code blocks."""
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    return [inline or auto for inline, auto in _LINK.findall(text)]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (letters of any script kept), spaces -> -."""
    heading = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading).lower()
    kept = "".join(ch for ch in heading if ch in " -" or unicodedata.category(ch)[0] in "LN")
    return kept.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    slugs: set[str] = set()
    for heading in _HEADING.findall(text):
        slug, n = _slug(heading), 1
        while slug in slugs:  # GitHub numbers repeated headings: name, name-1, name-2 ...
            slug = f"{_slug(heading)}-{n}"
            n += 1
        slugs.add(slug)
    return slugs | set(_ANCHOR.findall(text))


def _app_paths() -> set[str]:
    """``/`` and each lab's URL path (Streamlit names a page after its file, without the number)."""
    return {"/"} | {"/" + re.sub(r"^\d+_", "", Path(page).stem) for page, _, _ in LAB_PAGES}


def _all_links() -> list[tuple[str, str]]:
    return [(str(path.relative_to(REPO)), link) for path in DOCS for link in _links(path)]


def test_the_docs_have_links_to_check():
    assert len(_all_links()) > 50


@pytest.mark.parametrize(("doc", "link"), _all_links())
def test_every_link_leads_somewhere(doc, link):
    source = REPO / doc
    parts = urlsplit(link)
    if parts.scheme in {"http", "https"}:
        if parts.netloc in APP_HOSTS:
            assert (parts.path or "/") in _app_paths(), f"no page {parts.path!r} in the app"
            query = dict(parse_qsl(parts.query, keep_blank_values=True))
            problems = parse_query_params(query).problems + parse_teacher_params(query).problems
            assert not problems, problems
        else:
            assert parts.scheme == "https" and parts.netloc in EXTERNAL_SITES, link
        return
    assert not parts.scheme, f"unexpected link scheme: {link}"
    target = (source.parent / parts.path).resolve() if parts.path else source
    assert target.exists(), f"{link}: {target} does not exist"
    if parts.fragment:
        assert parts.fragment in _anchors(target), f"{link}: no heading or anchor #{parts.fragment} in {target.name}"


def test_slugs_follow_githubs_rule():
    assert _slug("Pretrained checkpoints") == "pretrained-checkpoints"
    assert (
        _slug("torch: why `torch==2.13.0`, and what “CPU only” means") == "torch-why-torch2130-and-what-cpu-only-means"
    )
    assert _slug("中文") == "中文"


# ---------------------------------------------------------------- README's commands
_BASH_BLOCK = re.compile(r"^```bash\n(.*?)^```", re.S | re.M)

#: Every command README shows, and the test that runs it (or, for the test command, CI itself).
COMMANDS = {
    "python3 -m venv .venv && .venv/bin/pip install -r requirements.txt && .venv/bin/streamlit run playground.py":
        "test_the_app_command_installs_what_requirements_pin_and_serves_the_page",
    "bash scripts/setup-tests.sh && .venv/bin/python -m pytest": ".ci/run runs it, read from README (tests itself)",
    ".venv/bin/python -m bench --list": "test_the_bench_command_lists_its_sections",
}  # fmt: skip


def _readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return [line.strip() for block in _BASH_BLOCK.findall(text) for line in block.splitlines() if line.strip()]


def test_every_readme_command_is_run_by_a_test():
    commands = _readme_commands()
    assert commands, "README shows no command"
    unknown = [command for command in commands if command not in COMMANDS]
    assert not unknown, f"README shows commands no test runs: {unknown}"


@pytest.mark.parametrize("outside", [None, "false"], ids=["CI-unset", "CI-false"])
def test_ci_runs_the_readme_test_command_with_ci_set(tmp_path, outside):
    """``.ci/run`` runs README's test command with ``CI=true`` whatever the machine's environment says, so that a
    missing Chromium or HAProxy fails the run (tests/conftest.py) instead of skipping. Shown with a README whose
    test command prints ``$CI``."""
    import os
    import shutil
    import subprocess

    (tmp_path / ".ci").mkdir()
    shutil.copy2(REPO / ".ci" / "run", tmp_path / ".ci" / "run")
    command = 'printf "CI=%s\\n" "$CI"'
    readme = f"Tests:\n\n<!-- test-command -->\n```bash\n{command}\n```\n<!-- /test-command -->\n"
    (tmp_path / "README.md").write_text(readme, encoding="utf-8")
    environ = {name: value for name, value in os.environ.items() if name != "CI"}
    if outside is not None:
        environ["CI"] = outside
    result = subprocess.run(
        ["bash", str(tmp_path / ".ci" / "run")], env=environ, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [f"+ CI=true {command}", "CI=true"]


def test_the_app_command_installs_what_requirements_pin_and_serves_the_page():
    """Its pieces: the venv here holds every pin of requirements.txt, and the app starts and answers."""
    from importlib.metadata import PackageNotFoundError, version

    from local_app import free_port, start_streamlit

    pins = [line.split("==") for line in (REPO / "requirements.txt").read_text().splitlines() if "==" in line]
    for name, pinned in pins:
        try:
            installed = version(name.strip())
        except PackageNotFoundError:
            pytest.fail(f"{name} is pinned in requirements.txt but not installed")
        assert installed.split("+")[0] == pinned.strip(), (name, installed, pinned)
    process = start_streamlit(free_port())  # waits for /_stcore/health to answer 200
    process.terminate()
    process.wait(timeout=30)


def test_the_bench_command_lists_its_sections():
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "bench", "--list"], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    sections = {line.split(":")[0] for line in result.stdout.splitlines() if ":" in line}
    for name in ("engine", "browser", "room", "training", "pretrained", "limits"):
        assert name in sections, (name, result.stdout)
    readme = (REPO / "README.md").read_text(encoding="utf-8") + (REPO / "docs" / "PERFORMANCE.md").read_text(
        encoding="utf-8"
    )
    for named in set(re.findall(r"--only ([a-z_,]+)", readme)):
        assert set(named.split(",")) <= sections, named


_SOURCE_DIRS = ("mha", "components", "pages", "tests", "bench", "scripts", "deploy", "docs")
_MD_NAME = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+\.md)\b")


def _repo_texts() -> list[Path]:
    """The repository's own code and docs: the root's files and those under :data:`_SOURCE_DIRS`."""
    paths = [*REPO.glob("*.py"), *REPO.glob("*.md")]
    for folder in _SOURCE_DIRS:
        paths += [*(REPO / folder).rglob("*.py"), *(REPO / folder).rglob("*.md")]
    return sorted(paths)


def test_every_markdown_file_the_code_and_docs_name_is_in_the_repository():
    """A comment or a doc that sends the reader to a Markdown file names one the reader can open: a path from the
    root, or the end of one (``PERFORMANCE.md``, ``data/README.md``)."""
    present = {str(path.relative_to(REPO)) for path in REPO.rglob("*.md") if ".venv" not in path.parts}
    named = {
        (str(path.relative_to(REPO)), name)
        for path in _repo_texts()
        for name in _MD_NAME.findall(path.read_text(encoding="utf-8"))
    }
    assert len(named) > 20
    missing = sorted(
        (where, name) for where, name in named if not any(p == name or p.endswith("/" + name) for p in present)
    )
    assert not missing, missing
