"""Delta tables (by path or name): incremental by version, or a snapshot."""

from __future__ import annotations

from typing import ClassVar

from lakeguard.catalog.source_kinds.base import SourceKind
from lakeguard.vocabulary import SourceLoad


class DeltaKind(SourceKind):
    name: ClassVar[str] = "delta"
    formats: ClassVar[tuple[str, ...]] = ("delta",)
    default_load: ClassVar[SourceLoad] = SourceLoad.INCREMENTAL
