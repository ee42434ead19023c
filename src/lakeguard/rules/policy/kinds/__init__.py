"""Policy types: one module each, registered here, the one list of them (pure).

Adding a type is one module with its `PolicyKind` (name, metrics, default expression and how
it measures a batch), its test, and its entry in `KINDS` below; the document's `type` field,
the expression language and the gate all read this registry.
"""

from __future__ import annotations

from lakeguard.rules.policy.kinds.base import BatchFacts, PolicyKind
from lakeguard.rules.policy.kinds.pii import PiiPolicy
from lakeguard.rules.policy.kinds.profile import ProfilePolicy
from lakeguard.rules.policy.kinds.schema import SchemaPolicy
from lakeguard.rules.policy.kinds.sla import SlaPolicy
from lakeguard.rules.policy.kinds.volume import VolumePolicy
from lakeguard.words.registries import refuse_incomplete, unregistered

__all__ = ["POLICY_KINDS", "BatchFacts", "PolicyKind", "policy_kind"]

KINDS: tuple[PolicyKind, ...] = (
    PiiPolicy(),
    SchemaPolicy(),
    SlaPolicy(),
    VolumePolicy(),
    ProfilePolicy(),
)
POLICY_KINDS: dict[str, PolicyKind] = {k.name: k for k in KINDS}
POLICY_TYPES: tuple[str, ...] = tuple(POLICY_KINDS)
refuse_incomplete(
    "policy type",
    [f"module kinds/{m}.py is not in KINDS" for m in unregistered(__path__, KINDS)],
    "register each type in lakeguard/rules/policy/kinds/__init__.py KINDS",
)


def policy_kind(name: str) -> PolicyKind:
    """The policy type called `name` (KeyError naming the known ones when there is none)."""
    try:
        return POLICY_KINDS[name]
    except KeyError:
        raise KeyError(
            f"unknown policy type {name!r}; policy types are {', '.join(POLICY_TYPES)}"
        ) from None
