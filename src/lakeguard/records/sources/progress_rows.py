"""What each promoted batch took from its sources (files, watermarks, source table
versions): the row a source writes before the data commit; and the files a read put aside as
unreadable, with their releases."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, ClassVar

from lakeguard.records.rows.runtime import RuntimeRow, new_id
from lakeguard.records.rows.schema import Comment, RuntimeTable
from lakeguard.records.sources.progress import ProgressMark
from lakeguard.words.vocabulary import FileAction


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


@dataclass(frozen=True, kw_only=True)
class RejectedFileRow(RuntimeRow):
    TABLE: ClassVar[RuntimeTable] = RuntimeTable(
        name="rejected_files",
        comment=(
            "Files a read put aside because they cannot be read (corrupt, truncated, not the "
            "declared format), and their releases: a rejected file is not read again until it "
            "changes or an operator releases it (laketx files release); the rest of its batch "
            "is judged as usual."
        ),
        day="recorded_date",
        date_of="recorded_at",
        cluster_by=("tenant_id", "dataset_id", "source_object_id"),
    )
    rejection_id: str = field(default_factory=new_id)
    tenant_id: str
    dataset_id: str
    source_object_id: str
    action: Annotated[
        FileAction,
        Comment("REJECTED (put aside), RELEASED (an operator released it: read again)"),
    ]
    kind: Annotated[str, Comment("The file's progress mark kind: FILE, HTTP_FILE")]
    path: Annotated[str, Comment("The file's full path, or an http file's URL (no token)")]
    size: Annotated[int | None, Comment("Bytes, as it was rejected")] = None
    modification_time: Annotated[
        datetime | None, Comment("FILE: as the file system reported it")
    ] = None
    content_hash: Annotated[
        str | None, Comment("sha256 of the content, where the source has one")
    ] = None
    reason: Annotated[str | None, Comment("REJECTED: why it cannot be read")] = None
    run_id: Annotated[str | None, Comment("REJECTED: the dataset attempt that put it aside")] = None
    released_by: Annotated[str | None, Comment("RELEASED: who released it")] = None
    recorded_at: datetime
    state: Annotated[
        str | None,
        Comment("JSON object: the file's mark as it was rejected (an http file's ETag too)"),
    ] = None

    @classmethod
    def rejected(
        cls,
        mark: ProgressMark,
        reason: str,
        *,
        tenant_id: str,
        dataset_id: str,
        source_object_id: str,
        run_id: str,
        recorded_at: datetime,
    ) -> RejectedFileRow:
        """The row that puts the file `mark` names aside."""
        columns = mark.columns()
        return cls(
            tenant_id=tenant_id,
            dataset_id=dataset_id,
            source_object_id=source_object_id,
            action=FileAction.REJECTED,
            kind=mark.KIND,
            path=mark.key(),
            size=columns.get("size"),
            modification_time=columns.get("modification_time"),
            content_hash=columns.get("content_hash"),
            reason=reason,
            run_id=run_id,
            recorded_at=recorded_at,
            state=mark.state(),
        )

    def release(self, by: str, at: datetime) -> RejectedFileRow:
        """The row that releases this rejected file."""
        return RejectedFileRow(
            tenant_id=self.tenant_id,
            dataset_id=self.dataset_id,
            source_object_id=self.source_object_id,
            action=FileAction.RELEASED,
            kind=self.kind,
            path=self.path,
            size=self.size,
            modification_time=self.modification_time,
            content_hash=self.content_hash,
            released_by=by,
            recorded_at=at,
            state=self.state,
        )
