"""A learner's own hub checkpoint (``hub_id``), with ``huggingface_hub`` replaced by a fake hub (no network):
refused without ``ATTN_PLAYGROUND_ANY_CHECKPOINT_MB`` (nothing fetched), refused for each reason with its
message, and in the allowed case exactly the needed files downloaded and loaded from safetensors.
"""

from __future__ import annotations

import fnmatch
import json
import shutil
from collections import OrderedDict
from pathlib import Path
from types import SimpleNamespace

import pytest
from streamlit.testing.v1 import AppTest

from components.i18n import t
from mha.checkpoints import ANY_CHECKPOINT_ENV, is_hub_id
from mha.config import PRETRAINED, AttentionConfig, ConfigError, WeightSpec
from mha.export import export_basename
from mha.pipeline import run_attention
from mha.sources import SourceUnavailableError, any_checkpoint, hub, make_source, source_sizes
from mha.sources.checkpoint import loader
from mha.sources.families.gpt2 import GPT2Family

HUB_ID = "someone/tiny-gpt2"
NEEDED = ("config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors")
EXTRA = {"pytorch_model.bin": b"pickled", "flax_model.msgpack": b"flax", "README.md": b"# tiny"}


class FakeHub:
    """``HfApi().model_info``, ``hf_hub_download`` and ``snapshot_download`` over a folder standing for a repo.

    ``sizes`` overrides a file's size as the hub reports it; every call is recorded.
    """

    def __init__(self, repo: Path, cache: Path) -> None:
        self.repo, self.cache = repo, cache
        self.sizes: dict[str, int | None] = {}
        self.calls: list[tuple[str, object]] = []
        self.fetched: list[str] = []

    def install(self, monkeypatch) -> FakeHub:
        import huggingface_hub

        monkeypatch.setattr(huggingface_hub, "HfApi", lambda: SimpleNamespace(model_info=self.model_info))
        monkeypatch.setattr(huggingface_hub, "hf_hub_download", self.hf_hub_download)
        monkeypatch.setattr(huggingface_hub, "snapshot_download", self.snapshot_download)
        monkeypatch.delenv("HF_HUB_OFFLINE")
        monkeypatch.setattr(hub, "_DOWNLOADS", {})
        monkeypatch.setattr(loader, "_LOADED", OrderedDict())
        return self

    def model_info(self, repo_id: str, files_metadata: bool = False):
        self.calls.append(("model_info", repo_id))
        siblings = [
            SimpleNamespace(rfilename=path.name, size=self.sizes.get(path.name, path.stat().st_size))
            for path in sorted(self.repo.iterdir())
        ]
        return SimpleNamespace(siblings=siblings)

    def hf_hub_download(self, repo_id: str, filename: str) -> str:
        self.calls.append(("hf_hub_download", filename))
        return str(self.repo / filename)

    def snapshot_download(self, repo_id, allow_patterns=(), local_files_only=False, tqdm_class=None):
        from huggingface_hub.errors import LocalEntryNotFoundError

        if local_files_only:
            if not self.cache.exists():
                raise LocalEntryNotFoundError("not cached")
            return str(self.cache)
        self.calls.append(("snapshot_download", tuple(allow_patterns)))
        files = [p for p in sorted(self.repo.iterdir()) if any(fnmatch.fnmatch(p.name, a) for a in allow_patterns)]
        bar = tqdm_class(total=sum(p.stat().st_size for p in files), unit="B")
        self.cache.mkdir(parents=True)
        for path in files:
            shutil.copy(path, self.cache / path.name)
            self.fetched.append(path.name)
            bar.update(path.stat().st_size)
        bar.close()
        return str(self.cache)


@pytest.fixture
def repo(tiny_gpt2, tmp_path) -> Path:
    """The tiny GPT-2 as a hub repository holds it: with pickled, Flax and README files besides."""
    folder = shutil.copytree(tiny_gpt2, tmp_path / "repo")
    for name, content in EXTRA.items():
        (folder / name).write_bytes(content)
    return folder


@pytest.fixture
def fake(repo, tmp_path, monkeypatch) -> FakeHub:
    return FakeHub(repo, tmp_path / "cache").install(monkeypatch)


def _edit_json(path: Path, **changes: object) -> None:
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def _messages(error: SourceUnavailableError) -> list[str]:
    """The page's message in both languages (the params as the page passes them)."""
    return [t(f"source.{error.code}", lang=lang, **error.params) for lang in ("en", "zh")]


# ---------------------------------------------------------------- without the setting, nothing
def test_without_the_setting_a_hub_id_is_refused_and_nothing_is_fetched(fake, monkeypatch):
    monkeypatch.delenv(ANY_CHECKPOINT_ENV, raising=False)
    with pytest.raises(ConfigError) as error:
        AttentionConfig(weights=PRETRAINED, hub_id=HUB_ID)
    assert (error.value.field, error.value.code, error.value.params) == ("hub_id", "any_off", {"value": HUB_ID})
    for lang in ("en", "zh"):
        assert HUB_ID in t("error.hub_id.any_off", lang=lang, value=HUB_ID)
    for call in (source_sizes, make_source):
        with pytest.raises(SourceUnavailableError) as refused:
            call(WeightSpec(PRETRAINED, hub_id=HUB_ID))
        assert refused.value.code == "any_off" and refused.value.params == {"name": HUB_ID}
    assert all("ATTN_PLAYGROUND_ANY_CHECKPOINT_MB" in message for message in _messages(refused.value))
    assert not any_checkpoint.needs_download(HUB_ID)
    with pytest.raises(SourceUnavailableError):
        any_checkpoint.start_download(HUB_ID)
    for bad in ("0", "-5", "many", "inf", ""):
        monkeypatch.setenv(ANY_CHECKPOINT_ENV, bad)
        assert not any_checkpoint.needs_download(HUB_ID), bad
    assert fake.calls == [] and not fake.cache.exists()


@pytest.mark.parametrize(
    "bad",
    ["/etc/passwd", "../models/x", "https://huggingface.co/org/model", "org", "org/model/extra", "org/--x", "a/b.git"],
)
def test_a_hub_id_must_be_owner_slash_name(bad, monkeypatch):
    monkeypatch.setenv(ANY_CHECKPOINT_ENV, "100")
    assert not is_hub_id(bad)
    with pytest.raises(ConfigError) as error:
        AttentionConfig(weights=PRETRAINED, hub_id=bad)
    assert (error.value.field, error.value.code) == ("hub_id", "bad_form")
    with pytest.raises(SourceUnavailableError) as refused:
        source_sizes(WeightSpec(PRETRAINED, hub_id=bad))
    assert refused.value.code == "bad_hub_id"
    assert is_hub_id("distilbert/distilgpt2") and is_hub_id("uer/gpt2-chinese-cluecorpussmall")


def test_a_hub_id_is_never_read_as_a_server_folder(monkeypatch):
    """``docs/images`` is a folder of this repository: as a learner's hub id it is only ever a hub id."""
    monkeypatch.setenv(ANY_CHECKPOINT_ENV, "100")
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    assert hub.is_local("docs/images")  # a listed location of that name would be read as the folder
    with pytest.raises(SourceUnavailableError) as error:
        source_sizes(WeightSpec(PRETRAINED, hub_id="docs/images"))
    assert error.value.code == "offline"  # the tests' hub is offline: the cache is all there is


# ---------------------------------------------------------------- each refusal, before any download
def _refusal(fake, monkeypatch, cap: str = "100") -> SourceUnavailableError:
    monkeypatch.setenv(ANY_CHECKPOINT_ENV, cap)
    with pytest.raises(SourceUnavailableError) as error:
        any_checkpoint.plan(HUB_ID)
    download = any_checkpoint.start_download(HUB_ID)
    assert download.wait(30) and download.refusal is not None and download.refusal.code == error.value.code
    with pytest.raises(SourceUnavailableError) as reported:  # what the page then says, instead of "downloading"
        source_sizes(WeightSpec(PRETRAINED, hub_id=HUB_ID))
    assert reported.value.code == error.value.code
    assert not [call for call in fake.calls if call[0] == "snapshot_download"] and not fake.cache.exists()
    return error.value


def test_weights_over_the_cap_are_refused_with_their_size(fake, monkeypatch):
    fake.sizes["model.safetensors"] = 2_400_000_000
    error = _refusal(fake, monkeypatch, cap="500")
    assert error.code == "too_large" and error.params == {"name": HUB_ID, "size_mb": "2400", "cap_mb": "500"}
    assert all("2400" in message and "500" in message for message in _messages(error))


def test_a_repository_without_safetensors_is_refused(fake, repo, monkeypatch):
    (repo / "model.safetensors").unlink()  # pytorch_model.bin is still there: never loaded for a learner
    error = _refusal(fake, monkeypatch)
    assert error.code == "no_safetensors" and error.params == {"name": HUB_ID}
    assert all("model.safetensors" in message for message in _messages(error))


def test_an_unsupported_model_type_is_refused(fake, repo, monkeypatch):
    _edit_json(repo / "config.json", model_type="t5")
    error = _refusal(fake, monkeypatch)
    assert error.code == "not_supported" and error.params["supported"] == "bert, gpt2, llama, qwen2, vit, deit"
    assert all("t5" in message for message in _messages(error))


@pytest.mark.parametrize("where", ["config.json", "tokenizer_config.json"])
def test_anything_that_needs_remote_code_is_refused(fake, repo, monkeypatch, where):
    _edit_json(repo / where, auto_map={"AutoModel": "modeling_mine.MyModel"})
    error = _refusal(fake, monkeypatch)
    assert error.code == "remote_code" and error.params == {"name": HUB_ID, "where": where}
    assert all(where in message for message in _messages(error))


def test_sizes_beyond_the_servers_limits_are_refused_before_any_download(fake, repo, monkeypatch):
    _edit_json(repo / "config.json", n_embd=4096, n_head=32)
    assert _refusal(fake, monkeypatch).code == "too_big"


# ---------------------------------------------------------------- allowed: exactly the needed files
def test_an_allowed_hub_id_downloads_exactly_the_needed_files_and_runs(fake, monkeypatch):
    monkeypatch.setenv(ANY_CHECKPOINT_ENV, "1")  # the tiny weights are far below 1 MB
    loaded_safetensors_only = []
    real_load = GPT2Family.load
    monkeypatch.setattr(
        GPT2Family,
        "load",
        lambda self, folder, only: loaded_safetensors_only.append(only) or real_load(self, folder, only),
    )
    assert any_checkpoint.needs_download(HUB_ID)
    download = any_checkpoint.start_download(HUB_ID)
    assert download.wait(30) and download.error is None and download.fraction == 1.0
    assert sorted(fake.fetched) == sorted(NEEDED)  # no pytorch_model.bin, Flax weights or README
    assert [call for call in fake.calls if call[0] == "snapshot_download"] == [("snapshot_download", NEEDED)]
    assert not any_checkpoint.needs_download(HUB_ID)
    config = AttentionConfig(weights=PRETRAINED, hub_id=HUB_ID, tokens="the cat sat on the mat", layer=1)
    assert config.weight_spec == WeightSpec(PRETRAINED, hub_id=HUB_ID) and config.pretrained_name == HUB_ID
    source = make_source(config.weight_spec)
    run = run_attention(config, source)
    check = source.compare(run.config, run.trace.weights, run.trace.output, run.mask)
    assert check.passed and check.checkpoint == HUB_ID and loaded_safetensors_only == [True]
    assert export_basename(run.config) == "attention_someone--tiny-gpt2_layer1_causal"
    monkeypatch.setenv(ANY_CHECKPOINT_ENV, "0.01")  # the cap lowered later: the cached files are checked again
    with pytest.raises(SourceUnavailableError) as error:
        source_sizes(config.weight_spec)
    assert error.value.code == "too_large"


def test_a_learners_checkpoint_shares_the_memory_bound_with_the_listed_ones(fake, listed_gpt2, monkeypatch):
    monkeypatch.setenv(ANY_CHECKPOINT_ENV, "1")
    assert any_checkpoint.start_download(HUB_ID).wait(30)
    for listed in ("gpt2", "tiny"):
        loader.load_checkpoint(listed)
    make_source(WeightSpec(PRETRAINED, hub_id=HUB_ID))
    assert [name for name, _ in loader._LOADED] == ["tiny", HUB_ID]
    assert loader.MAX_LOADED == 2


def test_the_page_shows_the_download_and_then_the_checkpoint_runs(fake, monkeypatch):
    """What the ``hub_id`` widget will call: ``ensure_hub_downloaded`` shows the progress and leaves the files."""
    monkeypatch.setenv(ANY_CHECKPOINT_ENV, "1")

    def script():
        from components.checkpoints import ensure_hub_downloaded

        ensure_hub_downloaded("someone/tiny-gpt2")

    at = AppTest.from_function(script, default_timeout=60).run()
    assert not at.exception
    assert sorted(fake.fetched) == sorted(NEEDED)
    assert source_sizes(WeightSpec(PRETRAINED, hub_id=HUB_ID)).num_layers == 3
