"""The CPU thread cap read from the environment."""

import pytest
import torch

from mha.threads import THREADS_ENV, apply_thread_cap, thread_cap


@pytest.mark.parametrize(
    ("value", "cores", "expected"),
    [
        (None, 2, 1),  # one thread unless told otherwise
        (None, 16, 1),
        ("1", 16, 1),
        ("2", 2, 2),
        ("8", 16, 8),
        ("64", 16, 16),  # at most the cores
        ("0", 16, 1),  # not a positive integer: the default
        ("-3", 2, 1),
        ("x", 2, 1),
    ],
)
def test_thread_cap(value, cores, expected):
    environ = {} if value is None else {THREADS_ENV: value}
    assert thread_cap(environ, cores=cores) == expected


def test_apply_thread_cap_sets_torch_threads():
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)  # not the cap: a page run in this process may have left the count at 1 already
        assert apply_thread_cap({THREADS_ENV: "1"}) == 1
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
