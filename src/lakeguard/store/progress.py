"""What a dataset has already taken from its sources, folded from `source_progress` (pure).

A progress row is written before its batch's data commit and counts only when its run produced
an approved version: a batch that crashed before publishing, or was blocked, took nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lakeguard.vocabulary import ProgressKind


@dataclass(frozen=True, kw_only=True, slots=True)
class SeenFile:
    """A file as it was when a promoted batch read it."""

    path: str
    size: int
    modification_time: datetime
    content_hash: str | None = None

    def same_as(self, other: SeenFile) -> bool:
        """Whether `other` is this file unchanged (content hash compared when both have one)."""
        if self.content_hash and other.content_hash:
            return self.content_hash == other.content_hash
        return self.size == other.size and self.modification_time == other.modification_time


@dataclass(frozen=True)
class SourceProgress:
    # source object -> path -> the file as last ingested
    files: dict[str, dict[str, SeenFile]] = field(default_factory=dict)
    # source object -> watermark (as text) of the latest version that read above one
    watermarks: dict[str, str] = field(default_factory=dict)
    # source object -> the source table version read up to
    source_versions: dict[str, int] = field(default_factory=dict)


def fold(rows: Iterable[Mapping[str, Any]], approved_runs: set[str]) -> SourceProgress:
    """The progress of approved runs only, latest data version first."""
    progress = SourceProgress()
    counted = sorted(
        (r for r in rows if r["run_id"] in approved_runs), key=lambda r: r["data_version"]
    )
    for r in counted:
        obj = r["source_object_id"]
        if r["kind"] == ProgressKind.FILE:
            progress.files.setdefault(obj, {})[r["path"]] = SeenFile(
                path=r["path"],
                size=int(r["size"]),
                modification_time=r["modification_time"],
                content_hash=r.get("content_hash"),
            )
        elif r["kind"] == ProgressKind.WATERMARK and r.get("watermark") is not None:
            progress.watermarks[obj] = r["watermark"]
        elif r["kind"] == ProgressKind.SOURCE_VERSION and r.get("source_version") is not None:
            progress.source_versions[obj] = int(r["source_version"])
    return progress
