"""File sources (csv, json, parquet): each delivered file is ingested exactly once.

The locator's files are listed without Spark (a local folder, or an object store through
`openlaketx.storage`), with size and modification time (and a content hash where the source
asks for one), so a file source needs no JVM in this process and runs through Spark Connect.
Only files the dataset's approved versions have not taken are read; a file that comes back
under a known name with other content is read again or blocks the batch, as the source says.
Files are read with the approved schema; rows that do not parse are kept in `_corrupt_record`
for the gate to count. A file that cannot be read at all (corrupt, truncated, not the declared
format: `bad_files`) is put aside, and the rest of the delivery read, unless the source says
`on_bad_file: block`; a rejected file is not read again until it changes or is released.
Delivered files are never moved or deleted, unless the source names an archive folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from lakeguard.records.evidence import Check, CheckKind
from lakeguard.records.reach import Reach
from lakeguard.records.schema.drift import Change, diff
from lakeguard.records.sources.kinds import options_as
from lakeguard.records.sources.kinds.base import RootOptions
from lakeguard.records.sources.kinds.file import FileObjectOptions, SeenFile
from lakeguard.records.sources.progress import Rejection, SourceProgress
from lakeguard.records.sources.progress_rows import SourceProgressRow
from lakeguard.records.sources.records import SourceObjectDef, SourceSystemDef
from lakeguard.words import errors
from lakeguard.words.errors import (
    OutOfReach,
    SourceError,
    SourceUnavailable,
    first_line,
    root_cause,
)
from lakeguard.words.hashing import digest
from lakeguard.words.vocabulary import SourceKindName, SourceLoad
from openlaketx.sources import bad_files
from openlaketx.sources.archive import archive_files, archive_moves
from openlaketx.sources.base import ReadContext, SourceEngine
from openlaketx.sources.guard import check_files, check_path
from openlaketx.sources.layouts import declared_columns, live_layouts, read_layout
from openlaketx.sources.listing import local_files, store_files
from openlaketx.sources.reads import SourceRead

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


# The files of a source object still rejected: each as it was put aside, and why.
Rejected = Mapping[str, tuple[SeenFile, str]]


@dataclass(frozen=True)
class Selection:
    """The listed files split by what the dataset has already taken (or put aside)."""

    new: list[SeenFile]
    changed: list[SeenFile]
    unchanged: list[SeenFile]
    # put aside as unreadable and unchanged since: not read until they change or are released
    rejected: list[SeenFile] = field(default_factory=list)


def select_files(
    listed: list[SeenFile], seen: dict[str, SeenFile], rejected: Rejected | None = None
) -> Selection:
    """Which listed files are new, which came back changed, which were taken already, which
    stay rejected (pure)."""
    new, changed, unchanged, aside = [], [], [], []
    for f in listed:
        before = seen.get(f.path)
        put_aside = (rejected or {}).get(f.path)
        if put_aside is not None and put_aside[0].same_as(f):
            aside.append(f)
        elif before is None:
            new.append(f)
        elif before.same_as(f):
            unchanged.append(f)
        else:
            changed.append(f)
    return Selection(new, changed, unchanged, aside)


def source_path(system: SourceSystemDef, locator: str) -> str:
    """Where a locator of a system that is a folder (files, Delta tables) is."""
    return options_as(system.options, RootOptions).path_of(locator)


def file_options(obj: SourceObjectDef) -> FileObjectOptions:
    return options_as(obj.options, FileObjectOptions)


def list_files(pattern: str, *, content_hash: bool) -> list[SeenFile]:
    """The data files `pattern` names (a glob, a file or a folder), as the file system has them,
    listed without Spark: local paths as Hadoop names them (`file:/...`), object-store ones by
    their URI. Names starting with `_` or `.` are skipped, as Spark's readers skip them."""
    local = local_files(pattern, content_hash=content_hash)
    if local is not None:
        return local
    return store_files(pattern, content_hash=content_hash) or []


def listed_files(
    system: SourceSystemDef, obj: SourceObjectDef, reach: Reach, *, content_hash: bool
) -> list[SeenFile] | None:
    """The files of `obj` on the local disk or an object store (None: another file system,
    which only Spark lists), each one the tenant may read, its symlinks resolved."""
    pattern = source_path(system, obj.locator)
    where = f"source_objects[{obj.source_object_id}].locator"
    check_path(reach, pattern, where)
    listed = local_files(pattern, content_hash=content_hash)
    if listed is None:
        listed = store_files(pattern, content_hash=content_hash)
    if listed is not None:
        check_files(reach, [f.path for f in listed], where)
    return listed


def spark_refusal(spark: SparkSession, obj: SourceObjectDef, location: str) -> str | None:
    """Why Spark cannot read the one file at `location` whole, as the source reads it (one
    job, writing nowhere); None when it can, or when what failed was not the file."""
    try:
        for columns, paths in live_layouts(spark, obj, [location]):
            frame = read_layout(spark, obj, paths, columns, obj.format in ("csv", "json"))
            frame.write.format("noop").mode("overwrite").save()
    except Exception as exc:
        cause = root_cause(exc)
        if bad_files.not_the_file(str(exc), cause):
            return None
        return f"cannot be read by Spark ({cause[:300]})"
    return None


def _vanished(pattern: str, where: str, exc: BaseException) -> SourceError:
    return SourceUnavailable(
        f"a file of {pattern} vanished between listing and reading: {first_line(exc)}",
        where=where,
        fix="run again: the files are listed afresh",
    )


def _checked(
    obj: SourceObjectDef, files: list[SeenFile], pattern: str, *, snapshot: bool
) -> tuple[list[SeenFile], list[Rejection]]:
    """The files that look readable, and those that cannot be read, put aside (`bad_files`:
    a footer or a first KiB each, no Spark). Under `on_bad_file: block`, or in a full
    snapshot (read whole or not at all), a bad file fails the batch instead, naming it."""
    where = f"source_objects[{obj.source_object_id}]"
    good, bad = [], []
    for f in files:
        try:
            why = bad_files.unreadable(f.path, obj.format, obj.read_options)
        except FileNotFoundError as exc:
            raise _vanished(pattern, where, exc) from exc
        except OSError as exc:  # not the content: access, the store; the run says so
            raise SourceUnavailable(
                f"cannot open {f.path}: {first_line(exc)}",
                where=where,
                fix="check access to the file system",
            ) from exc
        if why is None:
            good.append(f)
        else:
            bad.append(Rejection(f, why))
    if bad and (snapshot or file_options(obj).on_bad_file == "block"):
        raise bad_files.refuse(obj, [(r.mark.key(), r.reason) for r in bad], snapshot=snapshot)
    return good, bad


def _changed_check(obj: SourceObjectDef, changed: list[SeenFile]) -> list[Check]:
    """Files ingested before that came back with other content (and can be read): ingested
    again, or blocking the batch, as the source says."""
    if not changed:
        return []
    names = ", ".join(Path(f.path).name for f in changed[:5])
    reload = file_options(obj).on_changed_file == "reload"
    return [
        Check(
            name=f"changed_files:{obj.source_object_id}",
            kind=CheckKind.CHANGED_FILES,
            passed=reload,
            blocking=True,
            detail=f"{len(changed)} file(s) ingested before came back with other "
            f"content ({names}); "
            + (
                "ingested again (on_changed_file: reload)"
                if reload
                else "set on_changed_file: reload to ingest them again, or restore them"
            ),
        )
    ]


def read_files(
    spark: SparkSession,
    system: SourceSystemDef,
    obj: SourceObjectDef,
    seen: dict[str, SeenFile],
    reach: Reach,
    rejected: Rejected | None = None,
) -> SourceRead:
    """The files of `obj` that the dataset has not taken yet, read with the approved schema;
    those still `rejected` are left alone, and new ones that cannot be read are put aside."""
    where = f"source_objects[{obj.source_object_id}]"
    pattern = source_path(system, obj.locator)
    check_path(reach, pattern, f"{where}.locator")
    try:
        listed = list_files(pattern, content_hash=file_options(obj).content_hash)
    except Exception as exc:
        raise SourceUnavailable(
            f"cannot list {pattern}: {first_line(exc)}",
            where=where,
            fix="check the system root, the locator and access to the file system",
        ) from exc
    if not listed and not seen:
        raise SourceError(
            f"no files match {pattern}",
            where=where,
            fix="check the system root and the locator, or wait for the delivery",
        )
    check_files(reach, [f.path for f in listed], f"{where}.locator")
    snapshot = obj.load_type == SourceLoad.FULL
    chosen = select_files(listed, seen, None if snapshot else rejected)
    to_read = [*chosen.new, *chosen.changed]
    if to_read and snapshot:  # something changed: the folder's files are the new snapshot
        to_read = listed
    to_read, put_aside = _checked(obj, to_read, pattern, snapshot=snapshot)
    readable = {f.path for f in to_read}
    checks = _changed_check(obj, [f for f in chosen.changed if f.path in readable])
    if not to_read:
        aside = f"; {bad_files.summary(put_aside)}" if put_aside else ""
        return SourceRead(
            source_object_id=obj.source_object_id,
            frame=None,
            fingerprint="none",
            note=f"no new file at {pattern}{aside}",
            rejected=put_aside,
        )
    text_format = obj.format in ("csv", "json")
    try:
        layouts = live_layouts(spark, obj, [f.path for f in to_read])
        frames = [
            read_layout(spark, obj, paths, columns, text_format) for columns, paths in layouts
        ]
        frame = frames[0]
        for other in frames[1:]:
            frame = frame.unionByName(other, allowMissingColumns=True)
    except Exception as exc:
        message = first_line(exc)
        vanished = (
            "PATH_NOT_FOUND" in message
            or "does not exist" in message
            or isinstance(exc, FileNotFoundError)
        )
        if vanished:
            raise _vanished(pattern, where, exc) from exc
        raise SourceError(
            f"cannot read {pattern}: {message}",
            where=where,
            fix="check the files and the read options",
        ) from exc
    approved = declared_columns(obj)
    drift: list[Change] = []
    for columns, _ in layouts:
        drift += [c for c in diff(approved, columns) if c not in drift]
    prints = [f"{f.path}|{f.size}|{f.modification_time.isoformat()}" for f in to_read]
    moves = archive_moves(system, obj, [f.path for f in to_read], reach)
    return SourceRead(
        source_object_id=obj.source_object_id,
        frame=frame,
        drift=drift,
        live=layouts[0][0],
        fingerprint=digest("\n".join(prints)),
        progress=list(to_read),
        checks=checks,
        has_corrupt_column=text_format,
        archive=moves,
        snapshot=snapshot,
        files=[(f.path, f) for f in to_read],
        rejected=put_aside,
    )


class FileSource(SourceEngine):
    """Files under a local folder or an object-store prefix, listed without Spark."""

    kind = SourceKindName.FILE

    def read(
        self,
        spark: SparkSession,
        system: SourceSystemDef,
        obj: SourceObjectDef,
        progress: SourceProgress,
        context: ReadContext,
    ) -> SourceRead:
        seen = progress.of(obj.source_object_id, SeenFile)
        rejected = progress.rejected_of(obj.source_object_id, SeenFile)
        return read_files(spark, system, obj, seen, context.reach, rejected)

    def unreadable(
        self,
        spark: SparkSession,
        system: SourceSystemDef,
        obj: SourceObjectDef,
        read: SourceRead,
        message: str,
    ) -> list[Rejection]:
        if read.snapshot or file_options(obj).on_bad_file != "reject":
            return []  # read whole, or the whole delivery or nothing: the failure stands
        return bad_files.spark_culprits(
            read.files, message, lambda path: spark_refusal(spark, obj, path)
        )

    def _pending(
        self,
        system: SourceSystemDef,
        obj: SourceObjectDef,
        progress: SourceProgress,
        content_hash: bool,
        reach: Reach,
    ) -> tuple[Selection, dict[str, SeenFile]] | None:
        """The listing split by what was taken (None: a snapshot, a file system only Spark
        lists, out of the tenant's reach or not listable now: the run says why)."""
        if obj.load_type != SourceLoad.APPEND:
            return None  # a snapshot: only a read can tell whether it changed
        try:
            listed = listed_files(system, obj, reach, content_hash=content_hash)
        except (OutOfReach, errors.StorageError, OSError):
            # the run lists again and records the failure; a scheduler pass tries next time
            return None
        if listed is None:
            return None  # neither local nor on an object store: Spark lists it
        seen = progress.of(obj.source_object_id, SeenFile)
        rejected = progress.rejected_of(obj.source_object_id, SeenFile)
        return select_files(listed, seen, rejected), seen

    def recovered(
        self,
        spark: SparkSession,
        system: SourceSystemDef,
        obj: SourceObjectDef,
        taken: list[SourceProgressRow],
        reach: Reach,
    ) -> None:
        """Archive the files a crashed attempt took (it died before its own archive step)."""
        files = [r.path for r in taken if r.kind == SeenFile.KIND and r.path]
        archive_files(archive_moves(system, obj, files, reach))

    def nothing_new(
        self,
        system: SourceSystemDef,
        obj: SourceObjectDef,
        progress: SourceProgress,
        reach: Reach,
    ) -> str | None:
        found = self._pending(system, obj, progress, file_options(obj).content_hash, reach)
        if found is None:
            return None
        chosen, seen = found
        if not (chosen.new or chosen.changed or chosen.unchanged or chosen.rejected or seen):
            return None  # nothing ever delivered: the run says so, as an error
        if chosen.new or chosen.changed:
            return None
        aside = f" ({len(chosen.rejected)} rejected file(s) unchanged)" if chosen.rejected else ""
        return f"no new file at {source_path(system, obj.locator)}{aside}"

    def arrivals(
        self,
        system: SourceSystemDef,
        obj: SourceObjectDef,
        progress: SourceProgress,
        reach: Reach,
    ) -> list[str] | None:
        # size and time tell a changed file; hashing every file at every pass would not scale
        found = self._pending(system, obj, progress, False, reach)
        if found is None:
            return None
        chosen, _ = found
        reload = file_options(obj).on_changed_file == "reload"
        ingested = [*chosen.new, *(chosen.changed if reload else [])]
        if not ingested:
            return []  # a changed file alone, under block, would only block a run
        # what the run would read: under block a changed file is read too, and blocks it
        read = ingested if reload else [*ingested, *chosen.changed]
        return [f"{f.path}|{f.size}|{f.modification_time.isoformat()}" for f in read]

    def classify(
        self, message: str, system: SourceSystemDef, obj: SourceObjectDef
    ) -> SourceError | None:
        if "FileNotFoundException" in message or "FILE_NOT_EXIST" in message:
            return SourceUnavailable(
                f"a source file vanished between listing and reading: {message}",
                where=f"source_objects[{obj.source_object_id}]",
                fix="run again: the files are listed afresh; nothing was promoted",
            )
        return None
