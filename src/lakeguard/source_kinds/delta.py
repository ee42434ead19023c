"""Delta tables (by path under the root, or a registered name): incremental by table version,
or a snapshot.

Progress: the source table version a batch read up to.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from lakeguard.progress import ProgressMark
from lakeguard.source_kinds.base import ObjectOptions, RootOptions, SourceKind
from lakeguard.vocabulary import SourceKindName, SourceLoad


class DeltaObjectOptions(ObjectOptions):
    change_data_feed: bool | None = Field(
        default=None,
        description="Read the source table's change data feed (default: when it has one)",
    )


class SourceVersion(ProgressMark):
    """The version of a source Delta table a batch read up to."""

    KIND: ClassVar[str] = "SOURCE_VERSION"
    source_version: int


class DeltaKind(SourceKind[RootOptions, DeltaObjectOptions]):
    name: ClassVar[SourceKindName] = SourceKindName.DELTA
    formats: ClassVar[tuple[str, ...]] = ("delta",)
    loads: ClassVar[tuple[SourceLoad, ...]] = (SourceLoad.INCREMENTAL, SourceLoad.FULL)
    system_options = RootOptions
    object_options = DeltaObjectOptions
    marks: ClassVar[tuple[type[ProgressMark], ...]] = (SourceVersion,)
