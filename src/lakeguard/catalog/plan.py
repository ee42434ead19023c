"""What applying a document would change, computed from plain rows (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lakeguard.catalog.to_rows import Rows
from lakeguard.shapes import StoredRow
from lakeguard.store.definitions import table_def
from lakeguard.store.sameness import same_definition

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


def row_key(table: str, row: StoredRow) -> Key:
    return tuple(row[k] for k in table_def(table).keys if k != "tenant_id")


# Fields of a registered dataset that can never change (invariant 2 and table identity).
IMMUTABLE_DATASET_FIELDS = ("layer", "table_name")


# Rows that belong to a definition of the document: a job's tasks and parameters. One the
# document no longer lists under its job is deactivated (a source object's columns are not:
# schema drift approves columns the document never listed).
OWNED_BY = {"job_tasks": ("jobs", "job_id"), "job_parameters": ("jobs", "job_id")}


def plan_changes(new: Rows, existing: Rows) -> Plan:
    """Compare document rows with stored rows (both without tenant), table by table."""
    plan = Plan()
    for table, (owner_table, owner) in OWNED_BY.items():
        if table not in new:
            continue
        owners = {r[owner] for r in new.get(owner_table, [])}
        listed = {row_key(table, r) for r in new[table]}
        for stored_row in existing.get(table, []):
            key = row_key(table, stored_row)
            live = stored_row.get("active", True)
            if stored_row[owner] in owners and key not in listed and live:
                plan.changes.append(Change(table, key, "deactivate"))
    for table, rows in new.items():
        stored = {row_key(table, r): r for r in existing.get(table, [])}
        for row in rows:
            key = row_key(table, row)
            old = stored.get(key)
            if old is None:
                action = "create"
            elif same_definition(old, row):
                action = "unchanged"
            else:
                action = "update"
            if table == "dataset_registry" and old is not None:
                for name in IMMUTABLE_DATASET_FIELDS:
                    if old.get(name) != row.get(name):
                        plan.conflicts.append(
                            {
                                "path": f"datasets[id={key[0]}].{name}",
                                "message": f"dataset {key[0]} is registered with {name} "
                                f"{old.get(name)!r}; it cannot become {row.get(name)!r}",
                            }
                        )
            plan.changes.append(Change(table, key, action))
    return plan


def deactivated_rows(plan: Plan, existing: Rows) -> Rows:
    """The stored rows `plan` deactivates, as rows to write (definition fields, inactive)."""
    out: Rows = {}
    for table in {c.table for c in plan.changes if c.action == "deactivate"}:
        gone = {c.key for c in plan.changes if c.table == table and c.action == "deactivate"}
        for old in existing.get(table, []):
            if row_key(table, old) in gone:
                row = {k: v for k, v in old.items() if k not in ("created_at", "updated_at")}
                out.setdefault(table, []).append({**row, "active": False})
    return out
