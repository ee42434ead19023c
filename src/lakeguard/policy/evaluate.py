"""Policies as gate checks (pure): each policy covering the dataset's layer is evaluated
over its type's metrics; a false BLOCK policy blocks the promotion, a false ALERT one is logged.
Both are named in the decision's reason and recorded in its evidence."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime

from lakeguard.gate import Check
from lakeguard.policy.expression import DEFAULTS, evaluate, parse
from lakeguard.schema.drift import ChangeKind
from lakeguard.store.records import ApprovedVersion, PolicyDef

BREAKING = frozenset(
    {
        ChangeKind.COLUMN_DROPPED,
        ChangeKind.COLUMN_RENAMED,
        ChangeKind.TYPE_NARROWED,
        ChangeKind.TYPE_CHANGED,
    }
)
NEVER = 1e9  # hours: what "no approved version at all" counts as


def applicable(policies: Iterable[PolicyDef], layer: str) -> list[PolicyDef]:
    return [p for p in policies if layer in p.layers]


def schema_metrics(kinds: Iterable[ChangeKind]) -> dict[str, float]:
    listed = list(kinds)
    return {
        "breaking_changes": float(sum(1 for k in listed if k in BREAKING)),
        "schema_changes": float(len(listed)),
    }


def _hours(since: datetime | None, now: datetime) -> float:
    return NEVER if since is None else (now - since).total_seconds() / 3600


def sla_metrics(
    own: ApprovedVersion | None, parents: Mapping[str, ApprovedVersion | None], now: datetime
) -> dict[str, float]:
    return {
        "hours_since_approved": _hours(own.promoted_at if own else None, now),
        "stalest_parent_hours": max(
            (_hours(v.promoted_at if v else None, now) for v in parents.values()), default=0.0
        ),
    }


def volume_metrics(rows: int, history: list[int]) -> dict[str, float]:
    return {
        "rows": float(rows),
        "rows_mean": sum(history) / len(history) if history else 0.0,
        "rows_min": float(min(history, default=0)),
        "rows_max": float(max(history, default=0)),
        "history": float(len(history)),
    }


def profile_metrics_none() -> dict[str, float]:
    """PROFILE metrics of a batch with no profile to compare (profiling is off)."""
    return dict.fromkeys(
        ("null_ratio_increase", "mean_shift", "distinct_change", "compared", "full_compared"), 0.0
    )


def checks(
    policies: Iterable[PolicyDef], metrics: Callable[[PolicyDef], Mapping[str, float]]
) -> list[Check]:
    """One check per policy, over the metric values `metrics` gives for it."""
    found = []
    for policy in policies:
        expression = policy.expression or DEFAULTS[policy.policy_type]
        tree = parse(expression, policy.policy_type, where=f"policy_rules[{policy.policy_id}]")
        values = metrics(policy)
        shown = ", ".join(f"{k}={v:g}" for k, v in values.items())
        found.append(
            Check(
                name=f"policy:{policy.policy_id}",
                passed=evaluate(tree, values),
                blocking=policy.enforcement == "BLOCK",
                detail=f"{policy.policy_type} policy requires {expression} ({shown})",
            )
        )
    return found
