"""Drift classification and the shipped profiles (pure)."""

from __future__ import annotations

import pytest

from lakeguard.records.schema.drift import (
    SHIPPED_PROFILES,
    ChangeKind,
    DriftDecision,
    diff,
    profile_rules,
)
from lakeguard.records.schema.fingerprint import SchemaColumn

BASE = [
    SchemaColumn("id", "bigint", False),
    SchemaColumn("name", "string", True),
    SchemaColumn("amount", "int", True),
]


def kinds(live: list[SchemaColumn]) -> list[tuple[str, str | None]]:
    return [(c.kind.value, c.column) for c in diff(BASE, live)]


def test_each_kind_of_change_is_told_apart() -> None:
    assert kinds(BASE) == []
    assert kinds([*BASE, SchemaColumn("city", "string", True)]) == [("column_added", "city")]
    assert kinds(BASE[:2]) == [("column_dropped", "amount")]
    renamed = [BASE[0], SchemaColumn("full_name", "string", True), BASE[2]]
    assert kinds(renamed) == [("column_renamed", "name")]
    assert kinds([BASE[0], BASE[1], SchemaColumn("amount", "bigint", True)]) == [
        ("type_widened", "amount")
    ]
    assert kinds([BASE[0], BASE[1], SchemaColumn("amount", "smallint", True)]) == [
        ("type_narrowed", "amount")
    ]
    assert kinds([BASE[0], BASE[1], SchemaColumn("amount", "string", True)]) == [
        ("type_changed", "amount")
    ]
    assert kinds([SchemaColumn("id", "bigint", True), *BASE[1:]]) == [
        ("nullability_loosened", "id")
    ]
    assert kinds([BASE[0], SchemaColumn("name", "string", False), BASE[2]]) == [
        ("nullability_tightened", "name")
    ]
    assert kinds([BASE[1], BASE[0], BASE[2]]) == [("order_changed", None)]


def test_decimal_and_date_widening() -> None:
    old = [SchemaColumn("x", "decimal(10,2)", True), SchemaColumn("d", "date", True)]
    wider = [SchemaColumn("x", "decimal(12,3)", True), SchemaColumn("d", "timestamp", True)]
    assert [c.kind for c in diff(old, wider)] == [ChangeKind.TYPE_WIDENED, ChangeKind.TYPE_WIDENED]
    assert [c.kind for c in diff(wider, old)] == [
        ChangeKind.TYPE_NARROWED,
        ChangeKind.TYPE_NARROWED,
    ]


def test_shipped_profiles_and_overrides() -> None:
    assert set(SHIPPED_PROFILES) >= {"strict", "additive", "permissive"}
    strict = profile_rules("strict")
    assert set(strict.values()) == {DriftDecision.BLOCK}
    additive = profile_rules("additive")
    assert additive[ChangeKind.COLUMN_ADDED] == DriftDecision.ALLOW
    assert additive[ChangeKind.COLUMN_DROPPED] == DriftDecision.BLOCK
    assert profile_rules("permissive")[ChangeKind.COLUMN_DROPPED] == DriftDecision.ALERT
    custom = [{"profile": "mine", "change_kind": "column_dropped", "decision": "ALLOW"}]
    mine = profile_rules("mine", custom)
    assert mine[ChangeKind.COLUMN_DROPPED] == DriftDecision.ALLOW
    assert mine[ChangeKind.COLUMN_ADDED] == DriftDecision.BLOCK  # undeclared kinds block
    with pytest.raises(KeyError):
        profile_rules("nope")
