"""Which routes, and so which channels, an incident event goes to (pure)."""

from __future__ import annotations

from lakeguard.reads.registry import Registry
from lakeguard.records.alerts.event_rows import IncidentEventRow
from lakeguard.records.alerts.records import ChannelDef, RouteDef
from lakeguard.records.definitions.records import DatasetDef
from lakeguard.rules.alerts.incidents import details
from lakeguard.words.vocabulary import AlertEvent, IncidentAction


def _names(route: RouteDef, cause: AlertEvent) -> bool:
    """Whether the route sends events of `cause` (no list: every cause but WARN)."""
    if not route.events:
        return cause != AlertEvent.WARN
    return cause in route.events


def covers(route: RouteDef, row: IncidentEventRow, dataset: DatasetDef | None) -> bool:
    """Whether `route` sends `row`: its events, its severity, its filters. A resolution goes
    wherever its incident's cause went (or to a route naming RECOVERED), whatever its
    severity; a WARN event only where its failing share reaches the route's `warn_share`."""
    if not route.enabled:
        return False
    if row.action == IncidentAction.RESOLVED:
        if not (_names(route, row.cause) or AlertEvent.RECOVERED in route.events):
            return False
    else:
        if not _names(route, row.cause) or row.severity.rank < route.min_severity.rank:
            return False
        if row.cause == AlertEvent.WARN:
            shares = details(row).get("warn_shares")
            values = shares.values() if isinstance(shares, dict) else ()
            top = max((float(v) for v in values), default=0.0)
            if route.warn_share is None or top < route.warn_share:
                return False
    if dataset is None:  # a job's own failure: routes that filter on no dataset
        return not (route.datasets or route.layers or route.domains or route.owners or route.tags)
    return (
        (not route.datasets or dataset.dataset_id in route.datasets)
        and (not route.layers or dataset.layer in route.layers)
        and (not route.domains or dataset.domain in route.domains)
        and (not route.owners or dataset.owner in route.owners)
        and (not route.tags or bool(set(route.tags) & set(dataset.tags)))
    )


def targets(registry: Registry, row: IncidentEventRow) -> list[tuple[RouteDef, ChannelDef]]:
    """The channels `row` goes to, each once (by the first route, by id, that sends it)."""
    dataset = registry.datasets.get(row.dataset_id or "")
    if row.dataset_id is not None and dataset is None:
        return []  # a dataset no longer registered (or whose row does not validate)
    found: dict[str, tuple[RouteDef, ChannelDef]] = {}
    for route in sorted(registry.routes, key=lambda r: r.route_id):
        channel = registry.channels.get(route.channel_id)
        if channel is None or not channel.enabled or channel.channel_id in found:
            continue
        if covers(route, row, dataset):
            found[channel.channel_id] = (route, channel)
    return list(found.values())
