"""The engine's own code for the panels' listings, read from ``mha/`` as it runs (never a copy that drifts).

Each step shows its lines of ``MultiHeadAttention.forward_traced`` (``mha/module.py``, under the step's
``# N)`` comment), then the methods and functions they call, such as ``mha.functional.masked_softmax``.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Sequence
from functools import cache
from typing import cast

from mha import functional
from mha.module import MultiHeadAttention

__all__ = ["forward_block", "method_source", "step_code"]


@cache
def method_source(func: Callable[..., object]) -> str:
    """The source of a function or method without its docstring (signature and body)."""
    source = textwrap.dedent(inspect.getsource(func))
    node = cast(ast.FunctionDef, ast.parse(source).body[0])
    lines = source.splitlines()
    body = node.body
    has_doc = isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant)
    header = lines[: body[0].lineno - 1]
    rest = lines[body[1].lineno - 1 :] if has_doc and len(body) > 1 else lines[body[0].lineno - 1 :]
    return "\n".join(header + rest)


@cache
def forward_block(step: int) -> str:
    """The lines of ``MultiHeadAttention.forward_traced`` under its ``# {step})`` comment."""
    lines = textwrap.dedent(inspect.getsource(MultiHeadAttention.forward_traced)).splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(f"# {step})"))
    end = next(
        (i for i, line in enumerate(lines[start + 1 :], start + 1) if line.strip().startswith(("# ", "return"))),
        len(lines),
    )
    return textwrap.dedent("\n".join(lines[start:end]))


@cache
def step_code(step: int) -> str:
    """What the panel of ``step`` shows: the step in the traced forward, then the methods it calls."""
    helpers: dict[int, Sequence[Callable[..., object]]] = {
        1: (MultiHeadAttention._project_qkv, MultiHeadAttention.split_heads),
        2: (MultiHeadAttention.attend_stages, functional.attention_stages, functional.masked_softmax),
        3: (MultiHeadAttention.concat_heads,),
        4: (MultiHeadAttention.project_out,),
    }
    return "\n\n".join([forward_block(step), *(method_source(func) for func in helpers[step])])
