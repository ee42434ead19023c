"""What every policy type is: the metrics it measures a batch by, and its default expression.

A policy (a `policy_rules` row) is a boolean expression over its type's metrics (see
lakeguard/rules/policy/expression.py). Each type is one class in one module under
`lakeguard/rules/policy/kinds/`, registered in `kinds/__init__.py`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, ClassVar

from lakeguard.records.schema.drift import ChangeKind

if TYPE_CHECKING:
    from lakeguard.records.decisions.versions import ApprovedVersion
    from lakeguard.records.definitions.records import PolicyDef


@dataclass(frozen=True, kw_only=True)
class BatchFacts:
    """What policies may know about the batch being decided (the engine gathers it; history
    that costs a store read is fetched only when a policy asks for it)."""

    rows: int
    now: datetime
    own_latest: ApprovedVersion | None = None
    raw_pii: tuple[str, ...] = ()
    drift_kinds: tuple[ChangeKind, ...] = ()
    profile_drift: Mapping[str, float] | None = None
    parents_latest: Callable[[], Mapping[str, ApprovedVersion | None]] = field(default=lambda: {})
    # rows_written of the newest n approved versions, oldest first
    rows_written: Callable[[int], list[int]] = field(default=lambda _n: [])


class PolicyKind(ABC):
    """A policy type: its metrics (name -> meaning), default expression and measurement."""

    name: ClassVar[str]
    metrics: ClassVar[dict[str, str]]
    default: ClassVar[str]

    @abstractmethod
    def measure(self, facts: BatchFacts, policy: PolicyDef) -> dict[str, float]:
        """The metric values of the batch, for one policy of this type."""

    def note(self, facts: BatchFacts) -> str | None:
        """More to say when a policy of this type fails (None: nothing)."""
        return None
