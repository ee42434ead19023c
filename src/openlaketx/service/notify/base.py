"""What every sender is: a message about one incident event, rendered and sent to one
channel of its kind, and how the attempt ended (`Sent`).

Every secret is resolved here, through `openlaketx.sources.credentials.resolve` (the tenant's
reach), and every connection goes through `openlaketx.sources.guard` (to an address the
tenant's egress allow-list admits, pinned). No secret reaches a payload, a log or an error:
errors name the reference, never the URL or the secret.
"""

from __future__ import annotations

import email.utils
import json
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import UTC
from typing import Any, ClassVar, Generic, TypedDict, TypeVar

import httpx

from lakeguard.records.alerts.channels import ChannelKind
from lakeguard.records.alerts.event_rows import IncidentEventRow
from lakeguard.records.reach import Reach
from lakeguard.rules.alerts.incidents import details
from lakeguard.words.errors import ConfigError, LakeTxError, describe
from lakeguard.words.vocabulary import ChannelKindName, IncidentAction
from openlaketx.sources.credentials import resolve, scrub
from openlaketx.sources.guard import http_client

C = TypeVar("C", bound=ChannelKind)
# statuses a receiver says "try again later" with; any other non-2xx is its final answer
RETRIED = frozenset({408, 425, 429, 500, 502, 503, 504})


class EventData(TypedDict):
    """An incident event as a webhook's `data` carries it: ids, words, links, no secret."""

    tenant: str
    event_id: str
    incident_id: str
    action: str
    cause: str
    severity: str
    subject: str
    dataset_id: str | None
    job_id: str | None
    owner: str | None
    layer: str | None
    domain: str | None
    title: str
    explain: str
    run_id: str | None
    pipeline_run_id: str | None
    decision_id: str | None
    occurred_at: str  # ISO 8601, UTC
    link: str | None
    incident_link: str | None
    details: dict[str, object]  # what routes filter on, as the event recorded it


@dataclass(frozen=True, kw_only=True)
class Message:
    """One event for one channel: what every kind renders."""

    delivery_id: str  # the same on every attempt (webhook-id, Message-ID)
    attempt: int
    tenant: str
    event: IncidentEventRow
    owner: str | None = None
    layer: str | None = None
    domain: str | None = None
    link: str | None = None  # the dashboard's page for it, when a public URL is configured
    incident_link: str | None = None

    @property
    def kind(self) -> str:
        """incident.opened, incident.repeated or incident.resolved."""
        return f"incident.{self.event.action.value.lower()}"

    @property
    def headline(self) -> str:
        e = self.event
        if e.action == IncidentAction.RESOLVED:
            return f"RESOLVED {e.cause}: {e.title}"
        again = " (again)" if e.action == IncidentAction.REPEATED else ""
        return f"{e.severity.value.upper()} {e.cause}{again}: {e.title}"

    def data(self) -> EventData:
        """The event as plain data (the webhook's `data`)."""
        e = self.event
        return {
            "tenant": self.tenant,
            "event_id": e.event_id,
            "incident_id": e.incident_id,
            "action": e.action.value,
            "cause": e.cause.value,
            "severity": e.severity.value,
            "subject": e.subject,
            "dataset_id": e.dataset_id,
            "job_id": e.job_id,
            "owner": self.owner,
            "layer": self.layer,
            "domain": self.domain,
            "title": e.title,
            "explain": e.explain,
            "run_id": e.run_id,
            "pipeline_run_id": e.pipeline_run_id,
            "decision_id": e.decision_id,
            "occurred_at": e.occurred_at.replace(tzinfo=UTC).isoformat(),
            "link": self.link,
            "incident_link": self.incident_link,
            "details": details(e),
        }


@dataclass(frozen=True, kw_only=True)
class Sent:
    """How one attempt ended."""

    ok: bool
    status: int | None = None
    error: str | None = None
    retry_after: float | None = None  # what the receiver asked for (Retry-After), seconds
    final: bool = False  # a failure no retry can mend (a 4xx, a refused destination)


class Sender(ABC, Generic[C]):
    """Sends messages to channels of one kind."""

    kind: ClassVar[ChannelKindName]

    @abstractmethod
    def send(self, channel: C, message: Message, reach: Reach) -> Sent:
        """Deliver `message` to `channel`, within the tenant's reach."""

    @staticmethod
    def secret(channel: ChannelKind, name: str, ref: str, reach: Reach) -> str:
        """The secret `ref` holds (a field `name` of `channel`), in the tenant's scope."""
        value = resolve(ref, where=f"notification_channels[{channel.id}].{name}", reach=reach)
        if not value:
            raise ConfigError(
                f"{name} {ref} of channel {channel.id} is empty",
                where=f"notification_channels[{channel.id}].{name}",
                fix=f"put the value in {ref}",
            )
        return value


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds a Retry-After header asks for: a number, or an HTTP date (RFC 9110)."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (now if now is not None else time.time()))


def post(
    reach: Reach,
    where: str,
    url: str,
    body: bytes,
    headers: dict[str, str],
    timeout: float,
    secrets: tuple[str, ...] = (),
) -> Sent:
    """POST `body` to `url` through the tenant's guarded client; how it ended, said without
    the URL or any of `secrets`."""
    if not url.startswith(("http://", "https://")):
        return Sent(ok=False, final=True, error=f"{where} does not hold an http(s) URL")

    def clean(text: str) -> str:
        for secret in (url, *secrets):
            text = scrub(text, secret)
        return text

    try:
        with http_client(reach, where, headers=headers, timeout=timeout) as client:
            response = client.post(url, content=body)
    except LakeTxError as exc:  # out of reach, or the name does not resolve
        return Sent(ok=False, final=not exc.transient, error=clean(describe(exc)))
    except httpx.HTTPError as exc:  # refused, reset, timed out: the receiver may come back
        return Sent(ok=False, error=clean(f"{type(exc).__name__}: {exc}") or type(exc).__name__)
    status = response.status_code
    if 200 <= status < 300:
        return Sent(ok=True, status=status)
    return Sent(
        ok=False,
        status=status,
        error=f"the receiver answered {status}",
        retry_after=retry_after(response.headers.get("retry-after")),
        final=status not in RETRIED,
    )


def json_body(payload: Any) -> bytes:
    """Compact JSON, keys sorted: the bytes that are signed are the bytes sent."""
    return json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
