"""What applying a document would change, computed from its rows and the stored ones (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lakeguard.records.definitions.sets import DefinitionSet
from lakeguard.records.rows.definition import DefinitionRow
from lakeguard.records.sameness import same_definition

Key = tuple[Any, ...]


@dataclass(frozen=True)
class Change:
    table: str
    key: Key
    action: str  # "create" | "update" | "unchanged" | "deactivate"


@dataclass
class Plan:
    changes: list[Change] = field(default_factory=list)
    conflicts: list[dict[str, str]] = field(default_factory=list)

    def count(self, action: str) -> int:
        return sum(1 for c in self.changes if c.action == action)

    @property
    def has_changes(self) -> bool:
        return any(c.action != "unchanged" for c in self.changes)

    def summary(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for c in self.changes:
            counts = dict.fromkeys(("create", "update", "unchanged", "deactivate"), 0)
            out.setdefault(c.table, counts)[c.action] += 1
        return out


def row_key(row: DefinitionRow) -> Key:
    """A row's identity within its table (its tenant aside)."""
    return row.key()


# Fields of a registered dataset that can never change (invariant 2 and table identity).
IMMUTABLE_DATASET_FIELDS = ("layer", "table_name")


# Rows that belong to a definition of the document: a job's tasks and parameters. One the
# document no longer lists under its job is deactivated (a source object's columns are not:
# schema drift approves columns the document never listed).
OWNED_BY = {"job_tasks": ("jobs", "job_id"), "job_parameters": ("jobs", "job_id")}


def plan_changes(new: DefinitionSet, existing: DefinitionSet) -> Plan:
    """Compare document rows with stored rows, table by table (by what the tables hold: a
    stored NULL differs from the value a document gives, so applying it writes that back)."""
    plan = Plan()
    for table, (owner_table, owner) in OWNED_BY.items():
        owners = {getattr(r, owner) for r in new.rows(owner_table)}
        listed = {row_key(r) for r in new.rows(table)}
        for stored_row in existing.rows(table):
            key = row_key(stored_row)
            live = stored_row.active
            if getattr(stored_row, owner) in owners and key not in listed and live:
                plan.changes.append(Change(table, key, "deactivate"))
    for table, rows in new.tables():
        stored = {row_key(r): r for r in existing.rows(table)}
        for row in rows:
            key = row_key(row)
            old = stored.get(key)
            if old is None:
                action = "create"
            elif same_definition(old.as_row(), row.as_row()):
                action = "unchanged"
            else:
                action = "update"
            if table == "dataset_registry" and old is not None:
                for name in IMMUTABLE_DATASET_FIELDS:
                    if getattr(old, name) != getattr(row, name):
                        plan.conflicts.append(
                            {
                                "path": f"datasets[id={key[0]}].{name}",
                                "message": f"dataset {key[0]} is registered with {name} "
                                f"{getattr(old, name)!r}; it cannot become "
                                f"{getattr(row, name)!r}",
                            }
                        )
            plan.changes.append(Change(table, key, action))
    return plan


def deactivated_rows(plan: Plan, existing: DefinitionSet) -> dict[str, list[DefinitionRow]]:
    """The stored rows `plan` deactivates, as rows to write (as stored, inactive)."""
    out: dict[str, list[DefinitionRow]] = {}
    for table in {c.table for c in plan.changes if c.action == "deactivate"}:
        gone = {c.key for c in plan.changes if c.table == table and c.action == "deactivate"}
        for old in existing.rows(table):
            if row_key(old) in gone:
                out.setdefault(table, []).append(deactivated(old))
    return out


def deactivated(row: DefinitionRow) -> DefinitionRow:
    """A stored row as it is written to deactivate it (its times the store's to give)."""
    return row.replaced(active=False, created_at=None, updated_at=None)
