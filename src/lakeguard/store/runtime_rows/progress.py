"""What each promoted batch took from its sources (files, watermarks, source table
versions): the row a source writes before the data commit."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, ClassVar

from lakeguard.progress import ProgressMark
from lakeguard.store.rowschema import Comment, RuntimeTable
from lakeguard.store.runtime_rows.base import RuntimeRow, new_id


@dataclass(frozen=True, kw_only=True)
class SourceProgressRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="source_progress",
        comment=(
            "What each promoted batch took from its sources: files (path, size, modification time,"
            " content hash), watermarks, source table versions. Written before the data commit; a "
            "row counts only once its run has an approved version, so a crash can neither lose nor"
            " repeat input."
        ),
        day="recorded_date",
        date_of="recorded_at",
        cluster_by=("tenant_id", "dataset_id", "source_object_id"),
    )
    progress_id: str = field(default_factory=new_id)
    tenant_id: str
    dataset_id: str
    source_object_id: str
    run_id: Annotated[str, Comment("The dataset attempt that read it")]
    data_version: Annotated[int, Comment("The version the attempt was to publish")]
    kind: Annotated[
        str,
        Comment(
            "What the row remembers, as its source kind declares it: FILE, WATERMARK, "
            "SOURCE_VERSION, HTTP_FILE, ..."
        ),
    ]
    path: Annotated[str | None, Comment("FILE: the file's full path")] = None
    size: Annotated[int | None, Comment("FILE, HTTP_FILE: bytes")] = None
    modification_time: Annotated[
        datetime | None, Comment("FILE: as the file system reports it")
    ] = None
    content_hash: Annotated[
        str | None, Comment("FILE: sha256 of the content, where the source asks for it")
    ] = None
    watermark: Annotated[
        str | None, Comment("WATERMARK: the highest watermark value read, as text")
    ] = None
    source_version: Annotated[
        int | None, Comment("SOURCE_VERSION: the Delta version of a source table read up to")
    ] = None
    recorded_at: datetime
    mark_key: Annotated[
        str | None,
        Comment(
            "What a later row of the same kind replaces (a path, a URL); empty for a single "
            "value such as a watermark"
        ),
    ] = ""
    state: Annotated[
        str | None,
        Comment("JSON object: every field of the mark (columns above hold those that have one)"),
    ] = None

    @classmethod
    def of(
        cls,
        mark: ProgressMark,
        *,
        tenant_id: str,
        dataset_id: str,
        source_object_id: str,
        run_id: str,
        data_version: int,
        recorded_at: datetime,
    ) -> SourceProgressRow:
        return cls(
            tenant_id=tenant_id,
            dataset_id=dataset_id,
            source_object_id=source_object_id,
            run_id=run_id,
            data_version=data_version,
            recorded_at=recorded_at,
            kind=mark.KIND,
            mark_key=mark.key(),
            state=mark.state(),
            **mark.columns(),
        )
