"""Replay an approved version: rebuild it from what it was made of and compare content hashes.

Three comparisons against the content hash recorded with the version (see loads.content):

- `stored`: the rows the version wrote, in the table as of its commit. A mismatch means the
  files behind that commit were altered.
- `current`: the same rows in the table's latest state, for append loads (later approved
  versions only add rows) and for the latest version; a mismatch is a change made behind the
  gate. While nothing was committed after the version's commit, the latest state is that
  commit's, and `stored`'s read answers for both (one Spark job fewer).
- `rebuilt`: silver and gold only. The definitions in force when the version was approved
  (the definition tables as of that time, checked against the recorded definition hash) are
  run over each parent pinned at the version it consumed, into a scratch location. A bronze
  version is not rebuilt: its sources (files, databases) are not snapshots.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lakeguard.reads.reader import StoreReader
from lakeguard.reads.registry import Registry
from lakeguard.records.decisions.versions import ApprovedVersion
from lakeguard.records.definitions.records import DatasetDef
from lakeguard.records.reach import Reach
from lakeguard.rules.quality.kinds import RULE_KINDS
from lakeguard.rules.quality.rules import compile_rules
from lakeguard.words.errors import LakeTxError, NotRegisteredError
from lakeguard.words.quoting import quote
from lakeguard.words.vocabulary import Layer, LoadType
from openlaketx import storage
from openlaketx.connect import MERGE_NEEDS, refuse_through_connect
from openlaketx.loads import staging, strategies
from openlaketx.loads.commit import CommitTag
from openlaketx.loads.content import (
    NOTHING,
    content_columns,
    frame_hash,
    version_hash,
    version_rows,
)
from openlaketx.loads.publish import create_empty, fields_of
from openlaketx.loads.version_read import read_version
from openlaketx.runner.batch import InputBatch
from openlaketx.runner.batch_rows import merge_plan, publishable, starts_by_data
from openlaketx.runner.dropping import failing_any
from openlaketx.runner.inputs import dataset_input
from openlaketx.tables import dataset_location

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from lakeguard.store import MetadataStore


@dataclass(frozen=True)
class Comparison:
    name: str  # stored | current | rebuilt
    content_hash: str | None
    matches: bool | None  # None: not compared (see detail)
    detail: str


@dataclass
class ReplayReport:
    dataset_id: str
    version: int
    recorded: str | None
    comparisons: list[Comparison] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def matches(self) -> bool:
        """Every comparison made agrees (with the recorded hash, or the stored rows' when the
        version predates content hashes)."""
        return all(c.matches is not False for c in self.comparisons)


def replay(
    spark: SparkSession, store: MetadataStore, warehouse: str, dataset_id: str, version: int
) -> ReplayReport:
    """Compare approved `version` of `dataset_id` with its recorded content hash."""
    reader = StoreReader(store)
    dataset = reader.definitions.dataset(dataset_id)
    approved = reader.versions.approved(dataset_id, version)
    if approved is None:
        raise NotRegisteredError(
            f"{dataset_id} has no approved version {version}",
            where="data_versions",
            fix=f"pick one of the versions `laketx status` shows for {dataset_id}",
        )
    path = dataset_location(warehouse, dataset.table_name)
    stored = version_hash(spark, path, version, int(approved.snapshot_ref))
    report = ReplayReport(dataset_id, version, approved.content_hash)
    reference = approved.content_hash
    if reference is None:
        reference = stored
        report.notes.append(
            "no content hash was recorded with this version (it predates content hashes): "
            "the others are compared with the stored rows"
        )

    def compare(name: str, found: str | None, detail: str) -> None:
        matches = None if found is None else found == reference
        report.comparisons.append(Comparison(name, found, matches, detail))

    compare(
        "stored",
        stored,
        f"rows of version {version} in the table as of its commit {approved.snapshot_ref}",
    )
    latest = reader.versions.approved(dataset_id)
    if dataset.load_type == LoadType.APPEND or (latest and latest.version == version):
        # nothing committed since: the table now is the snapshot just read
        unchanged = storage.delta_table(path).version() == int(approved.snapshot_ref)
        now = stored if unchanged else version_hash(spark, path, version)
        since = " (no commit since)" if unchanged else ""
        compare("current", now, f"rows of version {version} in the table now{since}")
    if dataset.layer == Layer.BRONZE:
        compare("rebuilt", None, "bronze is not rebuilt: its sources are not snapshots")
        return report
    registry, note = _definitions_then(reader, dataset_id, approved)
    if note:
        report.notes.append(note)
    if registry is None:
        compare("rebuilt", None, "not rebuilt: the definitions of then are not available")
        return report
    unrepeatable = _unrepeatable(registry, reader, approved)
    if unrepeatable:
        compare("rebuilt", None, f"not rebuilt: {unrepeatable}")
        return report
    try:
        rebuilt = _rebuild(spark, reader, registry, approved, warehouse, store.tenant_reach())
    except _NotRepeatable as exc:
        compare("rebuilt", None, f"not rebuilt: {exc}")
        return report
    compare("rebuilt", rebuilt, _rebuilt_from(approved))
    return report


class _NotRepeatable(Exception):
    """The version's rows depend on when it was made (a rebuild cannot repeat them)."""


def _rebuilt_from(approved: ApprovedVersion) -> str:
    parents = ", ".join(f"{p} v{v}" for p, v in sorted(approved.upstream_refs.items()))
    return f"rebuilt from {parents} with the definitions in force then"


def _definitions_then(
    reader: StoreReader, dataset_id: str, approved: ApprovedVersion
) -> tuple[Registry | None, str | None]:
    """The registry the version was made with: the definition tables as of its job's start
    (or its attempt's, or its approval), the first whose hash is the one recorded; and a note
    when that cannot be established or the definitions have changed since."""
    times = [*reader.runs.run_started(approved.run_id), approved.promoted_at]
    found: Registry | None = None
    try:
        for when in [t for t in times if t is not None]:
            found = reader.definitions.registry(as_of=when)
            if found.definition_hash(dataset_id) == approved.definition_hash:
                break
    except LakeTxError as exc:  # e.g. the log of that time was cleaned up
        return None, f"the definitions of then cannot be read: {exc.what}"
    if found is None:
        return None, None
    note = None
    if approved.definition_hash is None:
        note = "no definition hash was recorded: the rebuild uses the definitions as of its run"
    elif found.definition_hash(dataset_id) != approved.definition_hash:
        note = "the definitions of then do not hash as recorded; the rebuild uses the nearest"
    elif reader.definitions.registry().definition_hash(dataset_id) != approved.definition_hash:
        note = "the definitions changed since this version; the rebuild uses those of then"
    return found, note


def _unrepeatable(registry: Registry, reader: StoreReader, approved: ApprovedVersion) -> str | None:
    """Why a rebuild cannot reproduce the version's rows, if it cannot."""
    dataset = registry.dataset(approved.dataset_id)
    decision = reader.decisions.latest_decision(approved.dataset_id, approved.run_id)
    dropped = set(decision.evidence.dropped_rules) if decision else set()
    clock = {
        r.rule_id
        for r in registry.rules(dataset.dataset_id)
        if r.rule_type in RULE_KINDS and RULE_KINDS[r.rule_type].depends_on_clock
    }
    if dropped & clock:
        return "rows were dropped by a FRESHNESS rule, which depends on when it ran"
    return None


def _rebuild(
    spark: SparkSession,
    reader: StoreReader,
    registry: Registry,
    approved: ApprovedVersion,
    warehouse: str,
    reach: Reach,
) -> str:
    dataset = registry.dataset(approved.dataset_id)
    version = approved.version
    previous = reader.versions.approved(dataset.dataset_id, version - 1) if version > 1 else None
    parents = {p: reader.versions.approved(p, v) for p, v in approved.upstream_refs.items()}
    run_id = f"replay{uuid.uuid4().hex[:12]}"
    batch = dataset_input(
        spark,
        reader,
        registry,
        dataset,
        own_latest=previous,
        warehouse=warehouse,
        run_id=run_id,
        reach=reach,
        parents=parents,
    )
    try:
        if batch.frame is None:
            return NOTHING
        if dataset.load_type == LoadType.SCD2 and not starts_by_data(batch.frame, dataset):
            raise _NotRepeatable("its scd2 versions start at load time (sequence_by is not a time)")
        frame = publishable(
            batch.frame,
            dataset,
            version=version,
            run_id=run_id,
            rules=[*batch.builtin_rules, *compile_rules(registry.rules(dataset.dataset_id))],
        )
        frame = _without_dropped(frame, reader, approved)
        merges = dataset.load_type in (LoadType.MERGE, LoadType.SCD2)
        # a first merge publishes its batch as it is, unless it spans several parent versions
        if not merges or (previous is None and not batch.parent_versions):
            stored = version_rows(
                spark,
                dataset_location(warehouse, dataset.table_name),
                version,
                int(approved.snapshot_ref),
            )
            return frame_hash(_aligned(frame, stored))
        return _merged_hash(spark, frame, dataset, previous, approved, batch, warehouse, run_id)
    finally:
        for view in batch.views:
            spark.catalog.dropTempView(view)


def _aligned(frame: DataFrame, stored: DataFrame) -> DataFrame:
    """`frame`'s data columns as the table stores them: its types, and a column the batch
    lacks (kept by the table from earlier versions) as null."""
    # start-up time: pyspark loads on first use, never in metadata-only commands
    from pyspark.sql import functions as F

    types = {f.name: f.dataType for f in stored.schema.fields}
    return frame.select(
        *[
            (F.col(quote(c)) if c in frame.columns else F.lit(None)).cast(types[c]).alias(c)
            for c in content_columns(types)
        ]
    )


def _without_dropped(frame: DataFrame, reader: StoreReader, approved: ApprovedVersion) -> DataFrame:
    """The rows the version promoted: those failing a rule whose failures it dropped left out."""
    decision = reader.decisions.latest_decision(approved.dataset_id, approved.run_id)
    dropped = list(decision.evidence.dropped_rules) if decision else []
    return frame.where(~failing_any(dropped)) if dropped else frame


def _merged_hash(
    spark: SparkSession,
    frame: DataFrame,
    dataset: DatasetDef,
    previous: ApprovedVersion | None,
    approved: ApprovedVersion,
    batch: InputBatch,
    warehouse: str,
    run_id: str,
) -> str:
    """Merge the rebuilt batch into a scratch copy of the table as the previous version left
    it, and hash what the merge wrote."""
    path = dataset_location(warehouse, dataset.table_name)
    scratch = f"{warehouse}/_laketx_replay/{dataset.dataset_id}-v{approved.version}-{run_id}"
    try:
        staged = staging.stage(frame, f"{scratch}/batch")
        if previous is None:
            create_empty(f"{scratch}/table", fields_of(staged.schema))
        else:
            read_version(spark, path, int(previous.snapshot_ref)).write.format("delta").save(
                f"{scratch}/table"
            )
        tag = CommitTag(
            "replay",
            dataset.dataset_id,
            run_id,
            approved.version,
            batch.fingerprint,
            batch.upstream_refs,
        )
        part, where = f"replaying {dataset.dataset_id}", f"datasets[{dataset.dataset_id}]"
        refuse_through_connect(spark, part, MERGE_NEEDS, where=where)
        strategies.merge(
            spark,
            staged.part_folder(),
            f"{scratch}/table",
            tag,
            merge_plan(dataset, batch.parent_versions),
            may_add=True,
        )
        return version_hash(spark, f"{scratch}/table", approved.version)
    finally:
        storage.remove_tree(scratch)
