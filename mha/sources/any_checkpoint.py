"""A learner's own Hugging Face checkpoint (``hub_id``), only where the server allows it.

With ``ATTN_PLAYGROUND_ANY_CHECKPOINT_MB=N`` set (read at every call), a learner may name any hub
id of a family read here (:func:`~mha.sources.families.supported_types`). Before anything but
metadata is downloaded, :func:`plan` reads the repository's file list with sizes
(``HfApi().model_info(files_metadata=True)``), its ``config.json``, its ``tokenizer_config.json``
and its ``preprocessor_config.json`` (an image checkpoint's), and refuses, each with its own
:class:`SourceUnavailableError` code:

* ``any_off``: the setting is not on (nothing is fetched at all); ``bad_hub_id``: not ``owner/name``;
* ``remote_code``: ``auto_map`` in any of these files (the model, its tokenizer or its image
  processor would need the repository's own Python code; ``trust_remote_code`` is never passed);
* ``not_supported``: a ``model_type`` no family reads; ``too_big``, ``too_many_tokens``: sizes beyond
  the server's limits;
* ``no_safetensors``: no ``model.safetensors`` (or its shards): pickled weights are never loaded;
* ``too_large``: safetensors weights over N MB; ``broken``: no config.json, or none of the files its
  family makes its inputs with (a text checkpoint's tokenizer, an image checkpoint's processor).

Then only the files needed are downloaded (config, tokenizer or processor files, the safetensors weights), with
progress (:func:`mha.sources.hub.start_download`), and the model is loaded with
``use_safetensors=True``. The files in the cache are checked again the same way before every load
(:func:`check_snapshot`), so a cap lowered later holds too. A learner's checkpoints share the
memory bound of the listed ones (:data:`mha.sources.checkpoint.loader.MAX_LOADED`).

``huggingface_hub`` is imported inside the functions that need it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from mha.checkpoints import ANY_CHECKPOINT_ENV, any_checkpoint_cap_mb, is_hub_id
from mha.sources import hub
from mha.sources.base import SourceUnavailableError
from mha.sources.families import checked_sizes, family_for

__all__ = [
    "MB",
    "SETTINGS_FILES",
    "check_allowed",
    "check_repository",
    "check_snapshot",
    "needs_download",
    "plan",
    "start_download",
    "weight_files",
]

MB = 1e6  # the cap is in MB as the hub shows sizes (10^6 bytes)
SINGLE = "model.safetensors"
INDEX = "model.safetensors.index.json"
TOKENIZER_CONFIG = "tokenizer_config.json"
#: Settings files read before the download, besides config.json: each may ask for remote code.
SETTINGS_FILES = (TOKENIZER_CONFIG, hub.PROCESSOR_FILE)


def check_allowed(hub_id: str) -> float:
    """The server's cap in MB for ``hub_id``.

    Raises:
        SourceUnavailableError: ``bad_hub_id`` (not ``owner/name``) or ``any_off`` (the server does not allow it).
    """
    if not is_hub_id(hub_id):
        raise SourceUnavailableError("bad_hub_id", f"{hub_id!r} is not a hub id (owner/name)", name=str(hub_id)[:100])
    cap = any_checkpoint_cap_mb()
    if cap is None:
        raise SourceUnavailableError("any_off", f"{ANY_CHECKPOINT_ENV} is not set: {hub_id} is not loaded", name=hub_id)
    return cap


def weight_files(files: Mapping[str, int | None]) -> dict[str, int | None]:
    """The safetensors weights among a repository's top-level files: ``model.safetensors``, or its index and shards."""
    if SINGLE in files:
        return {SINGLE: files[SINGLE]}
    if INDEX not in files:
        return {}
    shards = {name: size for name, size in files.items() if name.startswith("model-") and name.endswith(".safetensors")}
    return {INDEX: files[INDEX], **shards} if shards else {}


def _refuse_remote_code(
    hub_id: str, config: Mapping[str, object], settings_files: Mapping[str, Mapping[str, object]]
) -> None:
    for where, settings in ((hub.CONFIG_FILE, config), *settings_files.items()):
        if "auto_map" in settings:
            raise SourceUnavailableError(
                "remote_code",
                f"{hub_id}: {where} asks for the repository's own code (auto_map)",
                name=hub_id,
                where=where,
            )


def check_repository(
    hub_id: str,
    files: Mapping[str, int | None],
    config: Mapping[str, object],
    settings_files: Mapping[str, Mapping[str, object]],
    cap_mb: float,
) -> tuple[str, ...]:
    """The files to download for ``hub_id``, or why not (see the module docstring for the codes).

    Args:
        files: the repository's top-level file names and sizes in bytes (``None``: unknown).
        config: its ``config.json``; ``settings_files``: those of :data:`SETTINGS_FILES` it has, by name.
        cap_mb: the server's cap on the safetensors weights, in MB.

    Returns:
        config.json, the tokenizer or processor files present, and the safetensors weights (with the shards' index).

    Raises:
        SourceUnavailableError: ``remote_code``, ``not_supported``, ``too_big`` or ``too_many_tokens``,
            ``no_safetensors``, ``too_large`` or ``broken``, checked in that order.
    """
    _refuse_remote_code(hub_id, config, settings_files)
    family = family_for(hub_id, config)
    checked_sizes(hub_id, config, family)
    weights = weight_files(files)
    if not weights:
        raise SourceUnavailableError("no_safetensors", f"{hub_id}: no model.safetensors", name=hub_id)
    if any(size is None for size in weights.values()):
        reason = "the hub did not give the weights' sizes"
        raise SourceUnavailableError("broken", f"{hub_id}: {reason}", name=hub_id, reason=reason)
    size_mb = sum(size or 0 for size in weights.values()) / MB
    if size_mb > cap_mb:
        raise SourceUnavailableError(
            "too_large",
            f"{hub_id}: {size_mb:.0f} MB of weights, over this server's {cap_mb:g} MB",
            name=hub_id,
            size_mb=f"{size_mb:.0f}",
            cap_mb=f"{cap_mb:g}",
        )
    if not any(name in files for name in family.input_files):
        what = "image processor" if family.reads_image else "tokenizer"
        reason = f"no {what} files ({', '.join(family.input_files)})"
        raise SourceUnavailableError("broken", f"{hub_id}: {reason}", name=hub_id, reason=reason)
    inputs = tuple(name for name in hub.INPUT_PATTERNS if name in files)
    return (hub.CONFIG_FILE, *inputs, *sorted(weights))


def _json_file(hub_id: str, path: Path) -> dict[str, object]:
    try:
        settings = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        reason = f"{path.name}: {str(error)[:160]}"
        raise SourceUnavailableError("broken", f"{hub_id}: {reason}", name=hub_id, reason=reason) from error
    if not isinstance(settings, dict):
        reason = f"{path.name} is not an object"
        raise SourceUnavailableError("broken", f"{hub_id}: {reason}", name=hub_id, reason=reason)
    return settings


def plan(hub_id: str) -> tuple[str, ...]:
    """Read ``hub_id``'s file list and settings from the hub and return the files to download (the network).

    Raises:
        SourceUnavailableError: see :func:`check_allowed` and :func:`check_repository`; ``broken``
            without a config.json.
        Exception: whatever ``huggingface_hub`` raises (no such repository, no network...).
    """
    import huggingface_hub

    cap = check_allowed(hub_id)
    info = huggingface_hub.HfApi().model_info(hub_id, files_metadata=True)
    files = {sibling.rfilename: sibling.size for sibling in info.siblings or ()}
    if hub.CONFIG_FILE not in files:
        reason = "no config.json"
        raise SourceUnavailableError("broken", f"{hub_id}: {reason}", name=hub_id, reason=reason)
    config = _json_file(hub_id, Path(huggingface_hub.hf_hub_download(hub_id, hub.CONFIG_FILE)))
    settings_files = {
        name: _json_file(hub_id, Path(huggingface_hub.hf_hub_download(hub_id, name)))
        for name in SETTINGS_FILES
        if name in files
    }
    return check_repository(hub_id, files, config, settings_files, cap)


def check_snapshot(hub_id: str, folder: Path) -> dict[str, object]:
    """Check the cached files of ``hub_id`` as :func:`plan` checks the hub's (the cap may have changed since).

    Returns:
        Its ``config.json``.

    Raises:
        SourceUnavailableError: see :func:`check_repository`.
    """
    cap = check_allowed(hub_id)
    files = {path.name: path.stat().st_size for path in folder.iterdir() if path.is_file()}
    config = _json_file(hub_id, folder / hub.CONFIG_FILE)
    settings_files = {name: _json_file(hub_id, folder / name) for name in SETTINGS_FILES if name in files}
    check_repository(hub_id, files, config, settings_files, cap)
    return config


def needs_download(hub_id: str) -> bool:
    """An allowed hub id not in the cache yet, on a server that may download (else the source says why not)."""
    try:
        check_allowed(hub_id)
    except SourceUnavailableError:
        return False
    return not hub.is_offline() and hub.cached_snapshot(hub_id) is None


def start_download(hub_id: str) -> hub.Download:
    """Check ``hub_id`` on the hub, then download the files it needs, in a background thread with progress.

    A refusal ends the download without fetching anything; the source then reports it
    (:func:`mha.sources.hub.hub_folder`).

    Raises:
        SourceUnavailableError: ``bad_hub_id`` or ``any_off``, before any thread starts.
    """
    check_allowed(hub_id)
    return hub.start_download(hub_id, plan=plan)
