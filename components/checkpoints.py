"""The server's checkpoints in the sidebar: a checkpoint's first download (a listed one, or a learner's own
hub id where the server allows it), with its progress on the page, and buttons that open the tutorials'
examples in a real model with the head finder on their pair.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from components.i18n import t
from components.safe_text import md_escape
from mha.checkpoints import checkpoint_location, checkpoint_names, chinese_checkpoint
from mha.config import PRETRAINED
from mha.sources import any_checkpoint, hub

__all__ = ["FINDER_REQUEST", "PAIRS", "ensure_downloaded", "ensure_hub_downloaded", "render_example_buttons"]

#: Session key: a (query, key) pair of token texts the head finder should show next.
FINDER_REQUEST = "_finder_request"
#: Example name -> the (query, key) pair of the tutorials: "it" looks at "animal", 他 at 小明.
PAIRS = {"animal": ("it", "animal"), "xiaoming": ("他", "小")}
_POLL_S = 0.25
_MB = 1e6


def ensure_downloaded(checkpoint: str) -> None:
    """Download a listed hub checkpoint the first time it is asked for, showing the progress.

    Nothing happens for a local folder, a cached checkpoint, an offline server or a name off
    the list (which is refused elsewhere). Every session asking meanwhile joins the same
    download; a failure is reported by the weight source's message.
    """
    if checkpoint not in checkpoint_names():
        return
    location = checkpoint_location(checkpoint)
    if not hub.needs_download(location):
        return
    _show_progress(hub.start_download(location), md_escape(checkpoint))


def ensure_hub_downloaded(hub_id: str) -> None:
    """Check a learner's own hub id on the hub and download what it needs, showing the progress.

    Nothing happens where the server does not allow one (``ATTN_PLAYGROUND_ANY_CHECKPOINT_MB``
    unset: nothing is fetched), for an id that is not ``owner/name``, a cached one or on an offline
    server. A refusal (too large, no safetensors, an unsupported type, remote code) or a failure
    is reported by the weight source's message (``source.<code>``), as for a listed checkpoint.
    """
    if not any_checkpoint.needs_download(hub_id):
        return
    _show_progress(any_checkpoint.start_download(hub_id), md_escape(hub_id))


def _show_progress(download: hub.Download, name: str) -> None:
    """A progress bar that follows ``download`` until it ends (every session asking shares the download)."""
    bar = st.progress(0.0, text=t("pretrained.connecting", name=name))
    while not download.wait(_POLL_S):
        if download.total_bytes:
            done, total = f"{download.done_bytes / _MB:.1f}", f"{download.total_bytes / _MB:.1f}"
            bar.progress(download.fraction, text=t("pretrained.downloading", name=name, done=done, total=total))
    bar.empty()


def _open_example(checkpoint: str, text: str, pair: tuple[str, str]) -> None:
    state = st.session_state
    state.update(weights=PRETRAINED, checkpoint=checkpoint, hub_id="", tokens=text, mask_type="none")
    state[FINDER_REQUEST] = pair


def render_example_buttons(container: st.delta_generator.DeltaGenerator, examples: Mapping[str, str]) -> None:
    """Under the example sentences: open "it → animal" (and 他 → 小明 where a Chinese checkpoint is listed).

    Args:
        container: where to draw (the sidebar).
        examples: example name -> its sentence (the page's example buttons' texts).
    """
    names = checkpoint_names()
    chinese = chinese_checkpoint(names)
    english = next((name for name in names if name != chinese), None)
    targets = {"animal": english, "xiaoming": chinese}
    shown = {example: name for example, name in targets.items() if name is not None and example in examples}
    if not shown:
        return
    container.caption(t("example.pretrained_note"))
    row = container.container(horizontal=True, gap="small")
    for example, name in shown.items():
        row.button(
            t(f"example.pretrained_{example}"),
            key=f"example_pretrained_{example}",
            on_click=_open_example,
            args=(name, examples[example], PAIRS[example]),
        )
