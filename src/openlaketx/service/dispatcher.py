"""The alert dispatcher: each pass records the new events of every tenant (the outbox,
`lakeguard.actors.alerts.outbox`), claims the deliveries that are due
(`lakeguard.actors.alerts.deliveries`) and hands each to its channel kind's sender
(`openlaketx.service.notify`), recording how each attempt ended: SENT, FAILED (tried again
after an exponential backoff with jitter, or what the receiver's Retry-After asks, capped) or
GAVE_UP (a final answer, or every attempt spent).

It runs beside the scheduler inside `laketx serve` (`--notify-every`), or once from cron with
`laketx notify --once`. It never runs inside a run: an unreachable channel delays only its own
deliveries, never a run or a promotion.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from lakeguard.actors.alerts.deliveries import Deliveries, Due
from lakeguard.actors.alerts.outbox import Outbox
from lakeguard.records.alerts.event_rows import DeliveryRow, IncidentEventRow
from lakeguard.store.store import utcnow
from lakeguard.words.errors import LakeTxError, describe
from lakeguard.words.retries import backoff
from lakeguard.words.vocabulary import DeliveryAction
from openlaketx.lakehouse import Lakehouse
from openlaketx.service.notify import SENDERS, Message, Sent
from openlaketx.service.tenants import Tenants
from openlaketx.settings import ServiceSettings

_log = logging.getLogger("laketx.notify")


@dataclass
class Pass:
    """What one pass did: the events it recorded and the delivery rows it ended with."""

    recorded: list[IncidentEventRow] = field(default_factory=list)
    delivered: list[DeliveryRow] = field(default_factory=list)

    def count(self, action: DeliveryAction) -> int:
        return sum(1 for r in self.delivered if r.action == action)


class Dispatcher:
    def __init__(
        self,
        tenants: Tenants,
        settings: ServiceSettings | None = None,
        *,
        clock: Callable[[], datetime] = utcnow,
        holder: str | None = None,
    ) -> None:
        self.tenants = tenants
        self.settings = settings or tenants.settings
        self.clock = clock
        self.holder = holder
        self._stop = threading.Event()

    def tick(self) -> Pass:
        """One pass over every tenant."""
        done = Pass()
        for tenant in self.tenants.known():
            try:
                self._tenant(self.tenants.get(tenant), done)
            except LakeTxError as exc:  # one tenant's trouble stops only its deliveries
                _log.error("notify: tenant %s: %s", tenant, describe(exc))
        return done

    def _tenant(self, lh: Lakehouse, done: Pass) -> None:
        now = self.clock()
        registry = lh.reader.definitions.registry()
        outbox = Outbox(lh.store, clock=self.clock)
        done.recorded += outbox.ingest(registry, now)
        if not registry.routes:
            return
        deliveries = Deliveries(lh.store, holder=self.holder, clock=self.clock)
        due, quiet = deliveries.due(registry, outbox.events(), now)
        claimed = deliveries.claim(due, quiet)
        done.delivered += [q for q in quiet]
        reach = lh.store.tenant_reach()
        for item in claimed:
            dataset = registry.datasets.get(item.event.dataset_id or "")
            message = Message(
                delivery_id=item.delivery_id,
                attempt=item.attempt,
                tenant=lh.store.tenant,
                event=item.event,
                owner=dataset.owner if dataset else None,
                layer=dataset.layer.value if dataset else None,
                domain=dataset.domain if dataset else None,
                link=self._link(item.event.page),
                incident_link=self._link(f"/incidents/{item.event.incident_id}"),
            )
            try:
                sent = SENDERS[item.channel.kind].send(item.channel.spec, message, reach)
            except LakeTxError as exc:  # a secret that cannot be read, a refused destination
                sent = Sent(ok=False, final=not exc.transient, error=describe(exc))
            except Exception as exc:  # a sender's bug must not stop the others' deliveries
                sent = Sent(ok=False, error=f"{type(exc).__name__}: {exc}"[:500])
            done.delivered.append(self._record(deliveries, item, sent))

    def _record(self, deliveries: Deliveries, item: Due, sent: Sent) -> DeliveryRow:
        notify = self.settings.notify
        if sent.ok:
            return deliveries.record(item, DeliveryAction.SENT, status_code=sent.status)
        where = f"{item.channel.channel_id} ({item.channel.kind})"
        if sent.final or item.attempt >= notify.max_attempts:
            _log.warning("notify: %s gave up on %s: %s", where, item.delivery_id, sent.error)
            return deliveries.record(
                item, DeliveryAction.GAVE_UP, status_code=sent.status, error=sent.error
            )
        if sent.retry_after is not None:
            wait = min(sent.retry_after, notify.max_wait_seconds)
        else:
            rng = random.Random(f"{item.delivery_id}:{item.attempt}")
            wait = min(backoff(item.attempt, notify.backoff_seconds, rng), notify.max_wait_seconds)
        _log.info("notify: %s attempt %d failed: %s", where, item.attempt, sent.error)
        return deliveries.record(
            item,
            DeliveryAction.FAILED,
            status_code=sent.status,
            error=sent.error,
            next_attempt_at=self.clock() + timedelta(seconds=wait),
        )

    def _link(self, page: str | None) -> str | None:
        base = self.settings.public_url
        return f"{base.rstrip('/')}{page}" if base and page else None

    def loop(self, every: float = 5.0) -> None:
        """A pass every `every` seconds until `stop` (inside `laketx serve`)."""
        while not self._stop.wait(every):
            try:
                self.tick()
            except Exception as exc:  # the next pass tries again
                _log.error("notify pass failed: %s", describe(exc))

    def stop(self) -> None:
        self._stop.set()
