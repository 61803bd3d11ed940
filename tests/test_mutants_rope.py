"""RoPE's checks at their edges: the cases a changed comparison in ``check_rope`` would let through.

Found by mutation testing (scripts/mutation.sh): the other tests only tried bases far from the limit.
"""

from __future__ import annotations

import pytest

from mha.rope import check_rope


@pytest.mark.parametrize("base", [1.5, 2, 2.0, 10000, 1e6])
def test_any_base_above_one_is_accepted(base: float) -> None:
    """θ_i = base^(-2i/Dh) shrinks with i for every base > 1, so every such base is a valid RoPE base."""
    check_rope(8, base)


@pytest.mark.parametrize("base", [1, 1.0, 0.5, 0, -10000])
def test_a_base_of_one_or_less_is_refused(base: float) -> None:
    """base ≤ 1 gives angles that do not shrink with i (all 0 at base 1): refused with the value named."""
    with pytest.raises(ValueError, match="rope_base"):
        check_rope(8, base)


@pytest.mark.parametrize("base", ["10000", None, True, [10000]])
def test_a_base_that_is_not_a_number_is_a_value_error(base: object) -> None:
    """A string, None, a bool or a list is refused as a ValueError naming rope_base, not a TypeError from `<=`."""
    with pytest.raises(ValueError, match="rope_base"):
        check_rope(8, base)  # type: ignore[arg-type]


@pytest.mark.parametrize("head_dim", [1, 3, 7])
def test_an_odd_head_size_is_refused(head_dim: int) -> None:
    """Features are turned in pairs, so an odd d_k has a feature with no partner."""
    with pytest.raises(ValueError, match="even"):
        check_rope(head_dim, 10000)
