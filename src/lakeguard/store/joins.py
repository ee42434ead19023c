"""Reads that DataFusion answers by joining metadata tables, so that what crosses into Python
stays the size of the answer (in-flight runs, a dataset's current progress marks, its last
approved profile) however long the recorded history grows.

Turning rows into Python objects is what costs as history grows (a scan of a few columns over
every file of a table is milliseconds); each query here selects inside DataFusion the rows the
Python fold used to pick, and the fold that follows gives the same answer on them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Protocol

import pyarrow as pa
from deltalake import DeltaTable

from lakeguard.records.runs.rows import RunEventRow
from lakeguard.records.sources.progress import REJECTED_SUFFIX
from lakeguard.records.sources.progress_rows import SourceProgressRow
from lakeguard.store import deltars
from lakeguard.store.filters import Filter, where_sql
from lakeguard.store.snapshots import SNAPSHOTS
from lakeguard.words.shapes import StoredRow


class MetadataStore(Protocol):
    """What a join needs of the store (`store.MetadataStore`, which imports this module)."""

    @property
    def tenant(self) -> str: ...

    def location(self, table: str) -> str: ...


def _in(values: Sequence[str]) -> str:
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


def run(store: MetadataStore, names: Sequence[str], sql: str) -> list[StoredRow]:
    """`sql` over the newest snapshot of each table in `names`, each registered by its name
    (the snapshots this process keeps open, and the answer kept while they stay newest)."""

    def query(snapshots: list[DeltaTable]) -> pa.Table:
        return deltars.query(dict(zip(names, snapshots, strict=True)), sql)

    with deltars.guarded(names[0], store.location(names[0]), "query it"):
        return SNAPSHOTS.query([store.location(n) for n in names], sql, query)


def _where(store: MetadataStore, filters: Sequence[Filter]) -> str:
    """This tenant's rows (so never an empty WHERE: callers add `AND ...`)."""
    return where_sql([("tenant_id", "=", store.tenant), *filters])


def unfinished_events(
    store: MetadataStore, since: date, in_flight: Sequence[str]
) -> list[RunEventRow]:
    """The run events from partition `since` on with an in-flight status, of
    runs with no other event, no attempt row and no job-run row in that window."""
    events = _where(store, [("event_date", ">=", since)])
    attempts = _where(store, [("run_date", ">=", since)])
    flying = _in(in_flight)
    sql = (
        f"SELECT e.* FROM (SELECT * FROM run_events{events} AND status IN ({flying})) e "
        "LEFT JOIN ("
        f"SELECT run_id AS done FROM run_events{events} AND status NOT IN ({flying}) "
        f"UNION SELECT run_id AS done FROM run_history{attempts} "
        f"UNION SELECT pipeline_logging_id AS done FROM pipeline_runs{attempts}"
        ") d ON e.run_id = d.done WHERE d.done IS NULL"
    )
    rows = run(store, ("run_events", "run_history", "pipeline_runs"), sql)
    return [RunEventRow.from_row(r) for r in rows]


def approved_full_profile_at(
    store: MetadataStore, dataset_id: str, metrics: Sequence[str]
) -> datetime | None:
    """When the dataset's newest full profile (a row of one of `metrics`) of a run that made
    an approved version was taken; None when no approved run was fully profiled."""
    own = _where(store, [("dataset_id", "=", dataset_id)])
    sql = (
        "SELECT MAX(p.profiled_at) AS at FROM "
        f"(SELECT run_id, profiled_at FROM data_profiling_results{own} "
        f"AND metric IN ({_in(metrics)})) p "
        f"JOIN (SELECT DISTINCT run_id FROM data_versions{own}) v ON p.run_id = v.run_id"
    )
    rows = run(store, ("data_profiling_results", "data_versions"), sql)
    found = rows[0]["at"] if rows else None
    return found if isinstance(found, datetime) else None


@dataclass(frozen=True, slots=True)
class ProfiledMetric:
    """A profile row's metric, and whether its run made an approved version."""

    run_id: str
    column_name: str
    metric: str
    value: str | None
    profiled_at: datetime
    approved: bool


def profiles_since(
    store: MetadataStore, dataset_id: str, since: datetime | None
) -> list[ProfiledMetric]:
    """The dataset's profile metrics from `since` on (all of them when None)."""
    window: list[Filter] = [("profiled_at", ">=", since)] if since is not None else []
    own = [("dataset_id", "=", dataset_id)]
    sql = (
        "SELECT p.run_id, p.column_name, p.metric, p.value, p.profiled_at, "
        "v.run_id IS NOT NULL AS approved FROM "
        "(SELECT run_id, column_name, metric, value, profiled_at FROM data_profiling_results"
        f"{_where(store, [*own, *window])}) p "
        f"LEFT JOIN (SELECT DISTINCT run_id FROM data_versions{_where(store, own)}) v "
        "ON p.run_id = v.run_id"
    )
    return [
        ProfiledMetric(
            run_id=r["run_id"],
            column_name=r["column_name"],
            metric=r["metric"],
            value=r["value"],
            profiled_at=r["profiled_at"],
            approved=bool(r["approved"]),
        )
        for r in run(store, ("data_profiling_results", "data_versions"), sql)
    ]


def approved_marks(store: MetadataStore, dataset_id: str) -> list[SourceProgressRow]:
    """The dataset's source progress rows of runs that made an approved
    version, only the newest (by data version; ties all kept, for the fold to settle) of each
    (source object, kind, mark key): what `progress.fold` keeps. A row without any mark field
    (which the fold skips) never hides an older one. Rejections (`progress.counts_blocked`)
    count whatever their run's outcome, the latest recorded of a data version winning."""
    own = _where(store, [("dataset_id", "=", dataset_id)])
    key = "COALESCE(mark_key, path, '')"
    marked = (
        "((state IS NOT NULL AND state <> '' AND state <> '{}') OR ((state IS NULL OR state = '') "
        "AND (path IS NOT NULL OR size IS NOT NULL OR modification_time IS NOT NULL OR "
        "content_hash IS NOT NULL OR watermark IS NOT NULL OR source_version IS NOT NULL)))"
    )
    rejected = f"ends_with(s.kind, '{REJECTED_SUFFIX}')"
    sql = (
        "SELECT * EXCEPT (_laketx_n) FROM (SELECT s.*, "
        f"RANK() OVER (PARTITION BY s.source_object_id, s.kind, {key} ORDER BY s.data_version "
        f"DESC, CASE WHEN {rejected} THEN s.recorded_at END DESC) AS _laketx_n "
        f"FROM (SELECT * FROM source_progress{own} AND {marked}) s "
        f"LEFT JOIN (SELECT DISTINCT run_id FROM data_versions{own}) v ON s.run_id = v.run_id "
        f"WHERE v.run_id IS NOT NULL OR {rejected}) "
        "WHERE _laketx_n = 1"
    )
    return [
        SourceProgressRow.from_row(r) for r in run(store, ("source_progress", "data_versions"), sql)
    ]
