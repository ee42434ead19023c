"""The store's own log: metadata documents synced by a watcher and migrations of the
store's schema."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, ClassVar

from lakeguard.records.rows.runtime import RuntimeRow, new_id
from lakeguard.records.rows.schema import Comment, Int32, RuntimeTable
from lakeguard.words.vocabulary import SyncOutcome


@dataclass(frozen=True, kw_only=True)
class MetadataSyncRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="metadata_syncs",
        comment=(
            "Each sync of a YAML document from a watched folder (laketx watch, or serve's "
            "watcher): the file, its content hash, the outcome and what changed. A file version is"
            " claimed by compare-and-set, so two watchers on one folder apply it once."
        ),
        day="synced_date",
        date_of="synced_at",
        cluster_by=("tenant_id", "file"),
    )
    sync_id: str = field(default_factory=new_id)
    tenant_id: str
    folder: Annotated[str, Comment("The watched folder")]
    file: Annotated[str, Comment("The document's path under the folder")]
    content_hash: Annotated[
        str, Comment("sha256 of the file's bytes (of the last applied version, for a removal)")
    ]
    outcome: Annotated[
        SyncOutcome,
        Comment(
            "APPLYING (claimed), APPLIED, UNCHANGED, REFUSED (invalid: nothing applied), FAILED "
            "(retried), DEACTIVATED (removed, with --deactivate-missing)"
        ),
    ]
    changes: Annotated[
        str | None,
        Comment("JSON: the definitions created, updated or deactivated [{table, key, action}]"),
    ] = None
    definitions: Annotated[
        str | None,
        Comment(
            "JSON: every definition the document defines [[table, key...]], what a removal "
            "deactivates"
        ),
    ] = None
    errors: Annotated[
        str | None, Comment("JSON: why it was refused or failed [{path, message}]")
    ] = None
    watcher: Annotated[str, Comment("host:pid of the watcher")]
    synced_at: datetime


@dataclass(frozen=True, kw_only=True)
class StoreMigrationRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="store_migrations",
        comment=(
            "Each migration of the store's own schema (laketx migrate), in order. The version each"
            " table is at is its table property laketx.store_version."
        ),
        day="applied_date",
        date_of="applied_at",
        cluster_by=("tenant_id", "version"),
    )
    version: Annotated[Int32, Comment("The migration's number")]
    name: str
    tenant_id: Annotated[str, Comment("The tenant whose store it migrated")]
    applied_at: datetime
    worker: Annotated[str, Comment("host:pid that ran it")]
    changes: Annotated[str | None, Comment("JSON: what it changed, table by table")] = None
