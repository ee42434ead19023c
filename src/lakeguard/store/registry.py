"""A read-only snapshot of one tenant's active definitions, as typed records (pure).

A run loads it once and uses it throughout, so every step of the run sees the same definitions
and `config_version` names exactly which ones it used.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from enum import StrEnum

from lakeguard.errors import NotRegisteredError
from lakeguard.hashing import digest
from lakeguard.schema.drift import ChangeKind, DriftDecision, profile_rules
from lakeguard.shapes import StoredRow
from lakeguard.store.records import (
    DatasetDef,
    JobDef,
    JobTaskDef,
    PolicyDef,
    RuleDef,
    SourceColumnDef,
    SourceObjectDef,
    SourceSystemDef,
)

# The definition tables a run reads.
REGISTRY_TABLES = (
    "dataset_registry",
    "quality_rules",
    "source_systems",
    "source_objects",
    "source_object_columns",
    "jobs",
    "job_tasks",
    "job_parameters",
    "schema_compatibility_rules",
    "policy_rules",
)


@dataclass(frozen=True)
class Registry:
    datasets: dict[str, DatasetDef]
    systems: dict[str, SourceSystemDef]
    objects: tuple[SourceObjectDef, ...]
    rules_by_dataset: dict[str, tuple[RuleDef, ...]]
    jobs: dict[str, JobDef]
    config_version: str
    profiles: tuple[dict[str, str], ...] = ()
    policies: tuple[PolicyDef, ...] = ()

    @classmethod
    def from_rows(cls, rows: dict[str, list[StoredRow]]) -> Registry:
        hashes = sorted(
            f"{t}:{r.get('definition_hash')}" for t, table in rows.items() for r in table
        )
        columns: dict[str, list[SourceColumnDef]] = {}
        for row in rows["source_object_columns"]:
            col = SourceColumnDef.from_row(row)
            columns.setdefault(col.source_object_id, []).append(col)
        rules: dict[str, list[RuleDef]] = {}
        for row in sorted(rows["quality_rules"], key=lambda r: r["rule_id"]):
            rule = RuleDef.from_row(row)
            rules.setdefault(rule.dataset_id, []).append(rule)
        return cls(
            datasets={r["dataset_id"]: DatasetDef.from_row(r) for r in rows["dataset_registry"]},
            systems={
                r["source_system_id"]: SourceSystemDef.from_row(r) for r in rows["source_systems"]
            },
            objects=tuple(
                SourceObjectDef.from_row(r, tuple(columns.get(r["source_object_id"], ())))
                for r in sorted(rows["source_objects"], key=lambda r: r["source_object_id"])
            ),
            rules_by_dataset={k: tuple(v) for k, v in rules.items()},
            jobs=_jobs(rows),
            policies=tuple(
                PolicyDef.from_row(r)
                for r in sorted(rows.get("policy_rules", []), key=lambda r: r["policy_id"])
            ),
            profiles=tuple(
                {k: r[k] for k in ("profile", "change_kind", "decision")}
                for r in rows.get("schema_compatibility_rules", [])
            ),
            config_version=digest("\n".join(hashes), 16),
        )

    def dataset(self, dataset_id: str) -> DatasetDef:
        if dataset_id not in self.datasets:
            raise NotRegisteredError(
                f"dataset {dataset_id!r} is not registered",
                where="dataset_registry",
                fix="declare it in a metadata document and `laketx apply` it",
            )
        return self.datasets[dataset_id]

    def definition_hash(self, dataset_id: str) -> str:
        """A hash of what makes a dataset's versions: its definition, its rules and, for
        bronze, its source objects (recorded with each version; replay checks it)."""
        dataset = self.dataset(dataset_id)
        parts = [f"dataset:{dataset.definition_hash}"]
        parts += [f"rule:{stable_repr(r)}" for r in self.rules(dataset_id)]
        parts += [f"source:{stable_repr(o)}" for o in self.source_objects(dataset_id)]
        return digest("\n".join(parts), 16)

    def rules(self, dataset_id: str) -> tuple[RuleDef, ...]:
        return self.rules_by_dataset.get(dataset_id, ())

    def source_objects(self, dataset_id: str) -> list[SourceObjectDef]:
        return [o for o in self.objects if o.dataset_id == dataset_id]

    def system(self, system_id: str) -> SourceSystemDef:
        if system_id not in self.systems:
            raise NotRegisteredError(
                f"source system {system_id!r} is not registered or not active",
                where="source_systems",
                fix="declare the system and apply the document",
            )
        return self.systems[system_id]

    def profile(self, name: str) -> dict[ChangeKind, DriftDecision]:
        """A schema profile's decision per change kind (shipped or declared)."""
        try:
            return profile_rules(name, self.profiles)
        except KeyError:
            raise NotRegisteredError(
                f"schema profile {name!r} is not registered",
                where="schema_compatibility_rules",
                fix="declare it under schema_profiles and apply the document, or use strict, "
                "additive or permissive",
            ) from None

    def job(self, job_id: str) -> JobDef | None:
        return self.jobs.get(job_id)


def stable_repr(value: object) -> str:
    """A definition record's repr with each vocabulary word as its plain text: the hash of
    the definitions a version was made under must not change when a field gains its type."""
    if isinstance(value, StrEnum):
        return repr(value.value)
    if is_dataclass(value) and not isinstance(value, type):
        inner = ", ".join(
            f"{f.name}={stable_repr(getattr(value, f.name))}" for f in fields(value) if f.repr
        )
        return f"{type(value).__name__}({inner})"
    if isinstance(value, tuple):
        items = ", ".join(stable_repr(v) for v in value)
        return f"({items},)" if len(value) == 1 else f"({items})"
    if isinstance(value, list):
        return "[" + ", ".join(stable_repr(v) for v in value) + "]"
    if isinstance(value, dict):
        pairs = (f"{stable_repr(k)}: {stable_repr(v)}" for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"
    return repr(value)


def _jobs(rows: dict[str, list[StoredRow]]) -> dict[str, JobDef]:
    tasks: dict[str, list[JobTaskDef]] = {}
    for t in rows["job_tasks"]:
        tasks.setdefault(t["job_id"], []).append(
            JobTaskDef(
                task_id=t["task_id"],
                dataset_id=t["dataset_id"],
                execution_order=int(t["execution_order"]),
                depends_on=tuple(t.get("depends_on") or ()),
            )
        )
    params: dict[str, dict[str, str]] = {}
    for p in rows["job_parameters"]:
        params.setdefault(p["job_id"], {})[p["param_key"]] = p.get("param_value") or ""
    return {
        j["job_id"]: JobDef(
            job_id=j["job_id"],
            max_retries=int(j.get("max_retries") or 0),
            retry_delay_seconds=int(j.get("retry_delay_seconds") or 0),
            enabled=(j.get("status_flag") or "enabled") == "enabled",
            schedule=j.get("schedule"),
            timezone=j.get("timezone") or "UTC",
            triggers=tuple(j.get("trigger_sources") or ()),
            webhook_secret_ref=j.get("webhook_secret_ref"),
            created_at=j.get("created_at"),
            tasks=tuple(sorted(tasks.get(j["job_id"], []), key=lambda t: t.execution_order)),
            parameters=params.get(j["job_id"], {}),
        )
        for j in rows["jobs"]
    }
