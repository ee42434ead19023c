"""PROFILE: how far the batch's column profile moved from the last approved batch's."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from lakeguard.rules.policy.kinds.base import BatchFacts, PolicyKind

if TYPE_CHECKING:
    from lakeguard.records.definitions.records import PolicyDef


class ProfilePolicy(PolicyKind):
    name: ClassVar[str] = "PROFILE"
    metrics: ClassVar[dict[str, str]] = {
        "null_ratio_increase": "largest rise of a column's share of nulls since the last "
        "approved batch's profile (0..1)",
        "mean_shift": "largest move of a numeric column's mean, in standard deviations of the "
        "last full profile",
        "distinct_change": "largest relative change of a column's approximate distinct count",
        "compared": "1 when there was an earlier profile to compare with, else 0",
        "full_compared": "1 when this batch's full profile was compared with an earlier one",
    }
    default: ClassVar[str] = "null_ratio_increase <= 0.2 AND (full_compared = 0 OR mean_shift <= 3)"

    def measure(self, facts: BatchFacts, policy: PolicyDef) -> dict[str, float]:
        if facts.profile_drift:
            return dict(facts.profile_drift)
        return dict.fromkeys(self.metrics, 0.0)  # no profile to compare: profiling is off
