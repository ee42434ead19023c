"""What every source kind is: the formats it reads, its default load type, what a document
may ask of it, and the checks that say so (pure).

A source kind is one class in one module under `lakeguard/catalog/source_kinds/`, registered
in its `__init__.py`; the engine's reader for it is registered in `openlaketx.sources.kinds`,
which refuses to load without one for every kind here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from lakeguard.catalog.problems import Problem
from lakeguard.vocabulary import SourceLoad

if TYPE_CHECKING:
    from lakeguard.catalog.models import SourceObject, SourceSystem


class SourceKind:
    """A kind of source system: files, a JDBC database, Delta tables."""

    name: ClassVar[str]
    formats: ClassVar[tuple[str, ...]]  # the first is the default
    default_load: ClassVar[SourceLoad]
    watermarks: ClassVar[bool] = False  # incremental by a watermark column
    partitioned_reads: ClassVar[bool] = False  # partition_column, bounds, num_partitions
    files: ClassVar[bool] = False  # archive, content_hash, on_changed_file

    def check_system(self, system: SourceSystem, loc: tuple[Any, ...]) -> list[Problem]:
        """Problems of a system of this kind (its options)."""
        return []

    def check_object(self, obj: SourceObject, loc: tuple[Any, ...], siblings: int) -> list[Problem]:
        """Problems of a source object read from a system of this kind, beyond the options
        every kind checks alike (formats, load types, options of other kinds)."""
        return []
