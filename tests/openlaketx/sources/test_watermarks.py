"""Watermarks as stored and as sent (pure): the lower bound a lookback moves them to, and
the format an http source sends them in (`watermark_format`)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from lakeguard.records.schema.watermark_format import (
    Granule,
    floor,
    format_problem,
    granule,
    render,
)
from openlaketx.sources.watermarks import Above, above, lower_bound, watermark_text


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


PATTERNS = [
    "%Y-%m-%d",
    "%Y%m",
    "%Y",
    "%d/%m/%Y %H:%M",
    "%Y-%m-%dT%H:%M:%SZ",
    "%Y-%m-%dT%H:%M:%S.%f%z",
]
moments = st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1))


@given(moments, st.sampled_from([*PATTERNS, "date", "epoch", "epoch_ms"]))
def test_a_read_starts_where_the_format_can_say_the_last_one_ended(
    moment: datetime, fmt: str
) -> None:
    """Coarser than the column: the start of the watermark's granule, rows there included
    (the engine drops those it holds); as fine: exactly above the watermark."""
    stored = watermark_text(moment)
    found = above(stored, "timestamp", None, fmt)
    start = floor(moment, granule(fmt))
    assert found.inclusive == (granule(fmt) < Granule.MICROSECOND)
    assert found.lower == (watermark_text(start) if found.inclusive else stored)
    assert start <= moment
    assert render(start, fmt) == render(moment, fmt)  # the granule's start writes alike
    assert found.sent == render(start, fmt)


def test_formats_as_apis_take_them() -> None:
    stored = "2013-03-15 15:00:00.500000"
    assert above(stored, "timestamp", None, "date") == Above(
        "2013-03-15", "2013-03-15 00:00:00.000000", True
    )
    assert above(stored, "timestamp", None, "epoch").sent == "1363359600"
    assert above(stored, "timestamp", None, "epoch_ms").sent == "1363359600500"
    assert above(stored, "timestamp", "1 day", "%Y-%m").sent == "2013-03"
    assert above(stored, "timestamp", None, "%Y-%m-%dT%H:%M:%S.%f") == Above(
        "2013-03-15T15:00:00.500000", stored, False
    )
    # a date watermark in a date format: as fine as the column, exactly above it
    assert above("2013-03-15", "date", None, "date") == Above("2013-03-15", "2013-03-15", False)
    assert above("2013-03-15", "date", None, "%Y-%m") == Above("2013-03", "2013-03-01", True)
    assert above("102", "bigint", None, None) == Above("102", "102", False)


def test_a_watermark_format_is_refused_with_why() -> None:
    assert format_problem("date") is None and format_problem("%Y-%m-%dT%H:%M") is None
    assert "neither date, epoch, epoch_ms" in (format_problem("YYYY-MM-DD") or "")
    assert "uses %Q" in (format_problem("%Y-%Q") or "")
    assert "writes no year" in (format_problem("%m-%d") or "")


HTTP_DOC = """
source_systems:
  - {id: api, kind: http, options: {base_url: "http://127.0.0.1:1"}}
source_objects:
  - id: events
    system: api
    locator: /events
    format: json
    records: data
    load_type: incremental
    watermark_column: WM
    watermark_param: since
    watermark_format: FMT
    dataset: bronze_events
    columns: [{name: id, type: bigint}, {name: at, type: timestamp}]
datasets:
  - {id: bronze_events, layer: bronze}
"""


def test_validate_checks_the_watermark_format(tmp_path: Path) -> None:
    from lakeguard.rules.catalog.loader import load_file
    from lakeguard.words.errors import ValidationError

    def problems(wm: str, fmt: str) -> str:
        path = tmp_path / "d.yaml"
        path.write_text(HTTP_DOC.replace("WM", wm).replace("FMT", fmt), encoding="utf-8")
        try:
            load_file(path)
        except ValidationError as exc:
            return str(exc)
        return ""

    assert problems("at", "epoch") == ""
    assert "formats a date or timestamp watermark; id is bigint" in problems("id", "date")
    assert "writes no year" in problems("at", '"%H:%M"')
