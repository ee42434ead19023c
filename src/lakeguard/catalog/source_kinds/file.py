"""Files (csv, json, parquet) under a folder: each new file once, or the folder as a snapshot."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from lakeguard.catalog.problems import Problem
from lakeguard.catalog.source_kinds.base import SourceKind
from lakeguard.vocabulary import SourceLoad

if TYPE_CHECKING:
    from lakeguard.catalog.models import SourceObject


class FileKind(SourceKind):
    name: ClassVar[str] = "file"
    formats: ClassVar[tuple[str, ...]] = ("csv", "json", "parquet")
    default_load: ClassVar[SourceLoad] = SourceLoad.APPEND
    files: ClassVar[bool] = True

    def check_object(self, obj: SourceObject, loc: tuple[Any, ...], siblings: int) -> list[Problem]:
        if obj.load_type == SourceLoad.INCREMENTAL:
            return [
                Problem((*loc, "load_type"), "file sources are read append (new files) or full")
            ]
        return []
