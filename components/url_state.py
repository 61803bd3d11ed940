"""The session's URL: read what a link asks for, write what the page shows. The one place that does.

The page writes every value it shows into the query string, so the link always
reproduces the page. When reading, only values that differ from what this session
last wrote count (on the first run: all of them): a link opened or edited by hand is
applied, and the session's own writes are never read back as new requests.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import streamlit as st

__all__ = ["changed_in_link", "write_link"]

_WRITTEN = "_url_written"  # session key: the query values this session last wrote


def changed_in_link(names: Collection[str]) -> dict[str, str]:
    """The query values among ``names`` that this session did not write itself (raw strings)."""
    written = st.session_state.get(_WRITTEN, {})
    incoming = {name: value for name, value in st.query_params.to_dict().items() if name in names}
    return {name: value for name, value in incoming.items() if written.get(name) != value}


def write_link(values: Mapping[str, str | None]) -> None:
    """Write query values (``None`` removes the name) and remember them as this session's own."""
    written = dict(st.session_state.get(_WRITTEN, {}))
    for name, value in values.items():
        if value is None:
            st.query_params.pop(name, None)
            written.pop(name, None)
        else:
            if st.query_params.get(name) != value:
                st.query_params[name] = value
            written[name] = value
    st.session_state[_WRITTEN] = written
