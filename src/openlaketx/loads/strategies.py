"""Load strategies: publish an approved batch to its dataset table in exactly one Delta commit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakeguard.errors import LakeTxError, WriteConflict
from lakeguard.store.ddl import quote
from openlaketx.loads.commit import CommitTag, TaggedCommit, find_commit, session_tagging

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

ROW_HASH = "_laketx_row_hash"


@dataclass(frozen=True)
class CommitResult:
    commit: TaggedCommit

    @property
    def commit_version(self) -> int:
        return self.commit.commit_version

    @property
    def rows_written(self) -> int:
        return rows_written(self.commit)


def rows_written(commit: TaggedCommit) -> int:
    """Rows a commit inserted or updated, from Delta's operation metrics."""
    m = commit.metrics
    if "numTargetRowsInserted" in m:
        return int(m.get("numTargetRowsInserted", 0)) + int(m.get("numTargetRowsUpdated", 0))
    return int(m.get("numOutputRows", 0))


def _committed(frame: DataFrame, path: str, tag: CommitTag) -> CommitResult:
    commit = find_commit(frame.sparkSession, path, tag.data_version)
    if commit is None or commit.run_id != tag.run_id:
        raise LakeTxError(
            f"the commit for version {tag.data_version} of {tag.dataset_id} is not in the table",
            where=path,
            fix="retry the run; no version was recorded",
            transient=True,
        )
    return CommitResult(commit)


def _is_conflict(exc: Exception) -> bool:
    # Delta's conflict exceptions do not share a Python base class; match them by name.
    names = (
        "ConcurrentAppendException",
        "ConcurrentDeleteReadException",
        "ConcurrentDeleteDeleteException",
        "MetadataChangedException",
        "ConcurrentTransactionException",
        "ProtocolChangedException",
        "DELTA_CONCURRENT",
    )
    text = f"{type(exc).__name__} {exc}"
    return any(n in text for n in names)


def _guarded(run: object, tag: CommitTag, path: str) -> None:
    try:
        run()  # type: ignore[operator]
    except Exception as exc:
        if _is_conflict(exc):
            raise WriteConflict(
                f"a concurrent commit to {tag.dataset_id} conflicted with this promotion",
                where=path,
                fix="retry the run",
            ) from exc
        raise


def _tagged_write(frame: DataFrame, path: str, tag: CommitTag, mode: str) -> CommitResult:
    writer = (
        frame.write.format("delta")
        .mode(mode)
        .option("txnAppId", tag.app_id)
        .option("txnVersion", str(tag.data_version))
        .option("userMetadata", tag.user_metadata())
    )
    _guarded(lambda: writer.save(path), tag, path)
    return _committed(frame, path, tag)


def append(frame: DataFrame, path: str, tag: CommitTag) -> CommitResult:
    """Blind append (bronze): creates the table on the first promotion."""
    return _tagged_write(frame, path, tag, "append")


def overwrite(frame: DataFrame, path: str, tag: CommitTag) -> CommitResult:
    """Full refresh: the table becomes exactly this batch, in one commit."""
    return _tagged_write(frame, path, tag, "overwrite")


def with_row_hash(frame: DataFrame, keys: list[str]) -> DataFrame:
    """Add a hash of the non-key columns, so unchanged rows are not rewritten by a merge."""
    from pyspark.sql import functions as F

    values = [
        F.col(quote(c)) for c in frame.columns if c not in keys and not c.startswith("_laketx")
    ]
    return frame.withColumn(ROW_HASH, F.xxhash64(*values) if values else F.lit(0).cast("long"))


def merge(
    frame: DataFrame, path: str, tag: CommitTag, keys: list[str], sequence_by: str | None = None
) -> CommitResult:
    """Upsert on business keys (silver): insert new keys, update keys whose row hash changed.

    `frame` must hold at most one row per key (the runner de-duplicates by `sequence_by`). With
    `sequence_by`, a late row older than the stored one never overwrites it.
    """
    from delta.tables import DeltaTable

    spark = frame.sparkSession
    if not DeltaTable.isDeltaTable(spark, path):
        return append(frame, path, tag)
    condition = " AND ".join(f"t.{quote(k)} <=> s.{quote(k)}" for k in keys)
    updates: dict[str, str | Column] = {quote(c): f"s.{quote(c)}" for c in frame.columns}
    changed = f"t.{ROW_HASH} IS DISTINCT FROM s.{ROW_HASH}"
    if sequence_by:
        seq = quote(sequence_by)
        changed += f" AND (t.{seq} IS NULL OR s.{seq} >= t.{seq})"

    def run() -> None:
        with session_tagging(spark, tag):
            (
                DeltaTable.forPath(spark, path)
                .alias("t")
                .merge(frame.alias("s"), condition)
                .whenMatchedUpdate(condition=changed, set=updates)
                .whenNotMatchedInsertAll()
                .execute()
            )

    _guarded(run, tag, path)
    return _committed(frame, path, tag)
