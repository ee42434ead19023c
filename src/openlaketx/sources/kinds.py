"""How each source kind reads a batch and says what it took, found from one registry.

The kinds themselves (formats, defaults, checks) are LakeGuard's
(`lakeguard.catalog.source_kinds`); this is the engine's half: one reader per kind. The
registry refuses to load when a kind has no reader, so a new kind cannot be half added.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakeguard.catalog.source_kinds import SOURCE_KIND_NAMES
from lakeguard.store.progress import SourceProgress
from lakeguard.store.records import SourceObjectDef, SourceSystemDef
from openlaketx.sources.reads import SourceRead

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Read = Callable[["SparkSession", SourceSystemDef, SourceObjectDef, SourceProgress], SourceRead]


@dataclass(frozen=True)
class SourceReader:
    kind: str
    read: Read  # what is new in one source object, given what earlier batches took
    # a failure while reading (a network, a database) is worth a retry, whatever it says
    failures_transient: bool = False


def _files(
    spark: SparkSession, system: SourceSystemDef, obj: SourceObjectDef, progress: SourceProgress
) -> SourceRead:
    from openlaketx.sources.files import read_files

    return read_files(spark, system, obj, progress.files.get(obj.source_object_id, {}))


def _jdbc(
    spark: SparkSession, system: SourceSystemDef, obj: SourceObjectDef, progress: SourceProgress
) -> SourceRead:
    from openlaketx.sources.jdbc import read_jdbc

    return read_jdbc(spark, system, obj, progress.watermarks.get(obj.source_object_id))


def _delta(
    spark: SparkSession, system: SourceSystemDef, obj: SourceObjectDef, progress: SourceProgress
) -> SourceRead:
    from openlaketx.sources.delta import read_delta

    return read_delta(spark, system, obj, progress.source_versions.get(obj.source_object_id))


READERS: dict[str, SourceReader] = {
    r.kind: r
    for r in (
        SourceReader("file", _files),
        SourceReader("jdbc", _jdbc, failures_transient=True),
        SourceReader("delta", _delta),
    )
}

_missing = sorted(set(SOURCE_KIND_NAMES) ^ set(READERS))
if _missing:
    raise RuntimeError(
        f"source kinds and readers differ on {', '.join(_missing)}: every kind of "
        "lakeguard.catalog.source_kinds needs its reader in openlaketx/sources/kinds.py"
    )


def reader(kind: str) -> SourceReader:
    return READERS[kind]
