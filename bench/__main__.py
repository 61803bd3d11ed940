"""``python -m bench [--only engine,rerun] [--quick] [--markdown] [--list]``: run sections, print tables.

Every module ``bench/<name>.py`` with a ``run(quick) -> list[Table]`` is a section (see
``bench/__init__.py``). Sections run in :data:`PREFERRED_ORDER` (the limits first, then the page
rerun, the browser, the engine and the payload), then any others by name; a section that fails
is reported and the others still run (exit status 1).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import time
import traceback

import bench
from bench.table import format_table

FRAMEWORK_MODULES = {"table", "__main__"}
PREFERRED_ORDER = ("limits", "app_rerun", "browser", "engine", "payload")


def section_names() -> list[str]:
    """Names of the section modules in ``bench/``, in run order."""
    names = [m.name for m in pkgutil.iter_modules(bench.__path__)]
    names = [n for n in names if n not in FRAMEWORK_MODULES and not n.startswith("_")]
    return sorted(names, key=lambda n: (PREFERRED_ORDER.index(n) if n in PREFERRED_ORDER else len(PREFERRED_ORDER), n))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated section names (default: all)")
    parser.add_argument("--quick", action="store_true", help="a fast smoke run: small sizes, few repeats")
    parser.add_argument("--markdown", action="store_true", help="print markdown tables (for docs/PERFORMANCE.md)")
    parser.add_argument("--list", action="store_true", help="list the sections and exit")
    args = parser.parse_args(argv)

    available = section_names()
    if args.list:
        for name in available:
            print(f"{name}: {getattr(importlib.import_module(f'bench.{name}'), 'TITLE', '')}")
        return 0
    chosen = available if not args.only else [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in chosen if n not in available]
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(available)}")

    style = "markdown" if args.markdown else "text"
    failed = []
    for name in chosen:
        start = time.perf_counter()
        try:
            tables = importlib.import_module(f"bench.{name}").run(quick=args.quick)
        except Exception:  # one broken section must not hide the others' numbers
            failed.append(name)
            print(f"[bench] section {name!r} failed:\n{traceback.format_exc()}", file=sys.stderr)
            continue
        for table in tables:
            print(format_table(table, style), end="\n\n")
        print(f"[bench] {name}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
