"""The dashboard's browser sessions: a random id in an HttpOnly, SameSite=Strict cookie maps,
in this process's memory, to the API key that logged in (its id, never its token) and to the
session's CSRF token. Every request checks the key again, so a revoked or expired key ends its
sessions at once; a restart of the service ends them all (log in again).

Before there is a session, the login form carries a token of its own (`LoginForms`), and every
state-changing form is refused when the browser says it comes from another origin
(`cross_origin`): another page, even on another port of 127.0.0.1, cannot log a browser in to
its own key (login CSRF), log it out or start a run.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

COOKIE = "laketx_session"
LOGIN_COOKIE = "laketx_login"
MAX_SESSIONS = 10_000  # the oldest are forgotten past this
LOGIN_FORM_SECONDS = 1800  # how long a login form's token is good for
# What a browser's Sec-Fetch-Site says of a form this server's own page sent (`none`: typed or
# bookmarked). `same-site` is refused: another port of the same host is same-site.
OWN_FETCHES = frozenset({"same-origin", "none"})
DEFAULT_PORTS = {"http": 80, "https": 443}


def same_text(expected: str, sent: str | None) -> bool:
    """`sent` is `expected`, compared in constant time (and any text may be sent)."""
    return sent is not None and hmac.compare_digest(expected.encode(), sent.encode())


@dataclass(frozen=True, slots=True)
class Session:
    session_id: str
    tenant_id: str
    api_key_id: str
    csrf: str  # sent back in each state-changing form
    expires: float  # monotonic seconds

    def csrf_matches(self, sent: str | None) -> bool:
        return same_text(self.csrf, sent)


class Sessions:
    """Live sessions, each for `lifetime` seconds after its login."""

    def __init__(self, lifetime: float = 8 * 3600, clock: Callable[[], float] = time.monotonic):
        self.lifetime, self._clock = lifetime, clock
        self._live: dict[str, Session] = {}
        self._lock = threading.Lock()

    def start(self, tenant_id: str, api_key_id: str) -> Session:
        session = Session(
            session_id=secrets.token_urlsafe(32),
            tenant_id=tenant_id,
            api_key_id=api_key_id,
            csrf=secrets.token_urlsafe(32),
            expires=self._clock() + self.lifetime,
        )
        with self._lock:
            if len(self._live) >= MAX_SESSIONS:
                oldest = min(self._live.values(), key=lambda s: s.expires)
                del self._live[oldest.session_id]
            self._live[session.session_id] = session
        return session

    def get(self, session_id: str | None) -> Session | None:
        if not session_id:
            return None
        with self._lock:
            session = self._live.get(session_id)
            if session is not None and session.expires <= self._clock():
                del self._live[session_id]
                return None
            return session

    def end(self, session_id: str | None) -> None:
        with self._lock:
            self._live.pop(session_id or "", None)


@dataclass(frozen=True, slots=True)
class LoginForm:
    """One login form's token: `cookie` goes in the login cookie, `field` in the form."""

    cookie: str
    field: str


class LoginForms:
    """Login CSRF tokens, double submit: a random value and its issue time in a short-lived
    HttpOnly, SameSite=Strict cookie, and in the form an HMAC of it under this process's key.
    Another site can make a browser post the form, but it cannot read the cookie, nor make the
    field without the key; a token is good for `lifetime` seconds, and only in this process."""

    def __init__(
        self, lifetime: float = LOGIN_FORM_SECONDS, clock: Callable[[], float] = time.monotonic
    ):
        self.lifetime, self._clock = lifetime, clock
        self._key = secrets.token_bytes(32)

    def _mac(self, cookie: str) -> str:
        return hmac.new(self._key, cookie.encode(), hashlib.sha256).hexdigest()

    def issue(self) -> LoginForm:
        cookie = f"{int(self._clock() * 1000)}.{secrets.token_urlsafe(24)}"
        return LoginForm(cookie, self._mac(cookie))

    def matches(self, cookie: str | None, field: str | None) -> bool:
        """Whether a posted form's field belongs to its cookie, and is still good."""
        if not cookie or not same_text(self._mac(cookie), field):
            return False
        issued = int(cookie.partition(".")[0]) / 1000  # the MAC matched: this process made it
        return 0 <= self._clock() - issued <= self.lifetime


def cross_origin(headers: Mapping[str, str], scheme: str) -> str | None:
    """Why a state-changing request comes from another origin, or None. `Sec-Fetch-Site`, when
    the browser sends it, must say the server's own page or none; `Origin`, when sent, must be
    the origin the request reached (scheme, host and port, from its `Host`). A client that
    sends neither (not a browser, or a very old one) is left to the forms' tokens."""
    site = headers.get("sec-fetch-site")
    if site is not None and site.strip().lower() not in OWN_FETCHES:
        return f"Sec-Fetch-Site is {site!r}"
    origin = headers.get("origin")
    if origin is None:
        return None
    own = _origin(f"{scheme}://{headers.get('host', '')}")
    if own is None or _origin(origin) != own:
        return f"Origin {origin!r} is not this server's ({scheme}://{headers.get('host', '')})"
    return None


def _origin(text: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of a serialized origin, the port filled in; None if it is not
    one (`null`, a path, credentials)."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if scheme not in DEFAULT_PORTS or not host or parts.path or parts.query or parts.fragment:
        return None
    if parts.username is not None or parts.password is not None:
        return None
    return scheme, host, port if port is not None else DEFAULT_PORTS[scheme]
