"""The catalog as a team reads it, for the dashboard and the API (delta-rs only, no Spark):
each job with its schedule, next tick and trigger state; every rule with its definition and
its edit history; each dataset's schema per approved version with what changed from the one
before; and a search over datasets, jobs, rules and columns (a window's counts:
`window_counts`; a dataset's own facts: `dataset_facts`).

A rule's history is the `quality_rules` table's own Delta history: each commit compared with
the one before (the newest `RULE_COMMITS` of them), so an edit made with `laketx sql` shows as
surely as one made by `apply`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from lakeguard.records.checks.result_rows import SchemaSnapshotRow
from lakeguard.records.checks.rule_rows import QualityRuleRow
from lakeguard.records.definitions.jobs import JobRow
from lakeguard.records.definitions.records import RuleDef
from lakeguard.records.judged import JudgedAs, Known, canonical_expression, changed, share_text
from lakeguard.records.runs.records import JobRunRecord
from lakeguard.records.runs.rows import PipelineRunRow
from lakeguard.records.schema.fingerprint import SchemaColumn
from lakeguard.rules.quality.kinds import stored_rule
from lakeguard.store import deltars
from lakeguard.words.errors import ValidationError
from lakeguard.words.schedule import next_tick
from lakeguard.words.vocabulary import TriggerType
from openlaketx.lakehouse import Lakehouse

RULE_COMMITS = 50  # the newest commits of `quality_rules` a rule's history is read from
SEARCH_HITS = 100


@dataclass(frozen=True)
class JobEntry:
    """A job as its page shows it: who owns it, what starts it, when it next runs."""

    job_id: str
    name: str | None
    description: str | None
    owner: str | None
    enabled: bool
    schedule: str | None
    timezone: str
    triggers: tuple[str, ...]
    webhook: bool
    next_tick: datetime | None
    last_tick: datetime | None  # the last scheduled tick claimed (run or skipped)
    refused: str | None  # why the scheduler will not start it (its definitions)
    max_retries: int
    retry_delay_seconds: int
    tasks: tuple[tuple[str, str, tuple[str, ...]], ...]  # (task, dataset, depends on)
    last_run: JobRunRecord | None

    @property
    def trigger_state(self) -> str:
        """What starts the job now, in words."""
        if not self.enabled:
            return "paused"
        if self.refused:
            return "not scheduled"
        started = (["schedule"] if self.schedule else []) + list(self.triggers)
        return ", ".join(started) if started else "manual only"


def jobs(lh: Lakehouse) -> list[JobEntry]:
    """Every job of the tenant, by id."""
    registry = lh.reader.definitions.registry()
    rows = {r.job_id: r for r in lh.store.definitions(JobRow)}
    now = lh.store.now()
    found = []
    for job in sorted(registry.jobs.values(), key=lambda j: j.job_id):
        row = rows.get(job.job_id)
        refusal = registry.schedule_refusal(job.job_id)
        upcoming = None
        if job.schedule and job.enabled and refusal is None:
            try:
                upcoming = next_tick(job.schedule, job.timezone, now)
            except (ValueError, KeyError):  # refused above; a view does not fail on it
                upcoming = None
        found.append(
            JobEntry(
                job_id=job.job_id,
                name=row.job_name if row else None,
                description=row.description if row else None,
                owner=row.owner if row else None,
                enabled=job.enabled,
                schedule=job.schedule,
                timezone=job.timezone,
                triggers=tuple(job.triggers),
                webhook="webhook" in job.triggers and bool(job.webhook_secret_ref),
                next_tick=upcoming,
                last_tick=_last_tick(lh, job.job_id),
                refused=None if refusal is None else refusal.what,
                max_retries=job.max_retries,
                retry_delay_seconds=job.retry_delay_seconds,
                tasks=tuple(
                    (t.task_id, t.dataset_id, tuple(t.depends_on))
                    for t in sorted(job.tasks, key=lambda t: (t.execution_order, t.task_id))
                ),
                last_run=_last_run(lh, job.job_id),
            )
        )
    return found


def _last_tick(lh: Lakehouse, job_id: str) -> datetime | None:
    rows = lh.store.rows(
        "run_requests",
        filters=[("job_id", "=", job_id), ("trigger_type", "=", str(TriggerType.SCHEDULER))],
        columns=["scheduled_for"],
        newest_first="scheduled_for",
        limit=1,
    )
    return rows[0]["scheduled_for"] if rows else None


def _last_run(lh: Lakehouse, job_id: str) -> JobRunRecord | None:
    ended = lh.store.read(
        PipelineRunRow, filters=[("pipeline_id", "=", job_id)], newest_first="start_time", limit=1
    )
    recent = lh.reader.runs.job_runs(20)  # the runs in flight lead it
    flying = [r for r in recent if r.pipeline_id == job_id and r.end_time is None]
    if flying:
        return flying[0]
    return JobRunRecord.from_row(ended[0]) if ended else None


@dataclass(frozen=True)
class RuleEdit:
    """One commit of `quality_rules` that changed a rule: when, and what."""

    at: datetime | None
    table_version: int
    action: str  # created, changed, deactivated, reactivated
    changes: tuple[str, ...] = ()  # "threshold 10% → 50%", ...


@dataclass(frozen=True)
class RuleEntry:
    """A rule as the rules index shows it: its definition today and how it came to be."""

    rule_id: str
    dataset_id: str
    rule_type: str
    severity: str
    threshold: str | None
    asks: str | None
    description: str | None
    active: bool
    history: tuple[RuleEdit, ...] = field(default_factory=tuple)


def _judged(row: QualityRuleRow) -> JudgedAs:
    definition = RuleDef.from_row(row)
    try:
        rule = stored_rule(definition)
    except ValidationError:  # a stored row that does not validate: shown as it is
        return JudgedAs(
            severity=row.severity,
            threshold=None,
            expression=row.rule_expression,
            asks=None,
            known=Known.HISTORY,
        )
    return JudgedAs(
        severity=str(rule.severity),
        threshold=float(rule.threshold),
        expression=canonical_expression(rule.parameters()),
        asks=rule.explain(),
        known=Known.HISTORY,
    )


def _edit(
    before: QualityRuleRow | None, after: QualityRuleRow, version: int, at: datetime | None
) -> RuleEdit | None:
    if before is None:
        return RuleEdit(at, version, "created" if after.active else "created inactive")
    if before.active != after.active:
        return RuleEdit(at, version, "reactivated" if after.active else "deactivated")
    fields = [c.text() for c in changed(_judged(before), _judged(after))]
    if before.description != after.description:
        fields.append("description changed")
    return RuleEdit(at, version, "changed", tuple(fields)) if fields else None


def rule_history(lh: Lakehouse, last: int = RULE_COMMITS) -> dict[tuple[str, str], list[RuleEdit]]:
    """Each rule's edits, oldest first, by (dataset, rule): the newest `last` commits of
    `quality_rules`, each compared with the one before it."""
    store = lh.store
    commits = sorted(
        (int(h["version"]), h.get("timestamp"))
        for h in deltars.history("quality_rules", store.location("quality_rules"), limit=None)
    )[-(last + 1) :]
    edits: dict[tuple[str, str], list[RuleEdit]] = {}
    previous: dict[tuple[str, str], QualityRuleRow] | None = None
    for version, stamp in commits:
        at = None if stamp is None else datetime.fromtimestamp(int(stamp) / 1000, UTC)
        rows = store.definitions(QualityRuleRow, version=version, active_only=False)
        now = {(r.dataset_id, r.rule_id): r for r in rows}
        if previous is not None or version == 0:
            for key, row in now.items():
                edit = _edit((previous or {}).get(key), row, version, at)
                if edit is not None:
                    edits.setdefault(key, []).append(edit)
        previous = now
    return edits


def rules(lh: Lakehouse) -> list[RuleEntry]:
    """Every rule of the tenant (inactive ones too), by dataset and id, with its history."""
    history = rule_history(lh)
    found = []
    for row in lh.store.definitions(QualityRuleRow, active_only=False):
        judged = _judged(row)
        found.append(
            RuleEntry(
                rule_id=row.rule_id,
                dataset_id=row.dataset_id,
                rule_type=row.rule_type,
                severity=judged.severity or row.severity,
                threshold=share_text(judged.threshold),
                asks=judged.asks,
                description=row.description,
                active=row.active,
                history=tuple(history.get((row.dataset_id, row.rule_id), ())),
            )
        )
    return sorted(found, key=lambda r: (r.dataset_id, r.rule_id))


@dataclass(frozen=True)
class SchemaVersion:
    """An approved version's schema and what changed from the version before it."""

    version: int
    promoted_at: datetime | None
    columns: tuple[SchemaColumn, ...] | None  # None: not captured
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    retyped: tuple[str, ...] = ()  # "amount: int → bigint"
    nullability: tuple[str, ...] = ()  # "amount: now nullable"


def _columns(row: SchemaSnapshotRow) -> tuple[SchemaColumn, ...]:
    return tuple(SchemaColumn(**c) for c in json.loads(row.schema_json))


def schema_versions(lh: Lakehouse, dataset_id: str) -> list[SchemaVersion]:
    """The dataset's approved versions, newest first, each with its schema (from the run that
    made it) and its difference from the version before."""
    lh.dataset(dataset_id)
    versions = sorted(lh.reader.versions.versions(dataset_id), key=lambda v: v.version)
    runs = [v.run_id for v in versions]
    snapshots = (
        lh.store.read(
            SchemaSnapshotRow, filters=[("dataset_id", "=", dataset_id), ("run_id", "in", runs)]
        )
        if runs
        else []
    )
    by_run = {s.run_id: _columns(s) for s in sorted(snapshots, key=lambda s: s.captured_at)}
    found: list[SchemaVersion] = []
    before: dict[str, SchemaColumn] | None = None
    for v in versions:
        columns = by_run.get(v.run_id)
        if columns is None:
            found.append(SchemaVersion(v.version, v.promoted_at, None))
            continue
        now = {c.name: c for c in columns}
        if before is None:
            found.append(SchemaVersion(v.version, v.promoted_at, columns))
        else:
            kept = [n for n in now if n in before]
            found.append(
                SchemaVersion(
                    v.version,
                    v.promoted_at,
                    columns,
                    added=tuple(n for n in now if n not in before),
                    removed=tuple(n for n in before if n not in now),
                    retyped=tuple(
                        f"{n}: {before[n].type} → {now[n].type}"
                        for n in kept
                        if before[n].type != now[n].type
                    ),
                    nullability=tuple(
                        f"{n}: now {'nullable' if now[n].nullable else 'not null'}"
                        for n in kept
                        if before[n].nullable != now[n].nullable
                    ),
                )
            )
        before = now
    return list(reversed(found))


@dataclass(frozen=True)
class SearchHit:
    """One thing a search found: its kind, its id, where it is shown, and why it matched."""

    kind: str  # dataset, job, rule, column
    id: str
    href: str
    matched: str  # the text that matched


def _match(words: list[str], texts: Iterable[str | None]) -> str | None:
    """The first of `texts` holding every word (case-folded), or None."""
    for text in texts:
        if text and all(w in text.casefold() for w in words):
            return text
    return None


def search(lh: Lakehouse, query: str, limit: int = SEARCH_HITS) -> list[SearchHit]:
    """Datasets, jobs, rules and columns whose ids, names, descriptions, owners, domains, tags
    or column names hold every word of `query` (case-folded)."""
    words = [w.casefold() for w in query.split()]
    if not words:
        return []
    registry = lh.reader.definitions.registry()
    hits: list[SearchHit] = []
    for ds in sorted(registry.datasets.values(), key=lambda d: d.dataset_id):
        texts = [ds.dataset_id, ds.dataset_name, ds.description, ds.owner, ds.domain, *ds.tags]
        if (text := _match(words, texts)) is not None:
            hits.append(SearchHit("dataset", ds.dataset_id, f"/datasets/{ds.dataset_id}", text))
    job_rows = {r.job_id: r for r in lh.store.definitions(JobRow)}
    for job_id in sorted(registry.jobs):
        row = job_rows.get(job_id)
        texts = [job_id, *((row.job_name, row.description, row.owner) if row else ())]
        if (text := _match(words, texts)) is not None:
            hits.append(SearchHit("job", job_id, f"/jobs/{job_id}", text))
    for dataset_id, found in sorted(registry.rules_by_dataset.items()):
        for rule in found:
            texts = [rule.rule_id, rule.rule_type, rule.description]
            if (text := _match(words, texts)) is not None:
                hits.append(
                    SearchHit("rule", rule.rule_id, f"/rules#{dataset_id}.{rule.rule_id}", text)
                )
    for dataset_id, columns in sorted(_latest_columns(lh, list(registry.datasets)).items()):
        for column in columns:
            if _match(words, [column.name]) is not None:
                hits.append(
                    SearchHit(
                        "column",
                        f"{dataset_id}.{column.name}",
                        f"/datasets/{dataset_id}/schema",
                        f"{column.name} {column.type}",
                    )
                )
    return hits[:limit]


def _latest_columns(lh: Lakehouse, datasets: list[str]) -> dict[str, tuple[SchemaColumn, ...]]:
    """Each dataset's columns in its latest approved version (one read of each table)."""
    runs = [v.run_id for d in datasets if (v := lh.reader.versions.approved(d)) is not None]
    if not runs:
        return {}
    snapshots = lh.store.read(SchemaSnapshotRow, filters=[("run_id", "in", runs)])
    return {s.dataset_id: _columns(s) for s in sorted(snapshots, key=lambda s: s.captured_at)}
