"""One tagged, idempotent Delta commit per promotion.

Every data commit carries `userMetadata` naming the run, dataset, data version and batch
fingerprint, and a Delta transaction id (`txnAppId` = the dataset, `txnVersion` = the data
version it will become). A retry of the same promotion is therefore skipped by Delta itself,
and the tag lets the engine find the commit again after a crash.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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
        return f"laketx.{self.tenant}.{self.dataset_id}"

    def user_metadata(self) -> str:
        return json.dumps(
            {
                TAG_KEY: {
                    "run_id": self.run_id,
                    "dataset_id": self.dataset_id,
                    "data_version": self.data_version,
                    "batch": self.batch_fingerprint,
                    "upstream": self.upstream,
                }
            },
            sort_keys=True,
        )


@dataclass(frozen=True)
class TaggedCommit:
    """A commit of the dataset table that carries a laketx tag."""

    commit_version: int
    run_id: str
    data_version: int
    batch_fingerprint: str
    metrics: dict[str, str]
    upstream: dict[str, int] = field(default_factory=dict)


def _parse_tag(user_metadata: str | None) -> dict[str, Any] | None:
    if not user_metadata:
        return None
    try:
        tag = json.loads(user_metadata).get(TAG_KEY)
    except (ValueError, AttributeError):
        return None
    return tag if isinstance(tag, dict) else None


def tagged_commits(spark: SparkSession, path: str, limit: int = 50) -> list[TaggedCommit]:
    """The most recent laketx-tagged commits of the table at `path`, newest first."""
    from delta.tables import DeltaTable

    if not DeltaTable.isDeltaTable(spark, path):
        return []
    history = (
        DeltaTable.forPath(spark, path)
        .history(limit)
        .select("version", "userMetadata", "operationMetrics")
        .collect()
    )
    found = []
    for row in history:
        tag = _parse_tag(row["userMetadata"])
        if tag is None:
            continue
        found.append(
            TaggedCommit(
                commit_version=int(row["version"]),
                run_id=str(tag.get("run_id")),
                data_version=int(tag.get("data_version", -1)),
                batch_fingerprint=str(tag.get("batch")),
                metrics=dict(row["operationMetrics"] or {}),
                upstream={str(k): int(v) for k, v in (tag.get("upstream") or {}).items()},
            )
        )
    return found


def find_commit(spark: SparkSession, path: str, data_version: int) -> TaggedCommit | None:
    """The commit that was made to become `data_version`, if one exists."""
    for commit in tagged_commits(spark, path):
        if commit.data_version == data_version:
            return commit
    return None


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
