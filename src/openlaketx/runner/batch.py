"""An input batch of a dataset step, and the engine's lineage columns on its rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lakeguard.records.evidence import Check
from lakeguard.records.quality.compiled import CompiledRule
from lakeguard.records.quarantine import derived_pieces, exact_piece, mark_piece
from lakeguard.records.sources.progress import Rejection
from openlaketx.loads.content import DIGEST_COLUMN
from openlaketx.loads.merge_plan import ROW_HASH
from openlaketx.sources.reads import SourceRead

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

VERSION_COL = "_laketx_version"
RUN_COL = "_laketx_run_id"
LOADED_COL = "_laketx_loaded_at"
# The engine's bookkeeping on every row; derived datasets do not inherit it from parents.
LINEAGE_COLUMNS = frozenset(
    {
        VERSION_COL,
        RUN_COL,
        LOADED_COL,
        "_laketx_failed_rules",
        ROW_HASH,
        DIGEST_COLUMN,
    }
)


def without_lineage(frame: DataFrame) -> DataFrame:
    """The frame without the engine's lineage columns (soft-delete markers stay)."""
    return frame.drop(*[c for c in frame.columns if c in LINEAGE_COLUMNS])


@dataclass
class InputBatch:
    frame: DataFrame | None  # None: nothing new to promote
    fingerprint: str
    from_layer: str
    upstream_refs: dict[str, int] = field(default_factory=dict)
    builtin_rules: list[CompiledRule] = field(default_factory=list)
    note: str | None = None
    has_corrupt_column: bool = False
    checks: list[Check] = field(default_factory=list)
    sources: list[SourceRead] = field(default_factory=list)
    views: list[str] = field(default_factory=list)  # temporary views to drop after staging
    # a derived batch that spans several parent versions: them, oldest first (else empty)
    parent_versions: tuple[int, ...] = ()
    # columns the batch is unique on within each parent version by construction (a merge's
    # dedupe by sequence_by): a UNIQUE rule on them, or on more, cannot fail and is not run
    unique_on: tuple[str, ...] = ()
    # (source object, file) of each file the read put aside as unreadable
    rejected: list[tuple[str, Rejection]] = field(default_factory=list)

    def pieces(self) -> tuple[str, ...]:
        """What the batch read, piece by piece (lakeguard.records.quarantine): each thing a source
        takes that a later read takes again as it was (a file), else the source's whole
        fingerprint (a watermark, a version range: only the same read covers it); a derived
        batch's parent version ranges."""
        if not self.sources:
            return derived_pieces(self.fingerprint)
        found: list[str] = []
        for source in self.sources:
            keyed = [m for m in source.progress if m.key()]
            found += [
                mark_piece(source.source_object_id, m.KIND, m.key(), m.state()) for m in keyed
            ]
            if len(keyed) < len(source.progress) or not keyed:
                found.append(exact_piece(source.source_object_id, source.fingerprint))
        return tuple(sorted(set(found)))

    @property
    def empty_is_nothing_new(self) -> bool:
        """An empty batch of watermark sources means no new rows (no version, no decision)."""
        return bool(self.sources) and all(s.watermark_column for s in self.sources)
