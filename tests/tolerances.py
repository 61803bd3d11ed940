"""Comparing numbers computed twice: the page's and a test's, or two runs of the same thing.

Two computations of the same float32 numbers agree only to their last few bits: the math library picks its
kernels, and with them the order of every sum, by thread count and memory alignment, so the same inputs can
give results one ulp apart from one call to the next. A test compares two computations at a tolerance stated
here, and keeps bit-equality for the same bytes (a payload against the array it was made from, a copy, a view,
the draws of one seed).

* :data:`FLOAT32`: engine numbers computed twice.
* :func:`assert_shows`: a chart's values against the engine's, to the four decimals the page shows.
* :func:`assert_same_charts`, :func:`assert_same_texts`: two pages that show the same thing.
* :func:`printed_forms`, :func:`printed_numbers`: the numbers a page prints in its text.
* :func:`assert_same_training`: two trainings with the same arguments.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields
from decimal import Decimal

import numpy as np
import pytest
import torch

from components.heatmap import VALUE_DECIMALS, Figure
from components.i18n import t

#: Engine numbers (float32) computed twice: PyTorch's own float32 defaults of ``torch.testing.assert_close``, about
#: 20 ulps relative, and 1e-5 absolute for values near 0 (a sum taken in another order keeps its terms' rounding).
FLOAT32 = {"rtol": 1.3e-6, "atol": 1e-5}
#: A chart's value against the engine's, computed again by the test: the payload holds the page's value rounded to
#: the tooltip's four decimals (``heatmap.VALUE_DECIMALS``), half a unit of the fourth decimal from the page's
#: value, which is within FLOAT32 of the test's.
SHOWN_ATOL = 0.5 * 10.0**-VALUE_DECIMALS + FLOAT32["atol"]
#: Two values shown with four decimals (two charts', two rows of a table), each rounded from its own computation: a
#: last-bit difference can send them to neighbouring steps of the fourth decimal, one unit apart.
SHOWN_TWICE_ATOL = 10.0**-VALUE_DECIMALS + FLOAT32["atol"]
#: A colour scale's limit is rounded up at its second significant digit (``heatmap.symmetric_limit``): two
#: computations a last bit apart can land on neighbouring steps, a tenth of the limit apart at most.
SCALE_RTOL = 0.1

#: A number as a page prints it: ``3``, ``-0.0247``, ``−1.5`` (a tooltip's minus sign), ``2.4e-07``.
_NUMBER = r"[-+−]?\d+(?:\.\d+)?(?:e[-+]?\d+)?"
_NUMBERS = re.compile(_NUMBER)


def _float(printed: str) -> float:
    return float(printed.replace("−", "-"))


def _last_digit(printed: str) -> float:
    """One unit of the last digit ``printed`` shows: 1e-4 for ``0.2887``, 1e-9 for ``2.40e-07``."""
    return 10.0 ** Decimal(printed.replace("−", "-")).as_tuple().exponent


def _float32_spread(value: float) -> float:
    return FLOAT32["atol"] + FLOAT32["rtol"] * abs(value)


def assert_shows(shown: np.ndarray, computed: np.ndarray, err_msg: str = "") -> None:
    """A chart's values (decoded, ``heatmap.decode``) are ``computed`` (the engine's, computed again by the test) to
    the four decimals the page shows (:data:`SHOWN_ATOL`); ``-inf`` exactly where ``computed`` has it."""
    computed = np.asarray(computed, np.float64)
    np.testing.assert_allclose(shown, computed, rtol=FLOAT32["rtol"], atol=SHOWN_ATOL, err_msg=err_msg)


def assert_same_charts(first: Sequence[Figure], second: Sequence[Figure]) -> None:
    """Two pages' charts (decoded) show the same: every word, label, mask and layout alike, and the values of two
    computations to the four decimals a chart holds (:data:`SHOWN_TWICE_ATOL`; the scales' limits
    :data:`SCALE_RTOL`)."""
    assert len(first) == len(second), (len(first), len(second))
    for index, (ours, theirs) in enumerate(zip(first, second, strict=True)):
        for field in fields(Figure):
            mine, other = getattr(ours, field.name), getattr(theirs, field.name)
            where = f"chart {index}, {field.name}"
            if field.name == "panels":
                assert len(mine) == len(other), where
                for panel, same in zip(mine, other, strict=True):
                    assert (panel.title, panel.scale) == (same.title, same.scale), where
                    np.testing.assert_array_equal(panel.masked, same.masked, err_msg=where)  # bools: exact
                    np.testing.assert_allclose(
                        panel.values, same.values, rtol=FLOAT32["rtol"], atol=SHOWN_TWICE_ATOL, err_msg=where
                    )
            elif field.name == "scales":
                assert [(s.scheme, s.title) for s in mine] == [(s.scheme, s.title) for s in other], where
                limits = [limit for s in other for limit in (s.low, s.high)]
                assert [limit for s in mine for limit in (s.low, s.high)] == pytest.approx(limits, rel=SCALE_RTOL)
            elif isinstance(mine, np.ndarray) or isinstance(other, np.ndarray):
                np.testing.assert_array_equal(mine, other, err_msg=where)  # column indices, faded rows: exact
            else:
                assert mine == other, where


def assert_same_texts(first: Sequence[str], second: Sequence[str]) -> None:
    """Two pages' texts say the same: the same words, and the same whole numbers (shapes, counts), exactly; a number
    with decimals is a computed value each page rounded from its own computation, so the two may differ by one unit
    of its last printed digit and FLOAT32 (a measured rounding difference such as ``2.4e-07`` is FLOAT32-small)."""
    assert len(first) == len(second), (first, second)
    for ours, theirs in zip(first, second, strict=True):
        assert _NUMBERS.sub("#", ours) == _NUMBERS.sub("#", theirs), (ours, theirs)
        for mine, other in zip(_NUMBERS.findall(ours), _NUMBERS.findall(theirs), strict=True):
            if not re.search(r"[.e]", mine + other):
                assert mine == other, (mine, other, ours)
                continue
            spread = _last_digit(mine) + _float32_spread(_float(other))
            assert abs(_float(mine) - _float(other)) <= spread, (mine, other, ours)


def printed_forms(value: float, form: str | Callable[[float], str]) -> set[str]:
    """How a page may print ``value`` (the engine's number, computed again by the test) with ``form`` (a format spec
    such as ``".4f"``, or a function): the page's own computation lies within FLOAT32 of ``value`` and may round to
    the neighbouring last digit where ``value`` is that close to halfway."""
    spread = _float32_spread(value)
    write = (lambda number: format(number, form)) if isinstance(form, str) else form
    return {write(value - spread), write(value), write(value + spread)}


#: A parameter of :func:`printed_numbers`: read this number back from the page's text.
NUMBER = object()


def printed_numbers(texts: Iterable[str], key: str, lang: str = "en", **params: object) -> dict[str, str]:
    """The numbers the message ``key`` prints in one of ``texts``, as printed.

    Args:
        texts: the page's texts (or one element's).
        key, lang: the message, as ``t`` takes them.
        params: the message's parameters: each given as :data:`NUMBER` is read back, the others must read as given.

    Returns:
        ``{name: printed}`` for every parameter given as :data:`NUMBER`.
    """
    texts = list(texts)
    marks = {name: f"QQNUMBER{index}QQ" for index, name in enumerate(params) if params[name] is NUMBER}
    message = t(key, lang=lang, **{name: marks.get(name, value) for name, value in params.items()})
    pattern = re.escape(message)
    for name, mark in marks.items():
        pattern = pattern.replace(mark, f"(?P<{name}>{_NUMBER})", 1)
    for text in texts:
        found = re.search(pattern, text)
        if found:
            return found.groupdict()
    raise AssertionError(f"no text reads {message!r} (numbers aside): {texts}")


def assert_same_training(first: torch.nn.Module, second: torch.nn.Module) -> None:
    """Two trainings with the same arguments end with the same weights, to FLOAT32.

    Each step of one may differ from the other's in the last float32 bits; over a short training that stays near
    float32 rounding (measured: a one-ulp nudge of every initial weight moves 30 steps' weights by at most 5e-7),
    except in the key biases, which are left out: ``b_k`` adds ``q·b_k`` to every score of a row, which the softmax
    ignores, so its true gradient is 0 and Adam, which divides a gradient by its own running size, turns the rounding
    left in it into steps of up to the learning rate (the same nudge moved it by 3e-4). It changes nothing the model
    computes.
    """
    theirs = second.state_dict()
    compared = [name for name in first.state_dict() if not name.endswith("W_k.bias")]
    assert compared and first.state_dict().keys() == theirs.keys()
    for name in compared:
        torch.testing.assert_close(first.state_dict()[name], theirs[name], **FLOAT32, msg=lambda m, n=name: f"{n}: {m}")
