"""Before an attempt reads anything: clear what a crashed run left, and record what it
published (docs/design.md invariant 7). Also how any commit becomes a recorded version."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from lakeguard.records.decisions.versions import ApprovedVersion
from lakeguard.records.schema.fingerprint import from_fields, schema_hash
from lakeguard.words.errors import MetadataStoreError
from lakeguard.words.vocabulary import LoadType
from openlaketx import storage
from openlaketx.loads import staging, strategies
from openlaketx.loads.commit import (
    CommitTag,
    TaggedCommit,
    app_id,
    find_commit,
    published_through,
    release,
)
from openlaketx.loads.content import recorded_digests_hash
from openlaketx.runner.context import RunContext, Target
from openlaketx.runner.lifecycle import DatasetAttempt
from openlaketx.sources.kinds import engine


@dataclass(frozen=True)
class Recovered:
    """The dataset as the attempt starts from it."""

    own_latest: ApprovedVersion | None  # its latest approved version, recovered ones included
    commits: list[TaggedCommit] = field(default_factory=list)  # recorded for a crashed run
    swept: list[str] = field(default_factory=list)  # staged folders a crash left behind

    @property
    def next_version(self) -> int:
        return (self.own_latest.version if self.own_latest else 0) + 1


def recover(ctx: RunContext, target: Target, attempt: DatasetAttempt) -> Recovered:
    """Sweep crashed runs' staged batches and record the commits they published but never
    recorded (approved: their decisions are on record), oldest first; their input then
    counts as taken. A crashed run's MERGE that changed no row (the last commit) is released
    instead, as its run would have: no version records it. Call it holding the lease."""
    own_latest = ctx.gate.latest(target.dataset_id)
    published = published_through(target.path, app_id(ctx.writer.tenant, target.dataset_id))
    swept = staging.sweep(target.path, published)
    recorded: list[TaggedCommit] = []
    if published <= (own_latest.version if own_latest else 0):
        return Recovered(own_latest, recorded, swept)
    with attempt.phase("record recovered version", "record") as log:
        latest = own_latest
        for version in range((latest.version if latest else 0) + 1, published + 1):
            commit = find_commit(target.path, version)
            if commit is None:
                raise MetadataStoreError(
                    f"{target.dataset_id} has a commit for version {version} without its tag",
                    where=target.path,
                    fix="inspect the table history (DESCRIBE HISTORY) before running again",
                )
            if commit.changed_nothing and version == published:
                tag = CommitTag(
                    ctx.writer.tenant,
                    target.dataset_id,
                    commit.run_id,
                    version,
                    commit.batch_fingerprint,
                )
                release(target.path, tag)
                log.metadata["released"] = version
                break
            record_commit(ctx, target, commit, latest, recovered=True)
            latest = ctx.gate.latest(target.dataset_id)
            recorded.append(commit)
        log.metadata["recovered_commits"] = [c.commit_version for c in recorded]
    _finish_sources(ctx, target, [c.run_id for c in recorded])
    return Recovered(latest, recorded, swept)


def _finish_sources(ctx: RunContext, target: Target, run_ids: list[str]) -> None:
    """Let each source finish what the recorded attempts left undone after publishing (a
    file source archives the files they took); their input counts as taken already."""
    taken = ctx.writer.taken(target.dataset_id, run_ids)
    for obj in ctx.registry.source_objects(target.dataset_id):
        rows = [r for r in taken if r.source_object_id == obj.source_object_id]
        if rows:
            system = ctx.registry.system(obj.source_system_id)
            engine(system.kind).recovered(ctx.spark, system, obj, rows, ctx.reach)


def record_commit(
    ctx: RunContext,
    target: Target,
    commit: TaggedCommit,
    latest: ApprovedVersion | None,
    content_hash: str | None = None,
    *,
    recovered: bool = False,
) -> None:
    """Record the version, with the content hash of the rows it wrote (`content_hash`: one
    already computed over the same rows) and the hash of the definitions it ran under
    (unknown for a crashed run's commit: its definitions may have changed since)."""
    if content_hash is None:
        content_hash = recorded_digests_hash(
            ctx.spark, target.path, commit.data_version, commit.commit_version
        )
    ctx.gate.record_version(
        dataset_id=target.dataset_id,
        version=commit.data_version,
        snapshot_ref=str(commit.commit_version),
        schema_hash=_table_schema_hash(target.path, commit.commit_version),
        row_count=_row_count(latest, commit, target.load_type),
        rows_written=strategies.rows_written(commit),
        upstream_refs=commit.upstream,
        run_id=commit.run_id,
        promoted_by=ctx.job.pipeline_id,
        previous=latest,
        content_hash=content_hash,
        definition_hash=None if recovered else ctx.registry.definition_hash(target.dataset_id),
    )


def _table_schema_hash(path: str, commit_version: int) -> str:
    fields = json.loads(storage.delta_table(path, commit_version).schema().to_json())
    return schema_hash(from_fields(fields["fields"]))


def _row_count(latest: ApprovedVersion | None, commit: TaggedCommit, load_type: LoadType) -> int:
    """Rows in the table after the commit, from the previous count and what the commit did."""
    before = latest.row_count if latest else 0
    m = commit.metrics
    if load_type == LoadType.FULL:
        return commit.rows if commit.rows is not None else int(m.get("numOutputRows", 0))
    if "numTargetRowsInserted" in m:
        return (
            before + int(m.get("numTargetRowsInserted", 0)) - int(m.get("numTargetRowsDeleted", 0))
        )
    return before + (commit.rows if commit.rows is not None else int(m.get("numOutputRows", 0)))
