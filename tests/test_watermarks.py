"""Watermarks as stored and as sent (pure): the lower bound a lookback moves them to."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from openlaketx.sources.watermarks import lower_bound


@given(st.integers(-(10**12), 10**12), st.floats(0, 10**6, allow_nan=False))
def test_an_integer_watermark_less_a_lookback_stays_an_integer(mark: int, lookback: float) -> None:
    """`lookback: 5` parses as 5.0: "97.0" is no integer to an API, nor to an ANSI cast."""
    found = lower_bound(str(mark), "bigint", lookback)
    assert found.lstrip("-").isdigit()
    exact = Decimal(mark) - Decimal(str(lookback))
    assert int(found) <= exact < int(found) + 1


def test_a_decimal_watermark_keeps_its_fraction() -> None:
    assert lower_bound("10.5", "double", 0.25) == "10.25"
    assert lower_bound("2013-03-15 15:00:00.000000", "timestamp", "1 hour") == (
        "2013-03-15 14:00:00.000000"
    )
