"""A rule as it was when it judged a batch: its severity, threshold and expression (pure).

Each rule result records the definition in force when the batch was judged, so every view of
a judgment (a decision, a chart point, a diff) shows that definition and never today's. Results
recorded before the definition was (no threshold on the row) are read against the rule's
history instead: the `quality_rules` table as it was at the judgment's time (Delta time travel
on the definition table, which keeps every commit). Where neither says, the definition is
unknown, and is shown so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from lakeguard.words.hashing import to_json


class Known(StrEnum):
    """Where a judgment's rule definition comes from."""

    RECORDED = "recorded"  # recorded with the judgment
    HISTORY = "history"  # the rule's definition in force at the judgment's time
    UNKNOWN = "unknown"  # neither: the view says "unknown", never today's


@dataclass(frozen=True, kw_only=True, slots=True)
class JudgedAs:
    """What a rule was when it judged one batch (None: not known)."""

    severity: str | None
    threshold: float | None
    expression: str | None  # its parameters, the threshold aside (canonical JSON)
    asks: str | None  # what it asked, in words
    known: Known


UNKNOWN = JudgedAs(severity=None, threshold=None, expression=None, asks=None, known=Known.UNKNOWN)


def canonical_expression(parameters: Mapping[str, Any]) -> str:
    """A rule's parameters as one comparable text, without its threshold (a threshold change
    is told as such, not as an expression change too)."""
    return to_json({k: v for k, v in parameters.items() if k != "threshold"})


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field of a definition that differs between two judgments."""

    field: str  # severity, threshold, expression, active, enforcement
    then: str | None
    now: str | None

    def text(self) -> str:
        return f"{self.field} {self.then or '—'} → {self.now or '—'}"


def share_text(share: float | None) -> str | None:
    """A share as the pages say it: 0.1 -> "10%", 0.005 -> "0.5%" (None: unknown)."""
    if share is None:
        return None
    return f"{round(share * 100, 4):g}%"


def changed(then: JudgedAs, now: JudgedAs) -> tuple[FieldChange, ...]:
    """The fields of a rule's definition that differ between two judgments, each compared
    only where both judgments know it."""
    found = []
    pairs: tuple[tuple[str, str | None, str | None], ...] = (
        ("severity", then.severity, now.severity),
        ("threshold", share_text(then.threshold), share_text(now.threshold)),
        ("expression", then.expression, now.expression),
    )
    for name, a, b in pairs:
        if a is not None and b is not None and a != b:
            found.append(FieldChange(name, a, b))
    return tuple(found)


def expression_of(stored: str | None) -> str | None:
    """The canonical expression of a stored `rule_expression` (None: not JSON)."""
    try:
        value = json.loads(stored or "{}")
    except ValueError:
        return None
    return canonical_expression(value) if isinstance(value, dict) else None


def in_force(commits: Iterable[tuple[int, int]], at: datetime) -> int | None:
    """The version of a definition table in force at time `at`: its last commit at or before
    it (`commits`: (version, commit time in epoch ms)); None when the table was not there yet."""
    stamp = (at if at.tzinfo else at.replace(tzinfo=UTC)).timestamp() * 1000
    return max((v for v, t in commits if t <= stamp), default=None)
