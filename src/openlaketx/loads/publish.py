"""Publishing staged files: one delta-rs commit adds them to a table, without rewriting them.

An allowed append adds the batch's good files to the dataset table; a full load replaces the
table's files with them; a blocked batch (or the malformed part of an allowed one) is moved into
the quarantine table's folder and added there. Each add action carries the statistics of its
file's Parquet footer, so Spark's data skipping works on published files as on its own.
"""

from __future__ import annotations

import json

from deltalake import CommitProperties, DeltaTable, Field, Schema, Transaction
from deltalake.exceptions import CommitFailedError
from deltalake.transaction import AddAction, RemoveAction, create_table_with_add_actions

from lakeguard.records.objectstore import storage_options
from lakeguard.records.schema.delta_json import DeltaField, DeltaSchema
from lakeguard.words.errors import SchemaDriftError, WriteConflict
from lakeguard.words.vocabulary import is_staged_only
from openlaketx import storage
from openlaketx.loads.commit import CommitTag, TaggedCommit, committed, conflict
from openlaketx.loads.footers import FileFooter, delta_stats
from openlaketx.loads.staging import StagedBatch

# Columns the engine adds to every dataset row; a table created before one existed gets it.
LINEAGE_PREFIX = "_laketx_"


def fields_of(schema: DeltaSchema, drop: frozenset[str] = frozenset()) -> list[DeltaField]:
    """The schema's fields a table takes, nullable (files carry no NOT NULL guarantee of their
    own): neither those in `drop` nor the staged-only ones."""
    return [
        {**f, "nullable": True, "metadata": f.get("metadata") or {}}
        for f in schema["fields"]
        if f["name"] not in drop and not is_staged_only(f["name"])
    ]


def _struct(fields: list[DeltaField]) -> Schema:
    return Schema.from_json(json.dumps({"type": "struct", "fields": fields}))


def evolve(
    existing: list[DeltaField],
    incoming: list[DeltaField],
    *,
    where: str,
    may_add: bool,
) -> list[DeltaField] | None:
    """The table schema after adding `incoming` rows, or None when it does not change.

    A column with another type is refused; a new column is added when `may_add` says so
    (quarantine tables keep whatever a rejected batch had) or when it is a lineage column.
    """
    have = {f["name"]: f for f in existing}
    added = []
    for field in incoming:
        old = have.get(field["name"])
        if old is None:
            if not (may_add or field["name"].startswith(LINEAGE_PREFIX)):
                raise SchemaDriftError(
                    f"the batch has a column {field['name']!r} that the table does not",
                    where=where,
                    fix="schema evolution is not automatic for dataset tables yet: add the "
                    "column to the table (ALTER TABLE ... ADD COLUMNS) or drop it from the source",
                )
            added.append(field)
        elif json.dumps(old["type"], sort_keys=True) != json.dumps(field["type"], sort_keys=True):
            raise SchemaDriftError(
                f"column {field['name']!r} is {old['type']} in the table and "
                f"{field['type']} in the batch",
                where=where,
                fix="keep the declared type, or migrate the table to the new type first",
            )
    return [*existing, *added] if added else None


def add_actions(table_path: str, footers: list[FileFooter], columns: list[str]) -> list[AddAction]:
    return [
        AddAction(
            storage.relative(f.path, table_path),
            f.size,
            {},
            f.modification_time,
            True,
            delta_stats(f, columns),
        )
        for f in footers
    ]


def _commit(
    table_path: str,
    table: DeltaTable | None,
    actions: list[AddAction],
    fields: list[DeltaField],
    props: CommitProperties,
    *,
    mode: str,
    may_add: bool,
) -> None:
    """Commit `actions` to `table` (opened once by the caller), or create it with them."""
    if table is None:
        create_table_with_add_actions(
            table_path,
            _struct(fields),
            actions,
            mode="error",
            commit_properties=props,
            storage_options=storage_options(table_path),
        )
        return
    schema = ensure_columns(table_path, fields, may_add=may_add, table=table)
    changes: list[AddAction | RemoveAction] = [*actions]
    table.create_write_transaction(
        changes, mode=mode, schema=_struct(schema), commit_properties=props
    )


def ensure_columns(
    table_path: str,
    fields: list[DeltaField],
    *,
    may_add: bool = False,
    table: DeltaTable | None = None,
) -> list[DeltaField]:
    """Add the columns of `fields` a table lacks (see `evolve`); returns its schema after.
    `table`: the table already open (it is brought up to date with the new columns).

    delta-rs keeps a table's schema on an append, and Spark's MERGE does not add columns
    either, so new columns are added in a commit of their own before the data commit.
    """
    dt = table if table is not None else storage.delta_table(table_path)
    existing = fields_of(json.loads(dt.schema().to_json()))
    evolved = evolve(existing, fields, where=table_path, may_add=may_add)
    if evolved is None:
        return existing
    known = {e["name"] for e in existing}
    dt.alter.add_columns(
        [Field.from_json(json.dumps(f)) for f in evolved if f["name"] not in known]
    )
    dt.update_incremental()  # the data commit goes on top of the new columns
    return evolved


def create_empty(table_path: str, fields: list[DeltaField]) -> None:
    """Create a table with no rows (a maintenance commit) for a first MERGE to publish into."""
    DeltaTable.create(
        table_path, _struct(fields), mode="error", storage_options=storage_options(table_path)
    )


def publish(
    table_path: str,
    batch: StagedBatch,
    tag: CommitTag,
    *,
    overwrite: bool,
    drop: frozenset[str],
    may_add: bool = False,
) -> TaggedCommit:
    """Add the batch's good files to the dataset table in one tagged, idempotent commit."""
    fields = fields_of(batch.schema, drop)
    actions = add_actions(table_path, batch.good, [f["name"] for f in fields])
    props = CommitProperties(
        custom_metadata={"userMetadata": tag.user_metadata(rows=batch.good_rows)},
        app_transactions=[Transaction(tag.app_id, tag.data_version)],
    )
    # opened once for the idempotency check, the new columns and the commit
    table = storage.delta_table(table_path) if storage.is_delta_table(table_path) else None
    if table is not None:
        done = table.transaction_version(tag.app_id)
        if done is not None and done >= tag.data_version:
            raise WriteConflict(
                f"version {tag.data_version} of {tag.dataset_id} was already published",
                where=table_path,
                fix="retry the run: it adopts the published commit",
            )
    try:
        _commit(
            table_path,
            table,
            actions,
            fields,
            props,
            mode="overwrite" if overwrite else "append",
            may_add=may_add,
        )
    except CommitFailedError as exc:
        raise conflict(tag, table_path) from exc
    return committed(table_path, tag)


def _move(files: list[FileFooter], source: str, target: str) -> list[FileFooter]:
    """Move a batch part's folder: a rename on one disk, a copy then a delete on an object
    store (where the quarantine commit that follows makes the copy count)."""
    storage.move_tree(source, target)
    return [
        FileFooter(
            path=storage.join(target, storage.relative(f.path, source)),
            size=f.size,
            modification_time=f.modification_time,
            num_records=f.num_records,
            columns=f.columns,
        )
        for f in files
    ]


def quarantine(
    quarantine_path: str, batch: StagedBatch, run_id: str, *, malformed_only: bool
) -> int:
    """Move the batch (or its malformed part) into the quarantine table and add it there.

    Returns the rows quarantined. The rows keep every column they were staged with, the run id
    and the rules each row broke, so a rejected batch can be inspected and replayed.
    """
    files = batch.malformed if malformed_only else [*batch.good, *batch.malformed]
    if not files:
        return 0
    source = batch.part_folder(malformed=True) if malformed_only else batch.folder
    part = "malformed" if malformed_only else "batch"
    moved = _move(files, source, f"{quarantine_path.rstrip('/')}/run-{run_id}-{part}")
    fields = fields_of(batch.schema)
    props = CommitProperties(
        custom_metadata={"userMetadata": json.dumps({"laketx_quarantine": {"run_id": run_id}})}
    )
    exists = storage.is_delta_table(quarantine_path)
    _commit(
        quarantine_path,
        storage.delta_table(quarantine_path) if exists else None,
        add_actions(quarantine_path, moved, [f["name"] for f in fields]),
        fields,
        props,
        mode="append",
        may_add=True,
    )
    return sum(f.num_records for f in moved)
