"""Re-validation of the stored definitions (pure): the checks `validate` runs on a document,
run on the rows of the definition tables, each problem scoped to what it blocks.

Definition rows may be edited directly (INSERT, UPDATE or `active = false` through `laketx sql`
or any Spark session; docs/metadata.md), so every registry load checks them again. The active
rows are written back as a document (`export`), each entry is checked alone by its model, the
entries that pass are checked together (`references`: columns, vetted SQL, parents, cron), and
what a document cannot say is checked on the rows themselves (JSON that does not parse, a row
naming a dataset, system or job that is not registered). Each problem names its table and key
and what it blocks:

- a dataset's row, its rules, its source objects (their columns and systems), the policies of
  its layer and the schema profile it uses: that dataset (its attempt fails, saying why);
- a job's row or tasks: that job (it does not start); its schedule or time zone: its schedule
  only (the scheduler skips it, saying why; a manual run still works);
- a notification channel's row: that channel (nothing is sent to it); a route's: that route;
- a row that names nothing registered (a rule of an unknown dataset): nothing; it is reported.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import JsonValue, TypeAdapter
from pydantic import ValidationError as PydanticError

from lakeguard.records.alerts.channel_rows import ChannelRow
from lakeguard.records.checks.rule_rows import PolicyRuleRow
from lakeguard.records.definitions.sets import DOCUMENT_TABLES, DefinitionSet
from lakeguard.records.reach import Reach
from lakeguard.records.rows.definition import DefinitionRow
from lakeguard.records.sources.kinds import DEFAULT_KIND
from lakeguard.records.sources.rows import SourceColumnRow, SourceSystemRow
from lakeguard.rules.catalog.alert_models import NotificationChannel, NotificationRoute
from lakeguard.rules.catalog.checks.reach import check_reach
from lakeguard.rules.catalog.export import export_document
from lakeguard.rules.catalog.models import (
    Dataset,
    Job,
    MetadataDocument,
    Policy,
    SchemaProfile,
    SourceObject,
    SourceSystem,
)
from lakeguard.rules.catalog.references import check_references
from lakeguard.rules.catalog.sections import Entry
from lakeguard.rules.catalog.sections import section as entries
from lakeguard.rules.quality.kinds import parse_rule
from lakeguard.words.errors import InvalidDefinition, LakeTxError

Key = tuple[tuple[str, str], ...]

# Document section -> the table its entries come from, and the model that checks one entry.
_SECTIONS: dict[str, tuple[str, Callable[[Entry], Any]]] = {
    "schema_profiles": ("schema_compatibility_rules", SchemaProfile.model_validate),
    "policies": ("policy_rules", Policy.model_validate),
    "source_systems": ("source_systems", TypeAdapter(SourceSystem).validate_python),
    "source_objects": ("source_objects", SourceObject.model_validate),
    "datasets": ("dataset_registry", Dataset.model_validate),
    "rules": ("quality_rules", parse_rule),
    "jobs": ("jobs", Job.model_validate),
    "notification_channels": (
        "notification_channels",
        TypeAdapter(NotificationChannel).validate_python,
    ),
    "notification_routes": ("notification_routes", NotificationRoute.model_validate),
}
# JSON-in-STRING columns and the JSON type each must hold.
_JSON_COLUMNS: dict[str, tuple[tuple[str, type], ...]] = {
    "quality_rules": (("rule_expression", dict),),
    "dataset_registry": (("transform", dict),),
    "source_systems": (("connection_options", dict),),
    "source_objects": (("read_options", dict), ("ingest_options", dict)),
    "source_object_columns": (("dq_rule_set", list),),
    "policy_rules": (("parameters", dict),),
    "notification_channels": (("options", dict),),
}
# Each section's table's id column (the key after the tenant).
_ID_COLUMNS = {table: DOCUMENT_TABLES[table].TABLE.keys[1] for table, _ in _SECTIONS.values()}
# Job fields that only decide when the scheduler fires it.
_SCHEDULE_FIELDS = ("schedule", "timezone")


@dataclass(frozen=True, kw_only=True)
class DefinitionProblem:
    """One stored definition that does not validate, and what it blocks."""

    table: str
    key: Key  # the row's key columns (tenant aside) and values
    message: str
    datasets: frozenset[str] = frozenset()  # whose attempts fail
    jobs: frozenset[str] = frozenset()  # which jobs do not start
    schedules: frozenset[str] = frozenset()  # which jobs the scheduler does not fire
    channels: frozenset[str] = frozenset()  # which notification channels are sent nothing
    routes: frozenset[str] = frozenset()  # which notification routes send nothing

    @property
    def where(self) -> str:
        if not self.key:
            return self.table
        return f"{self.table}[{', '.join(f'{k}={v}' for k, v in self.key)}]"

    @property
    def fix(self) -> str:
        if not self.key:
            return f"correct the rows of {self.table}, or re-apply the document that declares them"
        cond = " AND ".join(f"{k} = '{v}'" for k, v in self.key)
        return (
            f"correct the row (UPDATE {self.table} SET ... WHERE {cond}), deactivate it "
            "(SET active = false), or re-apply the document that declares it"
        )

    @property
    def blocks_nothing(self) -> bool:
        return not (self.datasets or self.jobs or self.schedules or self.channels or self.routes)

    def entry(self) -> dict[str, str]:
        return {
            "path": self.where,
            "message": self.message,
            "table": self.table,
            "key": ", ".join(f"{k}={v}" for k, v in self.key),
            "fix": self.fix,
        }


def refusal(subject: str, problems: Sequence[DefinitionProblem]) -> InvalidDefinition:
    """The error a run (or a schedule) refused for `problems` raises: the first one's table
    and key as where, its fix, and every one of them listed."""
    first = problems[0]
    several = len(problems) > 1
    return InvalidDefinition(
        f"{subject}: {len(problems) if several else 'a'} stored definition"
        f"{'s do' if several else ' does'} not validate",
        where=first.where,
        fix=first.fix
        if not several
        else "correct or deactivate each listed row, or re-apply the documents that declare them",
        errors=[p.entry() for p in problems],
        details={"table": first.table, "key": dict(first.key)},
    )


class _World:
    """Who uses what among the registered definitions: the scope of a problem."""

    def __init__(self, rows: DefinitionSet) -> None:
        self.layers = {r.dataset_id: r.layer for r in rows.dataset_registry}
        self.objects = {r.source_object_id: r for r in rows.source_objects}
        self.systems = {r.source_system_id for r in rows.source_systems}
        self.jobs = {r.job_id for r in rows.jobs}
        self.profiles: dict[str, set[str]] = {}
        for row in rows.dataset_registry:
            profile = _loads(row.transform, {}).get("schema_profile") or "additive"
            self.profiles.setdefault(str(profile), set()).add(row.dataset_id)
        for obj in self.objects.values():
            profile = obj.schema_compat_profile or "additive"
            self.profiles.setdefault(profile, set()).add(obj.dataset_id)

    def registered(self, datasets: Iterable[str | None]) -> frozenset[str]:
        return frozenset(str(d) for d in datasets if str(d) in self.layers)

    def of_system(self, system_id: str) -> frozenset[str]:
        return self.registered(
            o.dataset_id for o in self.objects.values() if o.source_system_id == system_id
        )

    def of_layers(self, layers: Iterable[object]) -> frozenset[str]:
        wanted = {str(x) for x in layers}
        return frozenset(d for d, layer in self.layers.items() if layer in wanted)


def _loads(text: Any, default: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) and text else default
    except json.JSONDecodeError:
        return default


def _key(row: DefinitionRow) -> Key:
    names = [k for k in row.TABLE.keys if k != "tenant_id"]
    return tuple((k, str(v)) for k, v in zip(names, row.key(), strict=True))


def _row_scope(row: DefinitionRow, world: _World) -> frozenset[str]:
    """The registered datasets a row takes part in."""
    if isinstance(row, SourceSystemRow):
        return world.of_system(row.source_system_id)
    if isinstance(row, PolicyRuleRow):
        return world.of_layers(row.applies_to_layer.split(","))
    if isinstance(row, SourceColumnRow):
        owner = world.objects.get(row.source_object_id)
        return world.registered([owner.dataset_id if owner else None])
    return world.registered([getattr(row, "dataset_id", None)])


def _json_problem(row: DefinitionRow) -> str | None:
    """What is wrong with a row's JSON-in-STRING columns (None: nothing)."""
    for column, kind in _JSON_COLUMNS.get(row.TABLE.name, ()):
        text = getattr(row, column)
        if not text:
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            return f"{column} is not JSON ({exc.msg} at character {exc.pos})"
        if not isinstance(value, kind):
            return f"{column} must be a JSON {'object' if kind is dict else 'array'}"
    return None


def _row_problems(
    rows: DefinitionSet, world: _World
) -> tuple[list[DefinitionProblem], DefinitionSet]:
    """Problems a document cannot express (JSON that does not parse, rows naming nothing
    registered), and the rows an export can be made of."""
    problems: list[DefinitionProblem] = []

    def report(row: DefinitionRow, message: str, datasets: Iterable[str | None] = ()) -> None:
        own = frozenset({row.channel_id}) if isinstance(row, ChannelRow) else frozenset()
        table, key, scope = row.TABLE.name, _key(row), world.registered(datasets)
        problems.append(
            DefinitionProblem(table=table, key=key, message=message, datasets=scope, channels=own)
        )

    kept: dict[str, list[DefinitionRow]] = {}
    for table, table_rows in rows.tables():
        kept[table] = []
        for row in table_rows:
            broken = _json_problem(row)
            if broken is None:
                kept[table].append(row)
            else:
                report(row, broken, _row_scope(row, world))
    for rule in rows.quality_rules:
        if rule.dataset_id not in world.layers:
            report(
                rule,
                f"dataset_id {rule.dataset_id!r} names no active registered dataset: the rule "
                "checks nothing",
            )
    for obj in rows.source_objects:
        if obj.dataset_id not in world.layers:
            report(
                obj,
                f"dataset_id {obj.dataset_id!r} names no active registered dataset: nothing "
                "reads this source",
            )
        elif obj.source_system_id not in world.systems:
            report(
                obj,
                f"source_system_id {obj.source_system_id!r} names no active source system",
                [obj.dataset_id],
            )
    for task in rows.job_tasks:
        if task.job_id not in world.jobs:
            report(task, f"job_id {task.job_id!r} names no active job: it never runs")
    return problems, rows.where(kept)


def _said(error: Any) -> str:
    """A pydantic error's message, with the stored value when it is a plain one."""
    value = error.get("input")
    if isinstance(value, str | int | float | bool):
        return f"{error['msg']} (stored: {value!r})"
    return str(error["msg"])


def _dig(entry: Entry, *path: str | int) -> JsonValue:
    """The value at `path` inside an entry (a list's item by index); None where the entry
    has another shape there (a direct SQL edit can make any)."""
    found: JsonValue = entry
    for step in path:
        if isinstance(found, dict) and isinstance(step, str):
            found = found.get(step)
        elif isinstance(found, list) and isinstance(step, int) and 0 <= step < len(found):
            found = found[step]
        else:
            return None
    return found


def _located(
    section: str, entry: Entry, rest: tuple[Any, ...], message: str, world: _World
) -> DefinitionProblem:
    """A problem found at `rest` inside a document entry, as its row and scope say it."""
    table = _SECTIONS[section][0]
    entry_id = str(entry.get("id"))
    key: Key = ((_ID_COLUMNS[table], entry_id),)
    datasets: frozenset[str] = frozenset()
    jobs: frozenset[str] = frozenset()
    schedules: frozenset[str] = frozenset()
    channels: frozenset[str] = frozenset()
    routes: frozenset[str] = frozenset()
    if section == "notification_channels":
        channels = frozenset({entry_id})
    elif section == "notification_routes":
        routes = frozenset({entry_id})
    elif section == "schema_profiles":
        if rest[:1] == ("rules",) and len(rest) > 1:
            key, rest = (*key, ("change_kind", str(rest[1]))), rest[2:]
        datasets = world.registered(world.profiles.get(entry_id, ()))
    elif section == "policies":
        layers = entry.get("applies_to")
        datasets = world.of_layers(layers if isinstance(layers, list) else ())
    elif section == "source_systems":
        datasets = world.of_system(entry_id)
    elif section in ("source_objects", "rules"):
        datasets = world.registered([str(entry.get("dataset"))])
        if rest[:1] == ("columns",) and len(rest) > 1 and isinstance(rest[1], int):
            column = str(_dig(entry, "columns", rest[1], "name"))
            table, key, rest = "source_object_columns", (*key, ("column_name", column)), rest[2:]
    elif section == "datasets":
        datasets = world.registered([entry_id])
    elif rest[:1] and rest[0] in _SCHEDULE_FIELDS:
        schedules = frozenset({entry_id})
    else:
        jobs = frozenset({entry_id})
        if rest[:1] == ("tasks",):
            table = "job_tasks"
            if len(rest) > 1 and isinstance(rest[1], int):
                key, rest = (*key, ("task_id", str(_dig(entry, "tasks", rest[1], "id")))), rest[2:]
            else:
                rest = rest[1:]
        elif rest[:1] == ("parameters",):
            table, rest = "job_parameters", rest[1:]
            if rest:
                key, rest = (*key, ("param_key", str(rest[0]))), rest[1:]
    tags = {
        entry.get("type"),
        str(entry.get("kind") or DEFAULT_KIND).upper(),
    }  # pydantic's union tags
    field = ".".join(str(p) for p in rest if p not in tags)
    return DefinitionProblem(
        table=table,
        key=key,
        message=f"{field}: {message}" if field else message,
        datasets=datasets,
        jobs=jobs,
        schedules=schedules,
        channels=channels,
        routes=routes,
    )


def recheck(rows: DefinitionSet, reach: Reach | None = None) -> tuple[DefinitionProblem, ...]:
    """Every problem of the active stored definitions (`rows`: table -> rows), each with what
    it blocks (empty when they validate); with the tenant's `reach`, every field that names
    what it may not reach too (a row written by SQL, or before the tenant was confined)."""
    world = _World(rows)
    problems, kept = _row_problems(rows, world)
    try:
        document = export_document(kept)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:  # edited past an export
        problems.append(
            DefinitionProblem(
                table="definitions",
                key=(),
                message=f"the stored definitions cannot be written back as a document ({exc!r}); "
                "only the checks above were made",
            )
        )
        return tuple(problems)
    passed: dict[str, list[tuple[Entry, Any]]] = {}
    invalid: set[str] = set()  # datasets whose own entry does not validate
    for section, (_, check) in _SECTIONS.items():
        passed[section] = []
        for entry in entries(document, section):
            try:
                passed[section].append((entry, check(entry)))
            except PydanticError as exc:
                problems += [
                    _located(section, entry, tuple(e["loc"]), _said(e), world) for e in exc.errors()
                ]
                if section == "datasets":
                    invalid.add(str(entry.get("id")))
    doc = MetadataDocument.model_validate(
        {s: [model for _, model in found] for s, found in passed.items()}
    )
    doc_problems = check_references(doc)
    if reach is not None:
        doc_problems += check_reach(doc, reach)
    for problem in doc_problems:
        section, *rest = problem.loc
        message = problem.message
        for dataset_id in sorted(invalid):  # not unknown: stored, but its row is the problem
            if f"dataset {dataset_id!r}" in message:
                message += f" (its own row, dataset_registry[dataset_id={dataset_id}], is invalid)"
        if rest and isinstance(rest[0], int):
            entry = passed[section][rest[0]][0]
            problems.append(_located(section, entry, tuple(rest[1:]), message, world))
        else:  # about a whole section (a cycle among datasets): said, blocking nothing
            table = _SECTIONS[section][0]
            problems.append(DefinitionProblem(table=table, key=(), message=problem.message))
    said = {p.where for p in problems}
    for entry, rule in passed["rules"]:
        try:  # what the run does with it; said once, where nothing above said it
            rule.compile()
        except (ValueError, LakeTxError) as exc:
            found = _located("rules", entry, (), getattr(exc, "what", str(exc)), world)
            if found.where not in said:
                problems.append(found)
    return tuple(problems)
