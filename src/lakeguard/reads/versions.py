"""Reads of a dataset's approved versions and what they carry: schema, profiles, source
progress."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from typing import Any

from lakeguard.reads.base import ReaderBase
from lakeguard.records.checks.result_rows import SchemaSnapshotRow
from lakeguard.records.decisions.rows import DataVersionRow
from lakeguard.records.decisions.versions import ApprovedVersion
from lakeguard.records.quality.profiling import FULL_METRICS, LastProfiles
from lakeguard.records.schema.fingerprint import SchemaColumn
from lakeguard.records.sources.progress import (
    SourceProgress,
    fold,
    key_of,
    rejected_states,
    still_rejected,
)
from lakeguard.records.sources.progress_rows import RejectedFileRow, SourceProgressRow
from lakeguard.store import joins
from lakeguard.store.joins import ProfiledMetric


class VersionReads(ReaderBase):
    """A dataset's approved versions and what was recorded with them."""

    def versions(
        self, dataset_id: str, *, after: int = 0, upto: int | None = None
    ) -> list[ApprovedVersion]:
        """The dataset's approved versions above `after` and up to `upto`, oldest first (the
        bounds are filters of the read: a step asks only for what it has not consumed)."""
        filters: list[tuple[str, str, Any]] = [("dataset_id", "=", dataset_id)]
        if after > 0:
            filters.append(("version", ">", after))
        if upto is not None:
            filters.append(("version", "<=", upto))
        rows = self._store.read(DataVersionRow, filters=filters)
        return sorted((ApprovedVersion.from_row(r) for r in rows), key=lambda v: v.version)

    def newest(self, dataset_id: str, count: int) -> list[ApprovedVersion]:
        """The dataset's newest `count` approved versions, oldest first (DataFusion picks
        them: a volume policy asks on every step, and a dataset's versions only grow)."""
        rows = self._store.read(
            DataVersionRow,
            filters=[("dataset_id", "=", dataset_id)],
            newest_first="version",
            limit=count,
        )
        return sorted((ApprovedVersion.from_row(r) for r in rows), key=lambda v: v.version)

    def approved(self, dataset_id: str, version: int | None = None) -> ApprovedVersion | None:
        """The latest approved version of a dataset (or approved `version`); None if none.
        DataFusion picks the row: every step asks, and a dataset's versions only grow."""
        filters: list[tuple[str, str, Any]] = [("dataset_id", "=", dataset_id)]
        if version is not None:
            filters.append(("version", "=", version))
        rows = self._store.read(DataVersionRow, filters=filters, newest_first="version", limit=1)
        return ApprovedVersion.from_row(rows[0]) if rows else None

    def approved_schema(self, dataset_id: str) -> list[SchemaColumn] | None:
        """The schema of the dataset's latest approved version (None: none, or not captured)."""
        latest = self.approved(dataset_id)
        if latest is None:
            return None
        rows = self._store.read(
            SchemaSnapshotRow,
            filters=[("dataset_id", "=", dataset_id), ("run_id", "=", latest.run_id)],
        )
        if not rows:
            return None
        return [SchemaColumn(**c) for c in json.loads(rows[0].schema_json)]

    def last_profiles(self, dataset_id: str) -> LastProfiles:
        """The dataset's last approved batch's profile (over the last approved full profile's
        metrics), when the last full profile ran, and how many batches were profiled since.

        Every step asks: only the rows from the last approved full profile on are read (all of
        them when there is none). Everything the answer needs is there, since a run's rows share
        one `profiled_at`: that run, the newest full profile and the runs since, the last
        approved run.
        """
        # DataFusion picks when the last approved full profile ran and marks each row's run
        # approved or not: only that window's rows cross into Python, not every approved run id
        since = joins.approved_full_profile_at(self._store, dataset_id, sorted(FULL_METRICS))
        rows = joins.profiles_since(self._store, dataset_id, since)
        full = [r for r in rows if r.metric in FULL_METRICS]
        full_at = max((r.profiled_at for r in full), default=None)
        since_full = {r.run_id for r in rows if full_at is not None and r.profiled_at > full_at}
        kept = [r for r in rows if r.approved]

        def last_run(candidates: list[ProfiledMetric]) -> str | None:
            last = max(candidates, key=lambda r: r.profiled_at, default=None)
            return None if last is None else last.run_id

        runs = (last_run([r for r in kept if r.metric in FULL_METRICS]), last_run(kept))
        latest: dict[tuple[str, str], str | None] = {}
        for run in runs:  # the last full profile's metrics, then the last profile's over them
            for r in kept:
                if r.run_id == run:
                    latest[(r.column_name, r.metric)] = r.value
        return LastProfiles(latest, full_at=full_at, batches_since_full=len(since_full))

    def all_versions(self) -> list[ApprovedVersion]:
        rows = self._store.read(DataVersionRow)
        return sorted(
            (ApprovedVersion.from_row(r) for r in rows),
            key=lambda v: (v.promoted_at or datetime.min, v.dataset_id, v.version),
        )

    def source_progress(self, dataset_id: str) -> SourceProgress:
        """What the dataset's approved versions took from its sources (files, watermarks),
        and the files put aside as unreadable that are still rejected."""
        # DataFusion keeps the approved runs' newest mark of each key: the fold sees only those
        marks = joins.approved_marks(self._store, dataset_id)
        progress = fold(marks, {m.run_id for m in marks})
        rejected = self.rejected_files(dataset_id, marks)
        return replace(progress, rejected=rejected_states(rejected)) if rejected else progress

    def rejected_files(
        self, dataset_id: str | None = None, marks: list[SourceProgressRow] | None = None
    ) -> list[RejectedFileRow]:
        """The files put aside as unreadable that are still rejected (of one dataset, or of
        all), oldest first: neither released nor taken since by an approved batch (`marks`:
        the dataset's approved marks, when the caller has read them)."""
        filters: list[tuple[str, str, Any]] = (
            [("dataset_id", "=", dataset_id)] if dataset_id is not None else []
        )
        rows = self._store.read(RejectedFileRow, filters=filters)
        live: list[RejectedFileRow] = []
        for ds in sorted({r.dataset_id for r in rows}):
            found = marks if marks is not None and ds == dataset_id else None
            if found is None:
                found = joins.approved_marks(self._store, ds)
            taken: dict[tuple[str, str, str], datetime] = {}
            for m in found:  # when an approved batch last took each file
                key = (m.source_object_id, m.kind, key_of(m))
                taken[key] = max(taken.get(key, m.recorded_at), m.recorded_at)
            live += still_rejected([r for r in rows if r.dataset_id == ds], taken)
        return sorted(live, key=lambda r: (r.recorded_at, r.dataset_id, r.path))
