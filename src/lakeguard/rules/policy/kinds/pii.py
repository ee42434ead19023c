"""PII: no column that carries a pii-tagged value unmasked reaches the layer."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from lakeguard.rules.policy.kinds.base import BatchFacts, PolicyKind

if TYPE_CHECKING:
    from lakeguard.records.definitions.records import PolicyDef


class PiiPolicy(PolicyKind):
    name: ClassVar[str] = "PII"
    metrics: ClassVar[dict[str, str]] = {
        "raw_pii_columns": "columns that carry a pii-tagged value unmasked",
    }
    default: ClassVar[str] = "raw_pii_columns = 0"

    def measure(self, facts: BatchFacts, policy: PolicyDef) -> dict[str, float]:
        return {"raw_pii_columns": float(len(facts.raw_pii))}

    def note(self, facts: BatchFacts) -> str | None:
        return f"raw pii: {', '.join(facts.raw_pii)}" if facts.raw_pii else None
