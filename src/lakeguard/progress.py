"""What a dataset has already taken from its sources, folded from `source_progress` (pure).

A batch remembers what it took as *marks*: a file with its size and time, the highest
watermark read, the source table version read up to, a fetched URL with its ETag. Each source
kind declares its marks (`lakeguard.source_kinds`); the store keeps them without knowing them:
a row holds the mark's kind, its key (what a later mark of the same kind replaces: a path, a
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
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

M = TypeVar("M", bound="ProgressMark")

# A mark kind ending so counts although its run was blocked (see the module's docstring).
REJECTED_SUFFIX = "_REJECTED"
# The columns of `source_progress` that a mark's field of the same name also fills.
MARK_COLUMNS = ("path", "size", "modification_time", "content_hash", "watermark", "source_version")


class ProgressMark(BaseModel):
    """One thing a batch took from a source; subclasses name their `KIND` and their key."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    KIND: ClassVar[str]

    def key(self) -> str:
        """What a later mark of the same kind replaces ("" when there is one per source)."""
        return ""

    def state(self) -> str:
        return self.model_dump_json(exclude_none=True)

    def columns(self) -> dict[str, Any]:
        """The mark's fields that `source_progress` also has as columns."""
        return {c: getattr(self, c) for c in MARK_COLUMNS if getattr(self, c, None) is not None}


class WatermarkMark(ProgressMark):
    """The highest value of an incremental source's watermark column a batch read, as text."""

    KIND: ClassVar[str] = "WATERMARK"
    watermark: str


@dataclass(frozen=True)
class SourceProgress:
    """The latest approved mark of each (source object, mark kind, key)."""

    marks: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = field(default_factory=dict)

    def of(self, source_object_id: str, mark: type[M]) -> dict[str, M]:
        """The source object's marks of one kind, by key."""
        found = self.marks.get((source_object_id, mark.KIND), {})
        return {key: mark.model_validate(state) for key, state in found.items()}

    def last(self, source_object_id: str, mark: type[M]) -> M | None:
        """The source object's single mark of a kind (a watermark, a version), if any."""
        return self.of(source_object_id, mark).get("")


def counts_blocked(kind: str) -> bool:
    """Whether marks of `kind` count although their run was blocked (rejections)."""
    return kind.endswith(REJECTED_SUFFIX)


class StoredMark(Protocol):
    """A `source_progress` row, as far as folding it goes (`runtime_rows.SourceProgressRow`)."""

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


def _key(row: StoredMark) -> str:
    if row.mark_key is not None:
        return row.mark_key
    return row.path or ""  # before mark keys: a file's key was its path


def fold(rows: Iterable[StoredMark], approved_runs: set[str]) -> SourceProgress:
    """The progress of approved runs only, the latest data version's mark winning."""
    progress = SourceProgress()
    for row in sorted((r for r in rows if r.run_id in approved_runs), key=lambda r: r.data_version):
        state = _state(row)
        if state:
            kind = (row.source_object_id, row.kind)
            progress.marks.setdefault(kind, {})[_key(row)] = state
    return progress
