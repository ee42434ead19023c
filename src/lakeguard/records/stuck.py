"""Whether a dataset is stuck: blocked again and again on the same input (pure).

A blocked batch is not consumed, so the next run reads the same input (and more) and, unless
the data or the rules changed, blocks again: the pipeline waits for someone. This module reads
a dataset's decisions, newest last, and says so: how many times in a row, since when, on which
input, and whether for the same reason.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from lakeguard.records.evidence import Evidence

if TYPE_CHECKING:  # the store's reader imports this module: rows are types here, not imports
    from lakeguard.records.decisions.rows import DecisionRow

# Blocked this many times in a row on the same start of input: stuck, not just blocked once.
STUCK_AFTER = 2


@dataclass(frozen=True, kw_only=True)
class Blocked:
    """One decision, as much of it as stuck detection needs."""

    allowed: bool
    reason: str
    evaluated_at: datetime
    batch: str | None = None  # the batch fingerprint (evidence `input`)

    @classmethod
    def from_row(cls, row: DecisionRow) -> Blocked:
        batch = Evidence.from_json(row.evidence).input
        return cls(
            allowed=row.allowed,
            reason=row.reason,
            evaluated_at=row.evaluated_at,
            batch=batch if isinstance(batch, str) else None,
        )


@dataclass(frozen=True, kw_only=True)
class Stuck:
    times: int  # blocked decisions in a row, up to the latest
    since: datetime
    inputs: str  # what they were blocked on, e.g. "bronze_x v1..v2"
    same_input: bool  # every one read exactly the same batch
    same_reason: bool
    reason: str  # the latest reason

    def summary(self) -> str:
        """One line for `status` and `explain`."""
        each = "each time" if self.same_input else "(the input grows, its start stays)"
        why = "same reason since the first time" if self.same_reason else "the reason changed"
        return (
            f"stuck: blocked {self.times} times in a row since "
            f"{self.since:%Y-%m-%d %H:%M:%S} on {self.inputs} {each}; {why}"
        )

    def fix(self) -> str:
        return (
            "every run reads this input again and blocks again: correct the rows upstream "
            "(a later delivery that fixes them is read with them) or change the rule or "
            "policy that blocks (see below), then run again"
        )


def _range(batch: str | None) -> tuple[str, dict[str, int]] | None:
    """A derived batch's parents: (text such as "bronze_x v1..v2", where each one started)."""
    try:
        spans = json.loads(batch or "")
    except ValueError:
        return None
    if not isinstance(spans, dict) or not spans:
        return None
    parts, starts = [], {}
    for parent, span in sorted(spans.items()):
        if not (isinstance(span, list) and len(span) == 2):
            return None
        first, last = int(span[0]) + 1, int(span[1])
        parts.append(f"{parent} v{first}" if first == last else f"{parent} v{first}..v{last}")
        starts[parent] = first
    return ", ".join(parts), starts


def _start(batch: str | None) -> object:
    """What must stay the same for a blocked run to be "the same input again": a derived
    batch's first parent versions (it may have grown since), else the whole batch."""
    parsed = _range(batch)
    return parsed[1] if parsed else batch


def stuck(decisions: Sequence[Blocked], after: int = STUCK_AFTER) -> Stuck | None:
    """The dataset's trailing run of blocked decisions on the same input start, if it has
    at least `after` of them (decisions oldest first)."""
    streak: list[Blocked] = []
    for decision in reversed(decisions):
        if decision.allowed:
            break
        if streak and _start(decision.batch) != _start(streak[-1].batch):
            break
        streak.append(decision)
    if len(streak) < after:
        return None
    latest, first = streak[0], streak[-1]
    parsed = _range(latest.batch)
    return Stuck(
        times=len(streak),
        since=first.evaluated_at,
        inputs=parsed[0] if parsed else "the same source batch",
        same_input=len({d.batch for d in streak}) == 1,
        same_reason=len({d.reason for d in streak}) == 1,
        reason=latest.reason,
    )
