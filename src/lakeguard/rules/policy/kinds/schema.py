"""SCHEMA: how much the batch's schema changed, and how much of that breaks readers."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from lakeguard.records.schema.drift import ChangeKind
from lakeguard.rules.policy.kinds.base import BatchFacts, PolicyKind

if TYPE_CHECKING:
    from lakeguard.records.definitions.records import PolicyDef

BREAKING = frozenset(
    {
        ChangeKind.COLUMN_DROPPED,
        ChangeKind.COLUMN_RENAMED,
        ChangeKind.TYPE_NARROWED,
        ChangeKind.TYPE_CHANGED,
    }
)


class SchemaPolicy(PolicyKind):
    name: ClassVar[str] = "SCHEMA"
    metrics: ClassVar[dict[str, str]] = {
        "breaking_changes": "dropped, renamed, narrowed or retyped columns in the batch",
        "schema_changes": "every detected schema change in the batch",
    }
    default: ClassVar[str] = "breaking_changes = 0"

    def measure(self, facts: BatchFacts, policy: PolicyDef) -> dict[str, float]:
        kinds = facts.drift_kinds
        return {
            "breaking_changes": float(sum(1 for k in kinds if k in BREAKING)),
            "schema_changes": float(len(kinds)),
        }
