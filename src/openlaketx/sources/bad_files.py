"""Files that cannot be read, found one by one, so that one bad file never holds back the good
ones of its delivery (a source object's `on_bad_file: reject`, the default).

- Before Spark reads a batch, each new file is checked cheaply, without Spark (`unreadable`):
  a Parquet file's footer with pyarrow; the first KiB of a csv or json file: gzip's magic bytes
  where its name says gzip (and none where it does not), no NUL bytes, UTF-8 where that is its
  encoding, not an HTML or XML page, and a json file that starts like JSON.
- A file that passes and still fails Spark mid-read (a corrupt page, a truncated gzip) makes
  the staging job fail. The failure names the file (`FAILED_READ_FILE ... <path>`); that file
  alone is read again by Spark to confirm it is the cause (`spark_culprits`; the source's own
  reader reads it: `files.spark_refusal`), and when the failure names none each file of the
  read is, one job each. Spark's `ignoreCorruptFiles` is
  not used: it skips the rest of a file silently and keeps the rows read before the error.
A found file is a `Rejection` (the file's mark, as it was, and why): the runner records it in
`rejected_files` and reads the batch again without it. Under `on_bad_file: block` the batch
fails instead, naming the file (`refuse`).
"""

from __future__ import annotations

import codecs
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from urllib.parse import quote

import pyarrow.parquet as pq

from lakeguard.records.sources.progress import ProgressMark, Rejection
from lakeguard.records.sources.records import SourceObjectDef
from lakeguard.words.errors import SourceError, first_line
from openlaketx import storage
from openlaketx.sources.http_body import looks_like_html
from openlaketx.sources.listing import listing_path

HEAD = 1024  # what a text file's sniff reads
_GZIP_MAGIC = b"\x1f\x8b"
# codecs Spark picks by a file's extension; only gzip's first bytes are checked here
_OTHER_CODECS = (".bz2", ".deflate", ".lz4", ".snappy", ".zst", ".xz", ".br")
_UTF8 = ("utf-8", "utf8")
# a failure that is no file's fault: the file vanished, or the store was out of reach
_NOT_THE_FILE = (
    "FileNotFoundException",
    "FILE_NOT_EXIST",
    "PATH_NOT_FOUND",
    "SocketTimeout",
    "ConnectException",
    "Connection reset",
    "UnknownHostException",
)
# a failure that is a file's read, though it may name none: then each file is read alone
_READ_FAILURE = (
    "FAILED_READ_FILE",
    "CANNOT_READ_FILE",
    "Encountered error while reading file",
    "ParquetDecodingException",
    "EOFException",
    "ZipException",
    "Not in GZIP format",
    "Unexpected end of input stream",
    "MalformedInput",
)


def _local(location: str) -> str:
    """A listed location as the storage layer opens it (`file:/x` is the local path `/x`)."""
    local = listing_path(location)
    return local if local is not None else location


def unreadable(location: str, file_format: str, options: Mapping[str, str]) -> str | None:
    """Why the file at `location` cannot be read as `file_format`, found without Spark from its
    footer or its first KiB (None: nothing wrong seen). A file that cannot be opened raises
    (it vanished, or access is denied: the run says so, it is not the file's content)."""
    if file_format == "parquet":
        return _parquet(_local(location))
    if file_format in ("csv", "json"):
        return _text(_local(location), file_format, options)
    return None


def _parquet(location: str) -> str | None:
    with storage.open_input(location) as handle:
        size = handle.size()
        head = handle.read(4)
        tail = b""
        if size >= 8:
            handle.seek(size - 4)
            tail = handle.read(4)
        if head != b"PAR1" or tail != b"PAR1":
            return "is not a complete parquet file (no PAR1 at its start and end)"
        handle.seek(0)
        try:
            pq.ParquetFile(handle).metadata  # noqa: B018 - reading the footer is the check
        except Exception as exc:  # pyarrow's errors have no common base beyond this
            return f"has a parquet footer that cannot be read ({first_line(exc, 200)})"
    return None


def _text(location: str, file_format: str, options: Mapping[str, str]) -> str | None:
    with storage.open_input(location) as handle:
        head = handle.read(HEAD)
    name = location.lower()
    codec = (options.get("compression") or options.get("codec") or "").lower()
    if name.endswith(".gz") or codec == "gzip":
        if head[:2] != _GZIP_MAGIC:
            return "is not gzip, though its name (or the compression option) says it is"
        try:  # the first KiB inflated is enough to sniff the text it holds
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head)
        except zlib.error as exc:
            return f"is not valid gzip ({exc})"
    elif name.endswith(_OTHER_CODECS) or codec not in ("", "none", "uncompressed"):
        return None  # another codec: Spark decompresses it; nothing cheap to check
    elif head[:2] == _GZIP_MAGIC:
        return (
            "is gzip-compressed, but its name does not end in .gz (Spark would read the "
            "compressed bytes as text)"
        )
    if not head:
        return None  # an empty file holds no rows; it is read as such
    encoding = (options.get("encoding") or options.get("charset") or "utf-8").lower()
    if encoding.replace("_", "-") in _UTF8:
        if b"\x00" in head:
            return f"is binary, not {file_format} text (it holds NUL bytes)"
        try:  # incremental: a character cut at the end of the sniff is not an error
            codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
        except UnicodeDecodeError as exc:
            return f"is not UTF-8 text (byte {head[exc.start]:#04x} at offset {exc.start})"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if looks_like_html(text):
        return f"is an HTML page, not {file_format}"
    if text[:5].lower() == b"<?xml":
        return f"is an XML document, not {file_format}"
    if file_format == "json" and text and text[:1] not in (b"{", b"["):
        return "is not JSON (it does not start with { or [)"
    return None


def _named(message: str, location: str) -> bool:
    """Whether a Spark failure names the file at `location` (as Hadoop writes paths)."""
    plain = _local(location)
    forms = {location, plain, quote(plain)}
    if plain.startswith("/"):
        forms |= {f"file:{plain}", f"file://{plain}", f"file:{quote(plain)}"}
    # the name must end there: `a.csv` is not named by a failure of `a.csv.gz`
    return any(re.search(re.escape(f) + r"(?=\.?(?:\s|$|['\"),;\]]))", message) for f in forms)


def not_the_file(*texts: str) -> bool:
    """Whether a failure is no file's fault: the file vanished, or the store was out of reach."""
    return any(word in text for word in _NOT_THE_FILE for text in texts)


def spark_culprits(
    files: Sequence[tuple[str, ProgressMark]],
    message: str,
    refusal: Callable[[str], str | None],
) -> list[Rejection]:
    """The files of a read that a Spark failure (`message`, its whole text) came from, each
    confirmed by `refusal` (why Spark cannot read that file alone): those the failure names,
    or else, for a read failure that names none, every file of the read, one Spark job each.
    Any other failure (a rule's expression, the disk) is no file's: none."""
    if not_the_file(message):
        return []  # a vanished file or an unreachable store: the run says so
    named = [(path, mark) for path, mark in files if _named(message, path)]
    if not named and not any(sign.lower() in message.lower() for sign in _READ_FAILURE):
        return []
    found = []
    for path, mark in named or files:
        why = refusal(path)
        if why is not None:
            found.append(Rejection(mark, why))
    return found


def shown(location: str) -> str:
    """A file's name, as a reason shows it."""
    return Path(_local(location)).name or location


def refuse(
    obj: SourceObjectDef, found: Sequence[tuple[str, str]], *, snapshot: bool
) -> SourceError:
    """The failure of a batch with files that cannot be read, under `on_bad_file: block` (or
    a full snapshot, read whole or not at all): (location, why) of each, named."""
    names = "; ".join(f"{shown(path)} {why}" for path, why in found[:5])
    more = f" (and {len(found) - 5} more)" if len(found) > 5 else ""
    return SourceError(
        f"{len(found)} file(s) of source object {obj.source_object_id} cannot be read: "
        f"{names}{more}; nothing was loaded",
        where=f"source_objects[{obj.source_object_id}]",
        fix=(
            "replace or remove the file: a full snapshot is read whole"
            if snapshot
            else "replace or remove the file, or set on_bad_file: reject to load the others "
            "and put it aside"
        ),
        details={"files": [path for path, _ in found]},
    )


def summary(found: Sequence[Rejection]) -> str:
    """What the rejected files were, in a line."""
    names = "; ".join(f"{shown(r.mark.key())} {r.reason}" for r in found[:5])
    more = f" (and {len(found) - 5} more)" if len(found) > 5 else ""
    return f"{len(found)} file(s) put aside as unreadable: {names}{more}"
