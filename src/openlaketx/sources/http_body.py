"""What an `http` source's response body is: gunzipped as it streams, and checked against the
declared format before anything is loaded (an HTML login page, a JSON error body where csv was
declared, a parquet file without its footer). A body that is not the declared file is a
`BadBody`: the source puts it aside (`on_bad_file: reject`) or fails with it."""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from pathlib import Path

from pydantic import JsonValue

from lakeguard.records.sources.kinds.http import FetchedFile
from lakeguard.words.errors import SourceError

SNIPPET = 200  # how much of a refused body an error quotes


class Gunzip:
    """A streaming gunzip of one or more concatenated gzip members."""

    def __init__(self) -> None:
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)

    def feed(self, data: bytes) -> bytes:
        out = []
        while data:
            out.append(self._inflate.decompress(data))
            if not self._inflate.eof:
                break
            data = self._inflate.unused_data  # the next member starts here
            if data:
                self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        return b"".join(out)

    @property
    def complete(self) -> bool:
        """Whether the stream ended where a gzip member ends (not cut off)."""
        return self._inflate.eof


def chain(first: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    if first:
        yield first
    yield from rest


def looks_like_html(body: bytes) -> bool:
    head = body[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body"))


class BadBody(SourceError):
    """A fetched body that is not the declared file: `reason` says what it is instead, `mark`
    is the body as fetched (its ETag, Last-Modified, content hash), once known."""

    def __init__(
        self,
        message: str,
        *,
        reason: str,
        where: str,
        fix: str,
        content_hash: str | None = None,
        size: int | None = None,
    ) -> None:
        super().__init__(message, where=where, fix=fix)
        self.reason = reason
        self.content_hash = content_hash
        self.size = size
        self.mark: FetchedFile | None = None


def check_format(path: Path, file_format: str, content_type: str, shown: str, where: str) -> None:
    """Refuse a landed file that is not what the source declared."""
    with path.open("rb") as handle:
        head = handle.read(512)
        handle.seek(0, 2)
        size = handle.tell()
        tail = b""
        if size >= 4:
            handle.seek(-4, 2)
            tail = handle.read(4)
    said = head.decode("utf-8", "replace").strip()[:SNIPPET]
    problem = None
    if file_format in ("csv", "json") and ("html" in content_type.lower() or looks_like_html(head)):
        problem = f"is an HTML page, not {file_format}: {said}"
    elif file_format == "csv" and head.lstrip()[:1] in (b"{", b"[") and "json" in content_type:
        problem = f"is a JSON body, not csv: {said}"
    elif file_format == "parquet" and (head[:4] != b"PAR1" or tail != b"PAR1"):
        problem = "is not a complete parquet file (no PAR1 at its start and end)"
    if problem is not None:
        path.unlink(missing_ok=True)
        raise BadBody(
            f"{shown} {problem}: nothing was loaded",
            reason=problem,
            where=where,
            fix="check the locator, the token and the declared format",
        )


def write_lines(path: Path, records: list[dict[str, JsonValue] | None]) -> None:
    """Records as JSON lines (what Spark's json reader reads)."""
    with path.open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False))
            out.write("\n")
