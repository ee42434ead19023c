"""What a dataset's quarantine holds: each held batch once, and none promoted since (pure).

A blocked batch is moved into `quarantine.<dataset>` under `run-<attempt>-batch/` (the part of
an allowed batch set aside, its malformed rows, under `run-<attempt>-malformed/`). A held
batch takes nothing from its sources, so the next attempt reads it again: retried, it would be
held once per attempt; promoted at last, it would stay in quarantine beside the version that
holds its rows. So a hold counts until a later attempt *covers* it, that is read every piece
it read (`Evidence.read`: each file unchanged, each parent version range, or the source's
whole fingerprint where its read has no finer pieces; decisions recorded before the pieces
were, by an equal batch fingerprint):

- a later hold that covers it supersedes it: the batch is in quarantine once, as held last;
- a later promotion that covers it releases it: its rows are in the approved version now.

A batch a later attempt did not read again (its files taken away, or put aside as wholly
malformed) stays held. `plan` says what each hold is; the engine removes superseded and
released holds from the table (`openlaketx/runner/quarantine.py`), `laketx migrate` does so
for a store written before, and `verify` reports any left (invariant 6).
"""

from __future__ import annotations

import json
from collections.abc import Container, Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from lakeguard.records.evidence import Evidence
from lakeguard.words.hashing import digest

if TYPE_CHECKING:
    from lakeguard.records.decisions.rows import DecisionRow

BATCH, MALFORMED = "batch", "malformed"  # a held batch, and the part of a promoted one set aside
_EXACT, _RANGE, _MARK = "x", "r", "m"


def mark_piece(source_object_id: str, kind: str, key: str, state: str) -> str:
    """A piece of a batch: one thing its source read (a file, as it was)."""
    return f"{_MARK}|{source_object_id}|{kind}|{digest(key + chr(0) + state, 16)}"


def exact_piece(scope: str, fingerprint: str) -> str:
    """A piece of a batch that only the same read again covers (a watermark's, a version's)."""
    return f"{_EXACT}|{scope}|{digest(fingerprint, 16)}"


def range_piece(parent: str, consumed: int, last: int) -> str:
    """A piece of a derived batch: its parent's versions after `consumed`, up to `last`."""
    return f"{_RANGE}|{parent}|{int(consumed)}|{int(last)}"


def derived_pieces(fingerprint: str) -> tuple[str, ...]:
    """The pieces of a derived batch from its fingerprint ({parent: [consumed, last]}), or the
    fingerprint whole when it is not that shape (a SQL model's)."""
    try:
        value = json.loads(fingerprint)
    except ValueError:
        value = None
    if isinstance(value, dict) and value and all(_pair(v) for v in value.values()):
        return tuple(range_piece(p, v[0], v[1]) for p, v in sorted(value.items()))
    return (exact_piece("batch", fingerprint),)


def _pair(value: object) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(isinstance(x, int) for x in value)


def covers(later: Iterable[str], earlier: Iterable[str]) -> bool:
    """Whether a batch that read `later` read every piece of one that read `earlier` (a
    parent range within a wider one of the same parent counts; nothing covers no piece)."""
    have = set(later)
    ranges = [p.split("|") for p in have if p.startswith(_RANGE + "|")]
    wanted = list(earlier)
    if not wanted:
        return False
    for piece in wanted:
        if piece in have:
            continue
        parts = piece.split("|")
        if parts[0] != _RANGE or not any(
            r[1] == parts[1] and int(r[2]) <= int(parts[2]) and int(r[3]) >= int(parts[3])
            for r in ranges
        ):
            return False
    return True


@dataclass(frozen=True, kw_only=True, slots=True)
class Judged:
    """What the plan reads of a decision: when, whether allowed, what its batch read."""

    run_id: str
    evaluated_at: datetime
    allowed: bool
    batch: str | None  # the batch's fingerprint
    pieces: tuple[str, ...] = ()

    @classmethod
    def of(cls, run_id: str, evaluated_at: datetime, allowed: bool, evidence: Evidence) -> Judged:
        return cls(
            run_id=run_id,
            evaluated_at=evaluated_at,
            allowed=allowed,
            batch=evidence.input,
            pieces=evidence.read,
        )

    @classmethod
    def from_row(cls, row: DecisionRow) -> Judged:
        return cls.of(row.run_id, row.evaluated_at, row.allowed, Evidence.from_json(row.evidence))

    def covers(self, held: Judged) -> bool:
        """Whether this attempt read everything the held one did."""
        if self.pieces and held.pieces:
            return covers(self.pieces, held.pieces)
        # recorded before pieces were: only the very same batch
        return held.batch not in (None, "", "none") and self.batch == held.batch


class HoldState(StrEnum):
    HELD = "held"  # in quarantine
    SUPERSEDED = "superseded"  # held again since, by an attempt that read all it read
    RELEASED = "released"  # promoted since, by an attempt that read all it read


@dataclass(frozen=True, kw_only=True, slots=True)
class Hold:
    """One held batch: what became of it, the attempt that did it, and every attempt that held
    the same batch up to this one (oldest first, this one last)."""

    run_id: str
    evaluated_at: datetime
    state: HoldState
    by: str | None = None
    runs: tuple[str, ...] = ()

    @property
    def counts(self) -> bool:
        """Whether its rows count in quarantine."""
        return self.state == HoldState.HELD


def plan(decisions: Iterable[Judged], present: Container[str]) -> dict[str, Hold]:
    """Each held decision's batch, by attempt id. `present`: the attempts whose batch is in
    the quarantine table; only a hold that is there supersedes an earlier one (a hold whose
    move never happened leaves the earlier one where it is)."""
    ordered = sorted(decisions, key=lambda d: d.evaluated_at)
    found: dict[str, Hold] = {}
    chains: dict[str, tuple[str, ...]] = {}
    open_holds: list[Judged] = []
    for decision in ordered:
        still = []
        for held in open_holds:
            if not decision.covers(held):
                still.append(held)
                continue
            if decision.allowed:
                state = HoldState.RELEASED
            elif decision.run_id in present:
                state = HoldState.SUPERSEDED
                chains[decision.run_id] = (*chains.get(decision.run_id, ()), *chains[held.run_id])
            else:
                still.append(held)
                continue
            found[held.run_id] = Hold(
                run_id=held.run_id,
                evaluated_at=held.evaluated_at,
                state=state,
                by=decision.run_id,
                runs=chains[held.run_id],
            )
        open_holds = still
        if not decision.allowed:
            chains[decision.run_id] = (*chains.get(decision.run_id, ()), decision.run_id)
            open_holds.append(decision)
    for held in open_holds:
        found[held.run_id] = Hold(
            run_id=held.run_id,
            evaluated_at=held.evaluated_at,
            state=HoldState.HELD,
            runs=chains[held.run_id],
        )
    return found


@dataclass(frozen=True, kw_only=True, slots=True)
class HeldPart:
    """One attempt's part of a quarantine table: its files and their rows."""

    run_id: str
    part: str  # BATCH (held whole) or MALFORMED (set aside from a promoted batch)
    rows: int
    files: tuple[str, ...] = ()


def unwanted(parts: Iterable[HeldPart], holds: dict[str, Hold]) -> list[HeldPart]:
    """The held batches a quarantine table still has that the plan says left it (superseded or
    released); a set-aside part, or a batch with no decision, stays."""
    return [
        p for p in parts if p.part == BATCH and p.run_id in holds and not holds[p.run_id].counts
    ]
