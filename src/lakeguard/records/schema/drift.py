"""Schema drift: how a batch's schema differs from the approved one, and what a profile says
about each difference (pure).

`diff` classifies every difference as one `ChangeKind` (`derived_changes` for a derived
dataset, whose table holds every column nullable); a profile (named, from
`schema_compatibility_rules`) maps each kind to ALLOW (the approved schema evolves with the
promotion), ALERT (it evolves, and the decision says so) or BLOCK (the batch is quarantined,
schema and table untouched). Three profiles are shipped: strict, additive, permissive.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from lakeguard.records.schema.fingerprint import SchemaColumn, as_table_holds


class ChangeKind(StrEnum):
    COLUMN_ADDED = "column_added"
    COLUMN_DROPPED = "column_dropped"
    COLUMN_RENAMED = "column_renamed"  # a candidate: one dropped, one added, same type and place
    TYPE_WIDENED = "type_widened"
    TYPE_NARROWED = "type_narrowed"
    TYPE_CHANGED = "type_changed"
    NULLABILITY_TIGHTENED = "nullability_tightened"
    NULLABILITY_LOOSENED = "nullability_loosened"
    ORDER_CHANGED = "order_changed"


class DriftDecision(StrEnum):
    ALLOW = "ALLOW"
    ALERT = "ALERT"
    BLOCK = "BLOCK"


_A, _L, _B = DriftDecision.ALLOW, DriftDecision.ALERT, DriftDecision.BLOCK
SHIPPED_PROFILES: dict[str, dict[ChangeKind, DriftDecision]] = {
    # any difference stops the batch
    "strict": dict.fromkeys(ChangeKind, _B),
    # new columns and safe widenings flow; anything that loses or reshapes data stops
    "additive": {
        ChangeKind.COLUMN_ADDED: _A,
        ChangeKind.COLUMN_DROPPED: _B,
        ChangeKind.COLUMN_RENAMED: _B,
        ChangeKind.TYPE_WIDENED: _A,
        ChangeKind.TYPE_NARROWED: _B,
        ChangeKind.TYPE_CHANGED: _B,
        ChangeKind.NULLABILITY_TIGHTENED: _L,
        ChangeKind.NULLABILITY_LOOSENED: _A,
        ChangeKind.ORDER_CHANGED: _A,
    },
    # only changes that would corrupt values stop; losing a column is said loudly
    "permissive": {
        ChangeKind.COLUMN_ADDED: _A,
        ChangeKind.COLUMN_DROPPED: _L,
        ChangeKind.COLUMN_RENAMED: _L,
        ChangeKind.TYPE_WIDENED: _A,
        ChangeKind.TYPE_NARROWED: _B,
        ChangeKind.TYPE_CHANGED: _B,
        ChangeKind.NULLABILITY_TIGHTENED: _A,
        ChangeKind.NULLABILITY_LOOSENED: _A,
        ChangeKind.ORDER_CHANGED: _A,
    },
}

# type -> the types it can grow into without losing a value
_WIDER: dict[str, set[str]] = {
    "tinyint": {"smallint", "int", "bigint", "float", "double"},
    "smallint": {"int", "bigint", "float", "double"},
    "int": {"bigint", "double"},
    "bigint": {"double"},
    "float": {"double"},
    "date": {"timestamp"},
}
_DECIMAL = re.compile(r"^decimal\((\d+),(\d+)\)$")


def _widening(old: str, new: str) -> bool | None:
    """True: `new` holds every `old` value; False: it may not; None: unrelated types."""
    a, b = old.lower().replace(" ", ""), new.lower().replace(" ", "")
    da, db = _DECIMAL.match(a), _DECIMAL.match(b)
    if da and db:
        (pa, sa), (pb, sb) = map(int, da.groups()), map(int, db.groups())
        return sb >= sa and pb - sb >= pa - sa
    if b in _WIDER.get(a, set()):
        return True
    if a in _WIDER.get(b, set()):
        return False
    return None


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    column: str | None
    old_type: str | None = None
    new_type: str | None = None
    detail: str = ""

    def describe(self) -> str:
        text = f"{self.kind.value} {self.column}" if self.column else self.kind.value
        if self.old_type or self.new_type:
            text += f" ({self.old_type or '-'} -> {self.new_type or '-'})"
        return text + (f": {self.detail}" if self.detail else "")


def diff(approved: list[SchemaColumn], live: list[SchemaColumn]) -> list[Change]:
    """Every difference between the approved and the live schema (names case-insensitive)."""
    old = {c.name.lower(): c for c in approved}
    new = {c.name.lower(): c for c in live}
    dropped = [c for c in approved if c.name.lower() not in new]
    added = [c for c in live if c.name.lower() not in old]
    changes: list[Change] = []
    position = {c.name.lower(): i for i, c in enumerate(approved)}
    live_position = {c.name.lower(): i for i, c in enumerate(live)}
    for gone in list(dropped):
        twin = next(
            (
                a
                for a in added
                if a.type.lower() == gone.type.lower()
                and live_position[a.name.lower()] == position[gone.name.lower()]
            ),
            None,
        )
        if twin is not None:
            changes.append(
                Change(
                    ChangeKind.COLUMN_RENAMED,
                    gone.name,
                    gone.type,
                    twin.type,
                    f"{gone.name} may now be {twin.name}",
                )
            )
            dropped.remove(gone)
            added.remove(twin)
    changes += [Change(ChangeKind.COLUMN_DROPPED, c.name, c.type, None) for c in dropped]
    changes += [Change(ChangeKind.COLUMN_ADDED, c.name, None, c.type) for c in added]
    for name, before in old.items():
        after = new.get(name)
        if after is None:
            continue
        if before.type.lower() != after.type.lower():
            widening = _widening(before.type, after.type)
            kind = ChangeKind.TYPE_CHANGED
            if widening is not None:
                kind = ChangeKind.TYPE_WIDENED if widening else ChangeKind.TYPE_NARROWED
            changes.append(Change(kind, before.name, before.type, after.type))
        if before.nullable and not after.nullable:
            changes.append(Change(ChangeKind.NULLABILITY_TIGHTENED, before.name))
        elif not before.nullable and after.nullable:
            changes.append(Change(ChangeKind.NULLABILITY_LOOSENED, before.name))
    kept_old = [c.name.lower() for c in approved if c.name.lower() in new]
    kept_new = [c.name.lower() for c in live if c.name.lower() in old]
    if kept_old != kept_new:
        changes.append(Change(ChangeKind.ORDER_CHANGED, None, detail=", ".join(kept_new)))
    return changes


def derived_changes(approved: list[SchemaColumn], live: list[SchemaColumn]) -> list[Change]:
    """How a derived dataset's batch differs from its last approved version.

    Its contract is its table: names, types and order. Both sides are compared as the table
    holds them (nullable), so what Spark infers about a query's nullability from one version
    to the next is no drift; a source object's declared columns keep theirs (`diff`).
    """
    return diff(as_table_holds(approved), as_table_holds(live))


def profile_rules(
    name: str, declared: Iterable[Mapping[str, str]] = ()
) -> dict[ChangeKind, DriftDecision]:
    """A profile's decision per change kind: the shipped profile of that name, overridden by
    declared `schema_compatibility_rules` rows (change_kind, decision). Unknown: KeyError."""
    rules = dict(SHIPPED_PROFILES.get(name, {}))
    found = name in SHIPPED_PROFILES
    for row in declared:
        if row["profile"] == name:
            found = True
            rules[ChangeKind(row["change_kind"])] = DriftDecision(row["decision"])
    if not found:
        raise KeyError(name)
    return {kind: rules.get(kind, DriftDecision.BLOCK) for kind in ChangeKind}


@dataclass(frozen=True)
class DecidedChange:
    change: Change
    decision: DriftDecision


def decide_drift(
    changes: list[Change], rules: Mapping[ChangeKind, DriftDecision]
) -> list[DecidedChange]:
    return [DecidedChange(c, rules.get(c.kind, DriftDecision.BLOCK)) for c in changes]
