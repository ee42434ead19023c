"""The alerting sections of a document as rows of `notification_channels` and
`notification_routes`, and those rows written back as the sections (pure): `to_rows` and
`export` call these, so apply, plan, export and recheck treat them as every definition."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from lakeguard.records.alerts.channel_rows import ChannelRow, RouteRow
from lakeguard.records.alerts.channels import CHANNEL_KINDS
from lakeguard.rules.catalog.alert_models import NotificationRoute
from lakeguard.rules.catalog.models import MetadataDocument
from lakeguard.words.shapes import JsonObject

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


def _options(text: str | None) -> JsonObject:
    value = json.loads(text) if text else {}
    return value if isinstance(value, dict) else {}


def _lean(entry: JsonObject, model: Any) -> JsonObject:
    """`entry` without nulls and values its model defaults to, in the model's field order."""
    fields = model.model_fields if model is not None else {}
    order = {name: i for i, name in enumerate(fields)}
    out: JsonObject = {}
    for name, value in sorted(entry.items(), key=lambda kv: order.get(kv[0], len(order))):
        field = fields.get(name)
        if value is None:
            continue
        if field is not None and not field.is_required():  # noqa: SIM102 - narrows field
            if field.get_default(call_default_factory=True) == value:
                continue
        out[name] = value
    return out


def export_channels(rows: Iterable[ChannelRow]) -> list[JsonObject]:
    out = []
    for row in sorted(rows, key=lambda r: r.channel_id):
        kind = CHANNEL_KINDS.get(row.kind)
        if kind is None:  # edited into a kind that does not exist: say what is stored
            entry = {"id": row.channel_id, "kind": row.kind, **_options(row.options)}
            out.append({k: v for k, v in entry.items() if v is not None})
            continue
        out.append(_lean(kind.entry(row, _options(row.options)), kind))
    return out


def export_routes(rows: Iterable[RouteRow]) -> list[JsonObject]:
    out = []
    for row in sorted(rows, key=lambda r: r.route_id):
        entry: JsonObject = {
            "id": row.route_id,
            "channel": row.channel_id,
            **{name: list(getattr(row, name)) for name in _ROUTE_LISTS},
            "min_severity": row.min_severity,
            "repeat_interval": row.repeat_interval or None,  # '' as unset, as a run reads it
            "warn_share": row.warn_share,
            "enabled": row.enabled,
            "description": row.description,
        }
        out.append(_lean(entry, NotificationRoute))
    return out
