"""The pretrained source on a tiny BERT built here (no network): loading, the weight mapping checked
against the checkpoint's own attentions and attention-block output, tokens and notes, refusals,
the bounded cache, the first download's progress and the head finder.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
import threading
from collections import OrderedDict
from pathlib import Path

import pytest
import torch
from tiny_checkpoint import HEADS, HIDDEN, LAYERS
from tolerances import FLOAT32

from components.i18n import t
from mha.checkpoints import chinese_checkpoint
from mha.config import LIMITS, PRETRAINED, AttentionConfig, ConfigError, WeightSpec
from mha.head_finder import find_token, head_weights, rank_heads
from mha.pipeline import run_attention
from mha.sources import SourceSizes, SourceUnavailableError, hub, make_source, source_sizes
from mha.sources.checkpoint import loader
from mha.sources.checkpoint.loader import load_checkpoint
from mha.sources.checkpoint.source import PretrainedSource
from mha.sources.families.bert import PROJECTIONS

REPO = Path(__file__).resolve().parents[1]
ANIMAL = "The animal didn't cross the street because it was too tired"
TOLERANCE = 1e-5


def config(**changes: object) -> AttentionConfig:
    return AttentionConfig(**{"weights": PRETRAINED, "checkpoint": "tiny", "tokens": ANIMAL, **changes})


def their_forward(folder: Path, text: str, layer: int):
    """The checkpoint run by ``transformers`` alone: tokens, hidden states, attentions, the block's output."""
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(folder, attn_implementation="eager").eval()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    encoded = tokenizer(text, return_tensors="pt")
    mask = (encoded["input_ids"] != tokenizer.pad_token_id).long()
    captured = []
    hook = model.encoder.layer[layer].attention.output.dense.register_forward_hook(
        lambda _m, _i, out: captured.append(out)
    )
    with torch.no_grad():
        out = model(
            input_ids=encoded["input_ids"], attention_mask=mask, output_hidden_states=True, output_attentions=True
        )
    hook.remove()
    tokens = tokenizer.convert_ids_to_tokens(encoded["input_ids"][0].tolist())
    return model, tokens, out, captured[0]


# ---------------------------------------------------------------- sizes and loading
def test_sizes_come_from_config_json(listed_tiny):
    assert source_sizes(WeightSpec(PRETRAINED, checkpoint="tiny")) == SourceSizes(HIDDEN, HEADS, LAYERS)


def test_the_app_and_the_sizes_never_import_transformers(listed_tiny):
    """The default page starts without transformers, and reading a checkpoint's sizes does not need it."""
    code = (
        "import sys\n"
        "from streamlit.testing.v1 import AppTest\n"
        f"at = AppTest.from_file({str(REPO / 'playground.py')!r}, default_timeout=60).run()\n"
        "assert not at.exception, at.exception\n"
        "from mha.config import WeightSpec\n"
        "from mha.sources import source_sizes\n"
        "source_sizes(WeightSpec('pretrained', checkpoint='tiny'))\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'transformers'))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_the_layer_holds_the_checkpoints_projections(listed_tiny):
    source = make_source(config().weight_spec)
    bert = load_checkpoint("tiny").model
    for layer in range(LAYERS):
        run = run_attention(config(layer=layer), source)
        block = bert.encoder.layer[layer].attention
        for ours, theirs in PROJECTIONS.items():
            # copied from the checkpoint: the same bytes (compared on the CPU, wherever the run's layer is)
            ours_linear, their_linear = getattr(run.model, ours), block.get_submodule(theirs)
            assert torch.equal(ours_linear.weight.cpu(), their_linear.weight.cpu()), (layer, ours)
            assert torch.equal(ours_linear.bias.cpu(), their_linear.bias.cpu()), (layer, ours)
    assert PROJECTIONS == {"W_q": "self.query", "W_k": "self.key", "W_v": "self.value", "W_o": "output.dense"}


@pytest.mark.parametrize("layer", range(LAYERS))
def test_every_layer_matches_the_checkpoints_own_attentions_and_output(listed_tiny, layer):
    run = run_attention(config(layer=layer))
    _, tokens, out, block_output = their_forward(listed_tiny, ANIMAL, layer)
    assert run.tokens == tuple(tokens)
    assert (run.d_model, run.num_heads, run.num_layers, run.layer) == (HIDDEN, HEADS, LAYERS, layer)
    # the run on the suite's device, the checkpoint's own forward on the CPU: values compared on the CPU
    torch.testing.assert_close(run.x.cpu(), out.hidden_states[layer], **FLOAT32)  # the layer's input
    assert float((run.trace.weights.cpu() - out.attentions[layer]).abs().max()) <= TOLERANCE
    assert float((run.trace.output.cpu() - block_output).abs().max()) <= TOLERANCE
    check = make_source(config().weight_spec).compare(config(layer=layer), run.trace.weights, run.trace.output, None)
    assert check.applies and check.passed and check.checkpoint == "tiny" and check.layer == layer
    assert max(check.max_abs_weights, check.max_abs_output) <= TOLERANCE


def test_float64_runs_the_same_layer_in_double_precision(listed_tiny):
    run = run_attention(config(dtype="float64", layer=1))
    _, _, out, block_output = their_forward(listed_tiny, ANIMAL, 1)
    assert run.x.dtype == run.model.W_q.weight.dtype == torch.float64
    assert float((run.trace.weights.cpu() - out.attentions[1].double()).abs().max()) <= TOLERANCE
    assert float((run.trace.output.cpu() - block_output.double()).abs().max()) <= TOLERANCE


# ---------------------------------------------------------------- tokens, [PAD], [UNK], the cap
def test_tokens_are_the_checkpoint_tokenizers(listed_tiny):
    run = run_attention(config(tokens="cats sat on zebras"))
    assert run.tokens == ("[CLS]", "cat", "##s", "sat", "on", "[UNK]", "[SEP]")


def test_pad_in_the_text_is_the_pad_token_masked_in_the_checkpoints_forward(listed_tiny):
    text = "the cat sat [PAD] [PAD]"
    run = run_attention(config(tokens=text, mask_type="padding", layer=1))
    assert run.tokens == ("[CLS]", "the", "cat", "sat", "[PAD]", "[PAD]", "[SEP]")
    _, _, out, block_output = their_forward(listed_tiny, text, 1)
    assert float(out.attentions[1][..., 4:6].abs().max()) == 0.0  # the checkpoint gives the pads no weight
    assert float((run.trace.weights.cpu() - out.attentions[1]).abs().max()) <= TOLERANCE
    assert float((run.trace.output.cpu() - block_output).abs().max()) <= TOLERANCE
    source = make_source(config().weight_spec)
    padded = config(tokens=text, mask_type="padding", layer=1)
    assert source.compare(padded, run.trace.weights, run.trace.output, run.mask).passed
    unmasked = dataclasses.replace(padded, mask_type="none")
    other = run_attention(unmasked, source)
    check = source.compare(unmasked, other.trace.weights, other.trace.output, other.mask)
    assert (check.applies, check.reason) == (False, "pad_unmasked")


@pytest.mark.parametrize("mask_type", ["causal", "window"])
def test_a_what_if_mask_is_not_compared_with_the_checkpoint(listed_tiny, mask_type):
    what_if = config(mask_type=mask_type, window=1)
    run = run_attention(what_if)
    check = make_source(what_if.weight_spec).compare(what_if, run.trace.weights, run.trace.output, run.mask)
    assert (check.applies, check.reason, check.passed) == (False, "what_if", False)
    assert float(run.trace.weights[0, :, 0, 2:].abs().max()) == 0.0  # the what-if mask did apply to our run


def test_unknown_tokens_get_a_note_and_chinese_text_a_pointer(listed_tiny, monkeypatch):
    english = run_attention(config(tokens="the zebra sat"))
    assert [note.code for note in english.notes] == ["unk_tokens"]
    assert dict(english.notes[0].params) == {"checkpoint": "tiny", "count": 1, "total": 5}
    chinese = run_attention(config(tokens="小明喜欢打球，他放学后去了操场"))
    unknown = sum(token == "[UNK]" for token in chinese.tokens)
    assert unknown >= 10 and {"小", "明", "他"} <= set(chinese.tokens)
    assert [note.code for note in chinese.notes] == ["unk_tokens", "unk_chinese_unlisted"]
    folder = str(listed_tiny)
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", f"tiny={folder},bert-base-chinese={folder}")
    pointed = run_attention(config(tokens="小明喜欢打球"))
    assert pointed.notes[-1].code == "unk_chinese"
    assert pointed.notes[-1].params["suggestion"] == "bert-base-chinese"
    assert not run_attention(config(tokens="the cat sat")).notes
    assert chinese_checkpoint(("minilm", "bert-zh", "x")) == "bert-zh"
    assert chinese_checkpoint(("minilm", "zhang")) is None


def test_the_token_cap_counts_the_checkpoints_tokens(listed_tiny):
    words = LIMITS.tokens_max - 2  # + [CLS] and [SEP] = the cap
    run_attention(config(tokens=" ".join(["cat"] * words)))
    with pytest.raises(ConfigError) as error:
        run_attention(config(tokens=" ".join(["cats"] * (words // 2 + 1))))  # cat ##s: two tokens a word
    assert (error.value.field, error.value.code) == ("tokens", "too_many")
    assert error.value.params == {"count": 2 * (words // 2 + 1) + 2, "high": LIMITS.tokens_max}
    with pytest.raises(ConfigError) as error:
        run_attention(config(tokens="  "))
    assert (error.value.field, error.value.code) == ("tokens", "empty")


def test_a_layer_the_checkpoint_lacks_is_refused(listed_tiny):
    with pytest.raises(ConfigError) as error:
        run_attention(config(layer=LAYERS))
    assert (error.value.field, error.value.code) == ("layer", "out_of_range")
    assert error.value.params == {"value": LAYERS, "low": 0, "high": LAYERS - 1}


# ---------------------------------------------------------------- head labels: [SEP]
def test_a_head_that_reads_sep_is_labelled_sep(listed_tiny, tmp_path, monkeypatch):
    """Head 0 of layer 0 is made to look at [SEP] from every row: its label says so."""
    from transformers import AutoModel

    model = AutoModel.from_pretrained(listed_tiny)
    sep = 3  # the id of [SEP] in the tiny vocabulary
    d_k = HIDDEN // HEADS
    with torch.no_grad():
        model.embeddings.word_embeddings.weight[sep] = 0.0
        model.embeddings.word_embeddings.weight[sep, 0] = 3.0  # after LayerNorm: a large feature 0
        block = model.encoder.layer[0].attention.self
        block.query.weight[:d_k] = 0.0
        block.query.bias[:d_k] = 0.0
        block.query.bias[0] = 4.0  # every query of head 0 is the same: (4, 0, ...)
        block.key.weight[:d_k] = 0.0
        block.key.bias[:d_k] = 0.0
        block.key.weight[0, 0] = 4.0  # key feature 0 of head 0 = 4 x input feature 0
    folder = tmp_path / "sep"
    model.save_pretrained(folder)
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy(listed_tiny / name, folder / name)
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", f"sep={folder}")
    run = run_attention(config(checkpoint="sep", tokens="the cat sat on the mat"))
    assert run.head_labels[0].name == "[SEP]" and run.head_labels[0].share > 0.9
    assert float(run.trace.weights[0, 0, :, -1].min()) > 0.9  # independent: every row's weight on [SEP]


# ---------------------------------------------------------------- refusals
OFF_THE_LIST = ["/etc", str(Path.home()), "../tiny", "https://example.com/bert", "org/model", "nope"]


@pytest.mark.parametrize("asked", OFF_THE_LIST)
def test_a_name_off_the_list_is_never_opened(listed_tiny, asked, monkeypatch):
    opened = []
    monkeypatch.setattr(hub, "checkpoint_folder", lambda *args: opened.append(args))
    for call in (source_sizes, make_source):
        with pytest.raises(SourceUnavailableError) as error:
            call(WeightSpec(PRETRAINED, checkpoint=asked))
        assert error.value.code == "unlisted" and error.value.params == {"name": asked}
    with pytest.raises(ConfigError):
        AttentionConfig(weights=PRETRAINED, checkpoint=asked)
    assert not opened


def _copy_with_config(folder: Path, target: Path, **changes: object) -> Path:
    shutil.copytree(folder, target)
    path = target / "config.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))
    return target


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"model_type": "t5"}, "not_supported"),
        ({"is_decoder": True}, "not_supported"),
        ({"hidden_size": 2048, "num_attention_heads": 16}, "too_big"),
        ({"num_hidden_layers": LIMITS.layers_max + 1}, "too_big"),
    ],
)
def test_checkpoints_this_page_cannot_read_are_refused(listed_tiny, tmp_path, monkeypatch, changes, code):
    folder = _copy_with_config(listed_tiny, tmp_path / "other", **changes)
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", f"other={folder}")
    with pytest.raises(SourceUnavailableError) as error:
        source_sizes(WeightSpec(PRETRAINED, checkpoint="other"))
    assert error.value.code == code and error.value.params["name"] == "other"


def test_missing_broken_and_offline_checkpoints_say_what_is_wrong(listed_tiny, tmp_path, monkeypatch):
    broken = shutil.copytree(listed_tiny, tmp_path / "broken")
    (broken / "model.safetensors").write_bytes(b"not a safetensors file")
    monkeypatch.setenv(
        "ATTN_PLAYGROUND_CHECKPOINTS", f"gone={tmp_path / 'nothing'},broken={broken},offline=org/not-cached"
    )
    expected = {"gone": "missing", "offline": "offline"}
    for name, code in expected.items():
        with pytest.raises(SourceUnavailableError) as error:
            source_sizes(WeightSpec(PRETRAINED, checkpoint=name))
        assert error.value.code == code and error.value.params["name"] == name
    with pytest.raises(SourceUnavailableError) as error:
        source_sizes(WeightSpec(PRETRAINED, checkpoint="offline"))
    assert error.value.params["location"] == "org/not-cached"
    assert source_sizes(WeightSpec(PRETRAINED, checkpoint="broken")) == SourceSizes(HIDDEN, HEADS, LAYERS)
    with pytest.raises(SourceUnavailableError) as error:
        make_source(WeightSpec(PRETRAINED, checkpoint="broken"))
    assert error.value.code == "broken" and error.value.params["reason"]


def test_an_offline_hub_id_is_read_from_the_cache_only(monkeypatch):
    """The tests' hub is offline with an empty cache of its own (conftest): a hub id is refused, not fetched."""
    assert hub.is_offline() and not hub.is_local("org/not-cached") and hub.is_local("/srv/models/x")
    assert not hub.needs_download("org/not-cached")  # offline: nothing to download, the message says why
    monkeypatch.setattr(hub, "start_download", lambda location: pytest.fail("an offline server downloads nothing"))
    with pytest.raises(SourceUnavailableError) as error:
        hub.checkpoint_folder("bert", "google-bert/bert-base-uncased")
    assert error.value.code == "offline"


# ---------------------------------------------------------------- kept in memory, loaded once
def test_at_most_max_loaded_checkpoints_are_kept(listed_tiny, tmp_path, monkeypatch):
    folders = [shutil.copytree(listed_tiny, tmp_path / f"copy{i}") for i in range(3)]
    monkeypatch.setenv("ATTN_PLAYGROUND_CHECKPOINTS", ",".join(f"c{i}={f}" for i, f in enumerate(folders)))
    monkeypatch.setattr(loader, "_LOADED", OrderedDict())
    first = load_checkpoint("c0")
    for name in ("c1", "c2"):
        load_checkpoint(name)
    assert [name for name, _ in loader._LOADED] == ["c1", "c2"]
    assert loader.MAX_LOADED == 2
    assert load_checkpoint("c0") is not first  # evicted, loaded again


def test_two_sessions_asking_at_once_load_once(listed_tiny, monkeypatch):
    monkeypatch.setattr(loader, "_LOADED", OrderedDict())
    calls = []
    real = loader._load

    def counting(*args):
        calls.append(args[0])
        return real(*args)

    monkeypatch.setattr(loader, "_load", counting)
    results = []
    threads = [threading.Thread(target=lambda: results.append(load_checkpoint("tiny"))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == ["tiny"] and len({id(result) for result in results}) == 1


# ---------------------------------------------------------------- the first download
class _FakeHub:
    """``snapshot_download`` that "downloads" the tiny checkpoint, reporting bytes to the given tqdm class."""

    def __init__(self, folder: Path, target: Path, fail: bool = False) -> None:
        self.folder, self.target, self.fail, self.calls = folder, target, fail, 0

    def __call__(self, repo_id, allow_patterns=(), local_files_only=False, tqdm_class=None):
        from huggingface_hub.errors import LocalEntryNotFoundError

        if local_files_only:
            if not self.target.exists():
                raise LocalEntryNotFoundError("not cached")
            return str(self.target)
        self.calls += 1
        if self.fail:
            raise OSError("Name or service not known")
        size = sum(path.stat().st_size for path in self.folder.iterdir())
        bar = tqdm_class(total=size, unit="B", desc="Downloading")
        for path in self.folder.iterdir():
            bar.update(path.stat().st_size)
        bar.close()
        shutil.copytree(self.folder, self.target)
        return str(self.target)


def test_a_hub_checkpoint_is_downloaded_once_with_progress(listed_tiny, tmp_path, monkeypatch):
    import huggingface_hub

    fake = _FakeHub(listed_tiny, tmp_path / "cache")
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(hub, "_DOWNLOADS", {})
    assert hub.needs_download("org/tiny")
    download = hub.start_download("org/tiny")
    assert download.wait(30) and download.error is None
    size = sum(path.stat().st_size for path in listed_tiny.iterdir())
    assert (download.done_bytes, download.total_bytes, download.fraction) == (size, size, 1.0)
    assert not hub.needs_download("org/tiny")
    assert hub.checkpoint_folder("tiny", "org/tiny") == tmp_path / "cache"
    assert fake.calls == 1


def test_a_failed_download_is_reported_and_not_retried_at_once(listed_tiny, tmp_path, monkeypatch):
    import huggingface_hub

    fake = _FakeHub(listed_tiny, tmp_path / "cache", fail=True)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setattr(hub, "_DOWNLOADS", {})
    download = hub.start_download("org/tiny")
    assert download.wait(30) and "Name or service not known" in (download.error or "")
    assert hub.start_download("org/tiny") is download and fake.calls == 1  # not again within RETRY_AFTER_S
    with pytest.raises(SourceUnavailableError) as error:
        hub.checkpoint_folder("tiny", "org/tiny")
    assert error.value.code == "download_failed" and "Name or service" in error.value.params["reason"]


# ---------------------------------------------------------------- the head finder
def test_the_head_finder_ranks_the_checkpoints_own_weights(listed_tiny):
    source = make_source(config().weight_spec)
    assert isinstance(source, PretrainedSource)
    tokens, maps = source.attention_maps(ANIMAL)
    _, their_tokens, out, _ = their_forward(listed_tiny, ANIMAL, 0)
    assert tokens == tuple(their_tokens) and maps.shape == (LAYERS, HEADS, len(tokens), len(tokens))
    query, key = find_token(tokens, "it"), find_token(tokens, "animal")
    assert (tokens[query], tokens[key]) == ("it", "animal")
    cells = [(layer, head) for layer in range(LAYERS) for head in range(HEADS)]
    expected = sorted(((float(out.attentions[a][0, b, query, key]), a, b) for a, b in cells), key=lambda x: -x[0])
    ranked = rank_heads(maps, query, key)
    assert [(r.layer, r.head) for r in ranked] == [(layer, head) for _, layer, head in expected]
    assert [r.weight for r in ranked] == pytest.approx([weight for weight, _, _ in expected], abs=TOLERANCE)
    assert head_weights(maps, query, key).shape == (LAYERS, HEADS)
    with pytest.raises(IndexError):
        head_weights(maps, len(tokens), 0)


def test_find_token_ignores_case_and_word_piece_marks():
    tokens = ("[CLS]", "the", "cat", "##s", "It", "[SEP]")
    assert (find_token(tokens, "it"), find_token(tokens, "s"), find_token(tokens, "dog")) == (4, 3, None)


def test_unknown_tokens_share_a_token_embedding_but_not_their_input(listed_tiny):
    """What the [UNK] note says: one token embedding for all of them, yet layer 0's input rows differ (BERT adds
    a position embedding), so the model does not see one and the same vector."""
    run = run_attention(config(tokens="zebra the giraffe", layer=0))
    unknown = [i for i, token in enumerate(run.tokens) if token == "[UNK]"]
    assert len(unknown) == 2
    _, tokens, out, _ = their_forward(listed_tiny, "zebra the giraffe", 0)
    assert tuple(tokens) == run.tokens  # both [UNK]: one id, one row of the word embeddings
    x = run.trace.project.x_query[0].cpu()  # (L, D): the page's layer-0 input, on the CPU as BERT's below
    torch.testing.assert_close(x, out.hidden_states[0][0], rtol=0, atol=1e-5)  # BERT's own hidden_states[0]
    assert float((x[unknown[0]] - x[unknown[1]]).abs().max()) > 1e-2  # positions tell them apart
    for lang in ("en", "zh"):
        text = t("notes.unk_tokens", lang=lang)
        assert "one and the same vector" not in text and "同一个向量" not in text
        assert "[UNK]" in text
