"""One tagged, idempotent Delta commit per promotion.

Every data commit carries `userMetadata` naming the run, dataset, data version, batch
fingerprint and rows written, and a Delta application transaction (app id = the dataset, txn
version = the data version it will become), whichever engine commits it (delta-rs publishing
staged files, or Spark running a MERGE). A retry of the same promotion is therefore refused by
Delta itself, and the tag lets the engine find the commit again after a crash. Finding it reads
the Delta log with delta-rs: no Spark job.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lakeguard.errors import WriteConflict

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

TAG_KEY = "laketx"


@dataclass(frozen=True)
class CommitTag:
    tenant: str
    dataset_id: str
    run_id: str
    data_version: int
    batch_fingerprint: str
    upstream: dict[str, int] = field(default_factory=dict)

    @property
    def app_id(self) -> str:
        return app_id(self.tenant, self.dataset_id)

    def user_metadata(self, rows: int | None = None) -> str:
        tag: dict[str, Any] = {
            "run_id": self.run_id,
            "dataset_id": self.dataset_id,
            "data_version": self.data_version,
            "batch": self.batch_fingerprint,
            "upstream": self.upstream,
        }
        if rows is not None:
            tag["rows"] = rows
        return json.dumps({TAG_KEY: tag}, sort_keys=True)


def app_id(tenant: str, dataset_id: str) -> str:
    """The Delta application id of a dataset's promotions (its txn version = data version)."""
    return f"laketx.{tenant}.{dataset_id}"


@dataclass(frozen=True)
class TaggedCommit:
    """A commit of the dataset table that carries a laketx tag."""

    commit_version: int
    run_id: str
    data_version: int
    batch_fingerprint: str
    metrics: dict[str, str]
    upstream: dict[str, int] = field(default_factory=dict)
    rows: int | None = None  # rows the commit published, when the engine recorded them


def _parse_tag(user_metadata: str | None) -> dict[str, Any] | None:
    if not user_metadata:
        return None
    try:
        tag = json.loads(user_metadata).get(TAG_KEY)
    except (ValueError, AttributeError):
        return None
    return tag if isinstance(tag, dict) else None


def tagged_commits(path: str, limit: int = 50) -> list[TaggedCommit]:
    """The most recent laketx-tagged commits of the table at `path`, newest first."""
    from deltalake import DeltaTable

    if not DeltaTable.is_deltatable(path):
        return []
    found = []
    for entry in DeltaTable(path).history(limit):
        tag = _parse_tag(entry.get("userMetadata"))
        if tag is None:
            continue
        found.append(
            TaggedCommit(
                commit_version=int(entry["version"]),
                run_id=str(tag.get("run_id")),
                data_version=int(tag.get("data_version", -1)),
                batch_fingerprint=str(tag.get("batch")),
                metrics={str(k): str(v) for k, v in (entry.get("operationMetrics") or {}).items()},
                upstream={str(k): int(v) for k, v in (tag.get("upstream") or {}).items()},
                rows=int(tag["rows"]) if tag.get("rows") is not None else None,
            )
        )
    return found


def find_commit(path: str, data_version: int) -> TaggedCommit | None:
    """The commit that was made to become `data_version`, if one exists."""
    for commit in tagged_commits(path):
        if commit.data_version == data_version:
            return commit
    return None


def conflict(tag: CommitTag, path: str) -> WriteConflict:
    """The error of a promotion whose commit lost to a concurrent one."""
    return WriteConflict(
        f"a concurrent commit to {tag.dataset_id} conflicted with this promotion",
        where=path,
        fix="retry the run",
    )


def committed(path: str, tag: CommitTag) -> TaggedCommit:
    """This promotion's commit, read back from the table's log (transient error if absent)."""
    commit = find_commit(path, tag.data_version)
    if commit is None or commit.run_id != tag.run_id:
        raise WriteConflict(
            f"the commit for version {tag.data_version} of {tag.dataset_id} is not in the table",
            where=path,
            fix="retry the run; no version was recorded",
        )
    return commit


def published_through(path: str, app: str) -> int:
    """The highest data version the table has a commit for (0 when none or no table)."""
    from deltalake import DeltaTable

    if not DeltaTable.is_deltatable(path):
        return 0
    return int(DeltaTable(path).transaction_version(app) or 0)


@contextmanager
def session_tagging(spark: SparkSession, tag: CommitTag) -> Iterator[None]:
    """Tag and make idempotent the Delta DML (MERGE) run inside the block.

    DML takes these from session confs, not writer options; they are unset afterwards so no
    later commit inherits them. One promotion at a time per session (the runner is serial).
    """
    confs = {
        "spark.databricks.delta.write.txnAppId": tag.app_id,
        "spark.databricks.delta.write.txnVersion": str(tag.data_version),
        "spark.databricks.delta.commitInfo.userMetadata": tag.user_metadata(),
    }
    for key, value in confs.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key in confs:
            spark.conf.unset(key)
