"""Files and pages of an `http` system (no Spark), read through its `HttpSession`.

- A file is streamed to disk, gunzipped when it is gzip (by its magic bytes, or as declared),
  hashed (sha256 of the content), and checked against its declared format: an HTML page, a
  JSON error body where csv was declared, a truncated gzip or a parquet file without its
  footer is a `BadBody` (a SourceError carrying the body's mark) and nothing is loaded: the
  source puts it aside, or fails with it (`on_bad_file`). ETag and Last-Modified go back to
  the server, so an unchanged file is not fetched again (304).
- Pages of a JSON API are read until the paging says there are no more; each page's records
  are written as JSON lines. A next page is read from the system's own server only.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx
from pydantic import JsonValue

from lakeguard.records.sources.kinds.http import FetchedFile, HttpObjectOptions
from lakeguard.words.errors import SourceError, SourceUnavailable
from openlaketx.sources.http_body import (
    SNIPPET,
    BadBody,
    Gunzip,
    chain,
    check_format,
    looks_like_html,
)
from openlaketx.sources.http_paging import PageState, dig
from openlaketx.sources.http_session import HttpSession

_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Fetched:
    """A file landed on disk, as the progress mark remembers it."""

    path: Path
    mark: FetchedFile


def _mark(response: httpx.Response, shown: str, digest: str, size: int) -> FetchedFile:
    """A fetched body as its progress mark remembers it (its validators, no token)."""
    return FetchedFile(
        url=shown,
        etag=response.headers.get("ETag"),
        last_modified=response.headers.get("Last-Modified"),
        content_hash=digest,
        size=size,
    )


class HttpClient(HttpSession):
    """A system's session that reads its files and its pages."""

    def fetch_file(
        self,
        locator: str,
        options: HttpObjectOptions,
        file_format: str,
        landing: Path,
        last: FetchedFile | None,
    ) -> Fetched | None:
        """The file at `locator`, landed in `landing` as plain `data.<format>`; None when it is
        unchanged since `last` (a 304, or the same content)."""
        shown = self.display(locator, options.params)
        conditions = {}
        if last is not None and last.etag:
            conditions["If-None-Match"] = last.etag
        if last is not None and last.last_modified:
            conditions["If-Modified-Since"] = last.last_modified
        response = self.get(locator, options.params, conditions)
        try:
            if response.status_code == 304:
                return None
            landing.mkdir(parents=True, exist_ok=True)
            target = landing / f"data.{file_format}"
            try:
                digest, size = self._land(response, shown, options.compression, target)
            except BadBody as exc:  # the body as fetched, for the source to put aside
                target.unlink(missing_ok=True)
                exc.mark = _mark(response, shown, exc.content_hash or "", exc.size or 0)
                raise
            except BaseException:
                target.unlink(missing_ok=True)  # a part of a file is never read
                raise
        finally:
            response.close()
        mark = _mark(response, shown, digest, size)
        try:
            check_format(
                target, file_format, response.headers.get("content-type", ""), shown, self.where
            )
        except BadBody as exc:
            exc.mark = mark
            raise
        if last is not None and last.content_hash == digest:
            return None
        return Fetched(target, mark)

    def _land(
        self, response: httpx.Response, shown: str, compression: str, target: Path
    ) -> tuple[str, int]:
        """Stream the body to `target`, gunzipped when it is gzip; (sha256, bytes) of it."""
        sha, size = hashlib.sha256(), 0
        chunks = response.iter_bytes(_CHUNK)  # Content-Encoding already undone by httpx
        first = next(chunks, b"")
        gzipped = compression == "gzip" or (compression == "auto" and first[:2] == _GZIP_MAGIC)
        gunzip = Gunzip() if gzipped else None
        try:
            with target.open("wb") as out:
                for chunk in chain(first, chunks):
                    plain = gunzip.feed(chunk) if gunzip is not None else chunk
                    out.write(plain)
                    sha.update(plain)
                    size += len(plain)
        except zlib.error as exc:
            raise self._broken(shown, f"is not valid gzip ({exc})", sha.hexdigest(), size) from None
        except httpx.HTTPError as exc:
            raise SourceUnavailable(
                f"the body of {shown} was cut off: {self._say(str(exc))}",
                where=self.where,
                fix="run again: nothing was loaded",
            ) from None
        if gunzip is not None and not gunzip.complete:
            raise self._broken(
                shown, "is a truncated gzip (its end is missing)", sha.hexdigest(), size
            )
        return sha.hexdigest(), size

    def _broken(self, shown: str, what: str, digest: str, size: int) -> BadBody:
        """A body that is not what it says: `digest` and `size` are of what it held up to
        there (the same for the same body, so a body put aside is known again)."""
        return BadBody(
            f"the body of {shown} {what}: nothing was loaded",
            reason=what,
            where=self.where,
            fix="check the export on the server (or set compression to match it); the next "
            "run fetches it again",
            content_hash=digest,
            size=size,
        )

    def pages(
        self,
        locator: str,
        options: HttpObjectOptions,
        extra: Mapping[str, str],
    ) -> Iterator[list[dict[str, JsonValue] | None]]:
        """The records of every page (`records` path), following `paging`."""
        assert options.records is not None
        paging = options.paging
        params = {**options.params, **extra}
        state = PageState(paging)
        limit = paging.max_pages if paging else 1
        for number in range(1, limit + 1):
            if state.next_url is None:
                query = {**params, **state.params()}
                shown = self.display(locator, query)
                response = self.get(locator, query)
            else:  # a URL the last page named: its own query, the credentials' added
                url = self._followed(state.next_url, shown, number)
                shown = self._shown(url)
                response = self._get(url, {}, shown)
            try:
                body = response.read()
            finally:
                response.close()
            document = self._json(body, response.headers.get("content-type", ""), shown, number)
            records = dig(document, options.records)
            if not isinstance(records, list):
                said = self._say(json.dumps(document)[:SNIPPET])
                raise SourceError(
                    f"page {number} of {shown} has no list of records at {options.records!r}; "
                    f"it says: {said}",
                    where=self.where,
                    fix="check the records path, or the server's answer (an error body?)",
                )
            bad = next((r for r in records if not isinstance(r, dict)), None)
            if bad is not None:
                raise SourceError(
                    f"page {number} of {shown} has a record that is not an object: "
                    f"{self._say(json.dumps(bad)[:SNIPPET])}",
                    where=self.where,
                    fix="point records at a list of objects",
                )
            # a null record passes the check above (`next` answers None for none too): kept
            objects = [r for r in records if isinstance(r, dict) or r is None]
            yield objects
            if paging is None or not state.advance(
                document, objects, page_url=str(response.url), link=_next_link(response)
            ):
                return
        raise SourceError(
            f"{self.display(locator, params)} has more than {limit} pages",
            where=self.where,
            fix="raise paging.max_pages, or check that the paging parameters are right",
        )

    def _followed(self, named: str, shown: str, number: int) -> httpx.URL:
        """The next page's URL a page named, when it is on the base URL's own scheme, host
        and port: the credentials go with it, so it may lead nowhere else."""
        url, base = httpx.URL(named), httpx.URL(self.options.base_url)
        if (url.scheme, url.host, _port(url)) != (base.scheme, base.host, _port(base)):
            raise SourceError(
                f"page {number - 1} of {shown} names its next page on "
                f"{url.scheme}://{url.host}:{_port(url)}, not on the system's "
                f"{base.scheme}://{base.host}:{_port(base)}; nothing was sent there",
                where=self.where,
                fix="a next page is read from the system's own server only; point base_url "
                "at the server the pages are on",
            )
        return url

    def _json(self, body: bytes, content_type: str, shown: str, number: int) -> JsonValue:
        text = body.decode("utf-8", "replace")
        if "html" in content_type.lower() or looks_like_html(body):
            raise SourceError(
                f"page {number} of {shown} is an HTML page, not JSON: "
                f"{self._say(text.strip()[:SNIPPET])}",
                where=self.where,
                fix="check the locator and the token: servers answer a login or error page so",
            )
        try:
            document: JsonValue = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SourceError(
                f"page {number} of {shown} is not JSON ({exc.msg} at {exc.pos}): "
                f"{self._say(text.strip()[:SNIPPET])}",
                where=self.where,
                fix="check the locator; the server's answer is not the declared JSON",
            ) from None
        return document


def _port(url: httpx.URL) -> int:
    return url.port or (443 if url.scheme == "https" else 80)


def _next_link(response: httpx.Response) -> str | None:
    """The target of the response's `Link: <...>; rel="next"` (RFC 8288), if any."""
    for link in response.links.values():
        if "next" in str(link.get("rel", "")).lower().split():
            return link.get("url")
    return None
