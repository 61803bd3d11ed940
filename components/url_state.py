"""The session's URL: read what a link asks for, write what the page shows. The one place that does.

The page writes every value it shows into the query string, so the link always
reproduces the page. When reading, only values that differ from what this session
last wrote count (on the first run: all of them): a link opened or edited by hand is
applied, and the session's own writes are never read back as new requests.

Each change of ``st.query_params`` is a message that the browser turns into an entry of its
history (and a re-render of the page). A run's writes therefore go out together: inside
:func:`one_history_entry`, :func:`write_link` only gathers them, and they are sent as one
change when the block ends; outside it, each call is one change.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

import streamlit as st

__all__ = ["changed_in_link", "link_value", "link_values", "one_history_entry", "write_link"]

_WRITTEN = "_url_written"  # session key: the query values this session last wrote
# The values written inside one_history_entry and not sent yet; a run's own (each run has its thread).
_gathered: ContextVar[dict[str, str | None] | None] = ContextVar("link_writes_gathered", default=None)


def link_value(name: str) -> str | None:
    """The link's raw value of ``name`` as it stands now (whoever wrote it), or ``None`` when it has none."""
    return st.query_params.get(name)


def link_values() -> dict[str, str]:
    """Every value the link holds now, raw strings by name."""
    return st.query_params.to_dict()


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
            written.pop(name, None)
        else:
            written[name] = value
    st.session_state[_WRITTEN] = written
    gathered = _gathered.get()
    if gathered is None:
        _send(values)
    else:
        gathered.update(values)


@contextmanager
def one_history_entry() -> Iterator[None]:
    """Send the link's writes made inside the block as one change of the URL (one browser history entry)."""
    gathered: dict[str, str | None] = {}
    token = _gathered.set(gathered)
    try:
        yield
    finally:
        _gathered.reset(token)
        _send(gathered)


def _send(values: Mapping[str, str | None]) -> None:
    """Apply ``values`` to ``st.query_params`` in one message, or none when the link already holds them."""
    current = st.query_params.to_dict()
    changed = {name: value for name, value in values.items() if value is not None and current.get(name) != value}
    removed = {name for name, value in values.items() if value is None and name in current}
    if removed:
        kept = {name: value for name, value in current.items() if name not in removed}
        st.query_params.from_dict({**kept, **changed})
    elif changed:
        st.query_params.update(changed)
