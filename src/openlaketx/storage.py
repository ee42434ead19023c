"""The data plane's files, on a local disk or an S3-compatible object store (the edge).

Data tables, their staged batches and quarantine live under the warehouse, which may be an
`s3://` location. Everything the engine does to those files besides Spark's reads and writes
goes through here: open a Delta table with delta-rs, list a staged folder's Parquet files and
read their footers, remove a folder, move one. A location names its store by its scheme, so the
rest of the engine handles locations as plain strings.

A move on a local disk is a rename. On an object store there is no rename (S3 copies and
deletes), so `move_tree` copies every file first and deletes the source only after: a crash in
between leaves both, never neither, and the callers commit what was moved before they rely on
the source being gone.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from lakeguard.records.data_tables import delta_table
from lakeguard.records.data_tables import exists as is_delta_table  # whether a Delta table is there
from lakeguard.records.objectstore import ObjectStoreSettings, is_remote
from lakeguard.records.schema.delta_json import DeltaField, parse_schema
from lakeguard.words.errors import StorageError, first_line

__all__ = [
    "ListedFile",
    "delta_table",
    "exists",
    "file_info",
    "glob_files",
    "header_line",
    "is_delta_table",
    "is_remote",
    "join",
    "list_files",
    "move_file",
    "move_tree",
    "open_input",
    "parquet_columns",
    "read_parquet",
    "relative",
    "remove_tree",
    "sha256",
    "subfolders",
]


_GLOB = re.compile(r"[*?\[{]")


def join(location: str, *parts: str) -> str:
    """`location/part/...` (string joining: a URI's `//` survives, unlike `Path`)."""
    return "/".join([location.rstrip("/"), *(p.strip("/") for p in parts)])


def relative(path: str, root: str) -> str:
    """`path` relative to `root`, as a Delta add action names a table's file."""
    prefix = root.rstrip("/") + "/"
    if not path.startswith(prefix):
        raise StorageError(
            f"{path} is not inside the table folder {root}",
            where=path,
            fix="stage batches inside the target table's folder",
        )
    return path[len(prefix) :]


def table_fields(location: str) -> list[DeltaField] | None:
    """The fields of a data table's newest schema (Delta schema JSON); None: no table yet."""
    if not is_delta_table(location):
        return None
    return parse_schema(json.loads(delta_table(location).schema().to_json()))["fields"]


def _filesystem(location: str) -> tuple[pafs.FileSystem, str]:
    """Arrow's file system for `location` and the path within it."""
    if not is_remote(location):
        return pafs.LocalFileSystem(), os.path.abspath(location)
    settings = ObjectStoreSettings.from_env()
    keys = settings.storage_options()
    endpoint = settings.endpoint or ""
    fs = pafs.S3FileSystem(
        access_key=keys.get("AWS_ACCESS_KEY_ID"),
        secret_key=keys.get("AWS_SECRET_ACCESS_KEY"),
        session_token=keys.get("AWS_SESSION_TOKEN"),
        region=settings.region,
        endpoint_override=endpoint.split("://", 1)[-1] or None,
        scheme="http" if endpoint.startswith("http://") else "https",
        force_virtual_addressing=not settings.path_style and not endpoint,
    )
    return fs, location.split("://", 1)[1]


def _uri(location: str, path: str) -> str:
    """A path of the file system back in the form `location` was given (scheme kept)."""
    if is_remote(location):
        return location.split("://", 1)[0] + "://" + path
    return path


def _hidden(name: str) -> bool:
    return name.startswith(("_", "."))


def list_files(folder: str, suffix: str = ".parquet") -> list[str]:
    """The data files under `folder` (sorted), skipping hidden files and folders (`_`, `.`)."""
    fs, path = _filesystem(folder)
    try:
        infos = fs.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
    except OSError as exc:
        raise StorageError(
            f"cannot list {folder}: {first_line(exc, 300)}", where=folder, fix=_REACH_FIX
        ) from exc
    found = []
    for info in infos:
        if info.type != pafs.FileType.File or not info.path.endswith(suffix):
            continue
        inner = info.path[len(path.rstrip("/")) + 1 :].split("/")
        if any(_hidden(part) for part in inner):
            continue
        found.append(_uri(folder, info.path))
    return sorted(found)


def file_info(location: str) -> tuple[int, int]:
    """(size in bytes, modification time in ms since the epoch) of one file."""
    fs, path = _filesystem(location)
    info = fs.get_file_info(path)
    if info.type != pafs.FileType.File:
        raise StorageError(f"{location} is not a file", where=location, fix=_REACH_FIX)
    mtime = info.mtime_ns // 1_000_000 if info.mtime_ns is not None else 0
    return int(info.size or 0), int(mtime)


def open_input(location: str) -> pafs.NativeFile:
    """A random-access reader of one file (a Parquet footer is read from its end)."""
    fs, path = _filesystem(location)
    return fs.open_input_file(path)


def read_parquet(location: str, columns: list[str]) -> pa.Table:
    """Some columns of one Parquet file."""
    fs, path = _filesystem(location)
    return pq.read_table(path, columns=columns, filesystem=fs)


def parquet_columns(location: str) -> list[str]:
    """The column names of one Parquet file (its footer only)."""
    fs, path = _filesystem(location)
    with fs.open_input_file(path) as handle:
        return list(pq.read_schema(handle).names)


@dataclass(frozen=True)
class ListedFile:
    """A file as the store lists it (`location` in the form the pattern was given)."""

    location: str
    size: int
    mtime_ms: int


def _segments_match(path: str, pattern: str) -> bool:
    """Whether `path` matches the glob `pattern` segment by segment (`*` stays in one)."""
    parts, globs = path.split("/"), pattern.split("/")
    return len(parts) == len(globs) and all(
        fnmatch.fnmatchcase(p, g) for p, g in zip(parts, globs, strict=True)
    )


def glob_files(pattern: str) -> list[ListedFile]:
    """The files a glob names on an object store, as Hadoop's `globStatus` would: each match
    that is a file, and the direct children of each match that is a folder; names starting
    with `_` or `.` are skipped, as Spark's readers skip them."""
    fs, path = _filesystem(pattern)
    fixed = path.split("/")
    first = next((i for i, part in enumerate(fixed) if _GLOB.search(part)), len(fixed))
    base = "/".join(fixed[: max(first, 1)])
    try:
        infos = fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
        if first == len(fixed):  # no glob: the path itself, a file or a folder
            infos = [*infos, fs.get_file_info(path)]
    except OSError as exc:
        raise StorageError(
            f"cannot list {pattern}: {first_line(exc, 300)}", where=pattern, fix=_REACH_FIX
        ) from exc
    found = {}
    for info in infos:
        if info.type != pafs.FileType.File or _hidden(info.base_name):
            continue
        parent = info.path.rsplit("/", 1)[0]
        if _segments_match(info.path, path) or _segments_match(parent, path):
            mtime = info.mtime_ns // 1_000_000 if info.mtime_ns is not None else 0
            found[info.path] = ListedFile(_uri(pattern, info.path), int(info.size or 0), mtime)
    return [found[k] for k in sorted(found)]


def header_line(location: str, encoding: str = "utf-8") -> str:
    """The first line of a text file (a CSV header), read without reading the rest."""
    fs, path = _filesystem(location)
    with fs.open_input_stream(path) as handle:
        head = b""
        while b"\n" not in head and (chunk := handle.read(1 << 16)):
            head += chunk
    return head.split(b"\n", 1)[0].decode(encoding, errors="replace")


def sha256(location: str) -> str:
    """The SHA-256 of a file's content, streamed."""
    fs, path = _filesystem(location)
    digest = hashlib.sha256()
    with fs.open_input_stream(path) as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def exists(location: str) -> bool:
    fs, path = _filesystem(location)
    return bool(fs.get_file_info(path).type != pafs.FileType.NotFound)


def move_file(source: str, target: str) -> None:
    """Move one file: a rename on a local disk, copy-then-delete on an object store."""
    if not is_remote(source) and not is_remote(target):
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
        return
    src_fs, src = _filesystem(source)
    dst_fs, dst = _filesystem(target)
    pafs.copy_files(src, dst, source_filesystem=src_fs, destination_filesystem=dst_fs)
    src_fs.delete_file(src)  # only once the copy is whole


def subfolders(location: str) -> list[str]:
    """The names of the folders directly under `location` ([] when it does not exist)."""
    if not is_remote(location):
        folder = Path(location)
        return sorted(c.name for c in folder.iterdir() if c.is_dir()) if folder.is_dir() else []
    fs, path = _filesystem(location)
    infos = fs.get_file_info(pafs.FileSelector(path, recursive=False, allow_not_found=True))
    return sorted(i.base_name for i in infos if i.type == pafs.FileType.Directory)


def remove_tree(location: str) -> None:
    """Delete a folder and everything under it; nothing happens when it is not there."""
    if not is_remote(location):
        shutil.rmtree(location, ignore_errors=True)
        return
    fs, path = _filesystem(location)
    with contextlib.suppress(FileNotFoundError):
        fs.delete_dir(path)


def move_tree(source: str, target: str) -> None:
    """Move a folder: a rename on a local disk, copy-then-delete on an object store."""
    if not is_remote(source) and not is_remote(target):
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        shutil.move(source, target)
        return
    src_fs, src = _filesystem(source)
    dst_fs, dst = _filesystem(target)
    infos = src_fs.get_file_info(pafs.FileSelector(src, recursive=True))
    for info in infos:
        if info.type != pafs.FileType.File:
            continue
        inner = info.path[len(src.rstrip("/")) + 1 :]
        pafs.copy_files(
            info.path,
            f"{dst.rstrip('/')}/{inner}",
            source_filesystem=src_fs,
            destination_filesystem=dst_fs,
        )
    # only once every file is at the target: a crash before leaves the source whole
    remove_tree(source)


_REACH_FIX = (
    "check the warehouse location and the object store's settings (LAKETX_S3_ENDPOINT, "
    "LAKETX_S3_REGION, LAKETX_S3_PATH_STYLE, LAKETX_S3_CREDENTIALS_FILE)"
)
