"""An accelerator out of memory: recognised, named (the work's size and the device), then retried on the CPU.

The heavy work (a training, a checkpoint's own forward, a generation) runs on the run's device. Where that device
is an accelerator and runs out of memory (``torch.cuda.OutOfMemoryError``; mps raises a ``RuntimeError`` "MPS
backend out of memory"), :func:`on_device_or_cpu` frees what the failed attempt held and does the work again on the
CPU, returning an :class:`OutOfMemory` that says what ran out where, for the page's message. The CPU's own
out-of-memory is not caught: there is nowhere left to go.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

import torch

__all__ = ["CPU", "OutOfMemory", "Placed", "is_out_of_memory", "megabytes", "on_device_or_cpu", "release"]

CPU = torch.device("cpu")
_T = TypeVar("_T")


@dataclass(frozen=True)
class OutOfMemory:
    """What ran out of memory where: ``device`` (``"cuda"``, ``"mps"``) and ``size``, the work's size as the values
    of its page message (``{"checkpoint": "gpt2", "parameters": "124,439,808", "megabytes": "475"}``: numbers and
    names, the words are the message's)."""

    device: str
    size: Mapping[str, object]


@dataclass(frozen=True)
class Placed(Generic[_T]):
    """A result and where it was computed: ``device`` is the device's type (``"cuda"``, ``"mps"``, ``"cpu"``);
    ``out_of_memory`` says what ran out where, when the work ran on the CPU because the run's device ran out."""

    value: _T
    device: str
    out_of_memory: OutOfMemory | None = None


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` is an accelerator's out of memory (cuda's ``OutOfMemoryError``, mps's ``RuntimeError``)."""
    if isinstance(error, torch.cuda.OutOfMemoryError):
        return True
    return isinstance(error, RuntimeError) and "out of memory" in str(error).lower()


def megabytes(count: int, bytes_each: int = 4) -> str:
    """``count`` numbers of ``bytes_each`` bytes in MiB (2**20 bytes), for a message (``"475"``)."""
    return f"{count * bytes_each / 2**20:,.0f}"


def release(device: torch.device) -> None:
    """Give the allocator's cached blocks on ``device`` back after a failed attempt (nothing to do on the CPU)."""
    gc.collect()  # the failed attempt's tensors, still referenced from its traceback's frames until now
    if device.type == "cuda" and torch.cuda.is_available():
        torch.cuda.empty_cache()
    elif device.type == "mps" and getattr(torch, "mps", None) is not None and torch.backends.mps.is_available():
        torch.mps.empty_cache()


def on_device_or_cpu(
    work: Callable[[torch.device], _T],
    device: torch.device,
    size: Callable[[], Mapping[str, object]],
    forget: Callable[[torch.device], None] | None = None,
) -> Placed[_T]:
    """``work(device)``; where an accelerator runs out of memory, ``work`` again on the CPU.

    Args:
        work: the computation, given the device to run on.
        device: the run's device.
        size: the work's size for the message (called only on an out of memory).
        forget: called with ``device`` on an out of memory, before the retry: drops what the work keeps there (a
            checkpoint's copy on the device), so the memory goes back to the other runs.

    Returns:
        The result and where it ran: on ``device``, or on the CPU with the :class:`OutOfMemory` when ``device`` ran
        out of memory.

    Raises:
        Whatever ``work`` raises but an accelerator's out of memory (a CPU's too).
    """
    try:
        return Placed(work(device), device.type)
    except Exception as error:
        if device.type == "cpu" or not is_out_of_memory(error):
            raise
        failed = OutOfMemory(device.type, size())
    if forget is not None:
        forget(device)
    release(device)  # outside the handler: the traceback no longer holds the attempt's tensors
    return Placed(work(CPU), CPU.type, failed)
