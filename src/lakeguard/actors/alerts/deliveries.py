"""Deliveries of incident events to channels, each made once (docs/alerts.md).

A delivery is one event to one channel, with an id derived from both (the `webhook-id`
Standard Webhooks receivers deduplicate by; the same on every attempt). A dispatcher claims
the deliveries that are due by one compare-and-set append of CLAIMED rows, on top of the
snapshot in which it saw them free, as the scheduler claims a tick: two dispatchers never
both hold one. Each attempt ends in a row: SENT, FAILED (with when to try again) or GAVE_UP.
A claim whose dispatcher died (on this host: at once; elsewhere: when the claim expires) is
free again, so a killed dispatcher loses nothing; what it was sending is sent again under the
same id. A repeat of an open incident inside its route's repeat interval is SUPPRESSED.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from lakeguard.actors.alerts.routing import targets
from lakeguard.reads.registry import Registry
from lakeguard.records.alerts.event_rows import DeliveryRow, IncidentEventRow
from lakeguard.records.alerts.records import ChannelDef, RouteDef
from lakeguard.rules.alerts.incidents import delivery_order
from lakeguard.words.hashing import digest
from lakeguard.words.liveness import known_dead, worker_instance
from lakeguard.words.vocabulary import DeliveryAction, IncidentAction

if TYPE_CHECKING:
    from lakeguard.store.store import MetadataStore

# A claim is the dispatcher's for this long (an attempt takes at most its channel's timeout).
CLAIM_TTL = timedelta(minutes=5)
# Events older than this are not delivered any more (and deliveries not looked at).
WINDOW = timedelta(days=7)


def delivery_id(event_id: str, channel_id: str) -> str:
    """The delivery's id, stable across attempts and dispatchers (`webhook-id`)."""
    return "msg_" + digest(f"{event_id}|{channel_id}", 32)


@dataclass(frozen=True)
class Due:
    """A delivery to make now: the event, the route that sends it, the channel, the attempt."""

    delivery_id: str
    event: IncidentEventRow
    route: RouteDef
    channel: ChannelDef
    attempt: int


@dataclass
class State:
    """A delivery as its rows say."""

    rows: list[DeliveryRow]

    @property
    def last(self) -> DeliveryRow:
        return self.rows[-1]

    @property
    def settled(self) -> bool:
        return any(r.action.settled for r in self.rows)

    @property
    def claims(self) -> int:
        return sum(1 for r in self.rows if r.action == DeliveryAction.CLAIMED)

    def waiting(self, now: datetime) -> bool:
        """Held by a live claim, or failed and not due again yet."""
        last = self.last
        if last.action == DeliveryAction.CLAIMED:
            live = last.expires_at is not None and last.expires_at > now
            return live and not known_dead(last.holder)
        if last.action == DeliveryAction.FAILED:
            return last.next_attempt_at is not None and last.next_attempt_at > now
        return False


def states(rows: Iterable[DeliveryRow]) -> dict[str, State]:
    """Each delivery's rows, in the order they happened."""
    found: dict[str, State] = {}
    for row in sorted(rows, key=delivery_order):
        found.setdefault(row.delivery_id, State([])).rows.append(row)
    return found


class Deliveries:
    """One tenant's deliveries: what is due, claiming it, recording each attempt."""

    def __init__(
        self,
        store: MetadataStore,
        *,
        holder: str | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.store = store
        self.holder = holder or worker_instance()
        self.clock = clock or store.now

    def rows(self, now: datetime) -> list[DeliveryRow]:
        since = self.store.since(WINDOW.days + 1, now)
        return self.store.read(DeliveryRow, filters=[("delivery_date", ">=", since)])

    def due(
        self, registry: Registry, events: Sequence[IncidentEventRow], now: datetime
    ) -> tuple[list[Due], list[DeliveryRow]]:
        """(the deliveries to attempt now, the repeats to record SUPPRESSED), from the
        recorded events of the window and what their deliveries' rows say."""
        known = states(self.rows(now))
        sent_at: dict[tuple[str, str], datetime] = {}  # (incident, channel) -> last SENT
        unsettled: set[tuple[str, str]] = set()
        for seen in known.values():
            pair = (seen.last.incident_id, seen.last.channel_id)
            for row in seen.rows:
                if row.action == DeliveryAction.SENT:
                    sent_at[pair] = max(sent_at.get(pair, row.at), row.at)
            if not seen.settled:
                unsettled.add(pair)
        due: list[Due] = []
        quiet: list[DeliveryRow] = []
        recent = [e for e in events if e.recorded_at >= now - WINDOW]
        for event in sorted(recent, key=lambda e: (e.recorded_at, e.occurred_at)):
            for route, channel in targets(registry, event):
                wanted = delivery_id(event.event_id, channel.channel_id)
                state = known.get(wanted)
                if state is not None and (state.settled or state.waiting(now)):
                    continue
                pair = (event.incident_id, channel.channel_id)
                if event.action == IncidentAction.REPEATED and state is None:
                    last = sent_at.get(pair)
                    recently = last is not None and now - last < timedelta(
                        seconds=route.repeat_seconds
                    )
                    if recently or pair in unsettled:
                        quiet.append(
                            self._row(
                                wanted, event, route, channel, DeliveryAction.SUPPRESSED, 0, now
                            )
                        )
                        continue
                attempt = (state.claims if state is not None else 0) + 1
                due.append(Due(wanted, event, route, channel, attempt))
                unsettled.add(pair)
        return due, quiet

    def claim(self, due: Sequence[Due], quiet: Sequence[DeliveryRow] = ()) -> list[Due]:
        """Claim `due` (one compare-and-set append; the repeats `quiet` recorded with it):
        the deliveries this dispatcher now holds, none another one holds."""
        if not due and not quiet:
            return []
        now = self.clock()
        ids = sorted({d.delivery_id for d in due} | {q.delivery_id for q in quiet})
        taken: list[Due] = []

        def decide(rows: list[DeliveryRow]) -> list[DeliveryRow] | None:
            current = states(rows)
            taken.clear()
            out: list[DeliveryRow] = []
            for row in quiet:
                if row.delivery_id not in current:
                    out.append(row)
            for d in due:
                state = current.get(d.delivery_id)
                if state is not None and (state.settled or state.waiting(now)):
                    continue
                attempt = (state.claims if state is not None else 0) + 1
                claimed = Due(d.delivery_id, d.event, d.route, d.channel, attempt)
                taken.append(claimed)
                out.append(
                    self._row(
                        d.delivery_id,
                        d.event,
                        d.route,
                        d.channel,
                        DeliveryAction.CLAIMED,
                        attempt,
                        now,
                        expires_at=now + CLAIM_TTL,
                    )
                )
            return out or None

        self.store.append_if(DeliveryRow, decide, filters=[("delivery_id", "in", ids)])
        return list(taken)

    def record(
        self,
        due: Due,
        action: DeliveryAction,
        *,
        status_code: int | None = None,
        error: str | None = None,
        next_attempt_at: datetime | None = None,
    ) -> DeliveryRow:
        """Append how an attempt ended (a blind append: the claim made it this one's)."""
        row = self._row(
            due.delivery_id,
            due.event,
            due.route,
            due.channel,
            action,
            due.attempt,
            self.clock(),
            status_code=status_code,
            error=error,
            next_attempt_at=next_attempt_at,
        )
        self.store.append_rows([row])
        return row

    def _row(
        self,
        delivery: str,
        event: IncidentEventRow,
        route: RouteDef,
        channel: ChannelDef,
        action: DeliveryAction,
        attempt: int,
        now: datetime,
        **extra: object,
    ) -> DeliveryRow:
        return DeliveryRow(
            delivery_id=delivery,
            tenant_id=self.store.tenant,
            event_id=event.event_id,
            incident_id=event.incident_id,
            channel_id=channel.channel_id,
            route_id=route.route_id,
            action=action,
            attempt=attempt,
            holder=self.holder,
            at=now,
            **extra,  # type: ignore[arg-type]
        )
