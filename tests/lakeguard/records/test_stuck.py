"""A dataset blocked again and again on the same input says so, with the fix (pure)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta

from lakeguard.records.decisions.rows import DecisionRow
from lakeguard.records.stuck import Blocked, stuck

T0 = datetime(2026, 11, 1, 6, 0)


def blocked(n: int, batch: str, reason: str = "rule u: 15% duplicate keys") -> Blocked:
    return Blocked(allowed=False, reason=reason, evaluated_at=T0 + timedelta(hours=n), batch=batch)


def allowed(n: int, batch: str) -> Blocked:
    return Blocked(allowed=True, reason="ok", evaluated_at=T0 + timedelta(hours=n), batch=batch)


def span(first: int, last: int) -> str:
    return json.dumps({"bronze_x": [first - 1, last]})


def test_three_blocks_on_the_same_parent_versions_are_stuck() -> None:
    found = stuck([allowed(0, span(1, 1)), *(blocked(n, span(2, 3)) for n in (1, 2, 3))])
    assert found is not None
    assert found.times == 3 and found.since == T0 + timedelta(hours=1)
    assert found.same_input and found.same_reason
    text = found.summary()
    assert "blocked 3 times in a row" in text and "bronze_x v2..v3 each time" in text
    assert "same reason since the first time" in text
    assert "correct the rows upstream" in found.fix()


def test_a_growing_input_with_the_same_start_is_still_stuck() -> None:
    found = stuck([blocked(1, span(2, 2)), blocked(2, span(2, 3), "another reason")])
    assert found is not None and found.times == 2
    assert not found.same_input and not found.same_reason
    assert "bronze_x v2..v3" in found.summary() and "the reason changed" in found.summary()


def test_one_block_or_a_promotion_since_is_not_stuck() -> None:
    assert stuck([blocked(1, span(1, 1))]) is None
    assert stuck([blocked(1, span(1, 1)), blocked(2, span(1, 1)), allowed(3, span(1, 2))]) is None
    # blocked on another start of input (it moved on in between): counted afresh
    assert stuck([blocked(1, span(1, 1)), blocked(2, span(2, 2))]) is None


def test_source_batches_compare_whole() -> None:
    found = stuck([blocked(1, "files:abc"), blocked(2, "files:abc")])
    assert found is not None and found.inputs == "the same source batch"
    assert stuck([blocked(1, "files:abc"), blocked(2, "files:abd")]) is None


def test_rows_from_the_store_parse_their_evidence() -> None:
    row = DecisionRow(
        tenant_id="t",
        dataset_id="d",
        run_id="r",
        from_layer="bronze",
        to_layer="silver",
        allowed=False,
        reason="r",
        evaluated_at=T0,
        evidence=json.dumps({"input": span(1, 2)}),
    )
    assert Blocked.from_row(row).batch == span(1, 2)
    assert Blocked.from_row(replace(row, evidence="not json")).batch is None
