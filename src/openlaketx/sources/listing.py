"""Files of a source, listed without Spark (file arrival, and knowing that a run has nothing
new before starting a JVM): on the local disk, or on an object store through
`openlaketx.storage`.

Paths and times come out as Spark's Hadoop listing gives them (`file:/abs/path`, modification
time to the millisecond), so they compare with what `source_progress` recorded; an object's
location is its `s3://` URI. Other file systems (HDFS) are not listed here: Spark lists them.
"""

from __future__ import annotations

import glob
import hashlib
import os
from datetime import UTC, datetime

from lakeguard.records.sources.kinds.file import SeenFile
from openlaketx import storage


def listing_path(pattern: str) -> str | None:
    """The local path a pattern names (`file:/x`, `file:///x` or a plain path)."""
    if pattern.startswith("file:"):
        rest = pattern.removeprefix("file:")
        return "/" + rest.lstrip("/") if rest.startswith("/") else rest
    return None if "://" in pattern else os.path.abspath(pattern)


def _seen(path: str, content_hash: bool) -> SeenFile:
    stat = os.stat(path)
    millis = stat.st_mtime_ns // 1_000_000
    stamp = datetime.fromtimestamp(millis / 1000, UTC).replace(tzinfo=None)
    digest = None
    if content_hash:
        sha = hashlib.sha256()
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                sha.update(chunk)
        digest = sha.hexdigest()
    return SeenFile(
        path=f"file:{path}", size=stat.st_size, modification_time=stamp, content_hash=digest
    )


def local_files(pattern: str, *, content_hash: bool = False) -> list[SeenFile] | None:
    """The data files `pattern` names (a glob, a file or a folder), as `list_files` would
    list them; None when the pattern is not on the local file system."""
    root = listing_path(pattern)
    if root is None:
        return None
    found = []
    for match in sorted(glob.glob(root)):
        children = (
            [os.path.join(match, n) for n in sorted(os.listdir(match))]
            if os.path.isdir(match)
            else [match]
        )
        for child in children:
            name = os.path.basename(child)
            if name.startswith(("_", ".")) or not os.path.isfile(child):
                continue
            found.append(_seen(child, content_hash))
    return sorted(found, key=lambda f: f.path)


def store_files(pattern: str, *, content_hash: bool = False) -> list[SeenFile] | None:
    """The data files `pattern` names on an object store, as `list_files` would list them;
    None when it is not on one."""
    if not storage.is_remote(pattern):
        return None
    return [
        SeenFile(
            path=f.location,
            size=f.size,
            modification_time=datetime.fromtimestamp(f.mtime_ms / 1000, UTC).replace(tzinfo=None),
            content_hash=storage.sha256(f.location) if content_hash else None,
        )
        for f in storage.glob_files(pattern)
    ]


def plain_location(location: str) -> str:
    """A listed location as the storage layer names it (`file:/x` is the local path `/x`)."""
    local = listing_path(location)
    return local if local is not None else location
