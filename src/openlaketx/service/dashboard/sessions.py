"""The dashboard's browser sessions: a random id in an HttpOnly, SameSite=Strict cookie maps,
in this process's memory, to the API key that logged in (its id, never its token) and to the
session's CSRF token. Every request checks the key again, so a revoked or expired key ends its
sessions at once; a restart of the service ends them all (log in again).
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

COOKIE = "laketx_session"
MAX_SESSIONS = 10_000  # the oldest are forgotten past this


@dataclass(frozen=True, slots=True)
class Session:
    session_id: str
    tenant_id: str
    api_key_id: str
    csrf: str  # sent back in each state-changing form
    expires: float  # monotonic seconds

    def csrf_matches(self, sent: str | None) -> bool:
        return sent is not None and hmac.compare_digest(self.csrf, sent)


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
