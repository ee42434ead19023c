"""What a dataset has already taken from its sources, folded from `source_progress` (pure).

A batch remembers what it took as *marks*: a file with its size and time, the highest
watermark read, the source table version read up to, a fetched URL with its ETag. Each source
kind declares its marks (`lakeguard.records.sources.kinds`); the store keeps them without knowing
them: a row holds the mark's kind, its key (what a later mark of the same kind replaces: a path, a
URL; empty for a single value such as a watermark) and its fields as JSON (`state`). Fields
whose name is a column of `source_progress` (path, size, modification_time, content_hash,
watermark, source_version) are also written to that column, so SQL reads them, and rows
written before `state` existed are read back from those columns.

A progress row is written before its batch's data commit and counts only when its run produced
an approved version: a batch that crashed before publishing, or was blocked, took nothing. One
exception: a *rejection* (a kind ending in `_REJECTED`) is written after a batch blocked as
wholly malformed was quarantined, and counts although its run was blocked: it says what that
batch read, so that a source left unchanged is nothing new instead of fetched and quarantined
again on every run (`counts_blocked`).

A file a read could not read (corrupt, truncated, not the declared format) is put aside in
`rejected_files` instead, at once, whatever becomes of its batch: it is not read again while it
stays as it was rejected, until an operator releases it or a later approved batch takes it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, ClassVar, Protocol, TypedDict, TypeVar, cast

from pydantic import BaseModel, ConfigDict

from lakeguard.words.vocabulary import FileAction

M = TypeVar("M", bound="ProgressMark")

# A mark kind ending so counts although its run was blocked (see the module's docstring).
REJECTED_SUFFIX = "_REJECTED"


# The columns of `source_progress` that a mark's field of the same name also fills.
class MarkColumns(TypedDict, total=False):
    """The fields of a mark that `source_progress` also has as columns (those it sets)."""

    path: str
    size: int
    modification_time: datetime
    content_hash: str
    watermark: str
    source_version: int


MARK_COLUMNS = tuple(MarkColumns.__annotations__)


class ProgressMark(BaseModel):
    """One thing a batch took from a source; subclasses name their `KIND` and their key."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    KIND: ClassVar[str]

    def key(self) -> str:
        """What a later mark of the same kind replaces ("" when there is one per source)."""
        return ""

    def state(self) -> str:
        return self.model_dump_json(exclude_none=True)

    def columns(self) -> MarkColumns:
        """The mark's fields that `source_progress` also has as columns."""
        found = {c: getattr(self, c) for c in MARK_COLUMNS if getattr(self, c, None) is not None}
        return cast(MarkColumns, found)  # each subclass types its own fields


class WatermarkMark(ProgressMark):
    """The highest value of an incremental source's watermark column a batch read, as text."""

    KIND: ClassVar[str] = "WATERMARK"
    watermark: str


def same_file(mark: ProgressMark, other: ProgressMark) -> bool:
    """Whether two marks of a kind name the same thing unchanged (a kind's `same_as` says how:
    a file by size and time, or content hash; else every field)."""
    same = getattr(mark, "same_as", None)
    return bool(same(other)) if same is not None else mark == other


@dataclass(frozen=True)
class Rejection:
    """A file put aside: as it was when rejected, and why."""

    mark: ProgressMark
    reason: str


@dataclass(frozen=True)
class SourceProgress:
    """The latest approved mark of each (source object, mark kind, key), and the files put
    aside as unreadable (`rejected_files`) that are still rejected."""

    marks: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = field(default_factory=dict)
    # (source object, mark kind) -> key -> (the mark's fields as rejected, the reason)
    rejected: dict[tuple[str, str], dict[str, tuple[Mapping[str, Any], str]]] = field(
        default_factory=dict
    )

    def of(self, source_object_id: str, mark: type[M]) -> dict[str, M]:
        """The source object's marks of one kind, by key."""
        found = self.marks.get((source_object_id, mark.KIND), {})
        return {key: mark.model_validate(state) for key, state in found.items()}

    def rejected_of(self, source_object_id: str, mark: type[M]) -> dict[str, tuple[M, str]]:
        """The source object's files of one kind still rejected, by key: as each was when it
        was put aside, and why."""
        found = self.rejected.get((source_object_id, mark.KIND), {})
        return {key: (mark.model_validate(state), why) for key, (state, why) in found.items()}

    def put_aside(self, source_object_id: str, found: Iterable[Rejection]) -> SourceProgress:
        """This progress with more files rejected (found in this run, not yet recorded)."""
        rejected = {k: dict(v) for k, v in self.rejected.items()}
        for r in found:
            kind = (source_object_id, r.mark.KIND)
            rejected.setdefault(kind, {})[r.mark.key()] = (json.loads(r.mark.state()), r.reason)
        return replace(self, rejected=rejected)

    def last(self, source_object_id: str, mark: type[M]) -> M | None:
        """The source object's single mark of a kind (a watermark, a version), if any."""
        return self.of(source_object_id, mark).get("")


def counts_blocked(kind: str) -> bool:
    """Whether marks of `kind` count although their run was blocked (rejections)."""
    return kind.endswith(REJECTED_SUFFIX)


class StoredMark(Protocol):
    """A `source_progress` row, as far as folding it goes (`progress_rows.SourceProgressRow`)."""

    @property
    def run_id(self) -> str: ...
    @property
    def data_version(self) -> int: ...
    @property
    def source_object_id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def mark_key(self) -> str | None: ...
    @property
    def state(self) -> str | None: ...
    @property
    def path(self) -> str | None: ...


def _state(row: StoredMark) -> Mapping[str, Any]:
    if row.state:
        return dict(json.loads(row.state))
    # written before marks carried their state: the fields are the columns
    return {c: v for c in MARK_COLUMNS if (v := getattr(row, c, None)) is not None}


def key_of(row: StoredMark) -> str:
    """A stored mark's key (rows written before mark keys: a file's key was its path)."""
    if row.mark_key is not None:
        return row.mark_key
    return row.path or ""


def fold(rows: Iterable[StoredMark], approved_runs: set[str]) -> SourceProgress:
    """The progress of approved runs only, the latest data version's mark winning."""
    progress = SourceProgress()
    for row in sorted((r for r in rows if r.run_id in approved_runs), key=lambda r: r.data_version):
        state = _state(row)
        if state:
            kind = (row.source_object_id, row.kind)
            progress.marks.setdefault(kind, {})[key_of(row)] = state
    return progress


class StoredRejection(Protocol):
    """A `rejected_files` row, as far as folding it goes (`progress_rows.RejectedFileRow`)."""

    @property
    def dataset_id(self) -> str: ...
    @property
    def source_object_id(self) -> str: ...
    @property
    def action(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def reason(self) -> str | None: ...
    @property
    def state(self) -> str | None: ...
    @property
    def recorded_at(self) -> datetime: ...


R = TypeVar("R", bound=StoredRejection)


def still_rejected(rows: Iterable[R], taken_at: Mapping[tuple[str, str, str], datetime]) -> list[R]:
    """The rejections that still hold: each file's newest row (by dataset, source object, kind
    and path) when it rejects, unless an approved batch took the file after it (`taken_at`:
    when the newest approved mark of each (source object, kind, key) was recorded)."""
    newest: dict[tuple[str, str, str, str], R] = {}
    for row in rows:
        key = (row.dataset_id, row.source_object_id, row.kind, row.path)
        if key not in newest or row.recorded_at >= newest[key].recorded_at:
            newest[key] = row
    return [
        row
        for row in newest.values()
        if row.action == FileAction.REJECTED
        and not (
            (taken := taken_at.get((row.source_object_id, row.kind, row.path))) is not None
            and taken > row.recorded_at
        )
    ]


def rejected_states(
    rows: Iterable[StoredRejection],
) -> dict[tuple[str, str], dict[str, tuple[Mapping[str, Any], str]]]:
    """`SourceProgress.rejected` of rows that still hold (`still_rejected`)."""
    found: dict[tuple[str, str], dict[str, tuple[Mapping[str, Any], str]]] = {}
    for row in rows:
        state = dict(json.loads(row.state)) if row.state else {}
        found.setdefault((row.source_object_id, row.kind), {})[row.path] = (
            state,
            row.reason or "",
        )
    return found
