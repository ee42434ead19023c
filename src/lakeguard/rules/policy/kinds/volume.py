"""VOLUME: the batch's row count against a band learnt from the last approved versions."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from lakeguard.rules.policy.kinds.base import BatchFacts, PolicyKind

if TYPE_CHECKING:
    from lakeguard.records.definitions.records import PolicyDef


class VolumePolicy(PolicyKind):
    name: ClassVar[str] = "VOLUME"
    metrics: ClassVar[dict[str, str]] = {
        "rows": "rows in the batch",
        "rows_mean": "mean rows_written of the last `window` approved versions",
        "rows_min": "fewest rows_written among them",
        "rows_max": "most rows_written among them",
        "history": "how many approved versions the band was learnt from",
    }
    default: ClassVar[str] = "history < 3 OR (rows >= 0.5 * rows_mean AND rows <= 2 * rows_mean)"

    def measure(self, facts: BatchFacts, policy: PolicyDef) -> dict[str, float]:
        stored = policy.parameters.get("window", 5)
        window = int(stored) if isinstance(stored, int | float | str) else 5
        history = facts.rows_written(window)[-window:]
        return {
            "rows": float(facts.rows),
            "rows_mean": sum(history) / len(history) if history else 0.0,
            "rows_min": float(min(history, default=0)),
            "rows_max": float(max(history, default=0)),
            "history": float(len(history)),
        }
