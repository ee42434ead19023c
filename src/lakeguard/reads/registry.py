"""A read-only snapshot of one tenant's active definitions, as typed records (pure).

A run loads it once and uses it throughout, so every step of the run sees the same definitions
and `config_version` names exactly which ones it used (by their content, never by the stored
`definition_hash`, which a direct SQL edit leaves as it was).

Loading re-validates the rows (`lakeguard.rules.catalog.recheck`): a row a direct edit made invalid
is kept out of the records and blocks only what it concerns (`refusal`, `job_refusal`,
`schedule_refusal`); everything else loads and runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass
from enum import StrEnum
from typing import TypeVar

from lakeguard.records.alerts.records import ChannelDef, RouteDef
from lakeguard.records.definitions.jobs import JobParameterRow, JobTaskRow
from lakeguard.records.definitions.records import DatasetDef, JobDef, PolicyDef, RuleDef
from lakeguard.records.definitions.sets import DefinitionSet
from lakeguard.records.reach import Reach
from lakeguard.records.sameness import content_hash
from lakeguard.records.schema.drift import ChangeKind, DriftDecision, profile_rules
from lakeguard.records.sources.kinds import DEFAULT_KIND
from lakeguard.records.sources.records import SourceColumnDef, SourceObjectDef, SourceSystemDef
from lakeguard.rules.catalog.recheck import DefinitionProblem, recheck
from lakeguard.rules.catalog.recheck import refusal as refusal_for
from lakeguard.words.errors import InvalidDefinition, NotRegisteredError, ValidationError
from lakeguard.words.hashing import digest
from lakeguard.words.vocabulary import SourceKindName

T = TypeVar("T")
R = TypeVar("R")

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
    "notification_channels",
    "notification_routes",
)
ALERTING_TABLES = ("notification_channels", "notification_routes")


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
    # stored definitions that do not validate, each with what it blocks
    problems: tuple[DefinitionProblem, ...] = ()
    # where events are sent (docs/alerts.md); a channel or route that does not validate is
    # left out (its problem says why)
    channels: dict[str, ChannelDef] = field(default_factory=dict)
    routes: tuple[RouteDef, ...] = ()

    @classmethod
    def from_rows(cls, rows: DefinitionSet, reach: Reach | None = None) -> Registry:
        """The records of `rows`, with their problems: those recheck finds, and with the
        tenant's `reach` every field naming what the tenant may not reach."""
        # by what the tables hold (a NULL as NULL): the same rows always give the same version
        hashed = sorted(
            f"{t}:{content_hash(r.as_row())}" for t, table in rows.tables() for r in table
        )
        # what a run is made of (where alerts go is not), and what is checked
        config_version = digest(
            "\n".join(h for h in hashed if h.partition(":")[0] not in ALERTING_TABLES), 16
        )
        checked_version = digest("\n".join(hashed), 16)
        unloadable: list[ValidationError] = []

        def load(build: Callable[[R], T], row: R) -> T | None:
            try:
                return build(row)
            except ValidationError as exc:  # a word outside its vocabulary: recheck says where
                unloadable.append(exc)
                return None

        columns: dict[str, list[SourceColumnDef]] = {}
        for column_row in rows.source_object_columns:
            col = SourceColumnDef.from_row(column_row)
            columns.setdefault(col.source_object_id, []).append(col)
        rules: dict[str, list[RuleDef]] = {}
        for rule_row in sorted(rows.quality_rules, key=lambda r: r.rule_id):
            rule = RuleDef.from_row(rule_row)
            rules.setdefault(rule.dataset_id, []).append(rule)
        datasets = [
            load(DatasetDef.from_row, r.replaced(definition_hash=content_hash(r.as_row())))
            for r in rows.dataset_registry
        ]
        systems = [load(SourceSystemDef.from_row, r) for r in rows.source_systems]
        kinds = {s.source_system_id: s.kind for s in systems if s is not None}
        objects = [
            load(
                lambda r: SourceObjectDef.from_row(
                    r,
                    tuple(columns.get(r.source_object_id, ())),
                    kinds.get(r.source_system_id, SourceKindName(DEFAULT_KIND)),
                ),
                r,
            )
            for r in sorted(rows.source_objects, key=lambda r: r.source_object_id)
        ]
        policies = [
            load(PolicyDef.from_row, r)
            for r in sorted(rows.policy_rules, key=lambda r: r.policy_id)
        ]
        channels = [
            load(ChannelDef.from_row, r)
            for r in sorted(rows.notification_channels, key=lambda r: r.channel_id)
        ]
        routes = [
            load(RouteDef.from_row, r)
            for r in sorted(rows.notification_routes, key=lambda r: r.route_id)
        ]
        problems = _problems(rows, checked_version, unloadable, reach)
        refused = {c for p in problems for c in p.channels}
        refused_routes = {r for p in problems for r in p.routes}
        return cls(
            channels={
                c.channel_id: c for c in channels if c is not None and c.channel_id not in refused
            },
            routes=tuple(
                r
                for r in routes
                if r is not None
                and r.route_id not in refused_routes
                and r.channel_id not in refused
            ),
            datasets={d.dataset_id: d for d in datasets if d is not None},
            systems={s.source_system_id: s for s in systems if s is not None},
            objects=tuple(o for o in objects if o is not None),
            rules_by_dataset={k: tuple(v) for k, v in rules.items()},
            jobs=_jobs(rows),
            policies=tuple(p for p in policies if p is not None),
            profiles=tuple(
                {"profile": r.profile, "change_kind": r.change_kind, "decision": r.decision}
                for r in rows.schema_compatibility_rules
            ),
            config_version=config_version,
            problems=problems,
        )

    def refusal(self, dataset_id: str) -> InvalidDefinition | None:
        """Why the dataset cannot run now: stored definitions it depends on do not validate
        (None: it can run)."""
        found = [p for p in self.problems if dataset_id in p.datasets]
        return refusal_for(f"dataset {dataset_id} cannot run", found) if found else None

    def job_refusal(self, job_id: str) -> InvalidDefinition | None:
        """Why the job cannot start (None: it can); its datasets' own problems fail only
        their attempts."""
        found = [p for p in self.problems if job_id in p.jobs]
        return refusal_for(f"job {job_id} cannot run", found) if found else None

    def schedule_refusal(self, job_id: str) -> InvalidDefinition | None:
        """Why the scheduler cannot fire the job (None: it can)."""
        found = [p for p in self.problems if job_id in p.jobs or job_id in p.schedules]
        return refusal_for(f"job {job_id} cannot be scheduled", found) if found else None

    @property
    def unattached(self) -> tuple[DefinitionProblem, ...]:
        """Problems that block nothing (a rule of a dataset that is not registered): said,
        so that nobody believes such a rule is checked."""
        return tuple(p for p in self.problems if p.blocks_nothing)

    def dataset(self, dataset_id: str) -> DatasetDef:
        if dataset_id not in self.datasets:
            refused = self.refusal(dataset_id)
            if refused is not None:  # registered, but its row does not validate
                raise refused
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

    def source_object(self, source_object_id: str) -> SourceObjectDef:
        """An active source object by id."""
        for obj in self.objects:
            if obj.source_object_id == source_object_id:
                return obj
        raise NotRegisteredError(
            f"source object {source_object_id!r} is not registered or not active",
            where="source_objects",
            fix="declare the source object and apply the document",
        )

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


# Problems by config_version: a registry is loaded again and again with the same definitions
# (each scheduler pass, each request); checking them once per content is enough.
_CHECKED: dict[tuple[str, str], tuple[DefinitionProblem, ...]] = {}
_CHECKED_KEPT = 64
_CHECKED_LOCK = threading.Lock()


def _problems(
    rows: DefinitionSet,
    config_version: str,
    unloadable: list[ValidationError],
    reach: Reach | None,
) -> tuple[DefinitionProblem, ...]:
    """The stored definitions' problems (see lakeguard.rules.catalog.recheck), and any row that did
    not load without recheck naming it."""
    key = (config_version, reach.model_dump_json() if reach is not None else "")
    with _CHECKED_LOCK:
        found = _CHECKED.get(key)
    if found is None:
        found = recheck(rows, reach)
        with _CHECKED_LOCK:
            if len(_CHECKED) >= _CHECKED_KEPT:
                del _CHECKED[next(iter(_CHECKED))]
            _CHECKED[key] = found
    return found + tuple(
        DefinitionProblem(table=table, key=(("key", key),), message=exc.what)
        for exc in unloadable
        for table, key in [_table_and_key(exc.where or "")]
        if not any(p.table == table and key in dict(p.key).values() for p in found)
    )


def _table_and_key(where: str) -> tuple[str, str]:
    """("dataset_registry", "d") from a record's "dataset_registry[d].layer"."""
    table, _, rest = where.partition("[")
    return table, rest.split("]")[0]


def _jobs(rows: DefinitionSet) -> dict[str, JobDef]:
    tasks: dict[str, list[JobTaskRow]] = {}
    for task in rows.job_tasks:
        tasks.setdefault(task.job_id, []).append(task)
    params: dict[str, list[JobParameterRow]] = {}
    for param in rows.job_parameters:
        params.setdefault(param.job_id, []).append(param)
    return {
        j.job_id: JobDef.from_row(j, tasks.get(j.job_id, ()), params.get(j.job_id, ()))
        for j in rows.jobs
    }
