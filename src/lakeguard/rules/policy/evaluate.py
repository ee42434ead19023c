"""Policies as gate checks (pure): each policy covering the dataset's layer is evaluated
over its type's metrics (lakeguard/rules/policy/kinds); a false BLOCK policy blocks the promotion, a
false ALERT one is logged. Both are named in the decision's reason and recorded in its
evidence."""

from __future__ import annotations

from collections.abc import Iterable

from lakeguard.records.definitions.records import PolicyDef
from lakeguard.records.evidence import Check, CheckKind
from lakeguard.rules.policy.expression import evaluate, parse
from lakeguard.rules.policy.kinds import BatchFacts, policy_kind


def applicable(policies: Iterable[PolicyDef], layer: str) -> list[PolicyDef]:
    return [p for p in policies if layer in p.layers]


def checks(policies: Iterable[PolicyDef], facts: BatchFacts) -> list[Check]:
    """One check per policy, its expression over the metrics its type measures the batch by."""
    found = []
    for policy in policies:
        kind = policy_kind(policy.policy_type)
        expression = policy.expression or kind.default
        tree = parse(expression, policy.policy_type, where=f"policy_rules[{policy.policy_id}]")
        values = kind.measure(facts, policy)
        shown = ", ".join(f"{k}={v:g}" for k, v in values.items())
        passed = evaluate(tree, values)
        detail = f"{policy.policy_type} policy requires {expression} ({shown})"
        note = None if passed else kind.note(facts)
        found.append(
            Check(
                name=f"policy:{policy.policy_id}",
                passed=passed,
                blocking=policy.enforcement == "BLOCK",
                detail=f"{detail}; {note}" if note else detail,
                kind=CheckKind.POLICY,
            )
        )
    return found
