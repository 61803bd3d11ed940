"""Choosing where the engine runs: cuda, then mps, then cpu.

One seam for the test suite: where ``ATTN_PLAYGROUND_TEST_DEVICE`` (``cuda`` | ``mps`` | ``cpu``) is set,
``"auto"`` means that device instead of the best one here, in this process and in any it starts (the browser
tests' server). The suite's ``tests/conftest.py`` refuses to start when the named device is not available; the
app itself treats it as an explicit choice (the CPU and a reason where the device is missing).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch

__all__ = ["DEVICE_CHOICES", "TEST_DEVICE_ENV", "DeviceChoice", "available_devices", "resolve_device"]

DEVICE_CHOICES = ("auto", "cpu", "cuda", "mps")
TEST_DEVICE_ENV = "ATTN_PLAYGROUND_TEST_DEVICE"  # the device "auto" means while the test suite runs


@dataclass(frozen=True)
class DeviceChoice:
    """The device actually used, and why it differs from the request (``None`` when it does not)."""

    device: torch.device
    fallback_reason: str | None = None


def _mps_available() -> bool:
    return bool(getattr(torch.backends, "mps", None)) and torch.backends.mps.is_available()


def available_devices() -> list[str]:
    """The device names usable here, best first; always ends with ``"cpu"``."""
    names = []
    if torch.cuda.is_available():
        names.append("cuda")
    if _mps_available():
        names.append("mps")
    return [*names, "cpu"]


def resolve_device(choice: str = "auto") -> DeviceChoice:
    """Map a choice from :data:`DEVICE_CHOICES` to a device.

    ``"auto"`` takes the best available one, or the device named by :data:`TEST_DEVICE_ENV` where
    that is set (then resolved as that explicit choice). An explicit choice that is not available
    here (or not known) falls back to the CPU, with a reason the UI can show.
    """
    available = available_devices()
    if choice == "auto":
        pinned = os.environ.get(TEST_DEVICE_ENV, "").strip()
        if pinned and pinned != "auto":
            return resolve_device(pinned)
        return DeviceChoice(torch.device(available[0]))
    if choice in available:
        return DeviceChoice(torch.device(choice))
    if choice not in DEVICE_CHOICES:
        reason = f"unknown device {choice!r} (choose one of {', '.join(DEVICE_CHOICES)}); using cpu"
    else:
        reason = f"{choice} is not available on this machine; using cpu"
    return DeviceChoice(torch.device("cpu"), reason)
