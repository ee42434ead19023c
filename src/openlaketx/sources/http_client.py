"""HTTP fetching for the `http` source kind (no Spark): requests with retries, files, pages.

- Every request is retried on 429, 500, 502, 503, 504 and on a lost connection, waiting what
  the server's Retry-After asks (seconds or an HTTP date) or else a doubling backoff. A server
  that asks for longer than `max_wait_seconds`, or keeps failing past `max_retries`, fails the
  read as a transient SourceError (the job's retries may try later); a refused token (401,
  403), a missing resource (404) or any other 4xx is terminal.
- A file is streamed to disk, gunzipped when it is gzip (by its magic bytes, or as declared),
  hashed (sha256 of the content), and checked against its declared format: an HTML page, a
  JSON error body where csv was declared, a truncated gzip or a parquet file without its
from openlaketx.sources.http_auth import Credentials, credentials
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
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

from lakeguard.errors import OutOfReach, SourceError, SourceUnavailable
from lakeguard.reach import Reach
from lakeguard.source_kinds.http import (
    FetchedFile,
    HttpObjectOptions,
    HttpOptions,
    destination_of,
)
from openlaketx.sources.credentials import scrub
from openlaketx.sources.guard import http_client
from openlaketx.sources.http_auth import Credentials, credentials
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


class _Stale(Exception):
    """A 401 that a renewed access token may answer (said once the renewal is tried)."""


class Budget:
    """Requests spaced at least `1/rate` apart, whichever thread sends them: each takes the
    next free slot, then sleeps until it."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate
        self._lock = threading.Lock()
        self._next = 0.0

    def wait(self) -> None:
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next)
            self._next = slot + self.interval
        if slot > now:
            time.sleep(slot - now)


# one budget per system and process: the read-ahead thread and the step's reads of a system
# share it, so together they keep to the rate
_BUDGETS: dict[tuple[str, str, float], Budget] = {}
_BUDGETS_LOCK = threading.Lock()


def budget(tenant: str, options: HttpOptions) -> Budget | None:
    """The process's budget of a system (by tenant, base URL and rate); None without one."""
    rate = options.requests_per_second
    if rate is None:
        return None
    key = (tenant, options.base_url, rate)
    with _BUDGETS_LOCK:
        return _BUDGETS.setdefault(key, Budget(rate))


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
    """Requests to one system's server, with its credentials, budget, retries and clear
    errors; every connection (redirects and the token endpoint included) to an address the
    tenant's `reach` allows. `token`: the secret of `credential_ref` (a bearer token)."""

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
        system_where: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.options = options
        self.token = token
        self.where = where
        self.system_where = system_where or where
        self.credential_ref = credential_ref
        self.retries = options.max_retries if retries is None else retries
        # where the refusal of a destination is said: the system's base_url
        destination = destination_where or where
        found = options.destination()
        why = reach.name_refusal(*found) if found is not None else None
        if why is not None:
            raise OutOfReach(why, where=destination, fix=reach.network_fix())
        oauth2 = options.oauth2
        token_where = f"{self.system_where}.options.auth.token_url"
        if oauth2 is not None:  # said before any secret is resolved or anything sent
            target = destination_of(oauth2.token_url)
            why = reach.name_refusal(*target) if target is not None else None
            if why is not None:
                raise OutOfReach(why, where=token_where, fix=reach.network_fix())
        self.auth: Credentials = credentials(
            options,
            token,
            credential_ref,
            reach=reach,
            where=self.system_where,
            ask=self._ask_token,
            clock=clock,
        )
        self._budget = budget(reach.tenant, options)
        self._client = http_client(
            reach, destination, headers=dict(options.headers), timeout=options.timeout_seconds
        )
        # the token endpoint has a client of its own: the API's headers never go there
        self._token_client = (
            http_client(reach, token_where, headers={}, timeout=options.timeout_seconds)
            if oauth2 is not None
            else None
        )

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *_: object) -> None:
        self._client.close()
        if self._token_client is not None:
            self._token_client.close()

    @property
    def secret(self) -> str | None:
        """The system's long-lived secret (a token, a password, a client secret)."""
        return self.auth.primary

    def display(self, locator: str, params: Mapping[str, str] | None = None) -> str:
        """The URL of `locator` with `params`, without the token: safe to show and to store."""
        base = f"{self.options.base_url.rstrip('/')}/{locator.lstrip('/')}"
        if not params:
            return base
        return f"{base}{'&' if '?' in base else '?'}{urlencode(sorted(params.items()))}"

    def _shown(self, url: httpx.URL) -> str:
        """A URL a server named, without the credentials' query parameters."""
        secret = set(self.auth.query())
        kept = [(k, v) for k, v in url.params.multi_items() if k not in secret]
        return self._say(str(url.copy_with(query=urlencode(kept).encode() or None)))

    def _say(self, text: str) -> str:
        for secret in self.auth.secrets():
            text = scrub(text, secret)
        return text

    def _wait(self, attempt: int, response: httpx.Response | None, shown: str) -> None:
        """Sleep before retry `attempt` (1-based); a server asking too much fails the read."""
        asked = _retry_after(response.headers.get("Retry-After")) if response is not None else None
        if asked is not None and asked > self.options.max_wait_seconds:
            raise SourceUnavailable(
                f"{shown} answered {response.status_code if response else '?'} and asks to "
                f"wait {asked:.0f} s, longer than max_wait_seconds "
                f"({self.options.max_wait_seconds:.0f} s)",
                where=self.where,
                fix="run again later, or raise the system's max_wait_seconds",
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
        url = httpx.URL(f"{self.options.base_url.rstrip('/')}/{locator.lstrip('/')}")
        shown = self.display(locator, params)
        return self._get(url.copy_merge_params(dict(params or {})), headers or {}, shown)

    def _get(self, url: httpx.URL, headers: Mapping[str, str], shown: str) -> httpx.Response:
        """GET `url` with the credentials; an access token the server refuses is renewed
        once and the request sent again."""
        renewable = self.auth.renewable
        while True:
            try:
                return self._exchange(
                    self._client,
                    lambda: self._client.build_request(
                        "GET",
                        url.copy_merge_params(self.auth.query()),
                        headers={**headers, **self.auth.headers()},
                    ),
                    shown,
                    partial(self._refusal, renewable=renewable),
                )
            except _Stale:
                renewable = False
                self.auth.renew()

    def _exchange(
        self,
        client: httpx.Client,
        build: Callable[[], httpx.Request],
        shown: str,
        refused: Callable[[httpx.Response, str], str],
        *,
        follow_redirects: bool = True,
    ) -> httpx.Response:
        """Send what `build` makes until a 2xx or 304 answers (returned, streamed), retrying
        what `refused` says may be retried; each attempt waits for the budget."""
        attempt = 0
        while True:
            request = build()  # (may ask the token endpoint first: its own exchange)
            if self._budget is not None:
                self._budget.wait()
            response: httpx.Response | None = None
            try:
                response = client.send(request, stream=True, follow_redirects=follow_redirects)
            except httpx.HTTPError as exc:
                failure = (
                    f"cannot reach {shown}: {self._say(type(exc).__name__)}: {self._say(str(exc))}"
                )
            else:
                if response.status_code < 300 or response.status_code == 304:
                    return response
                failure = refused(response, shown)
            attempt += 1
            if attempt > self.retries:
                raise SourceUnavailable(
                    f"{failure} (after {self.retries} retries)" if self.retries else failure,
                    where=self.where,
                    fix="check that the server is up and reachable; the run can be retried",
                )
            self._wait(attempt, response, shown)

    def _refusal(self, response: httpx.Response, shown: str, *, renewable: bool = False) -> str:
        """What a non-2xx answer says; raises at once when a retry cannot help."""
        status = response.status_code
        body = self._say(response.read()[:SNIPPET].decode("utf-8", "replace")).strip()
        response.close()
        if status in RETRIED:
            return f"{shown} answered {status}"
        if status == 401 and renewable:
            raise _Stale
        if status in (401, 403):
            refusal = self.auth.refusal
            raise SourceError(
                f"{shown} refused the request ({status}): {refusal.said} is missing, wrong or "
                "not allowed",
                where=self.where,
                fix=refusal.fix,
                details={"credential_ref": refusal.ref, "status": status},
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

    # -- OAuth2 ---------------------------------------------------------------------------
    def _ask_token(self, form: dict[str, str], headers: dict[str, str]) -> Any:
        """POST `form` to the token endpoint (never redirected: the client's secret goes to
        that URL only); the JSON it answers."""
        oauth2, client = self.options.oauth2, self._token_client
        assert oauth2 is not None and client is not None
        shown = f"the token endpoint {oauth2.token_url}"
        response = self._exchange(
            client,
            lambda: client.build_request("POST", oauth2.token_url, data=form, headers=headers),
            shown,
            self._token_refusal,
            follow_redirects=False,
        )
        try:
            body = response.read()
        finally:
            response.close()
        try:
            return json.loads(body)
        except json.JSONDecodeError:
            said = self._say(body[:SNIPPET].decode("utf-8", "replace")).strip()
            raise SourceError(
                f"{shown} answered {response.status_code} with something that is not JSON: "
                f"{said or '(no body)'}",
                where=f"{self.system_where}.options.auth",
                fix="check token_url: it must be the OAuth2 token endpoint",
            ) from None

    def _token_refusal(self, response: httpx.Response, shown: str) -> str:
        """A token endpoint's non-2xx answer: retried when the server is busy or down, else a
        terminal error naming the system and the references (never a secret)."""
        status = response.status_code
        body = response.read()[:2048]
        response.close()
        if status in RETRIED:
            return f"{shown} answered {status}"
        oauth2 = self.options.oauth2
        assert oauth2 is not None
        refusal = self.auth.refusal
        try:
            said = json.loads(body)
        except json.JSONDecodeError:
            said = None
        if isinstance(said, dict) and said.get("error"):
            reason = f"{said['error']}: {said.get('error_description') or '(no description)'}"
        else:
            reason = body[:SNIPPET].decode("utf-8", "replace").strip() or "(no body)"
        if 300 <= status < 400:
            reason = "a redirect, which is not followed with the client's secrets"
        who = f"client_id {oauth2.client_id}, " if oauth2.client_id else ""
        raise SourceError(
            f"{self.system_where}: {shown} refused to issue an access token ({status}, "
            f"{self._say(reason)[:SNIPPET]}) for {oauth2.type} ({who}{refusal.named})",
            where=f"{self.system_where}.options.auth",
            fix=f"check token_url, client_id, scope, audience and the secret that {refusal.ref} "
            "holds; a refused token request is not retried",
            details={"credential_ref": refusal.ref, "status": status},
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
    ) -> Iterator[list[dict[str, Any]]]:
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
            yield records
            if paging is None or not state.advance(
                document, records, page_url=str(response.url), link=_next_link(response)
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


def _port(url: httpx.URL) -> int:
    return url.port or (443 if url.scheme == "https" else 80)


def _next_link(response: httpx.Response) -> str | None:
    """The target of the response's `Link: <...>; rel="next"` (RFC 8288), if any."""
    for link in response.links.values():
        if "next" in str(link.get("rel", "")).lower().split():
            return link.get("url")
    return None
