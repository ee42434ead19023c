"""Requests to one `http` system's server (no Spark): its credentials, budget and retries,
and errors that never show a secret.

Every request is retried on 429, 500, 502, 503, 504 and on a lost connection, waiting what the
server's Retry-After asks (seconds or an HTTP date) or else a doubling backoff. A server that
asks for longer than `max_wait_seconds`, or keeps failing past `max_retries`, fails the read as
a transient SourceError (the job's retries may try later); a refused token (401, 403), a
missing resource (404) or any other 4xx is terminal. The token is sent as the system says (a
header or a query parameter) and never appears in an error, a log line, a progress key or a
landed file name: `display` URLs leave it out. `http_client.HttpClient` reads files and pages
through it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Self
from urllib.parse import urlencode

import httpx

from lakeguard.records.reach import Reach
from lakeguard.records.sources.kinds.http import HttpOptions, destination_of
from lakeguard.words.errors import OutOfReach, SourceError, SourceUnavailable
from openlaketx.sources.credentials import scrub
from openlaketx.sources.guard import http_client
from openlaketx.sources.http_auth import Credentials, credentials
from openlaketx.sources.http_body import SNIPPET
from openlaketx.sources.http_retry import RETRIED, budget, retry_after


class _Stale(Exception):
    """A 401 that a renewed access token may answer (said once the renewal is tried)."""


class HttpSession:
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

    def __enter__(self) -> Self:
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
        asked = retry_after(response.headers.get("Retry-After")) if response is not None else None
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
