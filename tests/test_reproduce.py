"""The "reproduce in PyTorch" script runs on its own (torch only) and gives the page's output."""

from __future__ import annotations

import ast
import dataclasses
import io
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

from mha.config import DOMAINS, PRETRAINED, ROPE_BASE, TRAINED, AttentionConfig, ConfigError
from mha.export import export_basename, trace_npz, trace_pt
from mha.module import MultiHeadAttention
from mha.pipeline import run_attention
from mha.reproduce import reproduce_script
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
    # today's layers: grouped-query heads (num_kv_heads < num_heads) and/or RoPE (positional="rope")
    "gqa_rope_causal": AttentionConfig(
        d_model=16,
        num_heads=4,
        num_kv_heads=2,
        positional="rope",
        mask_type="causal",
        seed=3,
        tokens="the cat sat on the mat because it was tired",
    ),
    "mqa_sinusoidal": AttentionConfig(
        d_model=12, num_heads=3, num_kv_heads=1, mask_type="window", window=1, tokens="a b c d e f"
    ),
    "rope_float64_padding": AttentionConfig(
        d_model=16, num_heads=2, positional="rope", mask_type="padding", dtype="float64", tokens="[PAD] a b [PAD] c d"
    ),
    "mqa_rope_causal_block_pad": AttentionConfig(  # the first row has no key it may attend: zeros, not compared
        d_model=8,
        num_heads=2,
        num_kv_heads=1,
        positional="rope",
        mask_type="causal",
        block_pad=True,
        tokens="[PAD] x y [PAD] z",
    ),
}
#: The configs whose layer is today's (grouped-query heads or RoPE): their script checks against SDPA, not nn.MHA.
TODAY = [
    name for name, config in CONFIGS.items() if config.num_kv_heads != config.num_heads or config.positional == "rope"
]
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
#: The same, then saves the ``output`` and ``weights`` the script left defined to the file ``sys.argv[2]``: the
#: script itself knows nothing of the tests.
KEEP_RESULT = (
    "import runpy, sys; sys.modules['numpy'] = None; kept = runpy.run_path(sys.argv[1], run_name='__main__'); "
    "import torch; torch.save({'output': kept['output'], 'weights': kept['weights']}, sys.argv[2])"
)


def _run_script(source: str, tmp_path) -> tuple[dict, str]:
    """Run ``source`` as its own process with the repository and NumPy out of reach; returns (saved, stdout)."""
    script = tmp_path / "reproduce.py"
    script.write_text(source, encoding="utf-8")
    out_file = tmp_path / "out.pt"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    # -I: no PYTHONPATH, no user site, no script directory on sys.path; cwd is the temp dir
    result = subprocess.run(
        [sys.executable, "-I", "-c", KEEP_RESULT, str(script), str(out_file)],
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
    # the script runs on the CPU, the page on the suite's device: values compared on the CPU
    torch.testing.assert_close(saved["output"], page.trace.output.cpu(), atol=tolerance, rtol=0)
    torch.testing.assert_close(saved["weights"], page.trace.weights.cpu(), atol=tolerance, rtol=0)
    assert f"output    {list(page.trace.output.shape)}" in stdout
    assert stdout.rstrip().endswith("\nmatch"), stdout  # its own checks
    checks = _checks(stdout)
    if name in TODAY:  # against SDPA, and the rotation against complex numbers where there is one
        expected = {"sdpa"} | ({"rotation"} if config.positional == "rope" else set())
    else:
        expected = {"nn.MultiheadAttention"}
    assert set(checks) == expected, stdout
    assert all(difference < 1e-4 for difference in checks.values()), checks


#: The lines in which a script reports its cross-checks, by the check's name.
CHECK_LINES = {
    "nn.MultiheadAttention": r"max \|ours - nn\.MultiheadAttention\|: output (\S+), weights (\S+)",
    "sdpa": r"max \|ours - scaled_dot_product_attention\|: output (\S+), weights (\S+)",
    "rotation": r"max \|apply_rotary - rotation as complex numbers\|: q (\S+), k (\S+)",
}


def _checks(stdout: str) -> dict[str, float]:
    """The largest difference each cross-check printed, by check (the checks a script printed only)."""
    found = {name: re.search(line, stdout) for name, line in CHECK_LINES.items()}
    return {name: max(map(float, match.groups())) for name, match in found.items() if match}


def test_the_script_has_exactly_what_the_layer_has():
    """Settings and helpers of grouped-query heads and RoPE appear only where the page's layer has them."""
    for name, config in CONFIGS.items():
        source = reproduce_script(run_attention(config))
        settings = {
            node.targets[0].id: ast.literal_eval(node.value)
            for node in ast.parse(source).body
            if isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id.isupper()
            and isinstance(node.value, ast.Constant)
        }
        gqa, rope = config.num_kv_heads != config.num_heads, config.positional == "rope"
        assert settings.get("NUM_KV_HEADS") == (config.num_kv_heads if gqa else None), name
        assert settings.get("ROPE_BASE") == (ROPE_BASE if rope else None), name
        assert ("def repeat_kv(" in source, "enable_gqa=True" in source) == (gqa, gqa), name
        assert ("def apply_rotary(" in source, "def rotate_as_complex(" in source) == (rope, rope), name
        assert ("def positional_encoding(" in source) == (config.positional == "sinusoidal"), name
        assert ("nn.MultiheadAttention(D_MODEL" in source) == (name not in TODAY), name
        assert ("scaled_dot_product_attention" in source) == (name in TODAY), name


def _mutated(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


#: Deliberate mistakes in a script, each with the check that must catch it.
MISTAKES = {
    # RoFormer's own pairing, 2i with 2i+1: a rotation too, consistent with itself, but not the one checkpoints use
    "pairs 2i with 2i+1": (
        [
            (
                "return torch.cat((-x[..., half:], x[..., :half]), dim=-1)",
                "return torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)",
            ),
            (
                "angles = torch.cat((angles, angles), dim=-1)",
                "angles = angles.repeat_interleave(2, dim=-1)",
            ),
        ],
        "rotation",
    ),
    "turns by base^(-i/Dh)": (
        [("theta = base ** (-torch.arange(0, Dh, 2,", "theta = base ** (-torch.arange(0, Dh // 2, 1,")],
        "rotation",
    ),
    # torch's .repeat tiles the heads: query head h would read key/value head h % Hkv instead of h // (H / Hkv)
    "repeat_kv tiles": (
        [
            (
                "return x[:, :, None].expand(B, Hkv, groups, L, Dh).reshape(B, Hkv * groups, L, Dh)",
                "return x.repeat(1, groups, 1, 1)",
            )
        ],
        "sdpa",
    ),
}


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_the_scripts_checks_catch_a_wrong_rotation_or_grouping(mistake, tmp_path):
    """The checks can fail: each mistake makes the script print MISMATCH, from the check that covers that part."""
    page = run_attention(CONFIGS["gqa_rope_causal"])
    source = reproduce_script(page)
    edits, check = MISTAKES[mistake]
    for old, new in edits:
        source = _mutated(source, old, new)
    saved, stdout = _run_script(source, tmp_path)
    assert stdout.rstrip().endswith("MISMATCH"), stdout
    checks = _checks(stdout)
    assert checks[check] > 1e-2, stdout
    assert all(difference < 1e-4 for name, difference in checks.items() if name != check), stdout
    assert (saved["output"] - page.trace.output.cpu()).abs().max() > 1e-2  # and the output is not the page's


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


@pytest.mark.parametrize("name", ["none", "gqa_rope_causal"])
def test_the_downloaded_script_reads_no_environment_and_writes_no_file(name):
    """What a learner downloads is the page's computation, with no hook for the playground's tests."""
    script = reproduce_script(run_attention(CONFIGS[name]))
    called = {
        node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        for node in ast.walk(ast.parse(script))
        if isinstance(node, ast.Call)
    }
    assert not called & {"save", "open", "write_text", "write_bytes", "getenv"}, called
    assert "environ" not in script and "import os" not in script


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
    torch.testing.assert_close(saved["output"], run.trace.output.cpu(), atol=1e-5, rtol=0)  # values, on the CPU
    torch.testing.assert_close(saved["weights"], run.trace.weights.cpu(), atol=1e-5, rtol=0)
    assert stdout.rstrip().endswith("\nmatch"), stdout


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


def _as_trained(run, model=None):
    """``run`` as a page of trained weights (the script reads them from the .pt), with ``model`` run on its input."""
    config = dataclasses.replace(run.config, weights=TRAINED, task="previous")
    if model is None:
        return dataclasses.replace(run, config=config)
    with torch.inference_mode():
        trace = model.forward_traced(run.x, run.x, run.x, run.mask)
    return dataclasses.replace(run, config=config, model=model, trace=trace)


@pytest.mark.parametrize("name", ["gqa_rope_causal", "mqa_sinusoidal", "rope_float64_padding"])
def test_grouped_query_and_rope_weights_are_read_from_the_pages_pt(name, tmp_path):
    """A layer of today's models whose weights the script cannot make: its .pt holds them, W_k and W_v narrower."""
    run = _as_trained(run_attention(CONFIGS[name]))
    assert run.model.W_k.weight.shape == (run.config.num_kv_heads * run.d_k, run.d_model)
    _check_made_weights(run, tmp_path)


def test_a_layer_without_biases_and_its_own_rope_base_is_read_from_the_pt(tmp_path):
    """A Llama-like layer: no biases in the file (a zero bias in the script), RoPE's base 1e5, one key/value head."""
    page = run_attention(CONFIGS["gqa_rope_causal"])
    model = MultiHeadAttention(16, 4, bias=False, num_kv_heads=1, rope_base=1e5)
    generator = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.uniform_(-0.5, 0.5, generator=generator)
    run = _as_trained(page, model.to(page.x.device).eval())  # drawn on the CPU, run where the page ran
    assert "model.W_q.bias" not in torch.load(io.BytesIO(trace_pt(run)), weights_only=True)
    source = reproduce_script(run)
    assert "ROPE_BASE = 100000.0" in source and "NUM_KV_HEADS = 1" in source
    _check_made_weights(run, tmp_path)


@pytest.mark.parametrize("name", ["padding", "gqa_rope_causal"])
def test_the_pt_download_holds_what_the_npz_holds(name):
    run = run_attention(CONFIGS[name])
    with np.load(io.BytesIO(trace_npz(run))) as npz:
        arrays = {name: npz[name] for name in npz.files}
    saved = torch.load(io.BytesIO(trace_pt(run)), weights_only=True)
    assert set(saved) == set(arrays)
    for name, array in arrays.items():
        if array.dtype.kind in "fb":
            assert torch.equal(saved[name], torch.from_numpy(array)) if array.ndim else saved[name] == float(array)
    assert saved["tokens"] == list(run.tokens) and saved["config"] == str(arrays["config"])
    assert saved.get("model.rope_base") == (ROPE_BASE if run.config.positional == "rope" else None)


def test_the_script_names_the_torch_version_that_made_it():
    docstring = ast.get_docstring(ast.parse(reproduce_script(run_attention(CONFIGS["none"]))))
    assert f"Made with torch {torch.__version__}." in docstring
