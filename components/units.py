"""Sizes as people read them; light enough for the main page (no chart library)."""

from __future__ import annotations

__all__ = ["format_bytes"]

_BYTE_UNITS = ("B", "KiB", "MiB", "GiB")


def format_bytes(count: float) -> str:
    """``1536`` -> ``"1.5 KiB"``: powers of 1024, one decimal (whole bytes below 1 KiB)."""
    value, unit = float(count), 0
    while abs(value) >= 1024 and unit < len(_BYTE_UNITS) - 1:
        value /= 1024
        unit += 1
    return f"{value:.0f} B" if unit == 0 else f"{value:.1f} {_BYTE_UNITS[unit]}"
