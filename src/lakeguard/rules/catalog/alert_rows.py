"""The alerting sections of a document as rows of `notification_channels` and
`notification_routes`, and those rows written back as the sections (pure): `to_rows` and
`export` call these, so apply, plan, export and recheck treat them as every definition."""

from __future__ import annotations

import json
from collections.abc import Iterable

from lakeguard.records.alerts.channel_rows import ChannelRow, RouteRow
from lakeguard.records.alerts.channels import CHANNEL_KINDS
from lakeguard.rules.catalog.alert_models import NotificationRoute
from lakeguard.rules.catalog.models import MetadataDocument
from lakeguard.rules.catalog.sections import Entry, drop_none, lean

_ROUTE_LISTS = ("events", "datasets", "layers", "domains", "owners", "tags")


def channel_rows(doc: MetadataDocument) -> tuple[ChannelRow, ...]:
    """The rows of the document's channels."""
    return tuple(channel.row().hashed() for channel in doc.notification_channels)


def route_rows(doc: MetadataDocument) -> tuple[RouteRow, ...]:
    """The rows of the document's routes."""
    return tuple(
        RouteRow(
            route_id=route.id,
            channel_id=route.channel,
            events=[str(v) for v in route.events],
            datasets=list(route.datasets),
            layers=[str(v) for v in route.layers],
            domains=list(route.domains),
            owners=list(route.owners),
            tags=list(route.tags),
            min_severity=route.min_severity.value,
            repeat_interval=route.repeat_interval,
            warn_share=route.warn_share,
            enabled=route.enabled,
            description=route.description,
        ).hashed()
        for route in doc.notification_routes
    )


def _options(text: str | None) -> Entry:
    value = json.loads(text) if text else {}
    return value if isinstance(value, dict) else {}


def export_channels(rows: Iterable[ChannelRow]) -> list[Entry]:
    out = []
    for row in sorted(rows, key=lambda r: r.channel_id):
        kind = CHANNEL_KINDS.get(row.kind)
        if kind is None:  # edited into a kind that does not exist: say what is stored
            entry = {"id": row.channel_id, "kind": row.kind, **_options(row.options)}
            out.append(drop_none(entry))
            continue
        out.append(lean(kind.entry(row, _options(row.options)), kind))
    return out


def export_routes(rows: Iterable[RouteRow]) -> list[Entry]:
    out = []
    for row in sorted(rows, key=lambda r: r.route_id):
        entry: Entry = {
            "id": row.route_id,
            "channel": row.channel_id,
            **{name: list(getattr(row, name)) for name in _ROUTE_LISTS},
            "min_severity": row.min_severity,
            "repeat_interval": row.repeat_interval or None,  # '' as unset, as a run reads it
            "warn_share": row.warn_share,
            "enabled": row.enabled,
            "description": row.description,
        }
        out.append(lean(entry, NotificationRoute))
    return out
