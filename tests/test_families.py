"""A new checkpoint family is one new module: only ``mha/sources/families/`` names a family.

Two checks. The rule, read from the code: no module outside ``mha/sources/families/`` imports a concrete
family module (only the registry, ``mha.sources.families``, and the protocol, its ``base``) or names a
family's class, and no module under ``mha/sources/`` outside it holds a family's ``model_type`` in a string
(a special case such as ``if model_type == "deit"``). The promise, kept by a family this test defines: a
DistilBERT (its own layer names, its own ``config.json`` keys), registered here and nowhere else, is read by
the checkpoint source like a built-in family -- its sizes, a run, the check against the checkpoint's own
forward, every layer's weights for the head finder.
"""

from __future__ import annotations

import ast
import re
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import Tensor, nn

from mha.config import PRETRAINED, AttentionConfig, WeightSpec
from mha.pipeline import run_attention
from mha.sources import SourceUnavailableError, families, make_source, source_sizes
from mha.sources.checkpoint import loader
from mha.sources.families import FAMILIES, Family, Projection

REPO = Path(__file__).resolve().parents[1]
FAMILY_PACKAGE = REPO / "mha" / "sources" / "families"
#: Where a module may import the registry and the protocol, never a family's own module.
ALLOWED_IMPORTS = {"mha.sources.families", "mha.sources.families.base"}
_WORD = re.compile(r"[a-z0-9]+")


def _family_modules() -> set[str]:
    """The concrete family modules: every module of the package but the registry and the protocol."""
    return {f"mha.sources.families.{path.stem}" for path in FAMILY_PACKAGE.glob("*.py") if path.stem != "__init__"} - (
        ALLOWED_IMPORTS
    )


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (a module's, a class's, a function's)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def special_cases(source: str, *, strings: bool) -> list[str]:
    """What in ``source`` names a family: an import of a family's module, a family class's name and (``strings``)
    a string holding a registered ``model_type`` as a word (docstrings aside: they may give examples)."""
    tree = ast.parse(source)
    classes = {type(family).__name__ for family in FAMILIES.values()}
    model_types = set(FAMILIES)
    docstrings = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name in _family_modules()]
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported = {node.module} | {f"{node.module}.{a.name}" for a in node.names}
            found += [f"import {name}" for name in sorted(imported & _family_modules())]
            found += [f"import {a.name}" for a in node.names if a.name in classes]
        elif isinstance(node, ast.Name) and node.id in classes:
            found.append(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in classes:
            found.append(node.attr)
        elif strings and isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            named = model_types & set(_WORD.findall(node.value.lower()))
            found += [f"{node.value!r} names {', '.join(sorted(named))}"] if named else []
    return found


def _modules(*rooms: str) -> list[Path]:
    paths = [path for room in rooms for path in sorted((REPO / room).rglob("*.py"))]
    return [path for path in paths if FAMILY_PACKAGE not in path.parents]


@pytest.mark.parametrize("path", _modules("mha/sources"), ids=lambda p: str(p.relative_to(REPO)))
def test_no_source_module_outside_the_families_names_a_family(path):
    assert special_cases(path.read_text(encoding="utf-8"), strings=True) == []


@pytest.mark.parametrize("path", _modules("mha", "components", "pages"), ids=lambda p: str(p.relative_to(REPO)))
def test_nothing_outside_the_families_imports_a_familys_module(path):
    assert special_cases(path.read_text(encoding="utf-8"), strings=False) == []


def test_the_check_sees_each_kind_of_special_case():
    assert special_cases("from mha.sources.families.vit import DIST", strings=False)
    assert special_cases("from mha.sources.families import vit", strings=False)
    assert special_cases("import mha.sources.families.gpt2", strings=False)
    assert special_cases("if isinstance(family, ViTFamily): pass", strings=False)
    assert special_cases('if config["model_type"] == "deit": pass', strings=True)
    assert special_cases('NOTE = "bert decoder"', strings=True)
    assert not special_cases(
        '"""Like BERT\'s: its [CLS]."""\nfrom mha.sources.families import family_for', strings=True
    )
    assert not special_cases('WHY = "what_if_image"  # vitally', strings=True)


# ---------------------------------------------------------------- a family defined here, and nowhere else
DISTIL = "distilbert"
#: Our projection <- the module of a DistilBERT layer's ``attention`` holding it.
DISTIL_PROJECTIONS = {"W_q": "q_lin", "W_k": "k_lin", "W_v": "v_lin", "W_o": "out_lin"}


class DistilBertFamily(Family):
    """DistilBERT: Post-Norm, bidirectional, ``nn.Linear`` projections named ``q_lin`` ... ``out_lin``."""

    model_types = (DISTIL,)
    size_keys = (("dim",), ("n_heads",), ("n_layers",))

    def layers(self, model: Any) -> Sequence[nn.Module]:
        return model.transformer.layer

    def attention(self, model: Any, layer: int) -> nn.Module:
        return model.transformer.layer[layer].attention

    def check_structure(self, attention: nn.Module) -> None:
        for theirs in DISTIL_PROJECTIONS.values():
            if not isinstance(getattr(attention, theirs), nn.Linear):  # AttributeError when missing
                raise AttributeError(theirs)

    def projections(self, attention: nn.Module) -> Projection:
        linears = {ours: getattr(attention, theirs) for ours, theirs in DISTIL_PROJECTIONS.items()}
        return {ours: (linear.weight, linear.bias) for ours, linear in linears.items()}  # (D, D), (D,)

    def layer_input(self, model: Any, hidden_states: Sequence[Tensor], layer: int) -> Tensor:
        return hidden_states[layer]  # (1, L, D): Post-Norm, the residual stream itself

    def block_output(self, model: Any, layer: int) -> nn.Module:
        return model.transformer.layer[layer].attention.out_lin


def build_distilbert(folder: Path) -> Path:
    """A DistilBERT with random weights (2 layers, 4 heads, dim 32) and the tiny BERT's WordPiece tokenizer."""
    from tiny_checkpoint import _bert_tokenizer
    from transformers import DistilBertConfig, DistilBertModel

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = _bert_tokenizer(folder)
    config = DistilBertConfig(
        vocab_size=len(tokenizer), dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=160
    )
    with torch.random.fork_rng():
        torch.manual_seed(0)
        DistilBertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture
def distil(tmp_path, tiny_checkpoint, monkeypatch) -> str:
    """``distil`` on the server's list, its family registered for this test only."""
    monkeypatch.setattr(families, "FAMILIES", dict(FAMILIES))
    monkeypatch.setattr(loader, "_LOADED", OrderedDict())
    families.register(DistilBertFamily())
    folder = build_distilbert(tmp_path / "distil")
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", f"distil={folder},tiny={tiny_checkpoint}")
    return "distil"


def test_a_family_registered_alone_is_read_like_a_built_in_one(distil):
    assert DISTIL in families.supported_types() and DISTIL not in families.SUPPORTED_TYPES
    spec = WeightSpec(PRETRAINED, checkpoint=distil)
    sizes = source_sizes(spec)
    assert (sizes.d_model, sizes.num_heads, sizes.num_layers, sizes.modality, sizes.causal) == (32, 4, 2, "text", False)
    source = make_source(spec)
    for layer in range(2):
        config = AttentionConfig(weights=PRETRAINED, checkpoint=distil, tokens="the cat sat on the mat", layer=layer)
        run = run_attention(config, source)
        assert run.tokens == ("[CLS]", "the", "cat", "sat", "on", "the", "mat", "[SEP]")
        check = source.compare(config, run.trace.weights, run.trace.output, run.mask)
        assert check.applies and check.passed, check
    tokens, maps = source.attention_maps("the cat sat")
    assert maps.shape == (2, 4, len(tokens), len(tokens))


def test_a_model_type_no_family_reads_is_refused_until_its_family_is_registered(tmp_path, monkeypatch):
    monkeypatch.setattr(families, "FAMILIES", dict(FAMILIES))
    with pytest.raises(SourceUnavailableError) as error:
        families.family_for("distil", {"model_type": DISTIL})
    assert error.value.code == "not_supported" and DISTIL not in error.value.params["supported"]
    registered = families.register(DistilBertFamily())
    assert families.family_for("distil", {"model_type": DISTIL}) is registered
    with pytest.raises(ValueError, match="names no model_type"):
        families.register(Family())
