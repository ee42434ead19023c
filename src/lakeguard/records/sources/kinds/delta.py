"""Delta tables (by path under the root, or a registered name): incremental by table version,
or a snapshot.

Progress: the source table version a batch read up to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import Field

from lakeguard.records.reach import Reach
from lakeguard.records.sources.kinds.base import (
    ObjectOptions,
    RootOptions,
    SourceKind,
    storage_problems,
)
from lakeguard.records.sources.progress import ProgressMark
from lakeguard.words.problems import Problem
from lakeguard.words.vocabulary import SourceKindName, SourceLoad


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

    def object_reach(
        self,
        system: RootOptions,
        options: DeltaObjectOptions,
        locator: str,
        read_options: Mapping[str, str],
        reach: Reach,
        loc: tuple[Any, ...],
    ) -> list[Problem]:
        """Its table's folder; a confined tenant names it by path, since a registered name
        is looked up in a Spark session that every tenant of a service shares."""
        if is_table_name(locator):
            if not reach.confined:
                return []
            return [
                Problem(
                    (*loc, "locator"),
                    f"{locator!r} is a registered table name, looked up among every tenant's "
                    "tables; name the table by its folder under the system's root",
                )
            ]
        return storage_problems(reach, system.path_of(locator), (*loc, "locator"))


def is_table_name(locator: str) -> bool:
    """Whether a locator is a registered table name (`db.table`), not a path."""
    return "/" not in locator and locator.count(".") == 1
