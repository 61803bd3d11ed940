"""Tests never touch the network: a socket may connect to this machine only, and only local names resolve.

:func:`install` (called by ``conftest.py`` before any test module is imported) wraps
``socket.socket.connect`` / ``connect_ex`` and ``socket.getaddrinfo``: an internet socket whose
address is not a loopback one, or a host name other than ``localhost``, raises
:class:`NetworkAccessError` before a packet leaves (name lookups included). Unix sockets, loopback
servers (Streamlit, a local cluster, Chromium's DevTools) and IP literals given to ``getaddrinfo``
(a server binding ``0.0.0.0``) pass. Child processes are not covered by the wrapper; the Hugging Face
hub, the one library that would download, is kept offline for them by ``HF_HUB_OFFLINE`` (conftest).
"""

from __future__ import annotations

import functools
import ipaddress
import socket

__all__ = ["NetworkAccessError", "install", "installed"]

_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
_INTERNET = (socket.AF_INET, socket.AF_INET6)


class NetworkAccessError(OSError):
    """A test tried to reach a machine other than this one."""


def _host_text(host: object) -> str:
    return host.decode() if isinstance(host, bytes) else str(host)


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])  # an IPv6 literal may carry a %zone
    except ValueError:
        return None


def _is_loopback(host: object) -> bool:
    text = _host_text(host)
    ip = _ip(text)
    return text.lower() in _LOCAL_NAMES if ip is None else ip.is_loopback


def _guard_connect(connect):
    @functools.wraps(connect)
    def guarded(self: socket.socket, address, *args, **kwargs):
        if self.family in _INTERNET and not _is_loopback(address[0]):
            raise NetworkAccessError(f"tests never touch the network: a connection to {address!r} was refused")
        return connect(self, address, *args, **kwargs)

    guarded.network_guard = True  # type: ignore[attr-defined]
    return guarded


def _guard_getaddrinfo(getaddrinfo):
    @functools.wraps(getaddrinfo)
    def guarded(host, *args, **kwargs):
        if host not in (None, "", b"") and _ip(_host_text(host)) is None and not _is_loopback(host):
            raise NetworkAccessError(f"tests never touch the network: looking up {host!r} was refused")
        return getaddrinfo(host, *args, **kwargs)

    guarded.network_guard = True  # type: ignore[attr-defined]
    return guarded


def installed() -> bool:
    """Whether this process's sockets are guarded."""
    return all(
        getattr(function, "network_guard", False)
        for function in (socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo)
    )


def install() -> None:
    """Guard this process's sockets (each function once: installing again changes nothing)."""
    for name in ("connect", "connect_ex"):
        if not getattr(getattr(socket.socket, name), "network_guard", False):
            setattr(socket.socket, name, _guard_connect(getattr(socket.socket, name)))
    if not getattr(socket.getaddrinfo, "network_guard", False):
        socket.getaddrinfo = _guard_getaddrinfo(socket.getaddrinfo)
