"""The one pass over the data: the batch with its engine columns written once to a staged
folder no reader sees; then whether it would change anything at all (docs/design.md §5).

A batch that delta-rs merges (`small_merge.fits`) is counted before the gate; a bigger one is
not: a count would be a second table-sized join beside the MERGE's own. Its Spark MERGE runs
after the gate, and the commit's metrics say whether it changed a row (`promotion.py`)."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from lakeguard.records.decisions.versions import ApprovedVersion
from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.records.schema.delta_json import DeltaField
from lakeguard.words.vocabulary import LoadType
from openlaketx.loads import small_catch_up, small_merge, staging
from openlaketx.loads.content import staged_hash
from openlaketx.runner.batch import InputBatch
from openlaketx.runner.batch_rows import publishable
from openlaketx.runner.context import RunContext, Target

# Why a batch (or the MERGE of it) publishes no version: its rows are in the table already.
NO_ROW_CHANGES = "no row would change"


def stage_batch(
    target: Target,
    batch: InputBatch,
    rules: list[CompiledRule],
    *,
    version: int,
    run_id: str,
    table_fields: list[DeltaField] | None,
) -> staging.StagedBatch:
    """Write the batch, as data version `version`, with each row's broken rules, digest and
    lineage columns, into a staged folder (a MERGE's input is scratch: never table files).
    `table_fields`: the dataset table's schema (None: no table yet)."""
    assert batch.frame is not None
    table = [f["name"] for f in table_fields or []]
    frame = publishable(
        batch.frame,
        target.dataset,
        version=version,
        run_id=run_id,
        rules=rules,
        table_columns=table,
    )
    # A MERGE copies what it reads, so its input is scratch; anything else is published in
    # place (a first merge of one version creates the table from its batch).
    folder = staging.batch_folder(
        target.path, scratch=target.merging(batch), version=version, run_id=run_id
    )
    return staging.stage(frame, folder)


@dataclass(frozen=True)
class Novelty:
    """Whether a staged batch would change the dataset, and what is known of its content."""

    nothing: str | None  # why it changes nothing (None: it changes something)
    content_hash: str | None = None  # a full load's whole staged snapshot
    # a small catch-up's fold (`small_catch_up`), collected to count it; its write merges it
    fold: pa.Table | None = None
    # whether delta-rs merges it (`small_merge.fits`), when the check asked: the engine is
    # chosen once, here, and the write merges with it (None: not asked)
    small: bool | None = None


def novelty(
    ctx: RunContext,
    target: Target,
    batch: InputBatch,
    staged: staging.StagedBatch,
    own_latest: ApprovedVersion | None,
) -> Novelty:
    """Nothing new: an empty batch of watermark sources; a full snapshot equal to the last
    approved one; a merge or scd2 batch that delta-rs merges whose keys and row hashes all
    match the table. A bigger merge batch is not counted (`small=False`): its MERGE is."""
    if staged.rows == 0 and batch.empty_is_nothing_new:
        return Novelty("no new rows")
    if target.load_type == LoadType.FULL:
        # what an allowed full load promotes: every parseable row (a full load never drops)
        content = staged_hash(f.path for f in staged.good)
        same = own_latest is not None and own_latest.content_hash == content
        return Novelty(NO_ROW_CHANGES if same else None, content)
    if not target.merges or not staged.good or not target.exists():
        return Novelty(None)
    small = small_merge.fits(staged, target.path)
    if not small:  # Spark's MERGE: what it changed is in its commit's metrics
        return Novelty(None, small=False)
    plan = target.plan(batch)
    fold = None
    if not small_merge.spans_versions(plan, staged):
        counts = small_merge.changes(staged, target.path, plan)
    else:  # a small catch-up: folded once, here, and merged from this fold
        fold = small_catch_up.fold(ctx.spark, staged, target.path, plan)
        counts = small_catch_up.changes(fold, target.path, plan)
    nothing = None if any(counts.values()) else NO_ROW_CHANGES
    return Novelty(nothing, fold=fold, small=small)
