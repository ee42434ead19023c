"""A dataset's freshness SLA, read from the SLA policies covering its layer (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeguard.rules.policy.expression import DEFAULTS, parse

if TYPE_CHECKING:  # the store's reader imports this module
    from lakeguard.records.definitions.records import PolicyDef


def sla_hours(policies: Iterable[PolicyDef], layer: str) -> float | None:
    """The tightest `hours_since_approved <= N` (or `< N`, `N >= ...`) bound among the SLA
    policies covering `layer`: the dataset's freshness SLA (None: no such bound)."""
    bounds: list[float] = []
    for policy in policies:
        if layer not in policy.layers or policy.policy_type != "SLA":
            continue
        text = policy.expression or DEFAULTS["SLA"]
        tree = parse(text, "SLA", where=f"policy_rules[{policy.policy_id}]")
        for node in tree.find_all(exp.LT, exp.LTE, exp.GT, exp.GTE):
            metric, bound = node.this, node.expression
            if isinstance(node, exp.GT | exp.GTE):
                metric, bound = bound, metric
            if (
                isinstance(metric, exp.Column)
                and metric.name == "hours_since_approved"
                and isinstance(bound, exp.Literal)
                and not bound.is_string
            ):
                bounds.append(float(bound.this))
    return min(bounds, default=None)
