"""Where a listed checkpoint's files are: a folder on the server, or the Hugging Face cache.

A location from the server's list (:mod:`mha.checkpoints`) is a local folder when it is
an absolute path, starts with ``.`` or ``~``, or names an existing folder; otherwise it is
a hub id. Reading a checkpoint's files never touches the network: a hub id is read from
the cache only. The one way a file arrives from the hub is :func:`start_download`, a
download in a background thread that reports its progress (the page shows it) and is
shared by every session asking for the same checkpoint. ``HF_HUB_OFFLINE=1`` (read at
call time) turns downloads off. A learner's own hub id (:mod:`mha.sources.any_checkpoint`) is
always a hub id, never a folder, and its download first checks the repository (a planner that
may refuse it: the refusal is then what the page reports).

``huggingface_hub`` is imported inside the functions that need it: the default page
(random weights) never imports it.
"""

from __future__ import annotations

import io
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mha.sources.base import SourceUnavailableError

__all__ = [
    "CONFIG_FILE",
    "DOWNLOAD_PATTERNS",
    "INPUT_PATTERNS",
    "PROCESSOR_FILE",
    "TOKENIZER_PATTERNS",
    "Download",
    "Planner",
    "cached_snapshot",
    "checkpoint_folder",
    "config_in",
    "download_failure",
    "hub_folder",
    "is_local",
    "is_offline",
    "needs_download",
    "read_config",
    "start_download",
]

CONFIG_FILE = "config.json"
#: An image checkpoint's image processor settings (ViT: resize, rescale, normalise).
PROCESSOR_FILE = "preprocessor_config.json"
#: The tokenizer files a checkpoint may have (WordPiece: vocab.txt; GPT-2's byte-level BPE: vocab.json, merges.txt).
TOKENIZER_PATTERNS = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
)
#: The files that make a checkpoint's inputs: a text checkpoint's tokenizer, an image checkpoint's processor.
INPUT_PATTERNS = (*TOKENIZER_PATTERNS, PROCESSOR_FILE)
#: The files a listed checkpoint needs here (the hub repo may hold ONNX, TF, Flax copies: never fetched).
DOWNLOAD_PATTERNS = (
    "config.json",
    "model.safetensors",
    "model.safetensors.index.json",
    "model-*.safetensors",
    "pytorch_model.bin",
    *INPUT_PATTERNS,
)
_WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")
_INPUT_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", PROCESSOR_FILE)  # a tokenizer's words, or a processor
RETRY_AFTER_S = 60.0  # a failed download is tried again only after this long (each try can take ~25 s offline)
_TRUE = frozenset({"1", "true", "yes", "on"})


def is_local(location: str) -> bool:
    """Whether ``location`` names a folder on the server rather than a hub id."""
    return location.startswith(("/", ".", "~")) or Path(location).expanduser().is_dir()


def is_offline() -> bool:
    """``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) is set: nothing is downloaded."""
    flags = (os.environ.get("HF_HUB_OFFLINE", ""), os.environ.get("TRANSFORMERS_OFFLINE", ""))
    return any(flag.strip().lower() in _TRUE for flag in flags)


def _complete(folder: Path) -> bool:
    """The folder holds a config, weights and a tokenizer or an image processor."""
    return (
        (folder / CONFIG_FILE).is_file()
        and any((folder / name).is_file() for name in _WEIGHT_FILES)
        and any((folder / name).is_file() for name in _INPUT_FILES)
    )


def cached_snapshot(repo_id: str) -> Path | None:
    """The cache's complete snapshot of ``repo_id``, or ``None`` (never touches the network)."""
    import huggingface_hub
    from huggingface_hub.errors import HFValidationError

    try:
        folder = Path(
            huggingface_hub.snapshot_download(repo_id, allow_patterns=list(DOWNLOAD_PATTERNS), local_files_only=True)
        )
    except (OSError, HFValidationError, ValueError):  # not cached (LocalEntryNotFoundError is an OSError), bad id
        return None
    return folder if _complete(folder) else None


def needs_download(location: str) -> bool:
    """A hub id whose files are not all in the cache yet, on a server that may download."""
    return not is_local(location) and not is_offline() and cached_snapshot(location) is None


def checkpoint_folder(name: str, location: str) -> Path:
    """The folder holding ``name``'s config, weights and tokenizer (or image processor).

    Raises:
        SourceUnavailableError: ``missing`` (a local folder without a checkpoint in it), or
            see :func:`hub_folder`.
    """
    if is_local(location):
        folder = Path(location).expanduser()
        if not _complete(folder):
            raise SourceUnavailableError(
                "missing", f"{name}: no checkpoint (config, weights, tokenizer or processor) in {location}", name=name
            )
        return folder
    return hub_folder(name, location)


def hub_folder(name: str, repo_id: str) -> Path:
    """The cache's snapshot of the hub id ``repo_id`` (never a server folder, whatever the id looks like).

    Raises:
        SourceUnavailableError: ``offline`` (not cached on an offline server), ``download_failed``
            (the download did not work; ``reason`` says why), the refusal of the download's
            planner (a learner's hub id: ``too_large``...) or ``not_downloaded``.
    """
    folder = cached_snapshot(repo_id)
    if folder is not None:
        return folder
    if is_offline():
        raise SourceUnavailableError(
            "offline", f"{name} ({repo_id}) is not cached and HF_HUB_OFFLINE is set", name=name, location=repo_id
        )
    refusal = _recent_refusal(repo_id)
    if refusal is not None:
        raise refusal
    failure = download_failure(repo_id)
    if failure is not None:
        raise SourceUnavailableError(
            "download_failed", f"{name} ({repo_id}): {failure}", name=name, location=repo_id, reason=failure
        )
    raise SourceUnavailableError("not_downloaded", f"{name} ({repo_id}) is not downloaded yet", name=name)


def read_config(name: str, location: str) -> dict[str, object]:
    """The checkpoint's ``config.json`` as a dict (see :func:`checkpoint_folder` for the errors)."""
    return config_in(name, checkpoint_folder(name, location))


def config_in(name: str, folder: Path) -> dict[str, object]:
    """``folder``'s ``config.json`` as a dict.

    Raises:
        SourceUnavailableError: ``broken``, when it is not a JSON object.
    """
    path = folder / CONFIG_FILE
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise SourceUnavailableError("broken", f"{name}: {error}", name=name, reason=str(error)[:200]) from error
    if not isinstance(config, dict):
        raise SourceUnavailableError("broken", f"{name}: config.json is not an object", name=name, reason="config")
    return config


# ---------------------------------------------------------------- downloads, with progress
@dataclass
class Download:
    """One download of a hub checkpoint, running in a background thread; the page polls it."""

    location: str
    done_bytes: int = 0
    total_bytes: int = 0
    error: str | None = None
    refusal: SourceUnavailableError | None = None  # the planner refused the repository: nothing was downloaded
    finished_at: float | None = None
    _finished: threading.Event = field(default_factory=threading.Event)

    @property
    def running(self) -> bool:
        """The download has not ended yet."""
        return not self._finished.is_set()

    def wait(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds; ``True`` once the download has ended (done or failed)."""
        return self._finished.wait(timeout)

    @property
    def fraction(self) -> float:
        """Bytes done / bytes known so far, 0..1 (0 while the size is unknown)."""
        return min(self.done_bytes / self.total_bytes, 1.0) if self.total_bytes else 0.0

    def report(self, done: float, total: float | None) -> None:
        """A progress bar of the download moved: keep the furthest point reached."""
        if total:
            self.total_bytes = max(self.total_bytes, int(total))
        self.done_bytes = max(self.done_bytes, int(done))

    def finish(self, error: str | None) -> None:
        """Mark the download ended, with the error that ended it (``None``: done)."""
        self.error, self.finished_at = error, time.monotonic()
        self._finished.set()


_DOWNLOADS: dict[str, Download] = {}
_DOWNLOADS_LOCK = threading.Lock()


def _progress_class(download: Download) -> type:
    """A ``tqdm`` class for ``huggingface_hub`` that reports byte counts to ``download`` instead of printing."""
    from tqdm.std import tqdm

    class _Reporting(tqdm):  # type: ignore[misc]  # tqdm is untyped
        def __init__(self, *args: object, **kwargs: object) -> None:
            kwargs.update(file=io.StringIO(), mininterval=0.2)  # nothing is printed: display() reports instead
            super().__init__(*args, **kwargs)

        def display(self, msg: str | None = None, pos: int | None = None) -> bool:
            if self.unit == "B":
                download.report(self.n, self.total)
            return True

        def close(self) -> None:
            if self.unit == "B" and not self.disable:
                download.report(self.n, self.total)
            super().close()

    return _Reporting


#: Checks a repository before its download and returns the file patterns to fetch, or raises a refusal.
Planner = Callable[[str], tuple[str, ...]]


def _plan_listed(location: str) -> tuple[str, ...]:
    return DOWNLOAD_PATTERNS


def _fetch(download: Download, fetch: Callable[..., object], plan: Planner) -> None:
    try:
        patterns = plan(download.location)
        fetch(download.location, allow_patterns=list(patterns), tqdm_class=_progress_class(download))
    except SourceUnavailableError as refusal:  # the planner said no: nothing was fetched
        download.refusal = refusal
        download.finish(str(refusal))
        return
    except Exception as error:  # any failure (network, disk, bad id) is reported on the page
        download.finish(f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:200])
        return
    download.finish(None)


def start_download(location: str, plan: Planner = _plan_listed) -> Download:
    """Start downloading the hub id ``location`` into the cache, or join the download already running.

    Args:
        plan: run first, in the download's thread: the file patterns to fetch (a listed
            checkpoint's: :data:`DOWNLOAD_PATTERNS`), or a refusal (``SourceUnavailableError``).

    A failed or refused download is started again only :data:`RETRY_AFTER_S` seconds after it ended.
    """
    import huggingface_hub

    with _DOWNLOADS_LOCK:
        current = _DOWNLOADS.get(location)
        recent_failure = (
            current is not None
            and current.error is not None
            and time.monotonic() - (current.finished_at or 0.0) < RETRY_AFTER_S
        )
        if current is not None and (current.running or recent_failure):
            return current
        download = Download(location)
        _DOWNLOADS[location] = download
    threading.Thread(
        target=_fetch,
        args=(download, huggingface_hub.snapshot_download, plan),
        name=f"download {location}",
        daemon=True,
    ).start()
    return download


def _recent_download(location: str) -> Download | None:
    """The last download of ``location`` when it failed too recently to try again, else ``None``."""
    with _DOWNLOADS_LOCK:
        download = _DOWNLOADS.get(location)
    if download is None or download.running or download.error is None:
        return None
    if time.monotonic() - (download.finished_at or 0.0) >= RETRY_AFTER_S:
        return None
    return download


def _recent_refusal(location: str) -> SourceUnavailableError | None:
    download = _recent_download(location)
    return None if download is None else download.refusal


def download_failure(location: str) -> str | None:
    """Why the last download of ``location`` failed, while it is too recent to try again; else ``None``."""
    download = _recent_download(location)
    return None if download is None else download.error
