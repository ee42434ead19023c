"""HTTP fetching for the `http` source kind (no Spark): requests with retries, files, pages.

- Every request is retried on 429, 500, 502, 503, 504 and on a lost connection, waiting what
  the server's Retry-After asks (seconds or an HTTP date) or else a doubling backoff. A server
  that asks for longer than `max_wait_seconds`, or keeps failing past `max_retries`, fails the
  read as a transient SourceError (the job's retries may try later); a refused token (401,
  403), a missing resource (404) or any other 4xx is terminal.
- A file is streamed to disk, gunzipped when it is gzip (by its magic bytes, or as declared),
  hashed (sha256 of the content), and checked against its declared format: an HTML page, a
  JSON error body where csv was declared, a truncated gzip or a parquet file without its
  footer is a `BadBody` (a SourceError carrying the body's mark) and nothing is loaded: the
  source puts it aside, or fails with it (`on_bad_file`). ETag and Last-Modified go back to
  the server, so an unchanged file is not fetched again (304).
- Pages of a JSON API are read until the paging says there are no more; each page's records
  are written as JSON lines.
The token is sent as the system says (a header or a query parameter) and never appears in an
error, a log line, a progress key or a landed file name: `display` URLs leave it out.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import time
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

from lakeguard.errors import OutOfReach, SourceError
from lakeguard.reach import Reach
from lakeguard.source_kinds.http import FetchedFile, HttpObjectOptions, HttpOptions
from openlaketx.sources.credentials import scrub
from openlaketx.sources.guard import http_client
from openlaketx.sources.http_body import (
    SNIPPET,
    BadBody,
    Gunzip,
    chain,
    check_format,
    looks_like_html,
)
from openlaketx.sources.http_paging import PageState, dig

RETRIED = frozenset({429, 500, 502, 503, 504})
_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Fetched:
    """A file landed on disk, as the progress mark remembers it."""

    path: Path
    mark: FetchedFile


def _retry_after(value: str | None) -> float | None:
    """Seconds a Retry-After header asks for (a number or an HTTP date); None without one."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    when = email.utils.parsedate_to_datetime(value) if value else None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _mark(response: httpx.Response, shown: str, digest: str, size: int) -> FetchedFile:
    """A fetched body as its progress mark remembers it (its validators, no token)."""
    return FetchedFile(
        url=shown,
        etag=response.headers.get("ETag"),
        last_modified=response.headers.get("Last-Modified"),
        content_hash=digest,
        size=size,
    )


class HttpClient:
    """Requests to one system's server, with its token, retries and clear errors; every
    connection (redirects included) to an address the tenant's `reach` allows."""

    def __init__(
        self,
        options: HttpOptions,
        token: str | None,
        *,
        where: str,
        credential_ref: str | None,
        reach: Reach,
        destination_where: str | None = None,
        retries: int | None = None,
    ) -> None:
        self.options = options
        self.token = token
        self.where = where
        self.credential_ref = credential_ref
        self.retries = options.max_retries if retries is None else retries
        headers = dict(options.headers)
        if token is not None and options.token_in == "header":
            headers[options.header_name] = f"{options.prefix}{token}"
        # where the refusal of a destination is said: the system's base_url
        destination = destination_where or where
        found = options.destination()
        why = reach.name_refusal(*found) if found is not None else None
        if why is not None:
            raise OutOfReach(why, where=destination, fix=reach.network_fix())
        self._client = http_client(
            reach, destination, headers=headers, timeout=options.timeout_seconds
        )

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *_: object) -> None:
        self._client.close()

    def display(self, locator: str, params: Mapping[str, str] | None = None) -> str:
        """The URL of `locator` with `params`, without the token: safe to show and to store."""
        base = f"{self.options.base_url.rstrip('/')}/{locator.lstrip('/')}"
        if not params:
            return base
        return f"{base}{'&' if '?' in base else '?'}{urlencode(sorted(params.items()))}"

    def _params(self, params: Mapping[str, str]) -> dict[str, str]:
        if self.token is not None and self.options.token_in == "query":
            return {**params, self.options.query_name: self.token}
        return dict(params)

    def _say(self, text: str) -> str:
        return scrub(text, self.token)

    def _wait(self, attempt: int, response: httpx.Response | None, shown: str) -> None:
        """Sleep before retry `attempt` (1-based); a server asking too much fails the read."""
        asked = _retry_after(response.headers.get("Retry-After")) if response is not None else None
        if asked is not None and asked > self.options.max_wait_seconds:
            raise SourceError(
                f"{shown} answered {response.status_code if response else '?'} and asks to "
                f"wait {asked:.0f} s, longer than max_wait_seconds "
                f"({self.options.max_wait_seconds:.0f} s)",
                where=self.where,
                fix="run again later, or raise the system's max_wait_seconds",
                transient=True,
            )
        backoff = min(self.options.backoff_seconds * 2 ** (attempt - 1), 60.0)
        time.sleep(asked if asked is not None else backoff)

    def get(
        self,
        locator: str,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """One GET, retried as the module says, its body streamed (close it, or read it).

        Answers 2xx and 304 are returned; anything else is a SourceError."""
        shown = self.display(locator, params)
        url = f"{self.options.base_url.rstrip('/')}/{locator.lstrip('/')}"
        query = self._params(params or {})
        attempt = 0
        while True:
            response: httpx.Response | None = None
            try:
                request = self._client.build_request(
                    "GET", url, params=query, headers=dict(headers or {})
                )
                response = self._client.send(request, stream=True)
            except httpx.HTTPError as exc:
                failure = (
                    f"cannot reach {shown}: {self._say(type(exc).__name__)}: {self._say(str(exc))}"
                )
            else:
                if response.status_code < 300 or response.status_code == 304:
                    return response
                failure = self._refusal(response, shown)
            attempt += 1
            if attempt > self.retries:
                raise SourceError(
                    f"{failure} (after {self.retries} retries)" if self.retries else failure,
                    where=self.where,
                    fix="check that the server is up and reachable; the run can be retried",
                    transient=True,
                )
            self._wait(attempt, response, shown)

    def _refusal(self, response: httpx.Response, shown: str) -> str:
        """What a non-2xx answer says; raises at once when a retry cannot help."""
        status = response.status_code
        body = self._say(response.read()[:SNIPPET].decode("utf-8", "replace")).strip()
        response.close()
        if status in RETRIED:
            return f"{shown} answered {status}"
        if status in (401, 403):
            ref = self.credential_ref or "(none)"
            raise SourceError(
                f"{shown} refused the request ({status}): the token of credential_ref {ref} "
                "is missing, wrong or not allowed",
                where=self.where,
                fix=f"check the token that {ref} holds and the system's token_in/token_name",
                details={"credential_ref": ref, "status": status},
            )
        if status == 404:
            raise SourceError(
                f"{shown} does not exist (404)",
                where=self.where,
                fix="check the system's base_url and the source object's locator",
            )
        raise SourceError(
            f"{shown} answered {status}: {body or '(no body)'}",
            where=self.where,
            fix="check the locator and the query parameters the source object sends",
            details={"status": status},
        )

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
            raise SourceError(
                f"the body of {shown} was cut off: {self._say(str(exc))}",
                where=self.where,
                fix="run again: nothing was loaded",
                transient=True,
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
    ) -> Iterator[list[dict[str, Any]]]:
        """The records of every page (`records` path), following `paging`."""
        assert options.records is not None
        paging = options.paging
        params = {**options.params, **extra}
        state = PageState(paging)
        limit = paging.max_pages if paging else 1
        for number in range(1, limit + 1):
            query = {**params, **state.params()}
            shown = self.display(locator, query)
            response = self.get(locator, query)
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
            yield records
            if paging is None or not state.advance(document, records):
                return
        raise SourceError(
            f"{self.display(locator, params)} has more than {limit} pages",
            where=self.where,
            fix="raise paging.max_pages, or check that the paging parameters are right",
        )

    def _json(self, body: bytes, content_type: str, shown: str, number: int) -> Any:
        text = body.decode("utf-8", "replace")
        if "html" in content_type.lower() or looks_like_html(body):
            raise SourceError(
                f"page {number} of {shown} is an HTML page, not JSON: "
                f"{self._say(text.strip()[:SNIPPET])}",
                where=self.where,
                fix="check the locator and the token: servers answer a login or error page so",
            )
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise SourceError(
                f"page {number} of {shown} is not JSON ({exc.msg} at {exc.pos}): "
                f"{self._say(text.strip()[:SNIPPET])}",
                where=self.where,
                fix="check the locator; the server's answer is not the declared JSON",
            ) from None
