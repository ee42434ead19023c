"""The `Lakehouse` facade: what the CLI, the HTTP API and Python users call.

Opening a lakehouse opens its metadata store (delta-rs, milliseconds) and nothing else. Spark
starts the first time something moves or queries data (`run`, `read`, `sql`, or `.spark`),
and a cold start pays only for what it uses: `sql` registers the tables its query names (found
by sqlglot), a run the tables it writes, `read` reads by location.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lakeguard.actors.alerts.outbox import Outbox
from lakeguard.actors.catalog.apply import apply_file, plan_file
from lakeguard.actors.catalog.changes import ChangeReport, definition_changes
from lakeguard.actors.catalog.watch import FolderWatcher
from lakeguard.actors.gate import Gate
from lakeguard.actors.rejections import release
from lakeguard.reads.reader import StoreReader
from lakeguard.records.audit import Violation, audit, only
from lakeguard.records.decisions.records import DecisionRecord
from lakeguard.records.decisions.versions import DatasetStatus
from lakeguard.records.definitions.records import DatasetDef
from lakeguard.records.objectstore import is_remote
from lakeguard.records.runs.records import JobRunRecord
from lakeguard.records.sources.progress_rows import RejectedFileRow
from lakeguard.records.sqlsafety import tables_named
from lakeguard.rules.alerts.incidents import Incident
from lakeguard.rules.catalog.export import EXPORTED_TABLES, export_yaml
from lakeguard.rules.catalog.loader import load_file
from lakeguard.rules.catalog.models import MetadataDocument
from lakeguard.rules.catalog.plan import Plan
from lakeguard.rules.catalog.recheck import DefinitionProblem
from lakeguard.store import MetadataStore
from lakeguard.words.errors import NotRegisteredError
from lakeguard.words.liveness import known_dead
from lakeguard.words.vocabulary import ENGINE_PREFIX, AttemptStatus
from openlaketx.config import LakehouseConfig
from openlaketx.lineage import lineage_observer
from openlaketx.loads.version_read import RowsPage, page_order, read_version
from openlaketx.runner import job as job_runner
from openlaketx.runner import quarantine
from openlaketx.runner.context import StepObserver
from openlaketx.runner.news import nothing_new
from openlaketx.runner.reaper import reap
from openlaketx.runner.replay import ReplayReport, replay
from openlaketx.spark import get_or_create_session
from openlaketx.tables import dataset_location, quarantine_name, register, register_metadata

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


class Lakehouse:
    """One lakehouse: the LakeGuard store of one namespace and tenant, and Spark when needed."""

    def __init__(self, config: LakehouseConfig, store: MetadataStore) -> None:
        self.config = config
        self.store = store
        self.gate = Gate(store)
        self.reader = StoreReader(store)
        self._spark: SparkSession | None = None

    @classmethod
    def open(cls, config: LakehouseConfig | None = None, **overrides: Any) -> Lakehouse:
        """Open (creating or evolving) the metadata store. Does not start Spark."""
        cfg = config or LakehouseConfig.from_env(**overrides)
        store = MetadataStore(
            cfg.namespace, cfg.metadata_location, cfg.tenant, reach=cfg.tenant_reach()
        )
        store.ensure()
        return cls(cfg, store)

    @property
    def spark(self) -> SparkSession:
        """The Spark session (started on first use); tables are registered as they are used."""
        if self._spark is None:
            self._spark = get_or_create_session(self.spark_config())
        return self._spark

    def spark_config(self) -> LakehouseConfig:
        """The settings Spark starts with: the lakehouse's, with s3a when a registered source
        reads from an object store although the lakehouse itself is local."""
        if self.config.uses_object_store:
            return self.config
        registry = self.reader.definitions.registry()
        locations = [o.locator for o in registry.objects] + [
            s.options.model_dump_json() for s in registry.systems.values()
        ]
        if any(is_remote(text) or '"s3://' in text for text in locations):
            return self.config.model_copy(update={"object_store_sources": True})
        return self.config

    @property
    def spark_started(self) -> bool:
        return self._spark is not None

    @property
    def warehouse(self) -> str:
        return str(self.config.warehouse)

    def warm(self) -> list[str]:
        """Do now what the first run of a long-lived process would otherwise pay for: open the
        metadata tables' snapshots and register every existing dataset table in the Spark
        session (its Delta log read once). Returns the tables registered."""
        self.store.open_snapshots()
        return self.register_datasets()

    def register_datasets(self) -> list[str]:
        """Register every registered dataset's table (and its quarantine) that exists."""
        names = [
            name
            for ds in self.reader.definitions.datasets()
            for name in (ds.table_name, quarantine_name(ds.dataset_id))
        ]
        return self._register(names)

    def register_tables(self, names: set[tuple[str, str]]) -> list[str]:
        """Register, among (database, table) names, the metadata tables of this namespace and
        the dataset and quarantine tables that exist; others are left to the session."""
        metadata = {t for db, t in names if db == self.store.namespace}
        if metadata:
            register_metadata(self.spark, self.store, metadata)
        wanted = {f"{db}.{t}" for db, t in names if db != self.store.namespace}
        return self._register(sorted(wanted)) + sorted(metadata & set(self.store.tables()))

    def _register(self, names: list[str]) -> list[str]:
        with ThreadPoolExecutor(max_workers=6) as pool:
            found = pool.map(lambda n: register(self.spark, self.warehouse, n), names)
            return [n for n, ok in zip(names, found, strict=True) if ok]

    # -- metadata as code -----------------------------------------------------------------
    @staticmethod
    def validate(path: str | Path) -> MetadataDocument:
        """Validate a document without Spark and without writing anything."""
        return load_file(path)

    def definition_problems(self) -> list[DefinitionProblem]:
        """The stored definitions that do not validate (a direct SQL edit, say), each with its
        table, key, fix and what it blocks; no Spark. Runs check the same (see
        lakeguard.rules.catalog.recheck)."""
        return list(self.reader.definitions.registry().problems)

    def plan(self, path: str | Path) -> Plan:
        return plan_file(self.store, path, self.warehouse)[0]

    def apply(self, path: str | Path) -> Plan:
        return apply_file(self.store, path, self.warehouse)

    def plan_text(self, text: str, *, source: str, apply: bool = False) -> Plan:
        """Plan (or apply) a document sent as text, e.g. over the API: errors name `source`;
        relative paths in it are taken from the tenant's home."""
        home = self.config.tenant_home
        if apply:
            return apply_file(self.store, source, self.warehouse, text=text, base_dir=home)
        return plan_file(self.store, source, self.warehouse, text=text, base_dir=home)[0]

    def export(self, *, relative: bool = False) -> str:
        """The tenant's active definitions as one YAML document (direct SQL edits included);
        `plan` on it finds nothing to change. `relative`: roots under the tenant's home are
        written relative to it, as `plan_text` (the API) takes them."""
        stored = self.reader.definitions.stored_definitions(EXPORTED_TABLES)
        home = os.path.realpath(self.config.tenant_home) if relative else None
        return export_yaml(stored, tenant=self.store.tenant, home=home)

    def watcher(self, folder: str | Path, *, deactivate_missing: bool = False) -> FolderWatcher:
        """A watcher that syncs the YAML documents of `folder` into this tenant (`sync()` is
        one pass)."""
        return FolderWatcher(
            self.store, folder, self.warehouse, deactivate_missing=deactivate_missing
        )

    def changes(
        self, *, since: datetime | None = None, since_version: int | None = None
    ) -> ChangeReport:
        """New, updated, deactivated and reactivated definitions since a time or a version of
        each definition table, from their Delta history."""
        return definition_changes(self.store, since=since, since_version=since_version)

    # -- execution ------------------------------------------------------------------------
    def run(
        self,
        target: str,
        *,
        trigger_type: str = "manual",
        triggered_by: str = "cli",
        progress: Callable[[str], None] = lambda _: None,
        wait: float = 0.0,
        run_id: str | None = None,
        retries: bool = True,
        observer: StepObserver | None = None,
    ) -> job_runner.JobResult:
        """Run a job or a single dataset through the governed write path.

        `wait` is how long a run waits for another run holding one of its datasets before it
        gives up with a write conflict. Abandoned runs are reaped alongside (this run's own
        worker is alive, so it is never a candidate); a reaper failure is reported, and the
        next run tries again.
        """
        registry = self.reader.definitions.registry()
        job_plan = job_runner.plan(registry, target)  # an unknown target fails before Spark
        for problem in registry.unattached:  # blocks nothing, but nobody should think it runs
            progress(f"{problem.where}: {problem.message}")
        request = job_runner.RunRequest(
            trigger_type=trigger_type,
            triggered_by=triggered_by,
            run_id=run_id,
            lease_ttl=timedelta(seconds=self.config.lease_ttl_seconds),
            lease_wait=timedelta(seconds=wait),
            retries=retries,
            time_limit=self.config.run_time_limit_seconds,
            pool=self.config.tenant,
        )
        with ThreadPoolExecutor(max_workers=1) as pool:
            reaping = pool.submit(reap, self.store)
            try:
                notes = nothing_new(self.reader, registry, job_plan.datasets, self.warehouse)
                if notes is not None:  # decided from metadata and listings: no JVM needed
                    return job_runner.run_nothing_new(self.store, target, notes, request)

                def spark() -> SparkSession:
                    # said only when it happens: a run with nothing new, or refused its
                    # datasets, never starts Spark
                    if not self.spark_started:
                        progress("starting Spark")
                    return self.spark

                return job_runner.run(
                    spark,
                    self.store,
                    self.warehouse,
                    target,
                    request,
                    progress=progress,
                    observer=observer or lineage_observer(self.config.tenant),
                )
            finally:
                if (failure := reaping.exception()) is not None:
                    progress(f"reaping abandoned runs failed: {failure}")

    def reap(self) -> list[str]:
        return reap(self.store)

    def verify(self, datasets: set[str] | None = None) -> list[Violation]:
        """Audit the store (or some datasets) against every invariant of docs/design.md §4.

        Reads metadata and Delta logs only: no Spark.
        """
        data = self.reader.audit.audit_data(lambda table: dataset_location(self.warehouse, table))
        if datasets is not None:
            data = only(data, datasets)
        # each quarantine table's parts: a data table, read here (lakeguard never opens them)
        held = {
            d: quarantine.held_parts(dataset_location(self.warehouse, quarantine_name(d)))
            for d in data.datasets
        }
        return audit(replace(data, quarantine={d: p for d, p in held.items() if p}), known_dead)

    def settle_quarantines(self, *, apply: bool = True) -> dict[str, list[str]]:
        """Every dataset's quarantine with each held batch once and none promoted since
        (`quarantine.settle_all`: what `laketx migrate` does for tables written before)."""
        return quarantine.settle_all(self.reader, self.warehouse, apply=apply)

    def replay(self, dataset_id: str, version: int) -> ReplayReport:
        """Rebuild approved `version` of a dataset and compare its content hashes with the
        recorded one (see openlaketx.runner.replay)."""
        return replay(self.spark, self.store, self.warehouse, dataset_id, version)

    def optimize(self) -> list[str]:
        """Compact the metadata tables and cluster them by their usual filters."""
        return self.store.optimize()

    # -- reading --------------------------------------------------------------------------
    def dataset(self, dataset_id: str) -> DatasetDef:
        return self.reader.definitions.dataset(dataset_id)

    def read(self, dataset_id: str, version: int | None = None) -> DataFrame:
        """The latest approved snapshot of a dataset (or an older approved version)."""
        ds = self.dataset(dataset_id)
        approved = self.gate.latest(dataset_id, version)
        if approved is None:
            raise NotRegisteredError(
                f"dataset {dataset_id!r} has no approved version"
                + (f" {version}" if version is not None else ""),
                where="data_versions",
                fix="run it first; only approved versions are readable",
            )
        location = dataset_location(self.warehouse, ds.table_name)
        return read_version(self.spark, location, int(approved.snapshot_ref))

    def rows_page(
        self,
        dataset_id: str,
        version: int | None,
        offset: int,
        limit: int,
        *,
        engine_columns: bool = False,
    ) -> RowsPage:
        """One page of an approved version's rows in a stable order (`page_order`), with the
        engine's `_laketx_*` columns only if asked."""
        ds = self.dataset(dataset_id)
        approved = self.gate.latest(dataset_id, version)
        frame = self.read(dataset_id, version)
        assert approved is not None  # `read` has refused an unapproved version
        if not engine_columns:
            frame = frame.select(*[c for c in frame.columns if not c.startswith(ENGINE_PREFIX)])
        columns = frame.columns
        ordered = frame.orderBy(*page_order(frame, ds.business_keys))
        found = ordered.offset(max(0, offset)).limit(limit).collect()
        return RowsPage(approved, columns, [r.asDict(recursive=True) for r in found])

    def sql(self, query: str) -> DataFrame:
        """Run a Spark SQL query, having registered the lakehouse tables it names."""
        self.register_tables(tables_named(query))
        return self.spark.sql(query)

    def runs(self, limit: int = 20) -> list[JobRunRecord]:
        return self.reader.runs.job_runs(limit)

    def status(self) -> list[DatasetStatus]:
        """Each registered dataset with its latest approved version and its latest attempt."""
        return self.reader.status.datasets()

    def rejected_files(self, dataset_id: str | None = None) -> list[RejectedFileRow]:
        """The delivered files put aside as unreadable that are still rejected (of one
        dataset, or all), oldest first, each with its reason. No Spark."""
        if dataset_id is not None:
            self.dataset(dataset_id)
        return self.reader.versions.rejected_files(dataset_id)

    def release_files(
        self,
        paths: list[str] | None = None,
        *,
        dataset_id: str | None = None,
        everything: bool = False,
        by: str = "cli",
    ) -> list[RejectedFileRow]:
        """Release rejected files (at `paths`, or all of `dataset_id`): the next run reads
        them again. Returns the releases recorded. No Spark."""
        return release(
            self.store,
            self.reader,
            paths=paths or [],
            dataset_id=dataset_id,
            everything=everything,
            by=by,
        )

    def explain(self, dataset_id: str, run_id: str | None = None) -> DecisionRecord:
        """Why the latest promotion of a dataset (or attempt `run_id`'s) was allowed or
        blocked: rules, checks and policies, schema changes, upstream versions, what to do."""
        self.dataset(dataset_id)
        decision = self.reader.decisions.latest_decision(dataset_id, run_id)
        if decision is not None:
            return decision
        if run_id is None:
            found = next((s for s in self.status() if s.dataset_id == dataset_id), None)
            if found is not None and found.last_status == AttemptStatus.FAILED:
                raise NotRegisteredError(
                    f"dataset {dataset_id!r} has no recorded decision: its attempts failed "
                    f"before the gate; the last, at {found.last_run_at:%Y-%m-%d %H:%M:%S} UTC, "
                    f"failed: {found.last_error or 'no error recorded'}",
                    where="run_history",
                    fix="correct what the error says and run it again; `laketx runs` lists "
                    "each attempt",
                )
        raise NotRegisteredError(
            f"dataset {dataset_id!r} has no recorded decision"
            + (f" for run {run_id}" if run_id else " yet"),
            where="promotion_status",
            fix="run it first" if run_id is None else "check the run id in `laketx runs`",
        )

    def incidents(self) -> list[Incident]:
        """The tenant's alert incidents, newest first, each with its events and their
        deliveries (docs/alerts.md); no Spark."""
        return Outbox(self.store).incidents()
