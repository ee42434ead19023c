"""A read-only snapshot of the registered definitions a run needs (OpenLakeTx only reads them)."""

from __future__ import annotations

import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from lakeguard.errors import NotRegisteredError
from lakeguard.store import MetadataStore

_TABLES = (
    "dataset_registry",
    "quality_rules",
    "source_systems",
    "source_objects",
    "source_object_columns",
    "jobs",
    "job_tasks",
    "job_parameters",
)


@dataclass(frozen=True)
class Definitions:
    rows: dict[str, list[dict[str, Any]]]

    @classmethod
    def load(cls, store: MetadataStore) -> Definitions:
        with ThreadPoolExecutor(max_workers=4) as pool:
            rows = dict(zip(_TABLES, pool.map(store.active_definitions, _TABLES), strict=True))
        return cls(rows)

    @property
    def config_version(self) -> str:
        """Fingerprint of every active definition: which metadata a run used."""
        hashes = sorted(
            f"{t}:{r['definition_hash']}" for t, rows in self.rows.items() for r in rows
        )
        return hashlib.sha256("\n".join(hashes).encode()).hexdigest()[:16]

    def dataset(self, dataset_id: str) -> dict[str, Any]:
        for row in self.rows["dataset_registry"]:
            if row["dataset_id"] == dataset_id:
                return row
        raise NotRegisteredError(
            f"dataset {dataset_id!r} is not registered",
            where="dataset_registry",
            fix="declare it in a metadata document and `laketx apply` it",
        )

    def datasets(self) -> list[dict[str, Any]]:
        return list(self.rows["dataset_registry"])

    def transform(self, dataset: dict[str, Any]) -> dict[str, Any]:
        return dict(json.loads(dataset.get("transform") or "{}"))

    def rules(self, dataset_id: str) -> list[dict[str, Any]]:
        return [r for r in self.rows["quality_rules"] if r["dataset_id"] == dataset_id]

    def source_objects(self, dataset_id: str) -> list[dict[str, Any]]:
        return [o for o in self.rows["source_objects"] if o["dataset_id"] == dataset_id]

    def system(self, system_id: str) -> dict[str, Any]:
        for row in self.rows["source_systems"]:
            if row["source_system_id"] == system_id:
                return row
        raise NotRegisteredError(
            f"source system {system_id!r} is not registered or not active",
            where="source_systems",
            fix="declare the system and apply the document",
        )

    def columns(self, source_object_id: str) -> list[dict[str, Any]]:
        return [
            c
            for c in self.rows["source_object_columns"]
            if c["source_object_id"] == source_object_id
        ]

    def job(self, job_id: str) -> dict[str, Any] | None:
        return next((j for j in self.rows["jobs"] if j["job_id"] == job_id), None)

    def job_tasks(self, job_id: str) -> list[dict[str, Any]]:
        tasks = [t for t in self.rows["job_tasks"] if t["job_id"] == job_id]
        return sorted(tasks, key=lambda t: t["execution_order"])

    def job_parameters(self, job_id: str) -> dict[str, str]:
        return {
            p["param_key"]: p["param_value"]
            for p in self.rows["job_parameters"]
            if p["job_id"] == job_id
        }
