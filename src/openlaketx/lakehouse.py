"""The `Lakehouse` facade: what the CLI, the HTTP API and Python users call."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lakeguard.catalog.apply import apply_file, plan_file
from lakeguard.catalog.loader import load_file
from lakeguard.catalog.models import MetadataDocument
from lakeguard.catalog.plan import Plan
from lakeguard.errors import NotRegisteredError
from lakeguard.gate import Gate
from lakeguard.store import MetadataStore
from lakeguard.store.ddl import sql_string
from openlaketx.config import LakehouseConfig
from openlaketx.runner import job as job_runner
from openlaketx.runner.reaper import reap
from openlaketx.spark import get_or_create_session
from openlaketx.tables import dataset_location, quarantine_name, register

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


class Lakehouse:
    """One lakehouse: a Spark session, the LakeGuard store of one namespace and tenant."""

    def __init__(self, config: LakehouseConfig, spark: SparkSession, store: MetadataStore) -> None:
        self.config = config
        self.spark = spark
        self.store = store
        self.gate = Gate(store)

    @classmethod
    def open(cls, config: LakehouseConfig | None = None, **overrides: Any) -> Lakehouse:
        """Start (or reuse) Spark, create/evolve the metadata tables, register datasets by name."""
        cfg = config or LakehouseConfig.from_env(**overrides)
        spark = get_or_create_session(cfg)
        store = MetadataStore(spark, cfg.namespace, str(cfg.metadata_root), cfg.tenant)
        store.ensure()
        lakehouse = cls(cfg, spark, store)
        lakehouse.register_datasets()
        return lakehouse

    @property
    def warehouse(self) -> str:
        return str(self.config.warehouse)

    def register_datasets(self) -> list[str]:
        """Register every registered dataset's table (and its quarantine) that exists."""
        names = []
        for ds in self.store.active_definitions("dataset_registry"):
            for name in (ds["table_name"], quarantine_name(ds["dataset_id"])):
                if register(self.spark, self.warehouse, name):
                    names.append(name)
        return names

    # -- metadata as code -----------------------------------------------------------------
    @staticmethod
    def validate(path: str | Path) -> MetadataDocument:
        """Validate a document without Spark and without writing anything."""
        return load_file(path)

    def plan(self, path: str | Path) -> Plan:
        return plan_file(self.store, path, self.warehouse)[0]

    def apply(self, path: str | Path) -> Plan:
        plan = apply_file(self.store, path, self.warehouse)
        self.register_datasets()
        return plan

    # -- execution ------------------------------------------------------------------------
    def run(
        self,
        target: str,
        *,
        trigger_type: str = "manual",
        triggered_by: str = "cli",
        progress: Callable[[str], None] = lambda _: None,
    ) -> job_runner.JobResult:
        """Run a job or a single dataset through the governed write path.

        Abandoned runs are reaped alongside (this run's own worker is alive, so it is never a
        candidate); a reaper failure is reported, and the next run tries again.
        """
        with ThreadPoolExecutor(max_workers=1) as pool:
            reaping = pool.submit(reap, self.store)
            try:
                return job_runner.run(
                    self.spark,
                    self.store,
                    self.warehouse,
                    target,
                    trigger_type=trigger_type,
                    triggered_by=triggered_by,
                    progress=progress,
                )
            finally:
                if (failure := reaping.exception()) is not None:
                    progress(f"reaping abandoned runs failed: {failure}")

    def reap(self) -> list[str]:
        return reap(self.store)

    # -- reading --------------------------------------------------------------------------
    def dataset(self, dataset_id: str) -> dict[str, Any]:
        rows = self.store.active_definitions(
            "dataset_registry", f"dataset_id = {sql_string(dataset_id)}"
        )
        if not rows:
            raise NotRegisteredError(
                f"dataset {dataset_id!r} is not registered",
                where="dataset_registry",
                fix="apply a metadata document that declares it",
            )
        return rows[0]

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
        return (
            self.spark.read.format("delta")
            .option("versionAsOf", int(approved.snapshot_ref))
            .load(dataset_location(self.warehouse, ds["table_name"]))
        )

    def sql(self, query: str) -> DataFrame:
        return self.spark.sql(query)

    def runs(self, limit: int = 20) -> list[dict[str, Any]]:
        frame = self.store.tenant_rows("pipeline_runs").orderBy("start_time", ascending=False)
        return [r.asDict() for r in frame.limit(limit).collect()]

    def status(self) -> list[dict[str, Any]]:
        """Each registered dataset with its latest approved version and its latest attempt."""
        q = self.store.qualified
        tenant = sql_string(self.store.tenant)
        sql = f"""
          WITH v AS (SELECT dataset_id,
                   max_by(struct(version, snapshot_ref, row_count, promoted_at), version) AS v
                     FROM {q("data_versions")} WHERE tenant_id = {tenant} GROUP BY dataset_id),
               h AS (SELECT dataset_id,
                            max_by(struct(status, end_time, error_message), end_time) AS h
                     FROM {q("run_history")} WHERE tenant_id = {tenant} GROUP BY dataset_id)
          SELECT d.dataset_id, d.layer, d.table_name, v.v.version AS version,
                 v.v.snapshot_ref AS snapshot_ref, v.v.row_count AS row_count,
                 v.v.promoted_at AS promoted_at, h.h.status AS last_status,
                 h.h.end_time AS last_run_at, h.h.error_message AS last_error
          FROM {q("dataset_registry")} d
          LEFT JOIN v ON v.dataset_id = d.dataset_id
          LEFT JOIN h ON h.dataset_id = d.dataset_id
          WHERE d.tenant_id = {tenant} AND d.active
          ORDER BY CASE d.layer WHEN 'bronze' THEN 0 WHEN 'silver' THEN 1 ELSE 2 END, d.dataset_id
        """
        return [r.asDict() for r in self.spark.sql(sql).collect()]

    def explain(self, dataset_id: str) -> dict[str, Any]:
        """Why the latest promotion of a dataset was allowed or blocked, with its rule outcomes."""
        self.dataset(dataset_id)
        decisions = (
            self.store.tenant_rows("promotion_status", f"dataset_id = {sql_string(dataset_id)}")
            .orderBy("evaluated_at", ascending=False)
            .limit(1)
            .collect()
        )
        if not decisions:
            raise NotRegisteredError(
                f"dataset {dataset_id!r} has no recorded decision yet",
                where="promotion_status",
                fix="run it first",
            )
        decision = decisions[0].asDict()
        rules = (
            self.store.tenant_rows(
                "data_quality_results", f"run_id = {sql_string(decision['run_id'])}"
            )
            .orderBy("rule_id")
            .collect()
        )
        decision["rules"] = [r.asDict() for r in rules]
        return decision
