"""Token estimates add up (#22 item 6): parts priced apart never cost less than their whole, so a
plan that prices a request part by part never prices it under what the request costs."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from vak_desktop.context.capacity.profile import estimate_all, estimate_tokens

RATIOS = st.one_of(
    st.floats(0.05, 1.5),
    st.sampled_from([0.49999999999999994, 0.5, 0.3, 0.25, 1 / 3, 0.2500000000000001]),
)


@given(a=st.integers(0, 10**7), b=st.integers(0, 10**7), ratio=RATIOS)
def test_two_parts_never_cost_less_than_their_whole(a: int, b: int, ratio: float) -> None:
    assert estimate_tokens(a, ratio) + estimate_tokens(b, ratio) >= estimate_tokens(a + b, ratio)


@given(chars=st.integers(0, 10**7), ratio=RATIOS)
def test_the_estimate_never_undercuts_the_float_product(chars: int, ratio: float) -> None:
    assert estimate_tokens(chars, ratio) >= int(chars * ratio) + 1
    assert estimate_tokens(chars, ratio) <= int(chars * ratio) + 2


def test_the_example_that_rounded_under() -> None:
    """The pinned planner example's parts: nine sizes at a ratio just under 0.5 (1,381 chars),
    plus the six newlines between cards: priced with each card's newline they cover the whole."""
    ratio = 0.49999999999999994
    cards = [86, 85, 167, 71, 330, 170, 55]
    parts = [318, 99] + [c + 1 for c in cards]
    whole = 318 + 99 + sum(cards) + len(cards) - 1
    assert sum(estimate_all(parts, ratio)) >= estimate_tokens(whole, ratio)
    assert estimate_all(parts, ratio) == [estimate_tokens(p, ratio) for p in parts]
