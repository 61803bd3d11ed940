"""The "reproduce in PyTorch" script runs on its own (torch only) and gives the page's output."""

from __future__ import annotations

import ast
import io
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from mha.config import DOMAINS, PRETRAINED, AttentionConfig, ConfigError
from mha.export import export_basename, trace_npz, trace_pt
from mha.pipeline import run_attention
from mha.reproduce import OUTPUT_ENV, reproduce_script
from mha.sources.trained import TrainedSource
from mha.training.loop import train
from mha.training.service import TrainedModel

ALLOWED_IMPORTS = {"hashlib", "math", "os", "torch"}
ODD_TEXT = 'She said "it\'s" — a\\b \'\'\' """ 🙂 naïve ok\u202eevil {x} %s\n\t[PAD]'

CONFIGS = {
    "none": AttentionConfig(d_model=16, num_heads=4, mask_type="none", tokens="the cat sat on the mat"),
    "causal_no_positions": AttentionConfig(
        d_model=12, num_heads=3, mask_type="causal", positional=False, seed=5, tokens="one two three four"
    ),
    "padding": AttentionConfig(d_model=8, num_heads=2, mask_type="padding", tokens="hello world [PAD] <pad> [PAD]"),
    "window": AttentionConfig(d_model=10, num_heads=5, mask_type="window", window=1, tokens="a b c d e f g"),
    "chinese": AttentionConfig(
        d_model=16, num_heads=2, mask_type="causal", seed=42, tokens="小明喜欢打球，因为他很累。"
    ),
    "odd_tokens": AttentionConfig(d_model=8, num_heads=4, mask_type="none", tokens=ODD_TEXT),
    "causal_block_pad": AttentionConfig(
        d_model=8, num_heads=2, mask_type="causal", block_pad=True, tokens="hello world [PAD] <pad>"
    ),
    "window_block_pad": AttentionConfig(
        d_model=8, num_heads=4, mask_type="window", window=1, block_pad=True, tokens="a [PAD] b c [PAD] [PAD]"
    ),
    "float64_all_pad": AttentionConfig(
        d_model=6, num_heads=3, mask_type="padding", dtype="float64", tokens="[PAD] [PAD] [PAD]"
    ),
    "words": AttentionConfig(d_model=8, num_heads=2, tokenizer="words", tokens="小明喜欢打球"),
}
TOLERANCE = {torch.float32: 1e-5, torch.float64: 1e-12}
#: Fields that do not change a run with random weights, each with its reason: every other field of AttentionConfig
#: must be varied by one of CONFIGS above, so a new control cannot leave the script silently behind.
NOT_IN_A_RANDOM_RUN = {
    "weights": "the script's two paths: random weights rebuilt here, the others read from the page's .pt",
    "task": "trained weights only (read from the .pt)",
    "checkpoint": "pretrained weights only (read from the .pt)",
    "hub_id": "pretrained weights only (read from the .pt)",
    "layer": "a checkpoint's or a trained model's layer (read from the .pt)",
    "device": "the script runs on the CPU (its header says so)",
    "patch": "an image task's (trained weights)",
    "image": "an image task's or a checkpoint's (their inputs read from the .pt)",
}


def test_every_field_of_the_config_is_in_the_script_or_said_not_to_matter():
    default = AttentionConfig()
    varied = {
        name for config in CONFIGS.values() for name in DOMAINS if getattr(config, name) != getattr(default, name)
    }
    assert set(DOMAINS) == varied | set(NOT_IN_A_RANDOM_RUN), set(DOMAINS) - varied - set(NOT_IN_A_RANDOM_RUN)
    assert not varied & set(NOT_IN_A_RANDOM_RUN) - {"weights"}


#: Runs a file as __main__ with NumPy out of reach (``import numpy`` raises ImportError): PyTorch alone.
WITHOUT_NUMPY = "import runpy, sys; sys.modules['numpy'] = None; runpy.run_path(sys.argv[1], run_name='__main__')"


def _run_script(source: str, tmp_path) -> tuple[dict, str]:
    """Run ``source`` as its own process with the repository and NumPy out of reach; returns (saved, stdout)."""
    script = tmp_path / "reproduce.py"
    script.write_text(source, encoding="utf-8")
    out_file = tmp_path / "out.pt"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"} | {OUTPUT_ENV: str(out_file)}
    # -I: no PYTHONPATH, no user site, no script directory on sys.path; cwd is the temp dir
    result = subprocess.run(
        [sys.executable, "-I", "-c", WITHOUT_NUMPY, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return torch.load(out_file, weights_only=True), result.stdout


@pytest.mark.parametrize("name", list(CONFIGS))
def test_script_reproduces_the_page(name, tmp_path):
    config = CONFIGS[name]
    page = run_attention(config)
    saved, stdout = _run_script(reproduce_script(page), tmp_path)
    tolerance = TOLERANCE[page.trace.output.dtype]
    assert saved["output"].dtype == page.trace.output.dtype
    assert saved["output"].shape == page.trace.output.shape
    torch.testing.assert_close(saved["output"], page.trace.output, atol=tolerance, rtol=0)
    torch.testing.assert_close(saved["weights"], page.trace.weights, atol=tolerance, rtol=0)
    assert f"output    {list(page.trace.output.shape)}" in stdout
    assert stdout.rstrip().endswith("match"), stdout  # its own check against nn.MultiheadAttention


def test_all_pad_rows_are_zero_weights_not_nan(tmp_path):
    saved, _ = _run_script(reproduce_script(run_attention(CONFIGS["float64_all_pad"])), tmp_path)
    assert not saved["weights"].isnan().any()
    assert (saved["weights"] == 0).all()


@pytest.mark.parametrize(("module", "error"), [("mha", "No module named 'mha'"), ("numpy", "import of numpy halted")])
def test_the_repository_and_numpy_are_out_of_reach_of_the_script(module, error, tmp_path):
    """The premise of the tests above: in that process `import mha` and `import numpy` fail."""
    (tmp_path / "probe.py").write_text(f"import {module}\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-I", "-c", WITHOUT_NUMPY, "probe.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert error in result.stderr


@pytest.mark.parametrize("name", list(CONFIGS))
def test_script_imports_only_torch_and_the_standard_library(name):
    tree = ast.parse(reproduce_script(run_attention(CONFIGS[name])))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert imported <= ALLOWED_IMPORTS, imported
    assert "mha" not in imported


def test_tokens_are_embedded_as_exact_literals():
    config = CONFIGS["odd_tokens"]
    tree = ast.parse(reproduce_script(run_attention(config)))
    [tokens_node] = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and [target.id for target in node.targets] == ["TOKENS"]
    ]
    assert tuple(ast.literal_eval(tokens_node)) == run_attention(config).tokens


def test_raw_text_is_never_embedded():
    """Only the token literals are: the raw text (newlines, line separators) could break out of a comment."""
    source = reproduce_script(
        run_attention(AttentionConfig(d_model=4, num_heads=2, tokens="x\nimport evil  # \u2028 y"))
    )
    assert "import evil" not in source
    assert "\u2028" not in source


def test_invisible_characters_are_escaped():
    source = reproduce_script(run_attention(CONFIGS["odd_tokens"]))
    assert "\u202e" not in source  # a right-to-left override would make the code read differently
    assert '"\\u202e"' in source  # ... it appears as an escape instead


def test_empty_text_is_refused_before_a_script_exists():
    with pytest.raises(ConfigError) as error:
        AttentionConfig(d_model=4, num_heads=2, tokens="   ")
    assert error.value.field == "tokens"


def _check_made_weights(run, tmp_path) -> None:
    """``run``'s script reads its .pt download (next to it), not NumPy, and gives the page's output and weights."""
    (tmp_path / f"{export_basename(run.config)}.pt").write_bytes(trace_pt(run))
    source = reproduce_script(run)
    assert "SEED" not in source and "PT = " in source and "numpy" not in source
    saved, stdout = _run_script(source, tmp_path)
    torch.testing.assert_close(saved["output"], run.trace.output, atol=1e-5, rtol=0)
    torch.testing.assert_close(saved["weights"], run.trace.weights, atol=1e-5, rtol=0)
    assert stdout.rstrip().endswith("match"), stdout


def test_trained_weights_are_read_from_the_pages_pt_with_pytorch_alone(tmp_path):
    config = AttentionConfig(
        d_model=16, num_heads=2, weights="trained", task="induction", layer=1, mask_type="causal", tokens="a b c a b"
    )
    spec = config.weight_spec
    model, history = train(spec.task, spec.d_model, spec.num_heads, spec.seed, max_steps=3)
    _check_made_weights(run_attention(config, TrainedSource(TrainedModel(spec, model, history))), tmp_path)


def test_pretrained_weights_are_read_from_the_pages_pt_with_pytorch_alone(listed_tiny, tmp_path):
    config = AttentionConfig(weights=PRETRAINED, checkpoint="tiny", layer=1, tokens="the cat sat on the mat")
    _check_made_weights(run_attention(config), tmp_path)


def test_the_pt_download_holds_what_the_npz_holds():
    run = run_attention(CONFIGS["padding"])
    with np.load(io.BytesIO(trace_npz(run))) as npz:
        arrays = {name: npz[name] for name in npz.files}
    saved = torch.load(io.BytesIO(trace_pt(run)), weights_only=True)
    assert set(saved) == set(arrays)
    for name, array in arrays.items():
        if array.dtype.kind in "fb":
            assert torch.equal(saved[name], torch.from_numpy(array)) if array.ndim else saved[name] == float(array)
    assert saved["tokens"] == list(run.tokens) and saved["config"] == str(arrays["config"])


def test_the_script_names_the_torch_version_that_made_it():
    docstring = ast.get_docstring(ast.parse(reproduce_script(run_attention(CONFIGS["none"]))))
    assert f"Made with torch {torch.__version__}." in docstring
