"""The one output format of every benchmark section: a titled table, printed as text or markdown."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

__all__ = ["Table", "format_table", "rounds_main"]


@dataclass(frozen=True)
class Table:
    """A result table: ``rows`` hold one cell per column (already formatted strings, or numbers).

    ``notes`` are printed under the table: what was measured, how, on what.
    """

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(
                    f"table {self.title!r}: row {row!r} has {len(row)} cells for {len(self.columns)} columns"
                )


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _text(title: str, header: Sequence[str], body: list[list[str]], notes: Sequence[str]) -> str:
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        # first column (the label) left-aligned, the numbers right-aligned
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([title, "=" * len(title), line(header), rule, *map(line, body), *notes])


def _markdown(title: str, header: Sequence[str], body: list[list[str]], notes: Sequence[str]) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    align = "| " + " | ".join("---" if i == 0 else "---:" for i in range(len(header))) + " |"
    parts = [f"### {title}", "", line(header), align, *map(line, body)]
    if notes:
        parts += ["", *notes]
    return "\n".join(parts)


def format_table(table: Table, style: str = "text") -> str:
    """The table as aligned plain text (``style="text"``) or a GitHub markdown table (``"markdown"``)."""
    header = list(table.columns)
    body = [[_cell(v) for v in row] for row in table.rows]
    if style == "text":
        return _text(table.title, header, body, table.notes)
    if style == "markdown":
        return _markdown(table.title, header, body, table.notes)
    raise ValueError(f"unknown table style {style!r}; choose text or markdown")


def rounds_main(
    prog: str, description: str, compare: Callable[[int], Table], rounds: int, argv: list[str] | None = None
) -> int:
    """The command line of a section measured in rounds: ``--rounds N`` (default ``rounds``) and ``--markdown``;
    prints ``compare(N)``'s table."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--rounds", type=int, default=rounds, help=f"rounds after the warm-up (default {rounds})")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parser.parse_args(argv)
    print(format_table(compare(args.rounds), "markdown" if args.markdown else "text"))
    return 0
