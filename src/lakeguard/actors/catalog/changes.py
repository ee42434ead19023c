"""What changed in the definitions since a time or a table version (seed 004's change
detection), from the definition tables' own Delta history: no JVM, no bookkeeping of ours.

`diff` is pure: two sets of stored rows in, one entry per changed definition out. A change of
a child row (a job's task or parameter, a source object's column) is reported on its parent,
as the field that changed under it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal, TypedDict

from pydantic import JsonValue

from lakeguard.records.definitions.sets import DOCUMENT_TABLES, DefinitionSet
from lakeguard.records.rows.definition import DefinitionRow
from lakeguard.records.sameness import BOOKKEEPING
from lakeguard.store import deltars
from lakeguard.words.errors import ConfigError

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore

Action = Literal["new", "updated", "deactivated", "reactivated"]
# A definition field's value as its table holds it (a JSON-object column opened one level)
FieldValue = JsonValue


class FieldJson(TypedDict):
    old: FieldValue
    new: FieldValue


class ChangeJson(TypedDict):
    """A change as `laketx changes --json` and `GET /definitions/changes` write it."""

    kind: str
    id: str
    action: Action
    fields: dict[str, FieldJson]
    updated_at: str | None


# the table versions a report compared: from (None: the table did not exist yet) and to
# ("from" is a keyword, hence the functional form)
Span = TypedDict("Span", {"from": int | None, "to": int})


class ReportJson(TypedDict):
    changes: list[ChangeJson]
    tables: dict[str, Span]


@dataclass(frozen=True)
class Watched:
    """A definition table as the change report names it."""

    kind: str  # what the report calls one of its rows
    key: str  # its id column
    parent: tuple[str, str] | None = None  # (kind, id column) of the definition it belongs to
    member: tuple[str, ...] = ()  # the columns that name it within its parent


WATCHED: dict[str, Watched] = {
    "jobs": Watched("job", "job_id"),
    "job_tasks": Watched("job", "job_id", ("job", "job_id"), ("tasks", "task_id")),
    "job_parameters": Watched("job", "job_id", ("job", "job_id"), ("parameters", "param_key")),
    "dataset_registry": Watched("dataset", "dataset_id"),
    "source_systems": Watched("source_system", "source_system_id"),
    "source_objects": Watched("source_object", "source_object_id"),
    "source_object_columns": Watched(
        "source_object",
        "source_object_id",
        ("source_object", "source_object_id"),
        ("columns", "column_name"),
    ),
    "quality_rules": Watched("rule", "rule_id"),
    "policy_rules": Watched("policy", "policy_id"),
    "notification_channels": Watched("notification_channel", "channel_id"),
    "notification_routes": Watched("notification_route", "route_id"),
}


@dataclass
class DefinitionChange:
    """One definition that is new, updated, deactivated or reactivated, with what changed."""

    kind: str
    id: str
    action: Action
    fields: dict[str, tuple[FieldValue, FieldValue]] = field(default_factory=dict)  # (old, new)
    updated_at: datetime | None = None

    def as_json(self) -> ChangeJson:
        return {
            "kind": self.kind,
            "id": self.id,
            "action": self.action,
            "fields": {k: {"old": o, "new": n} for k, (o, n) in sorted(self.fields.items())},
            "updated_at": self.updated_at.isoformat() if self.updated_at else None,
        }


def _flat(row: DefinitionRow) -> dict[str, FieldValue]:
    """The row's definition fields as its table holds them, JSON-object columns opened one
    level (`transform.filter`)."""
    out: dict[str, FieldValue] = {}
    for name, value in row.as_row().items():
        if name in BOOKKEEPING:
            continue
        parsed = _object(value)
        if parsed is None:
            out[name] = list(value) if isinstance(value, tuple) else value
        else:
            for inner, inner_value in parsed.items():
                out[f"{name}.{inner}"] = inner_value
    return out


def _object(value: object) -> dict[str, FieldValue] | None:
    if not (isinstance(value, str) and value.startswith("{")):
        return None
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _field_changes(
    old: DefinitionRow, new: DefinitionRow, prefix: str = ""
) -> dict[str, tuple[FieldValue, FieldValue]]:
    before, after = _flat(old), _flat(new)
    return {
        f"{prefix}{name}": (before.get(name), after.get(name))
        for name in sorted(set(before) | set(after))
        if before.get(name) != after.get(name)
    }


def _keyed(
    rows: tuple[DefinitionRow, ...], spec: Watched
) -> dict[tuple[object, ...], DefinitionRow]:
    return {(getattr(r, spec.key), *(getattr(r, m) for m in spec.member[1:])): r for r in rows}


def _table_changes(
    spec: Watched, before: tuple[DefinitionRow, ...], after: tuple[DefinitionRow, ...]
) -> list[DefinitionChange]:
    old, new = _keyed(before, spec), _keyed(after, spec)
    found = []
    for key in sorted(set(old) | set(new), key=lambda k: tuple(map(str, k))):
        was, now = old.get(key), new.get(key)
        was_active = bool(was and was.active)
        is_active = bool(now and now.active)
        when = now.updated_at if now else None
        name = f"{spec.member[0]}[{key[1]}]." if spec.member else ""
        if spec.parent is not None:  # a member: any change is its parent's update
            if was_active and is_active and was is not None and now is not None:
                fields = _field_changes(was, now, name)
            elif is_active and now is not None:
                fields = {name.rstrip("."): (None, "added")}
            elif was_active:
                fields = {name.rstrip("."): ("present", None)}
            else:
                continue
            if fields:
                found.append(DefinitionChange(spec.kind, str(key[0]), "updated", fields, when))
            continue
        if is_active and not was_active:
            action: Action = "new" if was is None else "reactivated"
            found.append(DefinitionChange(spec.kind, str(key[0]), action, {}, when))
        elif was_active and not is_active:
            found.append(DefinitionChange(spec.kind, str(key[0]), "deactivated", {}, when))
        elif was_active and is_active and was is not None and now is not None:
            fields = _field_changes(was, now)
            if fields:
                found.append(DefinitionChange(spec.kind, str(key[0]), "updated", fields, when))
    return found


def diff(before: DefinitionSet, after: DefinitionSet) -> list[DefinitionChange]:
    """Every watched definition that differs between two states of the tables, one entry per
    definition (a parent's member changes merged into it), ordered by kind and id."""
    merged: dict[tuple[str, str], DefinitionChange] = {}
    for table, spec in WATCHED.items():
        for change in _table_changes(spec, before.rows(table), after.rows(table)):
            known = merged.get((change.kind, change.id))
            if known is None:
                merged[(change.kind, change.id)] = change
                continue
            if known.action == "updated" and change.action != "updated":
                known.action = change.action  # new/deactivated says more than its members
            known.fields.update(change.fields)
            if change.updated_at and (
                known.updated_at is None or change.updated_at > known.updated_at
            ):
                known.updated_at = change.updated_at
    for change in merged.values():
        if change.action in ("new", "deactivated"):
            change.fields = {}  # the whole definition came or went; its members say nothing more
    return [merged[k] for k in sorted(merged)]


def parse_since(text: str, now: datetime) -> datetime:
    """A point in time: ISO 8601 (`2026-11-26`, `2026-11-26T10:00`, naive means UTC) or an age
    (`90m`, `2h`, `7d`, `30s`). Naive UTC, as metadata timestamps are."""
    units = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
    stripped = text.strip()
    if stripped[:-1].isdigit() and stripped[-1:] in units:
        return now - timedelta(**{units[stripped[-1]]: int(stripped[:-1])})
    try:
        when = datetime.fromisoformat(stripped)
    except ValueError:
        raise ConfigError(
            f"--since {text!r} is neither a time nor an age",
            where="--since",
            fix="give an ISO time (2026-11-26T10:00, UTC unless it says) or an age (90m, 2h, 7d)",
        ) from None
    return when.astimezone(UTC).replace(tzinfo=None) if when.tzinfo else when


@dataclass(frozen=True)
class ChangeReport:
    """The changes, and the state each table was compared from (its version, or None when the
    table did not exist yet) and to."""

    changes: list[DefinitionChange]
    compared: dict[str, tuple[int | None, int]]

    def as_json(self) -> ReportJson:
        return {
            "changes": [c.as_json() for c in self.changes],
            "tables": {t: {"from": a, "to": b} for t, (a, b) in self.compared.items()},
        }


def definition_changes(
    store: MetadataStore,
    *,
    since: datetime | None = None,
    since_version: int | None = None,
    tables: tuple[str, ...] = tuple(WATCHED),
) -> ChangeReport:
    """Changes of this tenant's definitions since time `since` (each table as its last commit
    at or before it left it) or since table version `since_version` of each table."""
    if (since is None) == (since_version is None):
        raise ConfigError(
            "say since when: a time or a table version",
            fix="give one of --since TIME and --since-version N",
        )
    before: list[DefinitionRow] = []
    after: list[DefinitionRow] = []
    compared: dict[str, tuple[int | None, int]] = {}
    histories = {t: deltars.history(t, store.location(t), limit=None) for t in tables}
    latest = {t: max(int(h["version"]) for h in found) for t, found in histories.items()}
    if since_version is not None and since_version > max(latest.values()):
        raise ConfigError(
            f"no definition table has a version {since_version} (the latest is "
            f"{max(latest.values())})",
            where=f"--since-version {since_version}",
            fix="give a smaller version, or a time with --since",
        )
    for table, history in histories.items():
        current = latest[table]
        if since_version is not None:
            start: int | None = min(since_version, current)  # not there yet: nothing changed
        else:
            assert since is not None
            stamp = since.replace(tzinfo=UTC).timestamp() * 1000
            older = [int(h["version"]) for h in history if h["timestamp"] <= stamp]
            start = max(older) if older else None
        row_type = DOCUMENT_TABLES[table]
        if start is not None:  # a row of a version from before a column reads it as NULL
            before += store.definitions(row_type, version=start, active_only=False)
        after += store.definitions(row_type, active_only=False)
        compared[table] = (start, current)
    return ChangeReport(diff(DefinitionSet.of(before), DefinitionSet.of(after)), compared)
