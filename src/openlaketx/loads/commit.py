"""One tagged, idempotent Delta commit per promotion (the engine's side of
`lakeguard.records.commits`).

Every data commit carries `userMetadata` naming the run, dataset, data version, batch
fingerprint and rows written, and a Delta application transaction (app id = the dataset, txn
version = the data version it will become), whichever engine commits it (delta-rs publishing
staged files, or Spark running a MERGE). A retry of the same promotion is therefore refused by
Delta itself, and the tag lets the engine find the commit again after a crash. Finding it reads
the Delta log with delta-rs: no Spark job.

A MERGE that changed no row is committed by Delta all the same (it carries the application
transaction), and no version records it: `release` then commits no data with the dataset's
transaction set back to the version before, so the next batch, which becomes that version,
is not skipped by Delta as applied already (docs/design.md §5).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NotRequired, TypedDict

from deltalake import CommitProperties, Transaction

from lakeguard.records.commits import (
    RELEASE_KEY,
    TAG_KEY,
    TaggedCommit,
    app_id,
    find_commit,
    published_through,
    tagged_commits,
)
from lakeguard.words.errors import WriteConflict
from openlaketx import storage

__all__ = [
    "CommitTag",
    "DataTag",
    "TaggedCommit",
    "app_id",
    "committed",
    "conflict",
    "find_commit",
    "published_through",
    "release",
    "session_tagging",
    "tagged_commits",
]

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class DataTag(TypedDict):
    """A data commit's tag as its `userMetadata` holds it (under `TAG_KEY`)."""

    run_id: str
    dataset_id: str
    data_version: int
    batch: str
    upstream: dict[str, int]
    rows: NotRequired[int]  # the rows written, once the commit knows them


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
        tag: DataTag = {
            "run_id": self.run_id,
            "dataset_id": self.dataset_id,
            "data_version": self.data_version,
            "batch": self.batch_fingerprint,
            "upstream": self.upstream,
        }
        if rows is not None:
            tag["rows"] = rows
        return json.dumps({TAG_KEY: tag}, sort_keys=True)

    def release_metadata(self) -> str:
        """The tag of this promotion's release (`release`): no data version is in it."""
        tag = {"run_id": self.run_id, "dataset_id": self.dataset_id, RELEASE_KEY: self.data_version}
        return json.dumps({TAG_KEY: tag}, sort_keys=True)


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


def release(path: str, tag: CommitTag) -> bool:
    """After this promotion's MERGE changed no row: commit no data, tagged as its release,
    with the dataset's application transaction set back to `tag.data_version - 1`, so that
    the next batch (which becomes that version) is applied, not skipped as applied already.
    Idempotent: nothing is committed unless the transaction is still at `tag.data_version`.
    Whether it committed."""
    table = storage.delta_table(path)
    if table.transaction_version(tag.app_id) != tag.data_version:
        return False
    table.create_write_transaction(
        [],
        mode="append",
        schema=table.schema(),
        commit_properties=CommitProperties(
            custom_metadata={"userMetadata": tag.release_metadata()},
            app_transactions=[Transaction(tag.app_id, tag.data_version - 1)],
        ),
    )
    return True


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
