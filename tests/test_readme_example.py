"""The README's "The engine" example keeps running, and says what it does."""

from __future__ import annotations

import re
from pathlib import Path

import torch

from mha import AttentionTrace

README = Path(__file__).resolve().parent.parent / "README.md"


def engine_example() -> str:
    """The first ```python block under the "## The engine" heading of README.md."""
    text = README.read_text(encoding="utf-8")
    section = re.search(r"^## The engine\n(.*?)(?=^## |\Z)", text, flags=re.MULTILINE | re.DOTALL)
    assert section, "README.md has no '## The engine' section"
    block = re.search(r"^```python\n(.*?)^```", section.group(1), flags=re.MULTILINE | re.DOTALL)
    assert block, "the '## The engine' section has no ```python block"
    return block.group(1)


def test_readme_engine_example_runs_with_the_shapes_it_claims():
    code = engine_example()
    namespace: dict[str, object] = {}
    exec(compile(code, str(README), "exec"), namespace)

    x, out, weights, trace = (namespace[name] for name in ("x", "out", "weights", "trace"))
    assert list(x.shape) == [2, 10, 512]
    assert list(out.shape) == [2, 10, 512]  # claimed: (2, 10, 512)
    assert list(weights.shape) == [2, 8, 10, 10]  # claimed: (2, 8, 10, 10), per head
    assert isinstance(trace, AttentionTrace)
    assert list(trace.attend.weights.shape) == [2, 8, 10, 10]
    # the causal mask really applied: nothing above the diagonal
    assert torch.equal(weights.triu(1), torch.zeros_like(weights))
    # the shape comments in the block are the ones checked above
    assert "(2, 10, 512), (2, 8, 10, 10)" in code
