"""The commits of a dataset table, as the control plane reads them (delta-rs, no Spark).

Every promotion's commit carries a tag in its `userMetadata` (`{"laketx": {...}}`: run, dataset,
data version, batch fingerprint, rows written) and a Delta application transaction (app id =
the dataset, txn version = the data version). The engine writes both; this module reads them:
to find a commit a crashed run published, and to audit that every version has its commit.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lakeguard.records.data_tables import delta_table, exists
from lakeguard.records.versioning import MARK_MIGRATION

TAG_KEY = "laketx"
# The tag key of a release: a commit of no data after a MERGE that changed no row, setting the
# dataset's application transaction back to the version before (docs/design.md §5)
RELEASE_KEY = "release"
MERGE_ROWS = ("numTargetRowsInserted", "numTargetRowsUpdated", "numTargetRowsDeleted")
# Operations that change no row (they may rewrite files or the table's metadata).
MAINTENANCE = frozenset(
    {
        "OPTIMIZE",
        "VACUUM START",
        "VACUUM END",
        "ADD COLUMNS",
        "ADD COLUMN",
        "SET TBLPROPERTIES",
        "UNSET TBLPROPERTIES",
        "CHANGE COLUMN",
        "UPGRADE PROTOCOL",
        "ADD FEATURE",
        "CREATE TABLE",
        "REORG",
    }
)


def app_id(tenant: str, dataset_id: str) -> str:
    """The Delta application id of a dataset's promotions (its txn version = data version)."""
    return f"laketx.{tenant}.{dataset_id}"


@dataclass(frozen=True)
class Tag:
    """A commit's laketx tag, as the engine writes it (`openlaketx.loads.commit`): a
    promotion's (its data version, batch, upstream versions and rows) or a release's."""

    run_id: str | None = None
    dataset_id: str | None = None
    data_version: int | None = None
    release: int | None = None  # a release's: the data version whose MERGE changed no row
    batch: str | None = None
    upstream: dict[str, int] = field(default_factory=dict)
    rows: int | None = None


def _int(value: object) -> int | None:
    # a tag edited by hand may hold anything: a value that is not a whole number is absent,
    # so that `verify` reports the commit as not matching its version instead of failing
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def _str(value: object) -> str | None:
    return None if value is None else str(value)


def parse_tag(user_metadata: str | None) -> Tag | None:
    """The laketx tag of a commit's userMetadata, or None when it has none (or none that is a
    JSON object)."""
    if not user_metadata:
        return None
    try:
        tag = json.loads(user_metadata).get(TAG_KEY)
    except (ValueError, AttributeError):
        return None
    if not isinstance(tag, dict):
        return None
    upstream = tag.get("upstream")
    return Tag(
        run_id=_str(tag.get("run_id")),
        dataset_id=_str(tag.get("dataset_id")),
        data_version=_int(tag.get("data_version")),
        release=_int(tag.get(RELEASE_KEY)),
        batch=_str(tag.get("batch")),
        upstream={
            str(k): n
            for k, v in (upstream.items() if isinstance(upstream, dict) else ())
            if (n := _int(v)) is not None
        },
        rows=_int(tag.get("rows")),
    )


@dataclass(frozen=True)
class TaggedCommit:
    """A commit of a dataset table that carries a laketx tag."""

    commit_version: int
    run_id: str
    data_version: int
    batch_fingerprint: str
    metrics: dict[str, str]
    upstream: dict[str, int] = field(default_factory=dict)
    rows: int | None = None  # rows the commit published, when the engine recorded them

    @property
    def changed_nothing(self) -> bool:
        """Whether this is a MERGE that changed no row (no version records it: released)."""
        return not self.rows and changed_no_row(self.metrics)


def changed_no_row(metrics: Mapping[str, Any]) -> bool:
    """Whether a MERGE's operation metrics (Spark's names) say it changed no row."""
    return MERGE_ROWS[0] in metrics and all(int(metrics.get(k) or 0) == 0 for k in MERGE_ROWS)


@dataclass(frozen=True)
class Commit:
    """Any commit of a table: its version, operation and laketx tag (if any)."""

    version: int
    operation: str
    tag: Tag | None
    parameters: dict[str, str] = field(default_factory=dict)  # its operation's, as logged
    migration: str | None = None  # the store migration that made it (its commitInfo marker)
    metrics: dict[str, str] = field(default_factory=dict)  # under Spark's names

    @property
    def maintenance(self) -> bool:
        """Whether the commit only maintains the table (no row added, changed or removed):
        a tagged MERGE that changed no row, and its release, are of it."""
        if self.tag is not None and (self.tag.release is not None or self.empty_merge):
            return True
        if self.operation in MAINTENANCE:
            return self.operation != "CREATE TABLE" or self.tag is None
        return False

    @property
    def empty_merge(self) -> bool:
        return self.operation == "MERGE" and changed_no_row(self.metrics)


def history(path: str, limit: int | None = None) -> list[Commit]:
    """The table's commits, newest first (empty when there is no Delta table at `path`)."""
    if not exists(path):
        return []
    return [
        Commit(
            version=int(entry["version"]),
            operation=str(entry.get("operation") or ""),
            tag=parse_tag(entry.get("userMetadata")),
            parameters={
                str(k): str(v) for k, v in (entry.get("operationParameters") or {}).items()
            },
            migration=entry.get(MARK_MIGRATION),
            metrics=spark_metrics(entry.get("operationMetrics") or {}),
        )
        for entry in delta_table(path).history(limit)
    ]


def tagged_commits(path: str, limit: int = 50) -> list[TaggedCommit]:
    """The most recent laketx-tagged commits of the table at `path`, newest first."""
    if not exists(path):
        return []
    found = []
    for entry in delta_table(path).history(limit):
        tag = parse_tag(entry.get("userMetadata"))
        if tag is None:
            continue
        found.append(
            TaggedCommit(
                commit_version=int(entry["version"]),
                run_id=str(tag.run_id),
                data_version=-1 if tag.data_version is None else tag.data_version,
                batch_fingerprint=str(tag.batch),
                metrics=spark_metrics(entry.get("operationMetrics") or {}),
                upstream=tag.upstream,
                rows=tag.rows,
            )
        )
    return found


# delta-rs names a MERGE's metrics in snake case; Spark (and everything reading them here)
# in camel case
_DELTA_RS_METRICS = {
    "num_target_rows_inserted": "numTargetRowsInserted",
    "num_target_rows_updated": "numTargetRowsUpdated",
    "num_target_rows_deleted": "numTargetRowsDeleted",
    "num_output_rows": "numOutputRows",
}


def spark_metrics(metrics: Mapping[str, Any]) -> dict[str, str]:
    """A commit's operation metrics under Spark's names, whichever engine committed it."""
    found = {str(k): str(v) for k, v in metrics.items()}
    for snake, camel in _DELTA_RS_METRICS.items():
        if snake in found and camel not in found:
            found[camel] = found[snake]
    return found


def find_commit(path: str, data_version: int) -> TaggedCommit | None:
    """The commit that was made to become `data_version`, if one exists."""
    for commit in tagged_commits(path):
        if commit.data_version == data_version:
            return commit
    return None


def published_through(path: str, app: str) -> int:
    """The highest data version the table has a commit for (0 when none or no table)."""
    if not exists(path):
        return 0
    return int(delta_table(path).transaction_version(app) or 0)
