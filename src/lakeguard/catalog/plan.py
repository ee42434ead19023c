"""What applying a document would change, computed from plain rows (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lakeguard.catalog.to_rows import Rows
from lakeguard.shapes import StoredRow
from lakeguard.store.definitions import table_def

Key = tuple[Any, ...]


@dataclass(frozen=True)
class Change:
    table: str
    key: Key
    action: str  # "create" | "update" | "unchanged"


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
            out.setdefault(c.table, {"create": 0, "update": 0, "unchanged": 0})[c.action] += 1
        return out


def row_key(table: str, row: StoredRow) -> Key:
    return tuple(row[k] for k in table_def(table).keys if k != "tenant_id")


# Fields of a registered dataset that can never change (invariant 2 and table identity).
IMMUTABLE_DATASET_FIELDS = ("layer", "table_name")


def plan_changes(new: Rows, existing: Rows) -> Plan:
    """Compare document rows with stored rows (both without tenant), table by table."""
    plan = Plan()
    for table, rows in new.items():
        stored = {row_key(table, r): r for r in existing.get(table, [])}
        for row in rows:
            key = row_key(table, row)
            old = stored.get(key)
            if old is None:
                action = "create"
            elif old.get("definition_hash") == row["definition_hash"] and old.get("active", True):
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
