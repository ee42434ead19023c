"""The definition tables declared by their row classes (no Spark): each table's schema is its
class's fields, column by column with their types; an existing store's columns stay as they
were; a stored NULL reads as the field's default and is kept as NULL when written back."""

from __future__ import annotations

import json
import types
from dataclasses import MISSING, fields
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

import pytest

from lakeguard.records.alerts.channel_rows import RouteRow
from lakeguard.records.definitions.jobs import JobRow
from lakeguard.records.definitions.sets import DOCUMENT_TABLES, DefinitionSet
from lakeguard.records.rows.schema import DeltaType, Stamped
from lakeguard.records.sameness import content_hash
from lakeguard.records.sources.rows import SourceObjectRow
from lakeguard.records.table_defs import DEFINITION_ROW_TYPES as ROW_TYPES
from lakeguard.records.table_defs import TableKind, load_table_defs
from lakeguard.rules.catalog.alert_models import NotificationRoute
from lakeguard.rules.catalog.models import Job, SourceObject

STORE_V0 = Path(__file__).parents[2] / "fixtures" / "store_v0" / "metadata" / "lakeguard"
# what each Python type of a field is as a column (`rowschema.py`, said again here by hand)
_COLUMN_TYPES: dict[Any, str] = {
    str: "string",
    int: "long",
    float: "double",
    bool: "boolean",
    datetime: "timestamp",
    list[str]: "array<string>",
}


def _expected(hint: Any, has_default: bool) -> tuple[str, bool]:
    """(column type, nullable) a field's annotation and default say, read independently of
    `rowschema.py`."""
    extras: list[Any] = []
    if get_origin(hint) is Annotated:
        hint, *extras = get_args(hint)
    optional = get_origin(hint) in (Union, types.UnionType) and type(None) in get_args(hint)
    if optional:
        (hint,) = [a for a in get_args(hint) if a is not type(None)]
        if get_origin(hint) is Annotated:
            hint, *more = get_args(hint)
            extras += more
    declared = next((e.name for e in extras if isinstance(e, DeltaType)), None)
    stamped = any(isinstance(e, Stamped) for e in extras)
    return declared or _COLUMN_TYPES[hint], (optional or has_default) and not stamped


def test_each_definition_table_is_its_row_class_column_by_column() -> None:
    defs = load_table_defs()
    declared = {t.TABLE.name for t in ROW_TYPES}
    assert declared == {n for n, t in defs.items() if t.kind is TableKind.DEFINITION}
    assert set(DOCUMENT_TABLES) == declared - {"api_keys"}
    for row_type in ROW_TYPES:
        table = defs[row_type.TABLE.name]
        hints = get_type_hints(row_type, include_extras=True)
        expected = []
        for f in fields(row_type):
            has_default = f.default not in (MISSING, None) or f.default_factory is not MISSING
            expected.append((f.name, *_expected(hints[f.name], has_default)))
        assert [(c.name, c.type, c.nullable) for c in table.columns] == expected, table.name
        assert table.keys == row_type.TABLE.keys and table.keys[0] == "tenant_id"
        for stamp in ("tenant_id", "active", "created_at", "updated_at"):
            assert not table.column(stamp).nullable, (table.name, stamp)
    # no table is declared by a data file any more
    assert not (Path(__file__).parents[3] / "src/lakeguard/store/tables").exists()


def test_an_existing_store_keeps_every_column_it_has_with_its_type() -> None:
    """Store version 0's definition tables (tests/fixtures/store_v0): each of their columns is
    the row class's column at the same place, with the same type and nullability, so a new
    column is only ever added after them (the additive evolution `ensure` makes)."""
    defs = load_table_defs()
    seen = 0
    for folder in sorted(STORE_V0.iterdir()):
        table = defs[folder.name]
        if table.kind is not TableKind.DEFINITION:
            continue
        first = (folder / "_delta_log" / f"{0:020d}.json").read_text().splitlines()
        meta = next(json.loads(line)["metaData"] for line in first if '"metaData"' in line)
        stored = json.loads(meta["schemaString"])["fields"]
        declared = [(c.name, c.nullable) for c in table.columns]
        assert [(f["name"], f["nullable"]) for f in stored] == declared[: len(stored)]
        for f in stored:
            kind = table.column(f["name"]).type
            spelled = {"int": "integer", "array<string>": f["type"]}.get(kind, kind)
            assert f["type"] == spelled, (folder.name, f["name"])
        seen += 1
    assert seen >= 12


def test_a_stored_null_reads_as_the_default_and_stays_null_in_the_table() -> None:
    stored = {
        "tenant_id": "default",
        "job_id": "nightly",
        "retry_delay_seconds": None,
        "max_retries": None,
        "timezone": None,
        "status_flag": "enabled",
        "trigger_sources": None,
        "active": True,
    }
    row = JobRow.from_row(stored)
    # what it means: the field's default, which the document's model also has
    assert (row.retry_delay_seconds, row.max_retries, row.timezone) == (30, 0, "UTC")
    assert row.trigger_sources == [] and row.enabled
    for name in ("retry_delay_seconds", "max_retries", "timezone"):
        assert getattr(row, name) == Job.model_fields[name].default
    # what the table holds: NULL, compared, hashed and written back as NULL
    held = row.as_row()
    assert held["retry_delay_seconds"] is None and held["timezone"] is None
    assert content_hash(held) == content_hash(stored)
    edited = row.replaced(owner="ops")
    assert edited.as_row()["retry_delay_seconds"] is None and edited.owner == "ops"
    assert row.replaced(retry_delay_seconds=5).as_row()["retry_delay_seconds"] == 5
    # the model of every defaulted column takes its default from the row class
    assert (
        SourceObject.model_fields["schema_profile"].default == SourceObjectRow.schema_compat_profile
    )
    assert SourceObject.model_fields["fail_behavior"].default == SourceObjectRow.dq_fail_behavior
    assert (
        SourceObject.model_fields["max_malformed_ratio"].default
        == SourceObjectRow.max_malformed_ratio
    )
    assert NotificationRoute.model_fields["repeat_interval"].default == RouteRow.repeat_interval
    assert NotificationRoute.model_fields["min_severity"].default == RouteRow.min_severity


def test_a_set_holds_each_table_under_its_name() -> None:
    job = JobRow(job_id="j")
    found = DefinitionSet.of([job])
    assert found.jobs == (job,) and found.rows("jobs") == (job,)
    assert [name for name, _ in found.tables()] == list(DOCUMENT_TABLES)
    assert DefinitionSet.from_stored({"jobs": [{"job_id": "j"}]}).jobs == (job,)
    assert found.only(["dataset_registry"]).jobs == ()
    with pytest.raises(TypeError):
        JobRow()  # type: ignore[call-arg]  # a key has no default
