"""The read side of the store: named queries that return typed records (no Spark).

The engine, the gate and the facade read metadata only through here; every filter on a
metadata table lives in this module (or in the store beneath it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime
from typing import Any, TypeVar

from lakeguard.audit import AuditData
from lakeguard.commits import Commit, history
from lakeguard.errors import NotRegisteredError, ValidationError
from lakeguard.explain import advise
from lakeguard.policy.sla import sla_hours
from lakeguard.progress import SourceProgress, fold
from lakeguard.quality.kinds import stored_rule
from lakeguard.quality.profiling import FULL_METRICS, LastProfiles
from lakeguard.schema.fingerprint import SchemaColumn
from lakeguard.shapes import StoredRow
from lakeguard.store import deltars, joins, leases
from lakeguard.store.definitions import load_table_defs
from lakeguard.store.records import (
    ApprovedVersion,
    DatasetDef,
    DatasetStatus,
    DecisionRecord,
    InFlightRun,
    JobRunRecord,
    Lease,
    PolicyDef,
    RuleDef,
    RuleResult,
    SchemaChange,
)
from lakeguard.store.registry import REGISTRY_TABLES, Registry
from lakeguard.store.runtime_rows import (
    DataVersionRow,
    DecisionRow,
    DqResultRow,
    PipelineRunRow,
    RuleResultRow,
    RunEventRow,
    RunHistoryRow,
    RunRequestRow,
    SchemaChangeRow,
    SchemaSnapshotRow,
    SourceProgressRow,
    StepLogRow,
)
from lakeguard.store.snapshots import SNAPSHOTS
from lakeguard.store.store import MetadataStore
from lakeguard.stuck import Blocked, Stuck, stuck
from lakeguard.trust import RECENT, Lineage, TrustScore, trust_score
from lakeguard.vocabulary import IN_FLIGHT, AttemptStatus, EventStatus, Layer

_LAYER_ORDER = {layer.value: layer.rank for layer in Layer}

T = TypeVar("T")


def _latest(rows: list[StoredRow], key: str, order: str) -> dict[str, StoredRow]:
    """The row with the greatest `order` per `key` value (of a few columns read: a projection
    is a plain row)."""
    best: dict[str, StoredRow] = {}
    for row in rows:
        current = best.get(row[key])
        if current is None or row[order] > current[order]:
            best[row[key]] = row
    return best


def _trailing_blocked(decisions: list[DecisionRow]) -> dict[str, list[Blocked]]:
    """Each dataset's decisions since its last allowed one (that one included), oldest first:
    all that stuck detection looks at, without parsing the evidence of every decision ever."""
    by_dataset: dict[str, list[DecisionRow]] = {}
    for row in sorted(decisions, key=lambda r: r.evaluated_at):
        by_dataset.setdefault(row.dataset_id, []).append(row)
    trailing = {}
    for dataset_id, rows in by_dataset.items():
        start = max((i for i, r in enumerate(rows) if r.allowed), default=0)
        trailing[dataset_id] = [Blocked.from_row(r) for r in rows[start:]]
    return trailing


D = TypeVar("D", DqResultRow, SchemaChangeRow, DataVersionRow, DecisionRow)


def _by_dataset(rows: list[D]) -> dict[str, list[D]]:
    found: dict[str, list[D]] = {}
    for row in rows:
        found.setdefault(row.dataset_id, []).append(row)
    return found


def _summary(found: Stuck | None) -> str | None:
    return found.summary() if found else None


class StoreReader:
    """Read-only access to one tenant's metadata (sqlmesh's StateReader, for LakeGuard)."""

    def __init__(self, store: MetadataStore) -> None:
        self._store = store

    @property
    def tenant(self) -> str:
        return self._store.tenant

    # -- definitions ----------------------------------------------------------------------
    def registry(self, as_of: datetime | None = None) -> Registry:
        """Every active definition a run needs, read concurrently, as one snapshot (of the
        definitions in force at time `as_of`: Delta time travel on the definition tables)."""

        def active(table: str) -> list[StoredRow]:
            return self._store.active_definitions(table, as_of=as_of)

        with ThreadPoolExecutor(max_workers=4) as pool:
            tables = pool.map(active, REGISTRY_TABLES)
            return Registry.from_rows(dict(zip(REGISTRY_TABLES, tables, strict=True)))

    def datasets(self) -> list[DatasetDef]:
        return [DatasetDef.from_row(r) for r in self._store.active_definitions("dataset_registry")]

    def dataset(self, dataset_id: str) -> DatasetDef:
        rows = self._store.active_definitions("dataset_registry", [("dataset_id", "=", dataset_id)])
        if not rows:
            raise NotRegisteredError(
                f"dataset {dataset_id!r} is not registered",
                where="dataset_registry",
                fix="apply a metadata document that declares it",
            )
        return DatasetDef.from_row(rows[0])

    def stored_definitions(self, tables: Sequence[str]) -> dict[str, list[StoredRow]]:
        """This tenant's stored definition rows (active or not), without `tenant_id`: plain
        rows, table by table, as `export` writes them back into a document and `recheck`
        checks them (definition tables have no row class)."""

        def read(table: str) -> list[StoredRow]:
            rows = self._store.rows(table)
            for row in rows:
                row.pop("tenant_id", None)
            return rows

        with ThreadPoolExecutor(max_workers=4) as pool:
            return dict(zip(tables, pool.map(read, tables), strict=True))

    # -- versions and decisions -----------------------------------------------------------
    def versions(
        self, dataset_id: str, *, after: int = 0, upto: int | None = None
    ) -> list[ApprovedVersion]:
        """The dataset's approved versions above `after` and up to `upto`, oldest first (the
        bounds are filters of the read: a step asks only for what it has not consumed)."""
        filters: list[tuple[str, str, Any]] = [("dataset_id", "=", dataset_id)]
        if after > 0:
            filters.append(("version", ">", after))
        if upto is not None:
            filters.append(("version", "<=", upto))
        rows = self._store.read(DataVersionRow, filters=filters)
        return sorted((ApprovedVersion.from_row(r) for r in rows), key=lambda v: v.version)

    def newest(self, dataset_id: str, count: int) -> list[ApprovedVersion]:
        """The dataset's newest `count` approved versions, oldest first (DataFusion picks
        them: a volume policy asks on every step, and a dataset's versions only grow)."""
        rows = self._store.read(
            DataVersionRow,
            filters=[("dataset_id", "=", dataset_id)],
            newest_first="version",
            limit=count,
        )
        return sorted((ApprovedVersion.from_row(r) for r in rows), key=lambda v: v.version)

    def approved(self, dataset_id: str, version: int | None = None) -> ApprovedVersion | None:
        """The latest approved version of a dataset (or approved `version`); None if none.
        DataFusion picks the row: every step asks, and a dataset's versions only grow."""
        filters: list[tuple[str, str, Any]] = [("dataset_id", "=", dataset_id)]
        if version is not None:
            filters.append(("version", "=", version))
        rows = self._store.read(DataVersionRow, filters=filters, newest_first="version", limit=1)
        return ApprovedVersion.from_row(rows[0]) if rows else None

    def approved_schema(self, dataset_id: str) -> list[SchemaColumn] | None:
        """The schema of the dataset's latest approved version (None: none, or not captured)."""
        latest = self.approved(dataset_id)
        if latest is None:
            return None
        rows = self._store.read(
            SchemaSnapshotRow,
            filters=[("dataset_id", "=", dataset_id), ("run_id", "=", latest.run_id)],
        )
        if not rows:
            return None
        return [SchemaColumn(**c) for c in json.loads(rows[0].schema_json)]

    def run_started(self, run_id: str) -> list[datetime]:
        """When the job run of dataset attempt `run_id` started, then when the attempt did
        (the times its definitions were read around); empty when neither is recorded."""
        attempt = self._store.read(RunHistoryRow, filters=[("run_id", "=", run_id)])
        if not attempt:
            return []
        job = self._store.rows(
            "pipeline_runs",
            filters=[("pipeline_logging_id", "=", attempt[0].pipeline_logging_id)],
            columns=["start_time"],
        )
        return [r["start_time"] for r in job] + [attempt[0].start_time]

    def last_profiles(self, dataset_id: str) -> LastProfiles:
        """The dataset's last approved batch's profile (over the last approved full profile's
        metrics), when the last full profile ran, and how many batches were profiled since.

        Every step asks: only the rows from the last approved full profile on are read (all of
        them when there is none). Everything the answer needs is there, since a run's rows share
        one `profiled_at`: that run, the newest full profile and the runs since, the last
        approved run.
        """
        # DataFusion picks when the last approved full profile ran and marks each row's run
        # approved or not: only that window's rows cross into Python, not every approved run id
        since = joins.approved_full_profile_at(self._store, dataset_id, sorted(FULL_METRICS))
        rows = joins.profiles_since(self._store, dataset_id, since)
        full = [r for r in rows if r["metric"] in FULL_METRICS]
        full_at = max((r["profiled_at"] for r in full), default=None)
        since_full = {
            r["run_id"] for r in rows if full_at is not None and r["profiled_at"] > full_at
        }
        kept = [r for r in rows if r["approved"]]

        def last_run(candidates: list[StoredRow]) -> str | None:
            last = max(candidates, key=lambda r: r["profiled_at"], default=None)
            return None if last is None else str(last["run_id"])

        runs = (last_run([r for r in kept if r["metric"] in FULL_METRICS]), last_run(kept))
        latest: dict[tuple[str, str], str | None] = {}
        for run in runs:  # the last full profile's metrics, then the last profile's over them
            for r in kept:
                if r["run_id"] == run:
                    latest[(r["column_name"], r["metric"])] = r["value"]
        return LastProfiles(latest, full_at=full_at, batches_since_full=len(since_full))

    def all_versions(self) -> list[ApprovedVersion]:
        rows = self._store.read(DataVersionRow)
        return sorted(
            (ApprovedVersion.from_row(r) for r in rows),
            key=lambda v: (v.promoted_at or datetime.min, v.dataset_id, v.version),
        )

    def rule_results(self, run_ids: Sequence[str]) -> dict[str, tuple[RuleResult, ...]]:
        """Rule outcomes of the given dataset attempts, by run id, in rule order."""
        if not run_ids:
            return {}
        rows = self._store.read(RuleResultRow, filters=[("run_id", "in", list(run_ids))])
        found: dict[str, list[RuleResult]] = {}
        for row in sorted(rows, key=lambda r: (r.executed_at, r.rule_id)):
            found.setdefault(row.run_id, []).append(RuleResult.from_row(row))
        return {k: tuple(v) for k, v in found.items()}

    def decisions(
        self,
        *,
        dataset_id: str | None = None,
        run_ids: Sequence[str] | None = None,
        last: int | None = None,
    ) -> list[DecisionRecord]:
        """Gate decisions (oldest first) of a dataset or of some attempts, with rule results;
        only the newest `last` of them when given (only their rule results are read)."""
        filters: list[tuple[str, str, Any]] = []
        if dataset_id is not None:
            filters.append(("dataset_id", "=", dataset_id))
        if run_ids is not None:
            if not run_ids:
                return []
            filters.append(("run_id", "in", list(run_ids)))
        rows = sorted(self._store.read(DecisionRow, filters=filters), key=lambda r: r.evaluated_at)
        if last is not None:
            rows = rows[-last:] if last > 0 else []
        results = self.rule_results([r.run_id for r in rows])
        return [DecisionRecord.from_row(r, results.get(r.run_id, ())) for r in rows]

    def latest_decision(self, dataset_id: str, run_id: str | None = None) -> DecisionRecord | None:
        """A dataset's latest decision (or the one of attempt `run_id`), with everything that
        took part: rule outcomes, checks and policies, schema changes, the version made."""
        filters: list[tuple[str, str, Any]] = [("dataset_id", "=", dataset_id)]
        if run_id is not None:
            filters.append(("run_id", "=", run_id))
        rows = self._store.read(DecisionRow, filters=filters)
        if not rows:
            return None
        latest = max(rows, key=lambda r: r.evaluated_at)
        if run_id is not None:  # the dataset's whole record says whether it is stuck now
            rows = self._store.read(DecisionRow, filters=filters[:1])
        attempt = latest.run_id
        results = self.rule_results([attempt])
        changes = self._store.read(SchemaChangeRow, filters=[("run_id", "=", attempt)])
        version = next((v.version for v in self.versions(dataset_id) if v.run_id == attempt), None)
        record = DecisionRecord.from_row(latest, results.get(attempt, ()))
        decided = replace(
            record,
            schema_changes=tuple(SchemaChange.from_row(c) for c in changes),
            version=version,
        )
        score = self.trust([dataset_id])[dataset_id]
        blocked = stuck(sorted((Blocked.from_row(r) for r in rows), key=lambda b: b.evaluated_at))
        advice = advise(decided)
        if blocked is not None and not decided.allowed:
            advice.insert(0, blocked.fix())
        return replace(
            decided,
            advice=tuple(advice),
            trust=score,
            stuck=blocked.summary() if blocked else None,
            asks=self._rule_texts(dataset_id),
        )

    def _rule_texts(self, dataset_id: str) -> dict[str, str]:
        """What each of the dataset's rules asks, in words (rules that no longer parse say
        nothing: their definition is reported where it is compiled)."""
        rows = self._store.active_definitions("quality_rules", [("dataset_id", "=", dataset_id)])
        texts = {}
        for row in rows:
            try:
                texts[row["rule_id"]] = stored_rule(RuleDef.from_row(row)).explain()
            except ValidationError:
                continue
        return texts

    # -- runs -----------------------------------------------------------------------------
    def _memo(self, name: str, compute: Callable[[], tuple[T, ...]], *args: Hashable) -> list[T]:
        """`compute()`, kept until any table of this store changes or the minute turns (what
        `status` shows ages with the clock); a service asks the same again and again."""
        store = self._store
        minute = store.now().replace(second=0, microsecond=0)
        key = (store.root, store.tenant, name, args, minute)
        return list(SNAPSHOTS.memo(key, store.locations(), compute))

    def job_runs(self, limit: int = 20, offset: int = 0) -> list[JobRunRecord]:
        """The newest job runs: those accepted or in flight first (with their current step),
        then ended ones, newest first. DataFusion sorts and limits the ended ones: the cost
        does not grow with the history."""
        return self._memo("job_runs", lambda: tuple(self._job_runs(limit, offset)), limit, offset)

    def _job_runs(self, limit: int, offset: int) -> list[JobRunRecord]:
        flying = sorted(self.in_flight(), key=lambda r: r.event_time, reverse=True)
        runs = [r for r in flying if r.dataset_id is None]
        steps = self._current_steps([r.run_id for r in runs]) if runs else {}
        live = [JobRunRecord.in_flight(r, steps.get(r.run_id)) for r in runs]
        ended_offset = max(0, offset - len(live))
        ended = self._store.read(
            PipelineRunRow,
            newest_first="start_time",
            limit=max(0, limit - max(0, len(live) - offset)),
            offset=ended_offset,
        )
        return self._requested((live[offset:] + [JobRunRecord.from_row(r) for r in ended])[:limit])

    def job_run(self, run_id: str) -> JobRunRecord | None:
        """One job run, whatever its state (None: no such run of this tenant)."""
        ended = self._store.read(PipelineRunRow, filters=[("pipeline_logging_id", "=", run_id)])
        if ended:
            return self._requested([JobRunRecord.from_row(ended[0])])[0]
        flying = [r for r in self.in_flight() if r.run_id == run_id and r.dataset_id is None]
        if not flying:
            return None
        run = JobRunRecord.in_flight(flying[0], self._current_steps([run_id]).get(run_id))
        return self._requested([run])[0]

    def _requested(self, runs: list[JobRunRecord]) -> list[JobRunRecord]:
        """The runs with what their run requests say (a retry's run, a tick's time)."""
        if not runs:
            return runs
        requests = self._store.read(
            RunRequestRow, filters=[("run_id", "in", [r.pipeline_logging_id for r in runs])]
        )
        first: dict[str, RunRequestRow] = {}
        for request in sorted(requests, key=lambda r: r.requested_at, reverse=True):
            first[request.run_id] = request
        return [
            replace(run, retry_of=found.retry_of, scheduled_for=found.scheduled_for)
            if (found := first.get(run.pipeline_logging_id)) is not None
            else run
            for run in runs
        ]

    def _current_steps(self, run_ids: list[str]) -> dict[str, str]:
        """The dataset each run in flight is working on (its newest RUNNING attempt)."""
        events = self._store.rows(
            "run_events",
            filters=[
                ("event_date", ">=", self._store.since(2)),
                ("pipeline_logging_id", "in", run_ids),
            ],
            columns=["pipeline_logging_id", "dataset_id", "status", "event_time"],
        )
        found: dict[str, tuple[Any, str]] = {}
        for e in events:
            if e["dataset_id"] and e["status"] == EventStatus.RUNNING:
                seen = found.get(e["pipeline_logging_id"])
                if seen is None or e["event_time"] > seen[0]:
                    found[e["pipeline_logging_id"]] = (e["event_time"], e["dataset_id"])
        return {run: dataset for run, (_, dataset) in found.items()}

    def attempts(self, run_id: str) -> list[RunHistoryRow]:
        """The dataset attempts of a job run, oldest first."""
        rows = self._store.read(RunHistoryRow, filters=[("pipeline_logging_id", "=", run_id)])
        return sorted(rows, key=lambda r: r.start_time)

    def steps(self, run_id: str) -> list[StepLogRow]:
        """The logged phases of a job run, in order."""
        rows = self._store.read(StepLogRow, filters=[("pipeline_logging_id", "=", run_id)])
        return sorted(rows, key=lambda r: (r.start_time, r.step_index))

    def status(self) -> list[DatasetStatus]:
        """Each registered dataset with its latest approved version and its latest attempt."""
        return self._memo("status", lambda: tuple(self._status()))

    def _status(self) -> list[DatasetStatus]:
        with ThreadPoolExecutor(max_workers=3) as pool:
            datasets_f = pool.submit(self.datasets)
            # each dataset's newest row only, picked by DataFusion: flat as history grows
            versions_f = pool.submit(
                self._store.rows,
                "data_versions",
                columns=["dataset_id", "version", "snapshot_ref", "row_count", "promoted_at"],
                newest_first="version",
                limit=1,
                per="dataset_id",
            )
            history_f = pool.submit(
                self._store.rows,
                "run_history",
                columns=["dataset_id", "status", "end_time", "error_message"],
                newest_first="end_time",
                limit=1,
                per="dataset_id",
            )
            decisions_f = pool.submit(self._trailing_decisions)
            versions = _latest(versions_f.result(), "dataset_id", "version")
            history = _latest(history_f.result(), "dataset_id", "end_time")
            datasets = datasets_f.result()
            decided = _trailing_blocked(decisions_f.result())
        trust = self.trust_all()
        out = []
        for ds in sorted(datasets, key=lambda d: (_LAYER_ORDER.get(d.layer, 9), d.dataset_id)):
            v, h = versions.get(ds.dataset_id, {}), history.get(ds.dataset_id, {})
            out.append(
                DatasetStatus(
                    dataset_id=ds.dataset_id,
                    layer=ds.layer,
                    table_name=ds.table_name,
                    version=v.get("version"),
                    snapshot_ref=v.get("snapshot_ref"),
                    row_count=v.get("row_count"),
                    promoted_at=v.get("promoted_at"),
                    last_status=AttemptStatus(h["status"]) if h.get("status") else None,
                    last_run_at=h.get("end_time"),
                    last_error=h.get("error_message"),
                    trust=trust[ds.dataset_id].score,
                    stuck=_summary(stuck(decided.get(ds.dataset_id, []))),
                )
            )
        return out

    def _trailing_decisions(self) -> list[DecisionRow]:
        """Each dataset's last allowed decision and the blocked ones after it (all of a dataset
        never allowed): what `_trailing_blocked` keeps, without reading every decision ever."""
        store = self._store
        last_allowed = store.read(
            DecisionRow,
            filters=[("allowed", "=", True)],
            newest_first="evaluated_at",
            limit=1,
            per="dataset_id",
        )
        since = {r.dataset_id: r.evaluated_at for r in last_allowed}
        blocked: list[tuple[str, str, Any]] = [("allowed", "=", False)]
        after = (
            store.read(DecisionRow, filters=[*blocked, ("evaluated_at", ">=", min(since.values()))])
            if since
            else []
        )
        rows = [
            *last_allowed,
            *(r for r in after if r.dataset_id in since and r.evaluated_at >= since[r.dataset_id]),
        ]
        seen = [
            r["dataset_id"]
            for r in store.rows(
                "promotion_status",
                columns=["dataset_id"],
                newest_first="evaluated_at",
                limit=1,
                per="dataset_id",
            )
        ]
        never = [d for d in seen if d not in since]
        if never:
            rows += store.read(DecisionRow, filters=[*blocked, ("dataset_id", "in", never)])
        return rows

    def trust_all(self) -> dict[str, TrustScore]:
        """Every dataset's trust score and its components, kept as `status` keeps its answer
        (until a table changes or the minute turns): a page asks for one dataset's after the
        overview asked for all."""
        return dict(self._memo("trust_all", lambda: tuple(self.trust().items())))

    def trust(self, dataset_ids: Sequence[str] | None = None) -> dict[str, TrustScore]:
        """Each dataset's trust score and its components (see lakeguard.trust)."""
        store = self._store
        ids = (
            list(dataset_ids)
            if dataset_ids is not None
            else [d.dataset_id for d in self.datasets()]
        )
        only: list[tuple[str, str, Any]] = [("dataset_id", "in", ids)]
        with ThreadPoolExecutor(max_workers=4) as pool:
            dq_f = pool.submit(  # the score looks at the last RECENT batches only
                store.read,
                DqResultRow,
                filters=only,
                newest_first="executed_at",
                limit=RECENT,
                per="dataset_id",
            )
            changes_f = pool.submit(store.read, SchemaChangeRow, filters=only)
            # lineage and freshness count every version: DataFusion counts, one row each
            lineage_f = pool.submit(store.lineage, ids)
            policies_f = pool.submit(store.active_definitions, "policy_rules")
            layers_f = pool.submit(
                store.active_definitions, "dataset_registry", [("dataset_id", "in", ids)]
            )
            dq, changes = _by_dataset(dq_f.result()), _by_dataset(changes_f.result())
            lineage = {
                r["dataset_id"]: Lineage(r["approved"], r["backed"], r["latest"])
                for r in lineage_f.result()
            }
            policies = [PolicyDef.from_row(r) for r in policies_f.result()]
            layers = {r["dataset_id"]: r["layer"] for r in layers_f.result()}

        now = store.now()
        return {
            d: trust_score(
                d,
                dq=dq.get(d, []),
                changes=changes.get(d, []),
                lineage=lineage.get(d, Lineage()),
                now=now,
                sla_hours=sla_hours(policies, layers[d]) if d in layers else None,
            )
            for d in ids
        }

    def in_flight(self, window_days: int = 30) -> list[InFlightRun]:
        """Runs accepted (PENDING) or started (RUNNING) in the last `window_days` without a
        terminal row.

        The window keeps the scan to recent partitions; any reaper pass inside the window (every
        run starts one) has already settled older runs.
        """
        # DataFusion drops the events of runs that ended: only runs in flight cross into Python
        since = self._store.since(window_days)
        events = [
            RunEventRow.from_row(r)
            for r in joins.unfinished_events(self._store, since, sorted(IN_FLIGHT))
        ]
        finished = {e.run_id for e in events if e.status not in IN_FLIGHT}
        latest: dict[str, RunEventRow] = {}
        for e in sorted(events, key=lambda e: e.event_time):
            if e.status in IN_FLIGHT and e.run_id not in finished:
                first = latest.get(e.run_id)
                # the run's state is its newest event; its start and trigger, its first one
                latest[e.run_id] = replace(
                    e,
                    event_time=first.event_time if first else e.event_time,
                    trigger_type=(first or e).trigger_type or e.trigger_type,
                    triggered_by=(first or e).triggered_by or e.triggered_by,
                )
        return [
            InFlightRun(
                run_id=e.run_id,
                pipeline_logging_id=e.pipeline_logging_id,
                pipeline_id=e.pipeline_id,
                dataset_id=e.dataset_id,
                worker_instance=e.worker_instance,
                event_time=e.event_time,
                status=e.status,
                trigger_type=e.trigger_type,
                triggered_by=e.triggered_by,
            )
            for e in latest.values()
        ]

    def source_progress(self, dataset_id: str) -> SourceProgress:
        """What the dataset's approved versions took from its sources (files, watermarks)."""
        # DataFusion keeps the approved runs' newest mark of each key: the fold sees only those
        rows = joins.approved_marks(self._store, dataset_id)
        marks = [SourceProgressRow.from_row(r) for r in rows]
        return fold(marks, {m.run_id for m in marks})

    def audit_data(self, locate: Callable[[str], str]) -> AuditData:
        """Everything `lakeguard.audit` checks: this tenant's run, version and decision rows,
        the commits of every registered dataset's table (`locate` maps a table name to its
        location) and of every append-only metadata table."""
        store = self._store
        runtime = [n for n, t in load_table_defs().items() if t.append_only]

        def table_history(name: str) -> tuple[list[Commit], dict[str, str | None]]:
            location = store.location(name)
            return history(location), dict(deltars.load(name, location).metadata().configuration)

        with ThreadPoolExecutor(max_workers=6) as pool:
            events = pool.submit(store.read, RunEventRow)
            attempts = pool.submit(store.read, RunHistoryRow)
            job_runs = pool.submit(store.read, PipelineRunRow)
            versions = pool.submit(store.read, DataVersionRow)
            decisions = pool.submit(store.read, DecisionRow)
            datasets = {d.dataset_id: d.table_name for d in self.datasets()}
            commits = {d: pool.submit(history, locate(t)) for d, t in datasets.items()}
            metadata = {t: pool.submit(table_history, t) for t in runtime}
            return AuditData(
                events=events.result(),
                attempts=attempts.result(),
                job_runs=job_runs.result(),
                versions=versions.result(),
                decisions=decisions.result(),
                datasets=datasets,
                commits={d: f.result() for d, f in commits.items()},
                append_only={t: f.result() for t, f in metadata.items()},
                now=store.now(),
            )

    def lease(self, dataset_id: str) -> Lease | None:
        """Who holds the dataset now (None when it is free)."""
        return leases.current(self._store, dataset_id)
