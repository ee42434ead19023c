"""The alerting sections of a document as rows of `notification_channels` and
`notification_routes`, and those rows written back as the sections (pure): `to_rows` and
`export` call these, so apply, plan, export and recheck treat them as every definition."""

from __future__ import annotations

import json
from typing import Any

from lakeguard.alerts.channels import CHANNEL_KINDS
from lakeguard.catalog.alert_models import DEFAULT_REPEAT, NotificationRoute
from lakeguard.catalog.models import MetadataDocument
from lakeguard.hashing import fingerprint, to_json
from lakeguard.shapes import JsonObject, StoredRow

ALERT_TABLES = ("notification_channels", "notification_routes")
_ROUTE_LISTS = ("events", "datasets", "layers", "domains", "owners", "tags")


def _with_hash(row: StoredRow) -> StoredRow:
    return {**row, "definition_hash": fingerprint(row)}


def alert_rows(doc: MetadataDocument) -> dict[str, list[StoredRow]]:
    """The rows of the document's channels and routes, by table."""
    channels = []
    for channel in doc.notification_channels:
        row = channel.columns()
        row["options"] = to_json(row["options"])
        channels.append(_with_hash(row))
    routes = [
        _with_hash(
            {
                "route_id": route.id,
                "channel_id": route.channel,
                **{name: [str(v) for v in getattr(route, name)] for name in _ROUTE_LISTS},
                "min_severity": route.min_severity.value,
                "repeat_interval": route.repeat_interval,
                "warn_share": route.warn_share,
                "enabled": route.enabled,
                "description": route.description,
            }
        )
        for route in doc.notification_routes
    ]
    return {"notification_channels": channels, "notification_routes": routes}


def _options(text: Any) -> JsonObject:
    value = json.loads(text) if isinstance(text, str) and text else {}
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


def export_channels(rows: list[StoredRow]) -> list[JsonObject]:
    out = []
    for row in sorted(rows, key=lambda r: str(r["channel_id"])):
        kind = CHANNEL_KINDS.get(str(row.get("kind")))
        if kind is None:  # edited into a kind that does not exist: say what is stored
            entry = {"id": row["channel_id"], "kind": row.get("kind"), **_options(row["options"])}
            out.append({k: v for k, v in entry.items() if v is not None})
            continue
        out.append(_lean(kind.entry(row, _options(row.get("options"))), kind))
    return out


def export_routes(rows: list[StoredRow]) -> list[JsonObject]:
    out = []
    for row in sorted(rows, key=lambda r: str(r["route_id"])):
        entry: JsonObject = {
            "id": row["route_id"],
            "channel": row["channel_id"],
            **{name: list(row.get(name) or []) for name in _ROUTE_LISTS},
            "min_severity": row.get("min_severity"),
            "repeat_interval": row.get("repeat_interval") or DEFAULT_REPEAT,
            "warn_share": row.get("warn_share"),
            "enabled": row.get("enabled", True),
            "description": row.get("description"),
        }
        out.append(_lean(entry, NotificationRoute))
    return out
