"""A learner's own image: the uploader, its decoded file (or its refusal) and the image controls beside the sample."""

from __future__ import annotations

import streamlit as st

from components.controls.choices import reads_image
from components.controls.config_build import error_message
from components.controls.fields import after
from components.controls.keys import PERSIST, Changed, options
from components.i18n import choice_labels, t
from components.image_names import image_name
from mha.config import LIMITS, ConfigError
from mha.vision.upload import ACCEPTED_FORMATS, Upload, read_upload

UPLOAD_KEY = "image_upload"  # the file uploader of a learner's own image (never in the link)
_UPLOAD = "_image_upload"  # the session's decoded upload (an Upload) while the uploader holds its file
_UPLOAD_REFUSED = "_image_upload_refused"  # the ConfigError that refused the uploader's file
#: The uploader's own cap, in MB: LIMITS.image_bytes_max, which the widget states and the browser enforces (with
#: Streamlit's own message); the server checks the file again (decode_image), with the page's translated message.
_UPLOAD_MB = -(-LIMITS.image_bytes_max // 2**20)
_UPLOAD_TYPES = ("png", "jpg", "jpeg")


def read_upload_file() -> None:
    """The uploader's new file decoded (or its refusal kept, to be shown): before the run that follows."""
    state = st.session_state
    state.pop(_UPLOAD, None)
    state.pop(_UPLOAD_REFUSED, None)
    file = state.get(UPLOAD_KEY)
    if file is None:
        return
    try:
        state[_UPLOAD] = read_upload(file.getvalue())
    except ConfigError as error:
        state[_UPLOAD_REFUSED] = error


def current_upload() -> Upload | None:
    """The learner's own image, while the run reads an image and the uploader holds it (its refusal: ``None``)."""
    state = st.session_state
    if not reads_image() or state.get(UPLOAD_KEY) is None:
        return None
    return state.get(_UPLOAD)


def render_image_controls(hidden: frozenset[str], changed: Changed) -> None:
    """The image a run reads: a bundled sample, or the learner's upload (refused with a message, the sample kept)."""
    if "image" in hidden:
        return
    upload = current_upload()
    st.selectbox(
        t("controls.image"),
        options("image"),
        key="image",
        format_func=choice_labels("image", options("image"), image_name),
        disabled=upload is not None,
        help=t("controls.image_help"),
        on_change=after(changed),
        persist_state=PERSIST,
    )
    st.file_uploader(
        t("controls.image_upload"),
        type=_UPLOAD_TYPES,
        key=UPLOAD_KEY,
        on_change=after(changed, read_upload_file),
        max_upload_size=_UPLOAD_MB,
        help=t(
            "controls.image_upload_help",
            formats=" / ".join(ACCEPTED_FORMATS),
            mb=f"{LIMITS.image_bytes_max / 2**20:.0f}",
            pixels=f"{LIMITS.image_pixels_max:,}",
        ),
    )
    refused = st.session_state.get(_UPLOAD_REFUSED)
    if refused is not None and st.session_state.get(UPLOAD_KEY) is not None:
        st.error(error_message(refused))
    st.caption(t("controls.image_upload_shown" if upload is not None else "controls.image_upload_link"))
