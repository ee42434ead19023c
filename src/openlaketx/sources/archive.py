"""The archive folder of a file source: ingested files moved there once their version is
recorded (never otherwise), each move checked against the tenant's reach."""

from __future__ import annotations

from lakeguard.records.reach import Reach
from lakeguard.records.sources.kinds import options_as
from lakeguard.records.sources.kinds.base import RootOptions
from lakeguard.records.sources.kinds.file import FileObjectOptions
from lakeguard.records.sources.records import SourceObjectDef, SourceSystemDef
from lakeguard.words.errors import SourceError, first_line
from openlaketx import storage
from openlaketx.sources.guard import check_files, check_path
from openlaketx.sources.listing import plain_location


def archive_moves(
    system: SourceSystemDef, obj: SourceObjectDef, paths: list[str], reach: Reach
) -> list[tuple[str, str]]:
    """(file, archive folder) for each path, when the source object names an archive: the
    folder and the files (a move takes them out of theirs) must be the tenant's to write."""
    archive_to = options_as(obj.options, FileObjectOptions).archive
    if not archive_to:
        return []
    archive = options_as(system.options, RootOptions).path_of(archive_to)
    where = f"source_objects[{obj.source_object_id}].archive"
    check_path(reach, archive, where, write=True)
    check_files(reach, paths, where, write=True)
    return [(path, archive) for path in paths]


def archive_files(moves: list[tuple[str, str]]) -> None:
    """Move ingested files into their archive folder (after their version is recorded).

    A name already in the archive gets a numbered suffix: nothing archived is overwritten. On
    an object store a move is a copy then a delete: a crash between leaves the file in both
    places, and the next attempt archives it again under a numbered name.
    """
    for source, folder in moves:
        src = plain_location(source)
        if not storage.exists(src):
            continue  # archived by an earlier attempt
        target = storage.join(plain_location(folder), src.rsplit("/", 1)[-1])
        dst, n = target, 0
        while storage.exists(dst):
            n += 1
            dst = f"{target}.{n}"
        try:
            storage.move_file(src, dst)
        except OSError as exc:
            raise SourceError(
                f"cannot move {source} to the archive {target}: {first_line(exc)}",
                where=target,
                fix="check the archive folder's permissions; the data is promoted already",
            ) from exc
