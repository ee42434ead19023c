"""Files (csv, json, parquet) under a folder: each new file once, or the folder as a snapshot.

Progress: every file a batch read, with its size and modification time (and a sha256 of its
content where the source asks for one), so a file is taken once and one that comes back with
other content is seen.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar, Literal

from pydantic import Field

from lakeguard.records.reach import Reach
from lakeguard.records.sources.kinds.base import (
    ON_BAD_FILE,
    ObjectOptions,
    OnBadFile,
    RootOptions,
    SourceKind,
    path_option_problems,
    storage_problems,
)
from lakeguard.records.sources.progress import ProgressMark
from lakeguard.words.problems import Problem
from lakeguard.words.vocabulary import SourceKindName, SourceLoad


class FileObjectOptions(ObjectOptions):
    on_changed_file: Literal["block", "reload"] = Field(
        default="block",
        description="A file already ingested reappears with other content: block the batch "
        "with a clear reason, or ingest it again",
    )
    archive: str | None = Field(
        default=None,
        description="Move ingested files to this folder under the root (never moved otherwise)",
    )
    content_hash: bool = Field(
        default=False,
        description="Tell files apart by a sha256 of their content, not only size "
        "and modification time",
    )
    on_bad_file: OnBadFile = Field(default="reject", description=ON_BAD_FILE)


class SeenFile(ProgressMark):
    """A file as it was when a promoted batch read it."""

    KIND: ClassVar[str] = "FILE"
    path: str
    size: int
    modification_time: datetime
    content_hash: str | None = None

    def key(self) -> str:
        return self.path

    def same_as(self, other: SeenFile) -> bool:
        """Whether `other` is this file unchanged (content hash compared when both have one)."""
        if self.content_hash and other.content_hash:
            return self.content_hash == other.content_hash
        return self.size == other.size and self.modification_time == other.modification_time


class FileKind(SourceKind[RootOptions, FileObjectOptions]):
    name: ClassVar[SourceKindName] = SourceKindName.FILE
    formats: ClassVar[tuple[str, ...]] = ("csv", "json", "parquet")
    loads: ClassVar[tuple[SourceLoad, ...]] = (SourceLoad.APPEND, SourceLoad.FULL)
    system_options = RootOptions
    object_options = FileObjectOptions
    marks: ClassVar[tuple[type[ProgressMark], ...]] = (SeenFile,)

    def object_reach(
        self,
        system: RootOptions,
        options: FileObjectOptions,
        locator: str,
        read_options: Mapping[str, str],
        reach: Reach,
        loc: tuple[Any, ...],
    ) -> list[Problem]:
        """The files it lists; with an archive, the folder they are moved into and the one
        they leave (a move writes both)."""
        path = system.path_of(locator)
        problems = storage_problems(reach, path, (*loc, "locator"))
        if options.archive:
            archive = (*loc, "archive")
            problems += storage_problems(
                reach, system.path_of(options.archive), archive, write=True
            )
            if not problems:
                problems += storage_problems(reach, path, archive, write=True)
        return problems + path_option_problems(read_options, reach, loc)
