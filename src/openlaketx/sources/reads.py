"""What a source contributes to a bronze batch: rows, what they were read from, what to check.

Each source kind's engine (`openlaketx.sources.kinds`) turns one source object into a
`SourceRead`; the bronze input unions them. `progress` lists what the batch takes from the
source (files, the source version read up to, a fetched URL); it is recorded before the data
commit and counts once the batch's version is approved, so a crash neither loses nor repeats
input. `rejected` lists the files the read put aside as unreadable, recorded whatever becomes
of the batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lakeguard.records.evidence import Check
from lakeguard.records.schema.drift import Change, diff
from lakeguard.records.schema.fingerprint import SchemaColumn
from lakeguard.records.sources.progress import ProgressMark, Rejection
from lakeguard.records.sources.records import SourceObjectDef, SourceSystemDef
from lakeguard.words.errors import SourceError
from lakeguard.words.quoting import quote
from lakeguard.words.vocabulary import SourceKindName

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructField


def require_enabled(system: SourceSystemDef) -> None:
    if not system.enabled:
        raise SourceError(
            f"source system {system.source_system_id} is disabled",
            where=f"source_systems[{system.source_system_id}]",
            fix="enable the system in its metadata before running",
        )


def fields_by_name(frame: DataFrame) -> dict[str, StructField]:
    """The source's fields by lower-case name."""
    return {f.name.lower(): f for f in frame.schema.fields}


def select_declared(
    frame: DataFrame, obj: SourceObjectDef
) -> tuple[DataFrame, list[SchemaColumn], list[Change]]:
    """The declared columns as the source has them now, with how they drifted.

    A declared column the source lacks is read as nulls of its declared type; one whose type
    changed is read with its new type. Both are drift, for the source's profile to decide.
    Columns the source has and the document does not declare are not read (and not drift):
    a table's declared columns are a projection of it.
    """
    from pyspark.sql import functions as F  # start-up time: pyspark only where Spark runs

    present = fields_by_name(frame)
    approved = [
        SchemaColumn(c.column_name, c.data_type.lower(), c.nullable)
        for c in sorted(obj.columns, key=lambda c: c.ordinal)
    ]
    live: list[SchemaColumn] = []
    selected = []
    for col in approved:
        field = present.get(col.name.lower())
        if field is None:
            selected.append(F.lit(None).cast(col.type).alias(col.name))
            continue
        kind = field.dataType.simpleString()
        live.append(SchemaColumn(col.name, kind, col.nullable))
        selected.append(F.col(quote(field.name)).alias(col.name))
    return frame.select(*selected), live, diff(approved, live)


@dataclass(kw_only=True)
class SourceRead:
    source_object_id: str
    frame: DataFrame | None  # None: nothing new in this source
    fingerprint: str
    progress: list[ProgressMark] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    has_corrupt_column: bool = False
    note: str | None = None
    # incremental sources: the column whose highest value in the batch is the new watermark
    watermark_column: str | None = None
    # files to move into the source's archive folder once the batch's version is recorded
    archive: list[tuple[str, str]] = field(default_factory=list)
    # a full snapshot of the source (an empty one is refused rather than promoted)
    snapshot: bool = False
    # rows at or above this (column, value as text, type) may have been taken already: the
    # lookback reads them again, and the engine drops those the dataset already holds
    reread_from: tuple[str, str, str] | None = None
    # how the source's schema differs from the approved one (decided by the source's profile)
    drift: list[Change] = field(default_factory=list)
    # the schema the source really has (read by it), to evolve the approved one when allowed
    live: list[SchemaColumn] | None = None
    # the source's secret, to mask it in any error the read raises later (never printed)
    secret: str | None = field(default=None, repr=False)
    # the system's, and so the engine that classifies a failure Spark raises reading it
    kind: SourceKindName = SourceKindName.FILE
    system_id: str = ""
    # a folder the read fetched into: deleted once the batch is staged (nothing reads it after)
    landing: str | None = None
    # recorded if the batch is blocked with every row malformed (counting although blocked),
    # so the source is nothing new until it changes: what the read took, as a rejection mark
    malformed: list[ProgressMark] = field(default_factory=list)
    # each file Spark reads for the batch (the path it opens, the mark it stands for): a file
    # Spark fails on mid-read is looked for among them
    files: list[tuple[str, ProgressMark]] = field(default_factory=list)
    # files put aside as unreadable by this read (recorded in rejected_files by the runner)
    rejected: list[Rejection] = field(default_factory=list)
