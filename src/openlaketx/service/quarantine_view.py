"""A dataset's quarantine as the dashboard and the API show it: by batch and run, each held
batch once (lakeguard.records.quarantine), and a sample of rows, each saying why it is there.

A batch held again, or promoted since, is not counted even before the table is settled (an
older store, a settling that failed): what the table still holds of it is listed as such. The
batches settled away recently are listed too, from the table's own commits, with the attempt
that held them again or promoted them. delta-rs only: no Spark.
"""

from __future__ import annotations

import json
from datetime import datetime

import pyarrow as pa
from deltalake import QueryBuilder
from pydantic import BaseModel, ConfigDict

from lakeguard.records.quarantine import BATCH, HoldState
from lakeguard.rules.quality.evaluate import FAILED_RULES
from lakeguard.words.vocabulary import ENGINE_PREFIX
from openlaketx import storage
from openlaketx.lakehouse import Lakehouse
from openlaketx.runner import quarantine as ledger
from openlaketx.runner.batch import RUN_COL
from openlaketx.tables import dataset_location, quarantine_name

QUARANTINE_SAMPLE = 20
SETTLED_SHOWN = 20  # the table's newest commits looked at for batches settled away


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class QuarantinedBatch(_Model):
    """One attempt's part of the quarantine: a batch held whole, or the rows set aside from a
    promoted one; or a batch that left it (counted False)."""

    run_id: str  # the attempt that moved it there
    part: str  # batch (held whole) or malformed (set aside from a promoted batch)
    rows: int | None  # None: it left the table, its rows are not counted
    state: str  # held, set aside, superseded (held again) or released (promoted since)
    counted: bool
    held_by: list[str]  # every attempt that held this batch, oldest first
    by: str | None  # the attempt that held it again or promoted it
    evaluated_at: datetime | None  # its decision's
    decision: str | None  # its decision's reason


class QuarantinedRow(_Model):
    """One quarantined row: why it is there (the rules it broke, or held with its batch and
    that batch's decision), and its own columns (the engine's left out; an unparseable line
    keeps its text in `_corrupt_record`)."""

    run_id: str | None
    broken_rules: list[str]
    why: str
    values: dict[str, object]


class QuarantineSample(_Model):
    dataset_id: str
    rows: int  # each held batch once, none promoted since
    batches: list[QuarantinedBatch]
    sample: list[QuarantinedRow]


def quarantine(lh: Lakehouse, dataset_id: str, limit: int = QUARANTINE_SAMPLE) -> QuarantineSample:
    """The dataset's quarantine by batch and run, and the newest `limit` rows it counts."""
    lh.dataset(dataset_id)
    location = dataset_location(lh.warehouse, quarantine_name(dataset_id))
    state = ledger.settle(
        location, lambda held: lh.reader.decisions.judgments(dataset_id, held), apply=False
    )
    counted = state.counted()
    runs = sorted({p.run_id for p in state.parts})
    decisions = {d.run_id: d for d in lh.reader.decisions.decisions(run_ids=runs)}
    settled = _settled(location, {p.run_id for p in state.parts})
    replaced = {b.run_id: b.by for b in settled if b.state == HoldState.SUPERSEDED}
    batches = []
    for part in state.parts:
        hold = state.holds.get(part.run_id) if part.part == BATCH else None
        decision = decisions.get(part.run_id)
        runs = list(hold.runs) if hold else [part.run_id]
        batches.append(
            QuarantinedBatch(
                run_id=part.run_id,
                part=part.part,
                rows=part.rows,
                state=str(hold.state) if hold else ("held" if part.part == BATCH else "set aside"),
                counted=part in counted,
                # the attempts that held it before and left the table already, then the rest
                held_by=[*_before(runs[0], replaced), *runs],
                by=hold.by if hold else None,
                evaluated_at=decision.evaluated_at if decision else None,
                decision=decision.reason if decision else None,
            )
        )
    batches += settled
    reasons = {r: d.reason for r, d in decisions.items()}
    return QuarantineSample(
        dataset_id=dataset_id,
        rows=sum(p.rows for p in counted),
        batches=batches,
        sample=_sample(location, sorted({p.run_id for p in counted}), reasons, limit),
    )


def _before(run_id: str, replaced: dict[str, str | None]) -> list[str]:
    """The attempts that held a batch before `run_id` did, oldest first, as the table's
    commits name them (each one replaced by the next)."""
    found: list[str] = []
    current = run_id
    while True:
        earlier = sorted(r for r, by in replaced.items() if by == current and r not in found)
        if not earlier:
            return found
        found = [earlier[0], *found]
        current = earlier[0]


def _settled(location: str, still: set[str]) -> list[QuarantinedBatch]:
    """The batches the table's newest commits removed (held again, or promoted since)."""
    if not storage.is_delta_table(location):
        return []
    found = []
    for commit in storage.delta_table(location).history(SETTLED_SHOWN):
        try:
            said = json.loads(commit.get("userMetadata") or "{}").get(ledger.MARKER, {})
        except (ValueError, AttributeError):
            continue
        if not isinstance(said, dict):
            continue
        for state in (HoldState.SUPERSEDED, HoldState.RELEASED):
            for run_id, by in (said.get(str(state)) or {}).items():
                if run_id not in still:
                    found.append(
                        QuarantinedBatch(
                            run_id=run_id,
                            part=BATCH,
                            rows=None,
                            state=str(state),
                            counted=False,
                            held_by=[run_id],
                            by=by,
                            evaluated_at=None,
                            decision=None,
                        )
                    )
    return found


def _sample(
    location: str, runs: list[str], reasons: dict[str, str], limit: int
) -> list[QuarantinedRow]:
    if not runs:
        return []
    table = storage.delta_table(location)
    names = {f.name for f in table.schema().fields}
    query = QueryBuilder().register("q", table)
    where = ""
    if RUN_COL in names:  # only the rows that count: a batch held again is there once
        listed = ", ".join("'" + r.replace("'", "''") + "'" for r in runs)
        where = f' WHERE "{RUN_COL}" IN ({listed})'
    rows = pa.table(query.execute(f"SELECT * FROM q{where} LIMIT {int(limit)}").read_all())
    found = []
    for row in rows.to_pylist():
        run_id = row.get(RUN_COL)
        broken = [str(r) for r in row.get(FAILED_RULES) or []]
        if broken:
            why = "broke " + ", ".join(broken)
        else:
            reason = reasons.get(str(run_id))
            why = "held with its batch" + (f": {reason}" if reason else "")
        found.append(
            QuarantinedRow(
                run_id=None if run_id is None else str(run_id),
                broken_rules=broken,
                why=why,
                values={k: _text(v) for k, v in row.items() if not k.startswith(ENGINE_PREFIX)},
            )
        )
    return found


def _text(value: object) -> object:
    if value is None or isinstance(value, int | float | str | bool):
        return value
    return str(value)
