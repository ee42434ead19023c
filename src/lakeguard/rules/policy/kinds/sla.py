"""SLA: how long since the dataset, and the stalest of its parents, were last approved."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, ClassVar

from lakeguard.rules.policy.kinds.base import BatchFacts, PolicyKind

if TYPE_CHECKING:
    from lakeguard.records.definitions.records import PolicyDef

NEVER = 1e9  # hours: what "no approved version at all" counts as


def hours(since: datetime | None, now: datetime) -> float:
    return NEVER if since is None else (now - since).total_seconds() / 3600


class SlaPolicy(PolicyKind):
    name: ClassVar[str] = "SLA"
    metrics: ClassVar[dict[str, str]] = {
        "hours_since_approved": "hours since the dataset's own latest approved version",
        "stalest_parent_hours": "hours since the oldest latest-approved version of a parent",
    }
    default: ClassVar[str] = "stalest_parent_hours <= 24"

    def measure(self, facts: BatchFacts, policy: PolicyDef) -> dict[str, float]:
        own = facts.own_latest
        parents = facts.parents_latest()
        return {
            "hours_since_approved": hours(own.promoted_at if own else None, facts.now),
            "stalest_parent_hours": max(
                (hours(v.promoted_at if v else None, facts.now) for v in parents.values()),
                default=0.0,
            ),
        }
